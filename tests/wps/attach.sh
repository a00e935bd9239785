# Sourced by tests/wps/run: attach, detach and configuration (offloads, the detour's RPS,
# tcx links, --config, refusals), with their helpers.

# An instance whose cfg has another layout (attached by another ubctl) is refused
# in one line, not read as garbage; stats leave its paths out; detach still works.
test_cfg_of_another_layout_is_refused() {
	needs bpftool
	topo_wps 2
	wps_attach 2
	local d=/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0 hex out
	hex=$(bpftool -j map lookup pinned "$d/cfg" key hex 00 00 00 00 | "$PY" -c "import json,sys
v = [int(b, 16) for b in json.load(sys.stdin)['value']]
v[0:4] = [1, 0, 0, 0]
print(' '.join('%02x' % b for b in v))")
	# shellcheck disable=SC2086
	bpftool map update pinned "$d/cfg" key hex 00 00 00 00 value hex $hex
	out=$(gw wps ingress path list --dev wan0 2>&1) && return 1
	echo "$out"
	[[ $(wc -l <<<"$out") -eq 1 ]]
	grep -q "another ubctl (cfg layout 1" <<<"$out"
	out=$(gw stats)
	grep -q "paths: not shown, attached by another ubctl" <<<"$out"
	gw wps ingress detach --dev wan0 | has detached
}

# Every refusal: one line, non-zero exit, nothing changed.
test_ubctl_refuses_bad_configuration() {
	needs bpftool
	topo_wps 2
	wps_attach 2
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp --quantum 16
	local before after
	before=$(gw wps ingress rule list --dev wan0; gw wps ingress path list --dev wan0)
	refuse() {
		local out rc=0
		# (timeout: a watch agent that is not refused runs until stopped)
		out=$(timeout 5 nsenter --net="/run/netns/$NS_GW" "$UBCTL" "$@" 2>&1) || rc=$?
		echo "\$ ubctl $* -> [$rc] $out"
		out_last=$out
		[[ $rc -ne 0 && $(printf '%s\n' "$out" | wc -l) -eq 1 && $out == ubctl:* ]]
	}
	refuse wps ingress attach --dev nosuchdev --node-id 1 --src fd00::1 --egress-node-id 2 --egress-addr fd00::2
	refuse wps ingress attach --dev wan1 --node-id 70000 --src fd00::1 --egress-node-id 2 --egress-addr fd00::2
	refuse wps ingress attach --dev wan0 --node-id 1 --src fd00::1 --egress-node-id 2 --egress-addr fd00::2
	refuse wps ingress path add --dev wan0 --via nosuchdev --nexthop-mac 02:00:00:00:00:01
	refuse wps ingress path add --dev wan0 --via wan1 --nexthop-mac 02:00:00:0c:00:02
	refuse wps ingress path del --dev wan0 --via gw-s
	refuse wps ingress path add --dev wan1 --via wan1 --nexthop-mac 02:00:00:0c:00:02
	refuse wps ingress rule add --dev wan0 --dst 10.30.0.0/24 --quantum 0
	refuse wps ingress rule add --dev wan0 --dst 10.20.0.128/25 --quantum 4
	refuse wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp --dport 80 --quantum 4b
	refuse wps ingress rule add --dev wan0 --dst 10.20.0.1/16 --quantum 4
	refuse wps ingress rule add --dev wan0 --dst 10.30.0.0/24 --quantum 5parsecs
	# no path: a rule needs one, and the last path cannot go while a rule uses it
	gw wps ingress attach --dev wan1 --node-id 3 --src fd00::1 --egress-node-id 2 --egress-addr fd00::2
	refuse wps ingress rule add --dev wan1 --dst 10.30.0.0/24 --quantum 4
	gw wps ingress detach --dev wan1
	gw wps ingress path del --dev wan0 --via wan1
	refuse wps ingress path del --dev wan0 --via wan0
	gw wps ingress path add --dev wan0 --via wan1 --nexthop-mac "$(wps_far_mac 1)"
	after=$(gw wps ingress rule list --dev wan0; gw wps ingress path list --dev wan0)
	[[ $before == "$after" ]]
	[[ ! -e /sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan1 ]]
	# a non-overlapping rule is taken, and rule del removes it again; each moves
	# cfg.rules_gen (flows keep their rule while it stays), the refusals did not
	local gen0 gen1
	gen0=$(rules_gen)
	gw wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto udp --quantum 4
	gw wps ingress rule del --dev wan0 --dst 10.20.0.0/24 --proto udp
	after=$(gw wps ingress rule list --dev wan0; gw wps ingress path list --dev wan0)
	[[ $before == "$after" ]]
	gen1=$(rules_gen)
	echo "rules_gen: first rule add -> $gen0, then add + del -> $gen1"
	[[ $gen0 -eq 1 && $gen1 -eq $((gen0 + 2)) ]]
	# The watch agent's --tick times the ticks from a lost probe to the next (--probe / --tick,
	# rounded up) not shorter than --dead less --probe (300 ms by default): the question asked
	# again would be judged unanswered first, and one lost probe take the next hop down (150 ms:
	# 2 x 150; 300 ms: 1 x 300; 30 s with --probe 30s --dead 60s). Refused, naming the limit,
	# and the agent already running watches on, unmoved.
	watch_start
	refuse wps ingress watch --dev wan0 --tick 150ms
	grep -qF -- '--tick (150 ms) x 2, the ticks from a lost probe to the next, must be shorter than --dead less --probe (300 ms)' <<<"$out_last"
	refuse wps ingress watch --dev wan0 --tick 300ms
	refuse wps ingress watch --dev wan0 --tick 30s --probe 30s --dead 60s
	refuse wps ingress watch --dev wan0 --probe 500ms
	kill -0 "$WATCH_PID"
	cat "$TMP/watch.out"
	[[ $(wc -l <"$TMP/watch.out") -eq 1 ]]
}

# attach --config FILE makes the instance the same options on the command line
# make; the command line after --config wins; a bad line is refused by its number.
test_attach_config_file() {
	needs bpftool
	topo_wps 2
	local conf=$TMP/ingress.conf bad=$TMP/bad.conf a b c msg
	local opts=(--node-id 1 --src "$WPS_SRC6" --egress-node-id 2 --egress-addr "$WPS_DST6" --hbh --hop-limit 9
		--ingress-port gw-s=42 --egress-port 7 --max-inflight 3 --max-delay-us 700 --idle-ms 1500
		--fid-pool 1000 --mtu-drop --icmp-src4 10.10.0.1 --max-flows 128)
	cat >"$conf" <<-CONF
	# the options above, a key and its value a line
	node-id 1
	src $WPS_SRC6
	egress-node-id   2	# blanks and comments around values
	egress-addr $WPS_DST6
	hbh

	hop-limit 9
	ingress-port gw-s=42
	egress-port 7
	max-inflight 3
	max-delay-us 700
	idle-ms 1500
	fid-pool 1000
	mtu-drop
	icmp-src4 10.10.0.1
	max-flows 128
	CONF
	gw wps ingress attach --config "$conf" --dev wan0 >/dev/null
	a=$(cfg_bytes)
	[[ $(bpftool -j map show pinned "/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0/flows" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["max_entries"])') -eq 128 ]]
	gw wps ingress detach --dev wan0 >/dev/null
	gw wps ingress attach --dev wan0 "${opts[@]}" >/dev/null
	b=$(cfg_bytes)
	gw wps ingress detach --dev wan0 >/dev/null
	gw "${WPS_ATTACH[@]}" >/dev/null
	c=$(cfg_bytes)
	gw wps ingress detach --dev wan0 >/dev/null
	echo "config file: $a"; echo "options:     $b"; echo "defaults:    $c"
	[[ $a == "$b" && $a != "$c" ]]
	# After --config, the command line wins (hop_limit, byte 46).
	gw wps ingress attach --config "$conf" --dev wan0 --hop-limit 5 >/dev/null
	[[ $(cfg_bytes | cut -d' ' -f47) == 05 ]]
	gw wps ingress detach --dev wan0 >/dev/null
	local -a cases=(
		$'dev wan0\nnode-id 1\nbogus 3\n|line 3: unknown key \'bogus\''
		$'dev wan0\nnode-id 70000\n|line 2: '
		$'dev wan0\nhbh yes\n|line 2: \'hbh\' takes no value'
		$'dev wan0\nsrc\n|line 2: \'src\' needs a value'
		$'dev wan0\ningress-port nosuch=1\n|line 2: --ingress-port: unknown device \'nosuch\''
		$'config /etc/passwd\n|line 1: unknown key \'config\''
	)
	for c in "${cases[@]}"; do
		printf '%s' "${c%%|*}" >"$bad"
		msg=$(gw wps ingress attach --config "$bad" 2>&1) && return 1
		echo "$msg"
		[[ $msg == "ubctl: $bad: ${c#*|}"* && $(wc -l <<<"$msg") -eq 1 ]]
	done
	msg=$(gw wps ingress attach --config /nonexistent.conf 2>&1) && return 1
	[[ $msg == "ubctl: --config /nonexistent.conf: No such file or directory" ]]
	[[ ! -e /sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0 ]]
}

# cfg_bytes: the gw instance's cfg on wan0, hex bytes, seg_ifindex (bytes 52-55: a
# new detour each attach) zeroed.
cfg_bytes() {
	bpftool -j map lookup pinned "/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0/cfg" key hex 00 00 00 00 |
		"$PY" -c "import json, sys
v = [int(b, 16) for b in json.load(sys.stdin)['value']]
v[52:56] = [0, 0, 0, 0]
print(' '.join('%02x' % b for b in v))"
}

# rules_gen: cfg.rules_gen of the gw instance on wan0 (bytes 176-179, little-endian).
rules_gen() {
	bpftool -j map lookup pinned "/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0/cfg" key hex 00 00 00 00 |
		"$PY" -c "import json, sys
v = [int(b, 16) for b in json.load(sys.stdin)['value']]
print(int.from_bytes(bytes(v[176:180]), 'little'))"
}

# attach leaves DEV's offloads as they are: the GSO skbs of sprayed flows take the detour,
# and traffic no rule sprays keeps TSO/GSO/GRO (scripts/wps_bench.sh: without TSO on DEV, a
# TCP flow no rule sprays lost 27 % of its goodput). --offloads-off turns them off; detach
# then puts back each feature exactly as it was, a TSO sub-feature that was off included
# (ethtool's overall "tso on" would turn it on).
test_detach_restores_offloads() {
	needs ethtool
	topo_wps 1
	offl() {
		ip netns exec "$NS_GW" ethtool -k wan0 |
			grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload):' |
			tr -s '\n' ' '
	}
	all() { ip netns exec "$NS_GW" ethtool -k wan0 | grep -v '^Features for'; }
	local set before
	ip netns exec "$NS_GW" ethtool -K wan0 tso on gso on gro on
	before=$(all)
	wps_attach 1
	echo "attached (default): $(offl)"
	if [[ $(all) != "$before" ]]; then
		echo "attach changed DEV's features:"; diff <(echo "$before") <(all); return 1
	fi
	gw wps ingress detach --dev wan0
	[[ $(all) == "$before" ]]
	# one ethtool -K per ";"-separated part: in one command "tso on" would win over its sub-feature
	for set in "tso off gso on gro on" "tso on gso off gro off" "tso on gso on gro on" \
		"tso on gso on gro on; tx-tcp6-segmentation off" "tso on gso on gro on; tx-tcp-ecn-segmentation off"; do
		local part p
		IFS=';' read -ra part <<<"$set"
		for p in "${part[@]}"; do ip netns exec "$NS_GW" ethtool -K wan0 $p; done
		before=$(all)
		[[ $set != *tcp6* ]] || grep -q 'tx-tcp6-segmentation: off' <<<"$before"
		echo "before attach: $(offl) ($set)"
		wps_attach 1 --offloads-off
		echo "attached:      $(offl)"
		[[ $(offl) != *": on"* ]]
		gw wps ingress detach --dev wan0
		echo "detached:      $(offl)"
		if [[ $(all) != "$before" ]]; then
			echo "features differ after detach:"; diff <(echo "$before") <(all); return 1
		fi
	done
}

# attach (its detour, --offloads-off) and detach run no ip or ethtool: netlink
# instead (io/nl.c). With an ip and an ethtool first on PATH that fail and
# leave a mark, both work as before: the detour made with its GSO off, DEV's
# TSO, GSO and GRO off, then the detour gone and DEV's features as they were;
# and nothing ran them.
test_attach_runs_no_ip_or_ethtool() {
	needs ethtool
	topo_wps 1
	local fake=$TMP/fakebin t before
	mkdir -p "$fake"
	for t in ip ethtool; do
		printf '#!/bin/sh\necho "$0 $*" >>%s/ran\nexit 1\n' "$fake" >"$fake/$t"
		chmod +x "$fake/$t"
	done
	before=$(ip netns exec "$NS_GW" ethtool -k wan0)
	ns_run "$NS_GW" env PATH="$fake:$PATH" "$UBCTL" "${WPS_ATTACH[@]}" --offloads-off
	ip netns exec "$NS_GW" ethtool -k "$(wps_detour)" | has -x "tx-udp-segmentation: off"
	ip netns exec "$NS_GW" ethtool -k "$(wps_detour)" | has -x "tcp-segmentation-offload: off"
	ip netns exec "$NS_GW" ethtool -k wan0 | has -x "tcp-segmentation-offload: off"
	ip netns exec "$NS_GW" ethtool -k wan0 | has -x "generic-receive-offload: off"
	ns_run "$NS_GW" env PATH="$fake:$PATH" "$UBCTL" wps ingress detach --dev wan0
	refute ip -n "$NS_GW" link show "$(wps_detour)" 2>/dev/null
	[[ $(ip netns exec "$NS_GW" ethtool -k wan0) == "$before" ]]
	if [[ -e $fake/ran ]]; then echo "ubctl ran:"; cat "$fake/ran"; return 1; fi
}

# The detour's RPS is written through a sysfs of the gateway's namespace: one ubctl
# mounts (nsenter --net keeps the host's /sys), or, without CAP_SYS_ADMIN (a container),
# the /sys it has when that shows the namespace's devices (ip netns exec). Neither:
# one line, exit non-zero, nothing left (no detour, no pins, wan0's offloads as before).
test_detour_rps_with_and_without_cap_sys_admin() {
	needs ethtool setpriv
	topo_wps 1
	local nocap=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin) before out rc
	attach() { "$@" "$UBCTL" "${WPS_ATTACH[@]}"; }
	# nsenter --net, all capabilities: ubctl mounts its own sysfs
	attach ns_run "$NS_GW" >/dev/null
	echo "nsenter: rps_cpus $(wps_detour_rps)"
	[[ $(wps_detour_rps) =~ [1-9a-f] ]]
	gw wps ingress detach --dev wan0 >/dev/null
	# ip netns exec without CAP_SYS_ADMIN: no mount, /sys is the namespace's already
	attach ip netns exec "$NS_GW" "${nocap[@]}" >/dev/null
	echo "ip netns exec, no CAP_SYS_ADMIN: rps_cpus $(wps_detour_rps)"
	[[ $(wps_detour_rps) =~ [1-9a-f] ]]
	gw wps ingress detach --dev wan0 >/dev/null
	# nsenter --net without CAP_SYS_ADMIN: the host's /sys, which shows no detour
	before=$(ip netns exec "$NS_GW" ethtool -k wan0)
	rc=0
	out=$(attach ns_run "$NS_GW" "${nocap[@]}" 2>&1) || rc=$?
	echo "nsenter, no CAP_SYS_ADMIN: exit $rc: $out"
	[[ $rc -ne 0 && $(grep -c 'cannot set RPS on the detour' <<<"$out") -eq 1 ]]
	refute ip -n "$NS_GW" link show "$(wps_detour)p"
	[[ -z $(ls /sys/fs/bpf/ubxdp/wps/ingress/ 2>/dev/null | grep -F "$NS_GW:") ]]
	[[ $(ip netns exec "$NS_GW" ethtool -k wan0) == "$before" ]]
}

# Attached by tcx links pinned beside the maps where the kernel has tcx (else
# clsact filters, as the attach line says); another program on wan0's egress
# (the test's own counter, a clsact filter) sees what the ingress lets go on;
# detach leaves nothing of the ingress and the other program where it was.
test_detach_leaves_nothing() {
	needs
	topo_wps 1
	tc_count_add "$NS_GW" wan0 egress
	local seg out d="/sys/fs/bpf/ubxdp/wps/ingress/${NS_GW}:wan0" ids=() f want="by clsact filters (this kernel has no tcx"
	if kernel_has_tcx; then want="by tcx links"; fi
	out=$(wps_attach 1)
	echo "$out"
	[[ $out == *"$want"* ]]
	seg=$(wps_detour)
	ip -n "$NS_GW" link show "$seg" >/dev/null
	expect_tc_attached "$d" link_tc_egress prog "$NS_GW" wan0 egress
	expect_tc_attached "$d" link_tc_seg prog_seg "$NS_GW" "${seg}p" ingress
	for f in "$d"/link_*; do
		if [[ -e $f ]]; then ids+=("$(link_key "$f" id)"); fi
	done
	[[ -e "$d/flows" ]]
	# Both run: no rule sprays what goes to the far end's own address.
	ip netns exec "$NS_GW" ping -c 2 -i 0.2 -W 1 10.99.0.2 >/dev/null || true
	[[ $(tc_count "$NS_GW" wan0 egress) -ge 2 ]]
	gw stats --json --name "$NS_GW:wan0" | "$PY" -c "import json,sys; c=json.load(sys.stdin)['wps_ingress'][0]['counters']; print(c)
assert c['pass_no_rule'] >= 2, c"
	gw wps ingress detach --dev wan0
	refute ip -n "$NS_GW" link show "$seg" 2>/dev/null
	for f in "${ids[@]}"; do expect_link_gone "$f"; done
	refute grep -q wps_ingress < <(tc -n "$NS_GW" filter show dev wan0 egress)
	tc_count "$NS_GW" wan0 egress >/dev/null
	[[ ! -e $d ]]
}

# The boundary filter likewise: tcx links (or clsact filters) on gw-s, another
# program on the same hooks runs beside it, detach leaves that one.
test_boundary_links_beside_other_programs() {
	needs
	topo_wps 1
	local d="/sys/fs/bpf/ubxdp/wps/boundary/${NS_GW}:gw-s" out ids=() f hook want="by clsact filters (this kernel has no tcx"
	if kernel_has_tcx; then want="by tcx links"; fi
	for hook in ingress egress; do tc_count_add "$NS_GW" gw-s "$hook"; done
	out=$(gw wps boundary attach --dev gw-s)
	echo "$out"
	[[ $out == *"$want"* ]]
	expect_tc_attached "$d" link_tc_ingress prog_in "$NS_GW" gw-s ingress
	expect_tc_attached "$d" link_tc_egress prog_out "$NS_GW" gw-s egress
	for f in "$d"/link_*; do
		if [[ -e $f ]]; then ids+=("$(link_key "$f" id)"); fi
	done
	ip netns exec "$NS_GW" ping -c 2 -i 0.2 -W 1 10.10.0.2 >/dev/null || true
	[[ $(tc_count "$NS_GW" gw-s egress) -ge 2 ]]
	[[ $(tc_count "$NS_GW" gw-s ingress) -ge 1 ]]
	gw stats --json --name "$NS_GW:gw-s" | "$PY" -c "import json,sys; c=json.load(sys.stdin)['wps_boundary'][0]['counters']; print(c)
assert c['pass_out'] >= 2 and c['pass_in'] >= 1, c"
	gw wps boundary detach --dev gw-s
	for f in "${ids[@]}"; do expect_link_gone "$f"; done
	for hook in ingress egress; do
		refute grep -q wps_boundary < <(tc -n "$NS_GW" filter show dev gw-s "$hook")
		tc_count "$NS_GW" gw-s "$hook" >/dev/null
	done
	[[ ! -e $d ]]
}
