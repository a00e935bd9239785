#!/usr/bin/env bash
# bench/rxe_vs_ubperf.sh [SECONDS [ROUNDS]]: ubperf (rtp-sr, selective retransmission)
# beside the kernel's two software RDMA NICs, Soft-RoCE (rdma_rxe, RC, Go-Back-N over UDP)
# and Soft-iWARP (siw, RC over the kernel's TCP), like for like, loss-free and at 1 % loss
# each way (default 8 s a run, 10 rounds). Runs inside the vmtest guest (make bench:
# scripts/bench_rxe.sh), whose 6.1 kernel has rdma_rxe and netem, and siw once
# vmtest/siw.sh has built it; the host kernel has none of them.
#
# Like for like:
#   - 64 KiB Sends, one QP / channel, 1024 payload bytes a packet for all three (rxe's
#     RoCE MTU on a 1500-byte veth; ubperf --mtu 1024; siw's veths at SIW_MTU = 1100, so
#     that an FPDU, one TCP segment, carries 1024);
#   - the same wall time: ubperf --time SECONDS, perftest -D SECONDS (-f MARGIN);
#   - counted at the receiver, over the same part of each run: from MARGIN after the
#     receiver's first data to 2 x MARGIN before the data phase's end (window_rate):
#     ubperf's server --interval rows (bytes its transport delivered in order, its
#     clock, from its first frame), rxe's responder rdma_recvs (Sends completed to the
#     receiver, x 64 KiB), the bytes siw's responder veth received less the framing;
#     the last two read by this script on the guest's clock. perftest's own reports
#     are not used (its TSC calibration fails now and then under TCG);
#   - the same window: rxe's requester stops at RXE_MAX_UNACKED_PSNS = 128 packets (PSNs)
#     unacknowledged, whatever perftest's tx depth (-t 128 = 128 messages = 8192
#     packets, never the limit), so ubperf runs --window 128 (packets in flight a
#     channel; its --depth 8 operations = 512 packets is not the limit either). siw's
#     window is TCP's (cwnd, receive window): it gets the same -t 128;
#   - rxe's retransmission timeout set for the loss: perftest -u (4.096 us x 2^u,
#     rounded to the guest's 4 ms jiffies); by default the script first runs each of
#     RXE_TIMEOUTS at 1 % (SWEEP_RUNS times, interleaved) and takes the best median
#     (RXE_TIMEOUT=N skips that with SWEEP=0). ubperf's dynamic RTO and siw's TCP as
#     they come.
#
# Topology: one router namespace with netem loss on the egress of every port, so both
# directions of every path lose (no netem at all at 0 %):
#   ubperf: client c0 (ns)    -- rc [router] rs -- s0 server (ns)
#   rxe:    ubrxe_a (init ns) -- ra [router] rb -- ubrxe_b (init ns)   (tests/lib/rxe.sh)
#   siw:    ubsiw_a (init ns) -- sa [router] sb -- ubsiw_b (init ns)   (tests/lib/rxe.sh)
# Each round runs ubperf, rxe, siw in turn loss-free, then the three at 1 %. Every round's
# figures are printed; the summary gives each cell's median, min and max and the
# medians of the per-round ratios. A run that moved no data counts as a failure, not a 0;
# one whose QP failed on the way counts what it delivered in the window (its error is
# printed).
# "wire": packets sent per packet delivered (1.00 = nothing resent), whole run: ubperf's
# client frames.tx over the server-verified bytes / 1024; rxe's requester sent_pkts over
# 64 x the responder's rdma_recvs; "retries": rxe's completer retries (after a timeout
# or a NAK). Under qemu TCG absolute figures mean little: the ratios within a round are
# the measure. Prints numbers; asserts none of them. DEBUG=1 prints each window's
# readings, DEBUG=2 perftest's output too.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-8}
REPS=${2:-10}
MARGIN=${MARGIN:-1}
WINDOW=${WINDOW:-128}
SWEEP=${SWEEP:-1}
RXE_TIMEOUTS=${RXE_TIMEOUTS:-12 14 16}
RXE_TIMEOUT=${RXE_TIMEOUT:-$([[ $SWEEP == 1 ]] && echo auto || echo 14)}
LOSSES=(${LOSSES:-0 1})
BIN=${BUILD:-build}/bin
for a in "$SECS" "$REPS" "$MARGIN" "$WINDOW" ${RXE_TIMEOUT/auto/0} $RXE_TIMEOUTS; do
	[[ $a =~ ^[0-9]+$ ]] || { echo "rxe_vs_ubperf: '$a' is not a number" >&2; exit 2; }
