#!/usr/bin/python3
"""Decode with the scapy layers every UBoE frame that the transport core puts on
the simulated link (`tpsim --dump`) and check it against docs/WIRE.md §3-4 and the
transport's [chosen] rules (docs/TRANSPORT.md): ICRC, opcodes, extension
headers by opcode, NLP, TAH/MAETAH/IMMETAH/TVETAH placement (every memory
access carries its token value), segmentation by MTU, Last, and Write payloads
byte for byte from their MAETAH address; UTP as the notes' UTPH
(no TPN, no PSN, reserved bytes 0), one packet per message, the sender's jetty
in IniRCID.
Usage: check_tpsim.py PATH_TO_TPSIM. Exit 0 when all hold."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

import logging  # noqa: E402
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

import ublayers as ub  # noqa: E402

TPSIM = sys.argv[1]
failures = []
MASK = (1 << 24) - 1


def content(a):
    return (a * 131 + (a >> 9)) & 0xFF


def fail(case, i, what):
    if len(failures) < 30:
        failures.append("%s frame %d: %s" % (case, i, what))


def run(case, *args):
    p = subprocess.run([TPSIM, "--dump"] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        failures.append("%s: tpsim exited %d: %s" % (case, p.returncode, p.stderr.strip()))
        return
    lines = p.stdout.split("\n")
    hdr = lines[0].split()
    region, size, mtu = int(hdr[2], 16), int(hdr[4]), int(hdr[6])
    tpn = (int(hdr[8]), int(hdr[9]))
    seen = {}
    tpmsn0 = {}    # each side's first TPMSN
    for i, line in enumerate(lines[1:]):
        if not line:
            continue
        side, _, hexframe = line.split()
        side = int(side)
        frame = bytes.fromhex(hexframe)
        eth = Ether(frame)
        if eth.type != 0x0800:
            fail(case, i, "EtherType %#x" % eth.type)
            continue
        ipb = frame[14:]
        ip = IP(ipb)
        if ip.len != len(ipb) or ip.flags != "DF" or ip.tos & 3 != 2:
            fail(case, i, "IP len/DF/ECT: %d %s %d" % (ip.len, ip.flags, ip.tos & 3))
        udp = ip[UDP]
        if udp.dport != ub.UBOE_PORT or udp.chksum != 0:
            fail(case, i, "UDP %d/%#x" % (udp.dport, udp.chksum))
        if ub.icrc(ipb[:-4]) != ipb[-4:]:
            fail(case, i, "ICRC")
        rest = ipb[28:-4]
        tph = ub.tph_class(rest[0])(rest[:16])
        body = rest[16:]
        op = tph.opcode
        if op == 0:
            if tph.rsv != b"\x00" * 14 or not tph.last or tph.nlp != 0 or len(body) < 8:
                fail(case, i, "UTPH %s" % rest[:16].hex())
                continue
            tah = ub.UBTAH(body[:8])
            if tah.opcode != 0 or tah.ini_rcid != tpn[side]:
                fail(case, i, "UTP TAH %#x IniRCID %d" % (tah.opcode, tah.ini_rcid))
            payload = body[8:]
            if len(payload) != size:
                fail(case, i, "UTP message of %d bytes, not one packet of %d" % (len(payload), size))
            seen[0] = seen.get(0, 0) + 1
            continue
        if (tph.src_tpn, tph.dst_tpn) != (tpn[side], tpn[1 - side]):
            fail(case, i, "TPNs %d->%d" % (tph.src_tpn, tph.dst_tpn))
        off = 0
        if op in (2, 3, 5, 6):
            kind = "nak" if tph.rspst == 3 else "ack"
            if tph.rspst not in (0, 3) or (tph.rspst == 3 and op != 2):
                fail(case, i, "response RSPST %d with opcode %d" % (tph.rspst, op))
            if op in (3, 6):
                off += 8
            if op in (5, 6):
                kind = "sack"
                sa = ub.UBSAETPH(body[off:off + 4])
                bits = 64 << sa.size
                bitmap = body[off + 4:off + 4 + bits // 8]
                if sa.size > 4 or len(bitmap) != bits // 8:
                    fail(case, i, "SAETPH size %d" % sa.size)
                    continue
                if not bitmap[0] & 1:
                    fail(case, i, "SACK bit 0 (the cumulative PSN) clear")
                if (sa.max_rcv_psn - tph.psn) & MASK >= bits:
                    fail(case, i, "MaxRcvPSN beyond the bitmap")
                off += 4 + bits // 8
            if tph.nlp == 0:
                tah = ub.UBTAH(body[off:off + 8])
                if tah.opcode != 0x11 or len(body) < off + 8:
                    fail(case, i, "response with a TAH that is no TAACK")
                kind += "+taack"
                off += 8
            elif tph.nlp != 1:
                fail(case, i, "response NLP %d" % tph.nlp)
            if off != len(body):
                fail(case, i, "response with %d bytes of payload" % (len(body) - off))
            seen[kind] = seen.get(kind, 0) + 1
            continue
        if op not in (0, 1):
            fail(case, i, "TP opcode %d" % op)
            continue
        if tph.nlp != 0 or len(body) < 8:
            fail(case, i, "data without TAH")
            continue
        tah = ub.UBTAH(body[:8])
        off = 8
        mae = tve = imm = None
        if tah.opcode in ub.TA_MAETAH:
            mae = ub.UBMAETAH(body[off:off + 16])
            off += 16
        if tah.opcode in ub.TA_IMMETAH:
            imm = ub.UBIMMETAH(body[off:off + 16])
            off += 16
        if tah.tv_en and tah.opcode not in ub.TA_ANSWERS:
            tve = ub.UBTVETAH(body[off:off + 4])
            off += 4
        if (mae is not None) != (tve is not None):
            fail(case, i, "TA opcode %#x: MAETAH without TVETAH or the reverse" % tah.opcode)
        payload = body[off:]
        seen[tah.opcode] = seen.get(tah.opcode, 0) + 1
        if len(payload) > mtu:
            fail(case, i, "payload %d > MTU %d" % (len(payload), mtu))
        if tah.opcode in (1, 4) and not tph.last:
            fail(case, i, "the immediate (TA %#x) on a packet before Last" % tah.opcode)
        if tah.opcode == 1:    # Send with immediate: the message's index
            if imm.imm != tph.tpmsn - tpmsn0.setdefault(side, tph.tpmsn) or imm.msg_len:
                fail(case, i, "IMMETAH imm %d len %d of message %d" % (imm.imm, imm.msg_len,
                                                                      tph.tpmsn))
        if tah.opcode == 4:    # Write with immediate: the index, and the Write's length
            if imm.imm != (mae.va - region) // size or imm.msg_len != size:
                fail(case, i, "IMMETAH imm %d len %d at %#x" % (imm.imm, imm.msg_len, mae.va))
        if tah.opcode in (7, 0x0B):    # CAS/FADD: one aligned word, operands big-endian
            k = (mae.va - region) // size
            if mae.length != 8 or mae.va % 8 or (mae.va - region) % size or len(payload) != 16 \
                    or not tph.last:
                fail(case, i, "atomic at %#x length %d payload %d" % (mae.va, mae.length,
                                                                     len(payload)))
            elif payload != ub.atomic_operands(k + 1, 0):
                fail(case, i, "FADD %d operands %s" % (k, payload.hex()))
            continue
        if tah.opcode == 0x13:     # Atomic response: the original value, 0 here
            if payload != bytes(8) or not tph.last:
                fail(case, i, "Atomic response %s" % payload.hex())
            continue
        if tah.opcode in (1, 4):
            tah.opcode -= 1    # the rest as a Send or Write
        if tah.opcode == 3:    # Write: placed by its MAETAH
            base = region + ((mae.va - region) // size) * size
            if (mae.va - base) % mtu:
                fail(case, i, "Write packet not cut at an MTU boundary")
            if mae.length != size or mae.token_id == 0:
                fail(case, i, "MAETAH length %d token %d" % (mae.length, mae.token_id))
            if any(b != content(mae.va + k) for k, b in enumerate(payload)):
                fail(case, i, "Write payload differs from the source at %#x" % mae.va)
            if tph.last != (mae.va + len(payload) == base + size):
                fail(case, i, "Last %d at %#x+%d" % (tph.last, mae.va, len(payload)))
        elif tah.opcode == 6:  # Read request
            if payload or mae.length != size or not tph.last:
                fail(case, i, "Read request: %d bytes, length %d" % (len(payload), mae.length))
        elif tah.opcode in (0, 0x12):
            if not tph.last and len(payload) != mtu:
                fail(case, i, "a packet short of the MTU before Last")
        elif tah.opcode == 0x11:
            if payload or not tph.last:
                fail(case, i, "TAACK packet with payload or without Last")
        else:
            fail(case, i, "TA opcode %#x" % tah.opcode)
    return seen


def need(case, seen, keys):
    for k in keys:
        if not seen or not seen.get(k):
            failures.append("%s: no %r packet seen (%r)" % (case, k, seen))


s = run("send-sr-wrap", "--op", "send", "--loss", "0.05", "--ack-loss", "0.05", "--wrap",
        "--msgs", "40", "--seed", "3")
need("send-sr-wrap", s, [0, "ack", "sack", "ack+taack"])
s = run("write-gbn-fast-roi", "--mode", "rtp-gbn-fast", "--ta", "roi", "--op", "write",
        "--loss", "0.03", "--msgs", "30", "--size", "5000", "--mtu", "512", "--seed", "4")
need("write-gbn-fast-roi", s, [3, 0x11, "ack", "nak"])
s = run("read-sr", "--op", "read", "--loss", "0.03", "--msgs", "20", "--size", "4000",
        "--seed", "5")
need("read-sr", s, [6, 0x12, "ack"])
s = run("send-utp", "--mode", "utp", "--msgs", "10", "--size", "1000")
need("send-utp", s, [0])
s = run("send-imm-sr", "--op", "send-imm", "--loss", "0.03", "--msgs", "20", "--size", "2500",
        "--seed", "6")
need("send-imm-sr", s, [0, 1, "ack+taack"])
s = run("write-imm-gbn-roi", "--mode", "rtp-gbn", "--ta", "roi", "--op", "write-imm",
        "--loss", "0.03", "--msgs", "20", "--size", "1500", "--mtu", "512", "--seed", "7")
need("write-imm-gbn-roi", s, [3, 4, 0x11])
s = run("fadd-sr", "--op", "fadd", "--loss", "0.03", "--msgs", "30", "--size", "16",
        "--seed", "8")
need("fadd-sr", s, [0x0B, 0x13, "ack"])
p = subprocess.run([TPSIM, "--mode", "utp", "--size", "2500"], capture_output=True, text=True)
if p.returncode != 2 or len(p.stderr.strip().split("\n")) != 1:
    failures.append("utp --size 2500 (> --mtu 1024): exit %d, %r" % (p.returncode, p.stderr))

for f in failures:
    print(f)
sys.exit(1 if failures else 0)
