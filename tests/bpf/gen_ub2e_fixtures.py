#!/usr/bin/python3
"""Golden fixtures for the UB2E XDP programs, made with scapy from the drafts'
rules (draft-li-uboe-00 §5, docs/WIRE.md), never from the C code.

Each case: the input frame, the ubctl options in force, the expected XDP verdict,
the expected output frame and the counters that must move (all others must not).
Run: /usr/bin/python3 tests/bpf/gen_ub2e_fixtures.py > tests/bpf/fixtures/ub2e.txt
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

from scapy.layers.inet import IP, UDP, ICMP  # noqa: E402
from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt, ICMPv6PacketTooBig, ICMPv6TimeExceeded  # noqa: E402
from scapy.layers.l2 import ARP, Dot1Q, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from ublayers import (UBLPH, UBNTH, UBTPH, UBTAH, UBCETPH, UBSAETPH,  # noqa: E402
                      UBCNPETPH, CAQMTag, cci_caqm, cci_fecn, icrc, sack_bitmap, uboe_ip,
                      UBCTPH, CTP_PORT)


def topo():
    env = {}
    with open(os.path.join(HERE, "..", "lib", "topo.env")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, v = line.split("=", 1)
                env[k] = v
    return env


T = topo()
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3
UNMARKABLE, LIGHT, MARKABLE, SEVERE = 0, 1, 2, 3
cases = []


def case(name, prog, inp, verdict, counters, out=None, opts="", scapy="", mark=None, lines=()):
    cases.append((name, prog, opts, bytes(inp), verdict, None if out is None else bytes(out),
                  counters, scapy, mark, lines))


def slow_mark(pid, perm=0, fecn=0):
    """skb->mark of a punted packet (headers/ub2e_maps.h): 10100 | FECN(2) | Permission | Partition ID(24)."""
    return 0xA0000000 | (fecn & 3) << 25 | (perm & 1) << 24 | (pid & 0xFFFFFF)


def meta(mark, caqm=0):
    """The 8 bytes of XDP metadata before a punted frame, host byte order: the
    mark and the CAQM request (headers/ub2e_maps.h; 0: none)."""
    return struct.pack("=II", mark, caqm)


def slow_caqm(tag):
    """The CAQM request word of a punt: 0x8000 | the tag's 16 info bits (cc_type 000)."""
    info = int.from_bytes(bytes(tag)[:2], "big")
    assert info >> 13 == 0, "only a CAQM (cc_type 000) tag crosses the slow path"
    return 0x8000 | info


def ip_bytes(v6=False, dst=None, src=None, ecn=ECT0, ttl=64, opcode=1, payload=b"ub-payload",
             sport=0x4321, tah=True, ext=None):
    """A UBoE IP packet (IP..ICRC) from the UBPU side towards the IP host by default."""
    if src is None:
        src = T["UBPU_IP6"] if v6 else T["UBPU_IP4"]
    if dst is None:
        dst = T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"]
    tph = UBTPH(opcode=opcode, src_tpn=0x10, dst_tpn=0x20, psn=0x1234, ackreq=1, tpmsn=3)
    if ext is not None:
        tph = tph / ext
    return uboe_ip(src, dst, tph, UBTAH(opcode=0x03) if tah else None, payload, v6=v6,
                   sport=sport, ecn=ecn, ttl=ttl)


def native(ipb, fecn=MARKABLE, loc=0, perm=0, pid=5, cci=None, config=None, ethertype=0x88B5):
    v6 = ipb[0] >> 4 == 6
    if config is None:
        config = 4 if v6 else 3
    return (Ether(dst=T["SW_UB_MAC"], src=T["UBPU_MAC"], type=ethertype) /
            UBLPH(config=config, vl=3, lbmode=1, route_policy=0) /
            UBNTH(cci=cci_fecn(fecn, loc) if cci is None else cci, perm=perm, pid=pid) /
            Raw(ipb))


def rewrite_ip(ipb, ecn=None, ttl_dec=1):
    """What the switch may change in the IP header: ECN, TTL and the IPv4 checksum."""
    if ipb[0] >> 4 == 4:
        ip = IP(ipb)
        if ecn is not None:
            ip.tos = (ip.tos & ~3) | ecn
        ip.ttl -= ttl_dec
        del ip.chksum
    else:
        ip = IPv6(ipb)
        if ecn is not None:
            ip.tc = (ip.tc & ~3) | ecn
        ip.hlim -= ttl_dec
    out = bytes(ip)
    # The point of the masked ICRC: these edits leave it valid.
    assert icrc(out[:-4]) == out[-4:], "ICRC broken by an allowed edit"
    return out


def ethertype(ipb):
    return 0x86DD if ipb[0] >> 4 == 6 else 0x0800


def tagged(dst, src, ipb, vlan):
    """Eth [/ 802.1Q] / IP bytes, EtherTypes explicit (Raw payload gives scapy no hint)."""
    if vlan is None:
        return Ether(dst=dst, src=src, type=ethertype(ipb)) / Raw(ipb)
    return Ether(dst=dst, src=src, type=0x8100) / Dot1Q(vlan=vlan, type=ethertype(ipb)) / Raw(ipb)


def uboe_out(ipb, vlan=None):
    return tagged(T["IPHOST_MAC"], T["SW_IP_MAC"], ipb, vlan)


def punt_out(ipb, pid=5, perm=0, fecn=MARKABLE, caqm=0):
    """Native frame handed to the kernel as plain IP: LPH/NTH gone, MACs as received,
    the NPI (and CAQM request) in XDP metadata for the slow path."""
    return meta(slow_mark(pid, perm, fecn), caqm) + bytes(tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ipb, None))


def force_df(ipb):
    """What a punt for frag-needed hands the kernel: DF set, so ICMP, never fragments."""
    if ipb[0] >> 4 != 4:
        return ipb
    ip = IP(ipb)
    ip.flags = ip.flags | 2
    del ip.chksum
    return bytes(ip)


TX = ["rx_ub", "tx_uboe"]
DROP = lambda why: ["rx_ub", why]  # noqa: E731

# ---- UB -> UBoE ------------------------------------------------------------
for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    ipb = ip_bytes(v6=v6, ecn=ECT1)
    case(f"to_uboe_{fam}_basic", "to_uboe", native(ipb, fecn=MARKABLE, pid=5), "XDP_REDIRECT", TX,
         uboe_out(rewrite_ip(ipb, ecn=ECT0), vlan=5),
         scapy="Ether/UBLPH/UBNTH(FECN markable, pid 5)/IP/UDP(4792)/UBTPH/UBTAH -> VLAN 5, ECT(0), TTL-1")
    # Default FECN -> ECN table (draft §5.2.1), input ECN deliberately different.
    for fecn, ecn, what in ((UNMARKABLE, NOT_ECT, "unmarkable"), (LIGHT, CE, "light_ce"),
                            (MARKABLE, ECT0, "markable"), (SEVERE, CE, "severe_ce")):
        ipb = ip_bytes(v6=v6, ecn=ECT1 if ecn != ECT1 else NOT_ECT)
        case(f"to_uboe_{fam}_fecn_{what}", "to_uboe", native(ipb, fecn=fecn, pid=5), "XDP_REDIRECT", TX,
             uboe_out(rewrite_ip(ipb, ecn=ecn), vlan=5))
    ipb = ip_bytes(v6=v6, ttl=1)
    case(f"to_uboe_{fam}_ttl_expired", "to_uboe", native(ipb, fecn=SEVERE), "XDP_PASS",
         ["rx_ub", "pass_ttl_expired"], punt_out(rewrite_ip(ipb, ecn=CE, ttl_dec=0), fecn=SEVERE),
         scapy="TTL 1: the kernel gets the plain IP packet and answers ICMP time exceeded")
    ipb = ip_bytes(v6=v6, dst=T["NO_NEIGH_IP6"] if v6 else T["NO_NEIGH_IP4"])
    case(f"to_uboe_{fam}_no_neigh", "to_uboe", native(ipb), "XDP_PASS", ["rx_ub", "pass_no_neigh"],
         punt_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0)))
    ipb = ip_bytes(v6=v6, dst=T["SW_IP_IP6"] if v6 else T["SW_IP_IP4"])
    case(f"to_uboe_{fam}_local", "to_uboe", native(ipb), "XDP_PASS", ["rx_ub", "pass_local"],
         punt_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0)))
    ipb = ip_bytes(v6=v6, dst=T["UNREACH_IP6"] if v6 else T["UNREACH_IP4"])
    case(f"to_uboe_{fam}_unreachable", "to_uboe", native(ipb), "XDP_PASS", ["rx_ub", "pass_fib_other"],
         punt_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0)))

