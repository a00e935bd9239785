#!/usr/bin/python3
"""Golden fixtures for the WPS egress XDP program (bpf/wps_egress.bpf.c), made with
scapy and struct from draft-wps-ipv6-option and docs/WIRE.md §6, never from the C code.

Each case: the input frame, the options in force, the expected XDP verdict, the
expected output frame and the counters that must move (all others must not).
`ifindex-at OFF` tells the harness to write the site device's ifindex (unknown
here) at OFF of the expected output, little-endian (struct wps_xsk_desc).
Run: /usr/bin/python3 tests/bpf/gen_wps_egress_fixtures.py > tests/bpf/fixtures/wps_egress.txt
"""
import os
import struct
import sys

from scapy.layers.inet import IP, UDP, TCP
from scapy.layers.inet6 import IPv6, ICMPv6ND_NS, ICMPv6EchoRequest
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

HERE = os.path.dirname(os.path.abspath(__file__))


def env():
    e = {}
    with open(os.path.join(HERE, "..", "lib", "wps_egress.env")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, v = line.split("=", 1)
                e[k] = v
    return e


W = env()
NODE_IN, NODE_EG = int(W["WPS_IN_NODE"]), int(W["WPS_EG_NODE"])
S, E, R = 0x80, 0x40, 0x20
MAGIC = 0x57505332             # "WPS2"
FIB_SUCCESS, FIB_NO_NEIGH = 0, 7
cases = []


def case(name, inp, verdict, counters, out=None, opts="", ifindex_at=None, scapy="", logs=0):
    cases.append((name, opts, bytes(inp), verdict, None if out is None else bytes(out), counters,
                  ifindex_at, scapy, logs))


def wps_opt(flags=S | E, flow=7, ingress=NODE_IN, egress=NODE_EG, gid=100, iport=1, eport=2,
            length=12, rsvd=0):
    """Option type 0x81, Opt Data Len, then the 12 data bytes of docs/WIRE.md §6."""
    data = struct.pack("!BBHHHHBB", flags, rsvd, flow, ingress, egress, gid, iport, eport)
    return bytes([0x81, length]) + data[:length] + b"\x00" * max(0, length - 12)


def opthdr(nexthdr, options):
    """An options header: NextHdr, HdrExtLen, options, PadN/Pad1 to a multiple of 8."""
    body = bytes(options)
    pad = (8 - (2 + len(body)) % 8) % 8
    if pad == 1:
        body += b"\x00"
    elif pad > 1:
        body += bytes([1, pad - 2]) + b"\x00" * (pad - 2)
    total = 2 + len(body)
    return bytes([nexthdr, total // 8 - 1]) + body


def inner4(dst=W["WPS_DST_IP4"], ttl=64, payload=b"inner-v4-payload", tos=0):
    return bytes(IP(src=W["WPS_SRC_IP4"], dst=dst, ttl=ttl, id=1, tos=tos) / UDP(sport=1234, dport=5001) /
                 Raw(payload))


def inner6(dst=W["WPS_DST_IP6"], hlim=64, tc=0):
    return bytes(IPv6(src=W["WPS_SRC_IP6"], dst=dst, hlim=hlim, tc=tc) /
                 TCP(sport=40000, dport=5201, flags="PA", seq=1000, ack=2000) / Raw(b"inner-v6-tcp"))


def outer(inner, hdrs=None, dst=W["WPS_EG_IP6"], first_nh=60, trailer=b"", src=W["WPS_IN_IP6"], tc=0, **opt):
    """Outer Ethernet/IPv6 to the egress, DestOpt (default) carrying the WPS option."""
    nh = 4 if inner[0] >> 4 == 4 else 41
    if hdrs is None:
        hdrs = opthdr(nh, wps_opt(**opt))
    ip6 = IPv6(src=src, dst=dst, nh=first_nh, hlim=60, fl=0x12345, tc=tc) / Raw(hdrs + inner)
    return bytes(Ether(dst=W["WPS_EG_DOM_MAC"], src=W["WPS_IN_DOM_MAC"], type=0x86DD) / ip6) + trailer


def to_site(inner):
    """R = 0, resolved: the inner packet, unchanged, under the site's MACs."""
    t = 0x0800 if inner[0] >> 4 == 4 else 0x86DD
    return bytes(Ether(dst=W["WPS_DST_MAC"], src=W["WPS_EG_SITE_MAC"], type=t)) + inner


def to_kernel(inner):
    """R = 0, not finished in XDP: the inner packet under the frame's own MACs."""
    t = 0x0800 if inner[0] >> 4 == 4 else 0x86DD
    return bytes(Ether(dst=W["WPS_EG_DOM_MAC"], src=W["WPS_IN_DOM_MAC"], type=t)) + inner


def to_thread(frame, inner, flags, flow=7, gid=100, fib_rc=FIB_SUCCESS, node=NODE_IN, peer=0):
    """R = 1: struct wps_xsk_desc over the outer headers (magic, flags, FIB result, l2_off,
    ifindex, Ingress Node ID, Flow ID, Group ID, peer index, a length word left 0), an
    Ethernet header before the inner packet."""
    l2_off = len(frame) - len(inner) - 14
    desc = struct.pack("<IBBHIHHHHI", MAGIC, flags, fib_rc, l2_off, 0, node, flow, gid, peer, 0)
    t = 0x0800 if inner[0] >> 4 == 4 else 0x86DD
    if fib_rc == FIB_SUCCESS:
        eth = bytes(Ether(dst=W["WPS_DST_MAC"], src=W["WPS_EG_SITE_MAC"], type=t))
    else:
        eth = b"\x00" * 12 + struct.pack("!H", t)
    return desc + frame[len(desc):l2_off] + eth + inner


# ---- R = 0: decapsulated in XDP ------------------------------------------------
i4, i6 = inner4(), inner6()
case("r0_v4_forwarded", outer(i4), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4),
     scapy="Ether/IPv6/DestOpt(WPS S E, R=0)/IP/UDP -> Ether(site MACs)/IP/UDP, byte-identical")
case("r0_v6_forwarded", outer(i6), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i6))
low_ttl = inner4(ttl=1)
case("r0_ttl_untouched", outer(low_ttl), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(low_ttl),
     scapy="decapsulation restores the packet as the ingress received it: TTL 1 stays 1")
nn4, nn6 = inner4(dst=W["WPS_NO_NEIGH_IP4"]), inner6(dst=W["WPS_NO_NEIGH_IP6"])
case("r0_v4_unresolved_to_kernel", outer(nn4), "XDP_PASS", ["rx_wps", "r0_kernel"], to_kernel(nn4))
case("r0_v6_unresolved_to_kernel", outer(nn6), "XDP_PASS", ["rx_wps", "r0_kernel"], to_kernel(nn6))
un = inner4(dst=W["WPS_UNREACH_IP4"])
case("r0_unreachable_to_kernel", outer(un), "XDP_PASS", ["rx_wps", "r0_kernel"], to_kernel(un))
loc = inner4(dst=W["WPS_EG_SITE_IP4"])
case("r0_local_to_kernel", outer(loc), "XDP_PASS", ["rx_wps", "r0_kernel"], to_kernel(loc))
oth = inner4(dst=W["WPS_OTHER_IP4"])
case("r0_device_not_ours_to_kernel", outer(oth), "XDP_PASS", ["rx_wps", "r0_kernel"], to_kernel(oth),
     scapy="FIB picks a device outside the egress's devmap: the kernel forwards it")
hbh = outer(i4, first_nh=0, hdrs=opthdr(4, wps_opt()))
case("r0_hop_by_hop_carriage", hbh, "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4))
padded = outer(i4, hdrs=opthdr(4, bytes([1, 4, 0, 0, 0, 0]) + wps_opt() + b"\x00"))
case("r0_padding_around_the_option", padded, "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4))
rsvd = outer(i4, flags=S | E | 0x1f, rsvd=0xff)
case("r0_reserved_bits_ignored", rsvd, "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4))
case("r0_egress_port_id_ignored", outer(i4, eport=0xfe, iport=0xfd), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4),
     scapy="Ingress and Egress Port IDs are not used: the inner FIB lookup picks the way out (docs/WPS.md)")
other_opt_first = outer(i4, hdrs=opthdr(60, bytes([0x1e, 2, 0xaa, 0xbb])) + opthdr(4, wps_opt()),
                        first_nh=0)
case("r0_hbh_other_option_then_destopt_wps", other_opt_first, "XDP_REDIRECT", ["rx_wps", "r0_fwd"],
     to_site(i4))

# ---- R = 1: to the reorder thread ----------------------------------------------
f = outer(i4, flags=S | R, gid=300)
case("r1_v4_to_reorder_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"], to_thread(f, i4, S | R, gid=300),
     ifindex_at=8, scapy="R=1: descriptor over the outer headers, site MACs right before the inner packet")
f = outer(i6, flags=E | R, flow=0xbeef, gid=65535)
case("r1_v6_to_reorder_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"],
     to_thread(f, i6, E | R, flow=0xbeef, gid=65535), ifindex_at=8)
f = outer(nn4, flags=S | E | R)
case("r1_unresolved_still_to_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"],
     to_thread(f, nn4, S | E | R, fib_rc=FIB_NO_NEIGH), ifindex_at=8,
     scapy="R=1 with an unresolved neighbour: the thread hands it to the kernel in order")
