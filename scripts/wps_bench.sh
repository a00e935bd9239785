#!/usr/bin/env bash
# make bench, WPS part: ns/packet of the WPS ingress beside a parse-only TC
# floor (build/bin/wps_bench, BPF_PROG_RUN), then one TCP flow's goodput over
# veth through the ingress (4 paths, quantum 16, test decapsulator on the far
# side) as a ratio of the same flow without it, measured back to back in one
# run. Without it twice: the plain route with the kernel's offloads, and with
# the offloads the ingress turns off on DEV (TSO/GSO/GRO), so the ratio shows
# what the spraying costs apart from segmenting. Prints numbers; asserts none.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
"$BIN/wps_bench" --stages --bpf-dir "${BUILD:-build}/bpf" || exit 1

. tests/lib/netns.sh
. tests/wps/topo.sh
if reason=$(ns_unsupported); then echo "wps bench: goodput part skipped: $reason"; exit 0; fi
command -v iperf3 >/dev/null || { echo "wps bench: goodput part skipped: iperf3 not installed"; exit 0; }
trap 'ns_run "$NS_GW" "$BIN/ubctl" wps ingress detach --dev wan0 >/dev/null 2>&1; ns_cleanup_all' EXIT
T=${WPS_BENCH_SECONDS:-4}

goodput() {	# Mbit/s received by one iperf3 TCP flow site -> far
	ip netns exec "$NS_FAR" iperf3 -s -1 -D -p 5201 >/dev/null
	sleep 0.3
	ip netns exec "$NS_SITE" iperf3 -c 10.20.0.2 -p 5201 -t "$T" -J |
		/usr/bin/python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))'
}

topo_wps 4
wps_far_decap 4
plain=$(goodput)
ns_run "$NS_GW" ethtool -K wan0 tso off gso off gro off >/dev/null 2>&1
plain_nogso=$(goodput)
wps_attach 4 >/dev/null
ns_run "$NS_GW" "$BIN/ubctl" wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp --quantum 16 >/dev/null
wps=$(goodput)
echo "WPS ingress, one TCP flow over veth for ${T}s each (Mbit/s received)"
echo "  without the ingress (kernel offloads)        $plain"
echo "  without the ingress (TSO/GSO/GRO off on DEV)  $plain_nogso"
echo "  through the ingress, 4 paths, quantum 16     $wps"
/usr/bin/python3 -c "print('  ratio with/without: %.2f (vs offloads off: %.2f)   target >= 0.7' % ($wps / $plain, $wps / $plain_nogso))"
