# CTP on the native port (issues 10 and 11), sourced by tests/endpoint/run.
#
# Two endpoints joined by N emulated UB links (veth pairs), each through a
# bridge in a tap namespace so that a capture sees the frames (AF_XDP at both
# ends would hide them from one on the endpoints):
#   client (ctpa1 10.74.0.1) -- [br1: ta1 | tb1] -- (ctpb1 10.74.0.2) server
#   client (ctpa2)           -- [br2: ta2 | tb2] -- (ctpb2)           server
# With N > 1 both ends bind their ports as one entity (--dev ctpa1,ctpa2).

CTP_CLI=10.74.0.1 CTP_SRV=10.74.0.2 CTP_SRV6=fd00:74::2

ctp_topo() {
	local n=$1 k
	NS_CA=$(ns_add ctpa) NS_CT=$(ns_add ctpt) NS_CB=$(ns_add ctpb)
	for k in $(seq "$n"); do
		ns_link "$NS_CA" ctpa$k 02:00:00:00:74:${k}1 "$NS_CT" ta$k 02:00:00:00:74:${k}2
		ns_link "$NS_CT" tb$k 02:00:00:00:74:${k}3 "$NS_CB" ctpb$k 02:00:00:00:74:${k}4
		ip -n "$NS_CT" link add br$k type bridge
		ip -n "$NS_CT" link set ta$k master br$k
		ip -n "$NS_CT" link set tb$k master br$k
		ip -n "$NS_CT" link set br$k up
	done
	ns_addr "$NS_CA" ctpa1 $CTP_CLI/24 fd00:74::1/64
	ns_addr "$NS_CB" ctpb1 $CTP_SRV/24 $CTP_SRV6/64
	CTP_CLI_DEVS=$(seq -s, -f 'ctpa%g' "$n") CTP_SRV_DEVS=$(seq -s, -f 'ctpb%g' "$n")
}

# Captures on every member link (in the tap namespace) until ctp_capture_stop.
ctp_capture_start() {
	local d=$1 k
	CTP_CAPS=()
	for k in $(seq "$2"); do
		nsenter --net="/run/netns/$NS_CT" tcpdump -i ta$k -B 8192 --immediate-mode -w "$d/m$k.pcap" -U ether proto 0x88b5 \
			2>"$d/dump$k.err" &
		CTP_CAPS+=($!)
	done
	for k in $(seq "$2"); do
		cap_listening "$d/dump$k.err" || true
	done
}
ctp_capture_stop() { sleep 0.3; { kill "${CTP_CAPS[@]}"; wait "${CTP_CAPS[@]}"; } 2>/dev/null || true; }

# ctp_data_frames JSON COUNT: COUNT frames each way besides the setup hellos.
ctp_data_frames() {
	local tx rx
	tx=$(( $(json_get "$1" frames.tx) - $(json_get "$1" frames.ctl_tx) ))
	rx=$(( $(json_get "$1" frames.rx) - $(json_get "$1" frames.ctl_rx) ))
	[[ $tx -eq $2 && $rx -eq $2 ]] || { echo "$1: $tx data frames sent, $rx received, not $2"; return 1; }
}