done
((SECS > 3 * MARGIN)) || { echo "rxe_vs_ubperf: SECONDS must exceed 3 x MARGIN ($MARGIN)" >&2; exit 2; }

. tests/lib/tap.sh     # num, for rxe_counter
. tests/lib/netns.sh
. tests/lib/rxe.sh
if why=$(ns_unsupported) || why=$(rxe_unsupported); then
	echo "rxe_vs_ubperf: cannot run: $why" >&2
	exit 1
fi
command -v jq >/dev/null || { echo "rxe_vs_ubperf: jq not installed" >&2; exit 1; }
[[ -x $BIN/ubperf ]] || { echo "rxe_vs_ubperf: $BIN/ubperf missing (run make)" >&2; exit 1; }
SIW=1
if why=$(siw_unsupported); then
	echo "# siw: cannot run: $why (its cells stay empty)" >&2
	SIW=0
fi
tmp=$(mktemp -d)
trap 'siw_teardown; rxe_teardown; ns_cleanup_all; rm -rf "$tmp"' EXIT

R=$(ns_add rxbr) C=$(ns_add rxbc) S=$(ns_add rxbs)
rxe_setup "$R"
((SIW)) && siw_setup "$R"
topo_routed_hop "$C" "$R" "$S" 10.77.3 10.77.4 02:00:00:00:78 02:00:00:00:79
GA=$(rxe_gid "$RXE_A" "$RXE_A_IP")
GB=$(rxe_gid "$RXE_B" "$RXE_B_IP")

# set_loss PERCENT: netem on the router's six ports; none at 0.
set_loss() {
	local d
	for d in ra rb rc rs sa sb; do
		ip -n "$R" link show dev "$d" >/dev/null 2>&1 || continue
		tc -n "$R" qdisc del dev "$d" root 2>/dev/null || true
		[[ $1 == 0 ]] || tc -n "$R" qdisc add dev "$d" root netem loss "$1%"
	done
}

