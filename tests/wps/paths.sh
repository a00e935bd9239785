# Sourced by tests/wps/run: member paths edited on a running ingress (path del, path set
# down/up and --weight, rule change, a bpftool edit), with their helpers.

# docs/WPS.md's bpftool example: a path's next hop changed in the pinned map, live.
test_bpftool_path_edit_applies_live() {
	needs tcpdump bpftool
	topo_wps 2
	wps_far_decap 2
	wps_attach 2
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 1 >/dev/null
	local ifx le d=/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0
	ifx=$(ip -n "$NS_GW" -o link show wan1 | cut -d: -f1)
	# All four bytes: a busy host's ifindexes pass 65535 (a veth made after many others).
	le=$(printf '%02x %02x %02x %02x' $((ifx & 255)) $((ifx >> 8 & 255)) $((ifx >> 16 & 255)) $((ifx >> 24 & 255)))
	bpftool map update pinned "$d/paths" key hex 01 00 00 00 \
		value hex $le dc 05 02 00 00 0c 00 99 02 00 00 0b 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
	bpftool map lookup pinned "$d/paths" key hex 01 00 00 00	# shown
	cap_start "$NS_GW" wan1 "$TMP/bt.pcap" -Q out ip6
	cap_ready
	ip netns exec "$NS_SITE" "$PY" -c "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(8): s.sendto(b'b' * 50, ('10.20.0.2', 6000))"
	cap_stop
	local n
	n=$(tcpdump -r "$TMP/bt.pcap" -nn -e 2>/dev/null | grep -c '> 02:00:00:0c:00:99' || true)
	echo "packets to the new next hop on wan1: $n"
	[[ $n -ge 3 ]]
}

# path del: the other paths keep their slot, hence their open groups, counters and weights.
test_path_del_keeps_the_other_paths() {
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	gw "${WPS_ATTACH[@]}"
	local i
	for i in 0 1 2; do
		gw wps ingress path add --dev wan0 --via "wan$i" --nexthop-mac "$(wps_far_mac "$i")" --weight $((i + 1))
	done
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 2
	for i in 0 1 2; do cap_start "$NS_GW" "wan$i" "$TMP/wan$i.pcap" -Q out ip6; done
	cap_start "$NS_GW" gw-s "$TMP/sent.pcap" -Q in udp
	cap_ready
	send() {	# send N: N packets of one UDP flow, one at a time, each through before the next
		ip netns exec "$NS_SITE" "$PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.10.0.2', 4444))
for i in range($1): s.sendto(b'd' * 100, ('10.20.0.2', 6000)); time.sleep(0.05)"
	}
	local s n=1
	send 1
	sprayed 1
	s=$(open_slot 2)
	# round-robin: after a group on slot 0 comes one on slot 1
	if [[ $s -eq 0 ]]; then send 2; n=3; sprayed 3; s=$(open_slot 2); fi
	echo "group open on slot $s; deleting slot 0 (via wan0) under it"
	[[ $s -ne 0 ]]
	gw wps ingress path del --dev wan0 --via wan0
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	# slots 1 and 2 are still wan1 and wan2, with their weights
	grep -Eq '^1 +wan1 +02:00:00:0c:00:02 2 ' "$TMP/list"
	grep -Eq '^2 +wan2 +02:00:00:0c:00:03 3 ' "$TMP/list"
	refute grep -q wan0 "$TMP/list"
	slot_cleared 0
	send 5
	sprayed $((n + 5))
	cap_stop
	# the open group ended on its own path (S and E once each, one path), nothing lost
	check --min-paths 2 --sent "$TMP/sent.pcap" "$TMP"/wan{0,1,2}.pcap
	paths_match_captures --partial "$TMP"/wan{1,2}.pcap
	# a path added again takes the free slot, with fresh counters
	gw wps ingress path add --dev wan0 --via wan0 --nexthop-mac "$(wps_far_mac 0)" --weight 7
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq '^0 +wan0 +02:00:00:0c:00:01 7 +[0-9]+ +up +0 +0 +0$' "$TMP/list"
}

# sprayed N: wait (at most 5 s) until N packets have been sprayed
sprayed() {
	local k
	for ((k = 0; k < 50; k++)); do [[ $(counter tx_sprayed) -ge $1 ]] && return 0; sleep 0.1; done
	echo "sprayed: $(counter tx_sprayed) packets, want $1"; return 1
}

# open_slot Q: the slot of the path whose packet count is not a multiple of Q, the open
# group's, when one flow of packet quantum Q is all that was sprayed
open_slot() {
	gw stats --json | "$PY" -c "import json,sys
i = [i for i in json.load(sys.stdin)['wps_ingress'] if i['instance'] == '$NS_GW:wan0'][0]
print([p['path'] for p in i['paths'] if p['packets'] % $1][0])" | num "the open group's slot"
}