f = outer(i4, flags=S | E | R)
case("r1_without_socket_decapsulated", f, "XDP_REDIRECT", ["rx_wps", "r1_no_xsk", "r0_fwd"], to_site(i4),
     opts="--no-socket", scapy="no reorder socket: forwarded unordered rather than lost")
case("r1_no_reorder_mode", f, "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4), opts="--no-reorder")

# ---- jumbo frames: the program is multi-buffer (xdp.frags) ---------------------------
# A 9000-byte path MTU less the 56 bytes of WPS: inner packets of 8944 bytes, in frames the
# test run splits into a first buffer of less than a page and fragments. Lengths count the
# whole frame; the rewritten headers lie in the first buffer.
j4 = inner4(payload=b"j" * (8944 - 28))
j6 = bytes(IPv6(src=W["WPS_SRC_IP6"], dst=W["WPS_DST_IP6"], hlim=64) / UDP(sport=1, dport=2) /
           Raw(b"J" * (8944 - 48)))
case("jumbo_r0_v4_forwarded", outer(j4), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(j4),
     scapy="a 9014-byte frame, multi-buffer: decapsulated whole, byte-identical")
case("jumbo_r0_v6_forwarded", outer(j6), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(j6))
f = outer(j4, flags=S | R, gid=300)
case("jumbo_r1_to_reorder_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"], to_thread(f, j4, S | R, gid=300),
     ifindex_at=8, scapy="R=1 jumbo to multi-buffer sockets (xsk_max 0)")
