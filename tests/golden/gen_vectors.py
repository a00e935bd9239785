#!/usr/bin/python3
"""Golden UB/UBoE frames from the independent scapy encoder (tests/scapy/ublayers.py).

Writes one vector per line:

    name key=value ... icrc=HEX hex=FRAME

The keys say everything needed to build the frame again (tests/unit/test_golden.c
does it with the C builders and compares byte for byte); every key of a header
that is present is written, so the two sides share no defaults. icrc is
zlib.crc32 over the masked IP..payload bytes, as ublayers.icrc() computes it.

Deterministic: same scapy, same output. Usage: gen_vectors.py [OUT] (default:
vectors.txt beside this script; "-" for stdout).
"""
import os
import random
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

import logging  # noqa: E402
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether, Dot1Q  # noqa: E402
from scapy.packet import Raw  # noqa: E402

import ublayers as ub  # noqa: E402

TAACK = 0x11
MAETAH_TA = ub.TA_MAETAH      # Write, Write+Imm, Read, the atomics
IMMETAH_TA = ub.TA_IMMETAH    # Send+Imm, Write+Imm
ANSWERS = ub.TA_ANSWERS       # TAACK, ReadResp, AtomicResp: ATAH byte 4
DMAC, SMAC = "02:00:00:00:00:02", "02:00:00:00:00:01"
V4 = ("10.1.0.1", "10.2.0.2")
V6 = ("fd00:1::1", "fd00:2::2")

# Key order in the output, so that lines read alike.
ORDER = ("kind dmac smac vlan pcp dei ethertype vl rt cci perm pid ipver src dst dscp ecn ttl "
         "ipid flow sport op last tpver pad nlp stpn dtpn ackreq err psn rspst rspinfo tpmsn "
         "cetph ce_ack ce_loc ce_i ce_c ce_hint saetph sa_max sa_bits cnpetph cnp_ecn cnp_loc "
         "tah ta_ver ta_ee ta_tv ta_poison ta_ud ta_tassn ta_notaack ta_order ta_mt ta_fce "
         "ta_retry ta_alloc ta_rspst ta_rspinfo ta_excl ta_rctype ta_rcid "
         "maetah va token mlen immetah imm imm_tv imm_len tvetah tv plen pseed").split()


# The RTPH fields a UTPH has as reserved bytes (docs/TRANSPORT.md "UTP").
UTPH_RSV_KEYS = ("stpn", "dtpn", "ackreq", "err", "psn", "rspst", "rspinfo", "tpmsn")


def utph(p):
    """Make p a UTP packet as the UTPH has it: reserved bytes 0, Last 1."""
    p.update({k: 0 for k in UTPH_RSV_KEYS})
    p["last"] = 1
    return p


def payload(n, seed):
    return bytes((seed + i) & 0xFF for i in range(n))


def tah_layer(p):
    kw = dict(opcode=p["tah"], taver=p["ta_ver"], ee=p["ta_ee"], tv_en=p["ta_tv"],
              poison=p["ta_poison"], ud_flg=p["ta_ud"], ini_tassn=p["ta_tassn"],
              excl=p["ta_excl"], ini_rc_type=p["ta_rctype"], ini_rcid=p["ta_rcid"])
    if p["tah"] in ANSWERS:
        # docs/WIRE.md §4: an answer (ATAH) has RSPST(3).RSPINFO(5) in byte 4,
        # where the others have NoTAACK.Order.MT_EN.FCE.Retry.Alloc; ublayers
        # names only the latter, so lay the answer's byte over them bit for bit.
        b4 = (p["ta_rspst"] << 5) | p["ta_rspinfo"]
        kw.update(no_taack=b4 >> 7, order=(b4 >> 4) & 7, mt_en=(b4 >> 3) & 1,
                  fce=(b4 >> 2) & 1, retry=(b4 >> 1) & 1, alloc=b4 & 1)
    else:
        kw.update(no_taack=p["ta_notaack"], order=p["ta_order"], mt_en=p["ta_mt"],
                  fce=p["ta_fce"], retry=p["ta_retry"], alloc=p["ta_alloc"])
    return ub.UBTAH(**kw)


