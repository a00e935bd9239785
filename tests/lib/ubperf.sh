# What ubperf checked, for the suites that run it: every payload byte is a
# keyed function of its run, channel, message and place (user/ubperf/payload.h),
# checked by the receiver, which counts the bytes that passed (JSON
# verified_bytes; the client's peer_verified_bytes is the server's count).

# ubperf_verified CLI_JSON OP COUNT SIZE CHANNELS DEPTH: the receiver verified
# every byte it had to -- a Send's server every byte of every Send; a Write's
# server every slot of its region the Writes used (each channel's DEPTH once
# COUNT fills them: the region as the run left it, each slot by position,
# not each Write); a Read's client every Read -- and goodput is those bytes
# (a Write's: the Writes completed) over the run.
ubperf_verified() {
	local cli=$1 op=$2 count=$3 size=$4 slots=$(($5 * $6)) key want
	case $op in
	send) key=peer_verified_bytes want=$((count * size)) ;;
	write) key=peer_verified_bytes want=$(((count < slots ? count : slots) * size)) ;;
	read) key=verified_bytes want=$((count * size)) ;;
	*) echo "ubperf_verified: no op $op"; return 1 ;;
	esac
	echo "$op: $key $(json_get "$cli" $key), want $want"
	[[ $(json_get "$cli" $key) -eq $want ]]
	if [[ $op == write ]]; then want=$((count * size)); fi
	ubperf_goodput_is "$cli" "$want"
}

# ubperf_goodput_is JSON BYTES: goodput_bps is BYTES over duration_s (within
# 1 %: the duration is printed to the microsecond).
ubperf_goodput_is() {
	/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); g, t = j["goodput_bps"], j["duration_s"]
want = int(sys.argv[2]) * 8 / t
print("goodput_bps %.0f; %s bytes over %s s: %.0f" % (g, sys.argv[2], t, want))
sys.exit(not abs(g - want) <= want / 100)' "$1" "$2"
}
