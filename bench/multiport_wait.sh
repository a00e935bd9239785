#!/usr/bin/env bash
# ubperf on several ports: how the multi-port loop waits when no port has work.
# One server on two ports (--dev s0,s1) and its client (one port: the BEFORE
# build has no client on several ports) through a router, 4 channels, two
# ubperf builds side by side in one run,
# alternating: BEFORE (default /work/main/build/bin/ubperf: a 50 us nap when no
# port moved anything) and AFTER (build/bin/ubperf: ppoll on every port's
# socket until a frame or the earliest core deadline). Two loads: bulk (16 KiB
# Sends, depth 8) and ping-pong (64-byte Sends, depth 1, where the loop is idle
# most of the time). Prints goodput and the CPU each side used (user+sys over
# wall time, ubperf's own process), medians of --runs runs. AFTER with the
# client on two ports too (--dev c0,c1) is the last row of each load.
#
#   bench/multiport_wait.sh [--before BIN] [--after BIN] [--time S] [--runs N]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
. tests/lib/netns.sh
BEFORE=/work/main/build/bin/ubperf AFTER=$ROOT/build/bin/ubperf TIME=3 RUNS=3
while [[ $# -gt 0 ]]; do
	case $1 in
	--before) BEFORE=$2; shift 2 ;;
	--after) AFTER=$2; shift 2 ;;
	--time) TIME=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	*) echo "usage: $0 [--before BIN] [--after BIN] [--time S] [--runs N]" >&2; exit 2 ;;
	esac
done
why=$(ns_unsupported) && { echo "multiport_wait: skipped: $why"; exit 0; }
for b in "$BEFORE" "$AFTER"; do [[ -x $b ]] || { echo "multiport_wait: skipped: $b missing"; exit 0; }; done
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; ns_cleanup_all' EXIT

NS_C=$(ns_add mwc) NS_R=$(ns_add mwr) NS_S=$(ns_add mws)
ns_link "$NS_C" c0 02:00:00:00:a1:01 "$NS_R" q0 02:00:00:00:a1:02
ns_link "$NS_C" c1 02:00:00:00:a2:01 "$NS_R" q1 02:00:00:00:a2:02
ns_link "$NS_R" p0 02:00:00:00:a3:01 "$NS_S" s0 02:00:00:00:a3:02
ns_link "$NS_R" p1 02:00:00:00:a4:01 "$NS_S" s1 02:00:00:00:a4:02
ns_addr "$NS_C" c0 10.161.0.1/24; ns_addr "$NS_R" q0 10.161.0.2/24
ns_addr "$NS_C" c1 10.162.0.1/24; ns_addr "$NS_R" q1 10.162.0.2/24
ns_addr "$NS_R" p0 10.163.0.1/24; ns_addr "$NS_S" s0 10.163.0.2/24
ns_addr "$NS_R" p1 10.164.0.1/24; ns_addr "$NS_S" s1 10.164.0.2/24
ns_forwarding "$NS_R"
ip -n "$NS_C" route add 10.163.0.0/16 via 10.161.0.2 dev c0
ip -n "$NS_C" route add 10.163.0.0/16 via 10.162.0.2 dev c1 metric 200
ip -n "$NS_C" route add 10.164.0.0/24 via 10.161.0.2 dev c0
ip -n "$NS_C" route add 10.164.0.0/24 via 10.162.0.2 dev c1 metric 200
ip -n "$NS_S" route add 10.160.0.0/12 via 10.163.0.1 dev s0
ip -n "$NS_S" route add 10.160.0.0/12 via 10.164.0.1 dev s1 metric 200

# one BIN ARGS...: prints "goodput_bps server_cpu client_cpu".
one() {
	local bin=$1 d; d=$(mktemp -d); shift
	nsenter --net="/run/netns/$NS_S" /usr/bin/time -f "%U %S %e" -o "$d/st" \
		"$bin" server --dev s0,s1 --wait 20 --json >"$d/srv" 2>"$d/srv.err" &
	local spid=$!
	for _ in $(seq 50); do ns_xdp_ready "$NS_S" s0 && ns_xdp_ready "$NS_S" s1 && break; sleep 0.1; done
	ns_run "$NS_C" /usr/bin/time -f "%U %S %e" -o "$d/ct" "$bin" client --dev "$CDEV" --peer 10.163.0.2 \
		--channels 4 --time "$TIME" --json "$@" >"$d/cli" 2>"$d/cli.err"
	wait "$spid"
	python3 - "$d" <<-'PY'
	import json, sys
	d = sys.argv[1]
	def cpu(f):
	    u, s, e = (float(x) for x in open(f).read().split()[-3:])
	    return (u + s) / e
	try:
	    g = json.load(open(d + "/cli"))["goodput_bps"]
	    print(g, cpu(d + "/st"), cpu(d + "/ct"))
	except Exception as e:
	    print("nan nan nan")
	    print("multiport_wait:", open(d + "/cli.err").read().strip(), file=sys.stderr)
	PY
	rm -rf "$d"
}

# The median of the runs that completed (a failed run is "nan").
median() { grep -v nan | sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "nan" }'; }

CDEV=c0
printf "%-10s %-7s %14s %11s %11s %7s\n" load build "goodput Mb/s" "server CPU" "client CPU" failed
for load in bulk pingpong; do
	args=(--size 16k --depth 8); [[ $load == pingpong ]] && args=(--size 64 --depth 1)
	declare -A G=() S=() C=()
	for ((i = 0; i < RUNS; i++)); do
		for v in before after; do
			bin=$BEFORE; [[ $v == after ]] && bin=$AFTER
			read -r g s c < <(one "$bin" "${args[@]}")
			G[$v]+="$g "; S[$v]+="$s "; C[$v]+="$c "
		done
	done
	CDEV=c0,c1
	for ((i = 0; i < RUNS; i++)); do
		read -r g s c < <(one "$AFTER" "${args[@]}")
		G[after2]+="$g "; S[after2]+="$s "; C[after2]+="$c "
	done
	CDEV=c0
	for v in before after after2; do
		printf "%-10s %-7s %14.1f %10.0f%% %10.0f%% %7s\n" "$load" "${v/after2/after, client c0,c1}" \
			"$(tr ' ' '\n' <<<"${G[$v]}" | grep . | median | awk '{ print $1 / 1e6 }')" \
			"$(tr ' ' '\n' <<<"${S[$v]}" | grep . | median | awk '{ print $1 * 100 }')" \
			"$(tr ' ' '\n' <<<"${C[$v]}" | grep . | median | awk '{ print $1 * 100 }')" \
			"$(tr ' ' '\n' <<<"${G[$v]}" | grep -c nan)/$RUNS"
	done
	unset G S C
done
