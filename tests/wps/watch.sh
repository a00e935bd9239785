# Sourced by tests/wps/run: the watch agent's tests (ubctl wps ingress watch: paths that
# live and die, next hops followed, Packet Too Big), with their helpers.

# ---- the watch agent: paths that live and die ----------------------------------------

# watch_start [OPTION...]: ubctl wps ingress watch on wan0 (with OPTIONs) in the background
# (WATCH_PID), its lines in $TMP/watch.out, once it watches.
watch_start() {
	# nsenter itself (it execs ubctl), not ns_run: a function run in the background is a
	# subshell, and WATCH_PID would be that shell's, not the agent's.
	nsenter --net="/run/netns/$NS_GW" "$UBCTL" wps ingress watch --dev wan0 "$@" >"$TMP/watch.out" 2>&1 &
	WATCH_PID=$!
	watch_saw 'watching the paths' 0 5000 >/dev/null
}

# watch_saw TEXT N MS: wait (at most MS) until the watch log holds more than N lines with
# TEXT (a fixed string); prints how many ms that took, counted from T0 (ms, as
# $(now_ms)) if set, else from the call. Fails when it does not come, saying so on stderr.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
watch_saw() {
	local t0=${T0:-$(now_ms)} n
	while :; do
		n=$(grep -cF "$1" "$TMP/watch.out" || true)
		if [[ $n -gt $2 ]]; then echo $(($(now_ms) - t0)); return 0; fi
		if [[ $(($(now_ms) - t0)) -gt $3 ]]; then
			# on stderr: the caller takes stdout ($(watch_saw ...)), the test's log keeps this
			{ echo "watch did not say '$1' within $3 ms:"; cat "$TMP/watch.out"; } >&2
			return 1
		fi
		sleep 0.02
	done
}

# out_within_1s WHAT LINE CMD...: run CMD (a path's loss); the watch says LINE (it has the
# path out of rotation) within 1 s of it, as docs/WPS.md promises: waited for up to 3 s, so
# that one late says how late (and the watch's lines). WHAT names the loss in the line that
# gives the time.
out_within_1s() {
	local what=$1 line=$2 t0 ms
	shift 2
	t0=$(now_ms)
	"$@"
	ms=$(T0=$t0 watch_saw "$line" 0 3000)
	echo "$what: out of rotation after $ms ms"
	if [[ $ms -ge 1000 ]]; then cat "$TMP/watch.out"; return 1; fi
}

