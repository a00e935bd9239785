#!/usr/bin/env bash
# WPS egress on every core: the reorder threads' throughput with 1 and with 2 threads
# (`ubctl wps egress run --threads N`), in alternating instances on one topology.
#
# Each round, with the egress stopped (SIGSTOP), a burst of WPS frames (R = 1, 64-byte inner
# UDP, FLOWS flows in groups of 4 over PATHS domain paths, 1,792 per path: what a path's fill
# ring holds) is delivered into the reorder sockets' rings by the XDP program;
# then SIGCONT, and a counting XDP sink at the site's far end (bench/sink_count.bpf.c, on
# each of its queues) times the burst from its first frame out to its last: the threads'
# rate with their work waiting, free of the sender's cost and of the wake-up. The site link
# has two queues (WPS_EG_SITE_QUEUES), as a NIC: each thread sends on its own. Threads are
# pinned, one per CPU, at real-time priority (the defaults). Prints per round the frames
# and Mpps, then the medians and 2-thread / 1-thread.
#
#   bench/wps_threads.sh [--rounds N (per instance, 8)] [--instances N (of each, 2)] [--flows N (256)]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
. tests/lib/netns.sh
. tests/lib/wps_egress.sh
UBCTL=$ROOT/build/bin/ubctl
ROUNDS=8 INSTANCES=2 FLOWS=256 PER_PATH=1792 PATHS=8
while [[ $# -gt 0 ]]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--instances) INSTANCES=$2; shift 2 ;;
	--flows) FLOWS=$2; shift 2 ;;
	--paths) PATHS=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--instances N] [--flows N] [--paths N]" >&2; exit 2 ;;
	esac
done
why=$(ns_unsupported) && { echo "wps_threads: skipped: $why"; exit 0; }
trap 'kill -CONT ${EG_PID:-} 2>/dev/null; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; ns_cleanup_all' EXIT

WPS_EG_SITE_QUEUES=2 topo_wps_egress "$PATHS"
DEVS= INDEVS=
for ((k = 0; k < PATHS; k++)); do DEVS+=${DEVS:+,}eg-d$k INDEVS+=${INDEVS:+,}in-d$k; done
ip -n "$NS_WDST" link set dev wdst0 xdp obj build/bpf/sink_count.bpf.o sec xdp
prog=$(ip -j -n "$NS_WDST" link show wdst0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["xdp"]["prog"]["id"])')
map=$(bpftool prog show id "$prog" -j | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["map_ids"][0])')
d=$(mktemp -d)
mkfifo "$d/go"
ns_run "$NS_WIN" /usr/bin/python3 bench/wps_threads_inject.py "$INDEVS" "$FLOWS" "$PER_PATH" \
	<"$d/go" >>"$d/inject" 2>&1 &
INJ=$!
exec 9>"$d/go"

sink_reset() { bpftool map update id "$map" key 0 0 0 0 value $(printf '0 %.0s' $(seq 24)) >/dev/null; }
# sink_read: frames first_ns last_ns over all CPUs
sink_read() {
	bpftool map dump id "$map" -j | /usr/bin/python3 -c 'import json, sys
v = [c["value"] for c in json.load(sys.stdin)[0]["formatted"]["values"]]
n = sum(x["frames"] for x in v)
firsts = [x["first_ns"] for x in v if x["frames"]]
print(n, min(firsts) if firsts else 0, max(x["last_ns"] for x in v))'
}

# burst: one round against the running egress; prints "frames mpps"
burst() {
	local sent n first last
	kill -STOP "$EG_PID"
	sink_reset
	echo go >&9
	for _ in $(seq 200); do grep -q "^sent" "$d/inject" && break; sleep 0.02; done
	sent=$(awk '/^sent/ {print $2}' "$d/inject"); : >"$d/inject"
	sleep 0.05
	kill -CONT "$EG_PID"
	for _ in $(seq 100); do
		read -r n first last < <(sink_read)
		[[ $n -ge $sent ]] && break
		sleep 0.02
	done
	sleep 0.05
	read -r n first last < <(sink_read)
	awk -v n="$n" -v s="$sent" -v f="$first" -v l="$last" 'BEGIN { printf "%d/%d %.3f\n", n, s, (l > f ? (n - 1) * 1e3 / (l - f) : 0) }'
}

declare -A rates
echo "WPS egress threads: $FLOWS flows, bursts of $((PER_PATH * PATHS)) frames over $PATHS paths, $ROUNDS rounds per instance;" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
for inst in $(seq "$INSTANCES"); do
	for th in 1 2; do
		wps_egress_start "$d/eg$th" "$DEVS" --quiet --threads "$th" --release-timeout 2000 || exit 1
		burst >/dev/null	# warm-up: new flows' start hold, caches
		for r in $(seq "$ROUNDS"); do
			read -r got mpps < <(burst)
			echo "threads $th instance $inst round $r: frames $got, $mpps Mpps"
			rates[$th]+="$mpps "
		done
		kill -TERM "$EG_PID"; wait "$EG_PID"
	done
done
/usr/bin/python3 - "${rates[1]}" "${rates[2]}" <<'PY'
import statistics, sys
one, two = [float(x) for x in sys.argv[1].split()], [float(x) for x in sys.argv[2].split()]
m1, m2 = statistics.median(one), statistics.median(two)
print(f"median: 1 thread {m1:.3f} Mpps, 2 threads {m2:.3f} Mpps, 2 / 1 = {m2 / m1:.2f}"
      f" (rounds 1: {min(one):.3f}-{max(one):.3f}, 2: {min(two):.3f}-{max(two):.3f})")
PY