ipb = ip_bytes(ecn=NOT_ECT)
case("to_uboe_light_ce_to_ect1", "to_uboe", native(ipb, fecn=LIGHT), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=ECT1), vlan=5), opts="--light-ce ect1")
case("to_uboe_light_ce_to_ect0", "to_uboe", native(ipb, fecn=LIGHT), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=ECT0), vlan=5), opts="--light-ce ect0")
case("to_uboe_severe_still_ce_with_light_ect1", "to_uboe", native(ipb, fecn=SEVERE), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=CE), vlan=5), opts="--light-ce ect1")
case("to_uboe_markable_to_ect1", "to_uboe", native(ipb, fecn=MARKABLE), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=ECT1), vlan=5), opts="--markable ect1")
case("to_uboe_loc_discarded", "to_uboe", native(ipb, fecn=SEVERE, loc=1), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=CE), vlan=5))
ipb = ip_bytes(ecn=ECT1)
case("to_uboe_cci_caqm_forwarded", "to_uboe", native(ipb, cci=0x0123), "XDP_REDIRECT",
     TX + ["cci_not_fecn_forwarded"], uboe_out(rewrite_ip(ipb), vlan=5),
     scapy="CCI mode CAQM: IP ECN left as it is")
case("to_uboe_cci_fecn_rtt_dropped", "to_uboe", native(ipb, cci=0x2001), "XDP_DROP",
     DROP("drop_cci_not_fecn"), opts="--cci-policy drop")

# NPI -> VLAN (draft §5.3)
ipb = ip_bytes()
case("to_uboe_vlan_truncated_pid", "to_uboe", native(ipb, pid=4097), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=1), scapy="Partition ID 4097 -> lower 12 bits -> VLAN 1")
case("to_uboe_vlan_from_table", "to_uboe", native(ipb, pid=4097), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=100), opts="--map 4097=100")
case("to_uboe_vlan_table_any_perm", "to_uboe", native(ipb, pid=4097, perm=1), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=100), opts="--map 4097=100")
case("to_uboe_vlan_enhanced_perm0", "to_uboe", native(ipb, pid=7, perm=0), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=70), opts="--map 7/0=70 --map 7/1=71")
case("to_uboe_vlan_enhanced_perm1", "to_uboe", native(ipb, pid=7, perm=1), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=71), opts="--map 7/0=70 --map 7/1=71")
case("to_uboe_untagged", "to_uboe", native(ipb, pid=4097), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb)), opts="--untagged --map 4097=100")
case("to_uboe_strict_mapped", "to_uboe", native(ipb, pid=4097), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=100), opts="--strict --map 4097=100")
case("to_uboe_strict_declared_partition", "to_uboe", native(ipb, pid=9), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=9), opts="--strict --partition 9")
case("to_uboe_strict_unmapped", "to_uboe", native(ipb, pid=5), "XDP_DROP",
     DROP("drop_npi_unmapped"), opts="--strict --map 4097=100")
case("to_uboe_vlan_reserved_0", "to_uboe", native(ipb, pid=4096), "XDP_DROP", DROP("drop_vlan_reserved"))
case("to_uboe_vlan_reserved_4095", "to_uboe", native(ipb, pid=0xfff), "XDP_DROP", DROP("drop_vlan_reserved"))
case("to_uboe_partition_zero", "to_uboe", native(ipb, pid=0), "XDP_DROP", DROP("drop_partition_zero"))

# TTL and options
ipb = ip_bytes(ttl=1)
case("to_uboe_no_ttl_dec", "to_uboe", native(ipb), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0), vlan=5), opts="--no-ttl-dec")
ipb = ip_bytes(payload=b"x" * 600, dst=T["SMALL_MTU_IP4"])
case("to_uboe_frag_needed", "to_uboe", native(ipb), "XDP_PASS", ["rx_ub", "pass_frag_needed"],
     punt_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0)), scapy="route with mtu 500: kernel sends ICMP frag needed")
nodf = IP(ipb)
nodf.flags = 0
del nodf.chksum
nodf = bytes(nodf)
nodf = nodf[:-4] + icrc(nodf[:-4])
case("to_uboe_frag_needed_df_forced", "to_uboe", native(nodf), "XDP_PASS", ["rx_ub", "pass_frag_needed"],
     punt_out(force_df(rewrite_ip(nodf, ecn=ECT0, ttl_dec=0))),
     scapy="DF clear and too big: DF set for the kernel, which then answers ICMP instead of fragmenting")
ipb = ip_bytes(dst=T["OTHER_PORT_IP4"])
case("to_uboe_not_ip_side_port", "to_uboe", native(ipb), "XDP_DROP", ["rx_ub", "drop_not_egress_port"],
     scapy="the FIB points at a port that is not the switch's IP side: never leaves unconverted")
ipb = ip_bytes()
case("to_uboe_custom_ethertype", "to_uboe", native(ipb, ethertype=0x88B6), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=5), opts="--ub-ethertype 0x88b6")
case("to_uboe_default_ethertype_not_ub_then", "to_uboe", native(ipb), "XDP_PASS", ["pass_not_ub"],
     native(ipb), opts="--ub-ethertype 0x88b6")

# Every transport opcode that UBoE may carry passes; responses carry no TAH.
for op, ext, name in ((0x0, None, "utp"), (0x2, UBCETPH(ack_seq=5), "tpack"),
                      (0x3, UBCETPH(ack_seq=9, c=3, hint=7), "tpack_cetph"),
                      (0x5, UBSAETPH(size=1, max_rcv_psn=0x1300) / Raw(sack_bitmap(1, [0, 5, 127])), "tpsack"),
                      (0x8, UBCNPETPH(ecn=3, loc=1), "cnp")):
    ipb = ip_bytes(opcode=op, tah=op < 2, payload=b"", ext=ext)
    case(f"to_uboe_opcode_{name}", "to_uboe", native(ipb), "XDP_REDIRECT", TX, uboe_out(rewrite_ip(ipb), vlan=5))

# Small frame with Ethernet padding after the IP packet: accepted, padding kept.
ipb = ip_bytes(payload=b"", tah=False)
padded = bytes(native(ipb)) + b"\x00" * 8
case("to_uboe_trailing_padding", "to_uboe", padded, "XDP_REDIRECT", TX,
     bytes(uboe_out(rewrite_ip(ipb), vlan=5)) + b"\x00" * 8)

# Malformed native frames: each dropped under its own reason.
ipb = ip_bytes()
full = bytes(native(ipb))
case("to_uboe_truncated_in_nth", "to_uboe", full[:20], "XDP_DROP", DROP("drop_truncated"))
case("to_uboe_truncated_in_tph", "to_uboe", full[:14 + 10 + 20 + 8 + 10], "XDP_DROP", DROP("drop_truncated"))
case("to_uboe_truncated_ip_len", "to_uboe", full[:-6], "XDP_DROP", DROP("drop_truncated"))
case("to_uboe_lph_config_not_ip", "to_uboe", native(ipb, config=5), "XDP_DROP", DROP("drop_lph_config_not_ip"))
case("to_uboe_ip_version_mismatch", "to_uboe", native(ip_bytes(v6=True), config=3), "XDP_DROP",
     DROP("drop_ip_version_mismatch"))
