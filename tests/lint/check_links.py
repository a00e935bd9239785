#!/usr/bin/env python3
"""Relative markdown links that name no file.

    check_links.py FILE.md...

Every inline link [text](target) and reference definition [label]: target outside
fenced code blocks and code spans, whose target is not a URL (scheme:) nor an anchor
of the same page (#...), must name a file or directory that exists, relative to the
page's own directory; a #fragment is not checked. Prints one line per broken link,
FILE:LINE: TARGET, and exits 1 if there is any.
"""
import os
import re
import sys

INLINE = re.compile(r'\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
CODESPAN = re.compile(r'(`+).*?\1')


def targets(line):
    line = CODESPAN.sub('', line)
    found = [m.group(1) for m in INLINE.finditer(line)]
    m = REFDEF.match(line)
    if m:
        found.append(m.group(1))
    return [t[1:-1] if t.startswith('<') else t for t in found]


def check(path):
    bad = []
    base = os.path.dirname(path)
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'^\s{0,3}(```+|~~~+)', line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            for t in targets(line):
                if not t or t.startswith('#') or SCHEME.match(t):
                    continue
                rel = t.split('#', 1)[0]
                if not os.path.exists(os.path.join(base, rel)):
                    bad.append('%s:%d: %s' % (path, n, t))
    return bad


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bad = [b for p in argv for b in check(p)]
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
