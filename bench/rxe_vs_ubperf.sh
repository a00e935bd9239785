#!/usr/bin/env bash
# bench/rxe_vs_ubperf.sh [SECONDS [ROUNDS]]: ubperf (rtp-sr, selective retransmission)
# beside a real RDMA peer, Linux Soft-RoCE (rdma_rxe RC queue pairs driven by
# perftest's ib_write_bw / ib_send_bw, Go-Back-N), over the same kind of link at
# 0, 0.1 and 1 % loss: 64 KiB messages, 1024-byte packets for both (rxe's RoCE MTU on
# a 1500-byte veth; ubperf --mtu 1024), each end's defaults otherwise.
#
# Runs inside the vmtest guest (make bench: scripts/bench_rxe.sh), whose 6.1 kernel
# has rdma_rxe and netem; the host kernel has neither. Both ways cross one router
# namespace whose four ports carry netem with the same loss, so both directions of
# both links lose:
#   rxe:    ubrxe_a (init ns) -- ra [router] rb -- ubrxe_b (init ns)   (tests/lib/rxe.sh)
#   ubperf: client c0 (ns)    -- rc [router] rs -- s0 server (ns)
# Rounds interleave the cells; each cell is the median over the rounds that ran, the
# ratio the median of the ubperf/rxe ratios of the rounds where both ran; runs that
# failed (an rxe queue pair in error, a ubperf channel failing) are counted apart.
# "tx": packets on the wire per 1024-byte packet of messages delivered (1.00 = nothing
# resent): ubperf's frames.tx over its bytes, rxe's sent_pkts over its messages (it runs
# a fixed count, ubperf a fixed time). Loss 0 has no netem at all. Under qemu TCG both are slow in absolute terms
# (every instruction is emulated): the ratios are what this measures.
#
# "ubperf thr": the same ubperf run with threaded NAPI on its two endpoint veths (c0, s0:
# /sys/class/net/DEV/threaded). On a veth the receiving end's XDP (the skb copied into a
# page, the program, the copy into the UMEM, the wakeup) runs in the sender's softirq,
# so in the default run one vCPU carries the client, the router hop and the server's
# receive path (it is at 100 %, the server's at about 60 %: bench/README.md). Threaded
# NAPI runs that receive path in a kernel thread the scheduler may put on the other
# vCPU, as a NIC's interrupt would on the receiving host. rxe's veths receive through
# NAPI too (tests/lib/rxe.sh turns GRO on at every end), so "rxe thr" is the same perftest
# run with threaded NAPI on its two endpoint veths (ubrxa0, ubrxb0), and "thr/rxe thr"
# compares the two with the same device setting. The default columns stay the headline;
# the thr ones say what that setting changes for each.
# Prints numbers; asserts none of them.
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-4}
REPS=${2:-3}
BIN=${BUILD:-build}/bin

. tests/lib/netns.sh
. tests/lib/rxe.sh
if why=$(ns_unsupported) || why=$(rxe_unsupported); then
	echo "rxe_vs_ubperf: cannot run: $why" >&2
	exit 1
fi
command -v jq >/dev/null || { echo "rxe_vs_ubperf: jq not installed" >&2; exit 1; }
[[ -x $BIN/ubperf ]] || { echo "rxe_vs_ubperf: $BIN/ubperf missing (run make)" >&2; exit 1; }
trap 'rxe_teardown; ns_cleanup_all' EXIT
tmp=$(mktemp -d)

R=$(ns_add rxbr) C=$(ns_add rxbc) S=$(ns_add rxbs)
rxe_setup "$R"
topo_routed_hop "$C" "$R" "$S" 10.77.3 10.77.4 02:00:00:00:78 02:00:00:00:79

# set_loss PERCENT: netem on the router's four ports; none at 0, the loss-free baseline.
set_loss() {
	local d
	for d in ra rb rc rs; do
		tc -n "$R" qdisc del dev "$d" root 2>/dev/null
		[[ $1 == 0 ]] || tc -n "$R" qdisc add dev "$d" root netem loss "$1%"
	done
}

calc() { awk "BEGIN { print ($1) }"; }
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }

# threaded NS DEV 0|1: the device's NAPI in a kernel thread or in softirq (sysfs is
# per namespace: ip netns exec mounts the namespace's own).
threaded() { ip netns exec "$1" sh -c "echo $3 >/sys/class/net/$2/threaded"; }

# ubperf_cell OP [THREADED]: "MBIT TX_PER_PKT" of one ubperf run (0 0 when it failed).
ubperf_cell() {
	local out=$tmp/ub.json srv thr=${2:-0}
	# A killed server's XDP program goes with it (a BPF link): nothing to clear here.
	# Off (the default) cannot fail the default run; on must take on both, or the run is failed.
	if ! threaded "$S" s0 "$thr" 2>/dev/null || ! threaded "$C" c0 "$thr" 2>/dev/null; then
		if [[ $thr == 1 ]]; then
			echo "#   ubperf $1 thr: cannot set /sys/class/net/DEV/threaded" >&2
			echo "0 0"
			return
		fi
	fi
	nsenter --net="/run/netns/$S" "$BIN/ubperf" server --dev s0 --wait 30 --json >/dev/null 2>"$tmp/ubs.err" &
	srv=$!
	for _ in $(seq 100); do ns_xdp_ready "$S" s0 && break; sleep 0.1; done
	if ns_run "$C" "$BIN/ubperf" client --dev c0 --peer 10.77.4.1 --op "$1" --size 64k --mtu 1024 \
		--time "$SECS" --stall 10 --json >"$out" 2>"$tmp/ubc.err"; then
		wait "$srv"
		jq -r '"\(.goodput_bps / 1e6) \(.frames.tx / (.bytes / 1024))"' "$out"
	else
		echo "#   ubperf $1: $(cat "$tmp/ubc.err" "$tmp/ubs.err")" >&2
		kill "$srv" 2>/dev/null
		wait "$srv"
		echo "0 0"
	fi
}

