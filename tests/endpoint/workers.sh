# Worker threads (ubperf --workers, ep.h), sourced by tests/endpoint/run: a
# veth pair of two rx and two tx queues on each end, c0 (10.64.0.1) --
# s0 (10.64.0.2). Each worker has its own transport core and TPNs, a socket on
# every queue and its transmit queue its own (worker w on queue w); the
# endpoint's program steers each frame to its channel's worker. A frame
# steered to the wrong worker meets a core without its channel and is
# dropped, so a run that completes, every byte checked, is steered right;
# each worker's frame counts, and each rx queue's XDP redirects, show both
# were used.

# topo_workers [QUEUES]: 2 rx and tx queues each end unless told (and
# namespaces of their own: several pairs in one test).
topo_workers() {
	NS_CLI=$(ns_add "wc${1:-}") NS_SRV=$(ns_add "ws${1:-}")
	ns_link "$NS_CLI" c0 02:00:00:64:00:01 "$NS_SRV" s0 02:00:00:64:00:02 "${1:-2}"
	ns_addr "$NS_CLI" c0 10.64.0.1/24
	ns_addr "$NS_SRV" s0 10.64.0.2/24
}

# json_workers JSON: the workers a ubperf ran, its JSON's workers array (one
# entry a worker, written when there are several), else 1.
json_workers() {
	/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1])).get("workers", [None])))' "$1"
}

# queue_redirects NS DEV Q: frames the program redirected on rx queue Q.
queue_redirects() {
	ns_run "$1" ethtool -S "$2" | awk -v k="rx_queue_$3_xdp_redirect:" '$1 == k { print $2 }' |
		num "rx queue $3 redirects"
}

