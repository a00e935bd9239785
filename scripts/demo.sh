#!/usr/bin/env bash
# make demo: the double-ended UB2E chain of draft-li-uboe-00 Fig. 3 in network
# namespaces, with real UB traffic both ways, then two ubperf --native endpoints
# (the UB transport over AF_XDP) talking through it.
#
#   UBPU --native UB--> [UB2E sw] --UBoE (802.1Q)--> bridge --> [UB2E sw2] --native UB--> UBPU2
#
# Partition 4097 is mapped to VLAN 100 on both switches, so the far switch
# restores it exactly; partition 7 uses the enhanced mapping (Permission kept).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "demo: needs root (network namespaces, XDP)" >&2; exit 1; }
. tests/lib/netns.sh
UBCTL=build/bin/ubctl UBPKT=build/bin/ubpkt
NS_PREFIX=ubdemo-

teardown() {
	# ubctl removes its pins from whichever bpffs it used (it may be the
	# invoking shell's, reached through /proc, when this mount namespace has none).
	[[ -n ${NS_SW:-} ]] && ns_run "$NS_SW" "$UBCTL" ub2e detach --ub-dev sw-ub --ip-dev sw-ip >/dev/null 2>&1
	[[ -n ${NS_SW2:-} ]] && ns_run "$NS_SW2" "$UBCTL" ub2e detach --ub-dev sw2-ub --ip-dev sw2-ip >/dev/null 2>&1
	ns_cleanup_all
	rm -rf /sys/fs/bpf/ubxdp/ub2e/ubdemo-* 2>/dev/null || true
}
trap teardown EXIT
teardown

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# capture NS DEV COUNT -- SEND_NS SEND_ARGS...: send and print what arrives.
capture() {
	local ns=$1 dev=$2 count=$3; shift 4
	local sns=$1; shift
	local err; err=$(mktemp)
	ns_run "$ns" "$UBPKT" recv --dev "$dev" --count "$count" --timeout 3000 2>"$err" &
	local pid=$!
	for _ in $(seq 50); do grep -q ready "$err" && break; sleep 0.05; done
	ns_run "$sns" "$UBPKT" send "$@" --count "$count"
	wait "$pid" || { echo "demo: capture on $dev incomplete" >&2; cat "$err" >&2; exit 1; }
	rm -f "$err"
}

say "topology: UBPU -- UB2E switch -- IP network -- UB2E switch -- UBPU2"
topo_double
MAPS=(--map 4097=100 --map 7/0=70 --map 7/1=71)
ns_run "$NS_SW" "$UBCTL" ub2e attach --ub-dev sw-ub --ip-dev sw-ip "${MAPS[@]}"
ns_run "$NS_SW2" "$UBCTL" ub2e attach --ub-dev sw2-ub --ip-dev sw2-ip "${MAPS[@]}"
ns_run "$NS_SW" "$UBCTL" ub2e status --ub-dev sw-ub --ip-dev sw-ip

say "UBoE on the IP segment: UBPU sends native UB (Partition 4097, FECN markable), sw converts"
capture "$NS_NET" net-a 3 -- "$NS_UBPU" --dev ubpu0 --native --dst-mac "$SW_UB_MAC" \
	--src "$UBPU_IP4" --dst "$UBPU2_IP4" --pid 4097 --fecn 2 --payload-len 256
say "what UBPU2 receives: native UB again, Partition 4097 restored by sw2"
capture "$NS_UBPU2" ubpu0 3 -- "$NS_UBPU" --dev ubpu0 --native --dst-mac "$SW_UB_MAC" \
	--src "$UBPU_IP4" --dst "$UBPU2_IP4" --pid 4097 --fecn 3 --payload-len 256
say "back the other way over IPv6, enhanced mapping keeps Permission 1 of Partition 7"
capture "$NS_UBPU" ubpu0 3 -- "$NS_UBPU2" --dev ubpu0 --native --dst-mac "$SW2_UB_MAC" \
	--src "$UBPU2_IP6" --dst "$UBPU_IP6" --pid 7 --perm 1 --fecn 1 --payload-len 1024

say "a burst of 10,000 frames UBPU -> UBPU2, none lost (last one shown)"
burst=$(mktemp)
capture "$NS_UBPU2" ubpu0 10000 -- "$NS_UBPU" --dev ubpu0 --native --dst-mac "$SW_UB_MAC" \
	--src "$UBPU_IP4" --dst "$UBPU2_IP4" --pid 4097 --payload-len 1024 >"$burst"
tail -n 1 "$burst"
# Every PSN 0..9999 exactly once: none lost, none duplicated.
distinct=$(grep -o ' psn=[0-9]*' "$burst" | sort -u | wc -l)
rm -f "$burst"
[[ $distinct -eq 10000 ]] || { echo "demo: $distinct distinct frames of 10000 arrived" >&2; exit 1; }
echo "all 10000 frames arrived, each once"

say "real transport traffic: ubperf --native, UBPU -> sw -> IP -> sw2 -> UBPU2, partition 4097"
nsenter --net="/run/netns/$NS_UBPU2" build/bin/ubperf server --dev ubpu0 --native --partition 4097 --wait 20 \
	>/dev/null &
srv=$!
for _ in $(seq 50); do ns_xdp_ready "$NS_UBPU2" ubpu0 && break; sleep 0.1; done
ns_run "$NS_UBPU" build/bin/ubperf client --dev ubpu0 --native --partition 4097 --peer "$UBPU2_IP4" \
	--mode rtp-sr --count 2000 --size 64k
wait "$srv"

say "counters (ubctl stats)"
ns_run "$NS_SW" "$UBCTL" stats | grep -v ' 0$'
say "demo done: namespaces and pins are removed on exit"