ip = IP(ipb)
ip_opt = IP(src=ip.src, dst=ip.dst, ttl=64, flags="DF", options=b"\x01\x01\x01\x00") / ip[UDP]
case("to_uboe_ipv4_options", "to_uboe", native(bytes(ip_opt)), "XDP_DROP", DROP("drop_ipv4_options"))
frag = ip.copy()
frag.flags = "MF"
del frag.chksum
case("to_uboe_ipv4_first_fragment", "to_uboe", native(bytes(frag)), "XDP_DROP", DROP("drop_ipv4_fragment"))
frag.flags = 0
frag.frag = 100
case("to_uboe_ipv4_later_fragment", "to_uboe", native(bytes(frag)), "XDP_DROP", DROP("drop_ipv4_fragment"))
for op in (0x4, 0x7, 0x9, 0x7f):
    case(f"to_uboe_tp_opcode_0x{op:x}_invalid", "to_uboe", native(ip_bytes(opcode=op)), "XDP_DROP",
         DROP("drop_tp_opcode_invalid"))
bad = IP(ipb)
bad[UDP].len += 4
del bad.chksum
case("to_uboe_udp_length_mismatch", "to_uboe", native(bytes(bad)), "XDP_DROP", DROP("drop_ip_bad_length"))
other = IP(src=T["UBPU_IP4"], dst=T["IPHOST_IP4"]) / UDP(sport=1, dport=1234) / Raw(b"x" * 40)
case("to_uboe_not_port_4792", "to_uboe", native(bytes(other)), "XDP_DROP", DROP("drop_not_uboe_payload"))
icmp = IP(src=T["UBPU_IP4"], dst=T["IPHOST_IP4"]) / ICMP() / Raw(b"x" * 40)
case("to_uboe_not_udp", "to_uboe", native(bytes(icmp)), "XDP_DROP", DROP("drop_not_uboe_payload"))
# CTP on a native port (docs/TRANSPORT.md: UDP 4794, 1-byte CTPH): UBoE never carries
# CTP (docs/WIRE.md §1), so the switch drops it rather than converting it, counted.
ctp = uboe_ip(T["UBPU_IP4"], T["IPHOST_IP4"], UBCTPH(), UBTAH(opcode=0x00, ini_rcid=1),
              b"c" * 64, dport=CTP_PORT)
case("to_uboe_native_ctp_dropped", "to_uboe", native(ctp), "XDP_DROP", DROP("drop_not_uboe_payload"))
arp = Ether(dst="ff:ff:ff:ff:ff:ff", src=T["UBPU_MAC"]) / ARP(psrc=T["UBPU_IP4"], pdst=T["SW_UB_IP4"])
case("to_uboe_arp_passes", "to_uboe", arp, "XDP_PASS", ["pass_not_ub"], arp)
plain = tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ipb, None)
case("to_uboe_plain_ip_passes", "to_uboe", plain, "XDP_PASS", ["pass_not_ub"], plain)

# ---- UBoE -> UB -------------------------------------------------------------
RX = ["rx_uboe", "tx_ub"]


def uboe_in(ipb, vlan=None):
    return tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, vlan)


def uboe_punt(ipb, pid=1, perm=0, fecn=MARKABLE, caqm=0):
    """UBoE frame handed to the kernel: tags gone, the NPI it maps to (and the
    CAQM tag's request) in XDP metadata."""
    return meta(slow_mark(pid, perm, fecn), caqm) + bytes(uboe_in(ipb))


def native_out(ipb, fecn, pid, perm=0, rt=2, vl=0, ethertype=0x88B5):
    v6 = ipb[0] >> 4 == 6
    return (Ether(dst=T["UBPU_MAC"], src=T["SW_UB_MAC"], type=ethertype) /
            UBLPH(config=4 if v6 else 3, vl=vl, lbmode=rt & 1, route_policy=rt >> 1) /
            UBNTH(cci=cci_fecn(fecn, 0), perm=perm, pid=pid) / Raw(ipb))


def back(v6=False, dst=None, **kw):
    """A UBoE IP packet from the IP host towards the UBPU by default."""
    return ip_bytes(v6=v6, src=T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"],
                    dst=dst or (T["UBPU_IP6"] if v6 else T["UBPU_IP4"]), **kw)


for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    ipb = back(v6=v6)
    case(f"to_ub_{fam}_untagged", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
         native_out(rewrite_ip(ipb), MARKABLE, pid=1),
         scapy="untagged -> default partition 1, Permission 0, RT 10, LoC 0")
    case(f"to_ub_{fam}_tagged", "to_ub", uboe_in(ipb, vlan=5), "XDP_REDIRECT", RX,
         native_out(rewrite_ip(ipb), MARKABLE, pid=5))
    for ecn, fecn, what in ((NOT_ECT, UNMARKABLE, "not_ect"), (ECT1, MARKABLE, "ect1"),
                            (ECT0, MARKABLE, "ect0"), (CE, SEVERE, "ce")):
        ipb = back(v6=v6, ecn=ecn)
        case(f"to_ub_{fam}_ecn_{what}", "to_ub", uboe_in(ipb, vlan=5), "XDP_REDIRECT", RX,
             native_out(rewrite_ip(ipb), fecn, pid=5))
    ipb = back(v6=v6, ttl=1)
    case(f"to_ub_{fam}_ttl_expired_tagged", "to_ub", uboe_in(ipb, vlan=5), "XDP_PASS",
         ["rx_uboe", "pass_ttl_expired"], uboe_punt(ipb, pid=5), scapy="802.1Q tag popped for the kernel")

ipb = back(ecn=CE)
case("to_ub_ce_to_light", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), LIGHT, pid=1), opts="--ce-to light")
ipb = back(ecn=ECT1)
case("to_ub_ect1_to_light", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), LIGHT, pid=1), opts="--ect1-to light")
ipb = back()
for rt in (0, 1, 3):
    case(f"to_ub_rt_{rt}", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
         native_out(rewrite_ip(ipb), MARKABLE, pid=1, rt=rt), opts=f"--rt {rt}")
case("to_ub_vl", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=1, vl=9), opts="--vl 9")
case("to_ub_custom_ethertype", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=1, ethertype=0x88B6), opts="--ub-ethertype 0x88b6")
case("to_ub_vlan_table", "to_ub", uboe_in(ipb, vlan=100), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=4097), opts="--map 4097=100")
case("to_ub_vlan_enhanced_perm1", "to_ub", uboe_in(ipb, vlan=71), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=7, perm=1), opts="--map 7/0=70 --map 7/1=71")
case("to_ub_vlan_enhanced_perm0", "to_ub", uboe_in(ipb, vlan=70), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=7, perm=0), opts="--map 7/0=70 --map 7/1=71")
case("to_ub_strict_unmapped_vlan", "to_ub", uboe_in(ipb, vlan=5), "XDP_DROP",
     ["rx_uboe", "drop_vlan_unmapped"], opts="--strict --map 4097=100")
case("to_ub_strict_untagged_default", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=1), opts="--strict")
case("to_ub_default_partition", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=9, perm=1), opts="--default-pid 9 --default-perm 1")
case("to_ub_priority_tag_is_untagged", "to_ub", uboe_in(ipb, vlan=0), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb), MARKABLE, pid=1))
case("to_ub_no_ttl_dec", "to_ub", uboe_in(ipb), "XDP_REDIRECT", RX,
     native_out(rewrite_ip(ipb, ttl_dec=0), MARKABLE, pid=1), opts="--no-ttl-dec")
