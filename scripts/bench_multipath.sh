#!/usr/bin/env bash
# make bench, multipath part: a channel group sprayed per packet over ECMP.
# Two hosts, two routers joined by two equal links (tests/lib/netns.sh
# topo_ecmp2: ECMP with an L4 hash both ways, a tbf of 50 Mbit/s at each
# router's egress onto each link), ubperf 64 KiB Sends, no CC:
#   1 channel, --lb flow      one channel: its port hashes it onto one link
#   2 / 4 channels, --lb packet  the group sprayed over both links
#   4 channels, --lb flow     for reference: channels spread by the hash
# at two tbf queue depths: 100 ms (every window fits: reordering by up to a
# queue's delay, no loss) and 20 ms (the windows overflow it: drop-tail
# loss on top of the reordering). Per cell: goodput (median of ROUNDS
# interleaved runs) and its ratio to one channel on one link, message
# latency p50/p99/p99.9 (the median run's) and p99.9/p50, and summed over
# the rounds: RTOs fired, RTOs undone (the oldest packet's resend D-SACKed,
# or its ack came before the resend left: delay or reordering alone), RACK retransmissions
# (by time), those of losses found on their path (a later packet on the
# same port delivered) and TLPs, D-SACKs (resends the receiver got twice),
# tbf drops, and how often the path rule went off (its ports reordered).
# Prints numbers; asserts none of them.
#
#   scripts/bench_multipath.sh [SECONDS_PER_RUN [ROUNDS [DEPTHS]]]   (default 4 s, 3 rounds, "100ms 20ms")
# CELLS_ONLY="2" (indexes into CELLS below, 0 first) runs only those cells, e.g. many
# rounds of one cell to count its rare RTOs; "vs 1" is then to the first cell run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
SECS=${1:-4}
REPS=${2:-3}
DEPTHS=(${3:-100ms 20ms})
RATE=50mbit
PY=/usr/bin/python3

CELLS=("1 channel, --lb flow:--channels 1 --lb flow"
       "2 channels, --lb packet:--channels 2 --lb packet"
       "4 channels, --lb packet:--channels 4 --lb packet"
       "4 channels, --lb flow:--channels 4 --lb flow")
declare -A named=()
for i in ${CELLS_ONLY:-}; do
	[[ $i =~ ^(0|[1-9][0-9]*)$ && -n ${CELLS[$i]:-} ]] ||
		{ echo "bench: CELLS_ONLY: no cell '$i' (0-$((${#CELLS[@]} - 1)))" >&2; exit 1; }
	[[ -z ${named[$i]:-} ]] || { echo "bench: CELLS_ONLY: cell $i named twice" >&2; exit 1; }
	named[$i]=1
done

. tests/lib/netns.sh
if reason=$(ns_unsupported); then
	echo "bench: multipath part skipped: $reason"
	exit 0
fi
[[ -x $BIN/ubperf ]] || { echo "bench: $BIN/ubperf missing; run make first" >&2; exit 1; }
trap ns_cleanup_all EXIT
tmp=$(mktemp -d)

C=$(ns_add mpc) R1=$(ns_add mpr1) R2=$(ns_add mpr2) S=$(ns_add mps)
topo_ecmp2 "$C" "$R1" "$R2" "$S" $RATE

LINKS=("$R1 p1" "$R1 p2" "$R2 q1" "$R2 q2")
tbf_set() {
	local l
	for l in "${LINKS[@]}"; do
		# shellcheck disable=SC2086
		set -- $l
		tc -n "$1" qdisc replace dev "$2" root tbf rate $RATE burst 16kb latency "$DEPTH"
	done
}
tbf_drops() {
	local l n=0
	for l in "${LINKS[@]}"; do
		# shellcheck disable=SC2086
		set -- $l
		n=$((n + $(tc -n "$1" -s qdisc show dev "$2" | awk '/dropped/ { sub(",", "", $7); print $7; exit }')))
	done
	echo $n
}