def ip_bytes(p):
    """IP header .. ICRC, built by scapy and ublayers.with_icrc()."""
    tos = (p["dscp"] << 2) | p["ecn"]
    if p["ipver"] == 6:
        ip = IPv6(src=p["src"], dst=p["dst"], tc=tos, fl=p["flow"], hlim=p["ttl"], nh=17)
    else:
        ip = IP(src=p["src"], dst=p["dst"], tos=tos, ttl=p["ttl"], id=p["ipid"], flags="DF")
    if p["op"] == 0:
        # UTPH [chosen]: only Last, TPOpcode, TPVer, Pad, NLP; the RTPH's other
        # fields are reserved bytes, 0 (the keys say so for the C side).
        assert not any(p[k] for k in UTPH_RSV_KEYS), "a UTP vector with reserved bits set"
        tph = ub.UBUTPH(last=p["last"], opcode=0, ver=p["tpver"], pad=p["pad"], nlp=p["nlp"])
    else:
        tph = ub.UBTPH(
            last=p["last"], opcode=p["op"], ver=p["tpver"], pad=p["pad"], nlp=p["nlp"],
            src_tpn=p["stpn"], dst_tpn=p["dtpn"], ackreq=p["ackreq"], err=p["err"],
            psn=p["psn"], rspst=p["rspst"], rspinfo=p["rspinfo"], tpmsn=p["tpmsn"])
    pkt = ip / UDP(sport=p["sport"], dport=ub.UBOE_PORT, chksum=0) / tph
    if "cetph" in p:
        pkt = pkt / ub.UBCETPH(ack_seq=p["ce_ack"], loc=p["ce_loc"], i=p["ce_i"],
                               c=p["ce_c"], hint=p["ce_hint"])
    if "saetph" in p:
        bits = [int(k) for k in p["sa_bits"].split(",")] if p["sa_bits"] != "-" else []
        pkt = pkt / ub.UBSAETPH(size=p["saetph"], max_rcv_psn=p["sa_max"]) / Raw(
            ub.sack_bitmap(p["saetph"], bits))
    if "cnpetph" in p:
        pkt = pkt / ub.UBCNPETPH(ecn=p["cnp_ecn"], loc=p["cnp_loc"])
    if "tah" in p:
        pkt = pkt / tah_layer(p)
    if "maetah" in p:
        pkt = pkt / ub.UBMAETAH(va=p["va"], token_id=p["token"], length=p["mlen"])
    if "immetah" in p:
        pkt = pkt / ub.UBIMMETAH(imm=p["imm"], token_value=p["imm_tv"], msg_len=p["imm_len"])
    if "tvetah" in p:
        pkt = pkt / ub.UBTVETAH(token_value=p["tv"])
    pkt = pkt / Raw(payload(p["plen"], p["pseed"]))
    return ub.with_icrc(pkt)[1]


def frame(p):
    raw = ip_bytes(p)
    if p["kind"] == "native":
        l2 = Ether(dst=p["dmac"], src=p["smac"], type=p["ethertype"]) / ub.UBLPH(
            config=4 if p["ipver"] == 6 else 3, vl=p["vl"], lbmode=p["rt"] & 1,
            route_policy=p["rt"] >> 1) / ub.UBNTH(cci=p["cci"], perm=p["perm"], pid=p["pid"])
    else:
        ethertype = 0x86DD if p["ipver"] == 6 else 0x0800
        if "vlan" in p:
            l2 = Ether(dst=p["dmac"], src=p["smac"], type=0x8100) / Dot1Q(
                prio=p["pcp"], id=p["dei"], vlan=p["vlan"], type=ethertype)
        else:
            l2 = Ether(dst=p["dmac"], src=p["smac"], type=ethertype)
    return bytes(l2 / Raw(raw)), raw


