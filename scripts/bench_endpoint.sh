#!/usr/bin/env bash
# make bench, UBoE endpoint part: ubperf over AF_XDP between namespaces.
#  1. loss-free goodput and message latency of one channel over a veth pair,
#     beside iperf3 UDP and TCP on the same pair (the kernel's floor), and
#     UBPERF_BASE's ubperf when given;
#  2. goodput under loss made by nftables on a routed hop, 0 / 0.1 / 1 / 5 %,
#     for rtp-sr, rtp-gbn-fast and rtp-gbn, as a fraction of the same mode's
#     loss-free goodput, beside the analytic references SR (1-p) and
#     GBN (1-p)/(1-p+W.p), W = the window in packets;
#  3. CTP on native links: beside RTP-SR, and an entity of two links beside one;
#  4. jumbo frames: ubperf with every default (UB MTU 4096 agreed in the hello,
#     multi-buffer AF_XDP) against one iperf3 TCP flow on the same veth pair of
#     MTU 9000, interleaved rounds, each round's ratio and the medians' (given
#     UBPERF_BASE=DIR/bin, that build's ubperf too, every round, and the ratio of the two);
#  5. small messages: 64-byte Sends a second beside iperf3 UDP's 64-byte datagrams, and
#     one Send at a time (post to completion) beside the kernel's UDP ping-pong,
#     p50 and p99 (given UBPERF_BASE=DIR/bin, that build's ubperf too, every round);
#  6. worker threads: ubperf --workers 2 against --workers 1 (and, given
#     UBPERF_BASE=DIR/bin, that build's ubperf, e.g. main's) on a veth pair of
#     two queues, two channels, both sides with the same workers, interleaved
#     rounds: unpinned, and with both sides' processes on CPU 0 for one worker
#     and CPUs 0-1 for two (each worker's CPU shared with the peer's).
# Prints numbers; asserts none of them (timings on a shared machine are noisy).
#
#   scripts/bench_endpoint.sh [SECONDS_PER_RUN [ROUNDS]]     (default 2 s, 3 rounds)
#   ENDPOINT_BENCH_PARTS="4" scripts/bench_endpoint.sh 4 5   (some parts only; default 1 2 3 4 5 6)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
SECS=${1:-2}
REPS=${2:-3}
WINDOW=256
MTU=1024
PY=/usr/bin/python3

. tests/lib/netns.sh
. bench/out.sh
if reason=$(ns_unsupported); then
	echo "bench: endpoint part skipped: $reason"
	exit 0
fi
[[ -x $BIN/ubperf ]] || { echo "bench: $BIN/ubperf missing; run make first" >&2; exit 1; }
trap ns_cleanup_all EXIT

