#!/usr/bin/env bash
# WPS headline benchmark: one TCP flow (iperf3) from site A through the WPS ingress
# (ubctl wps ingress, TC) over 4 rate-limited paths (tbf) with 0, 1, 5 and 10 ms of delay
# (wps_delayline: the host has no netem) to the WPS egress (ubctl wps egress run) and
# site B. Three ways over the same paths, measured in one run:
#   wps       groups of --quantum packets, R = 1: the egress restores the order
#   flow      no WPS rule: the flow's one path (what per-flow hashing gives)
#   spray     quantum 1, R = 0: per-packet spraying, nothing restores the order
# Prints goodput / sum of the path rates, out-of-order segments the receiver queued
# (TcpExtTCPOFOQueue), retransmissions, and the egress buffer high-water mark beside
# rate x skew + one group. Needs root, the WPS ingress (ubctl wps ingress) and iperf3.
#
#   bench/wps_headline.sh [--rate MBIT] [--quantum N] [--time S]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
. tests/lib/netns.sh
UBCTL=$ROOT/build/bin/ubctl
DL=$ROOT/build/bin/wps_delayline
RATE=25 QUANTUM=16 TIME=6
DELAYS=(0 1000 5000 10000)
while [[ $# -gt 0 ]]; do
	case $1 in
	--rate) RATE=$2; shift 2 ;;
	--quantum) QUANTUM=$2; shift 2 ;;
	--time) TIME=$2; shift 2 ;;
	*) echo "usage: $0 [--rate MBIT] [--quantum N] [--time S]" >&2; exit 2 ;;
	esac
done
why=$(ns_unsupported) && { echo "wps_headline: skipped: $why"; exit 0; }
"$UBCTL" wps ingress help >/dev/null 2>&1 || { echo "wps_headline: skipped: this ubctl has no 'wps ingress' (the WPS ingress branch)"; exit 0; }
command -v iperf3 >/dev/null || { echo "wps_headline: skipped: iperf3 not installed"; exit 0; }
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; ns_cleanup_all' EXIT

EG_MAC() { printf '02:00:00:00:2%d:01' "$1"; }
topo() {
	NS_HS=$(ns_add hs) NS_GW=$(ns_add gw) NS_DL=$(ns_add dl) NS_EG=$(ns_add eg) NS_HD=$(ns_add hd)
	ns_link "$NS_HS" s0 02:00:00:0a:00:02 "$NS_GW" gw-s 02:00:00:0a:00:01
	ns_link "$NS_GW" gw-r 02:00:00:0d:00:01 "$NS_EG" eg-r 02:00:00:0d:00:02
	ns_link "$NS_EG" eg-site 02:00:00:00:30:01 "$NS_HD" hd0 02:00:00:00:30:02
	for k in 0 1 2 3; do
		ns_link "$NS_GW" "wan$k" "02:00:00:0b:00:0$k" "$NS_DL" "dl-a$k" "02:00:00:00:5$k:01"
		ns_link "$NS_DL" "dl-b$k" "02:00:00:00:5$k:02" "$NS_EG" "eg-d$k" "$(EG_MAC $k)"
		ns_run "$NS_GW" ethtool -K "wan$k" gro off tso off gso off tx off >/dev/null 2>&1
		# The delay line must see the frames as sent, not GRO's merged ones.
		ns_run "$NS_DL" ethtool -K "dl-a$k" gro off >/dev/null 2>&1
		tc -n "$NS_GW" qdisc add dev "wan$k" root tbf rate "${RATE}mbit" burst 32kb latency 100ms
	done
	# Checksums in software: a veth hands CHECKSUM_PARTIAL packets on unfinished, and
	# the delay line (AF_PACKET) and the egress (AF_XDP) see the bytes, not the skb.
	ns_run "$NS_HD" ethtool -K hd0 gro off tx off >/dev/null 2>&1
	ns_run "$NS_HS" ethtool -K s0 tso off gso off tx off >/dev/null 2>&1
	ns_run "$NS_GW" ethtool -K gw-s gro off >/dev/null 2>&1	# no merged segments to re-split partially
	ip -n "$NS_HS" link set s0 mtu 1400	# the 56 bytes of WPS fit in the paths' 1500
	ip -n "$NS_HD" link set hd0 mtu 1400
	ns_addr "$NS_HS" s0 10.10.0.2/24
	ns_addr "$NS_GW" gw-s 10.10.0.1/24
	ns_addr "$NS_GW" wan0 10.99.0.1/24 fd99::1/64
	ns_addr "$NS_EG" eg-d0 10.99.0.2/24 fd99::2/64
	ns_addr "$NS_GW" gw-r 10.98.0.1/24
	ns_addr "$NS_EG" eg-r 10.98.0.2/24
	ns_addr "$NS_EG" eg-site 10.30.0.1/24
	ns_addr "$NS_HD" hd0 10.30.0.2/24
	ns_addr "$NS_GW" lo fd00:a::1/128
	ns_addr "$NS_EG" lo fd00:20::1/128
	ip -n "$NS_HS" route add default via 10.10.0.1
	ip -n "$NS_HD" route add default via 10.30.0.1
	ip -n "$NS_GW" route add 10.30.0.0/24 via 10.99.0.2 dev wan0
	ip -n "$NS_GW" -6 route add fd00:20::1/128 via fd99::2 dev wan0
	ip -n "$NS_EG" route add 10.10.0.0/24 via 10.98.0.1 dev eg-r
	ns_forwarding "$NS_GW"
	ns_forwarding "$NS_EG"
	for ns in "$NS_GW" "$NS_EG"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	done
	ns_neigh "$NS_GW" wan0 10.99.0.2 "$(EG_MAC 0)"
	ns_neigh "$NS_GW" wan0 fd99::2 "$(EG_MAC 0)"
	ns_neigh "$NS_GW" gw-r 10.98.0.2 02:00:00:0d:00:02
	ns_neigh "$NS_EG" eg-r 10.98.0.1 02:00:00:0d:00:01
	ns_neigh "$NS_EG" eg-site 10.30.0.2 02:00:00:00:30:02
	ns_neigh "$NS_GW" gw-s 10.10.0.2 02:00:00:0a:00:02
	ns_neigh "$NS_HD" hd0 10.30.0.1 02:00:00:00:30:01
	ns_neigh "$NS_HS" s0 10.10.0.1 02:00:00:0a:00:01
}

