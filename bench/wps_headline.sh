#!/usr/bin/env bash
# WPS headline benchmark: one TCP flow (iperf3) from site A through the WPS ingress
# (ubctl wps ingress, TC) over 4 rate-limited paths (tbf) with 0, 1, 5 and 10 ms of delay
# (wps_delayline: the host has no netem) to the WPS egress (ubctl wps egress run) and
# site B. Five ways over the same paths, measured in one run:
#   wps-def   every default: the host's TCP (BBR here) and buffers (autotuning), the ingress's
#             attach defaults (its in-flight bound), the egress's own (its threads at
#             real-time priority by themselves, no chrt), groups of --quantum packets, R = 1
#   wps       groups of --quantum packets, R = 1: the egress restores the order
#   wps-g8    the same with the ingress's in-flight bound at 8 groups (its earlier default): what it caps
#   wps-bbr   the same with the host's congestion control (BBR here) and buffers, untuned
#   flow      no WPS rule: the flow's one path (what per-flow hashing gives)
#   spray     quantum 1, R = 0: per-packet spraying, nothing restores the order
# TCP as a deployment over these paths would tune it (all but wps-bbr): CUBIC (--cc), and
# the receiver's buffer (net.ipv4.tcp_rmem max in site B) sized to 4 x the BDP of the
# slowest path: the sum of the path rates x (its delay + one group's time through a path's
# rate), so the window (about half the buffer here) covers 2 BDPs and never fills the tbf
# queues. BBR is shown beside: it takes its minimum RTT from the fastest path and keeps a
# window too small for the slowest (see bench/README.md). iperf3 omits the first second
# (slow start) from the figures.
# Prints goodput / sum of the path rates, out-of-order segments the receiver queued
# (TcpExtTCPOFOQueue), retransmissions, and the egress buffer high-water mark beside
# rate x skew + one group. Needs root, the WPS ingress (ubctl wps ingress) and iperf3.
#
#   bench/wps_headline.sh [--rate MBIT] [--quantum N] [--inner-mtu N (1400; up to 1444)] [--time S]
#                         [--verbose (goodput per second, the ingress's groups and bytes per path)]
#                         [--diag (ss -ti half way)] [--cc CC] [--rmem BYTES] [--modes "wps wps-g8 wps-bbr flow spray"]
#                         [--no-rt (the egress at normal priority)]
#                         [--probe (per path: busy fraction, empty queue, backlog; site B's receive buffer)]
#                         [--attach "OPTS" (the ingress's attach options; "--max-inflight 16" unless given)]
#                         [--rates "R0 R1 R2 R3" (Mbit/s per path, instead of --rate; the ingress's rule
#                          then schedules --sched weighted with the paths weighted as their rates)]
#                         [--sched rr|weighted|least-loaded] [--loss-path K --loss N (1 frame in N lost on
#                          path K, at random, by the delay line)] [--egress "OPTS" (more egress run options)]
#                         [--plot NAME (the egress buffer of the wps modes against time, sampled as the
#                          egress writes its statistics, once a second: $BENCH_OUT/NAME.csv and .svg)]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
. tests/lib/netns.sh
. tests/lib/wps_egress.sh
UBCTL=$ROOT/build/bin/ubctl
RATE=25 QUANTUM=16 TIME=10 VERBOSE=0 DIAG=0 PROBE=0 RT=1 CC=cubic RMEM= MODES="wps-def wps wps-g8 wps-bbr flow spray" INNER=1400
RATES=() SCHED= LOSS_PATH= LOSS= EG_OPTS=() PLOT=
# The ingress's in-flight bound sized for the flow (bench/README.md): at most G groups in flight,
# each counted for --max-delay (10 ms) + a clock tick after its E, caps a flow at
# (G - 1) x quantum x frame / (10 ms + 4 ms): 94 Mbit/s at the default G = 8, below the paths' 100.
WPS_CHAIN_ATTACH=(--max-inflight 16)
while [[ $# -gt 0 ]]; do
	case $1 in
	--rate) RATE=$2; shift 2 ;;
	--quantum) QUANTUM=$2; shift 2 ;;
	--inner-mtu) INNER=$2; shift 2 ;;
	--time) TIME=$2; shift 2 ;;
	--verbose) VERBOSE=1; shift ;;
	--diag) DIAG=1; shift ;;
	--probe) PROBE=1; shift ;;
	--cc) CC=$2; shift 2 ;;
	--rmem) RMEM=$2; shift 2 ;;
	--modes) MODES=$2; shift 2 ;;
	--no-rt) RT=0; shift ;;
	--attach) read -ra WPS_CHAIN_ATTACH <<<"$2"; shift 2 ;;
	--rates) read -ra RATES <<<"$2"; shift 2 ;;
	--sched) SCHED=$2; shift 2 ;;
	--loss-path) LOSS_PATH=$2; shift 2 ;;
	--loss) LOSS=$2; shift 2 ;;
	--egress) read -ra EG_OPTS <<<"$2"; shift 2 ;;
	--plot) PLOT=$2; shift 2 ;;
	*) echo "usage: $0 [--rate MBIT] [--rates \"R0 R1 R2 R3\"] [--sched S] [--loss-path K --loss N] [--quantum N] [--inner-mtu N] [--time S] [--verbose] [--diag] [--cc CC] [--rmem BYTES] [--modes M] [--no-rt] [--probe] [--attach OPTS] [--plot NAME]" >&2; exit 2 ;;
	esac
