#!/usr/bin/env bash
# make bench: ns/packet of the UB2E conversion programs beside the floor
# programs (BPF_PROG_RUN inside the switch namespace of topo_single, so that
# bpf_fib_lookup answers from the switch's routes and neighbours), then ICRC
# throughput of the packet library. Prints numbers; asserts none of them.
#
#   scripts/bench.sh [ubxdp_bench options]     e.g. --rounds 9 --repeat 2000000
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BENCH=${BUILD:-build}/bin/ubxdp_bench
BPF_DIR=${BUILD:-build}/bpf

[[ -x $BENCH ]] || { echo "bench: $BENCH missing; run make first" >&2; exit 1; }

. tests/lib/netns.sh
# The bench reads the topology's addresses from the environment.
set -a
. tests/lib/topo.env
set +a

if reason=$(ns_unsupported); then
	echo "bench: XDP part skipped: $reason"
	exec "$BENCH" --bpf-dir "$BPF_DIR" --no-xdp "$@"
fi

trap ns_cleanup_all EXIT
topo_single
# Live frames: the switch redirects into the veth peers, which drop in XDP.
ip -n "$NS_IPHOST" link set dev iphost0 xdp obj "$BPF_DIR/sink_drop.bpf.o" sec xdp
ip -n "$NS_UBPU" link set dev ubpu0 xdp obj "$BPF_DIR/sink_drop.bpf.o" sec xdp
# nsenter --net only: the devices sw-ub / sw-ip resolve, bpffs stays the host's.
ns_run "$NS_SW" "$BENCH" --bpf-dir "$BPF_DIR" --ub-if sw-ub --ip-if sw-ip "$@"
# WPS through ingress and egress over delayed, rate-limited paths (skips without the ingress):
# every default beside the tuned ways, then unequal path rates and 0.1 % loss on one path.
"$ROOT/bench/wps_headline.sh" --plot wps_buffer
"$ROOT/bench/wps_headline.sh" --modes wps-def --rates "40 30 20 10"
"$ROOT/bench/wps_headline.sh" --modes wps-def --loss-path 3 --loss 1000
# The WPS egress's reorder threads, 1 against 2.
"$ROOT/bench/wps_threads.sh"

# UBoE endpoint: ubperf over AF_XDP beside iperf3, goodput under loss on a routed hop.
"$ROOT/scripts/bench_endpoint.sh"
# Where each microsecond of a 64 KiB message goes (perf), MTU 1500 and 9000.
"$ROOT/bench/profile_64k.sh" --rounds 2

# A channel group sprayed per packet over two rate-limited ECMP links, beside one channel on one link.
"$ROOT/scripts/bench_multipath.sh"

# ubperf on several ports: the multi-port loop's wait, beside main's build (skips without it).
"$ROOT/bench/multiport_wait.sh"