# ---- parameter sets ---------------------------------------------------------

def base(kind="uboe", ipver=4, op=1, vlan=None):
    src, dst = V6 if ipver == 6 else V4
    p = dict(kind=kind, dmac=DMAC, smac=SMAC, ipver=ipver, src=src, dst=dst, dscp=0,
             ecn=2, ttl=64, sport=0xC000, op=op, last=0, tpver=0, pad=0, nlp=0,
             stpn=0x10, dtpn=0x20, ackreq=0, err=0, psn=1, rspst=0, rspinfo=0, tpmsn=0,
             plen=0, pseed=0)
    if ipver == 6:
        p["flow"] = 0
    else:
        p["ipid"] = 0
    if kind == "native":
        p.update(ethertype=ub.UB_ETHERTYPE, vl=0, rt=2, cci=0x4000, perm=0, pid=1)
    elif vlan is not None:
        p.update(vlan=vlan, pcp=0, dei=0)
    return p


def with_tah(p, ta=0x00, **kw):
    p.update(tah=ta, ta_ver=0, ta_ee=0, ta_tv=0, ta_poison=0, ta_ud=0, ta_tassn=1,
             ta_notaack=0, ta_order=0, ta_mt=0, ta_fce=0, ta_retry=0, ta_alloc=0,
             ta_rspst=0, ta_rspinfo=0, ta_excl=0, ta_rctype=0, ta_rcid=0)
    p.update(kw)
    for k in ("maetah", "immetah", "tvetah"):
        p.pop(k, None)
    if ta in MAETAH_TA:
        p.update(maetah=1, va=0x00007F0000001000, token=0x12345, mlen=4096)
        if ta in range(0x07, 0x10):
            p.update(va=0x00007F0000001008, mlen=8)     # one aligned 8-byte word
    if ta in IMMETAH_TA:
        p.update(immetah=1, imm=0x0123456789ABCDEF, imm_tv=0, imm_len=0)
        if ta == 0x04:
            p.update(imm_tv=0xCAFEF00D, imm_len=4096)
    tv_sync(p)
    return p


def tv_sync(p):
    """A request with TV_EN carries a TVETAH (an answer's bit 3 is SV: none)."""
    if p["ta_tv"] and p["tah"] not in ANSWERS:
        p.setdefault("tv", 0x5EC0DE42)
        p["tvetah"] = 1
    else:
        p.pop("tvetah", None)
        p.pop("tv", None)


def with_cetph(p, **kw):
    p.update(cetph=1, ce_ack=7, ce_loc=0, ce_i=1, ce_c=3, ce_hint=0x100)
    p.update(kw)
    return p


def with_saetph(p, code, bits="0,2,5"):
    p.update(saetph=code, sa_max=(p["psn"] + (64 << code) - 1) & 0xFFFFFF, sa_bits=bits)
    return p


def with_cnpetph(p, ecn=3, loc=0):
    p.update(cnpetph=1, cnp_ecn=ecn, cnp_loc=loc)
    return p


def tp_case(p, case):
    """Shape p as one kind of TP packet; returns the name suffix."""
    if case == "utp":
        p.update(op=0, plen=64)
        utph(p)
        with_tah(p, 0x00, ta_rcid=0x10)     # IniRCID: the sending jetty
    elif case == "rtp":
        p.update(op=1, ackreq=1, plen=200)
        with_tah(p, 0x03)
    elif case == "tpack":
        p.update(op=2, nlp=1)
    elif case == "tpnak":
        p.update(op=2, rspst=3, rspinfo=5, nlp=1)
    elif case == "tpack_ce":
        p.update(op=3, nlp=1)
        with_cetph(p)
    elif case == "tpsack":
        p.update(op=5, nlp=1)
        with_saetph(p, 1)
    elif case == "tpsack_ce":
        p.update(op=6, nlp=1)
        with_cetph(p, ce_loc=1, ce_i=0)
        with_saetph(p, 0, "1,63")
    elif case == "cnp":
        p.update(op=8, nlp=1)
        with_cnpetph(p)
    elif case == "taack":
        p.update(op=2)
        with_tah(p, TAACK, ta_rspst=0, ta_rspinfo=0)
    return p