# workers_run OP CHANNELS SERVER_WORKERS CLIENT_WORKERS [ARGS]: COUNT
# operations of 16 KiB (1 KiB with --mode utp), checked end to end; the
# receiving side's workers (the server's; a Read's client) each took at
# least a quarter of the data frames' share, on both of its rx queues.
# A count written default:N is no --workers, the default, which must be N.
# WORKERS_CLI_WRAP (e.g. "taskset -c 0") runs the client under it.
WORKERS_COUNT=400
workers_run() {
	local op=$1 chans=$2 sw=${3#default:} cw=${4#default:} d size=16k bytes=16384 rcv w q ns=$NS_SRV dev=s0
	local swarg=(--workers "$sw") cwarg=(--workers "$cw") before=() wrap=() rw=$sw tw=$cw asked="$3 server / $4 client"
	[[ $3 == default:* ]] && swarg=()
	[[ $4 == default:* ]] && cwarg=()
	read -ra wrap <<<"${WORKERS_CLI_WRAP:-}"
	shift 4
	d=$(mktemp -d)
	[[ $op == read ]] && ns=$NS_CLI dev=c0 rw=$cw tw=$sw
	if ((tw == 2)); then for q in 0 1; do before[q]=$(queue_redirects "$ns" $dev $q); done; fi
	[[ " $* " == *" utp "* ]] && size=1k bytes=1024
	start_server "$NS_SRV" s0 "$d/srv" --json "${swarg[@]}"
	ns_run "$NS_CLI" "${wrap[@]}" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --count $WORKERS_COUNT \
		--size $size --op "$op" --channels "$chans" "${cwarg[@]}" --json "$@" \
		>"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err" "$d/srv.err"; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; return 1; }
	SRV_PID=
	echo "$op $chans channels, $asked workers ${wrap[*]} $*:" \
	     "ran server $(json_workers "$d/srv"), client $(json_workers "$d/cli")"
	[[ $(json_workers "$d/srv") -eq $sw && $(json_workers "$d/cli") -eq $cw ]]
	[[ $(json_get "$d/cli" messages) -eq $WORKERS_COUNT ]]
	[[ $(json_get "$d/cli" corrupt) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	[[ $(json_get "$d/srv" out_of_order) -eq 0 ]]
	if [[ " $* " == *" utp "* ]]; then
		# UTP loses what the server has no buffer for: what came is checked.
		local got; got=$(json_get "$d/srv" messages)
		echo "utp: server took $got"
		[[ $got -gt 0 && $(json_get "$d/srv" verified_bytes) -eq $((got * bytes)) ]]
	else
		[[ $(json_get "$d/cli" peer_messages) -eq $WORKERS_COUNT ]]
		ubperf_verified "$d/cli" "$op" $WORKERS_COUNT $bytes "$chans" 8
	fi
	rcv=$d/srv; [[ $op == read ]] && rcv=$d/cli
	for ((w = 0; w < rw && rw > 1; w++)); do
		echo "worker $w: rx $(json_get "$rcv" workers.$w.rx_frames) tx $(json_get "$rcv" workers.$w.tx_frames)"
		[[ $(json_get "$rcv" workers.$w.rx_frames) -ge $((WORKERS_COUNT / chans / 4)) ]]
	done
	for ((c = 0; c < chans && sw > 1; c++)); do
		[[ $(json_get "$d/srv" per_channel.$c.worker) -eq $((c % sw)) ]]
	done
	# The sender's workers each transmit on their own queue, which the veth
	# delivers on the same rx queue at the receiver.
	if ((tw == 2)); then
		for q in 0 1; do
			local n=$(($(queue_redirects "$ns" $dev $q) - before[q]))
			echo "$dev rx queue $q: $n redirected"
			[[ $n -ge $((WORKERS_COUNT / chans / 4)) ]]
		done
	fi
	rm -rf "$d"
}

# Send, Write and Read, RTP (SR and GBN) and UTP: every byte in its place.
test_ubperf_workers_every_op_intact() {
	topo_workers
	workers_run send 2 2 2
	workers_run write 3 2 2 --mode rtp-gbn
	workers_run read 2 2 2 --ta roi
	workers_run send 4 2 2 --mode utp
	# Each side spreads its own channels: one worker against two, both ways.
	workers_run send 2 2 1
	workers_run read 2 1 2
}

# Without --workers each side runs as many workers as the device has rx
# queues and the process has CPUs to run on, the fewer: 2 on the 2-queue pair
# (both carrying their share, both ways), 1 for a client under taskset -c CPU
# (the CPUs it may use, not those online; also where the kernel has more
# possible CPUs than a fixed cpu_set_t holds), 1 on a single-queue pair.
test_ubperf_workers_default_queues_and_cpus() {
	local cpu
	(($(nproc) >= 2)) || skip "needs 2 CPUs, this process may run on $(nproc)"
	# One CPU this runner may use (taskset -c 0 fails where CPU 0 is not one).
	cpu=$(taskset -cp $BASHPID | sed 's/.*: //; s/[-,].*//' | num "first CPU of this runner")
	topo_workers
	workers_run send 2 default:2 default:2
	workers_run read 2 default:2 default:2
	WORKERS_CLI_WRAP="taskset -c $cpu" workers_run send 2 default:2 default:1
	# The same on a kernel of more possible CPUs than a cpu_set_t holds
	# (many_cpus.so: EINVAL below 4096): the mask sized to the kernel's, not
	# a fall back to the online CPUs.
	WORKERS_CLI_WRAP="taskset -c $cpu env LD_PRELOAD=$BIN/../lib/many_cpus.so" \
		workers_run send 2 default:2 default:1
	topo_workers 1
	workers_run send 2 default:1 default:1
}

# Killed, a server of two workers leaves nothing attached, and the next one serves.
test_ubperf_workers_killed_leaves_nothing_attached() {
	local d sig; d=$(mktemp -d)
	topo_workers
	for sig in KILL TERM; do
		start_server "$NS_SRV" s0 "$d/srv" --workers 2
		ns_run "$NS_SRV" ip link show s0 | has " xdp "
		kill -$sig $SRV_PID
		wait $SRV_PID || true
		SRV_PID=
		echo "SIG$sig:"
		if ns_run "$NS_SRV" ip link show s0 | grep xdp; then return 1; fi
	done
	workers_run send 2 2 2
}

# A server of two workers asked for a run on one core (CTP, a per-packet
# group) serves it on worker 0, where the program steers those channels.
test_ubperf_workers_server_runs_one_core_runs_on_worker_0() {
	local d args; d=$(mktemp -d)
	topo_workers
	for args in "--native --mode ctp" "--lb packet"; do
		# shellcheck disable=SC2046
		start_server "$NS_SRV" s0 "$d/srv" --json --workers 2 $([[ $args == --native* ]] && echo --native)
		# shellcheck disable=SC2086
		ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --count 200 --channels 2 \
			--json $args >"$d/cli" 2>"$d/cli.err" || { cat "$d/cli.err" "$d/srv.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		SRV_PID=
		echo "$args: client $(json_get "$d/cli" messages), server $(json_get "$d/srv" messages)," \
		     "server workers $(json_get "$d/srv" workers)"
		[[ $(json_get "$d/cli" messages) -eq 200 && $(json_get "$d/srv" messages) -eq 200 ]]
		[[ $(json_get "$d/srv" corrupt) -eq 0 && $(json_get "$d/srv" out_of_order) -eq 0 ]]
		[[ $(json_get "$d/srv" workers.0.rx_frames) -ge 200 ]]
		[[ $(json_get "$d/srv" per_channel.1.worker) -eq 0 ]]
	done
	rm -rf "$d"
}

# A channel that would never receive is refused: CTP on a worker other than
# 0 (the program steers all of CTP to worker 0), any channel on a worker of a
# folded endpoint (ep_workers_fold: worker 0 takes every frame).
test_ep_workers_chan_refused_where_nothing_arrives() {
	topo_workers
	ns_run "$NS_SRV" "$BIN/ep_workers_chan" s0 2 0 ctp | has -x "worker 0 ctp: tpn [0-9]*[02468]"
	ns_run "$NS_SRV" "$BIN/ep_workers_chan" s0 2 1 rtp-sr | has -x "worker 1 rtp-sr: tpn [0-9]*[13579]"
	ns_run "$NS_SRV" "$BIN/ep_workers_chan" s0 2 1 utp | has -x "worker 1 utp: tpn [0-9]*[13579]"
	local out args
	for args in "ctp" "rtp-sr fold"; do
		# shellcheck disable=SC2086
		out=$(ns_run "$NS_SRV" "$BIN/ep_workers_chan" s0 2 1 $args) && { echo "created: $out"; return 1; }
		echo "$out"
		[[ $out == "worker 1 ${args% fold}: Operation not supported" ]]
	done
	ns_run "$NS_SRV" "$BIN/ep_workers_chan" s0 2 0 rtp-sr fold | has -x "worker 0 rtp-sr: tpn [0-9]*"
}

# A run on worker 0 alone (--lb packet) against a server of two workers:
# stray frames the program would steer to worker 1 (RTP to DstTPN 1, 10000 of
# them: more than a worker's 8192 UMEM frames; 100 more with a bad ICRC)
# reach worker 0, which has no such channel, drops and counts each
# (rx_dropped), and the run completes: none waits on an idle worker's socket
# holding a frame.
test_ubperf_workers_one_core_run_drops_and_counts_strays() {
	local d n=10000 q rx=0; d=$(mktemp -d)
	local before=()
	topo_workers
	for q in 0 1; do before[q]=$(queue_redirects "$NS_SRV" s0 $q); done
	start_server "$NS_SRV" s0 "$d/srv" --json --workers 2
	nsenter --net="/run/netns/$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --time 10 \
		--channels 2 --lb packet --size 4k --json >"$d/cli" 2>"$d/cli.err" &
	local cli=$!
	# The run is under way once data flows.
	for _ in $(seq 100); do
		rx=0
		for q in 0 1; do rx=$((rx + $(queue_redirects "$NS_SRV" s0 $q) - before[q])); done
		((rx > 500)) && break
		sleep 0.1
	done
	echo "server redirected $rx before the strays"
	((rx > 500))
	# In bursts of 1000, each under the rx ring's 2048 frames: one burst of
	# 10000 would find the ring full whenever worker 0 is off its CPU for a
	# few ms, and the kernel, not the endpoint, would drop the rest.
	for _ in $(seq $((n / 1000))); do
		ns_run "$NS_CLI" "$BIN/ubpkt" send --dev c0 --uboe --dst-mac 02:00:00:64:00:02 --src 10.64.0.1 \
			--dst 10.64.0.2 --opcode 1 --count 1000
	done
	ns_run "$NS_CLI" "$BIN/ubpkt" send --dev c0 --uboe --dst-mac 02:00:00:64:00:02 --src 10.64.0.1 \
		--dst 10.64.0.2 --opcode 1 --count 100 --bad-icrc
	kill -0 "$cli"	# still running: the strays came during the run
	wait "$cli" || { cat "$d/cli.err" "$d/srv.err"; return 1; }
	wait "$SRV_PID" || { cat "$d/srv.err"; return 1; }
	SRV_PID=
	echo "client $(json_get "$d/cli" messages), server $(json_get "$d/srv" messages)," \
	     "server rx_dropped $(json_get "$d/srv" rx_dropped), workers $(json_get "$d/srv" workers)"
	[[ $(json_get "$d/cli" messages) -gt 0 ]]
	[[ $(json_get "$d/srv" messages) -eq $(json_get "$d/cli" messages) ]]
	[[ $(json_get "$d/srv" corrupt) -eq 0 && $(json_get "$d/srv" out_of_order) -eq 0 ]]
	# What the kernel dropped for a full ring (worker 0 off its CPU through
	# two bursts) never reached the endpoint; the rest must be counted there.
	local kdrop; kdrop=$(($(json_get "$d/srv" xsk_rx_dropped) + $(json_get "$d/srv" xsk_rx_ring_full)))
	echo "kernel drops $kdrop"
	[[ $(json_get "$d/srv" rx_dropped.tp_drop) -ge $((n - kdrop)) && $(json_get "$d/srv" rx_dropped.tp_drop) -ge $((n / 2)) ]]
	[[ $(json_get "$d/srv" rx_dropped.icrc_bad) -ge $((100 - kdrop)) && $(json_get "$d/srv" rx_dropped.icrc_bad) -le 100 ]]
	[[ $(json_get "$d/srv" rx_dropped.icrc_bad) -gt 0 ]]
	rm -rf "$d"
}

# One line for what workers cannot do, before anything starts.
test_ubperf_workers_refused_one_line() {
	local err; err=$(mktemp)
	for args in "--workers 0" "--workers 9" "--workers 2 --mode ctp --native" "--workers 2 --lb packet" \
		    "--workers 2 --interval 100"; do
		refute "$BIN/ubperf" client --dev lo --peer 127.0.0.1 $args 2>"$err"
		echo "ubperf client $args -> $(cat "$err")"
		[[ $(wc -l <"$err") -eq 1 ]]
	done
}

# Frames for worker 1 (DstTPN 1: 1 % 2) sent the moment the server's program
# is on s0 reach worker 1's socket: the program goes on once every worker's
# sockets are in its map, not after worker 0's. The server makes its AF_XDP
# sockets slowly (slow_xsk.so: 100 ms each), so that a program on the device
# before worker 1's sockets would meet the frames: drop_no_socket, not
# icrc_bad. 3 bad-ICRC frames a round, counted by the worker that read them.
test_ubperf_workers_frames_at_attach_reach_worker_1() {
	local d i; d=$(mktemp -d)
	topo_workers
	for i in 1 2 3; do
		SLOW_XSK_MS=100 LD_PRELOAD=$BIN/../lib/slow_xsk.so launch_server "$NS_SRV" s0 "$d/srv" --json --workers 2
		for _ in $(seq 300); do ns_xdp_ready "$NS_SRV" s0 && break; sleep 0.01; done
		ns_xdp_ready "$NS_SRV" s0 || { echo "round $i: no XDP on s0 after 3 s"; cat "$d/srv.err"; return 1; }
		ns_run "$NS_CLI" "$BIN/ubpkt" send --dev c0 --uboe --dst-mac 02:00:00:64:00:02 --src 10.64.0.1 \
			--dst 10.64.0.2 --count 3 --bad-icrc
		ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --count 20 --json >"$d/cli" ||
			{ cat "$d/srv.err"; return 1; }
		wait $SRV_PID || { cat "$d/srv.err"; return 1; }
		SRV_PID=
		echo "round $i: bad ICRC $(json_get "$d/srv" icrc_bad) of 3"
		[[ $(json_get "$d/srv" icrc_bad) -eq 3 ]]
	done
}

# owned_run NAME SERVER_WORKERS CLIENT_WORKERS [ARGS]: a Send of WORKERS_COUNT
# 16 KiB messages on 2 channels, every byte checked, the JSONs in $d/NAME.srv
# and $d/NAME.cli ($d: the caller's), each server worker's queues, handoffs
# and pool locks said.
owned_run() {
	local name=$1 sw=$2 cw=$3 w; shift 3
	start_server "$NS_SRV" s0 "$d/$name.srv" --json --workers "$sw"
	ns_run "$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --count $WORKERS_COUNT --size 16k \
		--channels 2 --workers "$cw" --json "$@" >"$d/$name.cli" 2>"$d/$name.cli.err" ||
		{ cat "$d/$name.cli.err" "$d/$name.srv.err"; return 1; }
	wait $SRV_PID || { cat "$d/$name.srv.err"; return 1; }
	SRV_PID=
	ubperf_verified "$d/$name.cli" send $WORKERS_COUNT 16384 2 8
	[[ $(json_get "$d/$name.srv" corrupt) -eq 0 && $(json_get "$d/$name.srv" out_of_order) -eq 0 ]]
	for ((w = 0; w < sw; w++)); do
		echo "$name: server worker $w: queues $(json_get "$d/$name.srv" workers.$w.queues)," \
		     "rx $(json_get "$d/$name.srv" workers.$w.rx_frames)," \
		     "handed over $(json_get "$d/$name.srv" workers.$w.rx_handoff)" \
		     "(dropped $(json_get "$d/$name.srv" workers.$w.rx_handoff_drop))," \
		     "pool locks $(json_get "$d/$name.srv" workers.$w.xsk_pool_locks)"
	done
}

# Two workers on the 2-queue pair (issue 22): each has sockets on its own
# queue alone, takes no pool lock, and carries its channel's traffic; a
# 2-worker client sends each channel on its worker's queue, so nothing is
# handed over but control. Three workers on two queues (--workers past them):
# every worker on every queue, the pools shared under their lock.
test_ubperf_workers_own_queues_no_lock() {
	local d w; d=$(mktemp -d)
	topo_workers
	owned_run own 2 2
	for w in 0 1; do
		[[ $(json_get "$d/own.srv" workers.$w.queues) == "[$w]" ]]
		[[ $(json_get "$d/own.srv" workers.$w.xsk_pool_locks) -eq 0 ]]
		[[ $(json_get "$d/own.srv" workers.$w.rx_frames) -ge $((WORKERS_COUNT / 2 / 4)) ]]
		# control alone (the client's setup and end-of-run hellos, worker 0's)
		[[ $(json_get "$d/own.srv" workers.$w.rx_handoff) -le 8 ]]
	done
	owned_run past 3 2
	for w in 0 1 2; do
		[[ $(json_get "$d/past.srv" workers.$w.queues) == "[0, 1]" ]]
	done
	[[ $(($(json_get "$d/past.srv" workers.0.xsk_pool_locks) + $(json_get "$d/past.srv" workers.1.xsk_pool_locks))) -gt 0 ]]
	rm -rf "$d"
}

# owned_foreign NAME: a 1-worker client sends both channels by its queue 0,
# so every frame of the server's worker 1 comes on worker 0's queue: copied
# to worker 1 (rx_handoff), none dropped, every byte intact, and rx queue 1
# had none of it.
owned_foreign() {
	local name=$1 q1; shift
	q1=$(queue_redirects "$NS_SRV" s0 1)
	owned_run "$name" 2 1 "$@"
	q1=$(($(queue_redirects "$NS_SRV" s0 1) - q1))
	echo "$name: s0 rx queue 1: $q1 redirected"
	[[ $q1 -eq 0 ]]
	[[ $(json_get "$d/$name.srv" workers.0.rx_handoff) -ge $((WORKERS_COUNT / 2)) ]]
	[[ $(json_get "$d/$name.srv" workers.0.rx_handoff_drop) -eq 0 ]]
	[[ $(json_get "$d/$name.srv" workers.1.rx_frames) -ge $(json_get "$d/$name.srv" workers.0.rx_handoff) ]]
	[[ $(json_get "$d/$name.srv" workers.0.xsk_pool_locks) -eq 0 && $(json_get "$d/$name.srv" workers.1.xsk_pool_locks) -eq 0 ]]
}

# Frames for another worker's channel on a worker's queue (a peer sending
# all on one queue, as behind a router or a NIC's RSS): handed over whole.
test_ubperf_workers_foreign_frames_handed_over() {
	local d; d=$(mktemp -d)
	topo_workers
	owned_foreign foreign
	rm -rf "$d"
}

# The same on MTU 9000 links: the UB MTU is 4096 and its data frames, longer
# than a UMEM frame, come in several; worker 1's are gathered into a slot of
# the handoff ring whole.
test_ubperf_workers_foreign_jumbo_frames_handed_over() {
	local d; d=$(mktemp -d)
	topo_workers
	jumbo_links "$NS_CLI" c0 "$NS_SRV" s0
	owned_foreign jumbo
	echo "jumbo: mtu $(json_get "$d/jumbo.srv" mtu), server multi-buffer packets $(json_get "$d/jumbo.srv" rx_multi_buffer)"
	[[ $(json_get "$d/jumbo.srv" mtu) -eq 4096 && $(json_get "$d/jumbo.srv" rx_multi_buffer) -gt 0 ]]
	rm -rf "$d"
}

# A folded endpoint of 16 workers on a 16-queue pair waits on each queue's
# socket for worker 0 alone: a frame on queue 15 (c0's tx queue 15 by XPS,
# the veth's rx queue 15) wakes it at once. Every socket of every worker
# (256, past poll's 64) left the last queues' unpolled: read at the next
# wake, 3 s on.
test_ep_workers_fold_reads_every_queue_at_once() {
	local d t; d=$(mktemp -d)
	topo_workers 16
	# XPS: every CPU sends by tx queue 15 (a packet socket's frames follow it).
	local mask; mask=$(/usr/bin/python3 -c 'import os
m = (1 << os.cpu_count()) - 1
print(",".join("%08x" % (m >> s & 0xffffffff) for s in range((os.cpu_count() - 1) // 32 * 32, -1, -32)))')
	ip netns exec "$NS_CLI" sh -c "echo $mask > /sys/class/net/c0/queues/tx-15/xps_cpus"
	nsenter --net="/run/netns/$NS_SRV" "$BIN/ep_workers_wait" s0 16 fold 1 >"$d/out" 2>"$d/err" &
	local pid=$!
	for _ in $(seq 100); do grep -qx ready "$d/out" && break; sleep 0.1; done
	grep -qx ready "$d/out" || { cat "$d/err"; return 1; }
	ns_run "$NS_CLI" "$BIN/ubpkt" send --dev c0 --uboe --dst-mac 02:00:00:64:00:02 --src 10.64.0.1 \
		--dst 10.64.0.2 --opcode 1 --count 1
	wait $pid || { cat "$d/err"; return 1; }
	cat "$d/out"
	echo "s0 rx queue 15: $(queue_redirects "$NS_SRV" s0 15) redirected"
	[[ $(queue_redirects "$NS_SRV" s0 15) -eq 1 ]]
	t=$(awk '/^rx 1 after/ { print $4 }' "$d/out")
	[[ -n $t && $t -lt 1500 ]]
	rm -rf "$d"
}

# A signal ending a worker's sleep while another worker has taken its
# asleep flag but not yet written its eventfd (the sleep then reads the
# eventfd after the poll, and finds nothing) is told as the poll's EINTR;
# that read's EAGAIN came back instead.
test_ep_workers_wait_interrupted_says_so() {
	topo_workers
	ns_run "$NS_SRV" "$BIN/ep_workers_wait" s0 2 intr | has -x "ep_wait: Interrupted system call"
}

WORKERS_TESTS=(test_ubperf_workers_every_op_intact test_ubperf_workers_default_queues_and_cpus
	       test_ubperf_workers_killed_leaves_nothing_attached
	       test_ubperf_workers_server_runs_one_core_runs_on_worker_0 test_ubperf_workers_refused_one_line
	       test_ep_workers_chan_refused_where_nothing_arrives
	       test_ubperf_workers_one_core_run_drops_and_counts_strays
	       test_ubperf_workers_frames_at_attach_reach_worker_1 test_ubperf_workers_own_queues_no_lock
	       test_ubperf_workers_foreign_frames_handed_over test_ubperf_workers_foreign_jumbo_frames_handed_over
	       test_ep_workers_fold_reads_every_queue_at_once test_ep_workers_wait_interrupted_says_so)