ipb = back(ttl=1)
case("to_ub_ttl_expired_untagged", "to_ub", uboe_in(ipb), "XDP_PASS", ["rx_uboe", "pass_ttl_expired"],
     uboe_punt(ipb))
ipb = back(dst=T["UB_NO_NEIGH_IP4"], ecn=CE)
case("to_ub_no_neigh", "to_ub", uboe_in(ipb, vlan=5), "XDP_PASS", ["rx_uboe", "pass_no_neigh"],
     uboe_punt(ipb, pid=5, fecn=SEVERE), scapy="CE -> Severe CE travels in the mark")
ipb = back(dst=T["UB_NO_NEIGH_IP4"])
case("to_ub_no_neigh_mapped", "to_ub", uboe_in(ipb, vlan=71), "XDP_PASS", ["rx_uboe", "pass_no_neigh"],
     uboe_punt(ipb, pid=7, perm=1), opts="--strict --map 7/0=70 --map 7/1=71")
ipb = ip_bytes(src=T["IPHOST_IP4"], dst=T["IPHOST_IP4"].rsplit(".", 1)[0] + ".50")
case("to_ub_unresolved_ip_side_destination", "to_ub", uboe_in(ipb), "XDP_DROP",
     ["rx_uboe", "drop_not_egress_port"], scapy="no neighbour, and the IP side is not where UB goes")
ipb = back(dst=T["IPHOST_IP4"])
case("to_ub_not_ub_side_port", "to_ub", uboe_in(ipb), "XDP_DROP", ["rx_uboe", "drop_not_egress_port"])
ipb = back(dst=T["SW_IP_IP4"])
case("to_ub_local", "to_ub", uboe_in(ipb), "XDP_PASS", ["rx_uboe", "pass_local"], uboe_punt(ipb))

# Not UBoE: the kernel gets it untouched.
for name, pkt in (("arp", Ether(dst="ff:ff:ff:ff:ff:ff", src=T["IPHOST_MAC"]) /
                   ARP(psrc=T["IPHOST_IP4"], pdst=T["SW_IP_IP4"])),
                  ("udp_other_port", uboe_in(bytes(IP(src=T["IPHOST_IP4"], dst=T["UBPU_IP4"]) /
                                                   UDP(sport=1, dport=53) / Raw(b"q" * 30)))),
                  ("icmp", uboe_in(bytes(IP(src=T["IPHOST_IP4"], dst=T["SW_IP_IP4"]) / ICMP()))),
                  ("ipv6_ext_header", uboe_in(bytes(IPv6(src=T["IPHOST_IP6"], dst=T["UBPU_IP6"]) /
                                                    IPv6ExtHdrDestOpt() / UDP(dport=4792) / Raw(b"z" * 40)))),
                  ("tagged_udp_other_port", uboe_in(bytes(IP(src=T["IPHOST_IP4"], dst=T["UBPU_IP4"]) /
                                                          UDP(dport=53) / Raw(b"q" * 30)), vlan=5))):
    # A broadcast is not routed whatever it carries.
    case(f"to_ub_not_uboe_{name}", "to_ub", pkt, "XDP_PASS",
         ["pass_not_for_us" if name == "arp" else "pass_not_uboe"], pkt)

ip = IP(back())
later = ip.copy()
later.frag = 50
del later.chksum
case("to_ub_later_fragment_passes", "to_ub", uboe_in(bytes(later)), "XDP_PASS", ["pass_not_uboe"],
     uboe_in(bytes(later)))
first = ip.copy()
first.flags = "MF"
del first.chksum
case("to_ub_first_fragment_dropped", "to_ub", uboe_in(bytes(first)), "XDP_DROP",
     ["rx_uboe", "drop_ipv4_fragment"])
ip_opt = IP(src=ip.src, dst=ip.dst, flags="DF", options=b"\x01\x01\x01\x00") / ip[UDP]
case("to_ub_ipv4_options_dropped", "to_ub", uboe_in(bytes(ip_opt)), "XDP_DROP",
     ["rx_uboe", "drop_ipv4_options"], scapy="UDP/4792 behind IPv4 options: UBoE gone wrong")
opt_other = IP(src=ip.src, dst=ip.dst, options=b"\x01\x01\x01\x00") / UDP(dport=53) / Raw(b"q" * 30)
case("to_ub_ipv4_options_other_passes", "to_ub", uboe_in(bytes(opt_other)), "XDP_PASS", ["pass_not_uboe"],
     uboe_in(bytes(opt_other)))
case("to_ub_tp_opcode_invalid", "to_ub", uboe_in(back(opcode=0x4)), "XDP_DROP",
     ["rx_uboe", "drop_tp_opcode_invalid"])
short = IP(src=T["IPHOST_IP4"], dst=T["UBPU_IP4"]) / UDP(sport=9, dport=4792) / Raw(b"\x01" * 10)
case("to_ub_truncated_tph", "to_ub", uboe_in(bytes(short)), "XDP_DROP", ["rx_uboe", "drop_truncated"])
tiny = IP(src=T["IPHOST_IP4"], dst=T["UBPU_IP4"]) / UDP(sport=9, dport=4792) / Raw(b"\x01" * 18)
case("to_ub_no_room_for_icrc", "to_ub", uboe_in(bytes(tiny)), "XDP_DROP", ["rx_uboe", "drop_ip_bad_length"])


# ---- Found by the fuzzer (tests/bpf/ub2e_fuzz.c), handled right: pinned here --
# CCI bit 15 is reserved: Mode (bits 14-12) alone says FECN (docs/WIRE.md §5).
ipb = ip_bytes(ecn=ECT1)
case("to_uboe_cci_reserved_bit_set", "to_uboe", native(ipb, cci=0x8000 | cci_fecn(MARKABLE)), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=ECT0), vlan=5), scapy="CCI 0xC002: reserved bit set, FECN markable -> ECT(0)")
# IP and UDP lengths agree with each other but leave no room for the ICRC; the
# frame is padded so that the TPH is there.
tiny = IP(src=T["UBPU_IP4"], dst=T["IPHOST_IP4"]) / UDP(sport=9, dport=4792) / Raw(b"\x01" * 16)
case("to_uboe_padded_no_room_for_icrc", "to_uboe", native(bytes(tiny) + b"\0" * 20), "XDP_DROP",
     DROP("drop_ip_bad_length"))
tiny = IP(src=T["IPHOST_IP4"], dst=T["UBPU_IP4"]) / UDP(sport=9, dport=4792) / Raw(b"\x01" * 16)
case("to_ub_padded_no_room_for_icrc", "to_ub", uboe_in(bytes(tiny) + b"\0" * 20), "XDP_DROP",
     ["rx_uboe", "drop_ip_bad_length"])