# run OUT ARGS: one client run (JSON in OUT, "null" when it failed), tbf drops in OUT.drops.
run() {
	local out=$1 d0; shift
	d0=$(tbf_drops)
	nsenter --net="/run/netns/$S" "$BIN/ubperf" server --dev s0 --wait 20 --json >"$out.srv" 2>/dev/null &
	local srv=$!
	for _ in $(seq 50); do ns_xdp_ready "$S" s0 && break; sleep 0.1; done
	if ! ns_run "$C" "$BIN/ubperf" client --dev c0 --peer 10.62.0.1 --time "$SECS" --json "$@" \
		>"$out" 2>"$out.err"; then
		echo "null" >"$out"
		echo "#   ubperf $*: $(cat "$out.err")" >&2
	fi
	wait $srv || true
	echo $(($(tbf_drops) - d0)) >"$out.drops"
}


# One line per cell from the rounds' JSON files: the median run by goodput.
summary() {
	$PY - "$@" <<'PYEOF'
import json, sys
base = None
print("%-26s %8s %6s %9s %9s %9s %7s %5s %6s %6s %6s %6s %7s %7s %8s" % ("", "Mbit/s", "vs 1", "p50 ms",
      "p99 ms", "p99.9 ms", "99.9/50", "RTO", "undone", "rack", "path", "tlp", "D-SACK", "drops",
      "path off"))
for cell in sys.argv[1:]:
    name, files = cell.split("=", 1)
    runs, fails, sums = [], 0, dict(rto=0, undone=0, rack=0, path=0, tlp=0, dsack=0, drops=0, off=0)
    for f in files.split():
        j = json.load(open(f))
        sums["drops"] += int(open(f + ".drops").read())
        if j is None:
            fails += 1
            continue
        runs.append(j)
        r = j["retransmissions"]
        # (.get: an older ubperf, e.g. main's for a before/after, has no RACK counters)
        sums["rto"] += j["rto_fired"]; sums["undone"] += j.get("rto_undone", 0)
        sums["rack"] += r.get("rack", 0); sums["path"] += r.get("path", 0)
        sums["tlp"] += r.get("tlp", 0)
        sums["dsack"] += r.get("spurious", 0)
        sums["off"] += j.get("path_rule_off", 0)
    runs.sort(key=lambda j: j["goodput_bps"])
    if not runs:
        print("%-26s all %d runs failed" % (name, fails))
        continue
    m = runs[(len(runs) - 1) // 2] if len(runs) % 2 == 0 else runs[len(runs) // 2]
    g = m["goodput_bps"] / 1e6
    if base is None:
        base = g
    l = m["latency_us"]
    print("%-26s %8.1f %5.2fx %9.1f %9.1f %9.1f %7.1f %5d %6d %6d %6d %6d %7d %7d %8d%s" % (name, g,
          g / base, l["p50"] / 1e3, l["p99"] / 1e3, l["p999"] / 1e3,
          l["p999"] / l["p50"] if l["p50"] else 0,
          sums["rto"], sums["undone"], sums["rack"], sums["path"], sums["tlp"], sums["dsack"], sums["drops"], sums["off"],
          "  (%d runs failed)" % fails if fails else ""))
PYEOF
}

for DEPTH in "${DEPTHS[@]}"; do
	tbf_set
	declare -A files=()
	for ((rep = 0; rep < REPS; rep++)); do
		for i in ${CELLS_ONLY:-${!CELLS[@]}}; do
			# shellcheck disable=SC2086
			run "$tmp/$DEPTH.$i.$rep.json" ${CELLS[$i]#*:}
			files[$i]+="$tmp/$DEPTH.$i.$rep.json "
		done
	done
	printf '\nMultipath: ubperf 64 KiB Sends, rtp-sr, no CC, over two ECMP links of %s (tbf, %s queue)\n' $RATE "$DEPTH"
	printf '(median of %u interleaved rounds of %s s per cell; latency of the median run; counts summed)\n' "$REPS" "$SECS"
	args=()
	for i in ${CELLS_ONLY:-${!CELLS[@]}}; do args+=("${CELLS[$i]%%:*}=${files[$i]}"); done
	summary "${args[@]}"
	unset files
done
rm -rf "$tmp"