# ctp_run N LB COUNT OP CHANNELS [client options]: server and client over N
# member links, every message checked by ubperf (sequence numbers and bytes
# of Sends by the server, the region after Writes, every Read's bytes by the
# client), and the links' frames by ctp_capture.py. Leaves $CTP_DIR.
ctp_run() {
	local n=$1 lb=$2 count=$3 op=$4 chans=$5 d; d=$(mktemp -d); shift 5
	CTP_DIR=$d
	need_native_tools || return 1
	ctp_topo "$n"
	ctp_capture_start "$d" "$n"
	start_server "$NS_CB" "$CTP_SRV_DEVS" "$d/srv" --json --native --mode ctp || return 1
	ns_run "$NS_CA" "$BIN/ubperf" client --dev "$CTP_CLI_DEVS" --peer $CTP_SRV --native --mode ctp \
		--lb "$lb" --count "$count" --op "$op" --channels "$chans" --size 1000 --json "$@" \
		>"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; ctp_capture_stop; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; ctp_capture_stop; return 1; }
	ctp_capture_stop
	cat "$d/cli" "$d/srv"
	[[ $(json_get "$d/cli" messages) -eq $count && $(json_get "$d/cli" peer_messages) -eq $count ]]
	[[ $(json_get "$d/srv" out_of_order) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $(json_get "$d/cli" corrupt) -eq 0 ]]
	ubperf_verified "$d/cli" "$op" "$count" 1000 "$chans" 8
	[[ $(json_get "$d/cli" icrc_bad) -eq 0 && $(json_get "$d/srv" icrc_bad) -eq 0 ]]
	# No transport acknowledgement, no retransmission: one frame per
	# operation each way (answers are data), on both sides, beside the
	# in-band setup's UTP hellos (ctl_*).
	[[ $(json_get "$d/cli" retransmissions.total) -eq 0 && $(json_get "$d/cli" rto_fired) -eq 0 ]]
	ctp_data_frames "$d/cli" $count
	ctp_data_frames "$d/srv" $count
	local pcaps=() k
	for k in $(seq "$n"); do pcaps+=("$d/m$k.pcap"); done
	# Each member's frames unicast, between that member's ports (ctp_topo's MACs).
	$PY "$here/ctp_capture.py" --client $CTP_CLI --server $CTP_SRV --size 1000 --op "$op" \
		--lb "$([[ $n -eq 1 ]] && echo one || echo "$lb")" \
		--client-macs "$(seq -s, -f '02:00:00:00:74:%g1' "$n")" \
		--server-macs "$(seq -s, -f '02:00:00:00:74:%g4' "$n")" "${pcaps[@]}" || return 1
	# The dissector agrees: CTPH opcode 0, the member's LBF, a good ICRC.
	for k in $(seq "$n"); do
		tshark -n -X lua_script:"$root/tools/wireshark/ub.lua" -r "$d/m$k.pcap" -T fields \
			-e ub.ctph.opcode -e ub.lph.lbf -e ub.icrc.status >"$d/ts$k" 2>/dev/null
		[[ -s $d/ts$k ]] || { echo "tshark decoded nothing on member $k"; return 1; }
		# (rows without a CTPH are the setup's UTP hellos, checked by ctp_capture.py)
		if awk -F'\t' -v n="$n" -v k="$k" '$1 == "" { next } $1 != 0 || $2 % n != k - 1 || $3 != 1' "$d/ts$k" | grep .; then
			echo "member $k: frames the dissector does not take for this member's CTP"; return 1
		fi
	done
}

test_ubperf_ctp_native_send() { ctp_run 1 flow 2000 send 1; }
test_ubperf_ctp_native_write() { ctp_run 1 flow 500 write 2; }
test_ubperf_ctp_native_read() { ctp_run 1 flow 500 read 1 --ta rot; }

# Over IPv6 (the entity address is the IPv6 source): Reads and Writes, every
# byte checked by ubperf.
test_ubperf_ctp_native_ipv6_read_write() {
	local d op; d=$(mktemp -d)
	ctp_topo 1
	for op in read write; do
		start_server "$NS_CB" ctpb1 "$d/srv" --json --native || return 1
		ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1 --peer $CTP_SRV6 --native --mode ctp \
			--op $op --count 300 --json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		cat "$d/cli"
		[[ $(json_get "$d/cli" messages) -eq 300 && $(json_get "$d/cli" corrupt) -eq 0 ]]
		[[ $(json_get "$d/srv" corrupt) -eq 0 ]]
		ubperf_verified "$d/cli" $op 300 1024 1 8
		ctp_data_frames "$d/cli" 300
	done
}

# Two ports bound as one entity, the LBF choosing the member per packet: every
# channel's packets cross both links (the counts per member in the JSON too;
# the setup's hellos leave by the first member and count there: the members'
# frames add up to all frames sent).
test_ubperf_ctp_entity_lb_packet() {
	ctp_run 2 packet 1000 send 2
	local f
	for f in cli srv; do
		$PY -c 'import json, sys; j = json.load(open(sys.argv[1])); e = j["entity"]
print(sys.argv[1], [(m["dev"], m["tx_frames"]) for m in e], "of", j["frames"]["tx"])
sys.exit(not (all(m["tx_frames"] > 0 for m in e) and sum(m["tx_frames"] for m in e) == j["frames"]["tx"]))' \
			"$CTP_DIR/$f" || return 1
	done
}