def ihl_below_5(ipb):
    """IHL 4, the checksum still right over the 20 bytes a reader of IHL 5 sums."""
    b = bytearray(ipb)
    b[0] = 0x44
    b[10:12] = b"\0\0"
    s = sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, 20, 2))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    b[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    return bytes(b)


# IHL below 5: broken UB on the UB side, just not UBoE on the IP side.
case("to_uboe_ipv4_ihl_below_5", "to_uboe", native(ihl_below_5(ip_bytes())), "XDP_DROP",
     DROP("drop_ipv4_options"))
case("to_ub_ipv4_ihl_below_5_passes", "to_ub", uboe_in(ihl_below_5(back())), "XDP_PASS", ["pass_not_uboe"],
     uboe_in(ihl_below_5(back())))
# PCP and DEI of the tag do not choose the partition; a second tag is not UBoE.
ipb = back()
pcp = Ether(dst=T["SW_IP_MAC"], src=T["IPHOST_MAC"], type=0x8100) / Dot1Q(prio=5, id=1, vlan=5, type=0x0800) / Raw(ipb)
case("to_ub_tag_pcp_dei_ignored", "to_ub", pcp, "XDP_REDIRECT", RX, native_out(rewrite_ip(ipb), MARKABLE, pid=5))
qinq = (Ether(dst=T["SW_IP_MAC"], src=T["IPHOST_MAC"], type=0x8100) / Dot1Q(vlan=5, type=0x8100) /
        Dot1Q(vlan=6, type=0x0800) / Raw(ipb))
case("to_ub_double_tag_passes", "to_ub", qinq, "XDP_PASS", ["pass_not_uboe"], qinq)
# ---- Receive checks of a router (RFC 1812 §5.2.2, §5.3.7) --------------------
def bad_csum(ipb):
    ip = IP(ipb)
    ip.chksum ^= 0x0101
    return bytes(ip)


ipb = ip_bytes()
case("to_uboe_ipv4_bad_checksum", "to_uboe", native(bad_csum(ipb)), "XDP_DROP", DROP("drop_ipv4_bad_checksum"),
     scapy="IPv4 header checksum off by 0x0101: dropped, not forwarded with a fixed-up wrong checksum")
ipb = back()
case("to_ub_ipv4_bad_checksum", "to_ub", uboe_in(bad_csum(ipb), vlan=5), "XDP_DROP",
     ["rx_uboe", "drop_ipv4_bad_checksum"])
for what, mac in (("broadcast", "ff:ff:ff:ff:ff:ff"), ("multicast", "01:00:5e:00:00:01"),
                  ("other_host", "02:00:00:00:09:09")):
    frame = bytes(native(ip_bytes()))
    frame = bytes.fromhex(mac.replace(":", "")) + frame[6:]
    case(f"to_uboe_dst_{what}_not_routed", "to_uboe", frame, "XDP_PASS", ["pass_not_for_us"], frame,
         scapy=f"destination MAC {mac}, not the UB port's: the kernel gets it untouched")
    frame = bytes(uboe_in(back(), vlan=5))
    frame = bytes.fromhex(mac.replace(":", "")) + frame[6:]
    case(f"to_ub_dst_{what}_not_routed", "to_ub", frame, "XDP_PASS", ["pass_not_for_us"], frame)
for src in ("224.0.0.1", "255.255.255.255", "127.0.0.1", "0.0.0.0"):
    case(f"to_uboe_src_{src}_dropped", "to_uboe", native(ip_bytes(src=src)), "XDP_DROP", DROP("drop_src_martian"))
    case(f"to_ub_src_{src}_dropped", "to_ub", uboe_in(ip_bytes(src=src, dst=T["UBPU_IP4"]), vlan=5), "XDP_DROP",
         ["rx_uboe", "drop_src_martian"])
for src in ("ff02::1", "::1", "::"):
    case(f"to_uboe_src_{src}_dropped", "to_uboe", native(ip_bytes(v6=True, src=src)), "XDP_DROP",
         DROP("drop_src_martian"))
    case(f"to_ub_src_{src}_dropped", "to_ub", uboe_in(ip_bytes(v6=True, src=src, dst=T["UBPU_IP6"])), "XDP_DROP",
         ["rx_uboe", "drop_src_martian"])
# VLAN IDs written with bpftool: masked to 12 bits; 4095 reserved both ways.
ipb = ip_bytes()
case("to_uboe_bpftool_vlan_masked", "to_uboe", native(ipb, pid=4097), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb), vlan=100), opts="--raw-npi 4097=0x1064", scapy="npi2vlan any=0x1064 -> VLAN 100")
case("to_uboe_bpftool_vlan_4095_reserved", "to_uboe", native(ipb, pid=4097), "XDP_DROP",
     DROP("drop_vlan_reserved"), opts="--raw-npi 4097=0xffff")
case("to_ub_vlan_4095_reserved", "to_ub", uboe_in(back(), vlan=4095), "XDP_DROP", ["rx_uboe", "drop_vlan_reserved"])
case("to_ub_bpftool_vlan_to_partition_zero", "to_ub", uboe_in(back(), vlan=100), "XDP_DROP",
     ["rx_uboe", "drop_partition_zero"], opts="--raw-vlan 100=0x82000000",
     scapy="vlan2npi[100] = valid | baseline | PID 0 (bpftool): Partition ID 0 is invalid, dropped")


# ---- The egress MTU counts what the conversion adds ---------------------------
def sized(v6, total, **kw):
    """A UBoE IP packet of exactly `total` bytes."""
    base = len(ip_bytes(v6=v6, payload=b"", **kw))
    return ip_bytes(v6=v6, payload=b"m" * (total - base), **kw)