case("jumbo_r1_over_socket_limit_decapsulated", f, "XDP_REDIRECT", ["rx_wps", "r1_too_big", "r0_fwd"],
     to_site(j4), opts="--xsk-max 3840",
     scapy="sockets without multi-buffer (a kernel before 6.6): longer than a frame, decapsulated, not lost")
m4 = inner4(payload=b"m" * 3600)
f = outer(m4, flags=S | E | R)
case("r1_in_fragments_within_limit_decapsulated", f, "XDP_REDIRECT", ["rx_wps", "r1_too_big", "r0_fwd"],
     to_site(m4), opts="--xsk-max 3840",
     scapy="3,702 bytes fit a 3,840-byte frame but come in two buffers: a kernel before 6.6 would copy the first")
f = outer(i4, flags=S | E | R)
case("r1_small_within_limit_to_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"], to_thread(f, i4, S | E | R),
     ifindex_at=8, opts="--xsk-max 3840")
case("jumbo_outer_trailing_bytes", outer(j4, trailer=b"\xee" * 6), "XDP_DROP", ["rx_wps", "bad_length"],
     scapy="the outer payload length is checked against the whole frame, fragments included")
short_j = bytearray(j4)
short_j[2:4] = struct.pack("!H", len(j4) - 2)
case("jumbo_inner_length_wrong", outer(bytes(short_j)), "XDP_DROP", ["rx_wps", "bad_length"])
jw = bytes(IPv6(src=W["WPS_SRC_IP6"], dst=W["WPS_DST_IP6"], hlim=64, nh=60)) + \
    opthdr(17, wps_opt()) + bytes(UDP(sport=1, dport=2) / Raw(b"W" * 8000))
jw = jw[:4] + struct.pack("!H", len(jw) - 40) + jw[6:]
case("jumbo_inner_carries_wps_dropped", outer(jw), "XDP_DROP", ["rx_wps", "drop_inner_wps"])

# ---- validation failures: dropped and counted -------------------------------------
case("bad_opt_data_len", outer(i4, hdrs=opthdr(4, wps_opt(length=10))), "XDP_DROP",
     ["rx_wps", "bad_opt_len"], opts="--log 100", logs=1)
case("bad_opt_data_len_longer", outer(i4, hdrs=opthdr(4, wps_opt(length=14))), "XDP_DROP",
     ["rx_wps", "bad_opt_len"])
case("wrong_egress_node", outer(i4, egress=NODE_EG + 1), "XDP_DROP", ["rx_wps", "bad_egress_node"],
     opts="--log 100", logs=1)
