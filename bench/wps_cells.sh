# shellcheck shell=bash disable=SC2154  # NS_*, T, STATS, counters: scripts/wps_bench.sh's
# Sourced by scripts/wps_bench.sh (its topology, goodput() and counters set up): the
# goodput decomposition of one TCP flow through the WPS ingress (bench/README.md, "Where the
# TCP flow's gap goes").
# WPS_BENCH_CELLS="CELL...": instead of wps_bench.sh's goodput parts, these cells round by round (odd
# rounds in the order given, even rounds backwards), each a ratio to the round's plain cell.
# CELL is [DIR:]plain | [DIR:]noop (a TC program that only counts on wan0's egress: the attach
# alone) | spread (no ingress: bench/spread_paths.bpf.c spreads the plain route's packets over
# wan0..3, 256 to a path, as the ingress's groups go: what the spreading costs by itself) |
# [DIR:]pN[qQ][iG][w] (the ingress of build DIR, default this one, over wan0..wanN-1,
# quantum Q, default 16, --max-inflight G, default attach's; w: one path, wan1, not DEV itself).
# A trailing m (plainm, p4m): wan0..3 and p0..3 at MTU 1556 for that cell, room for the 56-byte
# encapsulation (else the ingress's Packet Too Big takes the sender's MSS from 1448 to 1404).
# Each cell: Mbit/s (the sender's retransmits, the receiver's segments queued out of order,
# D-SACKs the sender received; through the ingress, skbs into the detour / whole / groups;
# thousands of packets p0:p1:p2:p3 received).
. tests/lib/links.sh
# spread_on / spread_off: bench/spread_paths.bpf.o on wan0's egress, wan1..3 its other paths.
SPREAD_PIN=/sys/fs/bpf/wps_cells_$$
spread_on() {
	local i
	mkdir -p "$SPREAD_PIN" &&
		bpftool prog load build/bpf/spread_paths.bpf.o "$SPREAD_PIN/prog" type classifier pinmaps "$SPREAD_PIN" || return 1
	for i in 1 2 3; do
		# shellcheck disable=SC2046  # the value's bytes, one word each
		bpftool map update pinned "$SPREAD_PIN/spread_paths" key "$i" 0 0 0 value $(/usr/bin/python3 -c "import sys
b = int(sys.argv[1]).to_bytes(4, 'little') + bytes.fromhex(sys.argv[2].replace(':', '') + sys.argv[3].replace(':', ''))
print(' '.join(str(x) for x in b))" "$(ip -n "$NS_GW" -o link show "wan$i" | cut -d: -f1)" "$(wps_far_mac "$i")" "$(wps_wan_mac "$i")") ||
			return 1
	done
	# ns_run: the pin is in this mount namespace (tc -n mounts its own /sys)
	ns_run "$NS_GW" tc qdisc add dev wan0 clsact && ns_run "$NS_GW" tc filter add dev wan0 egress bpf da object-pinned "$SPREAD_PIN/prog"
}
# far_rx: the packets p0..p3 received so far.
far_rx() { ip -n "$NS_FAR" -j -s link show | /usr/bin/python3 -c 'import json, sys
l = {d["ifname"]: d["stats64"]["rx"]["packets"] for d in json.load(sys.stdin)}
print(*(l.get("p%d" % i, 0) for i in range(4)))'; }
spread_off() { tc -n "$NS_GW" qdisc del dev wan0 clsact; rm -rf "$SPREAD_PIN"; }
read -ra cells <<<"$WPS_BENCH_CELLS"
R=${WPS_BENCH_ROUNDS:-8}
echo "WPS ingress goodput cells, one TCP flow, ${T}s each, $R rounds: Mbit/s (retransmits) ratio to plain"
declare -A res
for ((r = 1; r <= R; r++)); do
	order=("${cells[@]}")
	((r % 2)) || mapfile -t order < <(printf '%s\n' "${cells[@]}" | tac)
	for c in "${order[@]}"; do
		dir=${c%%:*} cell=${c##*:}
		[[ $dir == "$c" ]] && dir=${BUILD:-build}
		rx0=$(far_rx)
		NSTAT_HISTORY=$STATS.site ns_run "$NS_SITE" nstat -n
		NSTAT_HISTORY=$STATS.far ns_run "$NS_FAR" nstat -n
		extra='' mtu=1500
		[[ $cell == *m ]] && mtu=1556 cell=${cell%m}
		for i in 0 1 2 3; do ip -n "$NS_GW" link set "wan$i" mtu $mtu; ip -n "$NS_FAR" link set "p$i" mtu $mtu; done
		case $cell in
		plain) res[$c]=$(goodput 5201 rtx) ;;
		spread)
			spread_on || exit 1
			res[$c]=$(goodput 5201 rtx)
			spread_off ;;
		noop)
			tc_count_add "$NS_GW" wan0 egress
			res[$c]=$(goodput 5201 rtx)
			tc -n "$NS_GW" qdisc del dev wan0 clsact ;;
		p[1-4]*)
			[[ $cell =~ ^p([1-4])(q([0-9]+))?(i([0-9]+))?(w?)$ ]] || { echo "wps bench: bad cell $c" >&2; exit 2; }
			n=${BASH_REMATCH[1]} q=${BASH_REMATCH[3]:-16} g=${BASH_REMATCH[5]}
			WPS_BIN=$dir/bin wps_attach "$n" ${g:+--max-inflight "$g"} >/dev/null || exit 1
			if [[ -n ${BASH_REMATCH[6]} ]]; then
				ns_run "$NS_GW" "$dir/bin/ubctl" wps ingress path del --dev wan0 --via wan0 >/dev/null || exit 1
				ns_run "$NS_GW" "$dir/bin/ubctl" wps ingress path add --dev wan0 --via wan1 \
					--nexthop-mac "$(wps_far_mac 1)" >/dev/null || exit 1
			fi
			ns_run "$NS_GW" "$dir/bin/ubctl" wps ingress rule add --dev wan0 --dst 10.20.0.0/24 --proto tcp \
				--quantum "$q" >/dev/null || exit 1
			res[$c]=$(goodput 5201 rtx)
			ns_run "$NS_GW" "$dir/bin/ubctl" stats --json >"$STATS.c"
			extra=" $(/usr/bin/python3 -c "$counters"'
