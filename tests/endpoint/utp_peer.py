#!/usr/bin/python3
"""A UTP peer written from the UTPH the notes give (UB 2.0 §6: 16 bytes, mostly
reserved, no PSN, no TPN) and docs/TRANSPORT.md ("UTP", the in-band hello,
ubperf's setup in band), not from the C code: it plays `ubperf server` for one
`ubperf client --mode utp` run over UBoE, with scapy (tests/scapy/ublayers.py)
building every frame it sends.

What it checks on every UB frame from the client: a good ICRC, IPv4 with DF,
UDP 4792, and a UTPH as the notes have it: byte 0 Last . TPOpcode 0, byte 1
TPVer 0 . Pad 0 . NLP 0, bytes 2-15 all 0. Hellos (TAH Message, "UBH2"): the
client's channel TPN and the DstTPN. Data: TAH Send, IniRCID = the sending
channel's TPN (its jetty, from its hello), one packet of --size bytes per
message (the content is ubperf's business). What it sends (hello answers and
the end-of-run DONE answer) has the reserved bytes set to --rsv (not 0: a
receiver must ignore them).

It answers the setup of each channel (status 0), counts the messages, answers
the DONE with its counts (failed when any check failed) and prints one line:

    utp_peer: data N bytes B hellos H channels C violations V

then each violation. Exit 0 when the run ended (DONE answered) with none.
The ubperf control message layout is read from headers/ubperf_wire.h.

usage: utp_peer.py --dev DEV --mac MAC --peer-mac MAC --ip ADDR [--rsv BYTE] [--timeout S]
"""
import argparse
import os
import re
import select
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "scapy"))

import logging  # noqa: E402
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

import ublayers as ub  # noqa: E402

ETH_P_IP, PACKET_OUTGOING = 0x0800, 4
TA_SEND, TA_MESSAGE = 0x00, 0x10
HELLO_MAGIC = b"UBH2"
UBPF_MAGIC = 0x55425046
CTL_SETUP, CTL_DONE = 1, 2


def wire_consts():
    """UBPF_* offsets from headers/ubperf_wire.h."""
    c = {}
    with open(os.path.join(ROOT, "headers", "ubperf_wire.h")) as f:
        for m in re.finditer(r"#define\s+(UBPF_\w+)\s+(\d+)", f.read()):
            c[m.group(1)] = int(m.group(2))
    return c


W = wire_consts()


def be32(b, off):
    return struct.unpack_from("!I", b, off)[0]