# watch_three_paths NEXTHOP0 NEXTHOP1 NEXTHOP2 [OPTION...]: the gw instance on wan0 (no group
# extended at the in-flight bound), path N via wanN to NEXTHOPN (a MAC: --nexthop-mac; an
# address: --nexthop), one UDP rule of quantum 3, the watch agent started (with OPTIONs), and
# wan0..wan2 and the site's UDP into gw-s captured from then on.
watch_three_paths() {
	local i nh how
	gw "${WPS_ATTACH[@]}" --max-delay-us 0 >/dev/null
	for i in 0 1 2; do
		nh=${*:i+1:1} how=--nexthop
		[[ ! $nh =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || how=--nexthop-mac
		gw wps ingress path add --dev wan0 --via "wan$i" "$how" "$nh"
	done
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 3
	watch_start "${@:4}"
	for i in 0 1 2; do cap_start "$NS_GW" "wan$i" "$TMP/wan$i.pcap" -Q out; done
	cap_start "$NS_GW" gw-s "$TMP/sent.pcap" -Q in udp
	cap_ready
}

# udp_phase SPORT [FIRST END]: 30 packets (10 groups of 3) of one UDP flow from port SPORT;
# or its packets FIRST..END-1 (the payload: the packet's number, 100 times)
udp_phase() {
	ip netns exec "$NS_SITE" "$PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.10.0.2', $1))
for i in range(${2:-0}, ${3:-30}): s.sendto(bytes([i]) * 100, ('10.20.0.2', 6000)); time.sleep(0.002)"
}

# phases_on_paths PORT[@N]...: from the captures of wan0..wan2, the packets of each phase's
# flow (its source port) per path: all 30 on the wire once; PORT@N (wanN was down): none on
# wanN, and its groups on both other paths; PORT alone: on all three.
phases_on_paths() {
	"$PY" - "$TMP" "$@" <<'PY'
import sys
from scapy.all import rdpcap
d = sys.argv[1]
phases = [(int(a.split("@")[0]), int(a.split("@")[1]) if "@" in a else None) for a in sys.argv[2:]]
per = {}
for n in range(3):
    for p in rdpcap(f"{d}/wan{n}.pcap"):
        raw = bytes(p)
        if len(raw) < 70 + 28 or raw[12:14] != b"\x86\xdd" or raw[56] != 0x81:
            continue
        sport = int.from_bytes(raw[70 + 20:70 + 22], "big")
        per.setdefault(sport, [0, 0, 0])[n] += 1
for port, dpath in phases:
    c = per.get(port, [0, 0, 0])
    print(f"flow from port {port}: packets on wan0..wan2 {c}")
    assert sum(c) == 30, f"{sum(c)} of 30 on the wire"
    if dpath is not None:
        assert c[dpath] == 0, f"a group started on wan{dpath} while it was down"
        assert all(c[i] for i in range(3) if i != dpath), "the groups did not spread over the paths left"
    else:
        assert all(c), "a path up took no group"
PY
}

# A path whose device loses its carrier (the far end's port down) is out of rotation within
# 1 s of the watch agent seeing the link event: no group starts on it, the flow's groups go
# over the other two, nothing is lost; its port back up, the next hop (--nexthop, IPv4,
# resolved through ARP again: the kernel flushed it) answers and the path takes groups again.
# The same for a device set down on the gateway itself.
test_watch_link_loss_and_recovery() {
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	ns_addr "$NS_GW" wan2 10.92.0.1/24
	ns_addr "$NS_FAR" p2 10.92.0.2/24
	watch_three_paths "$(wps_far_mac 0)" "$(wps_far_mac 1)" 10.92.0.2
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq "^2 +wan2 +10.92.0.2=$(wps_far_mac 2) .* up " "$TMP/list"
	local ms
	udp_phase 5001
	out_within_1s "carrier lost" 'path 2 via wan2: down (link' ip -n "$NS_FAR" link set p2 down
	gw wps ingress path list --dev wan0 | has -E '^2 +wan2 .* down:link[, ]'
	udp_phase 5002
	T0=$(now_ms)
	ip -n "$NS_FAR" link set p2 up
	ms=$(T0=$T0 watch_saw 'path 2 via wan2: next hop up' 0 5000)
	echo "carrier back: in rotation again after $ms ms"
	udp_phase 5003
	out_within_1s "device down" 'path 1 via wan1: down (link' ip -n "$NS_GW" link set wan1 down
	udp_phase 5004
	cap_stop
	cat "$TMP/watch.out"
	phases_on_paths 5001 5002@2 5003 5004@1
	check --min-paths 3 --sent "$TMP/sent.pcap" "$TMP"/wan{0,1,2}.pcap
}

# A path loses its carrier under a group open on it (a flow of 31 packets, quantum 3: its
# eleventh group holds one packet): once the watch has it out of rotation (within 1 s), the
# flow's next packet opens a new group, S set, under the next Group ID, on a path that is up; the
# old group ends where it was, without its E (docs/WPS.md, "Paths that go down", as under `path
# del`), and no packet of its Group ID leaves on another path; nothing more leaves on the dead
# path. Checked on every port's capture, every packet on the wire once. The rest of the flow is
# sent once the watch has said so: the docs promise a path out of rotation within 1 s, nothing
# of the packets a group sends on it before then.
test_watch_link_loss_mid_group() {
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	# the flow is not renewed under a new Flow ID while the test waits between its halves
	wps_attach 3 --max-delay-us 0 --idle-timeout 60s
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 3
	watch_start
	local i s
	for i in 0 1 2; do cap_start "$NS_GW" "wan$i" "$TMP/wan$i.pcap" -Q out; done
	cap_ready
	udp_phase 5005 0 31
	sprayed 31
	s=$(open_slot 3)
	echo "group open on path $s (wan$s): its far port down"
	out_within_1s "carrier lost mid-group" "path $s via wan$s: down (link" ip -n "$NS_FAR" link set "p$s" down
	udp_phase 5005 31 36
	sprayed 36
	cap_stop
	"$PY" - "$TMP" "$s" <<'PY'
import sys
from scapy.all import rdpcap
d, dead = sys.argv[1], int(sys.argv[2])
pk = []    # (time, path, number, flags, flow, group)
for n in range(3):
    for p in rdpcap(f"{d}/wan{n}.pcap"):
        raw = bytes(p)
        if len(raw) < 70 + 28 or raw[12:14] != b"\x86\xdd" or raw[56] != 0x81:
            continue
        opt = raw[56:70]
        pk.append((float(p.time), n, raw[-1], opt[2], int.from_bytes(opt[4:6], "big"), int.from_bytes(opt[10:12], "big")))
pk.sort()
print("(path, number, S/E, group):", [(n, i, "S" * (fl >> 7) + "E" * (fl >> 6 & 1), g) for _, n, i, fl, _, g in pk])
assert sorted(i for _, _, i, *_ in pk) == list(range(36)), "not every packet on the wire once"
by = {i: (n, fl, fid, g) for _, n, i, fl, fid, g in pk}
path, _, fid, old = by[30]
assert path == dead, f"packet 30 on wan{path}, not on the path set down (wan{dead})"
assert by[30][1] & 0x80 and not by[30][1] & 0x40, "packet 30 opens its group, and does not end it"
n, fl, fid2, new = by[31]
print(f"packet 30: wan{dead}, group {old}; the next (31): wan{n}, group {new}, flags {fl:#x}")
assert n != dead, "the next packet left on the dead path"
assert fl & 0x80 and new == (old + 1) & 0xffff and fid2 == fid, "the next packet does not open a new group of the flow (S, the next Group ID)"
assert all(i < 31 for _, n, i, *_ in pk if n == dead), "a packet left on the dead path after its carrier went"
assert all(n == dead for _, n, _, _, _, g in pk if g == old), "a packet of the old Group ID left on another path"
PY
	echo "groups_closed_path_down $(counter groups_closed_path_down)"
	[[ $(counter groups_closed_path_down) -eq 1 ]]
}

# A next hop (--nexthop, IPv6) that stops answering (the far end loses its address: neighbour
# solicitations go unanswered) is out of rotation within 1 s, though its link stays up: the
# agent has the kernel probe it whenever it has not confirmed for 200 ms, and takes it out 500
# ms after its last answer (300-700 ms after it stopped, as that answer was up to 300 ms old,
# and a 100 ms tick sees it). It answers again: back in rotation, by itself.
test_watch_next_hop_stops_answering() {
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	ns_addr "$NS_GW" wan1 fd91::1/64
	ns_addr "$NS_FAR" p1 fd91::2/64
	watch_three_paths "$(wps_far_mac 0)" fd91::2 "$(wps_far_mac 2)"
	local ms
	udp_phase 5001
	out_within_1s "next hop silent" 'path 1 via wan1: down (next hop' ip -n "$NS_FAR" addr del fd91::2/64 dev p1
	ip -n "$NS_GW" link show wan1 | has 'state UP'
	gw wps ingress path list --dev wan0 | has -E '^1 +wan1 .* down:neigh '
	udp_phase 5002
	T0=$(now_ms)
	ns_addr "$NS_FAR" p1 fd91::2/64
	ms=$(T0=$T0 watch_saw 'path 1 via wan1: next hop up' 0 5000)
	echo "next hop answers again: in rotation after $ms ms"
	udp_phase 5003
	cap_stop
	cat "$TMP/watch.out"
	phases_on_paths 5001 5002@1 5003
	check --min-paths 3 --sent "$TMP/sent.pcap" "$TMP"/wan{0,1,2}.pcap
}

# watch_next_hop_fd91 [OPTION...]: the gw instance on wan0 with two paths, 0 via wan0
# (--nexthop-mac), 1 via wan1 to the next hop fd91::2 (--nexthop, the far's p1), and the
# watch agent started (with OPTIONs).
watch_next_hop_fd91() {
	topo_wps 2
	ns_addr "$NS_GW" wan1 fd91::1/64
	ns_addr "$NS_FAR" p1 fd91::2/64
	gw "${WPS_ATTACH[@]}" --max-delay-us 0 >/dev/null
	gw wps ingress path add --dev wan0 --via wan0 --nexthop-mac "$(wps_far_mac 0)"
	gw wps ingress path add --dev wan0 --via wan1 --nexthop fd91::2
	watch_start "$@"
}

# A next hop silent from its MAC change on (it announces the new MAC, unsolicited Neighbour
# Advertisement, and loses its address at once) is out of rotation within 1 s all the same: the
# change counts as it speaking, not as an answer to come; the agent asks at once and takes it
# out when that question has waited --dead less --probe (the kernel dates the entry confirmed
# 60 s ago, so there is no confirmation to wait --dead from).
test_watch_next_hop_silent_after_its_mac_change() {
	needs
	watch_next_hop_fd91
	ip netns exec "$NS_FAR" sysctl -qw net.ipv6.conf.p1.ndisc_notify=1
	sleep 0.5
	local new=02:00:00:0d:00:02
	new_mac_then_silent() {
		ip -n "$NS_FAR" link set p1 address "$new"
		ip -n "$NS_FAR" addr del fd91::2/64 dev p1
	}
	out_within_1s "silent from its MAC change" 'path 1 via wan1: down (next hop' new_mac_then_silent
	ip -n "$NS_GW" -s neigh show fd91::2 dev wan1
	cat "$TMP/watch.out"
	# The change was seen (the unsolicited NA arrived), before it went down: else this is only
	# a next hop that stopped answering.
	grep -Fx -e "path 1 via wan1: next hop at $new" -e 'path 1 via wan1: down (next hop does not answer)' \
		"$TMP/watch.out" >"$TMP/order"
	diff <(printf '%s\n' "path 1 via wan1: next hop at $new" 'path 1 via wan1: down (next hop does not answer)') "$TMP/order"
	gw wps ingress path list --dev wan0 | has -E '^1 +wan1 .* down:neigh '
}

# A next hop whose MAC changes and changes back while the agent is stopped (400 ms) finds the
# path's MAC unchanged, but the kernel's confirmation gone back 60 s: that too counts as it
# speaking, so it is asked at once and never out of rotation. (Taken for unanswered since the
# last question, it was: "down (next hop does not answer)".)
test_watch_next_hop_mac_back_under_a_late_agent() {
	needs
	watch_next_hop_fd91
	ip netns exec "$NS_FAR" sysctl -qw net.ipv6.conf.p1.ndisc_notify=1
	sleep 0.5
	kill -STOP $WATCH_PID
	ip -n "$NS_FAR" link set p1 address 02:00:00:0d:00:02
	ip -n "$NS_FAR" link set p1 address "$(wps_far_mac 1)"
	sleep 0.4
	ip -n "$NS_GW" -s neigh show fd91::2 dev wan1
	kill -CONT $WATCH_PID
	sleep 1
	kill -0 $WATCH_PID
	cat "$TMP/watch.out"
	if has 'path 1 via wan1: down' "$TMP/watch.out"; then return 1; fi
	gw wps ingress path list --dev wan0 | has -E "^1 +wan1 +fd91::2=$(wps_far_mac 1) .* up "
}

# An agent scheduled late (stopped 1.5 s, as a loaded host may) finds a healthy next hop silent
# for longer than --dead: it asks before it judges, the next hop answers, and it is never out
# of rotation. (Judged on silence alone it was out at once: "down (next hop does not answer)",
# then up again a tick later.) No traffic meanwhile, so only the agent's probes confirm it.
test_watch_late_agent_keeps_a_healthy_next_hop() {
	needs
	watch_next_hop_fd91
	sleep 0.5
	local i
	for i in 1 2 3; do
		kill -STOP $WATCH_PID
		sleep 1.5
		ip -n "$NS_GW" neigh show fd91::2 dev wan1
		kill -CONT $WATCH_PID
		sleep 0.6
	done
	kill -0 $WATCH_PID	# the agent is alive: its silence is not the pass
	cat "$TMP/watch.out"
	if has 'path 1 via wan1: down' "$TMP/watch.out"; then return 1; fi
	gw wps ingress path list --dev wan0 | has -E '^1 +wan1 .* up '
}

# A next hop (--nexthop) whose MAC changes is followed (docs/WPS.md: "a new MAC is written into
# the path as the neighbour changes"): the far ports get new addresses and announce them as a
# host does (arp_notify: a gratuitous ARP for the IPv4 next hop; ndisc_notify: an unsolicited
# Neighbour Advertisement for the IPv6 one), the gateway's kernel updates its neighbour entries,
# and the agent, at that event, writes each new MAC into its path: within 1 s the watch says so,
# path list shows it, and every packet that leaves on that port from then on is addressed to it
# (each captured port: the flow before the change to the old MAC only, the flow after to the new
# only). The paths stay in rotation throughout: no ": down" line. The kernel dates a neighbour
# whose MAC changed as confirmed 60 s ago (twice base_reachable_time), so the agent's last
# question, answered, counted as unanswered since it was asked; the agent now asks afresh at the
# change. mac_change_followed STOP [OPTION...]: the agent run with OPTIONs, and stopped (SIGSTOP)
# for STOP seconds from just before the change (0: not).
mac_change_followed() {
	local stop=$1
	shift
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	ns_addr "$NS_GW" wan1 fd91::1/64
	ns_addr "$NS_FAR" p1 fd91::2/64
	ns_addr "$NS_GW" wan2 10.92.0.1/24
	ns_addr "$NS_FAR" p2 10.92.0.2/24
	ip netns exec "$NS_FAR" sysctl -qw net.ipv6.conf.p1.ndisc_notify=1 net.ipv4.conf.p2.arp_notify=1
	watch_three_paths "$(wps_far_mac 0)" fd91::2 10.92.0.2 "$@"
	local i ms new1=02:00:00:0d:00:02 new2=02:00:00:0d:00:03
	udp_phase 5001
	# all of it out before the change: a packet still queued then would leave to the new MAC
	sprayed 30
	[[ $stop == 0 ]] || kill -STOP $WATCH_PID
	T0=$(now_ms)
	ip -n "$NS_FAR" link set p1 address "$new1"
	ip -n "$NS_FAR" link set p2 address "$new2"
	[[ $stop == 0 ]] || { sleep "$stop"; kill -CONT $WATCH_PID; }
	for i in "1 via wan1: next hop at $new1" "2 via wan2: next hop at $new2"; do
		ms=$(T0=$T0 watch_saw "path $i" 0 3000)
		echo "path $i after $ms ms"
		[[ $ms -lt 1000 ]]
	done
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq "^1 +wan1 +fd91::2=$new1 .* up " "$TMP/list"
	grep -Eq "^2 +wan2 +10.92.0.2=$new2 .* up " "$TMP/list"
	udp_phase 5002
	cap_stop
	cat "$TMP/watch.out"
	if grep -F ': down' "$TMP/watch.out"; then return 1; fi
	phases_on_paths 5001 5002
	check --min-paths 3 --sent "$TMP/sent.pcap" "$TMP"/wan{0,1,2}.pcap
	"$PY" - "$TMP" "$(wps_far_mac 1)" "$new1" "$(wps_far_mac 2)" "$new2" <<'PY'
import sys
from scapy.all import rdpcap
d, macs = sys.argv[1], sys.argv[2:]
for n in (1, 2):
    old, new = macs[2 * n - 2], macs[2 * n - 1]
    to = {5001: set(), 5002: set()}
    for p in rdpcap(f"{d}/wan{n}.pcap"):
        raw = bytes(p)
        if len(raw) < 70 + 28 or raw[12:14] != b"\x86\xdd" or raw[56] != 0x81:
            continue
        to[int.from_bytes(raw[90:92], "big")].add(raw[:6].hex(":"))
    print(f"wan{n}: the flow before the change to {sorted(to[5001])}, after it to {sorted(to[5002])}")
    assert to[5001] == {old} and to[5002] == {new}, f"want {old} before and {new} after"
PY
}

# Its own looks 30 s apart (--tick 30s), the agent finds the new MACs only at the neighbour
# events (its 100 ms tick would find them within the bound without them); its probing on the
# same scale (--probe 29s --dead 60s: once 30 s, shorter than --dead less --probe, 31 s).
test_watch_next_hop_mac_change_is_followed() {
	mac_change_followed 0 --tick 30s --probe 29s --dead 60s
}

# The defaults, the agent scheduled late at the change (stopped 400 ms, as a loaded host may): its
# last question, answered up to 300 ms before, is over --dead less --probe old when it looks
# again. (Taken for unanswered, it was: "down (next hop does not answer)", then up a tick later.)
test_watch_next_hop_mac_change_under_a_late_agent() {
	mac_change_followed 0.4
}

# The longest tick the defaults allow (--tick 299ms: one tick from a lost probe to the next,
# shorter than --dead less --probe): a look that has not asked (--probe not yet passed since it last did) is followed by one that judges. (Taken for
# unanswered since it was asked, the question was: "down (next hop does not answer)".)
test_watch_next_hop_mac_change_at_the_longest_tick() {
	mac_change_followed 0 --tick 299ms
}

# At the longest tick the defaults allow (--tick 299ms: a question lost at a tick is asked
# again at the next, judged unanswered 299 ms, 1 ms short of --dead less --probe), a next hop
# that loses one answer stays in rotation, three times over: the far end's next Neighbour
# Advertisement dropped each time (nft, a quota of one). The agent's own question raises a
# neighbour event (the entry set to PROBE), which must not move the ticks, and the silence
# judged must not include the agent's own lateness of a millisecond: else 300 ms or more,
# "down (next hop does not answer)", then up a tick later (docs/WPS.md has the history).
test_watch_next_hop_loses_one_answer_at_the_longest_tick() {
	needs nft
	watch_next_hop_fd91 --tick 299ms
	sleep 1
	local i n
	for i in 1 2 3; do
		ip netns exec "$NS_FAR" nft -f - <<'NFT'
table inet lose_one
delete table inet lose_one
table inet lose_one {
	chain out {
		type filter hook output priority 0;
		oifname "p1" icmpv6 type nd-neighbor-advert quota until 100 bytes counter drop
	}
}
NFT
		# the next answer (to a probe within a tick), then time for the agent to judge
		for n in $(seq 50); do
			ip netns exec "$NS_FAR" nft list table inet lose_one | has 'counter packets 1 ' && break
			sleep 0.02
		done
		ip netns exec "$NS_FAR" nft list table inet lose_one | has 'counter packets 1 '
		sleep 1
	done
	kill -0 $WATCH_PID
	ip -n "$NS_GW" -s neigh show fd91::2 dev wan1
	cat "$TMP/watch.out"
	if has 'path 1 via wan1: down' "$TMP/watch.out"; then return 1; fi
	gw wps ingress path list --dev wan0 | has -E '^1 +wan1 .* up '
}

# Packet Too Big from the WAN about a packet the ingress sent lowers the MTU of the path its
# group went on (the watch agent; the flow's record of its groups' paths), and is relayed
# to the inner sender as the ICMP of its family (RFC 2473 §7.1: IPv4 with DF, Fragmentation
# Needed; IPv6, Packet Too Big; MTU less 56), rate-limited (10 a second, bursts of 10: one
# bucket for both families, checked with a burst of 40 that alternates them). From then on the
# program answers what no longer fits that MTU itself.
test_watch_packet_too_big_lowers_the_path_mtu_and_is_relayed() {
	needs tcpdump
	topo_wps 2
	wps_far_decap 2
	wps_attach 2 --max-delay-us 0
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 4
	gw wps ingress rule add --dev wan0 --dst fd20::/64 --proto udp --quantum 4
	watch_start
	cap_start "$NS_GW" wan1 "$TMP/wan1.pcap" -Q out ip6
	cap_start "$NS_SITE" s0 "$TMP/site.pcap" -Q in icmp or icmp6
	cap_ready
	ip netns exec "$NS_SITE" "$PY" -c "import socket
for fam, dst in ((socket.AF_INET, '10.20.0.2'), (socket.AF_INET6, 'fd20::2')):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, 10, 2)	# IP_PMTUDISC_DO: DF set
    for i in range(8): s.sendto(bytes([i]) * 1000, (dst, 6000))"
	sleep 0.3
	# a router on path 1 (wan1) answers one packet of each flow with Packet Too Big, MTU 1400
	local mac1
	mac1=$(ip -n "$NS_GW" -o link show wan1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
	ptb() {	# ptb N: N pairs of Packet Too Big, one about the first IPv4-inner packet seen on wan1, one about the first IPv6-inner
		ip netns exec "$NS_FAR" "$PY" - "$TMP/wan1.pcap" "$1" "$mac1" <<'PY'
import sys
from scapy.all import rdpcap, sendp, Ether, IPv6, Raw
from scapy.layers.inet6 import ICMPv6PacketTooBig
pk = [bytes(p) for p in rdpcap(sys.argv[1]) if bytes(p)[12:14] == b"\x86\xdd" and bytes(p)[56] == 0x81]
v4 = [p for p in pk if p[54] == 4][0]
v6 = [p for p in pk if p[54] == 41][0]
m = lambda q: Ether(src="02:00:00:0c:00:02", dst=sys.argv[3]) / IPv6(src="fd91::9", dst="fd00:a::1") / ICMPv6PacketTooBig(mtu=1400) / Raw(q[14:14 + 1232])
sendp([m(v4), m(v6)] * int(sys.argv[2]), iface="p1", verbose=False)
PY
	}
	cap_stop
	cap_start "$NS_SITE" s0 "$TMP/site.pcap" -Q in icmp or icmp6
	cap_ready
	ptb 1
	watch_saw 'path 1 via wan1: path MTU 1400' 0 3000 >/dev/null
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq '^1 +wan1 .* 1400 ' "$TMP/list"
	# The program's own answer now, for a packet that fits 1500 but not 1400 once encapsulated
	# (sent raw: the site's kernel has learned 1344 from the relay and would not send it).
	ip netns exec "$NS_SITE" "$PY" -c "from scapy.all import Ether, IP, UDP, Raw, sendp
sendp(Ether(src='$WPS_SITE_MAC', dst='$WPS_GWS_MAC') / IP(src='10.10.0.2', dst='10.20.0.2', flags='DF') /
      UDP(sport=4444, dport=6001) / Raw(b'x' * 1360), iface='s0', verbose=False)"
	# The bucket full again (10 a second: the first two back 0.2 s on), then a burst of 40 that
	# alternates the families: a bucket each, or none for one, would relay more than 10 at once.
	sleep 0.3
	ptb 20
	sleep 0.3
	cap_stop
	kill "$WATCH_PID"
	wait "$WATCH_PID" || true
	WATCH_PID=
	cat "$TMP/watch.out"
	"$PY" - "$TMP/site.pcap" <<'PY'
import sys
from scapy.all import rdpcap, IP, ICMP, IPv6
from scapy.layers.inet6 import ICMPv6PacketTooBig
v4 = [p for p in rdpcap(sys.argv[1]) if p.haslayer(ICMP) and p[ICMP].type == 3 and p[ICMP].code == 4]
v6 = [p for p in rdpcap(sys.argv[1]) if p.haslayer(ICMPv6PacketTooBig)]
print(f"at the site: {len(v4)} Fragmentation Needed (MTU {sorted({p[ICMP].nexthopmtu for p in v4})}), "
      f"{len(v6)} Packet Too Big (MTU {sorted({p[ICMPv6PacketTooBig].mtu for p in v6})})")
assert v6 and all(p[ICMPv6PacketTooBig].mtu == 1344 and p[IPv6].dst == "fd10::2" for p in v6)
assert all(p[ICMP].nexthopmtu == 1344 and p[IP].dst == "10.10.0.2" for p in v4)
quoted = [bytes(p[ICMP].payload) for p in v4]
relayed = [q for q in quoted if q[22:24] != b"\x17\x71"]   # the UDP flows to 6000 (the PTB's)
own = [q for q in quoted if q[22:24] == b"\x17\x71"]       # to 6001: the program's answer
assert len(own) == 1, "the program did not answer at the learned MTU"
# The burst found the bucket full: its first 10, half of either family, at least, the first
# pair's one beside. (Its upper bound is the rate's, over both families, below.)
assert 6 <= len(relayed), f"{len(relayed)} IPv4-inner relayed of 21: want the first and 5 of the burst"
assert 6 <= len(v6), f"{len(v6)} IPv6-inner relayed of 21: want the first and 5 of the burst"
# Every relay of either family takes from the one bucket: in no stretch of time [a, b] between
# two relays more than the burst and what refills meanwhile (10 a second), one more for the
# capture's timestamps beside the agent's clock.
times = sorted(float(p.time) for p in v6 + [p for p, q in zip(v4, quoted) if q[22:24] != b"\x17\x71"])
worst = max((j - i + 1 - 10 * (times[j] - times[i]), i, j) for i in range(len(times)) for j in range(i, len(times)))
print(f"{len(times)} relays in {times[-1] - times[0]:.2f} s; most over the refill in one stretch: {worst[0]:.1f}"
      f" ({worst[2] - worst[1] + 1} relays in {times[worst[2]] - times[worst[1]]:.3f} s)")
assert worst[0] <= 10 + 1, "more relays than the burst of 10 and the rate of 10 a second allow"
PY
	grep -q 'Packet Too Big 42 received, .* relayed, [1-9][0-9]* not (rate)' "$TMP/watch.out"
}