c = of(sys.argv[1]); print("%d/%d/%d" % (c["redirect_gso_detour"], c.get("gso_whole_in_group", 0), c["groups_opened"]))' "$STATS.c")"
			ns_run "$NS_GW" "$dir/bin/ubctl" wps ingress detach --dev wan0 >/dev/null ;;
		*) echo "wps bench: unknown cell $c" >&2; exit 2 ;;
		esac
		res[$c]+=" $(NSTAT_HISTORY=$STATS.far ns_run "$NS_FAR" nstat -z TcpExtTCPOFOQueue | awk '/^TcpExt/ {print $2}')"
		res[$c]+=" $(NSTAT_HISTORY=$STATS.site ns_run "$NS_SITE" nstat -z TcpExtTCPDSACKRecv | awk '/^TcpExt/ {print $2}')$extra"
		res[$c]+=" $(/usr/bin/python3 -c "import sys
a, b = (list(map(int, x.split())) for x in sys.argv[1:])
print('p' + ':'.join('%d' % round((y - x) / 1000) for x, y in zip(a, b)))" "$rx0" "$(far_rx)")"
	done
	line="  round $r load $(cut -d' ' -f1 /proc/loadavg):" base=
	for c in "${cells[@]}"; do [[ ${c##*:} == plain ]] && base=${res[$c]%% *} && break; done
	for c in "${cells[@]}"; do
		v=${res[$c]%% *}
		line+=" $c ${v} (${res[$c]#* }) $(/usr/bin/python3 -c "print('%.2f' % ($v / ${base:-$v}))")"
	done
	echo "$line"
done
