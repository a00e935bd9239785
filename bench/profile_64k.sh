#!/usr/bin/env bash
# Where each microsecond of a 64 KiB message goes: ubperf with its defaults
# (rtp-sr, 64 KiB Sends, window 256) between two namespaces over a veth pair,
# once at MTU 1500 (UB MTU 1024) and once at MTU 9000 (UB MTU 4096, multi-buffer
# AF_XDP), cases alternating round by round; `perf record -a -g -e cpu-clock`
# for SECONDS in the middle of each run. bench/profile_attrib.py sorts the
# samples of both processes (and ksoftirqd's NAPI work) into ICRC, the
# endpoint's copies, ubperf's payload, the transport core, the endpoint loop,
# the kernel's AF_XDP tx, veth, the XDP program, AF_XDP rx, waits and the
# rest, as microseconds per message, with what each side spent off CPU.
# Prints the table; writes $BENCH_OUT/profile_64k_rounds.csv (samples per round)
# and profile_64k.csv (the pooled us per message), drawn as profile_64k.svg.
# Asserts nothing.
#
#   bench/profile_64k.sh [--time SECONDS] [--rounds N] [--period US]   (default 3 s, 1 round, 100 us)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
OBJS=${BUILD:-build}/obj/user
SECS=3 ROUNDS=1 PERIOD=100 WARM=1
while [[ $# -gt 0 ]]; do
	case $1 in
	--time) SECS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--period) PERIOD=$2; shift 2 ;;
	*) echo "usage: $0 [--time SECONDS] [--rounds N] [--period US]" >&2; exit 2 ;;
	esac
done

. tests/lib/netns.sh
. bench/out.sh
if reason=$(ns_unsupported); then
	echo "bench: 64 KiB profile skipped: $reason"
	exit 0
fi
# perf is what this part measures with: no perf, no figures, and make bench says so.
if ! perf version >/dev/null 2>&1; then
	echo "profile_64k: perf not found or not working: install linux-perf (scripts/deps.sh)" >&2
	exit 1
fi
[[ -x $BIN/ubperf ]] || { echo "profile_64k: $BIN/ubperf missing; run make first" >&2; exit 1; }

tmp=$(mktemp -d)
# Every step runs, whatever failed before it (errexit would end the trap at the first).
cleanup() {
	local jobs
	jobs=$(jobs -p)
	# shellcheck disable=SC2086  # one pid a word
	[[ -z $jobs ]] || kill $jobs 2>/dev/null || true
	wait 2>/dev/null || true
	ns_cleanup_all
	rm -rf "$tmp"
}
trap cleanup EXIT

# MTU 1500 on one pair, 9000 on the other; the case's name, its pair and its /24.
A1=$(ns_add pfa) B1=$(ns_add pfb) A9=$(ns_add pja) B9=$(ns_add pjb)
topo_pair "$A1" "$B1" 10.78.0 02:00:00:00:78
topo_pair "$A9" "$B9" 10.79.0 02:00:00:00:79 9000
CASES=("MTU 1500:$A1:$B1:10.78.0" "MTU 9000:$A9:$B9:10.79.0")

# schedstat PID...: the time now (s), then each process's time on CPU and waiting
# runnable on a run queue (ns, /proc/PID/schedstat); delta A B: B - A, field by field.
schedstat() {
	local p run wait
	printf '%s' "$(date +%s.%N)"
	for p in "$@"; do read -r run wait _ 2>/dev/null <"/proc/$p/schedstat" && printf ' %s %s' "$run" "$wait" || return 1; done
}
delta() { awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x); split(b, y); for (i = 1; i <= n; i++) printf "%.9g ", y[i] - x[i] }'; }

rounds=$BENCH_OUT/profile_64k_rounds.csv
echo "case,round,side,category,samples,messages,window_s,period_us" >"$rounds"
for ((rep = 1; rep <= ROUNDS; rep++)); do
	for c in "${CASES[@]}"; do
		IFS=: read -r name a b net <<<"$c"
		nsenter --net="/run/netns/$b" "$BIN/ubperf" server --dev b0 --wait 20 --json >"$tmp/srv.json" 2>"$tmp/srv.err" &
		srv=$!
		for _ in $(seq 50); do ns_xdp_ready "$b" b0 && break; sleep 0.1; done
		# nsenter execs ubperf: $! is the process perf sees.
		nsenter --net="/run/netns/$a" "$BIN/ubperf" client --dev a0 --peer "$net.2" \
			--time $((WARM + SECS + 4)) --interval 1000 --json >"$tmp/cli.json" 2>"$tmp/cli.err" &
		cli=$!
		start=$(awk -v hz="$(getconf CLK_TCK)" '{ print $22 / hz }' "/proc/$cli/stat")
		sleep $WARM
		before=$(schedstat $cli $srv)
		# -a: also the NAPI work ksoftirqd may take over. Starting takes a while on a
		# loaded machine (it reads every process): the client runs 4 s beyond.
		perf record -q -k boottime -o "$tmp/perf.data" -a -g -e cpu-clock -c $((PERIOD * 1000)) -- \
			sleep "$SECS" >/dev/null 2>"$tmp/perf.err" ||
			{ echo "profile_64k: perf record failed: $(cat "$tmp/perf.err")" >&2; exit 1; }
		after=$(schedstat $cli $srv) || { echo "#   $name: the client ended before perf did" >&2; after=; }
		if ! wait $cli || [[ -z $after ]]; then
			echo "#   $name: ubperf client failed: $(cat "$tmp/cli.err")" >&2
			wait $srv || true
			continue
		fi
		wait $srv || true
		perf script -i "$tmp/perf.data" -F comm,pid,tid,time,ip,sym,dso --no-inline >"$tmp/perf.txt" 2>/dev/null
		/usr/bin/python3 bench/profile_attrib.py round --objs "$OBJS" --script "$tmp/perf.txt" \
			--client $cli --server $srv --case "$name" --round $rep --json "$tmp/cli.json" \
			--start "$start" --period-us "$PERIOD" --sched "$(delta "$before" "$after")" >>"$rounds" || true
	done
done
# A round that failed said why above; with none left there is nothing to show.
[[ $(wc -l <"$rounds") -gt 1 ]] || { echo "profile_64k: no round finished" >&2; exit 1; }

printf '\nWhere each microsecond of a 64 KiB message goes: ubperf defaults over one veth pair, perf cpu-clock\n'
printf 'every %s us of CPU time for %s s in each of %s round(s) of each case (load average: %s)\n' \
	"$PERIOD" "$SECS" "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/profile_attrib.py table "$rounds" "$BENCH_OUT/profile_64k.csv"
bench_plot stack profile_64k