# ... or per flow: each channel keeps to one member, both ways.
test_ubperf_ctp_entity_lb_flow() { ctp_run 2 flow 1000 send 6; }

# CTP congestion control per {Dest Entity, VL}: the bridge marks FECN severe
# CE (CCI 0x4002 -> 0x4003; the CCI is outside the ICRC, as a UB switch marks
# it) on every 4th CTP data frame towards the server; the server answers with
# CTP CNPs (CTPH 0x41 | CNPETPH), counted on the bridge on their way back; the
# client's DCQCN instance for the server's entity takes them and cuts its rate
# below the 10 Gbit/s it starts at (also in the --interval series); every
# Send arrives, once, in order. The client sends on VL 5 and the server on VL 0:
# the CNPs name VL 5 (the marked data's), or the client's {entity, VL 5}
# instance would not find them.
test_ubperf_ctp_dcqcn_cnps_cut_the_rate() {
	local d; d=$(mktemp -d)
	need_native_tools || return 1
	ctp_topo 1
	# Eth 14 | LPH 4 (VL[2:0]: bits 120..122) | NTH (CCI: bits 144..159) | IPv4 20 |
	# UDP (dport: bits 368..383) | CTPH (bits 416..423) | CNPETPH (VL: bits 436..439)
	ns_run "$NS_CT" nft -f - <<-EOF
	table bridge ctpecn {
		counter marked { }
		counter cnps { }
		counter vl5data { }
		counter vl5cnps { }
		chain hop {
			type filter hook forward priority 0;
			oifname "tb1" ether type 0x88b5 @ll,368,16 4794 @ll,416,8 0x00 @ll,120,3 5 counter name vl5data
			oifname "ta1" ether type 0x88b5 @ll,368,16 4794 @ll,416,8 0x41 @ll,436,4 5 counter name vl5cnps
			oifname "tb1" ether type 0x88b5 @ll,368,16 4794 @ll,416,8 0x00 @ll,144,16 0x4002 numgen inc mod 4 == 0 counter name marked @ll,144,16 set 0x4003
			oifname "ta1" ether type 0x88b5 @ll,368,16 4794 @ll,416,8 0x41 counter name cnps
		}
	}
	EOF
	start_server "$NS_CB" ctpb1 "$d/srv" --json --native --mode ctp || return 1
	ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1 --peer $CTP_SRV --native --mode ctp --cc dcqcn \
		--vl 5 --count 3000 --size 1000 --interval 50 --json >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err"; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; return 1; }
	cat "$d/cli" "$d/srv"
	local marked cnps vl5data vl5cnps
	marked=$(ns_run "$NS_CT" nft list counter bridge ctpecn marked | awk '/packets/ { print $2 }')
	cnps=$(ns_run "$NS_CT" nft list counter bridge ctpecn cnps | awk '/packets/ { print $2 }')
	vl5data=$(ns_run "$NS_CT" nft list counter bridge ctpecn vl5data | awk '/packets/ { print $2 }')
	vl5cnps=$(ns_run "$NS_CT" nft list counter bridge ctpecn vl5cnps | awk '/packets/ { print $2 }')
	echo "bridge: $marked data frames marked, $cnps CTP CNPs towards the client; on VL 5: $vl5data data, $vl5cnps CNPs"
	[[ $(json_get "$d/cli" messages) -eq 3000 && $(json_get "$d/cli" peer_messages) -eq 3000 ]]
	[[ $(json_get "$d/srv" out_of_order) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $marked -gt 0 && $(json_get "$d/srv" ecn_ce) -eq $marked ]]
	[[ $(json_get "$d/srv" ctp_cc.0.entity) == "$CTP_CLI" && $(json_get "$d/cli" ctp_cc.0.entity) == "$CTP_SRV" ]]
	[[ $(json_get "$d/srv" ctp_cc.0.ce_received) -eq $marked ]]
	# At most one CNP per 50 us: fewer than the marks, and all on the wire.
	[[ $(json_get "$d/srv" ctp_cc.0.cnp_sent) -gt 0 && $(json_get "$d/srv" ctp_cc.0.cnp_sent) -lt $marked ]]
	[[ $cnps -eq $(json_get "$d/srv" ctp_cc.0.cnp_sent) && $cnps -eq $(json_get "$d/srv" cnp.sent) ]]
	[[ $(json_get "$d/cli" ctp_cc.0.cnp_received) -eq $cnps && $(json_get "$d/cli" cnp.received) -eq $cnps ]]
	[[ $(json_get "$d/cli" ctp_cc.0.rate_bps) -lt 10000000000 ]]
	[[ $(json_get "$d/cli" ctp_cc.0.vl) -eq 5 && $vl5data -ge 3000 && $vl5cnps -eq $cnps ]]
	$PY - "$d/cli" <<-'EOF' || return 1
	import json, sys
	s = json.load(open(sys.argv[1]))["per_channel"][0]["series"]
	low = min(r["rate_bps"] for r in s)
	print(len(s), "rows, lowest rate", low, "CNPs", sum(r["cnp_received"] for r in s))
	sys.exit(not (low < 10**10 and sum(r["cnp_received"] for r in s) > 0))
	EOF
	rm -rf "$d"
}

