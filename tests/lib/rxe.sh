# Soft-RoCE (rdma_rxe) helpers for the rxe suite and bench/rxe_vs_ubperf.sh, which run
# in the vmtest guest (the host kernel has no rdma_rxe). Source after tests/lib/netns.sh.
#
# Both RoCE ends live in the initial namespace: the 6.1 kernel's rxe opens its UDP
# socket (port 4791) and routes in init_net only. Two veths of init_net are looped
# through a router namespace, and policy routing sends what one end addresses to the
# other out of its own veth instead of through lo, so every RoCE packet crosses the
# router and whatever qdisc (netem, ...) its ports carry:
#
#   RXE_A (ubrxa0 10.77.1.1) -- (ra 10.77.1.2) [router] (rb 10.77.2.2) -- (ubrxb0 10.77.2.1) RXE_B
#
# The local table moves from rule 0 to rule 100, behind two rules for locally sent
# packets to the other end's address; accept_local lets the veths take packets from an
# address of this host. rxe_teardown puts all of it back.

RXE_A=ubrxe_a RXE_B=ubrxe_b
RXE_A_IP=10.77.1.1 RXE_B_IP=10.77.2.1

# Why rxe cannot run here, or nothing.
rxe_unsupported() {
	local p
	for p in rdma ib_write_bw ib_send_bw; do
		command -v "$p" >/dev/null || { echo "$p not installed (scripts/deps.sh --vmtest)"; return 0; }
	done
	ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 ||
		{ echo "libibverbs' rxe provider not installed (ibverbs-providers)"; return 0; }
	modprobe rdma_rxe 2>/dev/null
	[[ -d /sys/module/rdma_rxe ]] || { echo "kernel $(uname -r) has no rdma_rxe"; return 0; }
	return 1
}

# rdma_loop_setup ROUTER TYPE DEV_A DEV_B IF_A IF_B PORT_A PORT_B NET_A NET_B PREF TABLE MTU:
# two rdma devices of TYPE (rxe, siw) in the initial namespace looped through ROUTER:
#   DEV_A on IF_A (NET_A.1) -- PORT_A (NET_A.2) [ROUTER] PORT_B (NET_B.2) -- IF_B (NET_B.1) DEV_B
# (/24 networks of three octets, veths of MTU), with rules PREF and PREF + 1 sending what
# one end sends the other out of its own veth (tables TABLE and TABLE + 1). The caller
# forwards in ROUTER and moves the local table behind them (rxe_setup does both).
rdma_loop_setup() {
	local r=$1 type=$2 da=$3 db=$4 ia=$5 ib=$6 pa=$7 pb=$8 na=$9 nb=${10} pref=${11} table=${12} mtu=${13} d
	ip link add "$ia" mtu "$mtu" type veth peer name "$pa" mtu "$mtu" netns "$r"
	ip link add "$ib" mtu "$mtu" type veth peer name "$pb" mtu "$mtu" netns "$r"
	ip addr add "$na.1/24" dev "$ia"
	ip addr add "$nb.1/24" dev "$ib"
	ip -n "$r" addr add "$na.2/24" dev "$pa"
	ip -n "$r" addr add "$nb.2/24" dev "$pb"
	for d in "$ia" "$ib"; do
		sysctl -qw "net.ipv4.conf.$d.accept_local=1" "net.ipv4.conf.$d.rp_filter=0"
		ip link set "$d" up
	done
	ip -n "$r" link set "$pa" up
	ip -n "$r" link set "$pb" up
	ip rule add pref "$pref" iif lo to "$nb.1" lookup "$table"
	ip rule add pref $((pref + 1)) iif lo to "$na.1" lookup $((table + 1))
	ip route add "$nb.1" via "$na.2" dev "$ia" src "$na.1" table "$table"
	ip route add "$na.1" via "$nb.2" dev "$ib" src "$nb.1" table $((table + 1))
	rdma link add "$da" type "$type" netdev "$ia"
	rdma link add "$db" type "$type" netdev "$ib"
}

# rdma_loop_teardown DEV_A DEV_B IF_A IF_B PREF: what rdma_loop_setup made.
rdma_loop_teardown() {
	rdma link delete "$1" 2>/dev/null
	rdma link delete "$2" 2>/dev/null
	ip link del "$3" 2>/dev/null
	ip link del "$4" 2>/dev/null
	ip rule del pref "$5" 2>/dev/null
	ip rule del pref $(($5 + 1)) 2>/dev/null
	return 0
}

# rxe_setup ROUTER_NS: the two veths, the rules and the two rxe devices.
rxe_setup() {
	local r=$1
	RXE_ROUTER=$r
	ns_forwarding "$r"
	ip rule add pref 100 lookup local
	ip rule del pref 0 lookup local
	rdma_loop_setup "$r" rxe "$RXE_A" "$RXE_B" ubrxa0 ubrxb0 ra rb 10.77.1 10.77.2 10 10077 1500
	# GRO on every end, as ns_link does: a veth then receives through its NAPI ring,
	# in order. Without it, frames sent from both CPUs wait in per-CPU backlogs and
	# overtake each other, which rxe takes for loss.
	ethtool -K ubrxa0 gro on >/dev/null 2>&1 || true
	ethtool -K ubrxb0 gro on >/dev/null 2>&1 || true
	ns_run "$r" ethtool -K ra gro on >/dev/null 2>&1 || true
	ns_run "$r" ethtool -K rb gro on >/dev/null 2>&1 || true
}