# ratio A B: A / B to 2 decimals, "inf" when B delivered nothing (it sorts above every
# number in a median: a round where a peer stalled is one it lost).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "inf"; else printf "%.2f", a / b }'; }
# stats VALUES: "median min max" of a space-separated list (an even count's median: the
# mean of the middle two).
stats() {
	printf '%s\n' $1 | sort -g | awk 'NF { v[++n] = $1 }
		END { if (n) print (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[1], v[n] }'
}

# Every figure is the receiver's count over the same part of each run: the data phase
# (SECONDS from the first packet the receiver gets) less MARGIN at each end.
#
# ubperf_cell: "MBIT WIRE" of one ubperf run (nothing when it failed). The server's
# --interval rows (bytes its transport delivered in order, on its clock, from its first
# frame) that lie inside [MARGIN, SECONDS - 2 x MARGIN] (window_rate's window).
ubperf_cell() {
	local srv
	nsenter --net="/run/netns/$S" "$BIN/ubperf" server --dev s0 --wait 30 --json --interval 250 \
		>"$tmp/ubs.json" 2>"$tmp/ubs.err" &
	srv=$!
	for _ in $(seq 100); do ns_xdp_ready "$S" s0 && break; sleep 0.1; done
	if ns_run "$C" "$BIN/ubperf" client --dev c0 --peer 10.77.4.1 --op send --size 64k --mtu 1024 \
		--window "$WINDOW" --time "$SECS" --stall 10 --json >"$tmp/ubc.json" 2>"$tmp/ubc.err" &&
		wait "$srv"; then
		jq -rs --argjson m "$MARGIN" --argjson secs "$SECS" '.[0] as $s | .[1] as $c |
			$s.per_channel[0].series as $r | ($secs - 2 * $m) as $last |
			[range(0; $r | length) | { a: (if . == 0 then 0 else $r[. - 1].t_s end), b: $r[.].t_s,
				bps: $r[.].goodput_bps }] | map(select(.a >= $m and .b <= $last)) |
			if length == 0 or $s.verified_bytes == 0 then empty else
			"\((map((.b - .a) * .bps) | add) / (map(.b - .a) | add) / 1e6)" +
			" \($c.frames.tx / ($s.verified_bytes / 1024))" end' "$tmp/ubs.json" "$tmp/ubc.json" |
			awk '{ printf "%.2f %.3f\n", $1, $2 }'
	else
		echo "#   ubperf: $(cat "$tmp/ubc.err" "$tmp/ubs.err" | head -n 3 | tr '\n' ' ')" >&2
		kill "$srv" 2>/dev/null || true
		wait "$srv" 2>/dev/null || true
	fi
}

# now_us VAR: the guest's clock in microseconds, into VAR (no fork: under TCG on a
# loaded host a fork can take most of a second, which would move the window).
now_us() { printf -v "$1" '%s' "${EPOCHREALTIME/./}"; }
# sleep_until_us T: sleep until the clock reads T microseconds.
sleep_until_us() {
	local n d
	now_us n
	d=$(($1 - n))
	((d > 0)) || return 0
	printf -v d '%d.%06d' $((d / 1000000)) $((d % 1000000))
	sleep "$d"
}
# window_rate READER: Mbit/s at the receiver, READER putting its byte count into BYTES:
# wait for the data (a first 64 KiB message, up to 60 s: not perftest's own small
# messages before), then count from MARGIN after it to SECONDS - 2 x MARGIN after it,
# each reading timed at its midpoint. The end keeps twice the margin: the script sees
# the first data a little after the sender started its clock, and a window that ran past
# the sender's end would count its silence; a last reading (its midpoint) later than
# SECONDS - MARGIN / 2 after the first data fails the run (the host held the guest up too
# long). Returns 2 when no data came at all.
BYTES=0
window_rate() {
	local c0 c1 c2 a b tf t1 t2 limit=$((SECONDS + 60))
	"$1"; c0=$BYTES
	while "$1" && ((BYTES - c0 < 65536)); do
		if ((SECONDS >= limit)); then
			[[ ${DEBUG:-0} == 0 ]] || { echo "#   $1: no data, $c0 -> $BYTES"; ss -Htina; } >&2
			return 2
		fi
		sleep 0.05
	done
	now_us tf
	sleep_until_us $((tf + MARGIN * 1000000))
	now_us a; "$1"; c1=$BYTES; now_us b
	t1=$(((a + b) / 2))
	sleep_until_us $((tf + (SECS - 2 * MARGIN) * 1000000))
	now_us a; "$1"; c2=$BYTES; now_us b
	t2=$(((a + b) / 2))
	[[ ${DEBUG:-0} == 0 ]] || echo "#   $1: window $(((t1 - tf) / 1000)) to $(((t2 - tf) / 1000)) ms after the" \
		"first data; bytes $c0 / $c1 / $c2" >&2
	if ((t2 - tf > SECS * 1000000 - MARGIN * 500000)); then
		echo "#   $1: the window's last reading came $(((t2 - tf) / 1000)) ms after the first data (host too slow)" >&2
		return 1
	fi
	# A count that went down: the connection (siw's socket) was gone before the window ended.
	((c2 >= c1 && t2 > t1)) || return 1
	awk -v c="$((c2 - c1))" -v t="$((t2 - t1))" 'BEGIN { printf "%.2f\n", c * 8 / t }'
}

# stop_after PID SECONDS: wait for PID to end, at most SECONDS, then kill it.
stop_after() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# A run whose connection failed before any data (perftest's TCP exchange or RDMA-CM setup,
# now and then under TCG) is run again, once.
perf_pair() {
	local try
	local rc
	for try in 1 2; do
		rc=0
		perf_pair_once "$@" || rc=$?
		((rc == 0)) && return 0
		((rc == 2)) || return 1
		grep -qE "exchange data|Couldn't connect|Failed to modify QP|Unable to read|Failed to create" \
			"$1" "$1.srv" || return 1
		echo "#   $2: connection failed before any data; again" >&2
	done
	return 1
}
perf_pair_once() {
	local out=$1 reader=$2 srv cli sargs=() mbit='' rc=0
	shift 2
	while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
	shift
	timeout $((SECS + 60)) ib_send_bw "${sargs[@]}" -c RC -s 65536 -D "$SECS" -f "$MARGIN" -t 128 \
		>"$out.srv" 2>&1 &
	srv=$!
	for _ in $(seq 50); do ss -Hltn 'sport = :18515' | grep -q . && break; sleep 0.1; done
	sleep 0.2
	timeout $((SECS + 60)) ib_send_bw "$@" -c RC -s 65536 -D "$SECS" -f "$MARGIN" -t 128 >"$out" 2>&1 &
	cli=$!
	mbit=$(window_rate "$reader") || rc=$?
	# The window is read: the pair has MARGIN + 5 s to end by itself, then it is
	# stopped (at -D's end perftest's closing exchange can hang for minutes under TCG,
	# and nothing after the window is measured).
	stop_after "$cli" $((MARGIN + 5))
	stop_after "$srv" 2
	if [[ ${DEBUG:-0} == 2 ]]; then
		echo "#   $reader client:" $(grep -vE '^ *$|^-+$' "$out" | tail -n 6) >&2
		echo "#   $reader server:" $(grep -vE '^ *$|^-+$' "$out.srv" | tail -n 6) >&2
		ss -Htin >&2 || true
	fi
	if grep -qiE "error|fail|timeout|unable" "$out" "$out.srv"; then
		echo "#   $reader: $(grep -ihE "error|fail|timeout|unable" "$out" "$out.srv" | head -n 3 | tr '\n' ' ')" >&2
	fi
	((rc == 0)) || return "$rc"
	echo "$mbit"
}

# rxe_bytes: into BYTES, what the responder completed (receive work completions of
# 64 KiB Sends).
rxe_bytes() {
	local v
	read -r v <"/sys/class/infiniband/$RXE_B/ports/1/hw_counters/rdma_recvs"
	BYTES=$((v * 65536))
}
# rxe_cell TIMEOUT: "MBIT WIRE RETRIES" of one rxe run (nothing when it failed); WIRE and
# RETRIES over the whole run.
rxe_cell() {
	local mbit s0 g0 t0
	s0=$(rxe_counter "$RXE_A" sent_pkts) t0=$(rxe_counter "$RXE_A" completer_retry_err)
	g0=$(rxe_counter "$RXE_B" rdma_recvs)
	if mbit=$(perf_pair "$tmp/rxe.txt" rxe_bytes -d "$RXE_B" -x "$GB" -u "$1" -- \
		-d "$RXE_A" -x "$GA" -u "$1" 127.0.0.1); then
		awk -v m="$mbit" -v s=$(($(rxe_counter "$RXE_A" sent_pkts) - s0)) \
			-v g=$(($(rxe_counter "$RXE_B" rdma_recvs) - g0)) \
			-v t=$(($(rxe_counter "$RXE_A" completer_retry_err) - t0)) \
			'BEGIN { printf "%s %.2f %d\n", m, (g > 0 ? s / (g * 64) : 0), t }'
	fi
}

# siw_bytes: into BYTES, the payload that reached the responder: the bytes its veth
# received (sysfs, read without a fork: ss, which could read its sockets' bytes_received,
# takes most of a second under TCG on a loaded host) less the framing of each full
# segment, 14 Ethernet + 20 IP + 32 TCP (with timestamps) + 24 FPDU (MPA length 2,
# DDP/RDMAP 18, CRC 4) around 1024 payload bytes at MTU 1100 (an FPDU fills a segment:
# siw_qp_tx.c). Segments TCP resent count too, though only spurious resends reach the
# responder twice.
siw_bytes() {
	local v
	read -r v </sys/class/net/ubsib0/statistics/rx_bytes
	BYTES=$((v * 1024 / (SIW_MTU + 14)))
}
# siw_cell: "MBIT" of one siw run (RDMA-CM connects it: -R; nothing when it failed).
siw_cell() {
	perf_pair "$tmp/siw.txt" siw_bytes -d "$SIW_B" -R --source_ip "$SIW_B_IP" -- \
		-d "$SIW_A" -R --source_ip "$SIW_A_IP" "$SIW_B_IP"
}

echo "# $(uname -r), $(nproc) vCPUs; ${SECS} s a run (perftest -D $SECS -f $MARGIN), $REPS rounds;" \
	"ubperf --window $WINDOW, perftest -t 128, rxe -u $RXE_TIMEOUT, siw MTU $SIW_MTU" >&2

# SWEEP=1 (the default): rxe's timeout first, at the highest loss, SWEEP_RUNS runs of each
# of RXE_TIMEOUTS interleaved; RXE_TIMEOUT=auto (the default with the sweep) then takes
# the one with the best median for every rxe run that follows.
if [[ $SWEEP == 1 ]]; then
	p=${LOSSES[-1]}
	set_loss "$p"
	declare -A sw
	best='' bestm=-1
	for ((i = 0; i < ${SWEEP_RUNS:-2}; i++)); do
		for u in $RXE_TIMEOUTS; do
			x='' xw='' xt=''
			read -r x xw xt < <(rxe_cell "$u") || true
			echo "# sweep run $((i + 1)) loss $p %: rxe -u $u ${x:-failed} Mbit/s, wire ${xw:--}, retries ${xt:--}" >&2
			if [[ -n $x ]]; then sw[$u]+="$x "; fi
		done
	done
	for u in $RXE_TIMEOUTS; do
		read -r m _ < <(stats "${sw[$u]:-}") || true
		echo "# sweep rxe -u $u at $p %: median (min max) $(stats "${sw[$u]:-}") Mbit/s; runs: ${sw[$u]:-none}" >&2
		if [[ -n ${m:-} ]] && awk -v a="$m" -v b="$bestm" 'BEGIN { exit !(a > b) }'; then best=$u bestm=$m; fi
	done
	if [[ $RXE_TIMEOUT == auto ]]; then
		RXE_TIMEOUT=${best:-14}
		echo "# sweep: rxe runs with -u $RXE_TIMEOUT" >&2
	fi
fi

declare -A val ratios fails
PEERS=(ubperf rxe siw)
# on PEER: whether this run measures PEER (ONLY="rxe siw", say, while debugging).
on() { [[ " ${ONLY:-ubperf rxe siw} " == *" $1 "* ]]; }
for ((rep = 1; rep <= REPS; rep++)); do
	for p in "${LOSSES[@]}"; do
		set_loss "$p"
		u='' uw='' x='' xw='' xt='' y=''
		if on ubperf; then read -r u uw < <(ubperf_cell) || true; fi
		if on rxe; then read -r x xw xt < <(rxe_cell "$RXE_TIMEOUT") || true; fi
		if ((SIW)) && on siw; then read -r y < <(siw_cell) || true; fi
		echo "# round $rep loss $p %: ubperf ${u:-failed} Mbit/s (wire ${uw:--}), rxe ${x:-failed} Mbit/s" \
			"(wire ${xw:--}, retries ${xt:--}), siw ${y:-failed} Mbit/s" >&2
		for peer in "${PEERS[@]}"; do
			case $peer in ubperf) v=$u ;; rxe) v=$x ;; siw) v=$y ;; esac
			if [[ -n $v ]]; then val[$p,$peer]+="$v "; else fails[$p,$peer]=$((${fails[$p,$peer]:-0} + 1)); fi
		done
		if [[ -n $u && -n $x ]]; then ratios[$p,rxe]+="$(ratio "$u" "$x") "; fi
		if [[ -n $u && -n $y ]]; then ratios[$p,siw]+="$(ratio "$u" "$y") "; fi
	done