# run MODE: one iperf3 flow; prints a table row.
run() {
	local mode=$1 d; d=$(mktemp -d)
	topo
	nsenter --net="/run/netns/$NS_DL" "$DL" dl-a0 dl-b0 "${DELAYS[0]}" dl-a1 dl-b1 "${DELAYS[1]}" \
		dl-a2 dl-b2 "${DELAYS[2]}" dl-a3 dl-b3 "${DELAYS[3]}" >"$d/dl" 2>&1 &
	local dlp=$!
	nsenter --net="/run/netns/$NS_EG" "$UBCTL" wps egress run --dev eg-d0,eg-d1,eg-d2,eg-d3 --out-dev eg-site \
		--node-id 2 --name "${NS_PREFIX}-head" --quiet >"$d/eg" 2>&1 &
	local egp=$!
	for _ in $(seq 100); do [[ -f /run/ubxdp/wps_egress/${NS_PREFIX}-head.json ]] && break; sleep 0.05; done
	if [[ $mode != flow ]]; then
		ns_run "$NS_GW" "$UBCTL" wps ingress attach --dev wan0 --node-id 1 --src fd00:a::1 \
			--egress-node-id 2 --egress-addr fd00:20::1 >/dev/null || return 1
		for k in 0 1 2 3; do
			ns_run "$NS_GW" "$UBCTL" wps ingress path add --dev wan0 --via "wan$k" --nexthop-mac "$(EG_MAC $k)" >/dev/null || return 1
		done
		if [[ $mode == wps ]]; then
			ns_run "$NS_GW" "$UBCTL" wps ingress rule add --dev wan0 --dst 10.30.0.0/24 --proto tcp --quantum "$QUANTUM" >/dev/null || return 1
		else
			ns_run "$NS_GW" "$UBCTL" wps ingress rule add --dev wan0 --dst 10.30.0.0/24 --proto tcp --quantum 1 --no-reorder >/dev/null || return 1
		fi
	fi
	# R = 0 leaves the egress by XDP_REDIRECT into eg-site: a veth delivers that only to a
	# peer with NAPI (GRO). R = 1 leaves over AF_XDP, which needs no NAPI at hd0.
	[[ $mode == spray ]] && ns_run "$NS_HD" ethtool -K hd0 gro on >/dev/null 2>&1
	ip netns exec "$NS_HD" iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
	sleep 0.3
	local ofo0 ofo1
	ofo0=$(ip netns exec "$NS_HD" nstat -az TcpExtTCPOFOQueue | awk '/TcpExtTCPOFOQueue/ {print $2}')
	ip netns exec "$NS_HS" iperf3 -c 10.30.0.2 -p 5201 -t "$TIME" -J >"$d/iperf" 2>&1
	ofo1=$(ip netns exec "$NS_HD" nstat -az TcpExtTCPOFOQueue | awk '/TcpExtTCPOFOQueue/ {print $2}')
	sleep 1.2
	"$UBCTL" wps egress stats --json --name "${NS_PREFIX}-head" >"$d/stats" 2>/dev/null
	[[ $mode != flow ]] && ns_run "$NS_GW" "$UBCTL" wps ingress detach --dev wan0 >/dev/null 2>&1
	kill -TERM $egp $dlp 2>/dev/null; wait $egp $dlp 2>/dev/null
	/usr/bin/python3 - "$mode" "$d/iperf" "$d/stats" "$((ofo1 - ofo0))" "$RATE" "$QUANTUM" <<'PY'
import json, sys
mode, ip, st, ofo, rate, q = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
r = json.load(open(ip))
if "error" in r:
    print(f"{mode:6s} iperf3 error: {r['error']}"); sys.exit(0)
gp = r["end"]["sum_received"]["bits_per_second"] / 1e6
rtx = r["end"]["sum_sent"].get("retransmits", 0)
hwm = "-"
pred = "-"
try:
    s = json.load(open(st))["wps_egress"][0]["reorder"]
    if mode == "wps":
        hwm = s["hwm"]
        # rate x skew + one group, in 1400-byte packets (the flow's rate as measured)
        pred = f"{gp * 1e6 / 8 * 0.010 / 1400 + q:.0f}"
except Exception:
    pass
print(f"{mode:6s} {gp:9.1f} {gp / (4 * rate):9.2f} {ofo:10d} {rtx:8d} {str(hwm):>8s} {pred:>10s}")
PY
	ns_cleanup_all
}

echo "WPS headline: 1 TCP flow, 4 paths x ${RATE} Mbit/s (tbf), delays ${DELAYS[*]} us, quantum $QUANTUM packets"
echo "mode   goodput/Mb  /sum-rate  ofo-queued  retrans  egr-hwm  rate*skew+q"
for m in wps flow spray; do run "$m"; done