rxe_teardown() {
	rdma_loop_teardown "$RXE_A" "$RXE_B" ubrxa0 ubrxb0 10
	if ip rule show pref 100 | has 'lookup local'; then
		ip rule add pref 0 lookup local
		ip rule del pref 100 lookup local
	fi
	return 0
}

# rxe_gid DEV IP: the index of DEV's RoCE v2 GID for IPv4 address IP. Reads the first
# few entries only, with the shell's read: the table has 1024, and a fork is slow
# under TCG.
rxe_gid() {
	local dev=$1 hex i g t
	hex=$(printf '%02x%02x:%02x%02x' ${2//./ })
	for i in 0 1 2 3 4 5 6 7; do
		read -r g <"/sys/class/infiniband/$dev/ports/1/gids/$i" || continue
		read -r t <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null || t=
		[[ $g == *ffff:$hex && $t == "RoCE v2" ]] && { echo "$i"; return 0; }
	done
	echo "rxe: no RoCE v2 GID for $2 on $dev" >&2
	return 1
}

# rxe_counter DEV NAME: one of the device's hardware counters (sent_pkts, rcvd_pkts, ...).
rxe_counter() {
	rdma statistic show link "$1/1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' | num "rxe counter $2"
}

# rxe_perf TOOL OUT ARGS...: one perftest run (ib_write_bw, ib_send_bw), RC, from RXE_A to
# RXE_B; the client's report in OUT, the server's in OUT.srv. The TCP exchange of QP
# numbers goes over lo; the RoCE traffic over the router. Prints the average Gbit/s
# (nothing, and a failure, when the run gave no figure: the reason is in OUT / OUT.srv).
rxe_perf() {
	local tool=$1 out=$2 ga gb srv
	shift 2
	ga=$(rxe_gid "$RXE_A" "$RXE_A_IP") && gb=$(rxe_gid "$RXE_B" "$RXE_B_IP") || return 1
	timeout 120 "$tool" -d "$RXE_B" -x "$gb" -c RC --report_gbits "$@" >"$out.srv" 2>&1 &
	srv=$!
	for _ in $(seq 50); do ss -Hltn 'sport = :18515' | has . && break; sleep 0.1; done
	if ! timeout 120 "$tool" -d "$RXE_A" -x "$ga" -c RC --report_gbits "$@" 127.0.0.1 >"$out" 2>&1; then
		kill "$srv" 2>/dev/null
		wait "$srv"
		return 1
	fi
	wait "$srv"
	# The result row: "#bytes #iterations BW peak BW average MsgRate". perftest
	# may end it with no newline before an error of its closing handshake
	# ("0.000157ethernet_read_keys: Couldn't read remote address"), and still
	# exit 0: so more fields may follow, and no figure is a failure.
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ && NF >= 5 { v = $4 }
	     END { if (v == "") exit 1; print v }' "$out"
}

# --- Soft-iWARP (siw), bench/rxe_vs_ubperf.sh's second peer. Its module is not in Debian's
# 6.1 (vmtest/siw.sh builds it). Like rxe it lives in the initial namespace; its two
# devices get their own veths through the same router (and policy rules like rxe's), so
# that RDMA-CM, which iWARP connects through, finds one device per address:
#
#   SIW_A (ubsia0 10.77.5.1) -- (sa 10.77.5.2) [router] (sb 10.77.6.2) -- (ubsib0 10.77.6.1) SIW_B
#
# iWARP runs over the kernel's TCP: TSO/GSO off at the ends and GRO off at the router's
# ports, so every packet on the wire is one segment (netem then drops segments, as it
# drops rxe's and ubperf's packets, not 64 KiB aggregates), and MTU SIW_MTU at the ends,
# which makes a segment carry about rxe's 1024 payload bytes (MSS 1048 = MTU - IP 20 -
# TCP 20 - timestamps 12; an FPDU is 2 bytes MPA header + 18 DDP/RDMAP + 4 CRC around
# its payload).
SIW_A=ubsiw_a SIW_B=ubsiw_b
SIW_A_IP=10.77.5.1 SIW_B_IP=10.77.6.1
SIW_MTU=${SIW_MTU:-1100}

siw_unsupported() {
	modprobe siw 2>/dev/null
	[[ -d /sys/module/siw ]] || { echo "kernel $(uname -r) has no siw (vmtest/siw.sh builds it)"; return 0; }
	ls /usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav*.so >/dev/null 2>&1 ||
		{ echo "libibverbs' siw provider not installed (ibverbs-providers)"; return 0; }
	[[ -c /dev/infiniband/rdma_cm ]] || modprobe rdma_ucm 2>/dev/null
	[[ -c /dev/infiniband/rdma_cm ]] || { echo "no /dev/infiniband/rdma_cm (rdma_ucm)"; return 0; }
	return 1
}

# siw_setup ROUTER_NS (after rxe_setup, whose forwarding and move of the local table it
# relies on).
siw_setup() {
	local r=$1 d
	rdma_loop_setup "$r" siw "$SIW_A" "$SIW_B" ubsia0 ubsib0 sa sb 10.77.5 10.77.6 12 10079 "$SIW_MTU"
	for d in ubsia0 ubsib0; do ethtool -K "$d" tso off gso off >/dev/null 2>&1 || true; done
	ns_run "$r" ethtool -K sa gro off >/dev/null 2>&1 || true
	ns_run "$r" ethtool -K sb gro off >/dev/null 2>&1 || true
}

siw_teardown() { rdma_loop_teardown "$SIW_A" "$SIW_B" ubsia0 ubsib0 12; }
