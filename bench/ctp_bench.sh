#!/usr/bin/env bash
# make bench, CTP part: ubperf --native between two namespaces over direct veth
# links (emulated UB links), 1 KiB messages (one packet each, CTP's limit at
# MTU 1024), depth 8, medians of interleaved rounds, side by side:
#   1. one link: rtp-sr vs ctp (no transport acks, the TAACK a packet);
#   2. an entity of two links (--dev A,B) vs one link, ctp, --lb packet and
#      --lb flow with 2 channels.
# Prints numbers; asserts none (timings on a shared machine are noisy).
#
#   bench/ctp_bench.sh [SECONDS_PER_RUN [ROUNDS]]     (default 2 s, 3 rounds)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
SECS=${1:-2}
REPS=${2:-3}
PY=/usr/bin/python3

. tests/lib/netns.sh
if reason=$(ns_unsupported); then
	echo "bench: CTP part skipped: $reason"
	exit 0
fi
[[ -x $BIN/ubperf ]] || { echo "bench: $BIN/ubperf missing; run make first" >&2; exit 1; }
trap ns_cleanup_all EXIT

A=$(ns_add ctpba) B=$(ns_add ctpbb)
for k in 1 2; do
	ns_link "$A" a$k 02:00:00:00:75:${k}1 "$B" b$k 02:00:00:00:75:${k}2
done
ns_addr "$A" a1 10.75.0.1/24
ns_addr "$B" b1 10.75.0.2/24
tmp=$(mktemp -d)

# run NAME SERVER_ARGS -- CLIENT_ARGS: one run, goodput and p50 appended to res[NAME].
declare -A res lat
run() {
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
		res[$name]+="$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["goodput_bps"])' "$tmp/o.json") "
		lat[$name]+="$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_us"]["p50"])' "$tmp/o.json") "
	else
		echo "#   $name: $(cat "$tmp/o.err")" >&2
		res[$name]+="0 "
		lat[$name]+="0 "
	fi
	wait $srv || true
}

NAMES=("rtp-sr, 1 link" "ctp, 1 link" "ctp, entity of 2, --lb packet" "ctp, entity of 2, --lb flow, 2 ch")
for ((rep = 0; rep < REPS; rep++)); do
	run "${NAMES[0]}" --dev b1 -- --dev a1 --mode rtp-sr
	run "${NAMES[1]}" --dev b1 -- --dev a1 --mode ctp
	run "${NAMES[2]}" --dev b1,b2 --mode ctp -- --dev a1,a2 --mode ctp --lb packet
	run "${NAMES[3]}" --dev b1,b2 --mode ctp -- --dev a1,a2 --mode ctp --lb flow --channels 2
done
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
calc() { awk "BEGIN { print ($1) }"; }
base=$(median "${res[${NAMES[1]}]}")
printf '\nCTP on native veth links (1 KiB messages, depth 8, median of %u interleaved rounds of %s s)\n' "$REPS" "$SECS"
printf '%-36s %10s %10s %10s\n' "" "Mbit/s" "vs ctp" "p50 us"
for n in "${NAMES[@]}"; do
	b=$(median "${res[$n]}")
	printf '%-36s %10.1f %9.2fx %10s\n' "$n" "$(calc "$b / 1e6")" "$(calc "$base > 0 ? $b / $base : 0")" \
		"$(median "${lat[$n]}")"
done
