#!/usr/bin/python3
"""Check what a CTP run put on the links of an entity, from captures, with
scapy and the rules of docs/TRANSPORT.md ("Wire choices", CTP) rather than
the code under test:

  Eth(EtherType) | LPH (LBF in byte 3) | NTH | IPv4 | UDP(dport 4794) |
  CTPH (1 byte: opcode 0, NLP 0) | TAH | [MAETAH] | [TVETAH] | payload | ICRC

(a Write or Read request carries its MAETAH and, TAH TV_EN set, the region's
token value in a TVETAH: docs/WIRE.md §4.5)

Every UB frame on the links must be CTP (no RTPH, no transport acks), with a
good ICRC, but for the in-band setup's UTP hellos (UDP 4792, TAH Message) on
member 0; a frame on member k has LBF mod N == k; a request (Send/Write/
Read) names the client's channel in IniRCID, and its answer (TAACK/ReadResp)
the same. --lb packet: each channel's requests use every member; --lb flow:
each channel's requests and answers stay on one member. With --client-macs
and --server-macs (member k's MAC on each side, comma-separated), every frame
on member k goes from one side's member k to the other's, unicast: each
member resolved its own next hop.

usage: ctp_capture.py --client IP --server IP --size N --op send|write|read
                      --lb one|flow|packet [--ethertype HEX]
                      [--client-macs MAC,... --server-macs MAC,...] PCAP...
(PCAP k is member k's link.)
"""
import argparse
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))

from scapy.layers.l2 import Ether  # noqa: E402,F401 (registers the Ethernet link type)
from scapy.utils import rdpcap  # noqa: E402

CTP_PORT, UBOE_PORT = 4794, 4792
TA_SEND, TA_WRITE, TA_READ, TA_MESSAGE, TA_TAACK, TA_READ_RESP = 0x00, 0x03, 0x06, 0x10, 0x11, 0x12


def icrc_ok(ip):
    """docs/WIRE.md §2: CRC-32 over IP..payload with ToS, TTL, checksums as ones."""
    m = bytearray(ip[:-4])
    m[1] = 0xff                  # ToS
    m[8] = 0xff                  # TTL
    m[10:12] = b"\xff\xff"       # header checksum
    m[26:28] = b"\xff\xff"       # UDP checksum
    return struct.pack("<I", zlib.crc32(bytes(m)) & 0xffffffff) == ip[-4:]


def frames(path, et):
    for p in rdpcap(path):
        b = bytes(p)
        if len(b) >= 14 and struct.unpack("!H", b[12:14])[0] == et:
            yield b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--op", default="send")
    ap.add_argument("--lb", default="one")
    ap.add_argument("--ethertype", default="0x88b5")
    ap.add_argument("--client-macs")
    ap.add_argument("--server-macs")
    ap.add_argument("pcaps", nargs="+")
    a = ap.parse_args()
    et, n = int(a.ethertype, 16), len(a.pcaps)
    macs = None
    if a.client_macs and a.server_macs:
        macs = [[bytes.fromhex(m.replace(":", "")) for m in x.split(",")]
                for x in (a.client_macs, a.server_macs)]
        if len(macs[0]) != n or len(macs[1]) != n:
            print("error: --client-macs and --server-macs need one MAC per capture")
            return 2
    errors = []
    req_members, ans_members = {}, {}
    hellos = 0
    want_req = {"send": TA_SEND, "write": TA_WRITE, "read": TA_READ}[a.op]
    want_ans = TA_READ_RESP if a.op == "read" else TA_TAACK
    for k, path in enumerate(a.pcaps):
        nreq = nans = 0
        for f in frames(path, et):
            lbf = f[14 + 3]
            if f[15] & 0x0f != 3:
                errors.append(f"member {k}: LPH Config {f[15] & 0x0f}, not IPv4")
                continue
            ip = f[24:]
            ihl, tot = (ip[0] & 0x0f) * 4, struct.unpack("!H", ip[2:4])[0]
            ip = ip[:tot]
            src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
            if macs and src in (a.client, a.server):
                s = 0 if src == a.client else 1
                if f[0:6] != macs[1 - s][k] or f[6:12] != macs[s][k]:
                    errors.append(f"member {k}: {src} -> {dst} from {f[6:12].hex(':')} to "
                                  f"{f[0:6].hex(':')}, not member {k}'s "
                                  f"{macs[s][k].hex(':')} -> {macs[1 - s][k].hex(':')}")
            sport, dport, ulen = struct.unpack("!HHH", ip[ihl:ihl + 6])
            tp = ip[ihl + 8:-4]
            if dport == UBOE_PORT and k == 0 and len(tp) >= 17 and tp[0] & 0x7f == 0 \
                    and tp[16] == TA_MESSAGE and icrc_ok(ip):
                hellos += 1     # the in-band setup: UTP, TAH Message, on member 0
                continue
            if dport != CTP_PORT:
                errors.append(f"member {k}: UB frame to UDP {dport}, not CTP")
                continue
            if not icrc_ok(ip):
                errors.append(f"member {k}: bad ICRC")
            if lbf % n != k:
                errors.append(f"member {k}: LBF {lbf} belongs to member {lbf % n}")
            if tp[0] != 0x00:
                errors.append(f"member {k}: CTPH {tp[0]:#04x}, not opcode 0 / NLP 0")
                continue
            op = tp[1]
            rcid = ((tp[6] & 0x0f) << 16) | struct.unpack("!H", tp[7:9])[0]
            mem = op in (TA_WRITE, TA_READ)
            tv = bool(tp[2] & 0x08) and op not in (TA_TAACK, TA_READ_RESP)
            if mem != tv:
                errors.append(f"member {k}: TA opcode {op:#x} with TV_EN {int(tv)}")
            plen = len(tp) - 1 - 8 - (16 if mem else 0) - (4 if tv else 0)
            if src == a.client and dst == a.server:
                nreq += 1
                req_members.setdefault(rcid, set()).add(k)
                if op != want_req:
                    errors.append(f"member {k}: request TA opcode {op:#x}")
                elif plen != (0 if op == TA_READ else a.size):
                    errors.append(f"member {k}: request of {plen} bytes, not {a.size}")
            elif src == a.server and dst == a.client:
                nans += 1
                ans_members.setdefault(rcid, set()).add(k)
                if op != want_ans:
                    errors.append(f"member {k}: answer TA opcode {op:#x}")
                elif plen != (a.size if op == TA_READ_RESP else 0):
                    errors.append(f"member {k}: answer of {plen} bytes")
            else:
                errors.append(f"member {k}: {src} -> {dst}, not between the entities")
        print(f"member {k} ({path}): {nreq} requests, {nans} answers")
    for rcid in sorted(req_members):
        print(f"channel (IniRCID) {rcid}: requests on members {sorted(req_members[rcid])}, "
              f"answers on {sorted(ans_members.get(rcid, ()))}")
    print(f"setup hellos (UTP on member 0): {hellos}")
    if not hellos:
        errors.append("no setup hello captured")
    if not req_members:
        errors.append("no CTP request captured")
    for rcid, ms in req_members.items():
        if a.lb == "packet" and len(ms) != n:
            errors.append(f"--lb packet: channel {rcid}'s requests on members {sorted(ms)} only")
        if a.lb == "flow" and (len(ms) != 1 or len(ans_members.get(rcid, ms)) != 1):
            errors.append(f"--lb flow: channel {rcid} on members {sorted(ms)} / "
                          f"{sorted(ans_members.get(rcid, ()))}")
    for e in errors[:20]:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
