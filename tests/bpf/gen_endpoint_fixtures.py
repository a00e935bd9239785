#!/usr/bin/python3
"""Golden fixtures for the UBoE endpoint XDP program (bpf/ub_endpoint.bpf.c),
made with scapy from the rules (draft-li-uboe-00, docs/WIRE.md), never from the C
code: valid UBoE to the AF_XDP socket of its rx queue, malformed UBoE dropped
per reason, everything else to the kernel.

Same format as tests/bpf/fixtures/ub2e.txt; `opts --no-socket` runs the case
with the XSKMAP empty. Counters listed must move by one, all others not at all.
Run: /usr/bin/python3 tests/bpf/gen_endpoint_fixtures.py > tests/bpf/fixtures/endpoint.txt
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

from scapy.layers.inet import IP, TCP, UDP, ICMP  # noqa: E402
from scapy.layers.inet6 import IPv6, ICMPv6ND_NS, ICMPv6NDOptSrcLLAddr, IPv6ExtHdrDestOpt  # noqa: E402
from scapy.layers.l2 import ARP, Dot1Q, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from ublayers import UBTPH, UBTAH, UBSAETPH, uboe_ip  # noqa: E402

EP_MAC, PEER_MAC = "02:00:00:00:21:01", "02:00:00:00:21:02"
EP4, PEER4 = "10.21.0.1", "10.21.0.2"
EP6, PEER6 = "fd00:21::1", "fd00:21::2"
cases = []


def case(name, inp, verdict, counters, opts="", scapy=""):
    cases.append((name, opts, bytes(inp), verdict, counters, scapy))


def eth(payload, vlan=None, v6=False):
    e = Ether(dst=EP_MAC, src=PEER_MAC)
    if vlan is not None:
        e = e / Dot1Q(vlan=vlan)
    return e / (IPv6(payload) if v6 else IP(payload))


def uboe(v6=False, opcode=1, tah=True, payload=b"x" * 32, ext=None, ecn=2):
    tph = UBTPH(opcode=opcode, src_tpn=0x10, dst_tpn=0x20, psn=0x1234, ackreq=1, tpmsn=1)
    if ext is not None:
        tph = tph / ext
    return uboe_ip(PEER6 if v6 else PEER4, EP6 if v6 else EP4, tph, UBTAH(opcode=0x03) if tah else None,
                   payload, v6=v6, sport=0xc123, ecn=ecn)


# Valid UBoE: to the socket of queue 0, or dropped when no socket is bound.
for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    case(f"{fam}_data_to_xsk", eth(uboe(v6), v6=v6), "XDP_REDIRECT", ["rx_uboe", "to_xsk"],
         scapy=f"Ether/IP{'v6' if v6 else ''}/UDP(4792)/UBTPH(RTP data)/UBTAH(Send)")
    case(f"{fam}_ack_to_xsk", eth(uboe(v6, opcode=0x2, tah=False, payload=b""), v6=v6),
         "XDP_REDIRECT", ["rx_uboe", "to_xsk"])
    case(f"{fam}_sack_to_xsk", eth(uboe(v6, opcode=0x5, tah=False, payload=b"",
                                        ext=UBSAETPH(size=0, max_rcv_psn=0x1240) / Raw(b"\x01" + b"\x00" * 7)),
                                   v6=v6), "XDP_REDIRECT", ["rx_uboe", "to_xsk"])
    case(f"{fam}_no_socket_dropped", eth(uboe(v6), v6=v6), "XDP_DROP", ["rx_uboe", "drop_no_socket"],
         opts="--no-socket")
case("v4_tagged_to_xsk", eth(uboe(), vlan=7), "XDP_REDIRECT", ["rx_uboe", "to_xsk"])
case("v4_ce_marked_to_xsk", eth(uboe(ecn=3)), "XDP_REDIRECT", ["rx_uboe", "to_xsk"],
     scapy="ECN CE reaches user space, which turns it into a CNP")

# Everything else goes to the kernel: it answers ARP/ND and owns other ports.
arp = Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC) / ARP(op=1, hwsrc=PEER_MAC, psrc=PEER4, pdst=EP4)
case("arp_request_passes", arp, "XDP_PASS", ["pass_not_ip"])
ns = (Ether(dst="33:33:ff:00:00:01", src=PEER_MAC) /
      IPv6(src=PEER6, dst="ff02::1:ff00:1", hlim=255) / ICMPv6ND_NS(tgt=EP6) /
      ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC))
case("nd_solicitation_passes", ns, "XDP_PASS", ["pass_not_uboe"])
case("icmp_echo_passes", Ether(dst=EP_MAC, src=PEER_MAC) / IP(src=PEER4, dst=EP4) / ICMP(),
     "XDP_PASS", ["pass_not_uboe"])
case("udp_other_port_passes", Ether(dst=EP_MAC, src=PEER_MAC) / IP(src=PEER4, dst=EP4) /
     UDP(sport=4792, dport=53) / Raw(b"q" * 20), "XDP_PASS", ["pass_not_uboe"])
case("tcp_passes", Ether(dst=EP_MAC, src=PEER_MAC) / IPv6(src=PEER6, dst=EP6) / TCP(dport=4792),
     "XDP_PASS", ["pass_not_uboe"], scapy="TCP to port 4792 is not UBoE")
case("ipv6_ext_header_passes", Ether(dst=EP_MAC, src=PEER_MAC) / IPv6(src=PEER6, dst=EP6) /
     IPv6ExtHdrDestOpt() / UDP(dport=4792) / Raw(b"z" * 40), "XDP_PASS", ["pass_not_uboe"],
     scapy="UBoE carries no IPv6 extension headers (docs/WIRE.md §1)")
ip = IP(uboe())
later = ip.copy()
later.frag = 50
del later.chksum
case("v4_later_fragment_passes", Ether(dst=EP_MAC, src=PEER_MAC) / later, "XDP_PASS", ["pass_not_uboe"])
case("runt_frame_passes", Ether(dst=EP_MAC, src=PEER_MAC, type=0x0800) / Raw(b"\x45\x00"),
     "XDP_PASS", ["pass_not_uboe"], scapy="too short to be IP: the kernel's business")

# Malformed UBoE: dropped, counted per reason.
first = ip.copy()
first.flags = "MF"
del first.chksum
case("v4_first_fragment_dropped", Ether(dst=EP_MAC, src=PEER_MAC) / first, "XDP_DROP",
     ["drop_ipv4_fragment"])
opt = IP(src=PEER4, dst=EP4, flags="DF", options=b"\x01\x01\x01\x00") / ip[UDP]
case("v4_options_dropped", Ether(dst=EP_MAC, src=PEER_MAC) / opt, "XDP_DROP", ["drop_ipv4_options"])
for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    L3 = IPv6(src=PEER6, dst=EP6) if v6 else IP(src=PEER4, dst=EP4)
    case(f"{fam}_opcode_invalid_dropped", eth(uboe(v6, opcode=0x4), v6=v6), "XDP_DROP",
         ["drop_tp_opcode_invalid"])
    case(f"{fam}_truncated_tph_dropped", Ether(dst=EP_MAC, src=PEER_MAC) / L3 /
         UDP(sport=9, dport=4792) / Raw(b"\x01" * 10), "XDP_DROP", ["drop_truncated"])
    case(f"{fam}_no_room_for_icrc_dropped", Ether(dst=EP_MAC, src=PEER_MAC) / L3 /
         UDP(sport=9, dport=4792) / Raw(b"\x01" * 18), "XDP_DROP", ["drop_ip_bad_length"])
    full = bytes(eth(uboe(v6), v6=v6))
    case(f"{fam}_frame_cut_short_dropped", full[:-6], "XDP_DROP", ["drop_truncated"],
         scapy="IP length claims 6 bytes more than the frame holds")
    bad = eth(uboe(v6), v6=v6)
    bad[UDP].len += 2
    case(f"{fam}_udp_length_mismatch_dropped", bad, "XDP_DROP", ["drop_ip_bad_length"])

# Jumbo frames (MTU 9000): longer than the first buffer BPF_PROG_TEST_RUN (or
# a veth) gives, so they run as multi-buffer frames (the program is
# xdp.frags); the IP length is checked against the whole frame.
for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    for plen in (4096, 8900):
        case(f"{fam}_jumbo_{plen}_to_xsk", eth(uboe(v6, payload=bytes(i & 0xff for i in range(plen))), v6=v6),
             "XDP_REDIRECT", ["rx_uboe", "to_xsk"],
             scapy=f"a {plen}-byte UB payload in one frame: the part past the first buffer counts")
    full = bytes(eth(uboe(v6, payload=b"j" * 8900), v6=v6))
    case(f"{fam}_jumbo_cut_short_dropped", full[:-6], "XDP_DROP", ["drop_truncated"],
         scapy="a multi-buffer frame 6 bytes shorter than its IP length")


def main():
    print("# Generated by tests/bpf/gen_endpoint_fixtures.py from scapy; do not edit.")
    print(f"# {len(cases)} cases for bpf/ub_endpoint.bpf.c (tests/bpf/endpoint_testrun.c).")
    for name, opts, inp, verdict, counters, scapy in cases:
        print()
        print(f"case {name}")
        if scapy:
            print(f"# scapy: {scapy}")
        print("prog endpoint")
        if opts:
            print(f"opts {opts}")
        print(f"in {inp.hex()}")
        print(f"verdict {verdict}")
        print(f"count {' '.join(counters)}")
        print("end")


if __name__ == "__main__":
    main()
