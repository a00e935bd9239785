# WPS ingress test topology (sourced by tests/wps/run and the bench):
#
#   site --s0|gw-s-- gw --wan0..wan3 | p0..p3-- far
#
# gw is the ingress node (fd00:a::1): the route to the far site (10.20.0.0/24,
# fd20::/64) points at wan0, whose TC egress runs the WPS ingress; the four
# wan/p veth pairs are the member paths. far (fd00:b::1) has no WPS egress:
# a test XDP program (build/bpf/wps_decap.bpf.o) strips the encapsulation so
# real TCP can run; return traffic goes back plainly over p0/wan0.
WPS_SITE_MAC=02:00:00:0a:00:02
WPS_GWS_MAC=02:00:00:0a:00:01
WPS_SRC6=fd00:a::1
WPS_DST6=fd00:b::1
wps_wan_mac() { printf '02:00:00:0b:00:%02x' $(($1 + 1)); }
wps_far_mac() { printf '02:00:00:0c:00:%02x' $(($1 + 1)); }

# topo_wps [NPATHS]: sets NS_SITE NS_GW NS_FAR
topo_wps() {
	local n=${1:-4} i
	NS_SITE=$(ns_add site)
	NS_GW=$(ns_add gw)
	NS_FAR=$(ns_add far)
	ns_link "$NS_SITE" s0 "$WPS_SITE_MAC" "$NS_GW" gw-s "$WPS_GWS_MAC"
	ns_addr "$NS_SITE" s0 10.10.0.2/24 fd10::2/64
	ns_addr "$NS_GW" gw-s 10.10.0.1/24 fd10::1/64
	ip -n "$NS_SITE" route add default via 10.10.0.1
	ip -n "$NS_SITE" -6 route add default via fd10::1
	for ((i = 0; i < n; i++)); do
		ns_link "$NS_GW" "wan$i" "$(wps_wan_mac "$i")" "$NS_FAR" "p$i" "$(wps_far_mac "$i")"
		ns_run "$NS_GW" ethtool -K "wan$i" gro off >/dev/null 2>&1 || true
	done
	ns_addr "$NS_GW" wan0 10.99.0.1/24 fd99::1/64
	ns_addr "$NS_FAR" p0 10.99.0.2/24 fd99::2/64
	ns_addr "$NS_GW" lo "$WPS_SRC6/128"
	ns_addr "$NS_FAR" lo "$WPS_DST6/128" 10.20.0.2/32 fd20::2/128
	ns_neigh "$NS_GW" wan0 10.99.0.2 "$(wps_far_mac 0)"
	ns_neigh "$NS_GW" wan0 fd99::2 "$(wps_far_mac 0)"
	ns_neigh "$NS_FAR" p0 10.99.0.1 "$(wps_wan_mac 0)"
	ns_neigh "$NS_FAR" p0 fd99::1 "$(wps_wan_mac 0)"
	ip -n "$NS_GW" route add 10.20.0.0/24 via 10.99.0.2 dev wan0
	ip -n "$NS_GW" -6 route add fd20::/64 via fd99::2 dev wan0
	ip -n "$NS_GW" -6 route add "$WPS_DST6/128" via fd99::2 dev wan0
	ip -n "$NS_FAR" route add 10.10.0.0/24 via 10.99.0.1 dev p0
	ip -n "$NS_FAR" -6 route add fd10::/64 via fd99::1 dev p0
	ip -n "$NS_FAR" -6 route add "$WPS_SRC6/128" via fd99::1 dev p0
	ip netns exec "$NS_GW" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	ip netns exec "$NS_FAR" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	for ((i = 0; i < n; i++)); do
		ip netns exec "$NS_FAR" sysctl -qw "net.ipv4.conf.p$i.rp_filter=0"
	done
}

# The test decapsulator on every far port (not the WPS egress).
wps_far_decap() {
	local n=${1:-4} i
	for ((i = 0; i < n; i++)); do
		ip -n "$NS_FAR" link set dev "p$i" xdp obj "$UBXDP_ROOT/build/bpf/wps_decap.bpf.o" sec xdp || return 1
	done
}

# The ubctl arguments that attach the gw instance on wan0 (node 1 -> node 2).
WPS_ATTACH=(wps ingress attach --dev wan0 --node-id 1 --src "$WPS_SRC6" --egress-node-id 2 --egress-addr "$WPS_DST6")

# wps_attach [NPATHS [ATTACH-OPTION...]]: ubctl attach on wan0 with one path per wan device,
# by the ubctl in $WPS_BIN (the bench's BUILD; this tree's build/bin by default).
wps_attach() {
	local n=${1:-4} i ubctl=${WPS_BIN:-$UBXDP_ROOT/build/bin}/ubctl
	ns_run "$NS_GW" "$ubctl" "${WPS_ATTACH[@]}" "${@:2}" || return 1
	for ((i = 0; i < n; i++)); do
		ns_run "$NS_GW" "$ubctl" wps ingress path add --dev wan0 --via "wan$i" \
			--nexthop-mac "$(wps_far_mac "$i")" >/dev/null || return 1
	done
}

# wps_detour: the name of wan0's segmentation detour (wpsg<ifindex of wan0>; its
# receiving end is that name and "p").
wps_detour() { echo "wpsg$(ip -n "$NS_GW" -o link show wan0 | cut -d: -f1)"; }
# wps_detour_rps: the rps_cpus of the detour's receiving end, through the gw namespace's
# own sysfs (ip netns exec mounts one).
wps_detour_rps() { ip netns exec "$NS_GW" cat "/sys/class/net/$(wps_detour)p/queues/rx-0/rps_cpus"; }