# An entity member whose link answers no ARP cannot reach the peer: the
# client stops in one line naming that member (it used to broadcast there).
test_ubperf_ctp_entity_member_unresolved_one_line() {
	local d; d=$(mktemp -d)
	ctp_topo 2
	ns_run "$NS_CT" nft -f - <<-EOF
	table bridge noarp2 {
		chain c {
			type filter hook forward priority 0;
			iifname "ta2" ether type arp drop
		}
	}
	EOF
	refute ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1,ctpa2 --peer $CTP_SRV --native --mode ctp \
		--count 10 --wait 1 2>"$d/cli.err"
	cat "$d/cli.err"
	[[ $(wc -l <"$d/cli.err") -eq 1 ]] && grep -q "entity member ctpa2" "$d/cli.err"
}

# Each entity member follows its own next hop, looked up again on a change:
# mid-run the server's port on link 2 takes a new MAC and the client's
# neighbour entry there learns it (as a gratuitous ARP would teach it). On
# that link the client's frames switch to the new MAC within 2 s and keep to
# it, and the transfer completes without a loss.
test_ubperf_ctp_entity_member_follows_new_next_hop() {
	local d old=02:00:00:00:74:24 new=02:00:00:00:74:99 t dump cli; d=$(mktemp -d)
	need_native_tools || return 1
	ctp_topo 2
	# Headers only, the client's frames only: a few seconds at full rate.
	nsenter --net="/run/netns/$NS_CT" tcpdump -i ta2 -s 64 -B 8192 --immediate-mode -w "$d/m2.pcap" -U \
		ether proto 0x88b5 and ether src 02:00:00:00:74:21 2>"$d/dump.err" &
	dump=$!
	cap_listening "$d/dump.err" || true
	start_server "$NS_CB" "$CTP_SRV_DEVS" "$d/srv" --json --native --mode ctp || return 1
	nsenter --net="/run/netns/$NS_CA" "$BIN/ubperf" client --dev "$CTP_CLI_DEVS" --peer $CTP_SRV \
		--native --mode ctp --lb packet --channels 2 --time 6 --size 1000 --json >"$d/cli" 2>"$d/cli.err" &
	cli=$!
	# Data under way on link 2 first: a slow setup still leaves seconds after the change.
	for _ in $(seq 100); do [[ $(stat -c %s "$d/m2.pcap") -gt 100000 ]] && break; sleep 0.1; done
	sleep 0.5
	ip -n "$NS_CB" link set ctpb2 address $new
	ip -n "$NS_CA" neigh replace $CTP_SRV dev ctpa2 lladdr $new nud reachable
	t=$(date +%s.%N)
	wait $cli || { cat "$d/cli.err"; kill $dump; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; kill $dump; return 1; }
	sleep 0.3
	{ kill $dump; wait $dump; } 2>/dev/null || true
	cat "$d/cli" "$d/srv"
	[[ $(json_get "$d/cli" messages) -gt 0 ]]
	[[ $(json_get "$d/cli" peer_messages) -eq $(json_get "$d/cli" messages) ]]
	[[ $(json_get "$d/cli" corrupt) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $(json_get "$d/srv" out_of_order) -eq 0 && $(json_get "$d/cli" rto_fired) -eq 0 ]]
	# epoch seconds, destination MAC: old before the change, new from 2 s on.
	tcpdump -r "$d/m2.pcap" -nn -e -tt 2>/dev/null | awk -v t="$t" -v old=$old -v new=$new '
		{ dst = $4; sub(/,$/, "", dst) }
		$1 < t && dst == old { before++ }
		$1 >= t && dst == new && first == "" { first = $1 - t }
		$1 >= t + 2 { after++; if (dst != new) late++ }
		END {
			printf "member 2: %d frames to the old MAC before the change; the first to the new: %s; %d from 2 s on, %d of them not to the new\n", before, first == "" ? "never" : sprintf("%.3f s after it", first), after, late
			exit !(before > 0 && first != "" && first <= 2 && after > 0 && late == 0)
		}'
	rm -rf "$d"	# the capture: tens of MB
}