PARTS=" ${ENDPOINT_BENCH_PARTS:-1 2 3 4 5 6} "
part() { [[ $PARTS == *" $1 "* ]]; }
calc() { awk "BEGIN { print ($1) }"; }
# "-": a run that failed, left out.
median() { printf '%s\n' $1 | grep -v '^-$' | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
jget() { $PY -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

# ubperf_run NS_SRV DEV_SRV NS_CLI DEV_CLI PEER OUT [ARGS]: one client run, JSON in OUT;
# UB_BIN=DIR: that build's ubperf (default $BIN). The server's JSON in OUT.srv; each
# process's user and system seconds, setup included, in OUT.cpu.srv and OUT.cpu.cli
# (where /usr/bin/time is).
ubperf_run() {
	local nss=$1 devs=$2 nsc=$3 devc=$4 peer=$5 out=$6 ub=${UB_BIN:-$BIN}/ubperf; shift 6
	local ts=() tc=()
	if [[ -x /usr/bin/time ]]; then
		ts=(/usr/bin/time -f '%U %S' -o "$out.cpu.srv") tc=(/usr/bin/time -f '%U %S' -o "$out.cpu.cli")
	fi
	rm -f "$out.cpu.srv" "$out.cpu.cli"
	nsenter --net="/run/netns/$nss" "${ts[@]}" "$ub" server --dev "$devs" --wait 20 --json >"$out.srv" 2>/dev/null &
	local srv=$!
	for _ in $(seq 50); do ns_xdp_ready "$nss" "${devs%%,*}" && break; sleep 0.1; done
	if ! ns_run "$nsc" "${tc[@]}" "$ub" client --dev "$devc" --peer "$peer" --time "$SECS" \
		--mtu $MTU --window $WINDOW --stall 10 --json "$@" >"$out" 2>"$out.err"; then
		echo "null" >"$out"
		echo "#   ubperf $*: $(cat "$out.err")" >&2
	fi
	wait $srv || true
}

# The builds a part compares: this tree's ubperf (ub) and, given UBPERF_BASE=DIR/bin,
# that one's (base); round REP runs them in turn, reversed every other round (the
# second of a round tends to be the slower).
BUILDS=(ub)
[[ -n ${UBPERF_BASE:-} ]] && BUILDS+=(base)
build_bin() { if [[ $1 == base ]]; then echo "$UBPERF_BASE"; else echo "$BIN"; fi; }
round_order() { if (($1 % 2)); then printf '%s\n' "${BUILDS[@]}" | tac; else printf '%s\n' "${BUILDS[@]}"; fi; }

tmp=$(mktemp -d)

# ---- 1. one veth pair: ubperf beside iperf3 --------------------------------------
if part 1; then
A=$(ns_add ba) B=$(ns_add bb)
topo_pair "$A" "$B" 10.71.0 02:00:00:00:71
ubperf_run "$B" b0 "$A" a0 10.71.0.2 "$tmp/veth.json"
ub_bps=$(jget "$tmp/veth.json" goodput_bps 2>/dev/null || echo 0)
iperf() {
	nsenter --net="/run/netns/$B" iperf3 -s -1 >/dev/null 2>&1 &
	local srv=$!
	sleep 0.3
	ns_run "$A" iperf3 -c 10.71.0.2 -t "$SECS" -J "$@" >"$tmp/iperf.json" 2>/dev/null || kill $srv 2>/dev/null || true
	wait $srv || true
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["end"]
s=d.get("sum_received") or d.get("sum"); print(int(s["bits_per_second"]))' "$tmp/iperf.json" 2>/dev/null || echo 0
}
udp_bps=$(iperf -u -b 0 -l 1400)
tcp_bps=$(iperf)
printf '\nUBoE endpoint over one veth pair (%s s, 64 KiB messages, MTU %u, window %u; AF_XDP copy mode)\n' "$SECS" $MTU $WINDOW
printf '%-28s %12s %10s\n' "" "Mbit/s" "vs ubperf"
for row in "ubperf rtp-sr:$ub_bps" "iperf3 UDP (1400 B):$udp_bps" "iperf3 TCP:$tcp_bps"; do
	name=${row%%:*} bps=${row##*:}
	printf '%-28s %12.1f %9.2fx\n' "$name" "$(calc "$bps / 1e6")" \
		"$(calc "$ub_bps > 0 ? $bps / $ub_bps : 0")"
done
if [[ -s $tmp/veth.json && $(cat "$tmp/veth.json") != null ]]; then
	printf 'ubperf message latency us: p50 %s  p99 %s  p99.9 %s\n' "$(jget "$tmp/veth.json" latency_us.p50)" \
		"$(jget "$tmp/veth.json" latency_us.p99)" "$(jget "$tmp/veth.json" latency_us.p999)"
fi
# UBPERF_BASE's ubperf against this one: ROUNDS interleaved rounds, the base first
# in every other round (the second of a round tends to be the slower).
if [[ -n ${UBPERF_BASE:-} ]]; then
	declare -a g_ub=() g_base=() g_rs=()
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	for ((rep = 0; rep < REPS; rep++)); do
		for bld in $(round_order $rep); do
			UB_BIN=$(build_bin $bld) ubperf_run "$B" b0 "$A" a0 10.71.0.2 "$tmp/veth.json"
			v=$(jget "$tmp/veth.json" goodput_bps 2>/dev/null || echo 0)
			v=$(printf '%.1f' "$(calc "$v / 1e6")")
			if [[ $bld == base ]]; then g_base+=("$v"); else g_ub+=("$v"); fi
		done
		g_rs+=("$(printf '%.2f' "$(calc "${g_base[rep]} > 0 ? ${g_ub[rep]} / ${g_base[rep]} : 0")")")
	done
	printf 'goodput Mbit/s, %u interleaved rounds (load %s to %s): this build %s; %s %s; ratios %s (median %.2fx)\n' \
		"$REPS" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" "${g_ub[*]}" "$UBPERF_BASE" "${g_base[*]}" \
		"${g_rs[*]}" "$(median "${g_rs[*]}")"
fi
ns_cleanup_all
fi

# ---- 2. routed hop with nftables loss -----------------------------------------------
if part 2; then
C=$(ns_add bc) R=$(ns_add br) S=$(ns_add bs)
topo_routed_hop "$C" "$R" "$S" 10.72.0 10.73.0 02:00:00:00:72 02:00:00:00:73
# Every cell, the loss-free one too, runs the same rule on the router (at 0 it
# drops nothing): on the shared 2 CPUs the rule's own cost per packet (numgen,
# the chain) took 1-15 % of the goodput (median 7 %, bench/README.md), which a
# loss-free cell without it did not pay and every fraction counted as loss's.
set_loss() {
	ns_run "$R" nft delete table inet ubbench 2>/dev/null || true
	ns_run "$R" nft -f - <<-NFT
	table inet ubbench {
		chain forward_uboe {
			type filter hook forward priority 0;
			udp dport 4792 numgen random mod 10000 < $1 drop
		}
	}
	NFT
}
printf '\nGoodput under loss on a routed hop (nftables, both directions), fraction of the loss-free goodput\n'
printf '(median of %u interleaved rounds of %s s per cell)\n' "$REPS" "$SECS"
LOSSES=(0 10 100 500)	# per 10000
MODES=(rtp-sr rtp-gbn-fast rtp-gbn)
declare -A res rtxs
for ((rep = 0; rep < REPS; rep++)); do
	for p in "${LOSSES[@]}"; do
		set_loss $p
		for mode in "${MODES[@]}"; do
			ubperf_run "$S" s0 "$C" c0 10.73.0.1 "$tmp/l.json" --mode $mode
			res[$p,$mode]+="$(jget "$tmp/l.json" goodput_bps 2>/dev/null || echo 0) "
			rtxs[$p,$mode]+="$(jget "$tmp/l.json" retransmissions.total 2>/dev/null || echo 0) "
		done
	done
done
printf '%-8s %-14s %10s %9s %9s %9s %9s\n' "loss %" "mode" "Mbit/s" "fraction" "SR ref" "GBN ref" "rtx"
echo "loss_pct,mode,fraction,window" >"$BENCH_OUT/endpoint_loss.csv"
for p in "${LOSSES[@]}"; do
	for mode in "${MODES[@]}"; do
		bps=$(median "${res[$p,$mode]}")
		b0=$(median "${res[0,$mode]}")
		pr=$(calc "$p / 10000")
		frac=$(calc "$b0 > 0 ? $bps / $b0 : 0")
		printf '%-8s %-14s %10.1f %9.3f %9.3f %9.3f %9s\n' "$(calc "$p / 100")" $mode \
			"$(calc "$bps / 1e6")" "$frac" \
			"$(calc "1 - $pr")" "$(calc "(1 - $pr) / (1 - $pr + $WINDOW * $pr)")" \
			"$(median "${rtxs[$p,$mode]}")"
		echo "$(calc "$p / 100"),$mode,$frac,$WINDOW" >>"$BENCH_OUT/endpoint_loss.csv"
	done
done
bench_plot loss endpoint_loss

fi

# ---- 3. CTP on native links: beside RTP-SR, and an entity of two links beside one ----
if part 3; then
# ubperf --native over direct veth links (emulated UB links), 1 KiB messages (one
# packet each, CTP's limit at MTU 1024), depth 8: rtp-sr vs ctp on one link; an
# entity of two links (--dev A,B) with --lb packet, and --lb flow with 2 channels.
ns_cleanup_all
A=$(ns_add ctpba) B=$(ns_add ctpbb)
for k in 1 2; do
	ns_link "$A" a$k 02:00:00:00:75:${k}1 "$B" b$k 02:00:00:00:75:${k}2
done
ns_addr "$A" a1 10.75.0.1/24
ns_addr "$B" b1 10.75.0.2/24

# ctp_run NAME SERVER_ARGS -- CLIENT_ARGS: one run, goodput and p50 appended to cres[NAME].
declare -A cres clat
ctp_run() {
	local name=$1 sargs=() cargs=()
	shift
	while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	nsenter --net="/run/netns/$B" "$BIN/ubperf" server --wait 20 --native "${sargs[@]}" >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 50); do ns_run "$B" ss -Hltn 'sport = :4793' | grep -q . && break; sleep 0.1; done
	if ns_run "$A" "$BIN/ubperf" client --peer 10.75.0.2 --native --time "$SECS" --size 1024 \
		--mtu 1024 --stall 10 --json "${cargs[@]}" >"$tmp/o.json" 2>"$tmp/o.err"; then
		cres[$name]+="$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["goodput_bps"])' "$tmp/o.json") "
		clat[$name]+="$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_us"]["p50"])' "$tmp/o.json") "
	else
		echo "#   $name: $(cat "$tmp/o.err")" >&2
		cres[$name]+="0 "
		clat[$name]+="0 "
	fi
	wait $srv || true
}