# slot_cleared K: bpftool shows slot K of the gw instance's paths, path_stats (every CPU)
# and path_load all zero: path del leaves no entry behind.
slot_cleared() {
	local d="/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0" m
	for m in paths path_stats path_load; do
		bpftool -j map lookup pinned "$d/$m" key "$1" 0 0 0 | "$PY" -c "import json, sys
v = json.load(sys.stdin)
vals = [c['value'] for c in v['values']] if 'values' in v else [v['value']]
nonzero = [x for val in vals for x in val if int(x, 16)]
print('$m[$1]:', 'cleared' if not nonzero else 'NOT cleared: %s' % vals)
sys.exit(1 if nonzero else 0)" || return 1
	done
}

# path del under a group open on that path: its entries are cleared at once (bpftool), the
# group ends there (never moved to another path under its Group ID: the draft's "all packets
# of a group on one path"), and the flow's next packet opens the next group, S set, on the
# path left; nothing dropped.
test_path_del_under_an_open_group() {
	needs tcpdump bpftool
	topo_wps 2
	wps_far_decap 2
	gw "${WPS_ATTACH[@]}"
	local i
	for i in 0 1; do gw wps ingress path add --dev wan0 --via "wan$i" --nexthop-mac "$(wps_far_mac "$i")"; done
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 4
	for i in 0 1; do cap_start "$NS_GW" "wan$i" "$TMP/wan$i.pcap" -Q out ip6; done
	cap_ready
	send() {
		ip netns exec "$NS_SITE" "$PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.10.0.2', 4444))
for i in range($1): s.sendto(b'd' * 100, ('10.20.0.2', 6000)); time.sleep(0.05)"
	}
	send 1
	local k
	for ((k = 0; k < 50; k++)); do [[ $(counter tx_sprayed) -ge 1 ]] && break; sleep 0.1; done
	# the group is open on the path that carried the packet (slot K is wanK here)
	local s
	s=$(gw stats --json | "$PY" -c "import json,sys
i = [i for i in json.load(sys.stdin)['wps_ingress'] if i['instance'] == '$NS_GW:wan0'][0]
print([p['path'] for p in i['paths'] if p['packets'] == 1][0])")
	echo "group open on slot $s: deleting it"
	gw wps ingress path del --dev wan0 --via "wan$s"
	slot_cleared "$s"
	send 3
	for ((k = 0; k < 50; k++)); do [[ $(counter tx_sprayed) -ge 4 ]] && break; sleep 0.1; done
	cap_stop
	echo "tx_sprayed $(counter tx_sprayed), closed $(counter groups_closed_path_down)," \
		"drop_encap_failed $(counter drop_encap_failed), pass_no_path $(counter pass_no_path)"
	[[ $(counter tx_sprayed) -eq 4 && $(counter groups_closed_path_down) -eq 1 ]]
	[[ $(counter drop_encap_failed) -eq 0 && $(counter pass_no_path) -eq 0 ]]
	# on the wire: group G (its S) on the deleted path, then group G + 1 from S on the other
	"$PY" - "$TMP/wan$s.pcap" "$TMP/wan$((1 - s)).pcap" <<'PY'
import sys
from scapy.all import rdpcap, IPv6
pk = []
for path, f in enumerate(sys.argv[1:]):
    for p in rdpcap(f):
        raw = bytes(p[IPv6])
        if raw[6] != 60 or raw[42] != 0x81:	# not the WPS option in Destination Options (ND, MLD)
            continue
        opt = raw[40 + 2:40 + 16]	# the options header holds only the WPS option
        pk.append((float(p.time), path, opt[2], int.from_bytes(opt[10:12], "big")))
pk.sort()
print("packets (path, flags, group):", [(p, hex(fl), g) for _, p, fl, g in pk])
assert [p for _, p, _, _ in pk] == [0, 1, 1, 1], "first on the deleted path, the rest on the other"
g0 = pk[0][3]
assert [g for *_, g in pk] == [g0, g0 + 1, g0 + 1, g0 + 1], "the next Group ID from the second packet on"
S, E = 0x80, 0x40
assert [fl & (S | E) for _, _, fl, _ in pk] == [S, S, 0, 0], "S on each group's first packet, no E yet"
PY
}

# An operator sets a path down (path set ... down): no group starts on it, the flow's groups
# spread over the paths left, nothing is lost; up again, it takes groups again. Every port
# is watched: the down path carries nothing of what was sent meanwhile.
test_operator_sets_a_path_down_and_up() {
	needs tcpdump
	topo_wps 3
	wps_far_decap 3
	wps_attach 3 --max-delay-us 0 --ingress-port gw-s=42
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 3
	local i
	for i in 0 1 2; do cap_start "$NS_GW" "wan$i" "$TMP/wan$i.pcap" -Q out; done
	cap_start "$NS_GW" gw-s "$TMP/sent.pcap" -Q in udp
	cap_ready
	send() {	# send BYTE: 30 packets (10 groups) of one UDP flow, payload BYTE
		ip netns exec "$NS_SITE" "$PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.10.0.2', 4444))
for i in range(30): s.sendto(b'$1' * 100, ('10.20.0.2', 6000)); time.sleep(0.002)"
	}
	gw wps ingress path set --dev wan0 --via wan1 down
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq '^1 +wan1 .* down:admin ' "$TMP/list"
	send a
	gw wps ingress path set --dev wan0 --via wan1 up
	gw wps ingress path list --dev wan0 | has -E '^1 +wan1 .* up '
	send b
	cap_stop
	# ... and the Ingress Port ID is the one named for gw-s, where they came in
	check --min-paths 3 --sent "$TMP/sent.pcap" --ingress-port 42 "$TMP"/wan{0,1,2}.pcap
	"$PY" - "$TMP"/wan{0,1,2}.pcap <<'PY'
import sys
from scapy.all import rdpcap
for n, f in enumerate(sys.argv[1:]):
    inner = [bytes(p)[70:] for p in rdpcap(f) if len(bytes(p)) > 100]
    a, b = sum(i[-1:] == b"a" for i in inner), sum(i[-1:] == b"b" for i in inner)
    print(f"wan{n}: {a} packets sent while wan1 was down, {b} after")
    assert n != 1 or a == 0, "a group started on the path set down"
    assert a + b > 0
PY
}

# path set --weight and rule change act on the running ingress: one flow's single-packet
# groups split 1:3 over two paths of weights 1 and 3 under --sched weighted, then 1:1
# once the rule is changed to rr; wrong input is exit 2 or 3 and changes nothing.
test_path_weight_and_rule_change_apply_live() {
	needs
	topo_wps 2
	wps_far_decap 2
	wps_attach 2 --max-delay-us 0
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 1 --sched weighted
	gw wps ingress path set --dev wan0 --via wan1 --weight 3
	gw wps ingress path list --dev wan0 | tee "$TMP/list"
	grep -Eq '^1 +wan1 +[0-9a-f:]+ +3 ' "$TMP/list"
	grep -Eq '^0 +wan0 +[0-9a-f:]+ +1 ' "$TMP/list"
	send() {	# send N: N packets of one UDP flow
		ip netns exec "$NS_SITE" "$PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.10.0.2', 4445))
for i in range($1): s.sendto(b'w' * 100, ('10.20.0.2', 6000)); time.sleep(0.002)"
	}
	groups() {	# groups SLOT: groups sprayed on that path so far
		gw stats --json | "$PY" -c "import json, sys
i = [i for i in json.load(sys.stdin)['wps_ingress'] if i['instance'] == '$NS_GW:wan0'][0]
print([p['groups'] for p in i['paths'] if p['path'] == $1][0])" | num "groups on path $1"
	}
	send 40
	local g0 g1
	g0=$(groups 0) g1=$(groups 1)
	echo "weighted 1:3: $g0 and $g1 groups"
	[[ $g0 -eq 10 && $g1 -eq 30 ]]
	gw wps ingress rule change --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 1 --sched rr
	gw wps ingress rule list --dev wan0 | tee "$TMP/rules"
	[[ $(wc -l <"$TMP/rules") -eq 1 ]]
	grep -q -- "--sched rr" "$TMP/rules"
	send 40
	echo "then rr: $(($(groups 0) - g0)) and $(($(groups 1) - g1)) groups"
	[[ $(($(groups 0) - g0)) -eq 20 && $(($(groups 1) - g1)) -eq 20 ]]
	# Refusals: one line, exit 2 or 3, nothing changed.
	local before after err rc
	before=$(gw wps ingress path list --dev wan0 | awk '{ print $1, $2, $4, $6 }'; gw wps ingress rule list --dev wan0)
	for args in "path set --dev wan0 --via wan1 --weight 0" "path set --dev wan0 --via wan1 --weight 256 up" \
		"path set --dev wan0 --via wan1 sideways" "path set --dev wan0 --via wan1" \
		"rule change --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 0" \
		"rule change --dev wan0 --dst 10.20.0.0/24 --proto udp --sched rr" \
		"path set --dev wan0 --via lo --weight 2" "rule change --dev wan0 --dst 10.30.0.0/24 --quantum 2"; do
		# shellcheck disable=SC2086
		err=$(gw wps ingress $args 2>&1 >/dev/null) && rc=0 || rc=$?
		echo "$args: exit $rc: $err"
		[[ ($rc -eq 2 || $rc -eq 3) && $(wc -l <<<"$err") -eq 1 && $err == ubctl:* ]]
	done
	after=$(gw wps ingress path list --dev wan0 | awk '{ print $1, $2, $4, $6 }'; gw wps ingress rule list --dev wan0)
	[[ $before == "$after" ]]
}
