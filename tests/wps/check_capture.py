#!/usr/bin/python3
"""Checks what the WPS ingress put on the wire, from tcpdump captures of the
member paths, with scapy and docs/WIRE.md §6 (not the code under test):

  * every packet: outer IPv6 from the ingress to the egress address, one
    options header holding only the WPS option (type 0x81, length 12),
    the node IDs, reserved bits 0;
  * every group (Flow ID, Group ID) on exactly one path, one flow label;
    S on its first packet only, E on its last only, each exactly once (a
    flow's newest group may still be open when the capture ends);
  * groups spread over every path (--min-paths);
  * --sent PCAP: the decapsulated inner packets other than TCP are
    byte-identical to what was sent (as the router forwarded it: TTL / hop
    limit one less), none missing, none extra;
  * --tcp-port P: each decapsulated TCP stream to port P has no hole;
  * --ingress-port N: every packet's Ingress Port ID is N (the site's port).

Prints a summary line; exits 1 on the first violation.
"""
import argparse
import collections
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/tests/scapy")
from ublayers import WPSOption  # noqa: E402


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def inner_as_forwarded(raw):
    """What a router makes of a sent packet: TTL / hop limit - 1 (checksum redone by scapy)."""
    if raw[0] >> 4 == 4:
        p = IP(raw)
        p.ttl -= 1
        del p.chksum
        return bytes(p)
    p = IPv6(raw)
    p.hlim -= 1
    return bytes(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pcaps", nargs="+")
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--node", type=int, required=True)
    ap.add_argument("--egress-node", type=int, required=True)
    ap.add_argument("--min-paths", type=int, default=1)
    ap.add_argument("--sent")
    ap.add_argument("--tcp-port", type=int)
    ap.add_argument("--ingress-port", type=int)
    a = ap.parse_args()

    groups = collections.OrderedDict()   # (fid, gid) -> list of (path, flags, label, time)
    inners = []
    flows_last = {}
    total = 0
    for path, fn in enumerate(a.pcaps):
        for pkt in rdpcap(fn):
            raw = bytes(pkt)
            if Ether(raw[:14]).type != 0x86DD or len(raw) < 70:
                continue
            ip6 = IPv6(raw[14:54])
            if ip6.nh not in (0, 60):
                continue
            ext = raw[54:70]
            if ext[2] != 0x81:
                continue
            total += 1
            if ip6.src != a.src or ip6.dst != a.dst:
                die(f"outer {ip6.src} -> {ip6.dst}, want {a.src} -> {a.dst}")
            if ext[1] != 1 or ext[3] != 12 or ext[0] not in (4, 41):
                die(f"options header {ext.hex()}: want HdrExtLen 1, OptDataLen 12, next 4/41")
            opt = WPSOption(ext[2:16])
            if opt.ingress_node != a.node or opt.egress_node != a.egress_node:
                die(f"node IDs {opt.ingress_node}->{opt.egress_node}")
            if opt.rsvd or opt.rsvd2:
                die("reserved bits set")
            if a.ingress_port is not None and opt.ingress_port != a.ingress_port:
                die(f"Ingress Port ID {opt.ingress_port}, want {a.ingress_port} (the port it came in on)")
            if ip6.plen != len(raw) - 54:
                die(f"payload length {ip6.plen} for {len(raw) - 54} bytes")
            key = (opt.flow_id, opt.group)
            groups.setdefault(key, []).append((path, opt.s, opt.e, ip6.fl, float(pkt.time)))
            flows_last[opt.flow_id] = key
            inners.append((raw[70:], ext[0]))
    if not total:
        die("no WPS packet captured")
    # The newest group of each flow, by the time of its first packet, may be open.
    newest = {}
    for key, pk in groups.items():
        t0 = min(p[4] for p in pk)
        if key[0] not in newest or t0 > newest[key[0]][1]:
            newest[key[0]] = (key, t0)
    paths_used = set()
    for key, pk in groups.items():
        paths = {p[0] for p in pk}
        if len(paths) != 1:
            die(f"group {key} on paths {sorted(paths)}")
        if len({p[3] for p in pk}) != 1:
            die(f"group {key} has flow labels {sorted({p[3] for p in pk})}")
        paths_used |= paths
        pk.sort(key=lambda p: p[4])
        s = [i for i, p in enumerate(pk) if p[1]]
        e = [i for i, p in enumerate(pk) if p[2]]
        if s != [0]:
            die(f"group {key}: S on packets {s} of {len(pk)}, want [0]")
        is_newest = newest[key[0]][0] == key
        if e != [len(pk) - 1] and not (is_newest and not e):
            die(f"group {key}: E on packets {e} of {len(pk)}, want [{len(pk) - 1}]")
    if len(paths_used) < a.min_paths:
        die(f"groups on {len(paths_used)} paths, want >= {a.min_paths}")

    def is_tcp(raw):
        return (raw[0] >> 4 == 4 and raw[9] == 6) or (raw[0] >> 4 == 6 and raw[6] == 6)

    if a.sent:
        sent = collections.Counter()
        for pkt in rdpcap(a.sent):
            raw = bytes(pkt)[14:]
            if raw and raw[0] >> 4 in (4, 6) and not is_tcp(raw):
                sent[inner_as_forwarded(raw)] += 1
        got = collections.Counter(i for i, _ in inners if not is_tcp(i))
        if not sent:
            die("no packet in the sender capture")
        if got != sent:
            missing, extra = sent - got, got - sent
            die(f"inner packets differ: {sum(missing.values())} sent not seen, "
                f"{sum(extra.values())} seen not sent" +
                (f"; e.g. sent {next(iter(missing)).hex()[:120]}" if missing else "") +
                (f"; e.g. seen {next(iter(extra)).hex()[:120]}" if extra else ""))
    if a.tcp_port:
        streams = collections.defaultdict(list)
        for i, nh in inners:
            if nh == 4 and i[9] == 6:
                t = IP(i)[TCP]
                if t.dport == a.tcp_port and len(t.payload):
                    streams[t.sport].append((t.seq, len(t.payload)))
        if not streams:
            die("no TCP data segment")
        for sport, raw_segs in streams.items():
            # Sequence numbers wrap at 2^32 (a stream may start just below it):
            # offsets from the first segment seen, in serial arithmetic.
            base = raw_segs[0][0]
            segs = []
            for seq, n in raw_segs:
                off = (seq - base) % (1 << 32)
                off -= (1 << 32) if off >= (1 << 31) else 0
                segs.append((off, off + n))
            segs.sort()
            end, holes = segs[0][0], 0
            for s, e in segs:
                if s > end:
                    holes += 1
                end = max(end, e)
            if holes:
                die(f"TCP stream {sport} -> {a.tcp_port} has {holes} holes")
    print(f"ok: {total} packets, {len(groups)} groups, {len(paths_used)} paths")


if __name__ == "__main__":
    main()