TP_CASES = ("utp", "rtp", "tpack", "tpnak", "tpack_ce", "tpsack", "tpsack_ce", "cnp", "taack")
TA_OPS = {0x00: "send", 0x01: "send_imm", 0x03: "write", 0x04: "write_imm", 0x06: "read",
          0x07: "cas", 0x0B: "fadd", 0x10: "message", 0x11: "taack", 0x12: "read_resp",
          0x13: "atomic_resp"}


def vectors():
    out = []

    def add(name, p):
        out.append((name, p))

    # Every TP packet kind on every frame kind.
    for kind, vlan in (("uboe", None), ("uboe", 100), ("native", None)):
        for ipver in (4, 6):
            for case in TP_CASES:
                tag = kind + ("-vlan" if vlan is not None else "")
                add("%s-v%d-%s" % (tag, ipver, case), tp_case(base(kind, ipver, vlan=vlan), case))

    # SAETPH of every size, with bits at both ends of the bitmap.
    for code in range(5):
        bits = 64 << code
        for ipver in (4, 6):
            p = base("uboe", ipver, op=5)
            p.update(nlp=1, psn=0xFFFFF0)
            with_saetph(p, code, "0,1,7,8,%d,%d" % (bits // 2 + 3, bits - 1))
            add("uboe-v%d-tpsack-size%d" % (ipver, code), p)
        p = base("native", 6, op=6)
        p.update(nlp=1)
        with_cetph(p, ce_ack=0xFFFFFFFF, ce_c=255, ce_hint=0xFFFF, ce_loc=1)
        with_saetph(p, code, ",".join(str(k) for k in range(0, bits, 5)))
        add("native-v6-tpsack_ce-size%d" % code, p)
    p = base("uboe", 4, op=5)
    p.update(nlp=1)
    add("uboe-v4-tpsack-empty-bitmap", with_saetph(p, 2, "-"))

    # CNPETPH codepoints.
    for ecn in (1, 3):
        for loc in (0, 1):
            p = base("native", 4, op=8)
            p.update(nlp=1)
            add("native-v4-cnp-ecn%d-loc%d" % (ecn, loc), with_cnpetph(p, ecn, loc))

    # Every TAH kind, with and without its flags.
    for ta, tname in TA_OPS.items():
        for kind, ipver in (("uboe", 4), ("native", 6)):
            p = base(kind, ipver, op=1 if ta != TAACK else 2)
            p["plen"] = {TAACK: 0, 0x06: 0, 0x07: 16, 0x0B: 16, 0x13: 8}.get(ta, 48)
            if ta == TAACK:
                with_tah(p, ta, ta_rspst=4, ta_rspinfo=17, ta_tassn=0xBEEF, ta_ee=1,
                         ta_excl=1, ta_rctype=2, ta_rcid=0x54321)
            elif ta in ANSWERS:
                with_tah(p, ta, ta_rspst=0, ta_rspinfo=0)
            else:
                with_tah(p, ta)
            add("%s-v%d-ta-%s" % (kind, ipver, tname), p)
        p = base("uboe", 6, op=1, vlan=7)
        p["plen"] = 16
        if ta == TAACK:
            p["op"] = 2
            with_tah(p, ta, ta_rspst=7, ta_rspinfo=31)
        elif ta in ANSWERS:
            with_tah(p, ta, ta_ee=3, ta_tv=1, ta_poison=1, ta_ud=1, ta_tassn=0xFFFF,
                     ta_rspst=7, ta_rspinfo=31, ta_excl=1, ta_rctype=3, ta_rcid=0xFFFFF)
        else:
            with_tah(p, ta, ta_ee=3, ta_tv=1, ta_poison=1, ta_ud=1, ta_tassn=0xFFFF,
                     ta_notaack=1, ta_order=7, ta_mt=1, ta_fce=1, ta_retry=1, ta_alloc=1,
                     ta_excl=1, ta_rctype=3, ta_rcid=0xFFFFF, tv=0xFFFFFFFF)
        if "maetah" in p:
            p.update(va=0xFFFFFFFFFFFFFFFF, token=0xFFFFF, mlen=0xFFFFFFFF)
        if "immetah" in p:
            p.update(imm=0xFFFFFFFFFFFFFFFF, imm_tv=0xFFFFFFFF, imm_len=0xFFFFFFFF)
        add("uboe-vlan-v6-ta-%s-allbits" % tname, p)

    # URMA operations as the transport core sends them (docs/WIRE.md §4):
    # memory accesses carry a TVETAH; atomics their big-endian operands.
    p = base("uboe", 4, op=1)
    with_tah(p, 0x03, ta_tv=1, tv=0x89ABCDEF, ta_order=3)
    p["plen"] = 64
    add("uboe-v4-urma-write-token", p)
    p = base("uboe", 4, op=1)
    p.update(last=1, ackreq=1, plen=40)
    with_tah(p, 0x04, ta_tv=1, tv=0x89ABCDEF, ta_order=3)
    p.update(imm=0xFEEDFACECAFEBEEF, imm_tv=0, imm_len=1064, va=0x00007F0000001400, mlen=1064)
    add("uboe-v4-urma-write-imm-last", p)
    p = base("native", 6, op=1)
    p.update(last=1, ackreq=1, plen=100)
    with_tah(p, 0x01, ta_order=1)
    p.update(imm=0x1122334455667788)
    add("native-v6-urma-send-imm", p)
    p = base("uboe", 6, op=1)
    p.update(last=1, ackreq=1, plen=0)
    with_tah(p, 0x06, ta_tv=1, tv=0x01020304, ta_order=3)
    add("uboe-v6-urma-read-token", p)
    for ta, name in ((0x07, "cas"), (0x0B, "fadd")):
        p = base("uboe", 4, op=1)
        p.update(last=1, ackreq=1, plen=16)
        with_tah(p, ta, ta_tv=1, tv=0x0BADCAFE, ta_order=3)
        add("uboe-v4-urma-%s" % name, p)
    p = base("uboe", 4, op=1)
    p.update(last=1, ackreq=1, plen=8)
    with_tah(p, 0x13)
    add("uboe-v4-urma-atomic-resp", p)

    # Payload sizes.
    sizes = (0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 63, 64, 65, 127, 128, 255, 256, 511,
             512, 1000, 1023, 1024, 1400, 1472, 1500)
    for i, n in enumerate(sizes):
        kind = ("uboe", "native")[i % 2]
        ipver = (4, 6)[(i // 2) % 2]
        p = with_tah(base(kind, ipver, op=1))
        p.update(plen=n, pseed=i * 17 % 256, psn=1000 + i)
        add("%s-v%d-payload%d" % (kind, ipver, n), p)

    # Field extremes.
    p = with_tah(base("uboe", 4, op=1, vlan=0))
    p.update(dscp=63, ecn=3, ttl=255, ipid=0xFFFF, sport=0xFFFF, pcp=7, dei=1, plen=9)
    add("uboe-vlan0-v4-max-ip-fields", p)
    p = with_tah(base("uboe", 6, op=1, vlan=4095))
    p.update(dscp=46, ecn=1, ttl=0, flow=0xFFFFF, sport=0, plen=9)
    add("uboe-vlan4095-v6-hlim0-flow-max", p)
    p = with_tah(base("uboe", 4, op=1))
    p.update(last=1, tpver=3, pad=3, nlp=0, stpn=0xFFFFFF, dtpn=0xFFFFFF, ackreq=1, err=1,
             psn=0xFFFFFF, rspst=7, rspinfo=31, tpmsn=0xFFFFFF, plen=3)
    add("uboe-v4-tph-all-ones", p)
    p = with_tah(base("uboe", 6, op=0), ta_rcid=0xFFFFF)
    p.update(tpver=3, pad=3, nlp=0, plen=3)
    add("uboe-v6-utph-ver-pad-ones", utph(p))
    for vl in (0, 7, 8, 15):
        for rt in range(4):
            p = with_tah(base("native", 4 if rt % 2 else 6, op=1))
            p.update(vl=vl, rt=rt, plen=4)
            add("native-vl%d-rt%d" % (vl, rt), p)
    for fecn in range(4):
        for loc in (0, 1):
            p = with_tah(base("native", 4, op=1))
            p.update(cci=ub.cci_fecn(fecn, loc), plen=4)
            add("native-v4-fecn%d-loc%d" % (fecn, loc), p)
    for cci, name in ((0x0000, "caqm"), (0x2ABC, "fecn_rtt"), (0xFFFF, "all-ones")):
        p = with_tah(base("native", 6, op=1))
        p.update(cci=cci, plen=4)
        add("native-v6-cci-%s" % name, p)
    for perm, pid in ((1, 1), (0, 0xFFFFFF), (1, 0x123456), (0, 2)):
        p = with_tah(base("native", 4, op=1))
        p.update(perm=perm, pid=pid, plen=4)
        add("native-v4-perm%d-pid%x" % (perm, pid), p)
    for et in (0x88B6, 0x9000):
        p = with_tah(base("native", 6, op=1))
        p.update(ethertype=et, plen=4)
        add("native-v6-ethertype%04x" % et, p)

    # Random frames: every field anywhere in its range.
    rng = random.Random(20240601)
    for i in range(60):
        kind = rng.choice(("uboe", "native"))
        ipver = rng.choice((4, 6))
        vlan = rng.randrange(4096) if kind == "uboe" and rng.random() < 0.5 else None
        case = rng.choice(TP_CASES)
        p = tp_case(base(kind, ipver, vlan=vlan), case)
        if ipver == 4:
            p["src"] = "%d.%d.%d.%d" % tuple(rng.randrange(256) for _ in range(4))
            p["dst"] = "%d.%d.%d.%d" % tuple(rng.randrange(256) for _ in range(4))
            p["ipid"] = rng.randrange(1 << 16)
        else:
            p["src"] = "fd%02x:%x::%x" % (rng.randrange(256), rng.randrange(1 << 16), rng.randrange(1 << 16))
            p["dst"] = "2001:db8:%x::%x:%x" % (rng.randrange(1 << 16), rng.randrange(1 << 16), rng.randrange(1 << 16))
            p["flow"] = rng.randrange(1 << 20)
        p.update(dscp=rng.randrange(64), ecn=rng.randrange(4), ttl=rng.randrange(256),
                 sport=rng.randrange(1 << 16), last=rng.randrange(2), tpver=rng.randrange(4),
                 pad=rng.randrange(4), stpn=rng.randrange(1 << 24), dtpn=rng.randrange(1 << 24),
                 ackreq=rng.randrange(2), err=rng.randrange(2), psn=rng.randrange(1 << 24),
                 tpmsn=rng.randrange(1 << 24), pseed=rng.randrange(256))
        if p["op"] != 2:  # keep TPACK/TPNAK as they are
            p.update(rspst=rng.randrange(8), rspinfo=rng.randrange(32))
        if p["op"] <= 1:
            p["plen"] = rng.randrange(1200)
        if p["op"] == 0:
            utph(p)
        if "vlan" in p:
            p.update(pcp=rng.randrange(8), dei=rng.randrange(2))
        if kind == "native":
            p.update(vl=rng.randrange(16), rt=rng.randrange(4), cci=rng.randrange(1 << 16),
                     perm=rng.randrange(2), pid=rng.randrange(1, 1 << 24),
                     ethertype=rng.choice((0x88B5, 0x88B5, 0x88B6)))
        if "cetph" in p:
            p.update(ce_ack=rng.randrange(1 << 32), ce_loc=rng.randrange(2), ce_i=rng.randrange(2),
                     ce_c=rng.randrange(256), ce_hint=rng.randrange(1 << 16))
        if "saetph" in p:
            code = rng.randrange(5)
            nbits = 64 << code
            bits = sorted(rng.sample(range(nbits), rng.randrange(1, 12)))
            p.update(saetph=code, sa_max=rng.randrange(1 << 24), sa_bits=",".join(map(str, bits)))
        if "cnpetph" in p:
            p.update(cnp_ecn=rng.randrange(4), cnp_loc=rng.randrange(2))
        if "tah" in p:
            ta = p["tah"] if p["tah"] == TAACK else rng.choice([t for t in TA_OPS if t != TAACK])
            with_tah(p, ta, ta_ee=rng.randrange(4), ta_tv=rng.randrange(2),
                     ta_poison=rng.randrange(2), ta_ud=rng.randrange(2),
                     ta_tassn=rng.randrange(1 << 16), ta_excl=rng.randrange(2),
                     ta_rctype=rng.randrange(4), ta_rcid=rng.randrange(1 << 20))
            if ta in ANSWERS:
                p.update(ta_rspst=rng.randrange(8), ta_rspinfo=rng.randrange(32))
            else:
                p.update(ta_notaack=rng.randrange(2), ta_order=rng.randrange(8),
                         ta_mt=rng.randrange(2), ta_fce=rng.randrange(2),
                         ta_retry=rng.randrange(2), ta_alloc=rng.randrange(2))
            if "maetah" in p:
                p.update(va=rng.randrange(1 << 64), token=rng.randrange(1 << 20),
                         mlen=rng.randrange(1 << 32))
            if "immetah" in p:
                p.update(imm=rng.randrange(1 << 64), imm_tv=rng.randrange(1 << 32),
                         imm_len=rng.randrange(1 << 32))
            if "tvetah" in p:
                p["tv"] = rng.randrange(1 << 32)
        add("random-%02d-%s-v%d-%s" % (i, kind + ("-vlan" if vlan is not None else ""), ipver, case), p)
    return out


def fmt(key, val):
    if key in ("ethertype", "cci", "va", "imm", "tv", "imm_tv"):
        return "%s=0x%x" % (key, val)
    return "%s=%s" % (key, val)


def line(name, p):
    fr, raw = frame(p)
    crc = zlib.crc32(ub._masked(raw[:-4])) & 0xFFFFFFFF
    assert raw[-4:] == crc.to_bytes(4, "little"), name
    unknown = set(p) - set(ORDER)
    assert not unknown, (name, unknown)
    kv = " ".join(fmt(k, p[k]) for k in ORDER if k in p)
    return "%s %s icrc=%08x hex=%s" % (name, kv, crc, fr.hex())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "vectors.txt")
    vecs = vectors()
    names = [n for n, _ in vecs]
    assert len(names) == len(set(names)), "duplicate vector names"
    text = ["# Golden UB/UBoE frames, generated by tests/golden/gen_vectors.py from",
            "# tests/scapy/ublayers.py. Do not edit: regenerate. Format:",
            "#   name key=value ... icrc=<zlib crc32 of masked IP..payload, hex> hex=<frame>"]
    text += [line(n, p) for n, p in vecs]
    data = "\n".join(text) + "\n"
    if out == "-":
        sys.stdout.write(data)
    else:
        with open(out, "w") as f:
            f.write(data)


if __name__ == "__main__":
    main()
