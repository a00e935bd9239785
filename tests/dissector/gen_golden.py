#!/usr/bin/python3
"""Golden packets for the Wireshark dissector (tools/wireshark/ub.lua).

    /usr/bin/python3 tests/dissector/gen_golden.py OUTDIR

writes OUTDIR/golden.pcap and OUTDIR/expected.json. Packets are built with the
independent scapy encoder tests/scapy/ublayers.py; every expected value is the
value this generator put into the packet (or follows from it by a docs/WIRE.md rule:
RT, NPI, SACK PSN list, ICRC), never something read back from the dissector.

expected.json:
  cases:   [{name, frame, expect: {field: value}, experts: [expert fields]}]
           value: int (one occurrence), list (all occurrences, in order),
           str (exact text), null (field absent), "*" (present)
  filters: [{filter, frames}]          frames a display filter must select
  option_runs: [{name, opts, checks: [{frame, expect}]}]   tshark -o variants
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scapy"))

from scapy.layers.inet import IP, UDP                       # noqa: E402
from scapy.layers.inet6 import IPv6                         # noqa: E402
from scapy.layers.l2 import Ether, Dot1Q                    # noqa: E402
from scapy.packet import Raw                                # noqa: E402
from scapy.data import DLT_EN10MB                           # noqa: E402
from scapy.utils import checksum, PcapWriter                    # noqa: E402

from ublayers import (UBLPH, UBNTH, UBTPH, UBUTPH, UBTAH, UBMAETAH, UBCETPH,  # noqa: E402
                      UBSAETPH, UBCNPETPH, WPSOption, cci_fecn, icrc,
                      sack_bitmap, uboe_ip, with_icrc, UBOE_PORT, UB_ETHERTYPE,
                      UBCTPH, CTP_PORT, UBIMMETAH, UBTVETAH, atomic_operands)

MAC_DST, MAC_SRC = "02:00:00:00:00:02", "02:00:00:00:00:01"
V4 = ("192.0.2.1", "192.0.2.2")
V6 = ("2001:db8::1", "2001:db8::2")

# Every expert field the dissector defines: each case lists exactly the ones it expects.
EXPERTS = ["ub.truncated", "ub.tph.opcode.reserved", "ub.saetph.size.reserved",
           "ub.response_payload", "ub.icrc.bad", "ub.lph.config.not_ip",
           "ub.nth.pid.invalid", "ub.lph.truncated", "wpsopt.len.bad", "wpsopt.duplicate"]

cases = []


def add(name, frame, expect, experts=()):
    cases.append({"name": name, "frame": len(cases) + 1, "bytes": bytes(frame),
                  "expect": expect, "experts": sorted(experts)})


# ---- expected values from the scapy objects that built the packet -------------

def fields_of(pkt, prefix, names):
    return {prefix + n: int(getattr(pkt, n)) for n in names}


TPH_NAMES = ["last", "opcode", "ver", "pad", "nlp", "src_tpn", "dst_tpn", "ackreq",
             "err", "rsv", "psn", "rspst", "rspinfo", "tpmsn"]
TAH_NAMES = ["opcode", "taver", "ee", "tv_en", "poison", "rsv0", "ud_flg", "ini_tassn",
             "no_taack", "order", "mt_en", "fce", "retry", "alloc", "rsv1", "excl",
             "ini_rc_type", "ini_rcid"]


def tph_expect(t):
    return fields_of(t, "ub.tph.", TPH_NAMES)


def tah_expect(t):
    return fields_of(t, "ub.tah.", TAH_NAMES)


def maetah_expect(m):
    return fields_of(m, "ub.maetah.", ["va", "rsv0", "token_id", "rsv1", "length"])


def immetah_expect(m):
    return fields_of(m, "ub.immetah.", ["imm", "token_value", "msg_len"])


def tvetah_expect(t):
    return fields_of(t, "ub.tvetah.", ["token_value"])


# An answer (ATAH: TAACK, ReadResp, AtomicResp) shows RSPST.RSPINFO for byte 4.
ATAH_NAMES = ["opcode", "taver", "ee", "tv_en", "poison", "rsv0", "ud_flg", "ini_tassn",
              "rsv1", "excl", "ini_rc_type", "ini_rcid"]


def atah_expect(t, rspst, rspinfo):
    return {**fields_of(t, "ub.tah.", ATAH_NAMES), "ub.tah.rspst": rspst,
            "ub.tah.rspinfo": rspinfo, "ub.tah.no_taack": None, "ub.tah.order": None}


def cetph_expect(c):
    return fields_of(c, "ub.cetph.", ["ack_seq", "rsv", "loc", "i", "c", "hint"])


def icrc_int(ip_bytes_without_icrc):
    return int.from_bytes(icrc(ip_bytes_without_icrc), "little")


def icrc_expect(ip_bytes, good=True):
    """ICRC fields of a packet whose stored ICRC is the last 4 bytes of ip_bytes."""
    stored = int.from_bytes(ip_bytes[-4:], "little")
    calc = icrc_int(ip_bytes[:-4])
    assert (stored == calc) == good, "generator bug: ICRC goodness"
    return {"ub.icrc": stored, "ub.icrc.calculated": calc, "ub.icrc.status": 1 if good else 0}


def eth(ip_bytes, vlan=None, ethertype=None):
    et = ethertype or (0x0800 if ip_bytes[0] >> 4 == 4 else 0x86DD)
    if vlan is None:
        return Ether(dst=MAC_DST, src=MAC_SRC, type=et) / Raw(ip_bytes)
    return Ether(dst=MAC_DST, src=MAC_SRC, type=0x8100) / Dot1Q(vlan=vlan, type=et) / Raw(ip_bytes)


def uboe(tph, tah=None, maetah=None, payload=b"", v6=False, **kw):
    src, dst = V6 if v6 else V4
    return uboe_ip(src, dst, tph, tah=tah, payload=payload, v6=v6, maetah=maetah, **kw)


ABSENT_TAH = {"ub.tah.opcode": None, "ub.maetah.va": None}
ABSENT_EXT = {"ub.immetah.imm": None, "ub.tvetah.token_value": None}

# ---- UBoE data packets: every RTPH/UTPH and TAH field, both bit patterns ---------

tph_a = UBTPH(last=1, opcode=1, ver=2, pad=1, nlp=0, src_tpn=0x123456, dst_tpn=0xABCDEF,
              ackreq=1, err=0, rsv=0x15, psn=0x00ABCD, rspst=0, rspinfo=0x11, tpmsn=0x654321)
tah_a = UBTAH(opcode=0x00, taver=0, ee=2, tv_en=1, poison=0, rsv0=0, ud_flg=1, ini_tassn=0xBEEF,
              no_taack=1, order=5, mt_en=0, fce=1, retry=0, alloc=1, rsv1=0, excl=1,
              ini_rc_type=2, ini_rcid=0xA5A5A)
pl = b"golden payload A"
tv_a = UBTVETAH(token_value=0xA1B2C3D4)
ip = uboe(tph_a, tah_a, payload=pl, tvetah=tv_a)
add("RTP data, Send: RTPH and TAH fields (pattern A, TV_EN: a TVETAH), payload, ICRC",
    eth(ip), {**tph_expect(tph_a), **tah_expect(tah_a), **tvetah_expect(tv_a), **icrc_expect(ip),
              "ub.payload": pl.hex(), "ub.maetah.va": None, "ub.immetah.imm": None,
              "ub.tph.nak": None})

tph_b = UBTPH(last=0, opcode=1, ver=1, pad=2, nlp=0, src_tpn=0xEDCBA9, dst_tpn=0x000001,
              ackreq=0, err=1, rsv=0x2A, psn=0xFFFFFF, rspst=0, rspinfo=0x0E, tpmsn=0x000002)
tah_b = UBTAH(opcode=0x01, taver=3, ee=1, tv_en=0, poison=1, rsv0=1, ud_flg=0, ini_tassn=0x0102,
              no_taack=0, order=2, mt_en=1, fce=0, retry=1, alloc=0, rsv1=1, excl=0,
              ini_rc_type=1, ini_rcid=0x5A5A5)
pl = b"B"
imm_b = UBIMMETAH(imm=0xFEDCBA9876543210, token_value=0, msg_len=0)
ip = uboe(tph_b, tah_b, payload=pl, immetah=imm_b)
add("RTP data, Send with immediate: RTPH and TAH fields (pattern B), IMMETAH",
    eth(ip), {**tph_expect(tph_b), **tah_expect(tah_b), **immetah_expect(imm_b),
              "ub.tvetah.token_value": None, **icrc_expect(ip), "ub.payload": pl.hex()})

# UTP: the UTPH [chosen] (docs/TRANSPORT.md): Last, TPOpcode, TPVer, Pad, NLP, then 14
# reserved bytes; no TPN, no PSN fields. IniRCID names the sending jetty.
UTPH_NAMES = ["last", "opcode", "ver", "pad", "nlp"]
NO_RTPH = {"ub.tph.src_tpn": None, "ub.tph.dst_tpn": None, "ub.tph.psn": None,
           "ub.tph.tpmsn": None, "ub.tph.rspst": None}
tph = UBUTPH()
tah = UBTAH(opcode=0x01, ini_tassn=9, ini_rcid=5)
imm = UBIMMETAH(imm=42)
ip = uboe(tph, tah, payload=b"utp", v6=True, immetah=imm)
add("UTP data (opcode 0) over IPv6: UTPH, reserved bytes 0, Send with immediate", eth(ip),
    {**fields_of(tph, "ub.tph.", UTPH_NAMES), "ub.utph.rsv": "00" * 14, **NO_RTPH,
     **tah_expect(tah), **immetah_expect(imm), **icrc_expect(ip), "ub.payload": b"utp".hex()})
tph = UBUTPH(last=0, ver=1, pad=2, rsv=bytes(range(1, 15)))
tah = UBTAH(opcode=0x00, ini_tassn=0xFFFF, ini_rcid=0xFFFFF)
ip = uboe(tph, tah, payload=b"x")
add("UTP data: reserved bytes shown as such, whatever they hold", eth(ip),
    {**fields_of(tph, "ub.tph.", UTPH_NAMES), "ub.utph.rsv": bytes(range(1, 15)).hex(),
     **NO_RTPH, **tah_expect(tah), **icrc_expect(ip), "ub.payload": b"x".hex()})

for ta_op, v6, vlan, tv in [(0x03, False, None, 0), (0x04, True, None, 0), (0x06, False, 100, 0),
                            (0x03, True, None, 1), (0x04, False, 7, 1), (0x06, True, None, 1)]:
    tph = UBTPH(opcode=1, psn=1000 + ta_op, ackreq=1)
    tah = UBTAH(opcode=ta_op, ini_tassn=ta_op, tv_en=tv)
    mae = UBMAETAH(va=0x0123456789ABCDEF + ta_op, rsv0=0xA, token_id=0xABCDE, rsv1=0x5A,
                   length=4096 + ta_op)
    imm = UBIMMETAH(imm=0x1122334455667788, token_value=0x99AABBCC, msg_len=4100) \
        if ta_op == 0x04 else None
    tve = UBTVETAH(token_value=0x5EC0DE00 + ta_op) if tv else None
    pl = b"" if ta_op == 0x06 else b"write data"
    ip = uboe(tph, tah, maetah=mae, payload=pl, v6=v6, immetah=imm, tvetah=tve)
    exp = {**tph_expect(tph), **tah_expect(tah), **maetah_expect(mae), **icrc_expect(ip),
           "ub.payload": pl.hex() if pl else None, **ABSENT_EXT}
    if imm is not None:
        exp.update(immetah_expect(imm))
    if tve is not None:
        exp.update(tvetah_expect(tve))
    if vlan:
        exp["vlan.id"] = vlan
    add("TA opcode 0x%02x with MAETAH%s%s (%s%s)" % (
        ta_op, ", IMMETAH" if imm else "", ", TVETAH" if tve else "",
        "IPv6" if v6 else "IPv4", ", 802.1Q" if vlan else ""), eth(ip, vlan), exp)

tph = UBTPH(opcode=1, psn=0x10)
tah = UBTAH(opcode=0x10)
ip = uboe(tph, tah, payload=b"msg")
add("TA opcode 0x10: no MAETAH", eth(ip),
    {**tah_expect(tah), "ub.maetah.va": None, "ub.payload": b"msg".hex(), **icrc_expect(ip)})

# An answer's byte 4 is RSPST.RSPINFO (ATAH), and its bit 3 of byte 1 (SV) brings
# no TVETAH: 0x0A = 000.01010 as NoTAACK 0, Order 0, MT_EN 1, FCE 0, Retry 1, Alloc 0.
tph = UBTPH(opcode=1, psn=0x12)
tah = UBTAH(opcode=0x12, tv_en=1, mt_en=1, retry=1)
ip = uboe(tph, tah, payload=b"msg")
add("TA opcode 0x12 (Read response): ATAH, no MAETAH, no TVETAH", eth(ip),
    {**atah_expect(tah, 0, 0x0A), "ub.maetah.va": None, "ub.tvetah.token_value": None,
     "ub.payload": b"msg".hex(), **icrc_expect(ip)})

# Atomics (UB 2.0 §7.4.2.3): MAETAH (Length 8), TVETAH, operands big-endian [chosen].
for ta_op, name, op1, op2 in [(0x07, "compare-swap", 0x1111222233334444, 0x5555666677778888),
                              (0x0B, "fetch-add", 0x0000000000000010, 0)]:
    tph = UBTPH(opcode=1, psn=0x70 + ta_op, ackreq=1, last=1)
    tah = UBTAH(opcode=ta_op, ini_tassn=ta_op, tv_en=1, order=3)
    mae = UBMAETAH(va=0x00007F0000002008, token_id=0x9ABCD, length=8)
    tve = UBTVETAH(token_value=0xC0FFEE00)
    pl = atomic_operands(op1, op2)
    ip = uboe(tph, tah, maetah=mae, payload=pl, tvetah=tve)
    add("Atomic %s: MAETAH, TVETAH, operands" % name, eth(ip),
        {**tah_expect(tah), **maetah_expect(mae), **tvetah_expect(tve),
         "ub.atomic.operand1": op1, "ub.atomic.operand2": op2, "ub.payload": pl.hex(),
         **icrc_expect(ip)})
tph = UBTPH(opcode=1, psn=0x13, last=1)
tah = UBTAH(opcode=0x13, ini_tassn=0x0B)
pl = (0xDEADBEEF01020304).to_bytes(8, "big")
ip = uboe(tph, tah, payload=pl)
add("Atomic response: the original value", eth(ip),
    {**atah_expect(tah, 0, 0), "ub.atomic.original": 0xDEADBEEF01020304,
     "ub.maetah.va": None, "ub.payload": pl.hex(), **icrc_expect(ip)})

tph = UBTPH(opcode=1, psn=3)
tah = UBTAH(opcode=0x04)
_, ip = with_icrc(IP(src=V4[0], dst=V4[1], flags="DF") / UDP(sport=1, dport=UBOE_PORT) /
                  tph / tah / UBMAETAH(va=1) / Raw(bytes(UBIMMETAH(imm=1))[:10]))
add("truncated IMMETAH: expert info", eth(ip),
    {"ub.tah.opcode": 4, "ub.maetah.va": 1, "ub.immetah.imm": None, "ub.payload": None,
     "ub.undecoded": bytes(UBIMMETAH(imm=1))[:10].hex(), **icrc_expect(ip)},
    ["ub.truncated"])

tph = UBTPH(opcode=1, nlp=3, psn=31)
ip = uboe(tph, payload=b"\x00\x11\x22\x33\x44\x55\x66\x77\x88")
add("NLP 3: no TAH, rest is payload", eth(ip),
    {**tph_expect(tph), **ABSENT_TAH, "ub.payload": "001122334455667788", **icrc_expect(ip)})

# ---- response packets: TPACK, TPNAK, CETPH, SAETPH, CNPETPH, TAACK -----------------

for rspst in (0, 1, 2, 4):
    tph = UBTPH(opcode=2, psn=500 + rspst, rspst=rspst, rspinfo=rspst + 1)
    ip = uboe(tph)
    add("TPACK, RSPST %d" % rspst, eth(ip),
        {**tph_expect(tph), **ABSENT_TAH, "ub.tph.nak": None, "ub.payload": None, **icrc_expect(ip)})

tph = UBTPH(opcode=2, psn=600, rspst=3, rspinfo=5, src_tpn=10, dst_tpn=20)
ip = uboe(tph)
add("TPNAK (opcode 2, RSPST 011)", eth(ip),
    {**tph_expect(tph), "ub.tph.nak": 1, **ABSENT_TAH, **icrc_expect(ip)})

ce = UBCETPH(ack_seq=0xDEADBEEF, rsv=0x2B, loc=1, i=0, c=0x42, hint=0x1234)
tph = UBTPH(opcode=3, psn=700)
ip = uboe(tph / ce)
add("TPACK + CETPH (opcode 3)", eth(ip),
    {**tph_expect(tph), **cetph_expect(ce), "ub.saetph.size": None, **icrc_expect(ip)})


def sack_case(name, op, base, size, offsets, ce=None, vlan=None, v6=False):
    tph = UBTPH(opcode=op, psn=base)
    sae = UBSAETPH(size=size, max_rcv_psn=(base + max(offsets)) & 0xFFFFFF, rsv=0x11)
    hdrs = tph / ce / sae if ce is not None else tph / sae
    ip = uboe(hdrs / Raw(sack_bitmap(size, offsets)), v6=v6)
    exp = {**tph_expect(tph), "ub.saetph.size": size, "ub.saetph.rsv": 0x11,
           "ub.saetph.max_rcv_psn": int(sae.max_rcv_psn),
           "ub.saetph.psn": [(base + k) & 0xFFFFFF for k in sorted(offsets)],
           "ub.saetph.count": len(offsets),
           "ub.saetph.bitmap": sack_bitmap(size, offsets).hex(),
           "ub.payload": None, **icrc_expect(ip)}
    exp.update(cetph_expect(ce) if ce is not None else {"ub.cetph.ack_seq": None})
    add(name, eth(ip, vlan), exp)


sack_case("TPSACK + SAETPH 64 bits: PSN list", 5, 1000, 0, [0, 3, 17, 63])
sack_case("TPSACK + SAETPH 256 bits: PSN list wraps at 2^24", 5, 0xFFFFF0, 2,
          [1, 15, 16, 200, 255], v6=True)
sack_case("TPSACK + SAETPH 1024 bits", 5, 40000, 4, [0, 512, 1023], vlan=7)
sack_case("TPSACK + CETPH + SAETPH 128 bits (opcode 6)", 6, 123456, 1, [5, 127],
          ce=UBCETPH(ack_seq=99, loc=0, i=1, c=7, hint=65535))

cnp = UBCNPETPH(ecn=3, loc=1, rsv=0)
tph = UBTPH(opcode=8, psn=0)
ip = uboe(tph / cnp)
add("CNP + CNPETPH, severe, last hop", eth(ip),
    {**tph_expect(tph), "ub.cnpetph.ecn": 3, "ub.cnpetph.loc": 1, "ub.cnpetph.rsv": 0,
     "ub.cnpetph.rsv2": "00" * 15, **ABSENT_TAH, **icrc_expect(ip)})
cnp = UBCNPETPH(ecn=1, loc=0, rsv=0x1F)
ip = uboe(UBTPH(opcode=8) / cnp, v6=True)
add("CNP + CNPETPH, minor, intermediate", eth(ip),
    {"ub.tph.opcode": 8, "ub.cnpetph.ecn": 1, "ub.cnpetph.loc": 0, "ub.cnpetph.rsv": 0x1F,
     **icrc_expect(ip)})

# TAACK after the response headers; byte 4 is RSPST(3).RSPINFO(5) = 100.00111 = 0x87,
# which the scapy TAH class encodes as NoTAACK=1, Order=0, FCE=Retry=Alloc=1.
taack = UBTAH(opcode=0x11, ini_tassn=0x0A0B, no_taack=1, order=0, fce=1, retry=1, alloc=1,
              ini_rcid=0x12345)
tph = UBTPH(opcode=2, psn=800)
ip = uboe(tph / taack)
add("TPACK + TAACK (RSPST/RSPINFO in TAH byte 4)", eth(ip),
    {"ub.tph.opcode": 2, "ub.tah.opcode": 0x11, "ub.tah.ini_tassn": 0x0A0B,
     "ub.tah.rspst": 4, "ub.tah.rspinfo": 7, "ub.tah.no_taack": None,
     "ub.tah.ini_rcid": 0x12345, **icrc_expect(ip)})

# ---- malformed packets -------------------------------------------------------------

for op in (0x4, 0x7, 0x20):
    tph = UBTPH(opcode=op, psn=op)
    ip = uboe(tph, UBTAH(opcode=0x03))
    add("reserved TPOpcode 0x%x: expert info" % op, eth(ip),
        {"ub.tph.opcode": op, **ABSENT_TAH, "ub.payload": None,
         "ub.undecoded": bytes(UBTAH(opcode=0x03)).hex(), **icrc_expect(ip)},
        ["ub.tph.opcode.reserved"])

_, ip = with_icrc(IP(src=V4[0], dst=V4[1], flags="DF") / UDP(sport=1, dport=UBOE_PORT) /
                  Raw(bytes(UBTPH(psn=1))[:10]))
add("truncated RTPH: expert info", eth(ip),
    {"ub.tph.psn": None, "ub.payload": None, "ub.undecoded": bytes(UBTPH(psn=1))[:10].hex(),
     **icrc_expect(ip)},
    ["ub.truncated"])

tph = UBTPH(opcode=1, psn=2)
tah = UBTAH(opcode=0x03)
_, ip = with_icrc(IP(src=V4[0], dst=V4[1], flags="DF") / UDP(sport=1, dport=UBOE_PORT) /
                  tph / tah / Raw(bytes(UBMAETAH(va=1))[:9]))
add("truncated MAETAH: expert info", eth(ip),
    {"ub.tph.psn": 2, "ub.tah.opcode": 3, "ub.maetah.va": None, "ub.payload": None,
     "ub.undecoded": bytes(UBMAETAH(va=1))[:9].hex(), **icrc_expect(ip)},
    ["ub.truncated"])

ip = uboe(UBTPH(opcode=6, psn=4) / Raw(bytes(UBCETPH(ack_seq=1))[:5]))
add("truncated CETPH: expert info", eth(ip),
    {"ub.tph.opcode": 6, "ub.cetph.ack_seq": None, "ub.saetph.size": None, **icrc_expect(ip)},
    ["ub.truncated"])

ip = uboe(UBTPH(opcode=5, psn=5) / UBSAETPH(size=1) / Raw(b"\x01" * 8))
add("truncated SAETPH bitmap (128 bits, 8 bytes present): expert info", eth(ip),
    {"ub.tph.opcode": 5, "ub.saetph.size": 1, "ub.saetph.psn": None,
     "ub.undecoded": "01" * 8, **icrc_expect(ip)}, ["ub.truncated"])

ip = uboe(UBTPH(opcode=5, psn=9) / UBSAETPH(size=5) / Raw(b"\xff" * 8))
add("SAETPH reserved BitmapSize 5: expert info", eth(ip),
    {"ub.tph.opcode": 5, "ub.saetph.size": 5, "ub.saetph.psn": None, "ub.payload": None,
     "ub.undecoded": "ff" * 8, **icrc_expect(ip)}, ["ub.saetph.size.reserved"])

ip = uboe(UBTPH(opcode=2, psn=3), payload=b"xy")
add("TPACK with payload: expert info", eth(ip),
    {"ub.payload": b"xy".hex(), **icrc_expect(ip)}, ["ub.response_payload"])

# ---- ICRC: IPv4/IPv6 x plain/802.1Q x good/bad, masked fields ----------------------

for v6 in (False, True):
    for vlan in (None, 42):
        for good in (True, False):
            tph = UBTPH(opcode=1, psn=0x1CC + v6)
            ip = bytearray(uboe(tph, UBTAH(), payload=b"icrc test", v6=v6))
            if not good:
                ip[-5] ^= 0x01         # last payload byte corrupted after the ICRC was computed
            ip = bytes(ip)
            exp = {**icrc_expect(ip, good), "ub.tph.psn": int(tph.psn)}
            if vlan:
                exp["vlan.id"] = vlan
            add("ICRC %s, %s%s" % ("good" if good else "bad", "IPv6" if v6 else "IPv4",
                                   ", 802.1Q" if vlan else ""),
                eth(ip, vlan), exp, [] if good else ["ub.icrc.bad"])


def ipv4_fix_checksum(b):
    b[10:12] = b"\x00\x00"
    b[10:12] = checksum(bytes(b[:(b[0] & 0xF) * 4])).to_bytes(2, "big")


ip = bytearray(uboe(UBTPH(psn=11), UBTAH(), payload=b"masked"))
ip[1], ip[8] = 0xBB, 7              # DSCP/ECN and TTL rewritten by a switch
ip[20 + 6:20 + 8] = b"\x12\x34"     # non-zero UDP checksum
ipv4_fix_checksum(ip)
add("ICRC good after IPv4 ToS/TTL/checksum and UDP checksum change", eth(bytes(ip)),
    {**icrc_expect(bytes(ip)), "ip.dsfield": 0xBB, "ip.ttl": 7})

ip = bytearray(uboe(UBTPH(psn=12), UBTAH(), payload=b"masked", v6=True))
ip[0:4] = (0x6 << 28 | 0xB9 << 20 | 0xABCDE).to_bytes(4, "big")   # traffic class, flow label
ip[7] = 3                           # hop limit
ip[40 + 6:40 + 8] = b"\xbe\xef"
add("ICRC good after IPv6 traffic class/flow label/hop limit and UDP checksum change",
    eth(bytes(ip)), {**icrc_expect(bytes(ip)), "ipv6.flow": 0xABCDE, "ipv6.hlim": 3})

ip = bytearray(uboe(UBTPH(psn=13), UBTAH(), payload=b"unmasked"))
ip[4:6] = b"\x43\x21"               # IPv4 Identification is covered
ipv4_fix_checksum(ip)
add("ICRC bad after IPv4 Identification change", eth(bytes(ip)),
    icrc_expect(bytes(ip), good=False), ["ub.icrc.bad"])

# ---- native UB frames (EtherType 0x88B5): LPH, NTH, inner IP/UDP/UB -------------


def native(lph, nth, ip_bytes, ethertype=UB_ETHERTYPE):
    return Ether(dst=MAC_DST, src=MAC_SRC, type=ethertype) / lph / nth / Raw(ip_bytes)


def lph_expect(lph):
    e = fields_of(lph, "ub.lph.", ["crd", "ack", "crd_target_vl", "rsv0", "vl", "rsv1",
                                   "config", "lbmode", "route_policy", "link_len"])
    e["ub.lph.rt"] = (int(lph.route_policy) << 1) | int(lph.lbmode)   # docs/WIRE.md §5
    return e


def nth_expect(nth):
    cci, mode = int(nth.cci), (int(nth.cci) >> 12) & 7
    e = {"ub.nth.cci": cci, "ub.cci.mode": mode, "ub.nth.perm": int(nth.perm),
         "ub.nth.pid": int(nth.pid), "ub.nth.npi": (int(nth.perm) << 24) | int(nth.pid)}
    if mode == 4:   # FECN
        e.update({"ub.cci.loc": (cci >> 11) & 1, "ub.cci.fecn": cci & 3})
    else:
        e.update({"ub.cci.loc": None, "ub.cci.fecn": None})
    return e


lph = UBLPH(crd=1, ack=0, crd_target_vl=5, vl=9, config=3, lbmode=0, route_policy=1)
nth = UBNTH(cci=cci_fecn(3, loc=1), perm=0, pid=0x00ABCD)
tph = UBTPH(opcode=1, psn=4242)
ip = uboe(tph, UBTAH(opcode=0x00), payload=b"native")
add("native UB frame: LPH, NTH (FECN severe, LoC 1), inner IPv4 UDP/4792", native(lph, nth, ip),
    {**lph_expect(lph), **nth_expect(nth), "udp.dstport": UBOE_PORT, "ip.dst": V4[1],
     "ub.tph.psn": 4242, **icrc_expect(ip)})

cci_by_rt = [cci_fecn(0), cci_fecn(1), 0x2ABC, 0x0123]   # FECN x2, FECN_RTT, CAQM
for rt in range(4):
    lph = UBLPH(crd=0, ack=1, crd_target_vl=10, vl=6 + rt, rsv1=rt & 1, config=4,
                lbmode=rt & 1, route_policy=rt >> 1)
    nth = UBNTH(cci=cci_by_rt[rt], perm=1, pid=1 + rt)
    tph = UBTPH(opcode=2 if rt == 3 else 1, psn=9000 + rt, rspst=3 if rt == 3 else 0)
    ip = uboe(tph, None if rt == 3 else UBTAH(), v6=True)
    add("native UB frame: RT %d, CCI 0x%04x, inner IPv6" % (rt, cci_by_rt[rt]), native(lph, nth, ip),
        {**lph_expect(lph), **nth_expect(nth), "udp.dstport": UBOE_PORT, "ipv6.dst": V6[1],
         "ub.tph.psn": 9000 + rt, "ub.tph.nak": 1 if rt == 3 else None, **icrc_expect(ip)})

lph = UBLPH(config=5, vl=1)
add("native UB frame: Config 5 is not IP: expert info, no NTH",
    Ether(dst=MAC_DST, src=MAC_SRC, type=UB_ETHERTYPE) / lph / Raw(b"\x00" * 20),
    {"ub.lph.config": 5, "ub.nth.pid": None, "ip.version": None}, ["ub.lph.config.not_ip"])

lph = UBLPH(config=3)
nth = UBNTH(pid=0)
ip = uboe(UBTPH(psn=1), UBTAH())
add("native UB frame: Partition ID 0: expert info", native(lph, nth, ip),
    {"ub.nth.pid": 0, "ub.tph.psn": 1, **icrc_expect(ip)}, ["ub.nth.pid.invalid"])

ip = bytearray(uboe(UBTPH(psn=2), UBTAH(), payload=b"bad"))
ip[-1] ^= 0xFF
add("native UB frame: bad ICRC in the inner packet", native(UBLPH(config=3), UBNTH(), bytes(ip)),
    {**icrc_expect(bytes(ip), good=False), "ub.nth.pid": 1}, ["ub.icrc.bad"])

ALT_ETHERTYPE = 0x88B6
lph = UBLPH(config=3, vl=3)
ip = uboe(UBTPH(psn=31337), UBTAH())
add("native UB frame on EtherType 0x88B6: not decoded by default",
    native(lph, UBNTH(), ip, ethertype=ALT_ETHERTYPE), {"ub.lph.config": None, "ub.tph.psn": None})
alt_frame = cases[-1]["frame"]

# ---- CTP on a native port (docs/TRANSPORT.md): UDP/4794, 1-byte CTPH, LBF in LPH byte 3 --


def ctp(ctph, tah, maetah=None, payload=b""):
    return uboe_ip(V4[0], V4[1], ctph, tah=tah, maetah=maetah, payload=payload, dport=CTP_PORT)


lph = UBLPH(config=3, lbmode=1, link_len=0x1A5)
tah = UBTAH(opcode=0x00, ini_tassn=777, order=1, ini_rc_type=2, ini_rcid=0x12345)
ip = ctp(UBCTPH(), tah, payload=b"ctp payload")
add("native CTP frame: CTPH, TAH (IniRCID), payload, LBF", native(lph, UBNTH(), ip),
    {**lph_expect(lph), "ub.lph.lbf": 0xA5, "udp.dstport": CTP_PORT, "ub.ctph.opcode": 0,
     "ub.ctph.pad": 0, "ub.ctph.nlp": 0, **tah_expect(tah), "ub.tph.psn": None,
     "ub.payload": "*", **icrc_expect(ip)})
mae = UBMAETAH(va=0x1122334455667788, token_id=0xABCDE, length=512)
tah = UBTAH(opcode=0x03, ini_tassn=9, ini_rcid=7)
ip = ctp(UBCTPH(pad=3), tah, maetah=mae, payload=b"w" * 32)
add("native CTP frame: Write with MAETAH, Pad set", native(UBLPH(config=3), UBNTH(), ip),
    {"ub.ctph.pad": 3, **tah_expect(tah), **maetah_expect(mae), "ub.lph.lbf": 0,
     **icrc_expect(ip)})
# A CTP CNP [chosen]: CTPH opcode 1, NLP 1 (nothing after) | CNPETPH, byte 1 = the VL.
ip = uboe_ip(V4[1], V4[0], UBCTPH(opcode=1, nlp=1) / UBCNPETPH(ecn=1, rsv2=b"\x05" + b"\x00" * 14),
             dport=CTP_PORT)
add("native CTP frame: CNP (CNPETPH minor, VL 5)", native(UBLPH(config=3), UBNTH(), ip),
    {"ub.ctph.opcode": 1, "ub.ctph.nlp": 1, "ub.cnpetph.ecn": 1, "ub.cnpetph.loc": 0,
     "ub.cnpetph.vl": 5, "ub.tah.opcode": None, "ub.payload": None, **icrc_expect(ip)})
ip = ctp(UBCTPH(opcode=2), UBTAH())
add("native CTP frame: reserved CTPH opcode: expert info, nothing after it decoded",
    native(UBLPH(config=3), UBNTH(), ip),
    {"ub.ctph.opcode": 2, "ub.tah.opcode": None, **icrc_expect(ip)}, ["ub.tph.opcode.reserved"])

# ---- WPS option: Destination Options / Hop-by-Hop, inner IPv6 / IPv4 --------------


def ext_header(nh, options):
    """An IPv6 options header: NextHdr, HdrExtLen, options, padded to 8n bytes."""
    body = bytes([nh, 0]) + options
    pad = (-len(body)) % 8
    if pad == 1:
        body += b"\x00"                                   # Pad1
    elif pad:
        body += bytes([1, pad - 2]) + b"\x00" * (pad - 2)  # PadN
    return bytes([nh, len(body) // 8 - 1]) + body[2:]


def wps_expect(w, header):
    e = fields_of(w, "wpsopt.", ["s", "e", "r", "rsvd", "flow_id", "ingress_node",
                                 "egress_node", "group", "ingress_port", "egress_port"])
    e.update({"wpsopt.reserved": int(w.rsvd2), "wpsopt.len": 12, "wpsopt.type": 0x81,
              "wpsopt.header": header})
    return e


def inner_plain(v6, dport=5000):
    if v6:
        return bytes(IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=4000, dport=dport) / Raw(b"inner"))
    return bytes(IP(src="10.1.0.1", dst="10.1.0.2") / UDP(sport=4000, dport=dport) / Raw(b"inner"))


def wps_frame(headers, inner, first_nh):
    """Outer IPv6 with the given extension headers (already chained) and the inner packet."""
    return Ether(dst=MAC_DST, src=MAC_SRC, type=0x86DD) / \
        IPv6(src=V6[0], dst=V6[1], nh=first_nh) / Raw(b"".join(headers) + inner)


NH_HBH, NH_DSTOPT, NH_IPV4, NH_IPV6 = 0, 60, 4, 41

w = WPSOption(s=1, e=0, r=1, flow_id=0x1234, ingress_node=0x0102, egress_node=0x0A0B,
              group=7, ingress_port=3, egress_port=250)
ip = uboe(UBTPH(psn=777), UBTAH(), payload=b"wps", v6=True)
add("WPS in DestOpt, inner IPv6 UBoE packet still dissected",
    wps_frame([ext_header(NH_IPV6, bytes(w))], ip, NH_DSTOPT),
    {**wps_expect(w, 60), "udp.dstport": UBOE_PORT, "ub.tph.psn": 777, **icrc_expect(ip)})

w = WPSOption(s=0, e=1, r=0, rsvd=0x1F, rsvd2=0xFF, flow_id=65535, ingress_node=1, egress_node=2,
              group=65535, ingress_port=0, egress_port=1)
add("WPS in DestOpt, inner IPv4 (reserved bits set)",
    wps_frame([ext_header(NH_IPV4, bytes(w))], inner_plain(False), NH_DSTOPT),
    {**wps_expect(w, 60), "udp.dstport": 5000, "ip.dst": "10.1.0.2", "ub.tph.psn": None})

w = WPSOption(s=1, e=1, r=1, flow_id=42, ingress_node=100, egress_node=200, group=7,
              ingress_port=9, egress_port=8)
add("WPS in Hop-by-Hop, inner IPv6",
    wps_frame([ext_header(NH_IPV6, bytes(w))], inner_plain(True, 6000), NH_HBH),
    {**wps_expect(w, 0), "udp.dstport": 6000, "ipv6.dst": ["2001:db8::2", "fd00::2"]})

w = WPSOption(s=0, e=0, r=1, flow_id=43, ingress_node=101, egress_node=201, group=8)
ip = uboe(UBTPH(psn=778), UBTAH())
add("WPS in Hop-by-Hop, inner IPv4 UBoE packet",
    wps_frame([ext_header(NH_IPV4, bytes(w))], ip, NH_HBH),
    {**wps_expect(w, 0), "udp.dstport": UBOE_PORT, "ub.tph.psn": 778, **icrc_expect(ip)})

w = WPSOption(flow_id=44, group=7)
opts = b"\x00" + b"\x01\x01\x00" + bytes(w)     # Pad1 and PadN before the option
add("WPS after Pad1/PadN in DestOpt", wps_frame([ext_header(NH_IPV6, opts)], inner_plain(True), NH_DSTOPT),
    {**wps_expect(w, 60), "udp.dstport": 5000})

for olen in (10, 14):
    opt = bytes([0x81, olen]) + bytes(range(1, olen + 1))
    add("WPS OptDataLen %d: expert info, inner still dissected" % olen,
        wps_frame([ext_header(NH_IPV4, opt)], inner_plain(False, 5001), NH_DSTOPT),
        {"wpsopt.len": olen, "wpsopt.group": None, "wpsopt.data": opt[2:].hex(),
         "udp.dstport": 5001}, ["wpsopt.len.bad"])

w1 = WPSOption(flow_id=50, group=9)
w2 = WPSOption(flow_id=50, group=10)
add("WPS in both Hop-by-Hop and DestOpt: expert info",
    wps_frame([ext_header(NH_DSTOPT, bytes(w1)), ext_header(NH_IPV6, bytes(w2))],
              inner_plain(True), NH_HBH),
    {"wpsopt.group": [9, 10], "wpsopt.header": [0, 60], "udp.dstport": 5000}, ["wpsopt.duplicate"])

tel = b"\x04\x01\x05"                          # Tunnel Encapsulation Limit option, not WPS
add("DestOpt without a WPS option: no wpsopt",
    wps_frame([ext_header(NH_IPV6, tel)], inner_plain(True), NH_DSTOPT),
    {"wpsopt.type": None, "udp.dstport": 5000})

# ---- display filters and preference runs -----------------------------------------


def frames_where(pred):
    return [c["frame"] for c in cases if pred(c["expect"], c["experts"])]


def has(e, field, value):
    v = e.get(field)
    return v == value or (isinstance(v, list) and value in v)


filters = [
    ("wpsopt.group == 7", lambda e, x: has(e, "wpsopt.group", 7)),
    ("wpsopt.e", lambda e, x: e.get("wpsopt.group") is not None),
    ("wpsopt.e == 1", lambda e, x: has(e, "wpsopt.e", 1)),
    ("wpsopt.len.bad", lambda e, x: "wpsopt.len.bad" in x),
    ("ub.icrc.status == 0", lambda e, x: has(e, "ub.icrc.status", 0)),
    ("ub.icrc.bad", lambda e, x: "ub.icrc.bad" in x),
    ("ub.tph.nak", lambda e, x: has(e, "ub.tph.nak", 1)),
    ("ub.tph.opcode == 0x5", lambda e, x: has(e, "ub.tph.opcode", 5)),
    ("ub.saetph.psn == 0", lambda e, x: has(e, "ub.saetph.psn", 0)),
    ("ub.lph.rt == 3", lambda e, x: has(e, "ub.lph.rt", 3)),
    ("ub.cci.fecn == 3", lambda e, x: has(e, "ub.cci.fecn", 3)),
    ("ub.nth.perm == 1", lambda e, x: has(e, "ub.nth.perm", 1)),
    ("ub.maetah", lambda e, x: "ub.maetah.va" in e and e["ub.maetah.va"] is not None),
    ("ub.immetah", lambda e, x: e.get("ub.immetah.imm") is not None),
    ("ub.tvetah.token_value == 0xc0ffee00", lambda e, x: has(e, "ub.tvetah.token_value", 0xC0FFEE00)),
    ("ub.atomic", lambda e, x: e.get("ub.atomic.operand1") is not None or
     e.get("ub.atomic.original") is not None),
]

option_runs = [{
    "name": "preference ub.ethertype moves native decoding to EtherType 0x88B6",
    "opts": ["-o", "ub.ethertype:0x%04x" % ALT_ETHERTYPE],
    "checks": [{"frame": alt_frame, "expect": {"ub.lph.config": 3, "ub.lph.vl": 3, "ub.nth.pid": 1,
                                               "ub.tph.psn": 31337, "ub.icrc.status": 1}}] +
              [{"frame": c["frame"], "expect": {"ub.lph.config": None}}
               for c in cases if c["expect"].get("ub.lph.config") is not None],
}]


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    # Raw bytes, so that nothing is re-encoded on the way to the file.
    with PcapWriter(os.path.join(outdir, "golden.pcap"), linktype=DLT_EN10MB) as w:
        w.write_header(None)
        for c in cases:
            w.write_packet(c["bytes"], sec=1700000000 + c["frame"], usec=0)
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump({"experts": EXPERTS,
                   "cases": [{k: v for k, v in c.items() if k != "bytes"} for c in cases],
                   "filters": [{"filter": flt, "frames": frames_where(p)} for flt, p in filters],
                   "option_runs": option_runs}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gen_golden.py OUTDIR")
    main(sys.argv[1])
