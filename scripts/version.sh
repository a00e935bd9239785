#!/bin/sh
# ubxdp's version, as ubctl --version prints it (the Makefile's UBXDP_VERSION).
#   in a git checkout of this tree:  git describe --tags (v1.2.0-3-gabc1234 -> 1.2.0-3-gabc1234,
#                                    -dirty with uncommitted changes)
#   no tag reachable:                VERSION's content and the commit, 0.1.0+gabc1234
#   not a git checkout (a tarball):  VERSION's content (make dist writes the full version there)
# A tree inside someone else's git repository is not a checkout of its own: the
# top of the work tree must be this directory.
cd "$(dirname "$0")/.." || exit 1
if [ -z "$(git rev-parse --show-prefix 2>/dev/null || echo no)" ]; then
	if v=$(git describe --tags --dirty --match 'v[0-9]*' --match '[0-9]*' 2>/dev/null); then
		echo "${v#v}"
		exit 0
	fi
	if h=$(git describe --always --dirty 2>/dev/null); then
		echo "$(cat VERSION)+g$h"
		exit 0
	fi
fi
cat VERSION