NAMES=("rtp-sr, 1 link" "ctp, 1 link" "ctp, entity of 2, --lb packet" "ctp, entity of 2, --lb flow, 2 ch")
for ((rep = 0; rep < REPS; rep++)); do
	ctp_run "${NAMES[0]}" --dev b1 -- --dev a1 --mode rtp-sr
	ctp_run "${NAMES[1]}" --dev b1 -- --dev a1 --mode ctp
	ctp_run "${NAMES[2]}" --dev b1,b2 --mode ctp -- --dev a1,a2 --mode ctp --lb packet
	ctp_run "${NAMES[3]}" --dev b1,b2 --mode ctp -- --dev a1,a2 --mode ctp --lb flow --channels 2
done
base=$(median "${cres[${NAMES[1]}]}")
printf '\nCTP on native veth links (1 KiB messages, depth 8, median of %u interleaved rounds of %s s)\n' "$REPS" "$SECS"
printf '%-36s %10s %10s %10s\n' "" "Mbit/s" "vs ctp" "p50 us"
for n in "${NAMES[@]}"; do
	b=$(median "${cres[$n]}")
	printf '%-36s %10.1f %9.2fx %10s\n' "$n" "$(calc "$b / 1e6")" "$(calc "$base > 0 ? $b / $base : 0")" \
		"$(median "${clat[$n]}")"
