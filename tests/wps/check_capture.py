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
  * --ingress-port N: every packet's Ingress Port ID is N (the site's port);
  * --in-order PCAP: on each path, a flow's Group IDs never go back (serial
    arithmetic), and no TCP data segment to --tcp-port arrives after a later
    one of its stream unless the sender sent its first byte more than once
    (a retransmission, e.g. of what was too big for the paths before the
    sender's MSS came down), as PCAP (the site side's input, TCP to that
    port) shows: nothing overtook what the segmentation detour still held;
  * --csum N: the first N inner IPv4 TCP packets of each path have the IP and
    TCP checksums scapy computes (captured where the kernel has finished
    them: the path's device without checksum offload);
  * --group-sizes N,N,...: the closed groups of the (one) flow, in the order
    they opened, have exactly these many packets (a packet quantum, no group
    held open by the in-flight bound: the packet that reaches the quantum is
    E); any group after them is its newest, still open.

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
    ap.add_argument("--in-order", metavar="PCAP")
    ap.add_argument("--csum", type=int, default=0)
    ap.add_argument("--group-sizes")
    a = ap.parse_args()

    groups = collections.OrderedDict()   # (fid, gid) -> list of (path, S, E, label, time)
    inners = []
    flows_last = {}
    on_path = []    # (path, fid, gid, inner, next header), in capture order per path
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
            on_path.append((path, opt.flow_id, opt.group, raw[70:], ext[0]))
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
    if a.group_sizes:
        check_sizes(groups, [int(n) for n in a.group_sizes.split(",")])
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
    if a.in_order:
        check_order(on_path, a.tcp_port, sent_twice(a.in_order, a.tcp_port))
    if a.csum:
        check_csum(on_path, a.csum)
    print(f"ok: {total} packets, {len(groups)} groups, {len(paths_used)} paths")


def check_sizes(groups, want):
    """groups: (fid, gid) -> packets sorted by time, each (path, S, E, label, time)."""
    if len({fid for fid, _ in groups}) != 1:
        die(f"--group-sizes wants one flow, got Flow IDs {sorted({fid for fid, _ in groups})}")
    by_open = sorted(groups.values(), key=lambda pk: pk[0][4])
    got = [len(pk) for pk in by_open if pk[-1][2]]
    if got != want:
        die(f"closed groups of {', '.join(map(str, got))} packets, in the order they opened; "
            f"want {', '.join(map(str, want))}")


def serial_lt(x, y, bits):
    return x != y and (y - x) % (1 << bits) < (1 << (bits - 1))


def check_csum(on_path, n):
    done = collections.Counter()
    for path, _, _, inner, nh in on_path:
        if nh != 4 or inner[9] != 6 or done[path] >= n:
            continue
        done[path] += 1
        p = IP(inner)
        got = (p.chksum, p[TCP].chksum)
        del p.chksum
        del p[TCP].chksum
        q = IP(bytes(p))
        # 0 and 0xffff are the same one's complement zero (a receiver's sum comes out the same).
        if got[0] != q.chksum or (got[1] != q[TCP].chksum and {got[1], q[TCP].chksum} != {0, 0xffff}):
            die(f"path {path}: checksums {got[0]:#x}/{got[1]:#x}, want {q.chksum:#x}/{q[TCP].chksum:#x}")
    if not done:
        die("no inner TCP packet to check the checksums of")


def sent_twice(pcap, port):
    """(sport, seq) -> True when the sender's skbs (GSO ones whole) covered seq more than once."""
    spans = collections.defaultdict(list)
    for pkt in rdpcap(pcap):
        raw = bytes(pkt)
        if Ether(raw[:14]).type != 0x0800:
            continue
        ip = IP(raw[14:])
        if ip.proto != 6 or ip.frag or not ip.haslayer(TCP) or ip[TCP].dport != port:
            continue
        n = ip.len - ip.ihl * 4 - ip[TCP].dataofs * 4
        if n > 0:
            spans[ip[TCP].sport].append((ip[TCP].seq, n))

    def twice(sport, seq):
        return sum(1 for s, n in spans[sport] if (seq - s) % (1 << 32) < n) > 1
    return twice


def check_order(on_path, port, twice):
    last_gid = {}     # (path, fid) -> Group ID of its latest packet
    top = {}          # (path, sport) -> highest end of a data segment so far (serial)
    seen = collections.defaultdict(set)   # sport -> (seq, len) of every data segment on any path
    late = []
    idx = collections.Counter()
    for path, fid, gid, inner, nh in on_path:
        idx[path] += 1
        k = (path, fid)
        if k in last_gid and serial_lt(gid, last_gid[k], 16):
            die(f"path {path}: flow {fid}'s group {gid} after group {last_gid[k]}")
        last_gid[k] = gid
        if port is None or nh != 4 or inner[9] != 6:
            continue
        t = IP(inner)[TCP]
        n = len(t.payload)
        if t.dport != port or not n:
            continue
        end = (t.seq + n) % (1 << 32)
        tk = (path, t.sport)
        if tk in top and serial_lt(end, top[tk][0], 32) and (t.seq, n) not in seen[t.sport] and \
                not twice(t.sport, t.seq):
            late.append((path, t.sport, t.seq, n, gid, top[tk], idx[path]))
        if tk not in top or serial_lt(top[tk][0], end, 32):
            top[tk] = (end, gid, idx[path])
        seen[t.sport].add((t.seq, n))
    if late:
        die(f"{len(late)} TCP segments overtaken on their path (first: path {late[0][0]}, "
            f"{late[0][1]} -> {port}, seq {late[0][2]}, {late[0][3]} bytes)" +
            "".join(f"\n  path {x[0]} #{x[6]} seq {x[2]} len {x[3]} group {x[4]}: after end {x[5][0]} "
                    f"(group {x[5][1]}, #{x[5][2]})" for x in late[:12]))


if __name__ == "__main__":
    main()