# rxe_cell TOOL [THREADED]: "MBIT TX_PER_PKT" of one perftest run (0 0 when it failed):
# a fixed number of messages (--duration would count only those inside perftest's
# measuring window, against packets sent over the whole run), about SECS seconds loss-free.
ITERS=$((SECS * 75))
rxe_cell() {
	local out=$tmp/rxe.txt gbit sent0 thr=${2:-0} d
	for d in ubrxa0 ubrxb0; do
		if ! echo "$thr" >"/sys/class/net/$d/threaded" 2>/dev/null && [[ $thr == 1 ]]; then
			echo "#   $1 thr: cannot set /sys/class/net/$d/threaded" >&2
			echo "0 0"
			return
		fi
	done
	sent0=$(rxe_counter "$RXE_A" sent_pkts)
	if gbit=$(rxe_perf "$1" "$out" -s 65536 -n "$ITERS") && [[ -n $gbit ]]; then
		awk -v g="$gbit" -v s=$(($(rxe_counter "$RXE_A" sent_pkts) - sent0)) -v n="$ITERS" \
			'BEGIN { print g * 1000, s / (n * 64) }'
	else
		echo "#   $1: $(grep -iE "error|fail|timeout|can't produce" "$out" "$out.srv" | head -n 3 | tr '\n' ' ')" >&2
		echo "0 0"
	fi
}

LOSSES=(0 0.1 1)
OPS=(write send)
declare -A ub rx ubtx rxtx ratio ubfail rxfail th thratio thfail rt rtfail
for ((rep = 0; rep < REPS; rep++)); do
	for p in "${LOSSES[@]}"; do
		set_loss "$p"
		for op in "${OPS[@]}"; do
			read -r u ut < <(ubperf_cell "$op")
			read -r x xt < <(rxe_cell "ib_${op}_bw")
			read -r t _ < <(ubperf_cell "$op" 1)
			read -r y _ < <(rxe_cell "ib_${op}_bw" 1)
			echo "# round $((rep + 1)) loss $p % $op: ubperf $u Mbit/s, rxe $x Mbit/s, ubperf thr $t Mbit/s, rxe thr $y Mbit/s" >&2
			# A failed run (0) counts as a failure, not as a figure.
			if [[ $u == 0 ]]; then ubfail[$p,$op]=$((${ubfail[$p,$op]:-0} + 1)); else ub[$p,$op]+="$u " ubtx[$p,$op]+="$ut "; fi
			if [[ $x == 0 ]]; then rxfail[$p,$op]=$((${rxfail[$p,$op]:-0} + 1)); else rx[$p,$op]+="$x " rxtx[$p,$op]+="$xt "; fi
			if [[ $t == 0 ]]; then thfail[$p,$op]=$((${thfail[$p,$op]:-0} + 1)); else th[$p,$op]+="$t "; fi
			if [[ $y == 0 ]]; then rtfail[$p,$op]=$((${rtfail[$p,$op]:-0} + 1)); else rt[$p,$op]+="$y "; fi
			[[ $u != 0 && $x != 0 ]] && ratio[$p,$op]+="$(calc "$u / $x") "
			[[ $t != 0 && $y != 0 ]] && thratio[$p,$op]+="$(calc "$t / $y") "
		done
	done
done

# cell VALUES FORMAT: the median, or "-" when no round gave one.
cell() { if [[ -n ${1// /} ]]; then printf "$2" "$(median "$1")"; else printf '%s' -; fi; }
printf '\nubperf rtp-sr vs Soft-RoCE RC (rdma_rxe + perftest) in the vmtest guest (%s, qemu TCG)\n' "$(uname -r)"
printf '64 KiB messages, 1024-byte packets, netem loss on both directions; median of %u rounds\n(ubperf %s s, rxe %u messages a run)\n' "$REPS" "$SECS" "$ITERS"
printf '%-7s %-6s %12s %10s %11s %10s %8s %9s %12s %12s %22s\n' "loss %" "op" "ubperf Mb/s" "rxe Mb/s" "ubperf/rxe" \
	"ubperf tx" "rxe tx" "thr Mb/s" "rxe thr Mb/s" "thr/rxe thr" "failed ub/rxe/thr/rthr"
for p in "${LOSSES[@]}"; do
	for op in "${OPS[@]}"; do
		printf '%-7s %-6s %12s %10s %11s %10s %8s %9s %12s %12s %22s\n' "$p" "$op" \
			"$(cell "${ub[$p,$op]:-}" %.1f)" "$(cell "${rx[$p,$op]:-}" %.1f)" "$(cell "${ratio[$p,$op]:-}" %.2fx)" \
			"$(cell "${ubtx[$p,$op]:-}" %.2f)" "$(cell "${rxtx[$p,$op]:-}" %.2f)" \
			"$(cell "${th[$p,$op]:-}" %.1f)" "$(cell "${rt[$p,$op]:-}" %.1f)" "$(cell "${thratio[$p,$op]:-}" %.2fx)" \
			"${ubfail[$p,$op]:-0}/${rxfail[$p,$op]:-0}/${thfail[$p,$op]:-0}/${rtfail[$p,$op]:-0} of $REPS"
	done
done
echo "(ubperf/rxe: median over the rounds where both ran; tx: packets on the wire per 1024-byte"
echo " packet delivered; thr: each with threaded NAPI on its own two endpoint veths, compared"
echo " with each other; failed: runs that ended in an error, e.g. an rxe queue pair in error)"
