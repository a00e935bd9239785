#!/usr/bin/env bash
# make bench, WPS part: ns/packet of the WPS ingress beside a parse-only TC
# floor (build/bin/wps_bench, BPF_PROG_RUN), then one TCP flow's goodput over
# veth through the ingress (4 paths, quantum 16, test decapsulator on the far
# side) as a ratio of the same flow without it, interleaved round by round in
# one run. Without it twice: the plain route with the kernel's offloads, and with
# the offloads the ingress turns off on DEV (TSO/GSO/GRO), so the ratio shows
# what the spraying costs apart from segmenting. Prints numbers; asserts none.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BUILD:-build}/bin
# wps_attach (tests/wps/topo.sh) attaches with the same build's ubctl, whose BPF programs are its own.
WPS_BIN=$BIN
# WPS_BENCH_GOODPUT=only: the goodput part alone.
# The ns rows: one flow (with the stages), then 100,000 flows round robin, where
# every packet's flow state is a cold line (the floor with one such line beside).
if [[ ${WPS_BENCH_GOODPUT:-} != only && ${WPS_BENCH_GOODPUT:-} != unsprayed ]]; then
	. bench/out.sh
	"$BIN/wps_bench" --stages --rounds 21 --csv "$BENCH_OUT/wps_rounds.csv" --bpf-dir "${BUILD:-build}/bpf" || exit 1
	bench_plot rounds wps_rounds
	"$BIN/wps_bench" --flows 100000 --runs 2000 --rounds 41 --bpf-dir "${BUILD:-build}/bpf" || exit 1
fi

. tests/lib/netns.sh
. tests/wps/topo.sh
if reason=$(ns_unsupported); then echo "wps bench: goodput part skipped: $reason"; exit 0; fi
command -v iperf3 >/dev/null || { echo "wps bench: goodput part skipped: iperf3 not installed"; exit 0; }
trap 'ns_run "$NS_GW" "$BIN/ubctl" wps ingress detach --dev wan0 >/dev/null 2>&1; ns_cleanup_all' EXIT
T=${WPS_BENCH_SECONDS:-4}

goodput() {	# goodput [PORT [rtx]]: Mbit/s received by one iperf3 TCP flow site -> far (port 5201); rtx: and the sender's retransmits
	local port=${1:-5201}
	ip netns exec "$NS_FAR" iperf3 -s -1 -D -p "$port" >/dev/null
	sleep 0.3
	ip netns exec "$NS_SITE" iperf3 -c 10.20.0.2 -p "$port" -t "$T" -J | /usr/bin/python3 -c 'import json,sys
e = json.load(sys.stdin)["end"]
print("%.0f" % (e["sum_received"]["bits_per_second"] / 1e6), *([e["sum_sent"].get("retransmits", 0)] if sys.argv[1:] else []))' ${2:+rtx}
}