# The bad ways to ask for CTP: one line each, exit 2, before touching a device.
test_ubperf_ctp_bad_command_lines() {
	local args err rc; err=$(mktemp)
	for args in "client --dev lo --peer 10.0.0.1 --mode ctp" \
		    "client --dev lo --peer 10.0.0.1 --native --mode ctp --size 5000" \
		    "client --dev lo --peer 10.0.0.1 --native --mode ctp --mtu 512 --size 513" \
		    "client --dev lo --peer 10.0.0.1 --native --mode ctp --ta rol" \
		    "client --dev lo --peer 10.0.0.1 --native --mode ctp --cc ldcp" \
		    "client --dev lo --peer 10.0.0.1 --native --mode ctp --cc caqm" \
		    "server --dev lo --native --mode ctp --cc caqm" \
		    "client --dev a,b,c,d,e --peer 10.0.0.1 --native --mode ctp" \
		    "client --dev a,a --peer 10.0.0.1 --native --mode ctp"; do
		rc=0
		"$BIN/ubperf" $args 2>"$err" || rc=$?
		echo "$args: exit $rc: $(cat "$err")"
		[[ $rc -eq 2 ]] || return 1
		[[ $(wc -l <"$err") -eq 1 ]] || return 1
	done
	# LDCP and CAQM need what CTP does not have; the line says so.
	[[ $("$BIN/ubperf" client --dev lo --peer 10.0.0.1 --native --mode ctp --cc ldcp 2>&1) == \
		*"needs transport acks"* ]]
}

# A server whose ports are one CTP entity refuses an RTP client in one line.
test_ubperf_ctp_entity_refuses_rtp() {
	local d; d=$(mktemp -d)
	ctp_topo 2
	start_server "$NS_CB" "$CTP_SRV_DEVS" "$d/srv" --native --mode ctp || return 1
	refute ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1 --peer $CTP_SRV --native --count 10 \
		2>"$d/cli.err"
	wait $SRV_PID || true
	cat "$d/cli.err" "$d/srv.err"
	[[ $(wc -l <"$d/cli.err") -eq 1 && $(wc -l <"$d/srv.err") -eq 1 ]]
	grep -q "CTP entity" "$d/srv.err"
}

# CTP relies on a lossless link: what the link loses is not resent. A bridge
# that drops a few UB frames makes the operations they carried (or answered)
# fail at the transaction timeout: the client stops with one line saying so
# (not ubperf's --stall watchdog: nothing hangs), and the drops really happened.
test_ubperf_ctp_loss_times_out_one_line() {
	local d; d=$(mktemp -d)
	ctp_topo 1
	ns_run "$NS_CT" nft -f - <<-EOF
	table bridge ctploss {
		counter dropped { }
		chain lossy {
			type filter hook forward priority 0;
			ether type 0x88b5 numgen random mod 100 < 5 counter name dropped drop
		}
	}
	EOF
	start_server "$NS_CB" ctpb1 "$d/srv" --native || return 1
	refute ns_run "$NS_CA" "$BIN/ubperf" client --dev ctpa1 --peer $CTP_SRV --native --mode ctp \
		--count 5000 --rto 128ms 2>"$d/cli.err"
	{ kill $SRV_PID; wait $SRV_PID; } 2>/dev/null || true
	cat "$d/cli.err"
	[[ $(wc -l <"$d/cli.err") -eq 1 ]]
	grep -q "operation failed: timeout" "$d/cli.err"
	[[ $(ns_run "$NS_CT" nft list counter bridge ctploss dropped | awk '/packets/ { print $2 }') -gt 0 ]]
}

