#!/usr/bin/python3
"""WPS egress e2e helper: builds WPS traffic with scapy (the ingress's encapsulation
per draft-wps-ipv6-option / docs/WIRE.md §6), sends it pre-shuffled over several domain
devices as paths of unequal delay would deliver it, captures what leaves the egress
on the site side, and checks it.

  send  --devs in-d0,in-d1,... --scenario NAME --expect FILE
  sniff --dev wdst0[,DEV...] --out FILE [--idle S] [--max S] [--ready FILE] [--after FILE]
  check --expect FILE --got FILE [--ordered] [--late-ok]
  shards < `ubctl wps egress stats --json`
  none --got FILE...                           (no frame carries a forged packet's tag)
  sink   --out FILE --ready FILE [--port P]     (site B: one TCP transfer, a UDP flow)
  source --dst ADDR [--port P] [--tcp-bytes N] [--tcp-rate BPS] [--udp-count N] [--udp-pps N]
  chain-check --before PCAP --after PCAP       (site A's gateway in, site B's host in)

sink/source/chain-check drive real traffic through the real ingress and the delay lines
(tests/lib/wps_egress.sh topo_wps_chain) and compare what entered the ingress with what
left the egress.

Inner packets of the scapy scenarios are UDP with a payload "wps <flow> <seq>" so that the check can tell
flows and order apart; the expectation file lists every inner packet (hex) that must
leave the egress exactly once, byte-identical, in the order the ingress sent it.
"""
import argparse
import hashlib
import json
import random
import select
import threading
import os
import socket
import struct
import sys
import time

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
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
S, E, R = 0x80, 0x40, 0x20
DELAYS = [0, 1, 5, 10]          # path delay, in units (ms in the headline setup)


def wps_opt(flags, flow, gid, egress=None, length=12, ingress=None):
    egress = int(W["WPS_EG_NODE"]) if egress is None else egress
    ingress = int(W["WPS_IN_NODE"]) if ingress is None else ingress
    data = struct.pack("!BBHHHHBB", flags, 0, flow, ingress, egress, gid, 1, 2)
    opt = bytes([0x81, length]) + data[:length] + b"\x00" * max(0, length - 12)
    body = opt
    pad = (8 - (2 + len(body)) % 8) % 8
    if pad == 1:
        body += b"\x00"
    elif pad > 1:
        body += bytes([1, pad - 2]) + b"\x00" * (pad - 2)
    return body


def inner(flow, seq, v6=False, dst=None, size=64, tos=0):
    payload = f"wps {flow} {seq} ".encode()
    payload += b"." * max(0, size - len(payload))
    if v6:
        return bytes(IPv6(src=W["WPS_SRC_IP6"], dst=dst or W["WPS_DST_IP6"], hlim=63, tc=tos) /
                     UDP(sport=20000 + flow, dport=9) / Raw(payload))
    # IP ID never 0: the kernel path (raw socket) would pick one (see docs/WPS.md, egress).
    return bytes(IP(src=W["WPS_SRC_IP4"], dst=dst or W["WPS_DST_IP4"], ttl=63, id=1 + seq % 0xfffe, tos=tos) /
                 UDP(sport=20000 + flow, dport=9) / Raw(payload))