MTU = 500
for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    far = T["SMALL_MTU_IP6"] if v6 else T["SMALL_MTU_IP4"]
    near = T["UB_SMALL_MTU_IP6"] if v6 else T["UB_SMALL_MTU_IP4"]
    for size in range(MTU - 11, MTU + 2):
        # UB -> UBoE: the IP packet leaves as it is (an 802.1Q tag is not in the MTU).
        ipb = sized(v6, size, dst=far)
        for vlan, opts in ((5, ""), (None, "--untagged")):
            t = "tagged" if vlan else "untagged"
            if size <= MTU:
                case(f"to_uboe_{fam}_mtu_{size}_{t}", "to_uboe", native(ipb), "XDP_REDIRECT", TX,
                     uboe_out(rewrite_ip(ipb, ecn=ECT0), vlan=vlan), opts=opts)
            else:
                case(f"to_uboe_{fam}_mtu_{size}_{t}", "to_uboe", native(ipb), "XDP_PASS",
                     ["rx_ub", "pass_frag_needed"], punt_out(rewrite_ip(ipb, ecn=ECT0, ttl_dec=0)), opts=opts)
        # UBoE -> UB: LPH+NTH (10 bytes) come, a tag goes; the IP packet + 10 must fit.
        ipb = sized(v6, size, src=T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"], dst=near)
        for vlan in (5, None):
            t = "tagged" if vlan else "untagged"
            if size + 10 <= MTU:
                case(f"to_ub_{fam}_mtu_{size}_{t}", "to_ub", uboe_in(ipb, vlan=vlan), "XDP_REDIRECT", RX,
                     native_out(rewrite_ip(ipb), MARKABLE, pid=vlan or 1))
            else:
                case(f"to_ub_{fam}_mtu_{size}_{t}", "to_ub", uboe_in(ipb, vlan=vlan), "XDP_PASS",
                     ["rx_uboe", "pass_frag_needed"], uboe_punt(ipb, pid=vlan or 1),
                     scapy=f"IP {size} + LPH/NTH 10 > MTU {MTU}: the kernel answers Packet Too Big")


# ---- The slow path's egress conversion (TC, skb->mark from the punt) ---------
def kernel_fwd(ipb, dst_mac, src_mac):
    """What the kernel hands TC egress: its own Ethernet header, TTL already decremented."""
    return tagged(dst_mac, src_mac, rewrite_ip(ipb, ttl_dec=1), None)


for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    ipb = ip_bytes(v6=v6, ecn=ECT0)
    fwd = kernel_fwd(ipb, T["IPHOST_MAC"], T["SW_IP_MAC"])
    case(f"tc_egress_ip_{fam}_tagged", "tc_egress_ip", fwd, "TC_ACT_OK", ["slow_tx_uboe"],
         uboe_out(rewrite_ip(ipb, ttl_dec=1), vlan=100), opts="--map 4097=100", mark=slow_mark(4097),
         scapy="marked NPI 4097 -> VLAN 100 inserted after the MACs")
    case(f"tc_egress_ip_{fam}_lower_12_bits", "tc_egress_ip", fwd, "TC_ACT_OK", ["slow_tx_uboe"],
         uboe_out(rewrite_ip(ipb, ttl_dec=1), vlan=5), mark=slow_mark(5))
    case(f"tc_egress_ip_{fam}_untagged", "tc_egress_ip", fwd, "TC_ACT_OK", ["slow_tx_uboe"], fwd,
         opts="--untagged", mark=slow_mark(5))
    case(f"tc_egress_ip_{fam}_strict_unmapped", "tc_egress_ip", fwd, "TC_ACT_SHOT", ["slow_drop_vlan"],
         opts="--strict --map 4097=100", mark=slow_mark(5))
    case(f"tc_egress_ip_{fam}_unmarked_untouched", "tc_egress_ip", fwd, "TC_ACT_UNSPEC", [], fwd)
    ipb = ip_bytes(v6=v6, src=T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"],
                   dst=T["UBPU_IP6"] if v6 else T["UBPU_IP4"], ecn=CE)
    fwd = kernel_fwd(ipb, T["UBPU_MAC"], T["SW_UB_MAC"])
    case(f"tc_egress_ub_{fam}_converted", "tc_egress_ub", fwd, "TC_ACT_OK", ["slow_tx_ub"],
         native_out(rewrite_ip(ipb, ttl_dec=1), SEVERE, pid=7, perm=1), mark=slow_mark(7, 1, SEVERE),
         scapy="marked: Eth(0x88B5) | LPH | NTH(NPI 7/1, Severe CE) | IP")
    case(f"tc_egress_ub_{fam}_unmarked_uboe_dropped", "tc_egress_ub", fwd, "TC_ACT_SHOT",
         ["slow_drop_unconverted"], scapy="UBoE without the switch's mark never reaches the UB segment")
    icmp = tagged(T["UBPU_MAC"], T["SW_UB_MAC"],
                  bytes(IPv6(src=T["SW_UB_IP6"], dst=T["UBPU_IP6"]) / Raw(b"\x3a" * 8)) if v6 else
                  bytes(IP(src=T["SW_UB_IP4"], dst=T["UBPU_IP4"]) / ICMP(type=11)), None)
    case(f"tc_egress_ub_{fam}_kernel_icmp_untouched", "tc_egress_ub", icmp, "TC_ACT_UNSPEC", [], icmp)
    # Device MTU 1500: the IP packet + 10 must fit.
    for size, fits in ((1490, True), (1491, False)):
        ipb = sized(v6, size, src=T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"], dst=T["UBPU_IP6"] if v6 else T["UBPU_IP4"])
        fwd = kernel_fwd(ipb, T["UBPU_MAC"], T["SW_UB_MAC"])
        if fits:
            case(f"tc_egress_ub_{fam}_mtu_{size}", "tc_egress_ub", fwd, "TC_ACT_OK", ["slow_tx_ub"],
                 native_out(rewrite_ip(ipb, ttl_dec=1), MARKABLE, pid=1), mark=slow_mark(1, 0, MARKABLE))
        else:
            case(f"tc_egress_ub_{fam}_mtu_{size}", "tc_egress_ub", fwd, "TC_ACT_SHOT", ["slow_drop_too_big"],
                 mark=slow_mark(1, 0, MARKABLE), scapy="1491 + LPH/NTH > 1500: dropped, never sent too big")
    # A kernel ICMP error that does not fit with LPH+NTH: its quote is cut to
    # what fits (a multiple of 4 bytes), lengths and checksum made anew by scapy.
    quoted = sized(v6, 1600, src=T["UBPU_IP6"] if v6 else T["UBPU_IP4"], dst=T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"])
    # Room for 1490 bytes of IP: IPv6 quotes up to 1442 whole, IPv4 up to 1462.
    for qlen, kept in ((1440, 1440), (1442, 1442), (1443, 1440), (1460, 1440)) if v6 else \
            ((1460, 1460), (1462, 1462), (1463, 1460), (1470, 1460)):
        def err(n):
            if v6:
                return IPv6(src=T["SW_UB_IP6"], dst=T["UBPU_IP6"], hlim=64) / ICMPv6TimeExceeded() / Raw(quoted[:n])
            return IP(src=T["SW_UB_IP4"], dst=T["UBPU_IP4"], ttl=64, id=0) / ICMP(type=11) / Raw(quoted[:n])
        fits = qlen == kept
        case(f"tc_egress_ub_{fam}_icmp_quote_{qlen}", "tc_egress_ub",
             tagged(T["UBPU_MAC"], T["SW_UB_MAC"], bytes(err(qlen)), None), "TC_ACT_OK",
             ["slow_tx_ub"] if fits else ["slow_icmp_truncated", "slow_tx_ub"],
             native_out(bytes(err(kept)), LIGHT, pid=9), mark=slow_mark(9, 0, LIGHT),
             scapy=f"ICMP error of {len(err(qlen))} bytes" + ("" if fits else f": quote cut from {qlen} to {kept}"))


# ---- The slow path's ingress (TC, before the kernel routes the punted packet) --
def icmp_error(ipb, v6, mtu=None, typ=None, code=0, src=None, dst=None, macs=None):
    """An ICMP error quoting ipb as routers do: 576 bytes in all for IPv4
    (RFC 1812 4.3.2.3), 1280 for IPv6 (RFC 4443 2.4)."""
    dmac, smac = macs or (T["IPHOST_MAC"], T["SW_IP_MAC"])
    if not v6:
        ans = (IP(src=src or T["SW_IP_IP4"], dst=dst or T["IPHOST_IP4"], tos=0xC0, ttl=64, id=0, flags=0) /
               ICMP(type=3 if typ is None else typ, code=4 if typ is None else code,
                    nexthopmtu=mtu or 0) / Raw(ipb[:548]))
        return Ether(dst=dmac, src=smac, type=0x0800) / ans
    ans = (IPv6(src=src or T["SW_IP_IP6"], dst=dst or T["IPHOST_IP6"], hlim=64) /
           ICMPv6PacketTooBig(mtu=mtu) / Raw(ipb[:1232]))
    return Ether(dst=dmac, src=smac, type=0x86DD) / ans


def ttl_plus_one(ipb):
    """--no-ttl-dec on the slow path: one more, for the kernel to take."""
    return rewrite_ip(ipb, ttl_dec=-1)


for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    near = T["UB_SMALL_MTU_IP6"] if v6 else T["UB_SMALL_MTU_IP4"]
    src = T["IPHOST_IP6"] if v6 else T["IPHOST_IP4"]
    # Route MTU 500 towards the UB side: what does not fit with LPH+NTH is
    # answered by the switch (MTU 490), out of the port it came in by.
    for size in (491, 500, 1400):
        ipb = sized(v6, size, src=src, dst=near)
        case(f"tc_ingress_ip_{fam}_too_big_{size}", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_REDIRECT",
             ["slow_icmp_too_big"], icmp_error(ipb, v6, mtu=490), mark=slow_mark(4097),
             scapy=f"IP {size} + LPH/NTH > 500: {'Packet Too Big' if v6 else 'Fragmentation Needed'} "
                   "MTU 490 from the IP port's address, quoting what a router quotes")
    # The source is the one the FIB gives for the way back out of the IP port
    # (kernel 6.7+), else the port's address read at attach: a sender routed
    # elsewhere, with no address at attach, gets none.
    ipb = sized(v6, 1400, src=T["UBPU_IP6"] if v6 else T["UBPU_IP4"], dst=near)
    case(f"tc_ingress_ip_{fam}_too_big_no_source", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_OK",
         ["slow_icmp_no_source"], uboe_in(ipb), opts="--no-icmp-source", mark=slow_mark(4097),
         scapy="no route back to the sender by the IP port, no address at attach: no answer of the "
               "switch's, counted; the kernel goes on")
    ipb = sized(v6, 490, src=src, dst=near)
    case(f"tc_ingress_ip_{fam}_fits_490", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_OK", [], uboe_in(ipb),
         mark=slow_mark(4097))
    ipb = sized(v6, 500, src=src, dst=near, ttl=1)
    case(f"tc_ingress_ip_{fam}_too_big_ttl_1", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_OK", [], uboe_in(ipb),
         mark=slow_mark(4097), scapy="TTL 1: the kernel's Time Exceeded comes first")
    case(f"tc_ingress_ip_{fam}_too_big_unmarked", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_UNSPEC", [], uboe_in(ipb),
         scapy="not punted by the switch: not its business")
    # UB -> UBoE: the IP packet leaves as it is; the kernel answers.
    ipb = sized(v6, 500, dst=T["SMALL_MTU_IP6"] if v6 else T["SMALL_MTU_IP4"])
    inp = tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ipb, None)
    case(f"tc_ingress_ub_{fam}_untouched", "tc_ingress_ub", inp, "TC_ACT_OK", [], inp, mark=slow_mark(5))
    # --no-ttl-dec: the kernel's decrement undone in advance, checksum kept.
    for ttl in (64, 1):
        ipb = ip_bytes(v6=v6, ttl=ttl)
        case(f"tc_ingress_ub_{fam}_no_ttl_dec_{ttl}", "tc_ingress_ub", tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ipb, None),
             "TC_ACT_OK", [], tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ttl_plus_one(ipb), None),
             opts="--no-ttl-dec", mark=slow_mark(5))
    ipb = back(v6=v6, ttl=255)
    case(f"tc_ingress_ip_{fam}_no_ttl_dec_255", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_OK", [], uboe_in(ipb),
         opts="--no-ttl-dec", mark=slow_mark(5), scapy="255 cannot grow: the kernel's decrement stays")
    ipb = back(v6=v6, ttl=64)
    case(f"tc_ingress_ip_{fam}_ttl_dec", "tc_ingress_ip", uboe_in(ipb), "TC_ACT_OK", [], uboe_in(ipb),
         mark=slow_mark(5), scapy="without --no-ttl-dec the kernel decrements, as routers do")
    # Unmarked ICMP errors about UBoE (fwmark_reflect off) never leave as plain
    # IP; about other traffic they do.
    q = ip_bytes(v6=v6, ttl=1)
    err = icmp_error(q, v6, typ=11, src=T["SW_UB_IP6"] if v6 else T["SW_UB_IP4"],
                     dst=T["UBPU_IP6"] if v6 else T["UBPU_IP4"], macs=(T["UBPU_MAC"], T["SW_UB_MAC"])) \
        if not v6 else icmp_error(q, v6, mtu=1280, src=T["SW_UB_IP6"], dst=T["UBPU_IP6"],
                                  macs=(T["UBPU_MAC"], T["SW_UB_MAC"]))
    case(f"tc_egress_ub_{fam}_unmarked_icmp_about_uboe_dropped", "tc_egress_ub", err, "TC_ACT_SHOT",
         ["slow_drop_unconverted"], scapy="an answer about UBoE without its partition: not sent as plain IP")
    case(f"tc_egress_ip_{fam}_unmarked_icmp_about_uboe_dropped", "tc_egress_ip", err, "TC_ACT_SHOT",
         ["slow_drop_unconverted"])
    other = bytes((IPv6(src=T["UBPU_IP6"], dst=T["IPHOST_IP6"]) if v6 else
                   IP(src=T["UBPU_IP4"], dst=T["IPHOST_IP4"])) / UDP(sport=5000, dport=53) / Raw(b"q" * 20))
    err = icmp_error(other, v6, typ=11, src=T["SW_UB_IP4"], dst=T["UBPU_IP4"],
                     macs=(T["UBPU_MAC"], T["SW_UB_MAC"])) if not v6 else \
        icmp_error(other, v6, mtu=1280, src=T["SW_UB_IP6"], dst=T["UBPU_IP6"], macs=(T["UBPU_MAC"], T["SW_UB_MAC"]))
    case(f"tc_egress_ub_{fam}_unmarked_icmp_about_other_untouched", "tc_egress_ub", err, "TC_ACT_UNSPEC", [], err,
         scapy="the kernel's answers about plain IP stay plain IP, like plain IP crossing the switch")


