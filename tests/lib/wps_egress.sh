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
	# WPS_EG_SITE_QUEUES=N: eg-site and wdst0 with N queues each (a multi-queue NIC: each
	# reorder thread sends on a queue of its own).
	if [[ -n ${WPS_EG_SITE_QUEUES:-} ]]; then
		ip link add eg-site netns "$NS_EG" address "$WPS_EG_SITE_MAC" numtxqueues "$WPS_EG_SITE_QUEUES" \
			numrxqueues "$WPS_EG_SITE_QUEUES" type veth peer name wdst0 netns "$NS_WDST" address "$WPS_DST_MAC" \
			numtxqueues "$WPS_EG_SITE_QUEUES" numrxqueues "$WPS_EG_SITE_QUEUES"
		ip -n "$NS_EG" link set eg-site up
		ip -n "$NS_WDST" link set wdst0 up
	else
		ns_link "$NS_EG" eg-site "$WPS_EG_SITE_MAC" "$NS_WDST" wdst0 "$WPS_DST_MAC"
	fi
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

# The four paths' delays (us) through the delay line: the headline's skews of 0, 1, 5, 10 ms.
WPS_DELAYS=(0 1000 5000 10000)
WPS_LOSS=()

# wps_delayline_start NS LOG: build/bin/wps_delayline in NS, dl-aK -> dl-bK held WPS_DELAYS[K]
# for K = 0..3, and one frame in WPS_LOSS[K] lost where that is set; sets DL_PID once it listens (frames sent before that would pass undelayed or not at all).
wps_delayline_start() {
	local args=() k
	for k in 0 1 2 3; do args+=("dl-a$k" "dl-b$k" "${WPS_DELAYS[k]}${WPS_LOSS[k]:+/${WPS_LOSS[k]}}"); done
	# nsenter itself, not ns_run: $! must be the delay line's pid, not a subshell's.
	# Real-time priority: on a loaded machine a descheduled delay line holds a frame tens of
	# ms past its delay, more skew than the paths have; it sleeps between frames.
	local rt=(chrt -f 10)
	chrt -f 10 true 2>/dev/null || rt=()
	"${rt[@]}" nsenter --net="/run/netns/$1" "$UBXDP_ROOT/build/bin/wps_delayline" "${args[@]}" >"$2" 2>&1 &
	DL_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$2" && return 0
		kill -0 "$DL_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "delay line did not come up"; cat "$2"; return 1
}

# wps_egress_start LOG DEVS [ubctl options]: `ubctl wps egress run` in NS_EG on the domain
# devices DEVS, out of eg-site; sets EG_PID and EG_NAME (a random one unless the options
# have --name NAME) once its statistics file exists. The ingress (WPS_IN_IP6, Ingress
# Node ID WPS_IN_NODE) is its peer unless the options say --peer, --any-peer or --config
# themselves.
wps_egress_start() {
	local log=$1 devs=$2 peer=(--peer "$WPS_IN_IP6=$WPS_IN_NODE") a prev=; shift 2
	for a in "$@"; do [[ $a == --peer || $a == --any-peer || $a == --config ]] && peer=(); done
	EG_NAME="${NS_PREFIX}-$RANDOM"
	for a in "$@"; do
		[[ $prev != --name ]] || EG_NAME=$a
		prev=$a
	done
	nsenter --net="/run/netns/$NS_EG" "$UBXDP_ROOT/build/bin/ubctl" wps egress run --dev "$devs" \
		--out-dev eg-site --node-id "$WPS_EG_NODE" --name "$EG_NAME" "${peer[@]}" "$@" >"$log" 2>&1 &
	EG_PID=$!
	for _ in $(seq 100); do
		[[ -f /run/ubxdp/wps_egress/$EG_NAME.json ]] && return 0
		kill -0 "$EG_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "egress did not come up"; cat "$log"; return 1
}