def inner_wps(flow, seq):
    """An inner IPv6 packet that carries a WPS option itself (a Destination Options header)."""
    pkt = inner(flow, seq, v6=True)
    opts = wps_opt(S | E, flow, seq)
    hdr = bytes([17, (2 + len(opts)) // 8 - 1]) + opts
    plen = struct.pack("!H", len(pkt) - 40 + len(hdr))
    return pkt[:4] + plen + bytes([60]) + pkt[7:40] + hdr + pkt[40:]


def outer(path, pkt, flags, flow, gid, src=None, tc=0, **kw):
    nh = 4 if pkt[0] >> 4 == 4 else 41
    opts = wps_opt(flags, flow, gid, **kw)
    hdr = bytes([nh, (2 + len(opts)) // 8 - 1]) + opts
    return bytes(Ether(dst=f"02:00:00:00:2{path}:01", src=f"02:00:00:00:2{path}:02", type=0x86DD) /
                 IPv6(src=src or W["WPS_IN_IP6"], dst=W["WPS_EG_IP6"], nh=60, hlim=64, tc=tc) / Raw(hdr + pkt))


# Forged packets carry flows from FORGED up: their inner payload starts "wps 9".
FORGED = 900
NON_PEER = "fd00:20::99"        # a host on the domain side that is no peer of the egress


class Flow:
    """An ingress flow: groups of `glen` packets, consecutive Group IDs from `gid0`."""

    def __init__(self, flow, gid0=65500, glen=4, v6=False, r=1, dst=None, sizes=(64,)):
        self.flow, self.gid, self.glen, self.v6, self.r, self.dst = flow, gid0, glen, v6, r, dst
        self.sizes = sizes      # UDP payload lengths, in turn
        self.seq = 0

    def group(self):
        """[(flags, flow, gid, inner)] for the next group."""
        out = []
        for i in range(self.glen):
            flags = (S if i == 0 else 0) | (E if i == self.glen - 1 else 0) | (R if self.r else 0)
            size = self.sizes[self.seq % len(self.sizes)]
            out.append((flags, self.flow, self.gid, inner(self.flow, self.seq, self.v6, self.dst, size=size)))
            self.seq += 1
        self.gid = (self.gid + 1) & 0xffff
        return out


def spray(flows, groups, npaths, unit=6, lose=None, hold=None):
    """Groups round-robin over the paths (per flow); each path delays by DELAYS[k] units
    of `unit` packet times. Returns (arrival-ordered [(path, frame)], expected inners in
    send order). `lose`: (flow, group index) never sent; `hold`: sent after everything."""
    sched, expect, held = [], [], []
    t = 0
    for g in range(groups):
        for fl in flows:
            path = (g + fl.flow) % npaths
            for flags, flow, gid, pkt in fl.group():
                item = (t + DELAYS[path % len(DELAYS)] * unit, t, path, outer(path, pkt, flags, flow, gid))
                t += 1
                if lose and (flow, g) == lose:
                    continue
                expect.append(pkt)
                if hold and (flow, g) == hold:
                    held.append(item)
                else:
                    sched.append(item)
    sched.sort(key=lambda x: (x[0], x[1]))
    return [(p, fr) for _, _, p, fr in sched + held], expect


def scenario(name, npaths):
    """(frames to send in order, expected inner packets, flows whose order must hold)."""
    if name == "reorder":
        flows = [Flow(1), Flow(2, gid0=10), Flow(3, v6=True, gid0=40000)]
        return spray(flows, 60, npaths)
    if name == "lost_group":
        return spray([Flow(1)], 30, npaths, lose=(1, 5))
    if name == "held_group":        # one group stays behind everything (a stalled path)
        return spray([Flow(1)], 30, 1, hold=(1, 3))    # one path: only the held group is late
    if name == "paced":            # in send order: real delay lines reorder it
        return spray([Flow(1), Flow(2, v6=True, gid0=7)], 100, npaths, unit=0)
    if name == "shards":
        # Eight flows (four IPv4, four IPv6) reordered over the paths: with two reorder threads
        # the XDP program sends each flow to one of them (wps_eg_shard), both get some.
        return spray([Flow(20 + k, v6=k % 2 == 1, gid0=1000 * k) for k in range(8)], 20, npaths)
    if name == "jumbo":
        # Inner packets up to a 9000-byte path MTU less the 56 bytes of WPS (IPv4 8944 with a
        # UDP payload of 8916, IPv6 8944 with 8896), mixed with small and middle sizes: R = 1
        # sprayed over the paths (the reorder thread, multi-buffer AF_XDP), R = 0 on path 0
        # (decapsulated in XDP, redirected whole).
        r1, expect = spray([Flow(1, sizes=(8916, 64, 4000, 1400)), Flow(2, v6=True, gid0=9, sizes=(8896, 3000, 64))],
                           12, npaths)
        r0, expect0 = spray([Flow(3, r=0, sizes=(8916, 2000, 64)), Flow(4, r=0, v6=True, gid0=3, sizes=(8896, 100))],
                            6, 1)
        return r1 + r0, expect + expect0
    if name == "r0":
        return spray([Flow(5, r=0), Flow(6, r=0, v6=True)], 10, 1)
    if name == "unresolved":        # site host the egress has no neighbour entry for
        return spray([Flow(7, dst="10.30.0.3")], 10, npaths)
    if name.startswith("stall"):   # stall1, stall2, stall3: three sends around a stopped egress
        f1 = Flow(1, gid0=100)
        g0, g1, g2 = f1.group(), f1.group(), f1.group()

        def frames(path, grp):
            return [(path, outer(path, pkt, flags, flow, gid)) for flags, flow, gid, pkt in grp]
        fill, expect = [], [item[3] for item in g0 + g1 + g2]
        for path in range(npaths):      # more than a 64-frame batch on every path
            fl = Flow(11 + path, gid0=0)
            for _ in range(18):
                grp = fl.group()
                fill += frames(path, grp)
                expect += [item[3] for item in grp]
        # Group 1, the one group 2 waits for, last on path 3: behind that path's fill.
        parts = {"stall1": frames(0, g0), "stall2": frames(0, g2), "stall3": fill + frames(3, g1)}
        return parts[name], expect
    if name == "forged":
        # The peer's own traffic, R = 1 and R = 0, between forged packets: from a host that is
        # no peer (its own address, the right node IDs), from the peer's address with an
        # Ingress Node ID it may not use, and from the peer an inner IPv6 packet that carries
        # the WPS option itself; each R = 1 and R = 0. None may leave the egress.
        frames, expect = spray([Flow(1), Flow(2, r=0, v6=True, gid0=5)], 12, npaths)
        forged = []
        for i in range(20):
            for k, (src, ingress, r) in enumerate([(NON_PEER, None, R), (NON_PEER, None, 0),
                                                   (None, 7, R), (None, 7, 0), (None, None, R),
                                                   (None, None, 0)]):
                pkt = inner(FORGED + k, i) if k < 4 else inner_wps(FORGED + k, i)
                forged.append((i % npaths, outer(i % npaths, pkt, S | E | r, 1 + k, 100 + i,
                                                 src=src, ingress=ingress)))
        mixed = []
        for i, item in enumerate(frames):
            mixed.append(item)
            if i % 2 == 0:
                mixed += forged[:2]
                forged = forged[2:]
        return mixed + forged, expect
    if name == "ecn":
        # Inner packets as the ingress took them (ECN copied into the outer header), every other
        # one marked CE inside the domain: the ECN-capable ones (IPv4 ECT(0) R = 1, IPv6 ECT(1)
        # R = 0) must leave with CE, their checksum right; of the Not-ECT flow (IPv4 R = 1) the
        # CE-marked ones are dropped (RFC 6040), the others delivered unchanged. One path, so
        # that R = 0 keeps its order too.
        frames, expect = [], []
        for flow, v6, r, ecn in [(1, False, R, 2), (2, True, 0, 1), (3, False, R, 0)]:
            for g in range(8):
                for i in range(4):
                    seq = 4 * g + i
                    ce = seq % 2 == 1
                    flags = (S if i == 0 else 0) | (E if i == 3 else 0) | r
                    pkt = inner(flow, seq, v6=v6, tos=ecn)
                    frames.append((0, outer(0, pkt, flags, flow, 100 + g, tc=3 if ce else ecn)))
                    if ce and ecn:
                        expect.append(inner(flow, seq, v6=v6, tos=3))
                    elif not ce:
                        expect.append(pkt)
        return frames, expect
    if name == "adversarial":
        frames, expect = spray([Flow(1)], 40, npaths)
        eg = int(W["WPS_EG_NODE"])
        # Dropped by validation: another egress's packet, a bad option length.
        bad = [(0, outer(0, inner(50, 0), S | E | R, 50, 1, egress=eg + 1)),
               (0, outer(0, inner(51, 0), S | E | R, 51, 1, length=10))]
        # Forged Group IDs far ahead in flow 1's state (payload tag 901): forwarded, not buffered.
        forged = [(0, outer(0, inner(901, i), S | E | R, 1, (65500 + 20000 + i) & 0xffff)) for i in range(3)]
        expect += [inner(901, i) for i in range(3)]
        mixed = []
        for i, item in enumerate(frames):
            mixed.append(item)
            if i % 10 == 5 and bad:
                mixed.append(bad.pop(0))
            if i % 15 == 7 and forged:
                mixed.append(forged.pop(0))
        # A flood of new Flow IDs, one packet each: policed, still forwarded.
        flood = []
        for f in range(300):
            pkt = inner(1000 + f, 0)
            flood.append((f % npaths, outer(f % npaths, pkt, S | E | R, 1000 + f, 7)))
            expect.append(pkt)
        return mixed + bad + forged + flood, expect
    raise SystemExit(f"unknown scenario {name}")


def eg_shard(peer, node, flow, shards):
    """headers/wps_egress_maps.h wps_eg_shard(): the reorder thread of a flow."""
    m = 0xffffffff
    h = (((peer << 16 | node) * 0x9e3779b1) & m) ^ ((flow * 0x85ebca77) & m)
    h ^= h >> 15
    h = (h * 0xc2b2ae3d) & m
    h ^= h >> 13
    return (h * shards) >> 32 if shards > 1 else 0


def cmd_shards(a):
    """The egress's statistics (JSON on stdin): every flow on the shard wps_eg_shard names,
    once; every shard with flows; each shard's packets its flows' sum."""
    d = json.load(sys.stdin)["wps_egress"][0]
    n = d["io"]["threads"]
    seen, per = {}, [0] * n
    for f in d["flows"]:
        key = (f["peer"], f["ingress_node"], f["flow_id"])
        assert key not in seen, f"flow {key} on shards {seen[key]} and {f['shard']}"
        seen[key] = f["shard"]
        want = eg_shard(*key, n)
        assert f["shard"] == want, f"flow {key} on shard {f['shard']}, wps_eg_shard says {want}"
        per[f["shard"]] += f["packets"]
    shards = d["shards"]
    print(f"{len(seen)} flows over {n} threads: " + ", ".join(
        f"shard {s['shard']} (cpu {s['cpu']}): {s['flows']} flows {s['packets']} packets" for s in shards))
    assert len(shards) == n and all(s["flows"] for s in shards), "a shard without flows"
    assert [s["packets"] for s in shards] == per, f"shard packets {[s['packets'] for s in shards]} != {per}"


def cmd_send(a):
    devs = a.devs.split(",")
    frames, expect = scenario(a.scenario, len(devs))
    socks = []
    for d in devs:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((d, 0))
        socks.append(s)
    with open(a.expect, "w") as f:
        for pkt in expect:
            f.write(pkt.hex() + "\n")
    for i, (path, fr) in enumerate(frames):
        socks[path].send(fr)
        if a.pace and i % a.pace == a.pace - 1:
            time.sleep(0.001)
        if a.gap_us:
            time.sleep(a.gap_us / 1e6)
    print(f"sent {len(frames)} frames, {len(expect)} inner packets expected")


def cmd_sniff(a):
    socks = []
    for dev in a.dev.split(","):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)     # SO_RCVBUFFORCE: a released burst fits
        s.bind((dev, 0))
        s.setblocking(False)
        socks.append(s)
    if a.ready:
        open(a.ready, "w").close()
    start = last = time.time()
    got = []
    while time.time() - start < a.max:
        r, _, _ = select.select(socks, [], [], 0.2)
        if not r:
            # With --after, idleness counts only once the test says the last
            # sender is done: a scapy sender starting on a loaded machine can
            # take longer than any idle time, and the sniff must not end first.
            # --idle-empty: an empty capture also ends (a port nothing should leave).
            if (got or a.idle_empty) and time.time() - last > a.idle and \
                    (not a.after or os.path.exists(a.after)):
                break
            continue
        for s in r:
            try:
                fr, addr = s.recvfrom(65535)
            except BlockingIOError:
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            got.append(fr)
            last = time.time()
    with open(a.out, "w") as f:
        for fr in got:
            f.write(fr.hex() + "\n")


def cmd_none(a):
    """No frame of the captures carries a forged packet (inner payload "wps 9..."),
    encapsulated or not."""
    bad = 0
    for path in a.got:
        frames = [bytes.fromhex(x) for x in open(path).read().split()]
        hits = [fr for fr in frames if b"wps %d" % (FORGED // 100) in fr]
        print(f"{path}: {len(frames)} frames, {len(hits)} with a forged packet")
        for fr in hits[:3]:
            print("  " + fr.hex())
        bad += len(hits)
    return 1 if bad else 0


def payload_key(pkt):
    """(flow, seq) from our UDP payload, or None for other traffic."""
    try:
        p = IP(pkt) if pkt[0] >> 4 == 4 else IPv6(pkt)
        load = bytes(p[UDP].payload)
        if not load.startswith(b"wps "):
            return None
        _, fl, seq = load.split()[:3]
        return int(fl), int(seq)
    except Exception:
        return None


def cmd_check(a):
    expect = [bytes.fromhex(x) for x in open(a.expect).read().split()]
    frames = [bytes.fromhex(x) for x in open(a.got).read().split()]
    want = {}
    for pkt in expect:
        want[payload_key(pkt)] = pkt
    seen, errors, ooo = {}, [], 0
    last = {}
    for fr in frames:
        etype = struct.unpack("!H", fr[12:14])[0]
        if etype not in (0x0800, 0x86DD):
            continue
        pkt = fr[14:]
        if pkt[0] >> 4 == 4:
            pkt = pkt[:struct.unpack("!H", pkt[2:4])[0]]
        k = payload_key(pkt)
        if k is None:
            continue
        if k not in want:
            errors.append(f"unexpected packet flow {k[0]} seq {k[1]}")
            continue
        if k in seen:
            errors.append(f"flow {k[0]} seq {k[1]} delivered twice")
            continue
        seen[k] = True
        if pkt != want[k]:
            errors.append(f"flow {k[0]} seq {k[1]} differs from what entered the domain")
        if fr[0:6] != bytes.fromhex(W["WPS_DST_MAC"].replace(":", "")) or \
                fr[6:12] != bytes.fromhex(W["WPS_EG_SITE_MAC"].replace(":", "")):
            errors.append(f"flow {k[0]} seq {k[1]} has MACs {fr[0:6].hex()} {fr[6:12].hex()}")
        if k[0] in last and k[1] < last[k[0]]:
            ooo += 1
        last[k[0]] = max(last.get(k[0], -1), k[1])
    missing = [k for k in want if k not in seen]
    print(f"expected {len(want)} delivered {len(seen)} missing {len(missing)} out-of-order {ooo} "
          f"errors {len(errors)}")
    for e in errors[:10]:
        print("  " + e)
    for k in missing[:10]:
        print(f"  missing flow {k[0]} seq {k[1]}")
    bad = errors or missing or (a.ordered and ooo)
    return 1 if bad else 0


UDP_TAG = b"wps-udp "
SO_MAX_PACING_RATE = 47


def udp_payload(seq):
    """Sequence number first; sizes vary (64 to 1360 bytes) so that groups mix sizes."""
    size = 64 + (seq * 389) % 1297
    head = UDP_TAG + b"%08d " % seq
    return head + bytes((seq + i) & 0xff for i in range(size - len(head)))


def tcp_data(n):
    return random.Random(9).randbytes(n)


def cmd_source(a):
    data = tcp_data(a.tcp_bytes)
    print(f"tcp {len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()}")

    def udp():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t0 = time.monotonic()
        for seq in range(a.udp_count):
            s.sendto(udp_payload(seq), (a.dst, a.port))
            delay = t0 + (seq + 1) / a.udp_pps - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    th = threading.Thread(target=udp)
    th.start()
    t = socket.create_connection((a.dst, a.port), timeout=20)
    # Paced by the kernel (TCP's own pacing, no fq needed): a rate the loaded machine's
    # delay line and captures keep up with, so nothing is lost on the way.
    t.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, a.tcp_rate // 8)
    t.sendall(data)
    t.shutdown(socket.SHUT_WR)
    t.recv(1)          # the sink closes once it has read everything
    t.close()
    th.join()
    print(f"udp {a.udp_count} datagrams")


def cmd_sink(a):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)      # SO_RCVBUFFORCE
    u.bind(("0.0.0.0", a.port))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", a.port))
    ls.listen(1)
    open(a.ready, "w").close()
    h, nbytes, seqs, conn, done, last = hashlib.sha256(), 0, [], None, False, time.time()
    start = time.time()
    while time.time() - start < a.max and not (done and time.time() - last > a.idle):
        socks = [u]
        if conn is None:
            socks.append(ls)
        elif not done:
            socks.append(conn)
        r, _, _ = select.select(socks, [], [], 0.1)
        for s in r:
            if s is ls:
                conn, _ = ls.accept()
            elif s is u:
                d = u.recv(2048)
                last = time.time()
                if d.startswith(UDP_TAG):
                    seqs.append(int(d.split()[1]))
            else:
                d = conn.recv(1 << 16)
                if d:
                    h.update(d)
                    nbytes += len(d)
                else:
                    done = True
                    conn.close()
    with open(a.out, "w") as f:
        json.dump({"tcp_bytes": nbytes, "tcp_sha256": h.hexdigest(), "udp_seqs": seqs}, f)


def pcap_frames(path):
    """Ethernet frames of a pcap file (tcpdump -w, link type Ethernet)."""
    with open(path, "rb") as f:
        raw = f.read()
    magic = struct.unpack("<I", raw[:4])[0]
    e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    assert struct.unpack(e + "I", raw[20:24])[0] == 1, f"{path}: not Ethernet"
    off, out = 24, []
    while off + 16 <= len(raw):
        incl = struct.unpack(e + "I", raw[off + 8:off + 12])[0]
        out.append(raw[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def ipv4_flows(frames, src, dst):
    """{(proto, sport, dport): [IPv4 packet]} for src -> dst, in capture order."""
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    flows = {}
    for fr in frames:
        if fr[12:14] != b"\x08\x00":
            continue
        pkt = fr[14:14 + struct.unpack("!H", fr[16:18])[0]]
        if pkt[12:16] != s or pkt[16:20] != d:
            continue
        ihl = (pkt[0] & 0xf) * 4
        key = (pkt[9],) + struct.unpack("!HH", pkt[ihl:ihl + 4])
        flows.setdefault(key, []).append(pkt)
    return flows


def forwarded_once(pkt):
    """pkt as one IPv4 router hop (site A's gateway, which hands it to the ingress) leaves it:
    TTL - 1, header checksum recomputed. Nothing else may change on the way to site B."""
    ihl = (pkt[0] & 0xf) * 4
    h = bytearray(pkt[:ihl])
    h[8] -= 1
    h[10:12] = b"\0\0"
    c = sum(struct.unpack(f"!{ihl // 2}H", h))
    while c >> 16:
        c = (c & 0xffff) + (c >> 16)
    h[10:12] = struct.pack("!H", ~c & 0xffff)
    return bytes(h) + pkt[ihl:]


def tcp_reordered(pkts):
    """Data segments that start below the highest sequence number already seen."""
    top, n = None, 0
    for p in pkts:
        ihl = (p[0] & 0xf) * 4
        seq = struct.unpack("!I", p[ihl + 4:ihl + 8])[0]
        dlen = len(p) - ihl - (p[ihl + 12] >> 4) * 4
        if not dlen:
            continue
        if top is not None and (seq - top) & 0x80000000:
            n += 1
        elif top is None or not (seq + dlen - top) & 0x80000000:
            top = (seq + dlen) & 0xffffffff
    return n


def cmd_chain_check(a):
    before = ipv4_flows(pcap_frames(a.before), W["WPS_SRC_IP4"], W["WPS_DST_IP4"])
    after_frames = pcap_frames(a.after)
    after = ipv4_flows(after_frames, W["WPS_SRC_IP4"], W["WPS_DST_IP4"])
    macs = bytes.fromhex((W["WPS_DST_MAC"] + W["WPS_EG_SITE_MAC"]).replace(":", ""))
    errors = [f"a frame to site B with MACs {fr[:12].hex()}" for fr in after_frames
              if fr[12:14] == b"\x08\x00" and fr[:12] != macs][:3]
    for key in sorted(set(before) | set(after)):
        want = [forwarded_once(p) for p in before.get(key, [])]
        got = after.get(key, [])
        name = {6: "tcp", 17: "udp"}.get(key[0], str(key[0])) + f" {key[1]}->{key[2]}"
        extra = f", reordered data segments before {tcp_reordered(before[key])} after " \
            f"{tcp_reordered(got)}" if key[0] == 6 and key in before else ""
        print(f"{name}: {len(want)} packets into the ingress, {len(got)} out of the egress{extra}")
        if got == want:
            continue
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                errors.append(f"{name}: packet {i} differs or is out of place")
                break
        else:
            errors.append(f"{name}: {len(want)} in, {len(got)} out")
    if not before or not after:
        errors.append("no traffic captured")
    for e in errors:
        print("  " + e)
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("send")
    p.add_argument("--devs", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--expect", required=True)
    p.add_argument("--pace", type=int, default=0, help="sleep 1 ms every N frames")
    p.add_argument("--gap-us", type=int, default=0, help="sleep this long after every frame")
    p = sub.add_parser("sniff")
    p.add_argument("--dev", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--idle", type=float, default=1.5)
    p.add_argument("--max", type=float, default=15)
    p.add_argument("--ready")
    p.add_argument("--after", help="idleness ends the sniff only once this file exists")
    p.add_argument("--idle-empty", action="store_true", help="idleness ends an empty sniff too")
    p = sub.add_parser("none")
    p.add_argument("--got", nargs="+", required=True)
    p = sub.add_parser("check")
    p.add_argument("--expect", required=True)
    p.add_argument("--got", required=True)
    p.add_argument("--ordered", action="store_true")
    p = sub.add_parser("sink")
    p.add_argument("--out", required=True)
    p.add_argument("--ready", required=True)
    p.add_argument("--port", type=int, default=5001)
    p.add_argument("--idle", type=float, default=1.5, help="after the TCP transfer, UDP silent this long")
    p.add_argument("--max", type=float, default=30)
    p = sub.add_parser("source")
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, default=5001)
    p.add_argument("--tcp-bytes", type=int, default=1 << 20)
    p.add_argument("--tcp-rate", type=int, default=20_000_000, help="bit/s")
    p.add_argument("--udp-count", type=int, default=1000)
    p.add_argument("--udp-pps", type=int, default=1000)
    sub.add_parser("shards", help="statistics JSON on stdin: each flow on its wps_eg_shard")
    p = sub.add_parser("chain-check")
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    a = ap.parse_args()
    if a.cmd == "chain-check":
        sys.exit(cmd_chain_check(a))
    if a.cmd == "none":
        sys.exit(cmd_none(a))
    if a.cmd == "shards":
        cmd_shards(a)
        return
    if a.cmd == "sink":
        cmd_sink(a)
    elif a.cmd == "source":
        cmd_source(a)
    elif a.cmd == "send":
        cmd_send(a)
    elif a.cmd == "sniff":
        cmd_sniff(a)
    else:
        sys.exit(cmd_check(a))


if __name__ == "__main__":
    main()