# The switch's drops of UB that is not UBoE, this test's instance only (others
# may be attached in other namespaces at the same time).
ub2e_drops() {
	ns_run "$NS_SW" "$BIN/ubctl" stats --name "$NS_SW:sw-ub-sw-ip" >"$1" || return 1
	awk '$1 == "drop_not_uboe_payload" { s += $2; n++ } END { if (n != 1) exit 1; print s }' "$1"
}

# UBoE never carries CTP (docs/WIRE.md §1): a UB2E switch drops a native CTP frame
# rather than converting it, counted (drop_not_uboe_payload: UDP, not to 4792),
# and nothing leaves on its IP side. The client's operations time out.
test_ub2e_drops_native_ctp() {
	need_native_tools || return 1
	local d; d=$(mktemp -d)
	topo_double
	# Both switches: the in-band setup (UTP, a UBoE packet) crosses them.
	ns_run "$NS_SW" "$BIN/ubctl" ub2e attach --ub-dev sw-ub --ip-dev sw-ip --map 1=1 || return 1
	ns_run "$NS_SW2" "$BIN/ubctl" ub2e attach --ub-dev sw2-ub --ip-dev sw2-ip --map 1=1 || return 1
	# What leaves the switch on its IP side: no CTP, converted or not
	# (tagged or not); the setup's UBoE hellos (4792) are allowed.
	local ctp_filter="udp.port == 4794 || eth.type == 0x88b5 || vlan.etype == 0x88b5"
	nsenter --net="/run/netns/$NS_NET" tcpdump -i net-a --immediate-mode -w "$d/ip.pcap" -U 2>"$d/dump.err" &
	local dump=$!
	cap_listening "$d/dump.err" || true
	start_server "$NS_UBPU2" ubpu0 "$d/srv" --native || return 1
	local before; before=$(ub2e_drops "$d/st0") || { cat "$d/st0"; return 1; }
	refute ns_run "$NS_UBPU" "$BIN/ubperf" client --dev ubpu0 --peer "$UBPU2_IP4" --native --mode ctp \
		--count 20 --depth 4 --rto 128ms 2>"$d/cli.err"
	local after; after=$(ub2e_drops "$d/st1") || { cat "$d/st1"; return 1; }
	{ kill $SRV_PID; wait $SRV_PID; } 2>/dev/null || true
	sleep 0.3
	{ kill $dump; wait $dump; } 2>/dev/null || true
	cat "$d/cli.err"
	echo "switch drop_not_uboe_payload: $before -> $after"
	[[ $(wc -l <"$d/cli.err") -eq 1 ]]
	grep -q "timeout" "$d/cli.err"
	(( after - before >= 4 ))
	[[ $(tshark -n -r "$d/ip.pcap" -Y "$ctp_filter" 2>/dev/null | wc -l) -eq 0 ]] ||
		{ echo "CTP left the switch on its IP side"; tshark -n -r "$d/ip.pcap" -Y "$ctp_filter" | head; return 1; }
	# ... while the capture did see the setup cross (it is not blind).
	[[ $(tshark -n -r "$d/ip.pcap" -Y "udp.dstport == 4792" 2>/dev/null | wc -l) -gt 0 ]] ||
		{ echo "no setup hello seen on the IP side"; return 1; }
}

CTP_TESTS=(test_ubperf_ctp_native_send test_ubperf_ctp_native_write test_ubperf_ctp_native_read
	test_ubperf_ctp_native_ipv6_read_write
	test_ubperf_ctp_entity_lb_packet test_ubperf_ctp_entity_lb_flow
	test_ubperf_ctp_dcqcn_cnps_cut_the_rate test_ubperf_ctp_entity_member_unresolved_one_line
	test_ubperf_ctp_entity_member_follows_new_next_hop
	test_ubperf_ctp_bad_command_lines test_ubperf_ctp_entity_refuses_rtp
	test_ubperf_ctp_loss_times_out_one_line test_ub2e_drops_native_ctp)