done
ns_cleanup_all
fi

# ---- 4. jumbo frames: ubperf's defaults against one TCP flow, MTU 9000 --------------
# The same veth pair for both, MTU 9000 at both ends; ubperf with no option but
# the run's length (rtp-sr, 64 KiB messages, window 256, the UB MTU the hello
# agrees: 4096 here), iperf3 with one TCP flow and its defaults. Rounds
# interleave the two, so both meet the same load on this shared machine. With
# UBPERF_BASE=DIR/bin that build's ubperf runs too in every round, before this
# one's in every other round, and each round's ratio of the two is printed.
if part 4; then
ns_cleanup_all
A=$(ns_add jba) B=$(ns_add jbb)
topo_pair "$A" "$B" 10.76.0 02:00:00:00:76 9000
declare -A jub=()	# [BUILD] the rounds' goodputs; BUILD ub (this) or base
jtcp=() jmtu=0 jmb=0 jorder=()
# jumbo_run BUILD: one run of BUILD's ubperf with its defaults; its goodput (0: failed).
jumbo_run() {
	local ub bps=0
	ub=$(build_bin "$1")
	nsenter --net="/run/netns/$B" "$ub/ubperf" server --dev b0 --wait 20 --json >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 50); do ns_xdp_ready "$B" b0 && break; sleep 0.1; done
	if ns_run "$A" "$ub/ubperf" client --dev a0 --peer 10.76.0.2 --time "$SECS" --json \
		>"$tmp/j.json" 2>"$tmp/j.err"; then
		bps=$(jget "$tmp/j.json" goodput_bps)
		if [[ $1 == ub ]]; then	# the header's figures are this build's
			jmtu=$(jget "$tmp/j.json" mtu)
			jmb=$(jget "$tmp/j.json" tx_multi_buffer)
		fi
	else
		echo "#   ubperf $ub (MTU 9000): $(cat "$tmp/j.err")" >&2
	fi
	wait $srv || true
	jub[$1]+="$bps "
}
jload=()
for ((rep = 0; rep < REPS; rep++)); do
	order=($(round_order $rep))
	for bld in "${order[@]}"; do jumbo_run "$bld"; done
	nsenter --net="/run/netns/$B" iperf3 -s -1 >/dev/null 2>&1 &
	srv=$!
	sleep 0.3
	ns_run "$A" iperf3 -c 10.76.0.2 -t "$SECS" -J >"$tmp/jt.json" 2>/dev/null || kill $srv 2>/dev/null || true
	wait $srv || true
	jtcp+=("$($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["end"]
print(int(d["sum_received"]["bits_per_second"]))' "$tmp/jt.json" 2>/dev/null || echo 0)")
	jorder+=("${order[*]} tcp")
	jload+=("$(cut -d' ' -f1 /proc/loadavg)")
done
printf '\nJumbo frames: one veth pair of MTU 9000, ubperf with its defaults (UB MTU %s agreed in the hello,\n' "$jmtu"
printf '%s packets sent as multi-buffer AF_XDP in the last run) against one iperf3 TCP flow, %u interleaved rounds of %s s\n' \
	"$jmb" "$REPS" "$SECS"
for bld in "${BUILDS[@]}"; do
	u=(${jub[$bld]}) jratio=()
	[[ $bld == base ]] && printf 'ubperf %s:\n' "$UBPERF_BASE"
	printf '%-8s %14s %14s %10s\n' "round" "ubperf Mbit/s" "TCP Mbit/s" "ratio"
	for ((rep = 0; rep < REPS; rep++)); do
		jratio+=("$(calc "${jtcp[rep]} > 0 ? ${u[rep]} / ${jtcp[rep]} : 0")")
		printf '%-8s %14.1f %14.1f %9.2fx\n' "$((rep + 1))" "$(calc "${u[rep]} / 1e6")" \
			"$(calc "${jtcp[rep]} / 1e6")" "${jratio[rep]}"
	done
	mu=$(median "${u[*]}") mt=$(median "${jtcp[*]}")
	printf '%-8s %14.1f %14.1f %9.2fx   (ratio of the medians; median ratio %.2fx)\n' "median" "$(calc "$mu / 1e6")" \
		"$(calc "$mt / 1e6")" "$(calc "$mt > 0 ? $mu / $mt : 0")" "$(median "${jratio[*]}")"
done
if [[ -n ${UBPERF_BASE:-} ]]; then
	u=(${jub[ub]}) b=(${jub[base]}) rs=()
	for ((rep = 0; rep < REPS; rep++)); do
		rs+=("$(printf '%.3f' "$(calc "${b[rep]} > 0 ? ${u[rep]} / ${b[rep]} : 0")")")
	done
	printf 'this build / %s, each round: %s (median %.3f)\n' "$UBPERF_BASE" "${rs[*]}" "$(median "${rs[*]}")"
fi
printf 'order of each round: %s; load average after each: %s\n' "$(IFS=,; echo "${jorder[*]}")" "${jload[*]}"
ns_cleanup_all
fi

# ---- 5. small messages: 64-byte Sends beside the kernel's UDP -----------------------
# Rate: ubperf's 64-byte Sends (depth 8 per channel) against iperf3 UDP's 64-byte
# datagrams, messages a second the receiver counted. Latency: one 64-byte Send at a
# time (--depth 1), post to completion (the Send out, its TPACK back), against the
# kernel's UDP ping-pong (build/bin/udp_pingpong: a datagram out, the echo back) on the
# same pair. Interleaved rounds, medians of the rounds that ran (a failed run says why
# and is left out); the ratios are ubperf's over the kernel's. With UBPERF_BASE=DIR/bin
# that build's ubperf runs too in every round, before this one's in every other round.
if part 5; then
A=$(ns_add sa) B=$(ns_add sb)
topo_pair "$A" "$B" 10.74.0 02:00:00:00:74
declare -A sm=()	# [BUILD:rate|lat|p99] the rounds' figures; BUILD ub (this) or base
# small_run BUILD: one depth-8 rate and one depth-1 latency run of BUILD's ubperf.
small_run() {
	local ub
	ub=$(build_bin "$1")
	UB_BIN=$ub ubperf_run "$B" b0 "$A" a0 10.74.0.2 "$tmp/s.json" --size 64
	sm[$1:rate]+="$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["messages"] / d["duration_s"]))' "$tmp/s.json" 2>/dev/null || echo -) "
	UB_BIN=$ub ubperf_run "$B" b0 "$A" a0 10.74.0.2 "$tmp/l.json" --size 64 --depth 1
	sm[$1:lat]+="$(jget "$tmp/l.json" latency_us.p50 2>/dev/null || echo -) "
	sm[$1:p99]+="$(jget "$tmp/l.json" latency_us.p99 2>/dev/null || echo -) "
	sm[$1:cpu]+="$(cpu_per_rt "$tmp/l.json") "
}
# cpu_per_rt OUT: CPU us per round trip of ubperf_run OUT's depth-1 run, both
# processes: "ALL/LOOP", ALL with their setup (/usr/bin/time), LOOP the loops' alone
# (the JSON's cpu_s, a build that reports it; else "-"); "-" for a failed run.
cpu_per_rt() {
	$PY - "$1" <<'PY' 2>/dev/null || echo -
import json, sys
o = sys.argv[1]
c, s = json.load(open(o)), json.load(open(o + ".srv"))
n = c["messages"]
t = lambda f: sum(map(float, open(f).read().split()[-2:]))
a = (t(o + ".cpu.cli") + t(o + ".cpu.srv")) * 1e6 / n
l = "%.1f" % ((c["cpu_s"] + s["cpu_s"]) * 1e6 / n) if "cpu_s" in c else "-"
print("%.1f/%s" % (a, l))
PY
}
declare -a udp_rate=() udp_lat=() udp_p99=() udp_cpu=() pp_rounds=()
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((rep = 0; rep < REPS; rep++)); do
	order=($(round_order $rep))
	for bld in "${order[@]}"; do small_run "$bld"; done
	nsenter --net="/run/netns/$B" iperf3 -s -1 >/dev/null 2>&1 &
	srv=$!
	sleep 0.3
	# a client that never connected leaves `iperf3 -s -1` waiting for good
	ns_run "$A" iperf3 -c 10.74.0.2 -u -b 0 -l 64 -t "$SECS" -J >"$tmp/u.json" 2>/dev/null || kill $srv 2>/dev/null || true
	wait $srv || true
	udp_rate+=("$($PY -c 'import json,sys; s=json.load(open(sys.argv[1]))["end"]["sum"]
print(round((s["packets"] - s["lost_packets"]) / s["seconds"]))' "$tmp/u.json" 2>/dev/null || echo -)")
	nsenter --net="/run/netns/$B" "$BIN/udp_pingpong" server 5300 >"$tmp/pp.srv" 2>&1 &
	srv=$!
	for _ in $(seq 50); do grep -qs ready "$tmp/pp.srv" && break; sleep 0.05; done
	# CPU: the server's time on a CPU (schedstat, ns) and the client's user + system.
	s0=$(cut -d' ' -f1 /proc/$srv/schedstat 2>/dev/null || echo -)
	rm -f "$tmp/pp.cpu"
	tu=()
	[[ -x /usr/bin/time ]] && tu=(/usr/bin/time -f '%U %S' -o "$tmp/pp.cpu")
	# a failed client (the server not up yet under load) is a round without UDP's figures
	pp=$(ns_run "$A" "${tu[@]}" "$BIN/udp_pingpong" client 10.74.0.2 5300 64 20000) ||
		{ echo "#   udp_pingpong: $(cat "$tmp/pp.srv")" >&2; pp=""; }
	s1=$(cut -d' ' -f1 /proc/$srv/schedstat 2>/dev/null || echo -)
	udp_lat+=("$(awk '{ print $7 }' <<<"$pp")")
	udp_p99+=("$(awk '{ print $9 }' <<<"$pp")")
	udp_cpu+=("$(awk -v s0="$s0" -v s1="$s1" '{ if (s0 == "-" || s1 == "-" || !$3) print "-"; else
		printf "%.1f\n", ($12 + $13) * 1e6 / $3 + (s1 - s0) / 1e3 / $3 }' <<<"$pp $(tail -1 "$tmp/pp.cpu" 2>/dev/null)")")
	kill $srv 2>/dev/null || true; wait $srv 2>/dev/null || true
	pp_rounds+=("${order[*]} udp")
done
r_udp=$(median "${udp_rate[*]}") l_udp=$(median "${udp_lat[*]}") t_udp=$(median "${udp_p99[*]}")
printf '\nSmall messages over one veth pair, 64 bytes (median of %u rounds of %s s); load: %s to %s\n' \
	"$REPS" "$SECS" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)"
for bld in "${BUILDS[@]}"; do
	name=ubperf
	[[ $bld == base ]] && name="ubperf $UBPERF_BASE"
	r_ub=$(median "${sm[$bld:rate]}") l_ub=$(median "${sm[$bld:lat]}") t_ub=$(median "${sm[$bld:p99]}")
	printf '%-44s %12s %12s %8s\n' "$name" "ubperf" "kernel UDP" "ratio"
	printf '%-44s %12.0f %12.0f %7.2fx\n' "messages/s (depth 8 / iperf3 -u -l 64 -b 0)" "$r_ub" "$r_udp" \
		"$(calc "$r_udp > 0 ? $r_ub / $r_udp : 0")"
	printf '%-44s %12.1f %12.1f %7.2fx\n' "round trip p50 us (depth 1 / udp_pingpong)" "$l_ub" "$l_udp" \
		"$(calc "$l_udp > 0 ? $l_ub / $l_udp : 0")"
	printf '%-44s %12.1f %12.1f %7.2fx\n' "round trip p99 us (depth 1 / udp_pingpong)" "$t_ub" "$t_udp" \
		"$(calc "$t_udp > 0 ? $t_ub / $t_udp : 0")"
	# Each round's p50 over that round's UDP p50: the rounds meet different loads.
	l=(${sm[$bld:lat]}) rs=()
	for ((rep = 0; rep < ${#l[@]} && rep < ${#udp_lat[@]}; rep++)); do
		[[ ${l[rep]} == - || -z ${udp_lat[rep]} ]] && { rs+=(-); continue; }
		rs+=("$(printf '%.2f' "$(calc "${udp_lat[rep]} > 0 ? ${l[rep]} / ${udp_lat[rep]} : 0")")")
	done
	printf 'rounds: msg/s %s; p50 %s; p99 %s; p50 / UDP p50 %s (median %.2fx)\n' "${sm[$bld:rate]}" \
		"${sm[$bld:lat]}" "${sm[$bld:p99]}" "${rs[*]}" "$(median "${rs[*]}")"
	printf 'rounds: CPU us per round trip, both processes, with setup / the loops alone: %s\n' "${sm[$bld:cpu]}"
done
printf 'rounds: UDP pkt/s %s; UDP p50 %s; UDP p99 %s; UDP CPU us per round trip %s\n' "${udp_rate[*]}" \
	"${udp_lat[*]}" "${udp_p99[*]}" "${udp_cpu[*]}"
printf 'order of each round: %s\n' "$(IFS=,; echo "${pp_rounds[*]}")"
ns_cleanup_all
fi

# ---- 6. worker threads: --workers 2 against 1 ------------------------------------
# A veth pair of two rx and two tx queues; ubperf's defaults but the run's
# length, two channels (one a worker with two), the server with as many
# workers as the client. Each round runs every arm once, in turn (every other
# round in the reverse order), so all meet the same load on this shared machine. "pinned": both processes confined
# with taskset to as many CPUs as workers (CPU 0; CPUs 0-1): a worker's CPU is
# shared with a worker of the peer. "unpinned": every thread of both sides
# on both CPUs, as the scheduler likes.
if part 6; then
ns_cleanup_all
A=$(ns_add wa) B=$(ns_add wb)
topo_pair "$A" "$B" 10.78.0 02:00:00:00:78 "" 2
# wk_run BIN WORKERS CPUS: one run's goodput (0: failed) and the CPU seconds
# (user + system) both processes took; WORKERS empty: BIN has no --workers.
wk_run() {
	local bin=$1 w=$2 cpus=$3 wopt=() pin=() bps=0
	[[ -n $w ]] && wopt=(--workers "$w")
	[[ -n $cpus ]] && pin=(taskset -c "$cpus")
	nsenter --net="/run/netns/$B" /usr/bin/time -f "%U %S" -o "$tmp/ts" "${pin[@]}" "$bin/ubperf" server \
		--dev b0 --wait 20 --json "${wopt[@]}" >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 50); do ns_xdp_ready "$B" b0 && break; sleep 0.1; done
	if nsenter --net="/run/netns/$A" /usr/bin/time -f "%U %S" -o "$tmp/tc" "${pin[@]}" "$bin/ubperf" client \
		--dev a0 --peer 10.78.0.2 --time "$SECS" --channels 2 --json "${wopt[@]}" >"$tmp/w.json" 2>"$tmp/w.err"; then
		bps=$(jget "$tmp/w.json" goodput_bps)
	else
		echo "#   ubperf ${wopt[*]} (${cpus:-unpinned}): $(cat "$tmp/w.err")" >&2
	fi
	wait $srv || true
	echo "$bps $(cat "$tmp/ts" "$tmp/tc" | awk '{ s += $1 + $2 } END { print s }')"
}
# An arm is WORKERS/CPUS ("base": UBPERF_BASE's ubperf; "-": unpinned);
# WORKERS_ARMS="1/- base/-" runs only those.
ARMS=(1/- 2/- 1/0 2/0-1)
[[ -n ${UBPERF_BASE:-} ]] && ARMS+=(base/- base/0)
[[ -n ${WORKERS_ARMS:-} ]] && read -r -a ARMS <<<"$WORKERS_ARMS"
declare -A wres=() wcpu=()
for ((rep = 0; rep < REPS; rep++)); do
	order=("${ARMS[@]}")
	# Every other round backwards: no arm always follows the same one.
	((rep % 2)) && for ((i = 0; i < ${#ARMS[@]}; i++)); do order[i]=${ARMS[${#ARMS[@]} - 1 - i]}; done
	for arm in "${order[@]}"; do
		IFS=/ read -r w cpus <<<"$arm"
		[[ $cpus == - ]] && cpus=
		if [[ $w == base ]]; then
			read -r bps cpu < <(wk_run "$UBPERF_BASE" "" "$cpus")
		else
			read -r bps cpu < <(wk_run "$BIN" "$w" "$cpus")
		fi
		wres[$arm]+="$bps " wcpu[$arm]+="$cpu "
	done
done
printf '\nWorker threads: one veth pair of 2 queues, 2 channels, both sides --workers N, %u interleaved rounds of %s s; load: %s\n' \
	"$REPS" "$SECS" "$(uptime | sed 's/.*load average/load average/')"
printf '%-26s %s\n' "workers/CPUs of each side" "goodput Mbit/s per round, median"
for arm in "${ARMS[@]}"; do
	printf '%-26s' "$arm"
	for v in ${wres[$arm]}; do printf ' %8.1f' "$(calc "$v / 1e6")"; done
	printf '   median %.1f\n' "$(calc "$(median "${wres[$arm]}") / 1e6")"
done
# What each arm had of the machine: CPU seconds of both processes over the
# run's wall time (2.0 = both CPUs; setup included), and goodput per CPU second.
printf '%-26s %s\n' "workers/CPUs of each side" "CPUs used per round; median Mbit per CPU second"
for arm in "${ARMS[@]}"; do
	g=(${wres[$arm]}) c=(${wcpu[$arm]}) per=()
	printf '%-26s' "$arm"
	for ((rep = 0; rep < REPS; rep++)); do
		printf ' %8.2f' "$(calc "${c[rep]} / $SECS")"
		per+=("$(calc "${c[rep]} > 0 ? ${g[rep]} / 1e6 / ${c[rep]} : 0")")
	done
	printf '   median %.1f\n' "$(median "${per[*]}")"
done
for pair in "unpinned 1/- 2/-" "pinned 1/0 2/0-1" "vs-main base/- 1/-"; do
	read -r name one two <<<"$pair"
	[[ -n ${wres[$one]:-} && -n ${wres[$two]:-} ]] || continue
	o=(${wres[$one]}) t=(${wres[$two]}) rs=()
	for ((rep = 0; rep < REPS; rep++)); do rs+=("$(calc "${o[rep]} > 0 ? ${t[rep]} / ${o[rep]} : 0")"); done
	printf '%-6s / %-6s (%s) per round: %s  median ratio %.2fx\n' "$two" "$one" "$name" "${rs[*]}" \
		"$(median "${rs[*]}")"
done
ns_cleanup_all
fi
