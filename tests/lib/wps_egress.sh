# WPS egress topology (bpf suite and wps_egress e2e). Source after netns.sh.
#
#   NS_WIN (ingress side, or scapy) in-dK ==== eg-dK  NS_EG  eg-site ---- wdst0 NS_WDST
#                                   (K = 0..N-1 paths)        eg-other --- other0 NS_WOTHER
set -a
. "$UBXDP_ROOT/tests/lib/wps_egress.env"
set +a

# topo_wps_egress [N [delayed]]: N domain paths (default 1). Sets NS_WIN, NS_EG, NS_WDST,
# NS_WOTHER. `delayed`: each path runs through NS_WDL (in-dK | dl-aK [delay line] dl-bK | eg-dK),
# where build/bin/wps_delayline holds the frames (the host has no netem).
topo_wps_egress() {
	local n=${1:-1} k
	NS_WIN=$(ns_add win) NS_EG=$(ns_add eg) NS_WDST=$(ns_add wdst) NS_WOTHER=$(ns_add wother)
	[[ ${2:-} == delayed ]] && NS_WDL=$(ns_add wdl)
	for ((k = 0; k < n; k++)); do
		if [[ ${2:-} == delayed ]]; then
			ns_link "$NS_WIN" "in-d$k" "02:00:00:00:2$k:02" "$NS_WDL" "dl-a$k" "02:00:00:00:5$k:01"
			ns_run "$NS_WDL" ethtool -K "dl-a$k" gro off >/dev/null 2>&1 || true	# frames as sent
			ns_link "$NS_WDL" "dl-b$k" "02:00:00:00:5$k:02" "$NS_EG" "eg-d$k" "02:00:00:00:2$k:01"
		else
			ns_link "$NS_WIN" "in-d$k" "02:00:00:00:2$k:02" "$NS_EG" "eg-d$k" "02:00:00:00:2$k:01"
		fi
		ns_addr "$NS_WIN" "in-d$k" "fd00:2$k::2/64"
		ns_addr "$NS_EG" "eg-d$k" "fd00:2$k::1/64"
	done
	# Path 0 carries the egress's WPS address (fd00:20::1) and the ingress's.
	ns_link "$NS_EG" eg-site "$WPS_EG_SITE_MAC" "$NS_WDST" wdst0 "$WPS_DST_MAC"
	# Without NAPI on wdst0, what the egress transmits over AF_XDP queues in the
	# backlog (1000) rather than the veth's 256-frame XDP ring: a released burst
	# fits. XDP_REDIRECT into eg-site (R = 0) needs NAPI: turn GRO back on for it.
	ns_run "$NS_WDST" ethtool -K wdst0 gro off >/dev/null 2>&1 || true
	ns_link "$NS_EG" eg-other 02:00:00:00:40:01 "$NS_WOTHER" other0 "$WPS_OTHER_MAC"
	ns_addr "$NS_EG" eg-site "$WPS_EG_SITE_IP4/24" "$WPS_EG_SITE_IP6/64"
	ns_addr "$NS_EG" eg-other "${WPS_OTHER_IP4%.*}.1/24"
	ns_addr "$NS_WDST" wdst0 "$WPS_DST_IP4/24" "$WPS_DST_IP6/64"
	ns_addr "$NS_WOTHER" other0 "$WPS_OTHER_IP4/24"
	ip -n "$NS_WDST" route add default via "$WPS_EG_SITE_IP4"
	ip -n "$NS_WDST" -6 route add default via "$WPS_EG_SITE_IP6"
	ns_forwarding "$NS_EG"
	ns_neigh "$NS_EG" eg-site "$WPS_DST_IP4" "$WPS_DST_MAC"
	ns_neigh "$NS_EG" eg-site "$WPS_DST_IP6" "$WPS_DST_MAC"
	ns_neigh "$NS_EG" eg-other "$WPS_OTHER_IP4" "$WPS_OTHER_MAC"
	ns_neigh "$NS_EG" eg-d0 "$WPS_IN_IP6" "$WPS_IN_DOM_MAC"
	ip -n "$NS_EG" route add unreachable "${WPS_UNREACH_IP4%.*}.0/24"
	# Site A's prefixes live behind the ingress.
	ip -n "$NS_EG" route add "${WPS_SRC_IP4%.*}.0/24" via inet6 "$WPS_IN_IP6" dev eg-d0 2>/dev/null ||
		ip -n "$NS_EG" route add "${WPS_SRC_IP4%.*}.0/24" dev eg-d0
	ip -n "$NS_EG" -6 route add "${WPS_SRC_IP6%::*}::/64" via "$WPS_IN_IP6" dev eg-d0
}
