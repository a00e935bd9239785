# Network-namespace helpers shared by the e2e tests, the bpf suite, the demo and
# the benchmarks. Source it; ns_cleanup_all (call it from an EXIT trap) removes
# every namespace with this run's prefix, so concurrent runs never collide and
# namespaces made inside $(...) subshells are not forgotten.

UBXDP_ROOT=${UBXDP_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$UBXDP_ROOT/tests/lib/topo.env"
# The dash ends the prefix: without it, a run with PID 17 (say, in a PID
# namespace) would clean up every namespace of a run whose PID starts with 17.
NS_PREFIX=${NS_PREFIX:-ubx$$-}

# Why a test that needs namespaces cannot run here, or nothing.
ns_unsupported() {
	[[ $(id -u) -eq 0 ]] || { echo "needs root (network namespaces, XDP)"; return 0; }
	command -v ip >/dev/null || { echo "iproute2 'ip' not installed"; return 0; }
	ip netns add "${NS_PREFIX}probe" 2>/dev/null || { echo "cannot create network namespaces"; return 0; }
	ip netns del "${NS_PREFIX}probe" || true
	return 1
}

# ns_add NAME: create namespace ${NS_PREFIX}NAME with lo up; prints its full name.
ns_add() {
	local ns="${NS_PREFIX}$1"
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	echo "$ns"
}

ns_cleanup_all() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk -v p="$NS_PREFIX" 'index($1, p) == 1 { print $1 }'); do
		ip netns del "$ns" 2>/dev/null
	done
	# The pins of WPS instances in this run's namespaces (<netns>:<dev>), which a test
	# that failed before its detach leaves behind: the next test's `stats` would list them.
	rm -rf /sys/fs/bpf/ubxdp/wps/*/"${NS_PREFIX}"* 2>/dev/null
	# A veth pair ns_link had made but not yet moved when the run was killed.
	local dev
	for dev in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$NS_PREFIX" 'index($2, p) == 1 { sub(/@.*/, "", $2); print $2 }'); do
		ip link del "$dev" 2>/dev/null
	done
	return 0
}

# Run a command in a namespace. nsenter keeps the host's /sys/fs/bpf (pins
# survive); `ip netns exec` would give a private /sys without bpffs.
ns_run() {
	local ns="$1"; shift
	nsenter --net="/run/netns/$ns" "$@"
}

# ns_link NS1 DEV1 MAC1 NS2 DEV2 MAC2 [QUEUES]: a veth pair between two
# namespaces, up; QUEUES rx and tx queues on each end when given.
# GRO on both ends: a veth only accepts XDP_REDIRECTed frames when its NAPI
# is running, which GRO (or an XDP program) turns on. The pair is made here
# under names of this run and moved, renamed and set up in one step each:
# ethtool needs no nsenter, and under the vmtest guest's TCG every process
# costs 0.1-0.2 s (ns_cleanup_all removes a pair a killed run left here).
ns_link() {
	local a="${NS_PREFIX}${RANDOM:0:3}" b q=()
	b=${a}b a=${a}a
	[[ -n ${7:-} ]] && q=(numtxqueues "$7" numrxqueues "$7")
	ip link add "$a" address "$3" "${q[@]}" type veth peer name "$b" address "$6" "${q[@]}"
	ethtool -K "$a" gro on >/dev/null 2>&1 || true
	ethtool -K "$b" gro on >/dev/null 2>&1 || true
	ip link set dev "$a" netns "$1" name "$2" up
	ip link set dev "$b" netns "$4" name "$5" up
}

# ns_batch NS: the ip commands on stdin (`ip -batch` lines such as "addr add
# 10.1.0.1/24 dev sw-ub", "route add default via fd00:1::1": no -4/-6, the
# address says which) run in NS by one ip, which stops at the first that fails.
ns_batch() { ip -n "$1" -b -; }
# addr_lines DEV ADDR/PLEN...: ns_batch lines that give DEV these addresses,
# IPv6 ones without duplicate address detection (nodad), as ns_addr does.
addr_lines() {
	local dev=$1 a; shift
	for a in "$@"; do
		if [[ $a == *:* ]]; then echo "addr add $a dev $dev nodad"; else echo "addr add $a dev $dev"; fi
	done
}
# neigh_line DEV IP MAC: the ns_batch line of ns_neigh.
neigh_line() { echo "neigh replace $2 lladdr $3 dev $1 nud permanent"; }