case("wrong_egress_node_log_rate_limited", outer(i4, egress=NODE_EG + 1), "XDP_DROP",
     ["rx_wps", "rx_wps", "bad_egress_node", "bad_egress_node", "log_suppressed"], opts="--log 1 --repeat 2",
     logs=1, scapy="twice, with a budget of one record per second: one logged, one counted as suppressed")
case("two_options_one_header", outer(i4, hdrs=opthdr(4, wps_opt() + wps_opt(gid=101))), "XDP_DROP",
     ["rx_wps", "bad_two_options"])
both = outer(i4, first_nh=0, hdrs=opthdr(60, wps_opt()) + opthdr(4, wps_opt()))
case("option_in_both_headers", both, "XDP_DROP", ["rx_wps", "bad_both_headers"])
over = bytes([4, 1, 0x81, 20]) + b"\x00" * 12
case("option_overruns_header", outer(i4, hdrs=over), "XDP_DROP", ["rx_wps", "bad_options_header"])
big = bytes([4, 8, 0x81, 12]) + wps_opt()[2:] + bytes([1, 54]) + b"\x00" * 54
case("options_header_too_long", outer(i4, hdrs=big), "XDP_DROP", ["rx_wps", "bad_options_header"])
trunc = outer(i4)[:14 + 40 + 10]
case("options_header_truncated", trunc, "XDP_DROP", ["rx_wps", "bad_options_header"])
case("inner_not_ip", outer(bytes(UDP(sport=1, dport=2) / Raw(b"x" * 20)),
                           hdrs=opthdr(17, wps_opt())), "XDP_DROP", ["rx_wps", "bad_inner"])
case("inner_version_mismatch", outer(i6, hdrs=opthdr(4, wps_opt())), "XDP_DROP", ["rx_wps", "bad_inner"])
short_inner = bytearray(i4)
short_inner[2:4] = struct.pack("!H", len(i4) + 8)
case("inner_length_wrong", outer(bytes(short_inner)), "XDP_DROP", ["rx_wps", "bad_length"])
case("outer_trailing_bytes", outer(i4, trailer=b"\xee" * 6), "XDP_DROP", ["rx_wps", "bad_length"])

# ---- peers: only the ingress nodes given with --peer, each with its Ingress Node IDs ------
# (The harness's default peer is WPS_IN_IP6 with WPS_IN_NODE, as --peer ADDR=ID.)
STRANGER = "fd00:20::99"
f = outer(i4, src=STRANGER)
case("peer_unknown_source_dropped", f, "XDP_DROP", ["rx_wps", "bad_peer"], opts="--log 100", logs=1,
     scapy="a host that learnt the node IDs, not a peer: dropped before anything is decapsulated")
f = outer(i4, src=STRANGER, flags=S | E | R)
case("peer_unknown_source_r1_not_steered", f, "XDP_DROP", ["rx_wps", "bad_peer"],
     scapy="R=1 from a stranger: dropped, never handed to the reorder thread")
f = outer(i4, ingress=NODE_IN + 4)
case("peer_ingress_node_not_its_own_dropped", f, "XDP_DROP", ["rx_wps", "bad_peer_node"], opts="--log 100",
     logs=1, scapy="a peer's address with an Ingress Node ID its --peer ADDR=ID does not give")
f = outer(i4, ingress=NODE_IN + 4, flags=S | E | R)
case("peer_ingress_node_not_its_own_r1_dropped", f, "XDP_DROP", ["rx_wps", "bad_peer_node"])
case("peer_without_id_any_node", outer(i4, ingress=NODE_IN + 4), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4),
     opts=f"--peer {W['WPS_IN_IP6']}", scapy="--peer ADDR without an ID: any Ingress Node ID")
case("peer_with_several_ids", outer(i4, ingress=9), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4),
     opts=f"--peer {W['WPS_IN_IP6']}={NODE_IN} --peer {W['WPS_IN_IP6']}=9")
f = outer(i4, flags=S | R, gid=300)
case("peer_index_to_reorder_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk"],
     to_thread(f, i4, S | R, gid=300, peer=1), ifindex_at=8,
     opts=f"--peer fd00:20::7=3,{W['WPS_IN_IP6']}={NODE_IN}",
     scapy="the second --peer address: peer index 1 in the descriptor (its own reorder state and share)")
case("any_peer_serves_any_source", outer(i4, src=STRANGER), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(i4),
     opts="--any-peer")