topo_wps 4
wps_far_decap 4
# A gateway's NIC hands one flow to one CPU (RSS). A veth hands each packet to the backlog
# of the CPU that sent it, so without this the router would forward one flow on two CPUs
# at once, where the ingress (its detour serializes a flow: RPS) uses one. RPS over all
# CPUs on gw-s makes it one CPU per flow in both measurements.
ip netns exec "$NS_GW" sh -c "printf %x $(((1 << $(nproc)) - 1)) >/sys/class/net/gw-s/queues/rx-0/rps_cpus"
STATS=$(mktemp -d)/stats
# The counters of this gw's instance in `ubctl stats --json` (python: of(FILE)); other
# instances (other tests') may be pinned beside it.
counters='import json, sys
def of(f): return next(i for i in json.load(open(f))["wps_ingress"] if i["instance"] == "'"$NS_GW"':wan0")["counters"]'
# WPS_BENCH_CELLS: the decomposition's cells instead of the parts below (bench/wps_cells.sh).
[[ -n ${WPS_BENCH_CELLS:-} ]] && { . bench/wps_cells.sh; exit 0; }
# Interleaved, round by round (the machine is shared): without the ingress (the kernel's
# offloads, then TSO/GSO/GRO off on DEV as attach sets them), then through it; a ratio per round.
R=${WPS_BENCH_ROUNDS:-3}
[[ ${WPS_BENCH_GOODPUT:-} == unsprayed ]] && R0=0 || R0=$R
echo "WPS ingress, one TCP flow over veth, ${T}s per measurement, $R0 rounds (Mbit/s received)"
echo "  round  without (offloads)  without (TSO/GSO/GRO off)  through the ingress  ratio  ratio vs offloads off"
ratios=() ratios_off=()
for ((r = 1; r <= R0; r++)); do
	plain=$(goodput)
	ns_run "$NS_GW" ethtool -K wan0 tso off gso off gro off >/dev/null 2>&1
	plain_nogso=$(goodput)
	ns_run "$NS_GW" ethtool -K wan0 tso on gso on gro on >/dev/null 2>&1
	wps_attach 4 >/dev/null
	ns_run "$NS_GW" "$BIN/ubctl" wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp --quantum 16 >/dev/null
	wps=$(goodput)
	ns_run "$NS_GW" "$BIN/ubctl" stats --json >"$STATS.$r" 2>/dev/null
	ns_run "$NS_GW" "$BIN/ubctl" wps ingress detach --dev wan0 >/dev/null
	ratios+=("$(/usr/bin/python3 -c "print('%.2f' % ($wps / $plain))")")
	ratios_off+=("$(/usr/bin/python3 -c "print('%.2f' % ($wps / $plain_nogso))")")
	printf '  %5d  %18s  %25s  %19s  %5s  %5s\n' "$r" "$plain" "$plain_nogso" "$wps" "${ratios[-1]}" "${ratios_off[-1]}"
done
[[ $R0 -gt 0 ]] && /usr/bin/python3 -c "import statistics as s, sys
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
print('  ratio with/without: median %.2f (range %.2f-%.2f; vs offloads off: median %.2f)   target >= 0.85 (issue 24)'
      % (s.median(a), min(a), max(a), s.median(b)))" "${ratios[*]}" "${ratios_off[*]}"
# What reached the ingress: GSO skbs inside a group go whole, the others take the
# segmentation detour (bench/README.md, "GSO skbs inside a group go whole").
/usr/bin/python3 -c "$counters
n = w = s = g = e = 0
for f in sys.argv[1:]:
    try:
        c = of(f)
    except Exception:
        continue
    n += c['redirect_gso_detour']; w += c.get('gso_whole_in_group', 0); s += c['tx_sprayed']
    g += c['groups_opened']; e += c['groups_extended_inflight']
if n or w:
    print('  through the ingress: %d skbs took the detour, %d GSO skbs went whole, %d skbs and wire packets sprayed; %d groups, %d extended at the in-flight bound' % (n, w, s, g, e))" "$STATS".*

# What the ingress costs traffic no rule sprays (a TCP flow to port 5202; the rule sprays
# 5201 only), DEV as attach leaves it against DEV without the ingress, interleaved. The far
# end's port runs no XDP here (the decapsulator is for sprayed traffic): with XDP, veth
# clears TSO on DEV either way, and DEV's offloads would count for nothing.
for i in 0 1 2 3; do ip -n "$NS_FAR" link set dev "p$i" xdp off; done
echo "A TCP flow no rule sprays through DEV, ${T}s per measurement, $R rounds (Mbit/s received)"
echo "  round  without the ingress  with it attached  ratio"
ratios=()
for ((r = 1; r <= R; r++)); do
	plain=$(goodput 5202)
	wps_attach 4 >/dev/null
	ns_run "$NS_GW" "$BIN/ubctl" wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp --dport 5201 \
		--quantum 16 >/dev/null
	att=$(goodput 5202)
	ns_run "$NS_GW" "$BIN/ubctl" wps ingress detach --dev wan0 >/dev/null
	ratios+=("$(/usr/bin/python3 -c "print('%.2f' % ($att / $plain))")")
	printf '  %5d  %19s  %16s  %5s\n' "$r" "$plain" "$att" "${ratios[-1]}"
done
/usr/bin/python3 -c "import statistics as s, sys
a = [float(x) for x in sys.argv[1].split()]
print('  ratio attached/without: median %.2f (range %.2f-%.2f)' % (s.median(a), min(a), max(a)))" "${ratios[*]}"
