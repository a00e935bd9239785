#!/usr/bin/python3
"""Decode frames from `ubpkt build` with the scapy layers and check every field
the options asked for. Usage: check_ubpkt.py PATH_TO_UBPKT. Exit 0 when all hold."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

import logging  # noqa: E402
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether, Dot1Q  # noqa: E402

import ublayers as ub  # noqa: E402

UBPKT = sys.argv[1]
DMAC, SMAC = "02:00:00:00:00:0b", "02:00:00:00:00:0a"
failures = []


def build(*args):
    cmd = [UBPKT, "build", "--dst-mac", DMAC, "--src-mac", SMAC] + list(args)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [bytes.fromhex(line) for line in out.split()]


def check(case, what, got, want):
    if got != want:
        failures.append("%s: %s = %r, want %r" % (case, what, got, want))


def decode(frame, native_type=ub.UB_ETHERTYPE):
    """(eth, vlan, lph, nth, ip bytes)."""
    eth = Ether(frame)
    vlan = lph = nth = None
    if eth.type == native_type:
        lph = ub.UBLPH(frame[14:18])
        nth = ub.UBNTH(frame[18:24])
        ip = frame[24:]
    elif eth.type == 0x8100:
        vlan = eth[Dot1Q]
        ip = frame[18:]
    else:
        ip = frame[14:]
    return eth, vlan, lph, nth, ip


def check_ip(case, ip, v6, dscp, ecn, ttl, src, dst, icrc_ok=True):
    pkt = IPv6(ip) if v6 else IP(ip)
    if v6:
        check(case, "tc", pkt.tc, dscp << 2 | ecn)
        check(case, "hlim", pkt.hlim, ttl)
        check(case, "nh", pkt.nh, 17)
        check(case, "plen", pkt.plen, len(ip) - 40)
    else:
        check(case, "tos", pkt.tos, dscp << 2 | ecn)
        check(case, "ttl", pkt.ttl, ttl)
        check(case, "flags", str(pkt.flags), "DF")
        check(case, "ihl", pkt.ihl, 5)
        check(case, "len", pkt.len, len(ip))
        fresh = pkt.copy()
        del fresh.chksum
        check(case, "chksum recomputed", IP(bytes(fresh)).chksum, pkt.chksum)
    check(case, "src", pkt.src, src)
    check(case, "dst", pkt.dst, dst)
    udp = pkt[UDP]
    check(case, "dport", udp.dport, ub.UBOE_PORT)
    check(case, "udp chksum", udp.chksum, 0)
    check(case, "udp len", udp.len, len(ip) - (40 if v6 else 20))
    check(case, "icrc ok", ub.icrc(ip[:-4]) == ip[-4:], icrc_ok)
    return pkt[ub.UBTPH], bytes(pkt[ub.UBTPH].payload)


def case_native_v4():
    c = "native-v4"
    frames = build("--native", "--src", "10.0.0.1", "--dst", "10.0.0.2", "--pid", "7",
                   "--perm", "1", "--fecn", "3", "--loc", "1", "--vl", "9", "--rt", "1",
                   "--ttl", "9", "--dscp", "5", "--ecn", "1", "--psn", "100", "--count", "3",
                   "--payload-len", "10", "--ethertype", "0x88b6", "--sport", "5000")
    check(c, "count", len(frames), 3)
    for i, f in enumerate(frames):
        eth, _, lph, nth, ip = decode(f, 0x88B6)
        check(c, "dst mac", eth.dst, DMAC)
        check(c, "src mac", eth.src, SMAC)
        check(c, "ethertype", eth.type, 0x88B6)
        check(c, "lph config", lph.config, 3)
        check(c, "lph vl", lph.vl, 9)
        check(c, "rt", lph.route_policy << 1 | lph.lbmode, 1)
        check(c, "cci", nth.cci, ub.cci_fecn(3, 1))
        check(c, "perm", nth.perm, 1)
        check(c, "pid", nth.pid, 7)
        tph, rest = check_ip(c, ip, False, 5, 1, 9, "10.0.0.1", "10.0.0.2")
        check(c, "sport", IP(ip)[UDP].sport, 5000)
        check(c, "opcode", tph.opcode, 1)
        check(c, "psn", tph.psn, 100 + i)
        check(c, "ackreq", tph.ackreq, 1)
        check(c, "nlp", tph.nlp, 0)
        check(c, "tah opcode", ub.UBTAH(rest[:8]).opcode, 0)
        check(c, "payload", len(rest) - 8 - 4, 10)


def case_uboe_v6_vlan_sack():
    c = "uboe-v6-vlan-tpsack"
    (f,) = build("--uboe", "--src", "fd00::1", "--dst", "fd00::2", "--vlan", "42", "--pcp", "3",
                 "--opcode", "5", "--psn", "0xffffff", "--ecn", "3", "--dscp", "63", "--ttl", "1")
    eth, vlan, _, _, ip = decode(f)
    check(c, "vlan", vlan.vlan, 42)
    check(c, "pcp", vlan.prio, 3)
    check(c, "inner type", vlan.type, 0x86DD)
    tph, rest = check_ip(c, ip, True, 63, 3, 1, "fd00::1", "fd00::2")
    check(c, "opcode", tph.opcode, 5)
    check(c, "psn", tph.psn, 0xFFFFFF)
    sa = ub.UBSAETPH(rest[:4])
    check(c, "saetph size", sa.size, 0)
    check(c, "bitmap", rest[4:12], ub.sack_bitmap(0, [0]))
    check(c, "nothing after saetph", len(rest), 4 + 8 + 4)


def case_uboe_v4_nak_and_cnp():
    c = "uboe-v4-tpnak"
    (f,) = build("--uboe", "--src", "192.0.2.1", "--dst", "192.0.2.2", "--opcode", "2", "--rspst", "3")
    _, vlan, _, _, ip = decode(f)
    check(c, "untagged", vlan, None)
    tph, rest = check_ip(c, ip, False, 0, 2, 64, "192.0.2.1", "192.0.2.2")
    check(c, "opcode", tph.opcode, 2)
    check(c, "rspst", tph.rspst, 3)
    check(c, "no payload", len(rest), 4)
    c = "uboe-v4-cnp"
    (f,) = build("--uboe", "--src", "192.0.2.1", "--dst", "192.0.2.2", "--opcode", "8")
    tph, rest = check_ip(c, decode(f)[4], False, 0, 2, 64, "192.0.2.1", "192.0.2.2")
    check(c, "opcode", tph.opcode, 8)
    check(c, "cnpetph ecn", ub.UBCNPETPH(rest[:16]).ecn, 3)
    check(c, "length", len(rest), 16 + 4)
    c = "uboe-v4-tpack-ce"
    (f,) = build("--uboe", "--src", "192.0.2.1", "--dst", "192.0.2.2", "--opcode", "3", "--psn", "9")
    tph, rest = check_ip(c, decode(f)[4], False, 0, 2, 64, "192.0.2.1", "192.0.2.2")
    check(c, "cetph ack_seq", ub.UBCETPH(rest[:8]).ack_seq, 9)


def case_native_v6_cci_bad_icrc():
    c = "native-v6-cci"
    (f,) = build("--native", "--src", "fd00::a", "--dst", "fd00::b", "--cci", "0x1234",
                 "--pid", "0xabcdef", "--bad-icrc", "--payload-len", "0")
    eth, _, lph, nth, ip = decode(f)
    check(c, "ethertype", eth.type, ub.UB_ETHERTYPE)
    check(c, "lph config", lph.config, 4)
    check(c, "rt default", lph.route_policy << 1 | lph.lbmode, 2)
    check(c, "cci", nth.cci, 0x1234)
    check(c, "pid", nth.pid, 0xABCDEF)
    check_ip(c, ip, True, 0, 2, 64, "fd00::a", "fd00::b", icrc_ok=False)


for fn in (case_native_v4, case_uboe_v6_vlan_sack, case_uboe_v4_nak_and_cnp,
           case_native_v6_cci_bad_icrc):
    fn()
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