# ---- an inner packet that carries the WPS option itself never leaves ----------------
def inner6_hdrs(hdrs, first_nh):
    """Inner IPv6/UDP behind extension headers `hdrs` (raw, chained by the caller)."""
    udp = bytes(UDP(sport=4000, dport=4001) / Raw(b"inner-wps"))
    return bytes(IPv6(src=W["WPS_SRC_IP6"], dst=W["WPS_DST_IP6"], nh=first_nh, hlim=64) / Raw(hdrs + udp))


wps_in = inner6_hdrs(opthdr(17, wps_opt(flow=9, gid=5)), 60)
case("inner_carries_wps_dropped", outer(wps_in), "XDP_DROP", ["rx_wps", "drop_inner_wps"], opts="--log 100",
     logs=1, scapy="inner IPv6/DestOpt(WPS)/UDP: it would leave the domain past the TC boundary filter")
f = outer(wps_in, flags=S | E | R)
case("inner_carries_wps_r1_not_steered", f, "XDP_DROP", ["rx_wps", "drop_inner_wps"])
hbh_in = inner6_hdrs(opthdr(17, wps_opt()), 0)
case("inner_hop_by_hop_wps_dropped", outer(hbh_in), "XDP_DROP", ["rx_wps", "drop_inner_wps"])
rt = bytes([60, 2, 0, 0, 0, 0, 0, 0]) + b"\x00" * 16      # Routing (type 0 layout), one address
deep = inner6_hdrs(rt + opthdr(17, bytes([1, 2, 0, 0]) + wps_opt()), 43)
case("inner_wps_behind_routing_header_dropped", outer(deep), "XDP_DROP", ["rx_wps", "drop_inner_wps"],
     scapy="inner IPv6/Routing/DestOpt(PadN, WPS)/UDP")
frag_first = inner6_hdrs(bytes([60, 0, 0, 1, 0, 0, 0, 7]) + opthdr(17, wps_opt()), 44)
case("inner_wps_behind_first_fragment_dropped", outer(frag_first), "XDP_DROP", ["rx_wps", "drop_inner_wps"])
frag_later = inner6_hdrs(bytes([60, 0, 0, 0x59, 0, 0, 0, 7]) + opthdr(17, wps_opt()), 44)
case("inner_later_fragment_forwarded", outer(frag_later), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(frag_later),
     scapy="a non-first fragment's bytes are payload: no header to find the option in")
other_opt = inner6_hdrs(opthdr(17, bytes([0x1e, 2, 0xaa, 0xbb])), 60)
case("inner_other_option_forwarded", outer(other_opt), "XDP_REDIRECT", ["rx_wps", "r0_fwd"], to_site(other_opt))
chain = b"".join(opthdr(60, b"") for _ in range(8)) + opthdr(17, b"")
too_deep = inner6_hdrs(chain, 60)
case("inner_chain_too_long_dropped", outer(too_deep), "XDP_DROP", ["rx_wps", "drop_inner_unwalked"],
     scapy="nine Destination Options headers: more than the walk takes, so it might hide the option")

# ---- ECN: RFC 6040 decapsulation (normal mode), the outer field into the inner one --------
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3
EF = 46 << 2                    # a DSCP that must stay as it is
for name, outer_ecn, inner_ecn, want in [
        ("ce_into_ect0", CE, ECT0, CE), ("ce_into_ect1", CE, ECT1, CE), ("ce_onto_ce", CE, CE, CE),
        ("ect1_into_ect0", ECT1, ECT0, ECT1), ("ect0_onto_ect1", ECT0, ECT1, ECT1),
        ("not_ect_outer_ect0_inner", NOT_ECT, ECT0, ECT0), ("ect0_outer_not_ect_inner", ECT0, NOT_ECT, NOT_ECT),
        ("ce_outer_dscp_kept", CE, ECT0 | EF, CE | EF)]:
    i_in, i_out = inner4(tos=inner_ecn), inner4(tos=want)     # scapy computes each header checksum
    case(f"ecn_{name}_v4", outer(i_in, tc=outer_ecn | (EF if name.endswith("dscp_kept") else 0)),
         "XDP_REDIRECT", ["rx_wps", "r0_fwd"] + (["ecn_ce"] if want & 3 == CE and inner_ecn & 3 != CE else []),
         to_site(i_out), scapy=f"outer ECN {outer_ecn}, inner {inner_ecn & 3}: inner leaves with {want & 3}, IPv4 checksum updated")
    i_in, i_out = inner6(tc=inner_ecn), inner6(tc=want)
    case(f"ecn_{name}_v6", outer(i_in, tc=outer_ecn), "XDP_REDIRECT",
         ["rx_wps", "r0_fwd"] + (["ecn_ce"] if want & 3 == CE and inner_ecn & 3 != CE else []), to_site(i_out))
