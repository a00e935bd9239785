# The fill-ring shortage (user/xsk/xsk_mt.h), sourced by tests/endpoint/run:
# a receiver that stops reading while its peer keeps its windows full. The
# kernel drops what finds the queue's fill ring empty, the endpoint counts it
# (xsk_fill_empty, once per queue however many workers share its ring) and,
# running again, refills the ring; RTP resends what was dropped.

# A server of two workers (two sockets on each queue, sharing its fill ring)
# stopped for 0.2 s under 16 channels of 256 packets in flight (4096, twice
# the ring's 2048 frames): the kernel's drops, the port's and the endpoint's
# counts agree; every message arrives once, intact, in order. (A channel
# outlives the stop by the core's retry time, docs/TRANSPORT.md "RTO", not by
# a raised RTO floor.)
test_fill_ring_shortage_counted_and_recovered() {
	local d cli before drops; d=$(mktemp -d)
	topo_workers
	before=$(rx_queue_drops "$NS_SRV" s0)
	start_server "$NS_SRV" s0 "$d/srv" --json --workers 2
	nsenter --net="/run/netns/$NS_CLI" "$BIN/ubperf" client --dev c0 --peer 10.64.0.2 --time 5 \
		--size 64k --channels 16 --workers 1 --json >"$d/cli" 2>"$d/cli.err" &
	cli=$!
	sleep 2
	kill -STOP $SRV_PID
	sleep 0.2
	kill -CONT $SRV_PID
	wait $cli || { cat "$d/cli.err" "$d/srv.err"; return 1; }
	wait $SRV_PID || { cat "$d/srv.err"; return 1; }
	SRV_PID=
	drops=$(($(rx_queue_drops "$NS_SRV" s0) - before))
	echo "s0 dropped $drops; server xsk_rx_dropped $(json_get "$d/srv" xsk_rx_dropped)" \
	     "xsk_fill_empty $(json_get "$d/srv" xsk_fill_empty) xsk_rx_ring_full $(json_get "$d/srv" xsk_rx_ring_full)"
	[[ $drops -gt 0 ]]
	[[ $(json_get "$d/srv" xsk_rx_dropped) -eq $drops ]]
	[[ $(json_get "$d/srv" xsk_fill_empty) -eq $drops ]]
	[[ $(json_get "$d/srv" xsk_rx_ring_full) -eq 0 ]]
	local n; n=$(json_get "$d/cli" messages)
	echo "messages $n, retransmitted $(json_get "$d/cli" retransmissions.total)"
	[[ $(json_get "$d/cli" retransmissions.total) -gt 0 ]]
	[[ $(json_get "$d/cli" peer_messages) -eq $n && $(json_get "$d/srv" messages) -eq $n ]]
	[[ $(json_get "$d/srv" out_of_order) -eq 0 && $(json_get "$d/srv" corrupt) -eq 0 ]]
	ubperf_verified "$d/cli" send "$n" 65536 16 8
	rm -rf "$d"
}

FILL_TESTS=(test_fill_ring_shortage_counted_and_recovered)