# ---- The Ethernet CAQM tag (--caqm-tag, docs/CC.md) ---------------------------
# UB -> UBoE: a CAQM CCI crosses the IP segment in the tag, after the 802.1Q
# header; UBoE -> UB: the tag's fields go back into the CCI and the tag goes.
def caqm_tagged(dst, src, ipb, vlan, tag, et=0x88B6):
    inner = tag / Raw(ipb)
    inner.type = ethertype(ipb)
    if vlan is None:
        return Ether(dst=dst, src=src, type=et) / inner
    return Ether(dst=dst, src=src, type=0x8100) / Dot1Q(vlan=vlan, type=et) / inner


def native_cci_out(ipb, cci, pid, perm=0):
    v6 = ipb[0] >> 4 == 6
    return (Ether(dst=T["UBPU_MAC"], src=T["SW_UB_MAC"], type=0x88B5) /
            UBLPH(config=4 if v6 else 3, vl=0, lbmode=0, route_policy=1) /
            UBNTH(cci=cci, perm=perm, pid=pid) / Raw(ipb))


for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    ipb = ip_bytes(v6=v6)
    req = cci_caqm(en=1, i=1, hint=8)
    case(f"to_uboe_{fam}_caqm_tag", "to_uboe", native(ipb, cci=req), "XDP_REDIRECT", TX,
         caqm_tagged(T["IPHOST_MAC"], T["SW_IP_MAC"], rewrite_ip(ipb), 5,
                     CAQMTag(caqm_en=1, i_bit=1, hint=8)),
         opts="--caqm-tag", scapy="Eth / 802.1Q(5) / CAQM tag(EN, I, Hint 8) / IP, ECN as it was")
    back_ipb = back(v6=v6)
    case(f"to_ub_{fam}_caqm_tag", "to_ub",
         caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], back_ipb, 5,
                     CAQMTag(is_last_hop=1, caqm_en=1, c_bit=1, hint=3)),
         "XDP_REDIRECT", RX, native_cci_out(rewrite_ip(back_ipb), cci_caqm(en=1, c=1, hint=3, loc=1), pid=5),
         opts="--caqm-tag", scapy="tag (LoC, EN, C, Hint 3) -> CCI 0x0e03, tag gone")

ipb = ip_bytes()
case("to_uboe_caqm_tag_untagged_loc_congested", "to_uboe",
     native(ipb, cci=cci_caqm(en=1, c=1, loc=1)), "XDP_REDIRECT", TX,
     caqm_tagged(T["IPHOST_MAC"], T["SW_IP_MAC"], rewrite_ip(ipb), None,
                 CAQMTag(is_last_hop=1, caqm_en=1, c_bit=1)),
     opts="--untagged --caqm-tag", scapy="no 802.1Q: Eth(0x88b6) / tag / IP")
case("to_uboe_caqm_tag_own_ethertype", "to_uboe", native(ipb, cci=cci_caqm(en=0, i=1, hint=200)),
     "XDP_REDIRECT", TX,
     caqm_tagged(T["IPHOST_MAC"], T["SW_IP_MAC"], rewrite_ip(ipb), 5, CAQMTag(i_bit=1, hint=200), et=0x9000),
     opts="--caqm-tag --caqm-ethertype 0x9000", scapy="an acknowledgement's CCI (EN 0) crosses too")
case("to_uboe_caqm_tag_fecn_stays_ecn", "to_uboe", native(ipb, fecn=SEVERE), "XDP_REDIRECT", TX,
     uboe_out(rewrite_ip(ipb, ecn=CE), vlan=5), opts="--caqm-tag", scapy="FECN mode: IP ECN, no tag")