# topo_wps_chain [RATE_MBIT [INNER_MTU]]: the whole WPS chain (the headline benchmark's and the suite's
# end-to-end test's), site A to site B, the WPS ingress and egress with real paths between:
#
#   NS_WSRC s0 -- gw-s NS_GW wan0..3 == dl-aK NS_WDL dl-bK == eg-d0..3 NS_EG eg-site -- wdst0 NS_WDST
#                      NS_GW gw-r ------------------------------ eg-r NS_EG   (the way back, plain)
#
# RATE_MBIT: a tbf of that rate on every wanK. Inner MTU 1400 at both sites (INNER_MTU: up to
# 1444, the paths' 1500 less the 56 bytes of WPS). Start the delay line (wps_delayline_start
# "$NS_WDL"), the egress (wps_egress_start LOG eg-d0,eg-d1,eg-d2,eg-d3) and the ingress
# (wps_chain_ingress) on it.
# wps_napi_in_order NS DEV: DEV (a veth) receives through its NAPI ring, in the order
# its peer sent. Without GRO or XDP a veth hands each frame to the backlog of the CPU
# that sent it, so a flow whose frames leave from both CPUs (a TCP sender, the gateway
# forwarding it) is reordered on the wire: the ingress then tags in another order than
# the capture before it saw, and a path reorders a group's packets, which the egress
# rightly counts as late. A real NIC's queue keeps one flow in order.
wps_napi_in_order() {
	ip -n "$1" link set dev "$2" xdp obj "$UBXDP_ROOT/build/bpf/xdp_pass.bpf.o" sec xdp
}

topo_wps_chain() {
	local rate=${1:-} inner=${2:-1400} k eg_mac
	NS_WSRC=$(ns_add wsrc) NS_GW=$(ns_add gw) NS_WDL=$(ns_add wdl) NS_EG=$(ns_add eg) NS_WDST=$(ns_add wdst)
	ns_link "$NS_WSRC" s0 02:00:00:0a:00:02 "$NS_GW" gw-s 02:00:00:0a:00:01
	ns_link "$NS_GW" gw-r 02:00:00:0d:00:01 "$NS_EG" eg-r 02:00:00:0d:00:02
	ns_link "$NS_EG" eg-site "$WPS_EG_SITE_MAC" "$NS_WDST" wdst0 "$WPS_DST_MAC"
	for k in 0 1 2 3; do
		eg_mac=$(printf '02:00:00:00:2%d:01' "$k")
		ns_link "$NS_GW" "wan$k" "02:00:00:0b:00:0$k" "$NS_WDL" "dl-a$k" "02:00:00:00:5$k:01"
		ns_link "$NS_WDL" "dl-b$k" "02:00:00:00:5$k:02" "$NS_EG" "eg-d$k" "$eg_mac"
		ns_run "$NS_GW" ethtool -K "wan$k" gro off tso off gso off tx off >/dev/null 2>&1
		# The delay line must see the frames as sent, not GRO's merged ones.
		ns_run "$NS_WDL" ethtool -K "dl-a$k" gro off >/dev/null 2>&1
		wps_napi_in_order "$NS_WDL" "dl-a$k"
		# A size table (stab, here adding nothing) makes tbf count a frame as it is at enqueue:
		# without one, the length it counts is taken before TC egress, so on wan0, where the
		# ingress runs, a frame counts without its 56 bytes of WPS and path 0 ran 4 % fast.
		[[ -z $rate ]] || tc -n "$NS_GW" qdisc add dev "wan$k" root stab overhead 0 linklayer ethernet \
			tbf rate "${rate}mbit" burst 32kb latency 100ms
	done
	# Checksums in software: a veth hands CHECKSUM_PARTIAL packets on unfinished, and
	# the delay line (AF_PACKET) and the egress (AF_XDP) see the bytes, not the skb.
	# No GRO at wdst0: see topo_wps_egress.
	ns_run "$NS_WDST" ethtool -K wdst0 gro off tx off >/dev/null 2>&1
	wps_napi_in_order "$NS_WDST" wdst0	# the egress thread may send from either CPU
	ns_run "$NS_WSRC" ethtool -K s0 tso off gso off tx off >/dev/null 2>&1
	ns_run "$NS_GW" ethtool -K gw-s gro off >/dev/null 2>&1	# no merged segments to re-split partially
	wps_napi_in_order "$NS_GW" gw-s
	ip -n "$NS_WSRC" link set s0 mtu "$inner"
	ip -n "$NS_WDST" link set wdst0 mtu "$inner"
	ns_addr "$NS_WSRC" s0 "$WPS_SRC_IP4/24"
	ns_addr "$NS_GW" gw-s "${WPS_SRC_IP4%.*}.1/24"
	ns_addr "$NS_GW" wan0 10.99.0.1/24 fd99::1/64
	ns_addr "$NS_EG" eg-d0 10.99.0.2/24 fd99::2/64
	ns_addr "$NS_GW" gw-r 10.98.0.1/24
	ns_addr "$NS_EG" eg-r 10.98.0.2/24
	ns_addr "$NS_EG" eg-site "$WPS_EG_SITE_IP4/24"
	ns_addr "$NS_WDST" wdst0 "$WPS_DST_IP4/24"
	ns_addr "$NS_GW" lo "$WPS_IN_IP6/128"
	ns_addr "$NS_EG" lo "$WPS_EG_IP6/128"
	ip -n "$NS_WSRC" route add default via "${WPS_SRC_IP4%.*}.1"
	ip -n "$NS_WDST" route add default via "$WPS_EG_SITE_IP4"
	ip -n "$NS_GW" route add "${WPS_DST_IP4%.*}.0/24" via 10.99.0.2 dev wan0
	ip -n "$NS_GW" -6 route add "$WPS_EG_IP6/128" via fd99::2 dev wan0
	ip -n "$NS_EG" route add "${WPS_SRC_IP4%.*}.0/24" via 10.98.0.1 dev eg-r
	ns_forwarding "$NS_GW"
	ns_forwarding "$NS_EG"
	for k in "$NS_GW" "$NS_EG"; do
		ip netns exec "$k" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	done
	ns_neigh "$NS_GW" wan0 10.99.0.2 02:00:00:00:20:01
	ns_neigh "$NS_GW" wan0 fd99::2 02:00:00:00:20:01
	ns_neigh "$NS_GW" gw-r 10.98.0.2 02:00:00:0d:00:02
	ns_neigh "$NS_EG" eg-r 10.98.0.1 02:00:00:0d:00:01
	ns_neigh "$NS_EG" eg-site "$WPS_DST_IP4" "$WPS_DST_MAC"
	ns_neigh "$NS_GW" gw-s "$WPS_SRC_IP4" 02:00:00:0a:00:02
	ns_neigh "$NS_WDST" wdst0 "$WPS_EG_SITE_IP4" "$WPS_EG_SITE_MAC"
	ns_neigh "$NS_WSRC" s0 "${WPS_SRC_IP4%.*}.1" 02:00:00:0a:00:01
}