done

# cell VALUES: "median (min-max)" or "-".
cell() {
	local m lo hi
	[[ -n ${1// /} ]] || { printf -- -; return; }
	read -r m lo hi < <(stats "$1")
	printf '%s (%s-%s)' "$m" "$lo" "$hi"
}
printf '\nubperf rtp-sr vs Soft-RoCE and Soft-iWARP RC Send in the vmtest guest (%s, qemu TCG)\n' "$(uname -r)"
printf '64 KiB Sends, %s s a run, received Mbit/s at the receiver, %s rounds: median (min-max)\n' "$SECS" "$REPS"
echo "| loss % | ubperf | rxe | siw | ubperf / rxe | ubperf / siw | failed ub/rxe/siw |"
echo "|---|---:|---:|---:|---:|---:|---|"
for p in "${LOSSES[@]}"; do
	echo "| $p | $(cell "${val[$p,ubperf]:-}") | $(cell "${val[$p,rxe]:-}") | $(cell "${val[$p,siw]:-}")" \
		"| $(cell "${ratios[$p,rxe]:-}") | $(cell "${ratios[$p,siw]:-}")" \
		"| ${fails[$p,ubperf]:-0}/${fails[$p,rxe]:-0}/${fails[$p,siw]:-0} of $REPS |"
done
echo
echo "Per round (Mbit/s; ratio ubperf/rxe):"
for p in "${LOSSES[@]}"; do
	for peer in "${PEERS[@]}"; do echo "  loss $p % $peer: ${val[$p,$peer]:-}"; done
	echo "  loss $p % ubperf/rxe: ${ratios[$p,rxe]:-}"
	echo "  loss $p % ubperf/siw: ${ratios[$p,siw]:-}"
done