# ns_xdp_ready NS DEV: true once an XDP program is on DEV (a ubperf server
# has opened its port: it attaches its program once a socket is on each queue
# and in the program's map, so a frame sent now is read; its in-band setup
# needs no listening socket). Each output is read whole: see has in
# tests/lib/tap.sh.
ns_xdp_ready() { local o; o=$(ip -n "$1" link show dev "$2" 2>/dev/null) || return 1; [[ $o == *" xdp"* ]]; }
# has_xdp NS DEV: DEV runs an XDP program, native or generic.
has_xdp() { local o; o=$(ip -n "$1" -d link show "$2"); [[ $o == *prog/xdp* ]]; }

# cap_listening LOG...: true once every tcpdump whose stderr goes to a LOG says
# it listens, false after 10 s (a loaded machine starts them late).
cap_listening() {
	local f n up
	for ((n = 0; n < 100; n++)); do
		up=1
		for f in "$@"; do grep -qs "listening on" "$f" || { up=0; break; }; done
		((up)) && return 0
		sleep 0.1
	done
	return 1
}

# ns_addr NS DEV ADDR/PLEN...: the addresses, by one ip (addr_lines).
ns_addr() { local ns=$1 dev=$2; shift 2; addr_lines "$dev" "$@" | ns_batch "$ns"; }

# rx_queue_sum NS DEV STAT: a veth's per-queue count rx_queue_N_STAT summed
# over its queues. Needs tap.sh's num.
rx_queue_sum() {
	ns_run "$1" ethtool -S "$2" | awk -v s="$3" '$1 ~ "^rx_queue_[0-9]+_" s ":$" { n += $2 } END { print n }' |
		num "$2 rx queue $3"
}

# rx_queue_drops NS DEV: the frames a veth's rx queues dropped (an XDP
# redirect an AF_XDP socket refused among them: its fill ring empty).
rx_queue_drops() { rx_queue_sum "$1" "$2" drops; }