case("to_uboe_caqm_without_tag_option", "to_uboe", native(ipb, cci=cci_caqm(en=1, i=1, hint=8)),
     "XDP_REDIRECT", TX + ["cci_not_fecn_forwarded"], uboe_out(rewrite_ip(ipb), vlan=5),
     scapy="default: no tag, the CAQM CCI is lost as before")
case("to_uboe_caqm_tag_not_dropped_by_cci_policy", "to_uboe", native(ipb, cci=cci_caqm(en=1)),
     "XDP_REDIRECT", TX, caqm_tagged(T["IPHOST_MAC"], T["SW_IP_MAC"], rewrite_ip(ipb), 5, CAQMTag(caqm_en=1)),
     opts="--caqm-tag --cci-policy drop", scapy="the tag carries it: nothing to drop")
ipb = ip_bytes(ttl=1)
case("to_uboe_caqm_tag_ttl_expired_punted_plain", "to_uboe", native(ipb, cci=cci_caqm(en=1, i=1, hint=8)),
     "XDP_PASS", ["rx_ub", "pass_ttl_expired"], meta(slow_mark(5, 0, 0), slow_caqm(CAQMTag(caqm_en=1, i_bit=1, hint=8))) +
     bytes(tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ipb, None)), opts="--caqm-tag",
     scapy="the slow path gets the plain IP packet, the mark (FECN 0: not a FECN CCI) and the tag-to-be")
case("to_uboe_caqm_tag_ttl_expired_loc_congested", "to_uboe", native(ipb, cci=cci_caqm(en=1, c=1, loc=1, hint=3)),
     "XDP_PASS", ["rx_ub", "pass_ttl_expired"],
     punt_out(ipb, fecn=0, caqm=slow_caqm(CAQMTag(is_last_hop=1, caqm_en=1, c_bit=1, hint=3))), opts="--caqm-tag",
     scapy="LoC becomes the tag's is_last_hop in the slow path's word too")
case("to_uboe_caqm_ttl_expired_no_tag_option", "to_uboe", native(ipb, cci=cci_caqm(en=1, i=1, hint=8)),
     "XDP_PASS", ["rx_ub", "pass_ttl_expired", "cci_not_fecn_forwarded"], punt_out(ipb, fecn=0),
     scapy="without --caqm-tag nothing is carried, as on the fast path")
case("to_uboe_caqm_tag_ttl_expired_fecn_cci", "to_uboe", native(ipb, fecn=MARKABLE),
     "XDP_PASS", ["rx_ub", "pass_ttl_expired"], punt_out(ipb, fecn=MARKABLE), opts="--caqm-tag",
     scapy="a FECN CCI is no CAQM request: the mark's FECN only")

ipb = back()
case("to_ub_caqm_tag_untagged_vlan", "to_ub",
     caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, None, CAQMTag(caqm_en=1, i_bit=1, hint=5)),
     "XDP_REDIRECT", RX, native_cci_out(rewrite_ip(ipb), cci_caqm(en=1, i=1, hint=5), pid=1), opts="--caqm-tag")
case("to_ub_caqm_tag_other_cc_type", "to_ub",
     caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, 5, CAQMTag(cc_type=4, caqm_en=1, hint=5)),
     "XDP_REDIRECT", RX, native_out(rewrite_ip(ipb), MARKABLE, pid=5), opts="--caqm-tag",
     scapy="only cc_type 000 is CAQM: the tag goes, the CCI is FECN from the ECN")
case("to_ub_caqm_tag_off_not_uboe", "to_ub",
     caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, 5, CAQMTag(caqm_en=1)), "XDP_PASS",
     ["pass_not_uboe"], caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, 5, CAQMTag(caqm_en=1)),
     scapy="without --caqm-tag the tag's EtherType is not IP: the kernel gets it untouched")
short = Ether(dst=T["SW_IP_MAC"], src=T["IPHOST_MAC"], type=0x88B6) / Raw(b"\x04\x00")
case("to_ub_caqm_tag_cut_short", "to_ub", short, "XDP_PASS", ["pass_not_uboe"], short, opts="--caqm-tag")
ipb = back(ttl=1)
case("to_ub_caqm_tag_ttl_expired_punted_plain", "to_ub",
     caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, 5, CAQMTag(caqm_en=1, i_bit=1, hint=5)), "XDP_PASS",
     ["rx_uboe", "pass_ttl_expired"],
     uboe_punt(ipb, pid=5, caqm=slow_caqm(CAQMTag(caqm_en=1, i_bit=1, hint=5))), opts="--caqm-tag",
     scapy="802.1Q and CAQM tags both popped for the kernel, the tag's info in the metadata")
case("to_ub_caqm_tag_other_cc_type_ttl_expired", "to_ub",
     caqm_tagged(T["SW_IP_MAC"], T["IPHOST_MAC"], ipb, 5, CAQMTag(cc_type=4, caqm_en=1, hint=5)), "XDP_PASS",
     ["rx_uboe", "pass_ttl_expired"], uboe_punt(ipb, pid=5), opts="--caqm-tag",
     scapy="only cc_type 000 is carried: the tag goes, nothing in the metadata")

# Where the kernel refuses XDP metadata, a punt carries its words in a header
# after the MACs (headers/ub2e_maps.h, struct ub2e_punt_hdr): 8 bytes that no
# IP layer takes for its own (0, and 0xff at byte 6), mark, CAQM word, then the
# key the programs were loaded with (the harness loads them with PUNT_KEY).
# TC ingress takes it off when the key is its own, and nothing else.
PUNT_KEY = 0x5542324550554E54


def punt_hdr(mark, caqm=0, key=PUNT_KEY, first=0):
    return bytes([first, 0, 0, 0, 0, 0, 0xFF, 0]) + struct.pack("=IIQ", mark, caqm, key)


for v6 in (False, True):
    fam = "v6" if v6 else "v4"
    frame = bytes(tagged(T["SW_UB_MAC"], T["UBPU_MAC"], ip_bytes(v6=v6), None))
    case(f"tc_ingress_ub_{fam}_punt_header_taken", "tc_ingress_ub", frame[:14] + punt_hdr(slow_mark(5)) + frame[14:],
         "TC_ACT_OK", [], frame, lines=("punt header", f"mark_out 0x{slow_mark(5):08x}"),
         scapy="the punt's header becomes skb->mark and leaves the packet")
    for what, hdr in (("other_key", punt_hdr(slow_mark(5), key=PUNT_KEY ^ 1)),
                      ("ipv4_first_byte", punt_hdr(slow_mark(5), first=0x45))):
        forged = frame[:14] + hdr + frame[14:]
        case(f"tc_ingress_ub_{fam}_punt_header_{what}", "tc_ingress_ub", forged, "TC_ACT_UNSPEC", [], forged,
             lines=("punt header", "mark_out 0x00000000"),
             scapy="not the programs' header (a frame from the wire): no mark, not a byte changed")


def main():
    print("# Generated by tests/bpf/gen_ub2e_fixtures.py from scapy; do not edit.")
    print(f"# {len(cases)} cases. Topology: tests/lib/topo.env")
    for name, prog, opts, inp, verdict, out, counters, scapy, mark, lines in cases:
        print()
        print(f"case {name}")
        if scapy:
            print(f"# scapy: {scapy}")
        print(f"prog {prog}")
        if opts:
            print(f"opts {opts}")
        if mark is not None:
            print(f"mark 0x{mark:08x}")
        for line in lines:
            print(line)
        print(f"in {inp.hex()}")
        print(f"verdict {verdict}")
        if out is not None:
            print(f"out {out.hex()}")
        print(f"count {' '.join(counters)}")
        print("end")


if __name__ == "__main__":
    main()