done
# Unequal rates: their sum stands for 4 x --rate in the fractions; the ingress spreads groups in
# proportion to them (weighted), as a deployment that knows its paths would configure it.
SUM=$((4 * RATE))
if [[ ${#RATES[@]} -gt 0 ]]; then
	[[ ${#RATES[@]} -eq 4 ]] || { echo "--rates takes four rates" >&2; exit 2; }
	SUM=$((RATES[0] + RATES[1] + RATES[2] + RATES[3])) RATE=$((SUM / 4)) SCHED=${SCHED:-weighted}
	# The rates themselves are the weights (1..255): the ingress's weighted scheduler takes them
	# in lowest terms, so 40:30:20:10 spreads groups as 4:3:2:1 does.
	for r in "${RATES[@]}"; do ((r >= 1 && r <= 255)) || { echo "--rates: 1..255 Mbit/s each (path weights)" >&2; exit 2; }; done
	WPS_CHAIN_WEIGHTS=("${RATES[@]}")
fi
# 4 x BDP of the slowest path: 4 x rate x (its delay + one group's frames at one path's rate)
BDP=$(( 4 * RATE * 1000000 / 8 * (WPS_DELAYS[3] + QUANTUM * (INNER + 70) * 8 / RATE) / 1000000 ))
RMEM=${RMEM:-$((4 * BDP))}
why=$(ns_unsupported) && { echo "wps_headline: skipped: $why"; exit 0; }
"$UBCTL" wps ingress help >/dev/null 2>&1 || { echo "wps_headline: skipped: this ubctl has no 'wps ingress' (the WPS ingress branch)"; exit 0; }
command -v iperf3 >/dev/null || { echo "wps_headline: skipped: iperf3 not installed"; exit 0; }
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; ns_cleanup_all' EXIT

# busiest: of ss -ti's sockets (a state line, then its info), the one that moved the most
# bytes: iperf3's data connection, not its control connection.
busiest() {
	awk '/^[A-Z]/ {line = $0; next} {line = line " " $0; n = 0
		rest = line
		while (match(rest, /bytes_(acked|received):[0-9]+/)) {
			split(substr(rest, RSTART, RLENGTH), a, ":"); if (a[2] + 0 > n) n = a[2] + 0
			rest = substr(rest, RSTART + RLENGTH) }
		if (n >= most) { most = n; best = line } }
		END { gsub(/[ \t]+/, " ", best); print best }'
}

# sample_buffer OUT: "seconds buffered" lines, twice a second (the egress writes its statistics
# once a second), until killed.
sample_buffer() {
	local t0=${EPOCHREALTIME/./} b us
	while :; do
		b=$("$UBCTL" wps egress stats --json --name "$EG_NAME" 2>/dev/null | jq -r '.wps_egress[0].reorder.buffered // empty')
		us=$((${EPOCHREALTIME/./} - t0))
		[[ -z $b ]] || printf '%d.%02d %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "$b" >>"$1"
		sleep 0.5
	done
}

# run MODE: one iperf3 flow; prints a table row.
run() {
	local mode=$1 d cc=$CC rmem=$RMEM rt=$RT k sched=(); d=$(mktemp -d)
	[[ $mode == wps-bbr || $mode == wps-def ]] && cc= rmem=
	[[ $mode == wps-def ]] && rt=0
	[[ -n $SCHED ]] && sched=(--sched "$SCHED")
	topo_wps_chain "$RATE" "$INNER"
	if [[ ${#RATES[@]} -gt 0 ]]; then
		for k in 0 1 2 3; do
			tc -n "$NS_GW" qdisc replace dev "wan$k" root stab overhead 0 linklayer ethernet \
				tbf rate "${RATES[k]}mbit" burst 32kb latency 100ms
		done
	fi
	WPS_LOSS=()
	[[ -z $LOSS_PATH ]] || WPS_LOSS[LOSS_PATH]=$LOSS
	[[ -z $rmem ]] || ip netns exec "$NS_WDST" sysctl -qw net.ipv4.tcp_rmem="4096 131072 $rmem"
	wps_delayline_start "$NS_WDL" "$d/dl" || return 1
	wps_egress_start "$d/eg" eg-d0,eg-d1,eg-d2,eg-d3 --quiet "${EG_OPTS[@]}" || return 1
	# The gateway's threads at real-time priority, as the delay line's: a gateway has its
	# cores; on this shared machine a descheduled reorder thread stalls the flow.
	[[ $rt == 1 ]] && chrt -a -f -p 10 "$EG_PID" >/dev/null 2>&1
	if [[ $mode == wps-g8 || $mode == wps-def ]]; then
		local keep=("${WPS_CHAIN_ATTACH[@]}")
		WPS_CHAIN_ATTACH=()
		[[ $mode == wps-g8 ]] && WPS_CHAIN_ATTACH=(--max-inflight 8)	# the earlier default
		wps_chain_ingress --proto tcp --quantum "$QUANTUM" "${sched[@]}" || return 1
		WPS_CHAIN_ATTACH=("${keep[@]}")
	elif [[ $mode == wps* ]]; then
		wps_chain_ingress --proto tcp --quantum "$QUANTUM" "${sched[@]}" || return 1
	elif [[ $mode == spray ]]; then
		wps_chain_ingress --proto tcp --quantum 1 --no-reorder || return 1
	fi
	# R = 0 leaves the egress by XDP_REDIRECT into eg-site: a veth delivers that only to a
	# peer with NAPI (GRO). R = 1 leaves over AF_XDP, which needs no NAPI at wdst0.
	[[ $mode == spray ]] && ns_run "$NS_WDST" ethtool -K wdst0 gro on >/dev/null 2>&1
	ip netns exec "$NS_WDST" iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
	sleep 0.3
	local ofo0 ofo1
	ofo0=$(ip netns exec "$NS_WDST" nstat -az TcpExtTCPOFOQueue | awk '/TcpExtTCPOFOQueue/ {print $2}')
	ip netns exec "$NS_WSRC" iperf3 -c 10.30.0.2 -p 5201 -t "$TIME" -O 1 ${cc:+-C "$cc"} -J >"$d/iperf" 2>&1 &
	local ipf=$! probe= sampler=
	if [[ -n $PLOT && $mode == wps* ]]; then
		sample_buffer "$d/buf" &
		sampler=$!
	fi
	if [[ $PROBE == 1 ]]; then
		/usr/bin/python3 bench/wps_headline_probe.py "$NS_GW" "$NS_WSRC" "$NS_WDST" "$RATE" "$TIME" 1 >"$d/probe" 2>&1 &
		probe=$!
	fi
	if [[ $DIAG == 1 ]]; then	# what limits the sender, half way through (ss -ti: cwnd, rtt, *_limited)
		sleep $((TIME / 2 + 1))
		echo "$mode ss -ti at the sender, half way:"
		ip netns exec "$NS_WSRC" ss -tinH dst 10.30.0.2 dport = 5201 | busiest | fold -w 160
		ip netns exec "$NS_WDST" ss -tinmH src 10.30.0.2 sport = 5201 | busiest | fold -w 160
	fi
	wait "$ipf"
	[[ -z $sampler ]] || { kill "$sampler"; wait "$sampler" 2>/dev/null; }
	[[ -n $probe ]] && { wait "$probe"; sed "s/^/$mode /" "$d/probe"; }
	ofo1=$(ip netns exec "$NS_WDST" nstat -az TcpExtTCPOFOQueue | awk '/TcpExtTCPOFOQueue/ {print $2}')
	sleep 1.2
	"$UBCTL" wps egress stats --json --name "$EG_NAME" >"$d/stats" 2>/dev/null
	ns_run "$NS_GW" "$UBCTL" stats --json >"$d/istats" 2>/dev/null
	[[ $mode != flow ]] && ns_run "$NS_GW" "$UBCTL" wps ingress detach --dev wan0 >/dev/null 2>&1
	kill -TERM "$EG_PID" "$DL_PID" 2>/dev/null; wait "$EG_PID" "$DL_PID" 2>/dev/null
	[[ $VERBOSE == 1 && -n $LOSS_PATH ]] && grep "pair $LOSS_PATH" "$d/dl" | sed "s/^/$mode delay line /"
	# Frames lost anywhere in the chain, which TCP then retransmits and the receiver queues out
	# of order: tbf's queue overflowing (TCP probing past the rate) and every device's drop
	# counters (a full veth ring or backlog, a send the delay line could not make).
	local k ns drops=0 pd perpath=
	for k in 0 1 2 3; do
		pd=$(tc -s -n "$NS_GW" qdisc show dev "wan$k" | awk '/tbf/ {t = 1} t && /dropped/ {sub(",", "", $7); print $7; exit}')
		drops=$((drops + pd)) perpath+=" $pd"
	done
	[[ $VERBOSE == 1 ]] && echo "$mode tbf drops per path:$perpath"
	for ns in "$NS_WSRC" "$NS_GW" "$NS_WDL" "$NS_EG" "$NS_WDST"; do
		drops=$((drops + $(ip -s -j -n "$ns" link show | /usr/bin/python3 -c 'import json, sys
print(sum(l["stats64"]["rx"]["dropped"] + l["stats64"]["tx"]["dropped"] for l in json.load(sys.stdin)))')))
	done
	/usr/bin/python3 - "$mode" "$d/iperf" "$d/stats" "$((ofo1 - ofo0))" "$SUM" "$QUANTUM" "$drops" "$VERBOSE" "$d/istats" "$INNER" "$d/buf" "${PLOT:+$BENCH_OUT/$PLOT.csv}" <<'PY'
import json, os, sys
mode, ip, st, ofo, rate, q = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]) / 4, int(sys.argv[6])
drops, verbose = int(sys.argv[7]), sys.argv[8] == "1"
inner = int(sys.argv[10])
if verbose and mode != "flow":
    # Groups the ingress extended at its in-flight bound: an extended group loads its path
    # with more than its share, and the in-order release then waits for that path.
    try:
        i = json.load(open(sys.argv[9]))["wps_ingress"][0]
        c = i["counters"]
        print(f"{mode:7s} ingress: groups opened {c['groups_opened']}, extended at the in-flight bound "
              f"{c['groups_extended_inflight']}; bytes per path (MB) "
              + " ".join(f"{p['bytes'] / 1e6:.1f}" for p in i["paths"]))
    except Exception:
        pass
r = json.load(open(ip))
if "error" in r:
    print(f"{mode:7s} iperf3 error: {r['error']}"); sys.exit(0)
gp = r["end"]["sum_received"]["bits_per_second"] / 1e6
rtx = r["end"]["sum_sent"].get("retransmits", 0)
if verbose:
    print(f"{mode:7s} per second: " + " ".join(f"{i['sum']['bits_per_second'] / 1e6:.1f}" for i in r["intervals"]))
hwm = "-"
pred = "-"
try:
    s = json.load(open(st))["wps_egress"][0]["reorder"]
    if mode.startswith("wps"):
        hwm = s["hwm"]
        if verbose:
            print(f"{mode:7s} egress: timer expiries {s['timer_expiries']}, late packets {s['late_packets']}, "
                  f"bound releases {s['bound_releases']}, skew {s['skew_us']} us, release timeout "
                  f"{s['release_timeout_us']} us")
        # rate x skew + one group, in inner packets (the flow's rate as measured)
        pred = f"{gp * 1e6 / 8 * 0.010 / inner + q:.0f}"
except Exception:
    pass
csv_out = sys.argv[12]
if csv_out and os.path.exists(sys.argv[11]):
    with open(csv_out, "a") as f:
        for line in open(sys.argv[11]):
            t, b = line.split()
            f.write(f"{mode},{t},{b},{pred if pred != '-' else ''}\n")
# What the headers leave of a path's rate, tbf counting whole frames: a full segment carries
# MSS bytes in INNER of inner IPv4 + TCP (timestamps on), 56 of WPS and 14 of Ethernet.
mss = r["start"].get("tcp_mss_default") or inner - 52
ceil = mss / (inner + (14 if mode == "flow" else 14 + 56))
print(f"{mode:7s} {gp:9.1f} {gp / (4 * rate):9.2f} {ceil:7.3f} {ofo:10d} {rtx:8d} {drops:6d} {str(hwm):>8s} {pred:>10s}")
PY
	ns_cleanup_all
}

echo "WPS headline: 1 TCP flow, 4 paths x ${RATES[*]:-$RATE} Mbit/s (tbf), delays ${WPS_DELAYS[*]} us, quantum $QUANTUM packets," \
	"inner MTU $INNER, path MTU 1500; ingress attach ${WPS_CHAIN_ATTACH[*]:-(defaults)} (wps-def: defaults; wps-g8: --max-inflight 8)${SCHED:+, sched $SCHED}${WPS_CHAIN_WEIGHTS:+ (weights ${WPS_CHAIN_WEIGHTS[*]})}" \
	"${LOSS_PATH:+, 1 frame in $LOSS lost on path $LOSS_PATH}; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "TCP: ${CC:-host default congestion control}, site B's tcp_rmem max $RMEM (4 x BDP of the slowest path, $BDP bytes);" \
	"wps-def, wps-bbr: $(sysctl -n net.ipv4.tcp_congestion_control) and tcp_rmem $(sysctl -n net.ipv4.tcp_rmem | tr -s '\t ' ' ') (the host's, autotuned); ${TIME}s, the first omitted"
echo "mode    goodput/Mb  /sum-rate  ceiling  ofo-queued  retrans  drops  egr-hwm  rate*skew+q"
if [[ -n $PLOT ]]; then
	. bench/out.sh
	echo "series,t_s,buffered,bound" >"$BENCH_OUT/$PLOT.csv"
fi
for m in $MODES; do run "$m"; done
[[ -z $PLOT ]] || bench_plot buffer "$PLOT"