i_in, i_out = inner4(tos=ECT0), inner4(tos=CE)
f = outer(i_in, tc=CE, flags=S | R, gid=300)
case("ecn_ce_r1_to_reorder_thread", f, "XDP_REDIRECT", ["rx_wps", "r1_xsk", "ecn_ce"],
     to_thread(f, i_out, S | R, gid=300), ifindex_at=8,
     scapy="R=1: the frame the thread transmits (AF_XDP or raw socket) already carries the CE")
nn_in, nn_out = inner4(dst=W["WPS_NO_NEIGH_IP4"], tos=ECT1), inner4(dst=W["WPS_NO_NEIGH_IP4"], tos=CE)
case("ecn_ce_to_kernel", outer(nn_in, tc=CE), "XDP_PASS", ["rx_wps", "r0_kernel", "ecn_ce"], to_kernel(nn_out),
     scapy="the kernel path (unresolved neighbour) gets the inner packet with CE")
case("ecn_ce_not_ect_dropped_v4", outer(inner4(), tc=CE), "XDP_DROP", ["rx_wps", "drop_ce_not_ect"],
     opts="--log 100", logs=1, scapy="RFC 6040: CE on the outer header of a Not-ECT packet: drop")
case("ecn_ce_not_ect_dropped_v6", outer(inner6(), tc=CE), "XDP_DROP", ["rx_wps", "drop_ce_not_ect"])
case("ecn_ce_not_ect_r1_dropped", outer(inner4(), tc=CE, flags=S | E | R), "XDP_DROP", ["rx_wps", "drop_ce_not_ect"])

# ---- everything else passes untouched ---------------------------------------------
f = outer(i4, dst="fd00:20::77")
case("wps_for_another_address_passes", f, "XDP_PASS", ["pass_other"], f)
arp = Ether(dst="ff:ff:ff:ff:ff:ff", src=W["WPS_IN_DOM_MAC"]) / ARP(psrc="10.20.0.2", pdst="10.20.0.1")
case("arp_passes", arp, "XDP_PASS", ["pass_other"], arp)
ns = (Ether(dst="33:33:ff:00:00:01", src=W["WPS_IN_DOM_MAC"]) /
      IPv6(src=W["WPS_IN_IP6"], dst="ff02::1:ff00:1", hlim=255) / ICMPv6ND_NS(tgt=W["WPS_EG_IP6"]))
case("neighbour_solicitation_passes", ns, "XDP_PASS", ["pass_other"], ns)
ping = Ether(dst=W["WPS_EG_DOM_MAC"], src=W["WPS_IN_DOM_MAC"]) / IPv6(src=W["WPS_IN_IP6"], dst=W["WPS_EG_IP6"]) / \
    ICMPv6EchoRequest(id=1, seq=1)
case("ping_to_us_passes", ping, "XDP_PASS", ["pass_other"], ping)
no_wps = outer(i4, hdrs=opthdr(4, bytes([0x1e, 4, 1, 2, 3, 4])))
case("destopt_without_wps_passes", no_wps, "XDP_PASS", ["pass_other"], no_wps)
v4 = Ether(dst=W["WPS_EG_DOM_MAC"], src=W["WPS_IN_DOM_MAC"]) / IP(src="10.20.0.2", dst="10.20.0.1") / \
    UDP(sport=1, dport=2) / Raw(b"v4")
case("ipv4_passes", v4, "XDP_PASS", ["pass_other"], v4)


def main():
    print("# Generated by tests/bpf/gen_wps_egress_fixtures.py from scapy; do not edit.")
    print(f"# {len(cases)} cases. Topology: tests/lib/wps_egress.env")
    for name, opts, inp, verdict, out, counters, ifindex_at, scapy, logs in cases:
        print()
        print(f"case {name}")
        if scapy:
            print(f"# scapy: {scapy}")
        print("prog wps_egress")
        if opts:
            print(f"opts {opts}")
        print(f"in {inp.hex()}")
        print(f"verdict {verdict}")
        if out is not None:
            print(f"out {out.hex()}")
        if ifindex_at is not None:
            print(f"ifindex-at {ifindex_at}")
        if logs:
            print(f"logs {logs}")
        print(f"count {' '.join(counters)}")
        print("end")


if __name__ == "__main__":
    main()
