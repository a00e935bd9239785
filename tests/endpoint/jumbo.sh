# Jumbo frames, sourced by tests/endpoint/run: every link of MTU
# 9000, where a program that is not frags-aware cannot attach natively
# ("Numerical result out of range"). The UB MTU agreed in the hello is then
# 4096, the largest a 9000-byte link carries: its data frames (about 4.2 KB)
# are longer than a UMEM frame (4096 bytes), so they come and go as
# multi-buffer AF_XDP packets (XDP_USE_SG, Linux 6.6+: the host; the 6.1
# vmtest guest does not run this suite). Each run checks the MTU used three
# ways: the JSON's mtu on both sides, both ends' multi-buffer counters (a
# packet that took several UMEM frames), and what crossed the wire (the
# router's nftables counter of IP packets longer than 4096 bytes, or the
# UB2E switches' XDP counters), so that a run at 1500-sized frames fails.

JUMBO_MTU=9000

# jumbo_links NS DEV [NS DEV ...]: each device to MTU 9000.
jumbo_links() {
	while (($# >= 2)); do
		ip -n "$1" link set "$2" mtu $JUMBO_MTU
		shift 2
	done
}

# The router counts the UBoE it forwards, and how much of it is longer than
# 4096 bytes of IP packet (a 4096-byte UB payload with its headers; a
# 1500-byte link carries none such).
router_size_count() {
	ns_run "$NS_R" nft -f - <<-EOF
	table inet ubsize {
		counter uboe { }
		counter big { }
		chain forward_uboe {
			type filter hook forward priority 0;
			udp dport 4792 counter name uboe
			udp dport 4792 meta length > 4096 counter name big
		}
	}
	EOF
}
size_count() { ns_run "$NS_R" nft list counter inet ubsize "$1" | awk '/packets/ { print $2 }' | num "nft counter $1"; }

# jumbo_multi_buffer SENDER_JSON RECEIVER_JSON PKTS: at least PKTS packets
# left the sender and reached the receiver in several UMEM frames each, and
# the receiver parsed at least 3 in 4 of the multi-buffer packets it took
# where they lay (its fill ring lends adjacent chunks in order, so a packet's
# two frames are joined in the UMEM, not gathered into a buffer; the rest:
# where a refill's batch ends). Of what it took, not of PKTS: a UTP server
# takes packets its application then drops.
jumbo_multi_buffer() {
	local rx in_place
	rx=$(json_get "$2" rx_multi_buffer)
	in_place=$(json_get "$2" rx_in_place)
	echo "multi-buffer: sent $(json_get "$1" tx_multi_buffer), received $rx ($in_place in place," \
		"want >= 3/4), want >= $3"
	[[ $(json_get "$1" tx_multi_buffer) -ge $3 ]]
	[[ $rx -ge $3 ]]
	[[ $((in_place * 4)) -ge $((rx * 3)) ]]
}

# jumbo_routed_run PEER MODE OP SIZE COUNT [ARGS]: client -- router -- server,
# every link MTU 9000, ARGS to both ubperfs (e.g. --generic). Every message
# arrives intact (ubperf's keyed payload, verified_bytes), at a UB MTU of
# 4096, in frames that crossed the router longer than 4096 bytes.
jumbo_routed_run() {
	local peer=$1 mode=$2 op=$3 size=$4 count=$5 d; d=$(mktemp -d); shift 5
	topo_routed
	jumbo_links "$NS_CLI" c0 "$NS_R" r1 "$NS_R" r2 "$NS_SRV" s0
	router_size_count
	start_server "$NS_SRV" s0 "$d/srv" --json "$@"
	ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer "$peer" --mode "$mode" --op "$op" \
		--count "$count" --size "$size" --json "$@" >"$d/cli" 2>"$d/cli.err" ||
		{ cat "$d/cli.err"; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; return 1; }
	cat "$d/cli" "$d/srv"
	[[ $(json_get "$d/cli" mtu) -eq 4096 && $(json_get "$d/srv" mtu) -eq 4096 ]]
	[[ $(json_get "$d/cli" messages) -eq $count && $(json_get "$d/cli" peer_messages) -eq $count ]]
	[[ $(json_get "$d/cli" corrupt) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $(json_get "$d/cli" icrc_bad) -eq 0 && $(json_get "$d/srv" icrc_bad) -eq 0 ]]
	ubperf_verified "$d/cli" "$op" "$count" "$size" 1 8
	# SIZE / 4096 full packets a message, each way the data goes.
	local pkts=$((count * size / 4096)) big
	big=$(size_count big)
	echo "router forwarded $(size_count uboe) UBoE, $big longer than 4096 bytes; want >= $pkts"
	[[ $big -ge $pkts ]]
	if [[ $op == read ]]; then
		jumbo_multi_buffer "$d/srv" "$d/cli" $pkts
	else
		jumbo_multi_buffer "$d/cli" "$d/srv" $pkts
	fi
	rm -rf "$d"
}

test_jumbo_routed_ipv4_sr_send()       { jumbo_routed_run 10.62.0.1 rtp-sr send 65536 300; }
test_jumbo_routed_ipv6_gbn_send()      { jumbo_routed_run fd00:62::1 rtp-gbn send 65536 200; }
test_jumbo_routed_ipv4_gbn_fast_write() { jumbo_routed_run 10.62.0.1 rtp-gbn-fast write 65536 200; }
test_jumbo_routed_ipv6_sr_read()       { jumbo_routed_run fd00:62::1 rtp-sr read 65536 200; }
# Generic (skb) XDP at both ends: the skb of a jumbo frame stays non-linear
# for a frags-aware program and reaches the multi-buffer socket as several
# UMEM frames.
test_jumbo_routed_generic_sr_send()    { jumbo_routed_run 10.62.0.1 rtp-sr send 65536 200 --generic; }

# UTP: one packet a message, so a message of the UB MTU, 4096 bytes. UTP does
# not retransmit, and a receiver without a buffer posted drops (utp_drop: the
# server's application falls behind a sender this fast): the server verifies
# each message it got; the client sent every one as one multi-buffer packet.
test_jumbo_routed_utp() {
	local d got; d=$(mktemp -d)
	topo_routed
	jumbo_links "$NS_CLI" c0 "$NS_R" r1 "$NS_R" r2 "$NS_SRV" s0
	router_size_count
	start_server "$NS_SRV" s0 "$d/srv" --json
	ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.62.0.1 --mode utp --count 2000 \
		--json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; return 1; }
	cat "$d/cli" "$d/srv"
	[[ $(json_get "$d/cli" mtu) -eq 4096 && $(json_get "$d/srv" mtu) -eq 4096 ]]
	[[ $(json_get "$d/cli" size) -eq 4096 ]]
	got=$(json_get "$d/srv" messages)
	echo "server got $got of 2000"
	[[ $got -ge 100 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $(json_get "$d/srv" verified_bytes) -eq $((got * 4096)) ]]
	[[ $(json_get "$d/cli" peer_verified_bytes) -eq $((got * 4096)) ]]
	[[ $(json_get "$d/cli" tx_multi_buffer) -eq 2000 ]]
	# each built where it was sent from, in a run of UMEM frames, not copied in
	[[ $(json_get "$d/cli" tx_in_place) -eq 2000 ]]
	[[ $(size_count big) -ge $got ]]
	jumbo_multi_buffer "$d/cli" "$d/srv" "$got"
	rm -rf "$d"
}

# topo_routed_narrow R: topo_routed, every link MTU 9000 but the router's
# device R (r1 toward the client, r2 toward the server), 3000.
topo_routed_narrow() {
	topo_routed
	jumbo_links "$NS_CLI" c0 "$NS_R" r1 "$NS_R" r2 "$NS_SRV" s0
	ip -n "$NS_R" link set "$1" mtu 3000
}

# narrow_way_back: topo_routed_narrow r1 (the router's link to the client 3000), and a
# route `mtu 3000` toward the client on the server alone (IPv4): a narrower way back
# that only the server knows.
narrow_way_back() {
	topo_routed_narrow r1
	ip -n "$NS_SRV" route add 10.61.0.0/24 via 10.62.0.2 mtu 3000
}

# path_2048_runs DIR OP COUNT: on topo_routed with a narrower hop of 3000, a
# default run of OP to the server's IPv4 and IPv6 address each: a UB MTU of
# 2048 on both sides without a word, COUNT messages of 64 KiB intact.
path_2048_runs() {
	local d=$1 op=$2 count=$3 peer
	for peer in 10.62.0.1 fd00:62::1; do
		start_server "$NS_SRV" s0 "$d/srv" --json --wait 10
		ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer $peer --op "$op" --count "$count" \
			--size 64k --json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err" "$d/srv.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		SRV_PID=
		echo "$peer $op: UB MTU client $(json_get "$d/cli" mtu), server $(json_get "$d/srv" mtu)"
		[[ $(json_get "$d/cli" mtu) -eq 2048 && $(json_get "$d/srv" mtu) -eq 2048 ]]
		cat "$d/cli.err" "$d/srv.err"
		[[ ! -s $d/cli.err && ! -s $d/srv.err ]]
		[[ $(json_get "$d/cli" messages) -eq $count && $(json_get "$d/cli" peer_messages) -eq $count ]]
		[[ $(json_get "$d/srv" corrupt) -eq 0 ]]
		ubperf_verified "$d/cli" "$op" "$count" 65536 1 8
	done
}

# A narrower routed hop: every link MTU 9000 but the router's to the server,
# 3000, so both ends' devices carry a UB MTU of 4096 and the path 2048. The
# client's default fits what the kernel knows of the path: a route's
# `mtu 3000` (IPv4), a path MTU learned from the router's "packet too big"
# (IPv6, after one ping too large); 2048 on both sides, agreed in the hello,
# every byte arriving; a --mtu 4096 is refused in one line. By the devices alone
# it was 4096, and the router dropped every data frame (DF, too big).
test_jumbo_ub_mtu_fits_routed_path() {
	local d; d=$(mktemp -d)
	topo_routed_narrow r2
	ip -n "$NS_CLI" route add 10.62.0.0/24 via 10.61.0.2 mtu 3000
	if ns_run "$NS_CLI" ping -6 -c 1 -W 2 -M do -s 4000 fd00:62::1; then return 1; fi
	ns_run "$NS_CLI" ip -6 route get fd00:62::1 | tee "$d/route"
	grep -q " mtu 3000 " "$d/route"
	# A --mtu the path cannot carry: one line, before anything is sent.
	refute ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.62.0.1 --mtu 4096 2>"$d/err"
	cat "$d/err"
	[[ $(wc -l <"$d/err") -eq 1 ]]
	grep -qx "ubperf: --mtu 4096 does not fit the path to 10.62.0.1 by c0: the path MTU the kernel knows (route or learned) 3000 carries a UB MTU of 2048 at most with the UBoE headers" "$d/err"
	path_2048_runs "$d" send 200
	rm -rf "$d"
}

# The narrower hop on the way back only the server knows: every link MTU
# 9000 but the router's to the client, 3000, and a route `mtu 3000` toward
# the client on the server alone. The client asks for 4096 (all it knows);
# the server, given no --mtu, caps it by its route back and answers its
# default 2048, the client sets up again there, and a Read's data from the
# server (full packets) arrives. Before, the server took 4096 and the router
# dropped every Read response (DF, too big): the run stalled.
test_jumbo_ub_mtu_fits_server_route_back() {
	local d; d=$(mktemp -d)
	narrow_way_back
	ip -n "$NS_SRV" -6 route add fd00:61::/64 via fd00:62::2 mtu 3000
	path_2048_runs "$d" read 100
	rm -rf "$d"
}

# The same narrower way back, the server given --mtu 4096 as the client is: its route back
# carries 2048 at most, so it refuses, and its answer says what it can carry. The client
# says that in one line (before, the answer was its --mtu, and the client said "refused a
# UB MTU of 4096: it takes 4096 (... --mtu 4096)").
test_jumbo_ub_mtu_server_given_one_its_route_back_cannot_carry() {
	local d; d=$(mktemp -d)
	narrow_way_back
	start_server "$NS_SRV" s0 "$d/srv" --mtu 4096 --wait 10
	refute ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.62.0.1 --mtu 4096 2>"$d/cli.err"
	refute wait $SRV_PID
	SRV_PID=
	cat "$d/cli.err" "$d/srv.err"
	[[ $(wc -l <"$d/cli.err") -eq 1 ]]
	grep -qx "ubperf client: peer 10.62.0.1 refused a UB MTU of 4096: it takes 2048 (the MTU is agreed in the hello: --mtu 2048)" "$d/cli.err"
	grep -qx "ubperf server: client 10.61.0.1 asks for a UB MTU of 4096: the path to it by s0: the path MTU the kernel knows (route or learned) 3000 carries a UB MTU of 2048 at most with the UBoE headers" "$d/srv.err"
	rm -rf "$d"
}

# Native UB through two UB2E switches (draft Fig. 3), every link and the
# bridge between the switches MTU 9000: both switches' programs attach
# natively (xdp.frags) and convert every 4.2 KB data frame in XDP (tx_ub,
# tx_uboe: the XDP path, not the kernel's), for RTP-SR Send, Write and Read,
# RTP-GBN Send and UTP. Each run's data frames are counted through both
# switches the way the data goes (a Read's from the server).
test_jumbo_native_through_two_ub2e() {
	local d run mode op pkts got sw_in sw_out k
	local -A before
	d=$(mktemp -d)
	need_native_tools || return 1
	topo_double
	jumbo_links "$NS_UBPU" ubpu0 "$NS_SW" sw-ub "$NS_SW" sw-ip "$NS_NET" net-a "$NS_NET" net-b \
		"$NS_NET" br0 "$NS_SW2" sw2-ip "$NS_SW2" sw2-ub "$NS_UBPU2" ubpu0
	ns_run "$NS_SW" "$BIN/ubctl" ub2e attach --ub-dev sw-ub --ip-dev sw-ip --map 4097=100 || return 1
	ns_run "$NS_SW2" "$BIN/ubctl" ub2e attach --ub-dev sw2-ub --ip-dev sw2-ip --map 4097=100 || return 1
	for run in "rtp-sr send" "rtp-sr write" "rtp-sr read" "rtp-gbn send" "utp send"; do
		read -r mode op <<<"$run"
		# In from the sender's UB port (to UBoE), out to the receiver's (to UB).
		sw_in="$NS_SW tx_uboe" sw_out="$NS_SW2 tx_ub"
		[[ $op == read ]] && sw_in="$NS_SW2 tx_uboe" sw_out="$NS_SW tx_ub"
		for k in "$sw_in" "$sw_out"; do before[$k]=$(counter_sw "${k% *}" "${k#* }"); done
		start_server "$NS_UBPU2" ubpu0 "$d/srv" --json --native --partition 4097 || return 1
		local args=(--op "$op" --count 150 --size 64k)
		[[ $mode == utp ]] && args=(--count 1000)	# one packet a message: the UB MTU
		ns_run "$NS_UBPU" "$BIN/ubperf" client --dev ubpu0 --peer "$UBPU2_IP4" --native --partition 4097 \
			--mode "$mode" "${args[@]}" --json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		SRV_PID=
		echo "$mode $op:"
		cat "$d/cli" "$d/srv"
		[[ $(json_get "$d/cli" mtu) -eq 4096 && $(json_get "$d/srv" mtu) -eq 4096 ]]
		[[ $(json_get "$d/cli" icrc_bad) -eq 0 && $(json_get "$d/srv" icrc_bad) -eq 0 ]]
		[[ $(json_get "$d/srv" corrupt) -eq 0 ]]
		if [[ $mode == utp ]]; then
			# UTP does not retransmit: what the server took is checked.
			got=$(json_get "$d/srv" messages) pkts=$got
			echo "utp: server took $got of 1000"
			[[ $got -ge 50 && $(json_get "$d/cli" size) -eq 4096 ]]
			[[ $(json_get "$d/srv" verified_bytes) -eq $((got * 4096)) ]]
			[[ $(json_get "$d/cli" tx_multi_buffer) -eq 1000 ]]
		else
			[[ $(json_get "$d/cli" messages) -eq 150 && $(json_get "$d/cli" peer_messages) -eq 150 ]]
			ubperf_verified "$d/cli" "$op" 150 65536 1 8
			pkts=$((150 * 16))
		fi
		if [[ $op == read ]]; then
			jumbo_multi_buffer "$d/srv" "$d/cli" $pkts
		else
			jumbo_multi_buffer "$d/cli" "$d/srv" $pkts
		fi
		for k in "$sw_in" "$sw_out"; do
			got=$(($(counter_sw "${k% *}" "${k#* }") - before[$k]))
			echo "switch ${k% *} ${k#* }: $got, want >= $pkts"
			[[ $got -ge $pkts ]]
		done
	done
	rm -rf "$d"
}

# counter_sw NS NAME: a UB2E counter of the switch in namespace NS.
counter_sw() {
	ns_run "$1" "$BIN/ubctl" stats |
		awk -v ns="$1:" -v k="$2" '$1 == "ub2e" { on = index($2, ns) == 1 } on && $1 == k { s += $2; n++ } END { if (n) print s }' |
		num "counter $2"
}

# CTP (native, one packet per operation: --size 4096, the UB MTU) over a
# bridge of MTU 9000, Send, Write and Read, every byte checked by ubperf.
test_jumbo_ctp_native_send_write_read() {
	local d op; d=$(mktemp -d)
	ctp_topo 1
	jumbo_links "$NS_CA" ctpa1 "$NS_CT" ta1 "$NS_CT" tb1 "$NS_CT" br1 "$NS_CB" ctpb1
	for op in send write read; do
		start_server "$NS_CB" ctpb1 "$d/srv" --json --native --mode ctp || return 1
		ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1 --peer $CTP_SRV --native --mode ctp \
			--op $op --count 500 --json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		cat "$d/cli"
		[[ $(json_get "$d/cli" mtu) -eq 4096 && $(json_get "$d/cli" size) -eq 4096 ]]
		[[ $(json_get "$d/cli" messages) -eq 500 && $(json_get "$d/cli" corrupt) -eq 0 ]]
		[[ $(json_get "$d/srv" corrupt) -eq 0 ]]
		ubperf_verified "$d/cli" $op 500 4096 1 8
		if [[ $op == read ]]; then
			jumbo_multi_buffer "$d/srv" "$d/cli" 500
		else
			jumbo_multi_buffer "$d/cli" "$d/srv" 500
		fi
	done
	rm -rf "$d"
}

JUMBO_TESTS=(test_jumbo_routed_ipv4_sr_send test_jumbo_routed_ipv6_gbn_send
	test_jumbo_routed_ipv4_gbn_fast_write test_jumbo_routed_ipv6_sr_read
	test_jumbo_routed_generic_sr_send test_jumbo_routed_utp test_jumbo_ub_mtu_fits_routed_path
	test_jumbo_ub_mtu_fits_server_route_back test_jumbo_ub_mtu_server_given_one_its_route_back_cannot_carry
	test_jumbo_native_through_two_ub2e
	test_jumbo_ctp_native_send_write_read)