# wps_chain_ingress [RULE OPTIONS]: the WPS ingress on wan0 of topo_wps_chain, the four wanK as
# its paths, and one rule for site B's prefix with RULE OPTIONS (--quantum N, --proto ...).
# WPS_CHAIN_ATTACH (an array, if set): more `attach` options (--max-inflight G ...);
# WPS_CHAIN_WEIGHTS (an array of four, if set): the paths' weights.
wps_chain_ingress() {
	local k ubctl=$UBXDP_ROOT/build/bin/ubctl
	ns_run "$NS_GW" "$ubctl" wps ingress attach --dev wan0 --node-id "$WPS_IN_NODE" --src "$WPS_IN_IP6" \
		--egress-node-id "$WPS_EG_NODE" --egress-addr "$WPS_EG_IP6" "${WPS_CHAIN_ATTACH[@]}" >/dev/null || return 1
	for k in 0 1 2 3; do
		ns_run "$NS_GW" "$ubctl" wps ingress path add --dev wan0 --via "wan$k" \
			--nexthop-mac "$(printf '02:00:00:00:2%d:01' "$k")" ${WPS_CHAIN_WEIGHTS:+--weight "${WPS_CHAIN_WEIGHTS[k]}"} \
			>/dev/null || return 1
	done
	ns_run "$NS_GW" "$ubctl" wps ingress rule add --dev wan0 --dst "${WPS_DST_IP4%.*}.0/24" "$@" >/dev/null
}