ns_forwarding() {
	ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

# topo_pair A B NET MAC [MTU [QUEUES]]: the benchmarks' veth pair, a0 (NET.1)
# in A -- b0 (NET.2) in B, a /24 given as three octets; MAC: the first five
# octets of the MACs (a0 :01, b0 :02); MTU on both ends when given (or
# empty); QUEUES rx and tx queues on each end when given.
topo_pair() {
	ns_link "$1" a0 "$4:01" "$2" b0 "$4:02" "${6:-}"
	if [[ -n ${5:-} ]]; then
		ip -n "$1" link set a0 mtu "$5"
		ip -n "$2" link set b0 mtu "$5"
	fi
	ns_addr "$1" a0 "$3.1/24"
	ns_addr "$2" b0 "$3.2/24"
}

# topo_routed_hop C R S NET_C NET_S MAC_C MAC_S: the benchmarks' routed hop,
#   c0 (NET_C.1) -- rc (NET_C.2) [R forwards] rs (NET_S.2) -- s0 (NET_S.1),
# /24 networks given as three octets, each end's default route via R; MAC_*:
# the first five octets of each link's MACs (the end's is :01, R's :02).
topo_routed_hop() {
	local c=$1 r=$2 s=$3 nc=$4 ns=$5 mc=$6 ms=$7
	ns_link "$c" c0 "$mc:01" "$r" rc "$mc:02"
	ns_link "$r" rs "$ms:02" "$s" s0 "$ms:01"
	ns_addr "$c" c0 "$nc.1/24"
	ns_addr "$r" rc "$nc.2/24"
	ns_addr "$r" rs "$ns.2/24"
	ns_addr "$s" s0 "$ns.1/24"
	ns_forwarding "$r"
	ip -n "$c" route add default via "$nc.2"
	ip -n "$s" route add default via "$ns.2"
}

# Static neighbour entries: tests are deterministic without ARP/ND.
ns_neigh() { neigh_line "$2" "$3" "$4" | ns_batch "$1"; }

# The single-ended topology of draft Fig. 2 (addresses in topo.env):
#   UBPU -- switch -- IP host. Sets NS_UBPU, NS_SW, NS_IPHOST.
topo_single() {
	NS_UBPU=$(ns_add ubpu) NS_SW=$(ns_add sw) NS_IPHOST=$(ns_add iphost)
	ns_link "$NS_UBPU" ubpu0 "$UBPU_MAC" "$NS_SW" sw-ub "$SW_UB_MAC"
	ns_link "$NS_SW" sw-ip "$SW_IP_MAC" "$NS_IPHOST" iphost0 "$IPHOST_MAC"
	{
		addr_lines ubpu0 "$UBPU_IP4/24" "$UBPU_IP6/64"
		echo "route add default via $SW_UB_IP4"
		echo "route add default via $SW_UB_IP6"
	} | ns_batch "$NS_UBPU"
	{
		addr_lines sw-ub "$SW_UB_IP4/24" "$SW_UB_IP6/64"
		addr_lines sw-ip "$SW_IP_IP4/24" "$SW_IP_IP6/64"
		neigh_line sw-ub "$UBPU_IP4" "$UBPU_MAC"
		neigh_line sw-ub "$UBPU_IP6" "$UBPU_MAC"
		neigh_line sw-ip "$IPHOST_IP4" "$IPHOST_MAC"
		neigh_line sw-ip "$IPHOST_IP6" "$IPHOST_MAC"
	} | ns_batch "$NS_SW"
	{
		addr_lines iphost0 "$IPHOST_IP4/24" "$IPHOST_IP6/64"
		echo "route add default via $SW_IP_IP4"
		echo "route add default via $SW_IP_IP6"
	} | ns_batch "$NS_IPHOST"
	ns_forwarding "$NS_SW"
}

# The double-ended chain of draft Fig. 3, an Ethernet bridge as the IP network:
#   UBPU -- switch -- [br0 in NS_NET] -- switch2 -- UBPU2
# Sets NS_UBPU, NS_SW, NS_NET, NS_SW2, NS_UBPU2. Frames on the IP segment can be
# captured on net-a / net-b (ports without XDP, so AF_PACKET sees them).
# `topo_double ubtap`: UBPU2's UB segment is a bridge too (NS_UBTAP, ports
# ubt-a towards UBPU2 and ubt-b towards switch2), for when XDP or AF_XDP at
# both ends of that segment would hide its frames from a capture.
topo_double() {
	NS_UBPU=$(ns_add ubpu) NS_SW=$(ns_add sw) NS_NET=$(ns_add net) NS_SW2=$(ns_add sw2) NS_UBPU2=$(ns_add ubpu2)
	ns_link "$NS_UBPU" ubpu0 "$UBPU_MAC" "$NS_SW" sw-ub "$SW_UB_MAC"
	ns_link "$NS_SW" sw-ip "$SW_IP_MAC" "$NS_NET" net-a 02:00:00:00:05:01
	ns_link "$NS_SW2" sw2-ip "$SW2_IP_MAC" "$NS_NET" net-b 02:00:00:00:05:02
	printf '%s\n' "link add br0 type bridge" "link set net-a master br0" "link set net-b master br0" \
		"link set br0 up" | ns_batch "$NS_NET"
	# The bridge untags on receive and would hand the tag to the next veth as
	# offload metadata, where XDP cannot see it: make it write tags into the frame.
	ns_run "$NS_NET" ethtool -K net-a txvlan off >/dev/null
	ns_run "$NS_NET" ethtool -K net-b txvlan off >/dev/null
	if [[ ${1:-} == ubtap ]]; then
		NS_UBTAP=$(ns_add ubtap)
		ns_link "$NS_SW2" sw2-ub "$SW2_UB_MAC" "$NS_UBTAP" ubt-b 02:00:00:00:06:02
		ns_link "$NS_UBTAP" ubt-a 02:00:00:00:06:01 "$NS_UBPU2" ubpu0 "$UBPU2_MAC"
		printf '%s\n' "link add br0 type bridge" "link set ubt-a master br0" "link set ubt-b master br0" \
			"link set br0 up" | ns_batch "$NS_UBTAP"
	else
		ns_link "$NS_SW2" sw2-ub "$SW2_UB_MAC" "$NS_UBPU2" ubpu0 "$UBPU2_MAC"
	fi
	# The UBPUs reach beyond their UB port through the switch, as in topo_single.
	{
		addr_lines ubpu0 "$UBPU_IP4/24" "$UBPU_IP6/64"
		echo "route add default via $SW_UB_IP4"
		echo "route add default via $SW_UB_IP6"
	} | ns_batch "$NS_UBPU"
	{
		addr_lines ubpu0 "$UBPU2_IP4/24" "$UBPU2_IP6/64"
		echo "route add default via $SW2_UB_IP4"
		echo "route add default via $SW2_UB_IP6"
	} | ns_batch "$NS_UBPU2"
	{
		addr_lines sw-ub "$SW_UB_IP4/24" "$SW_UB_IP6/64"
		addr_lines sw-ip "$SW_IP_IP4/24" "$SW_IP_IP6/64"
		echo "route add 10.3.0.0/24 via $SW2_IP_IP4"
		echo "route add fd00:3::/64 via $SW2_IP_IP6"
		neigh_line sw-ub "$UBPU_IP4" "$UBPU_MAC"
		neigh_line sw-ub "$UBPU_IP6" "$UBPU_MAC"
		neigh_line sw-ip "$SW2_IP_IP4" "$SW2_IP_MAC"
		neigh_line sw-ip "$SW2_IP_IP6" "$SW2_IP_MAC"
	} | ns_batch "$NS_SW"
	{
		addr_lines sw2-ip "$SW2_IP_IP4/24" "$SW2_IP_IP6/64"
		addr_lines sw2-ub "$SW2_UB_IP4/24" "$SW2_UB_IP6/64"
		echo "route add 10.1.0.0/24 via $SW_IP_IP4"
		echo "route add fd00:1::/64 via $SW_IP_IP6"
		neigh_line sw2-ip "$SW_IP_IP4" "$SW_IP_MAC"
		neigh_line sw2-ip "$SW_IP_IP6" "$SW_IP_MAC"
		neigh_line sw2-ub "$UBPU2_IP4" "$UBPU2_MAC"
		neigh_line sw2-ub "$UBPU2_IP6" "$UBPU2_MAC"
	} | ns_batch "$NS_SW2"
	ns_forwarding "$NS_SW"
	ns_forwarding "$NS_SW2"
}

# topo_ecmp2 C R1 R2 S [RATE [LATENCY]]: two hosts, two routers joined by two equal links,
#   c0 (10.61.0.1) -- r1 =[p1/q1 10.63.0.0/24, p2/q2 10.64.0.0/24]= r2 -- s0 (10.62.0.1)
# ECMP with an L4 hash (fib_multipath_hash_policy 1) both ways; with RATE
# (e.g. 50mbit) a tbf of that rate at each router's egress onto each link,
# so each direction of each link is a bottleneck of RATE (a queue of LATENCY,
# default 100ms: deep enough for a few 256-packet windows).
topo_ecmp2() {
	local c=$1 r1=$2 r2=$3 s=$4 rate=${5:-} lat=${6:-100ms} dev ns
	ns_link "$c" c0 02:00:00:00:61:01 "$r1" r1 02:00:00:00:61:02
	ns_link "$r1" p1 02:00:00:00:63:01 "$r2" q1 02:00:00:00:63:02
	ns_link "$r1" p2 02:00:00:00:64:01 "$r2" q2 02:00:00:00:64:02
	ns_link "$r2" r2 02:00:00:00:62:02 "$s" s0 02:00:00:00:62:01
	ns_addr "$c" c0 10.61.0.1/24
	ns_addr "$r1" r1 10.61.0.2/24
	ns_addr "$r1" p1 10.63.0.1/24
	ns_addr "$r1" p2 10.64.0.1/24
	ns_addr "$r2" q1 10.63.0.2/24
	ns_addr "$r2" q2 10.64.0.2/24
	ns_addr "$r2" r2 10.62.0.2/24
	ns_addr "$s" s0 10.62.0.1/24
	for ns in "$r1" "$r2"; do
		ns_forwarding "$ns"
		ip netns exec "$ns" sysctl -qw net.ipv4.fib_multipath_hash_policy=1
	done
	ip -n "$r1" route add 10.62.0.0/24 nexthop via 10.63.0.2 dev p1 nexthop via 10.64.0.2 dev p2
	ip -n "$r2" route add 10.61.0.0/24 nexthop via 10.63.0.1 dev q1 nexthop via 10.64.0.1 dev q2
	ip -n "$c" route add default via 10.61.0.2
	ip -n "$s" route add default via 10.62.0.2
	[[ -n $rate ]] || return 0
	for dev in "$r1 p1" "$r1 p2" "$r2 q1" "$r2 q2"; do
		# shellcheck disable=SC2086
		set -- $dev
		tc -n "$1" qdisc replace dev "$2" root tbf rate "$rate" burst 16kb latency "$lat"
	done
}
