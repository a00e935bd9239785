# shellcheck shell=bash
# The BPF links ubctl pins in an instance's directory (user/ubctl/link.c), seen
# through bpftool. bpftool 7.1 names neither a link's device nor (type 11) tcx:
# an XDP link is tied to its device by its program, the one the device runs.

# kernel_has_tcx: this kernel has tcx links (6.6 and later); ubctl takes clsact
# filters on older ones, and where UBXDP_NO_TCX=1 says so (user/io/run_link.h).
kernel_has_tcx() {
	local v maj min
	if [[ -n ${UBXDP_NO_TCX:-} && ${UBXDP_NO_TCX} != 0 ]]; then return 1; fi
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[[ $maj -gt 6 || ($maj -eq 6 && $min -ge 6) ]]
}

# link_key PIN KEY: KEY (type, id, prog_id) of the link pinned at PIN; fails when there is none.
link_key() {
	local j
	j=$(bpftool -j link show pinned "$1" 2>/dev/null) || return 1
	jq -r ".$2 // empty" <<<"$j"
}

# prog_id_pinned PIN: the id of the program pinned at PIN.
prog_id_pinned() {
	bpftool -j prog show pinned "$1" | jq -r '.id'
}

# expect_xdp_link PIN NS DEV: an XDP link is pinned at PIN, and its program is
# the one NS's DEV runs (bpftool net shows it there).
expect_xdp_link() {
	local type prog dev
	type=$(link_key "$1" type) || { echo "no link pinned at $1"; return 1; }
	prog=$(link_key "$1" prog_id)
	dev=$(ip netns exec "$2" bpftool -j net show dev "$3" | jq -r '.[0].xdp[0].id // empty')
	echo "link at $1: type $type, program $prog; $3 runs XDP program ${dev:-none}"
	[[ $type == xdp && -n $prog && $prog == "$dev" ]]
}

# expect_tc_attached DIR LINK PROG NS DEV ingress|egress: the program pinned at
# DIR/PROG is on DEV's hook: by a tcx link pinned at DIR/LINK where the kernel
# has tcx, else by a clsact filter (and no such link).
expect_tc_attached() {
	local dir=$1 link=$2 want type id
	want=$(prog_id_pinned "$dir/$3")
	if kernel_has_tcx; then
		type=$(link_key "$dir/$link" type) || { echo "no tcx link pinned at $dir/$link"; return 1; }
		id=$(link_key "$dir/$link" prog_id)
		echo "link at $dir/$link: type $type, program $id (want tcx, $want)"
		[[ ($type == tcx || $type == 11) && $id == "$want" ]]
		return
	fi
	if [[ -e $dir/$link ]]; then echo "a tcx link pinned at $dir/$link on a kernel without tcx"; return 1; fi
	tc -n "$4" filter show dev "$5" "$6" | has " id $want "
}

# bpf_gone link|prog ID [TRIES]: no such object exists any more, within TRIES x 50 ms
# (default 40). A link is detached at once (ubctl: BPF_LINK_DETACH, or its holder's
# exit), but the object goes when the kernel drops its last reference, from a
# workqueue or after an RCU grace period: a moment later.
bpf_gone() {
	local i
	for ((i = 0; i < ${3:-40}; i++)); do
		bpftool "$1" show id "$2" >/dev/null 2>&1 || return 0
		sleep 0.05
	done
	echo "$1 $2 still exists"
	return 1
}
# expect_link_gone ID: no link with that id exists any more.
expect_link_gone() { bpf_gone link "$1"; }

# tc_count_add NS DEV ingress|egress: the test's own program on DEV's hook, a
# clsact filter at pref 1 counting what it sees (tests/bpf/tc_count.bpf.c).
# clsact filters run after every tcx program, and before ubxdp's own filter
# (pref 0xb2e) on a kernel without tcx.
tc_count_add() {
	tc -n "$1" qdisc add dev "$2" clsact 2>/dev/null || true
	tc -n "$1" filter add dev "$2" "$3" pref 1 bpf da obj build/bpf/tc_count.bpf.o sec tc
}

# tc_count NS DEV HOOK: packets the test's program on DEV's hook has seen; fails when it is gone.
tc_count() {
	local id map
	id=$(tc -n "$1" -j filter show dev "$2" "$3" | jq -r '.[] | select(.options.prog.name == "tc_count_pkts") | .options.prog.id')
	[[ -n $id ]] || { echo "no tc_count filter on $2 $3" >&2; return 1; }
	map=$(bpftool -j prog show id "$id" | jq -r '.map_ids[0]')
	bpftool -j map lookup id "$map" key 0 0 0 0 | jq -r '.formatted.value // .value'
}
