#!/usr/bin/env bash
# liburma over worker threads: two contexts a side (a thread each keeping 16 Writes of
# 64 KiB outstanding on its RM jetty pair, polling its JFC), their combined goodput with
# UBXDP_URMA_WORKERS=1 (both contexts on one worker: one endpoint, one lock) and =2 (a
# worker each), both sides alike, alternating round by round on one veth pair of two
# queues (tests/urma/workers_test.c, URMA_TEST_BENCH). Prints every round, the load
# average, then the medians and 2 workers / 1. URMA_BASE=DIR/bin adds, in the same
# rounds, that build's liburma under this test program (a liburma without workers:
# one endpoint, as 1 worker). --one-context: ONE context a side with two RM jetties (JFRs
# and JFCs of their own, so one on each worker with 2; tests/urma/spread_test.c), a thread
# per jetty; the base build runs with 2 workers there (its default on this veth), which
# puts both jetties on the context's one worker.
#
#   bench/urma_workers.sh [--one-context] [--rounds N (per setting, 6)] [--seconds S (3)]
#                         [--size B] [--depth N]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
. tests/lib/netns.sh
BIN=${BIN:-$ROOT/build/bin}
ROUNDS=6 SECS=3 SIZE=65536 DEPTH=16 PROG=urma_workers_test WHAT="2 contexts a side" BASE_W=1
while [[ $# -gt 0 ]]; do
	case $1 in
	--one-context) PROG=urma_spread_test WHAT="1 context a side, 2 jetties" BASE_W=2; shift ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--depth) DEPTH=$2; shift 2 ;;
	*) echo "usage: $0 [--one-context] [--rounds N] [--seconds S] [--size B] [--depth N]" >&2; exit 2 ;;
	esac
done
why=$(ns_unsupported) && { echo "urma_workers: skipped: $why"; exit 0; }
trap ns_cleanup_all EXIT

NS_A=$(ns_add ua) NS_B=$(ns_add ub)
ns_link "$NS_A" ua 02:00:00:00:71:01 "$NS_B" ub 02:00:00:00:71:02 2
ns_addr "$NS_A" ua 10.71.0.1/24
ns_addr "$NS_B" ub 10.71.0.2/24

declare -A res
settings=(1 2)
if [[ -n ${URMA_BASE:-} ]]; then
	# The base build's library under this build's program (the program is the same).
	base=$(mktemp -d)
	trap 'ns_cleanup_all; rm -rf "$base"' EXIT
	mkdir -p "$base/bin" "$base/lib"
	cp "$BIN/$PROG" "$base/bin/" && cp -P "$URMA_BASE"/../lib/liburma.so* "$base/lib/" || exit 1
	settings+=(base)
fi
echo "Write $SIZE B x $DEPTH per thread, $WHAT, $SECS s rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
	for w in "${settings[@]}"; do
		bin=$BIN
		[[ $w == base ]] && bin=$base/bin
		out=$(URMA_TEST_DEV=ua URMA_TEST_PEER_NS=/run/netns/$NS_B URMA_TEST_PEER_DEV=ub \
			URMA_TEST_BENCH=$SECS URMA_TEST_SIZE=$SIZE URMA_TEST_DEPTH=$DEPTH UBXDP_URMA_WORKERS=${w/base/$BASE_W} \
			ip netns exec "$NS_A" timeout $((SECS + 60)) "$bin/$PROG" 2>&1)
		mbps=$(sed -n 's/.*together \([0-9]*\) Mbit\/s.*/\1/p' <<<"$out")
		if [[ -z $mbps ]]; then
			# Said, and left out of the medians (nan): a round that failed measures nothing.
			echo "round $r, $w: failed: $(tr '\n' ' ' <<<"$out")"
			res[$w]+="nan "
			continue
		fi
		res[$w]+="$mbps "
		echo "round $r, $w$([[ $w == base ]] || echo " worker(s)"): ${out#bench: } (load $(cut -d' ' -f1 /proc/loadavg))"
	done
done
/usr/bin/python3 - "${res[1]}" "${res[2]}" "${res[base]:-}" <<'EOF'
import math, statistics, sys
def med(v):
    return statistics.median([x for x in v if not math.isnan(x)] or [math.nan])
one, two = ([float(x) for x in a.split()] for a in sys.argv[1:3])
m1, m2 = med(one), med(two)
print(f"median together: 1 worker {m1:.0f} Mbit/s, 2 workers {m2:.0f} Mbit/s, 2/1 = {m2 / m1:.2f}x")
print("per round 2/1:", " ".join(f"{b / a:.2f}" for a, b in zip(one, two)))
if sys.argv[3].strip():
    base = [float(x) for x in sys.argv[3].split()]
    mb = med(base)
    print(f"base build {mb:.0f} Mbit/s: 1 worker / base = {m1 / mb:.2f}x, 2 workers / base = {m2 / mb:.2f}x")
    print("per round 1/base:", " ".join(f"{a / b:.2f}" for a, b in zip(one, base)))
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