class Peer:
    def __init__(self, a):
        self.a = a
        self.violations = []
        self.data = self.bytes = self.hellos = 0
        self.chans = {}          # channel index -> the client's TPN
        self.tpns = set()
        self.t0 = None
        self.done_at = None
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.bind((a.dev, 0))
        # The kernel gets the datagrams too: a bound socket keeps it from
        # answering port unreachable.
        self.u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.u.bind((a.ip, ub.UBOE_PORT))

    def bad(self, what):
        if len(self.violations) < 20:
            self.violations.append(what)

    def send(self, dst_ip, sport, ta, payload):
        """A UTP packet to the client: UTPH (reserved bytes --rsv) | TAH | payload."""
        utph = ub.UBUTPH(last=1, opcode=0, nlp=0, rsv=bytes([self.a.rsv]) * 14)
        tah = ub.UBTAH(opcode=ta)
        ip = ub.uboe_ip(self.a.ip, dst_ip, utph, tah, payload, sport=sport, ecn=2)
        frame = Ether(dst=self.a.peer_mac, src=self.a.mac, type=ETH_P_IP) / Raw(ip)
        self.s.send(bytes(frame))

    def hello(self, dst_ip, sport, chan_tpn, our_tpn, mtu, mode, app):
        body = HELLO_MAGIC + struct.pack("!IIHBBI", our_tpn, 0, mtu, mode, 1, chan_tpn)
        self.send(dst_ip, sport, TA_MESSAGE, body + app)

    def ctl(self, kind, run, index, length, fields):
        m = bytearray(length)
        struct.pack_into("!IIII", m, 0, UBPF_MAGIC, kind, run, index)
        for off, v in fields:
            struct.pack_into("!I", m, off, v)
        return bytes(m)

    def frame(self, f):
        if len(f) < 14 + 20 + 8 + 16 + 4 or struct.unpack_from("!H", f, 12)[0] != ETH_P_IP:
            return
        ip = f[14:]
        if ip[0] != 0x45 or ip[9] != 17 or struct.unpack_from("!H", ip, 22)[0] != ub.UBOE_PORT:
            return
        ip = ip[:struct.unpack_from("!H", ip, 2)[0]]
        src_ip = socket.inet_ntoa(ip[12:16])
        sport = struct.unpack_from("!H", ip, 20)[0]
        if ub.icrc(ip[:-4]) != ip[-4:]:
            return self.bad("bad ICRC from %s" % src_ip)
        if not struct.unpack_from("!H", ip, 6)[0] & 0x4000:
            self.bad("no DF")
        tp = ip[28:-4]
        if tp[0] & 0x7F != 0:
            return self.bad("TP opcode %d: not UTP" % (tp[0] & 0x7F))
        if tp[0] != 0x80 or tp[1] != 0x00 or any(tp[2:16]):
            self.bad("UTPH not the notes' (Last 1, opcode 0, NLP 0, bytes 2-15 zero): %s"
                     % tp[:16].hex())
        if len(tp) < 24:
            return self.bad("UTP packet without TAH")
        ta, tassn = tp[16], struct.unpack_from("!H", tp, 18)[0]
        rcid = (tp[21] & 0x0F) << 16 | struct.unpack_from("!H", tp, 22)[0]
        pl = tp[24:]
        if ta == TA_MESSAGE and pl[:4] == HELLO_MAGIC:
            return self.on_hello(src_ip, sport, pl)
        if ta != TA_SEND:
            return self.bad("UTP data with TA opcode %#x" % ta)
        if rcid not in self.tpns:
            self.bad("UTP data with IniRCID %d: no channel's jetty (%s)" % (rcid, sorted(self.tpns)))
        if len(pl) != self.size:
            self.bad("UTP message of %d bytes in one packet, not %d" % (len(pl), self.size))
        self.data += 1
        self.bytes += len(pl)
        if self.t0 is None:
            self.t0 = time.monotonic()
        self.t1 = time.monotonic()
        del tassn

    def on_hello(self, src_ip, sport, pl):
        self.hellos += 1
        tpn, psn, mtu, mode, flags, dst = struct.unpack_from("!IIHBBI", pl, 4)
        app = pl[20:]
        if flags & 1 or len(app) < W["UBPF_OFF_BODY"] or be32(app, 0) != UBPF_MAGIC:
            return self.bad("a hello that is no ubperf request")
        kind, run, index = be32(app, 4), be32(app, 8), be32(app, 12)
        del psn
        if kind == CTL_SETUP:
            if dst != 0:
                self.bad("first hello with DstTPN %d" % dst)
            if len(app) != W["UBPF_RUN_LEN"]:
                return self.bad("setup of %d bytes" % len(app))
            self.size = be32(app, W["UBPF_RUN_SIZE"])
            if be32(app, W["UBPF_RUN_MODE"]) != mode:
                self.bad("hello mode %d, run mode %d" % (mode, be32(app, W["UBPF_RUN_MODE"])))
            self.chans[index] = tpn
            self.tpns.add(tpn)
            ans = self.ctl(CTL_SETUP, run, index, W["UBPF_ANS_LEN"], [(W["UBPF_ANS_STATUS"], 0)])
            self.hello(src_ip, sport, tpn, 100 + index, mtu, mode, ans)
        elif kind == CTL_DONE:
            ns = int(((self.t1 if self.t0 else 0) - (self.t0 or 0)) * 1e9)
            fields = [(W["UBPF_DONE_FAILED"], 1 if self.violations else 0)]
            for name, v in (("MESSAGES", self.data), ("BYTES", self.bytes), ("DURATION", ns),
                            ("VERIFIED", self.bytes)):
                off = W.get("UBPF_DONE_" + name)
                if off is not None:
                    fields += [(off, v >> 32), (off + 4, v & 0xFFFFFFFF)]
            done = self.ctl(CTL_DONE, run, 0, W["UBPF_DONE_LEN"], fields)
            self.hello(src_ip, sport, tpn, 100, mtu, mode, done)
            if self.done_at is None:
                self.done_at = time.monotonic()

    def run(self):
        end = time.monotonic() + self.a.timeout
        while time.monotonic() < end:
            # Answer the DONE's repeats a while, as ubperf's server does.
            if self.done_at is not None and time.monotonic() > self.done_at + 0.6:
                break
            r, _, _ = select.select([self.s, self.u], [], [], 0.1)
            if self.u in r:
                self.u.recv(65536)
            if self.s in r:
                f, addr = self.s.recvfrom(65536)
                if addr[2] != PACKET_OUTGOING:
                    self.frame(f)
        if self.done_at is None:
            self.bad("no DONE within %.0f s" % self.a.timeout)
        print("utp_peer: data %d bytes %d hellos %d channels %d violations %d"
              % (self.data, self.bytes, self.hellos, len(self.chans), len(self.violations)),
              flush=True)
        for v in self.violations:
            print("utp_peer: " + v)
        return 1 if self.violations else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", required=True)
    ap.add_argument("--mac", required=True)
    ap.add_argument("--peer-mac", required=True)
    ap.add_argument("--ip", required=True)
    ap.add_argument("--rsv", type=lambda x: int(x, 0), default=0)
    ap.add_argument("--timeout", type=float, default=15)
    a = ap.parse_args()
    p = Peer(a)
    p.size = 0
    print("utp_peer: listening", flush=True)
    return p.run()


if __name__ == "__main__":
    sys.exit(main())
