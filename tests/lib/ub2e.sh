# shellcheck shell=bash
# UB2E switches in suite teardowns. Source after tests/lib/netns.sh.

# ub2e_detach_run UBCTL: take off, through ubctl, every UB2E switch of this run
# (instances named ${NS_PREFIX}...), so that their pins leave whichever bpffs
# ubctl used: where this mount namespace has none, an ancestor's, reached
# through /proc/PID/root, which rm -rf /sys/fs/bpf/... does not reach. Call it
# before ns_cleanup_all: detach enters each instance's network namespace. The
# rm -rf after it is the last resort for what ubctl refused (ports gone).
ub2e_detach_run() {
	local ubctl=$1 name
	if [[ -x $ubctl ]]; then
		for name in $("$ubctl" stats 2>/dev/null |
			awk -v p="$NS_PREFIX" '$1 == "ub2e" && index($2, p) == 1 { print $2 }'); do
			"$ubctl" ub2e detach --name "$name" >/dev/null 2>&1
		done
	fi
	rm -rf /sys/fs/bpf/ubxdp/ub2e/"${NS_PREFIX}"* 2>/dev/null
	return 0
}
