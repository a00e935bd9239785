#!/usr/bin/python3
"""Golden fixtures for the WPS ingress and boundary TC programs, made with scapy
from draft-wps-ipv6-option and docs/WIRE.md §6, never from the C code.

Each case: the ingress configuration (ubctl attach options, paths, rules), one
or more input frames in order, and for each the expected TC verdict and output
frame; then the counters that must move (all others must not).
Run: /usr/bin/python3 tests/bpf/gen_wps_fixtures.py > tests/bpf/fixtures/wps.txt

The test knobs: --gid0 G sets the first Group ID (the program otherwise picks
it at random) and makes the round-robin start at path 0; `ctx now=NS` sets the
program's clock for that packet. Flow IDs are handed out from 1 upward on a
fresh program.
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scapy"))
sys.path.insert(0, HERE)

from scapy.layers.inet import IP, UDP, TCP, ICMP, IPOption_RR, IPOption_Router_Alert  # noqa: E402
from scapy.utils import checksum  # noqa: E402
from scapy.layers.inet6 import (IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop,  # noqa: E402
                                IPv6ExtHdrFragment, IPv6ExtHdrRouting, ICMPv6PacketTooBig,
                                PadN)
from scapy.layers.l2 import ARP, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from ublayers import WPSOption  # noqa: E402
import wps_fixtures_gso  # noqa: E402

NODE, EGRESS_NODE = 1, 2
SRC6, DST6 = "fd00:a::1", "fd00:b::1"
SITE_MAC, DEV_MAC = "02:00:00:0a:00:02", "02:00:00:0a:00:01"
PATHS = [(101, "02:00:00:0b:00:01", "02:00:00:0c:00:01"),
         (102, "02:00:00:0b:00:02", "02:00:00:0c:00:02"),
         (103, "02:00:00:0b:00:03", "02:00:00:0c:00:03"),
         (104, "02:00:00:0b:00:04", "02:00:00:0c:00:04")]
BASE_OPTS = f"--node-id {NODE} --egress-node-id {EGRESS_NODE} --src {SRC6} --egress-addr {DST6}"
OVERHEAD = 56


def flow_label(fid, gid):
    """The chosen derivation (headers/wps_ingress.h): constant per (Flow ID, Group ID), never 0."""
    h = (((fid << 16) | gid) * 0x9E3779B1) & 0xFFFFFFFF
    h = (h ^ (h >> 15)) & 0xFFFFF
    return h or 1


def inner4(dst="10.20.0.2", src="10.10.0.2", sport=4000, dport=5000, payload=b"x" * 32, proto="udp", tos=0,
           **kw):
    l4 = UDP(sport=sport, dport=dport) if proto == "udp" else TCP(sport=sport, dport=dport, flags="A")
    return IP(src=src, dst=dst, tos=tos, id=7, **kw) / l4 / Raw(payload)


def inner6(dst="fd20::2", src="fd10::2", sport=4000, dport=5000, payload=b"y" * 32, ext=None, tc=0):
    ip = IPv6(src=src, dst=dst, tc=tc, hlim=64)
    if ext is not None:
        ip = ip / ext
    return ip / UDP(sport=sport, dport=dport) / Raw(payload)


def frame(inner):
    eth = Ether(src=DEV_MAC, dst=SITE_MAC, type=0x0800 if inner.version == 4 else 0x86DD)
    return bytes(eth / inner)


def encap(inner, fid, gid, s, e, path=0, r=1, hbh=False, hlim=64, paths=PATHS, port=0):
    """What the ingress must send: outer IPv6 + options header with only the WPS option + inner, unchanged."""
    ib = bytes(inner)
    nh_inner = 4 if inner.version == 4 else 41
    tclass = ib[1] if inner.version == 4 else ((ib[0] & 0x0F) << 4) | (ib[1] >> 4)
    opt = WPSOption(s=s, e=e, r=r, flow_id=fid, ingress_node=NODE, egress_node=EGRESS_NODE, group=gid,
                    ingress_port=port, egress_port=0)
    ext = bytes([nh_inner, 1]) + bytes(opt)
    assert len(ext) == 16
    outer = IPv6(src=SRC6, dst=DST6, nh=0 if hbh else 60, hlim=hlim, tc=tclass, fl=flow_label(fid, gid))
    _, smac, dmac = paths[path]
    return bytes(Ether(src=smac, dst=dmac, type=0x86DD) / outer / Raw(ext + ib))


cases = []


class Case:
    def __init__(self, name, prog="ingress", opts="", paths=1, rules=("--dst 10.20.0.0/24 --quantum 4",),
                 weights=None, mtu=1500, comment=""):
        self.name, self.prog, self.comment = name, prog, comment
        self.opts = (BASE_OPTS + " " + opts).strip() if prog in ("ingress", "seg") else ""
        self.paths = []
        if prog in ("ingress", "seg"):
            for i in range(paths):
                ifx, smac, dmac = PATHS[i]
                w = weights[i] if weights else 1
                self.paths.append(f"{ifx} {smac} {dmac} {mtu} {w}")
        self.rules = list(rules) if prog in ("ingress", "seg") else []
        self.ports = []
        self.steps = []
        self.counters = {}
        cases.append(self)

    def pkt(self, inp, verdict, out=None, now=None, gso_segs=None, gso_size=None, down=None, iif=None, cb0=None,
            cb0_out=None, cb1=None, clones=None, pmtu=None, weights=None, cb2=None, seg=False):
        """down: the path slots an operator has set down (a mask) from this packet on;
        weights: the paths' weights (by slot) from this packet on, as path set --weight sets them;
        iif: the device the packet came in on (ifindex); cb0, cb1: skb->cb[0], [1] as the program
        finds them; cb0_out: cb[0] as it must leave it; clones: the frames it must send at once."""
        # What goes on is left to the next program on the hook (TC_ACT_UNSPEC), except
        # by the detour's program, whose TC_ACT_OK does not leave it.
        if verdict == "TC_ACT_OK" and self.prog != "seg":
            verdict = "TC_ACT_UNSPEC"
        self.steps.append((bytes(inp), verdict, None if out is None else bytes(out), now, gso_segs, gso_size,
                           down, iif, cb0, cb0_out, cb1, clones, pmtu, weights, cb2, seg))
        return self

    def count(self, **kw):
        for k, v in kw.items():
            self.counters[k] = self.counters.get(k, 0) + v
        return self


def sprayed(c, n=None):
    n = len(c.steps) if n is None else n
    return c.count(rx=n, tx_sprayed=n)


# ---- option fields, S/E for each quantum kind --------------------------------
G0 = 1000

c = Case("v4_udp_first_packet", opts=f"--gid0 {G0}", comment="first packet: S, R, Flow ID 1, Group ID gid0")
p = inner4()
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0))
sprayed(c).count(flows_new=1, groups_opened=1)

c = Case("all_option_fields", opts="--gid0 0x1234 --ingress-port 7 --egress-port 9 --hop-limit 17",
         rules=("--dst 10.20.0.0/24 --quantum 1",))
p = inner4(tos=0xb9)
ext_opt = WPSOption(s=1, e=1, r=1, flow_id=1, ingress_node=NODE, egress_node=EGRESS_NODE, group=0x1234,
                    ingress_port=7, egress_port=9)
out = Ether(src=PATHS[0][1], dst=PATHS[0][2]) / IPv6(src=SRC6, dst=DST6, nh=60, hlim=17, tc=0xb9,
                                                     fl=flow_label(1, 0x1234)) / Raw(bytes([4, 1]) + bytes(ext_opt) + bytes(p))
c.pkt(frame(p), "TC_ACT_REDIRECT", out)
sprayed(c).count(flows_new=1, groups_opened=1)

c = Case("packet_quantum_s_e_and_rr_paths", opts=f"--gid0 {G0}", paths=2,
         rules=("--dst 10.20.0.0/24 --quantum 2",),
         comment="quantum 2 packets: S,E,S,E,S; groups alternate paths; label constant per group")
for i in range(5):
    p = inner4(payload=bytes([i]) * 40)
    g = i // 2
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + g, int(i % 2 == 0), int(i % 2 == 1), path=g % 2))
sprayed(c).count(flows_new=1, groups_opened=3)

c = Case("group_id_wraps", opts="--gid0 65534", rules=("--dst 10.20.0.0/24 --quantum 1",),
         comment="quantum 1: every packet S+E; Group ID 65534, 65535, 0, 1")
for i, g in enumerate((65534, 65535, 0, 1)):
    p = inner4(payload=bytes([i]) * 20)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, 1, 1))
sprayed(c).count(flows_new=1, groups_opened=4)

c = Case("byte_quantum", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 250b",),
         comment="250 bytes: the packet reaching or passing the bound is the group's last")
sizes = [100, 100, 100, 100, 300, 40]
flags = [(1, 0), (0, 0), (0, 1), (1, 0), (0, 1), (1, 0)]
gids = [G0, G0, G0, G0 + 1, G0 + 1, G0 + 2]
for i, (sz, (s, e), g) in enumerate(zip(sizes, flags, gids)):
    p = inner4(payload=bytes([i]) * (sz - 28))
    assert len(p) == sz
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, s, e))
sprayed(c).count(flows_new=1, groups_opened=3)

c = Case("time_quantum", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 500us",),
         comment="500 us from the group's first packet; the first packet at or past it carries E")
times = [1_000_000, 1_200_000, 1_499_999, 1_500_000, 1_600_000, 2_100_000, 2_100_001]
flags = [(1, 0), (0, 0), (0, 0), (0, 1), (1, 0), (0, 1), (1, 0)]
gids = [G0, G0, G0, G0, G0 + 1, G0 + 1, G0 + 2]
for i, (t, (s, e), g) in enumerate(zip(times, flags, gids)):
    p = inner4(payload=bytes([i]) * 10)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, s, e), now=t)
sprayed(c).count(flows_new=1, groups_opened=3)

c = Case("inner_ipv6", opts=f"--gid0 {G0}", rules=("--dst fd20::/64 --quantum 2",))
for i in range(3):
    p = inner6(payload=bytes([i]) * 30, tc=0x2e)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + i // 2, int(i % 2 == 0), int(i % 2 == 1)))
sprayed(c).count(flows_new=1, groups_opened=2)

c = Case("ecn_copied_to_the_outer_header", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 8",
                                                                      "--dst fd20::/64 --quantum 8"),
         comment="RFC 6040 encapsulation, normal mode: the outer ECN field (and DSCP) is the inner's, for "
                 "Not-ECT, ECT(1), ECT(0), CE, IPv4 and IPv6 (the egress decapsulates by RFC 6040)")
for i, ecn in enumerate((0, 1, 2, 3)):
    p = inner4(tos=0x28 | ecn, payload=bytes([i]) * 8)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, int(i == 0), 0))
for i, ecn in enumerate((0, 1, 2, 3)):
    p = inner6(tc=0x28 | ecn, payload=bytes([i]) * 8)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 2, G0, int(i == 0), 0))
sprayed(c).count(flows_new=2, groups_opened=2)

c = Case("hbh_carriage", opts=f"--gid0 {G0} --hbh", rules=("--dst 10.20.0.0/24 --quantum 4",))
p = inner4()
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0, hbh=True))
sprayed(c).count(flows_new=1, groups_opened=1)

c = Case("no_reorder_clears_r", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 4 --no-reorder",))
p = inner4()
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0, r=0))
sprayed(c).count(flows_new=1, groups_opened=1)

c = Case("two_flows_two_flow_ids", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 4",))
a, b = inner4(sport=1111), inner4(sport=2222)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0))
c.pkt(frame(b), "TC_ACT_REDIRECT", encap(b, 2, G0, 1, 0))
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 0, 0))
sprayed(c).count(flows_new=2, groups_opened=2)

c = Case("ingress_port_is_the_arrival_interface", opts=f"--gid0 {G0} --ingress-port 200",
         rules=("--dst 10.20.0.0/24 --quantum 1",),
         comment="Ingress Port ID: a named interface's ID (--ingress-port IF=ID: 5 is 31), another's "
                 "ifindex (7), its low byte (263), the node's own packet --ingress-port N (200); one "
                 "flow from four interfaces, each packet with its own")
c.ports.append((5, 31))
for i, (iif, port) in enumerate(((5, 31), (7, 7), (263, 7), (None, 200))):
    p = inner4(payload=bytes([i]) * 8)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + i, 1, 1, port=port), iif=iif)
sprayed(c).count(flows_new=1, groups_opened=4)

c = Case("ingress_port_kept_through_the_detour", opts=f"--gid0 {G0} --seg-ifindex 99",
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="the packet is sent round the detour with its Ingress Port ID in skb->cb[0]")
big = inner4(proto="tcp", dport=5201, payload=b"z" * 2800)
c.pkt(frame(big), "TC_ACT_REDIRECT", frame(big), gso_segs=2, gso_size=1400, iif=5, cb0_out=0x57500205)
c.count(rx=1, redirect_gso_detour=1, flows_new=1)
c = Case("ingress_port_after_the_detour", prog="seg", opts=f"--gid0 {G0} --seg-ifindex 99 --ingress-port 200",
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="after the detour: the ID the program on DEV left in cb[0] (the packet now comes in on "
                 "the detour's veth); without one, the node's own")
p = inner4(proto="tcp", dport=5201, payload=b"d" * 100)
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0, port=5), iif=98, cb0=0x57500005)
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 0, 0, port=200), iif=98)
sprayed(c).count(flows_new=1, groups_opened=1)

# ---- classification ------------------------------------------------------------
c = Case("not_eligible_passes_untouched", opts=f"--gid0 {G0}",
         rules=("--dst 10.20.0.0/24 --proto tcp --dport 5201 --quantum 4",))
for p in (inner4(dst="10.30.0.2"), inner4(proto="tcp", dport=80), inner4(dport=5201),
          inner6()):
    c.pkt(frame(p), "TC_ACT_OK", frame(p))
c.count(rx=4, pass_no_rule=4)

c = Case("tcp_dport_rule_and_src_prefix", opts=f"--gid0 {G0}",
         rules=("--dst 10.20.0.0/24 --src 10.10.0.0/16 --proto tcp --dport 5201 --quantum 4",))
p = inner4(proto="tcp", dport=5201)
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0))
q = inner4(proto="tcp", dport=5201, src="10.10.5.2")
c.pkt(frame(q), "TC_ACT_REDIRECT", encap(q, 2, G0, 1, 0))
o = inner4(proto="tcp", dport=5201, src="10.99.0.2")
c.pkt(frame(o), "TC_ACT_OK", frame(o))
c.count(rx=3, tx_sprayed=2, pass_no_rule=1, flows_new=2, groups_opened=2)

c = Case("second_rule_ipv6_wildcards", opts=f"--gid0 {G0}",
         rules=("--dst 10.20.0.0/24 --quantum 4", "--dst ::/0 --quantum 1"))
p = inner6(dst="2001:db8::1")
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 1))
sprayed(c).count(flows_new=1, groups_opened=1)

c = Case("not_ip_passes")
arp = Ether(src=DEV_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.20.0.1", pdst="10.20.0.2")
c.pkt(arp, "TC_ACT_OK", arp)
c.count(rx=1, pass_not_ip=1)

c = Case("malformed_inner_passes_counted")
good = frame(inner4())
bad_len = bytearray(good)
bad_len[14 + 2:14 + 4] = (len(good) - 14 + 100).to_bytes(2, "big")  # total length lies
c.pkt(bytes(bad_len), "TC_ACT_OK", bytes(bad_len))
bad_ihl = bytearray(good)
bad_ihl[14] = 0x43                                                # IHL 3
c.pkt(bytes(bad_ihl), "TC_ACT_OK", bytes(bad_ihl))
g6 = bytearray(frame(inner6(dst="fd20::2")))
g6[14 + 4:14 + 6] = (200).to_bytes(2, "big")                     # payload length lies
c.pkt(bytes(g6), "TC_ACT_OK", bytes(g6))
cut_l4 = bytes(Ether(src=DEV_MAC, dst=SITE_MAC) / IP(src="10.10.0.2", dst="10.20.0.2", proto=17) / Raw(b"ab"))
c.pkt(cut_l4, "TC_ACT_OK", cut_l4)                               # UDP header cut
c.count(rx=4, pass_malformed=4)
# (BPF_PROG_TEST_RUN itself refuses frames whose IP header is cut short.)

c = Case("inner_ipv6_extension_headers", opts=f"--gid0 {G0}",
         rules=("--dst fd20::/64 --proto udp --dport 5000 --quantum 4",),
         comment="ports found behind HBH + DestOpt; the inner packet is carried unchanged")
p = inner6(ext=IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0\0\0\0")]))
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0))
sprayed(c).count(flows_new=1, groups_opened=1, inner_ipv6_exthdr=1)

c = Case("inner_fragments", opts=f"--gid0 {G0}", rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="fragments are sprayed; a non-first fragment has no ports, so it is its own flow")
first = inner4(flags="MF", payload=b"f" * 40)
later = IP(src="10.10.0.2", dst="10.20.0.2", id=7, frag=6, proto=17) / Raw(b"g" * 24)
f6 = IPv6(src="fd10::2", dst="fd20::2") / IPv6ExtHdrFragment(offset=3, id=9, nh=17) / Raw(b"h" * 24)
c.pkt(frame(first), "TC_ACT_REDIRECT", encap(first, 1, G0, 1, 0))
c.pkt(frame(later), "TC_ACT_REDIRECT", encap(later, 2, G0, 1, 0))
c.pkt(frame(f6), "TC_ACT_OK", frame(f6))
c.count(rx=3, tx_sprayed=2, pass_no_rule=1, flows_new=2, groups_opened=2, inner_fragment=3,
        inner_ipv6_exthdr=1)

c = Case("frag_no_ports_vs_dport_rule", opts=f"--gid0 {G0}",
         rules=("--dst 10.20.0.0/24 --proto udp --dport 5000 --quantum 4",))
later = IP(src="10.10.0.2", dst="10.20.0.2", id=7, frag=6, proto=17) / Raw(b"g" * 24)
c.pkt(frame(later), "TC_ACT_OK", frame(later))
c.count(rx=1, pass_no_rule=1, inner_fragment=1)

c = Case("site_packet_with_wps_is_dropped", opts=f"--gid0 {G0}", paths=2, rules=("--dst ::/0 --quantum 4",),
         comment="a packet that carries the WPS option already: from the site (in on another device, or "
                 "the node's own), dropped and counted, never carried into the domain; in on a member "
                 "path's device (the domain's own WPS traffic routed through this node), passed as it is")
w = encap(inner4(), 5, 9, 1, 1)
wf = Ether(src=DEV_MAC, dst=SITE_MAC) / Ether(w).payload
c.pkt(wf, "TC_ACT_SHOT", iif=7)
c.pkt(wf, "TC_ACT_SHOT")
c.pkt(wf, "TC_ACT_OK", wf, iif=PATHS[1][0])
c.count(rx=3, drop_site_wps=2, pass_already_wps=1)

c = Case("site_packet_with_wps_in_hbh_behind_routing_is_dropped", opts=f"--gid0 {G0}",
         rules=("--dst ::/0 --quantum 4",))
opt_only = bytes([0x81, 12]) + bytes(WPSOption(flow_id=5, group=9))[2:]
hidden = (Ether(src=DEV_MAC, dst=SITE_MAC) / IPv6(src="fd10::2", dst="fd20::2", nh=0) /
          Raw(bytes([43, 1]) + opt_only + bytes(IPv6ExtHdrRouting(nh=17, addresses=[])) +
              bytes(UDP(sport=1, dport=2) / Raw(b"h"))))
c.pkt(hidden, "TC_ACT_SHOT", iif=7)
c.count(rx=1, drop_site_wps=1)

c = Case("site_packet_too_long_to_walk_is_dropped", opts=f"--gid0 {G0}", rules=("--dst ::/0 --quantum 4",),
         comment="nine extension headers: past what is walked, so it could hide the option: from the site, "
                 "dropped and counted")
deep9 = b"".join(bytes([60, 0]) + bytes([1, 4, 0, 0, 0, 0]) for _ in range(8)) + bytes([17, 0]) + bytes([1, 4, 0, 0, 0, 0])
nine = Ether(src=DEV_MAC, dst=SITE_MAC) / IPv6(src="fd10::2", dst="fd20::2", nh=60) / Raw(deep9 + bytes(UDP() / Raw(b"x")))
c.pkt(nine, "TC_ACT_SHOT", iif=7)
c.pkt(nine, "TC_ACT_OK", nine, iif=PATHS[0][0])
c.count(rx=2, drop_inner_unwalked=1, pass_malformed=1)

# ---- schedulers ------------------------------------------------------------------
def swrr_cycle(weights):
    """nginx's smooth weighted round robin over {slot: weight} (slots in order), the weights in
    lowest terms: one cycle of slots. Each pick adds each path's weight to its current value,
    takes the largest (the first of equals) and gives back the weights' sum."""
    g = math.gcd(*weights.values())
    w = {k: v // g for k, v in weights.items()}
    total, cur, cycle = sum(w.values()), {k: 0 for k in w}, []
    for _ in range(total):
        for k in w:
            cur[k] += w[k]
        best = max(w, key=lambda k: cur[k])   # the first of equals
        cur[best] -= total
        cycle.append(best)
    return cycle


assert swrr_cycle({0: 7, 1: 3}) == [0, 1, 0, 0, 0, 1, 0, 0, 1, 0]
assert swrr_cycle({0: 40, 1: 30, 2: 20, 3: 10}) == [0, 1, 2, 0, 1, 3, 0, 2, 1, 0]

# Single-packet groups (quantum 1), in-flight bound out of the way (delay 0), one flow:
# group i takes the path at i mod the cycle; weights change or a path goes down from the
# packet listed, and the flow's groups go on counting.
SCHED_OPTS = f"--gid0 {G0} --max-inflight 16 --max-delay-us 0"


def weighted_case(name, weights, groups, comment, changes=None):
    """changes: {packet: ("down", mask) | ("weights", [w, ...])} from that packet on."""
    c = Case(name, opts=SCHED_OPTS, paths=len(weights), weights=weights,
             rules=("--dst 10.20.0.0/24 --quantum 1 --sched weighted",), comment=comment)
    live, down, paths = list(weights), 0, []
    for i in range(groups):
        kw = {}
        if changes and i in changes:
            what, v = changes[i]
            if what == "down":
                down = kw["down"] = v
            else:
                live = v
                kw["weights"] = v
        cycle = swrr_cycle({k: w for k, w in enumerate(live) if not down >> k & 1})
        paths.append(cycle[i % len(cycle)])
        p = inner4(payload=bytes([i]) * 8)
        c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + i, 1, 1, path=paths[-1]), **kw)
    sprayed(c).count(flows_new=1, groups_opened=groups)
    return paths


def longest_run(paths, k):
    run = most = 0
    for p in paths:
        run = run + 1 if p == k else 0
        most = max(most, run)
    return most


weighted_case("weighted_scheduler", [1, 3], 8, "weights 1:3 -> paths 1,0,1,1 a cycle")
weighted_case("weighted_scheduler_lowest_terms", [10, 30], 8,
              "weights 10:30 as 1:3 -> paths 1,0,1,1 a cycle (not ten groups in a row on path 0)")
weighted_case("weighted_scheduler_1_1", [1, 1], 4, "weights 1:1 -> paths 0,1,0,1")
p73 = weighted_case("weighted_scheduler_interleaves_7_3", [7, 3], 20,
                    "weights 7:3 -> paths 0,1,0,0,0,1,0,0,1,0 twice: at most ceil(7/3) = 3 groups in a row on "
                    "path 0, never 7, and 7:3 a cycle")
assert longest_run(p73, 0) == 3 and p73.count(0) == 14 and p73.count(1) == 6
weighted_case("weighted_scheduler_4_3_2_1", [4, 3, 2, 1], 20, "weights 4:3:2:1 -> paths 0,1,2,0,1,3,0,2,1,0 twice")
pdown = weighted_case("weighted_scheduler_path_down_mid_cycle", [4, 3, 2, 1], 21,
                      "4:3:2:1; path 2 goes down after 5 groups: the flow's next groups go on over "
                      "4:3:1 (its cycle of 8 from group 5 on), 4:3:1 in every 8",
                      changes={5: ("down", 0b100)})
assert [pdown[5:].count(k) for k in range(4)] == [8, 6, 0, 2]
plive = weighted_case("weighted_scheduler_weights_changed_live", [1, 1], 23,
                      "1:1, then 7:3 from group 3 (path set --weight): 7:3 in every 10 groups from there, "
                      "at most 3 in a row on path 0",
                      changes={3: ("weights", [7, 3])})
assert [plive[3:].count(k) for k in range(2)] == [14, 6] and longest_run(plive[3:], 0) == 3

c = Case("least_loaded_scheduler", opts=f"--gid0 {G0} --load-window-us 1000000", paths=3,
         rules=("--dst 10.20.0.0/24 --quantum 1 --sched least-loaded",),
         comment="each group goes where the fewest bytes went in the window")
plan = [(1000, 0), (100, 1), (100, 2), (100, 1), (100, 2), (100, 2)]
# Loads after each: p0=1000; p1=100; p2=100; p1=200; p2=200; then p1 and p2 tie at 200 and
# the tie goes to the first path counting from (group number mod paths) = 5 mod 3 = 2.
for i, (sz, path) in enumerate(plan):
    p = inner4(payload=bytes([i]) * (sz - 28))
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + i, 1, 1, path=path, paths=PATHS), now=1_000_000 + i)
sprayed(c).count(flows_new=1, groups_opened=6)

# ---- paths that go down ------------------------------------------------------------
c = Case("path_down_mid_group_closes_the_group", opts=f"--gid0 {G0}", paths=2,
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="the group's path goes down after its first packet: the group ends there (no E, never "
                 "moved under its Group ID); the next packet opens the next group, S, on the path left; "
                 "back up, the path takes groups again")
# (S, E, Group ID, path, path slots down from this packet on)
plan = [(1, 0, G0, 0, None),                   # S on path 0
        (1, 0, G0 + 1, 1, 0b01),               # path 0 down: G0 ends unfinished, G0 + 1 opens on path 1
        (0, 0, G0 + 1, 1, None), (0, 0, G0 + 1, 1, None), (0, 1, G0 + 1, 1, None),
        (1, 0, G0 + 2, 0, 0)]                  # path 0 up again: round-robin over both
for i, (s, e, g, path, down) in enumerate(plan):
    p = inner4(payload=bytes([i]) * 16)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, s, e, path=path), down=down)
sprayed(c).count(flows_new=1, groups_opened=3, groups_closed_path_down=1)

c = Case("no_path_up_drops", opts=f"--gid0 {G0}", paths=2, rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="every path down: nothing is sprayed onto a dead path, nor sent plain into the domain")
p = inner4()
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 1, 0, path=0))
c.pkt(frame(p), "TC_ACT_SHOT", down=0b11)
c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + 1, 1, 0, path=1), down=0b01)
c.count(rx=3, tx_sprayed=2, flows_new=1, groups_opened=2, drop_no_live_path=1, groups_closed_path_down=1)

# ---- in-flight bound --------------------------------------------------------------
c = Case("inflight_bound_extends_group", opts=f"--gid0 {G0} --max-inflight 2 --max-delay-us 1000",
         paths=2, rules=("--dst 10.20.0.0/24 --quantum 1",),
         comment="2 groups in flight: group 2 cannot close until group 1 has been gone 1 ms")
T = 10_000_000
EXT = 128  # WPS_GS_EXT_JOINS: an extended group takes at least this many packets before the lock asks again
steps = ([(T, 1, 1, G0, 0), (T + 1, 1, 0, G0 + 1, 1)] + [(T + 2 + i, 0, 0, G0 + 1, 1) for i in range(EXT - 1)] +
         [(T + 1_000_000, 0, 1, G0 + 1, 1), (T + 1_000_001, 1, 0, G0 + 2, 0)])
for i, (t, s, e, g, path) in enumerate(steps):
    p = inner4(payload=bytes([i % 256]) * 8)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, s, e, path=path), now=t)
sprayed(c).count(flows_new=1, groups_opened=3, groups_extended_inflight=2)  # group 3 is held too

c = Case("inflight_extended_group_joined_a_quantum_at_a_time",
         opts=f"--gid0 {G0} --max-inflight 2 --max-delay-us 1000", paths=2,
         rules=("--dst 10.20.0.0/24 --quantum 2",),
         comment="a group extended at the in-flight bound takes max(quantum, 128) packets lock-free before "
                 "the lock asks again (room for a whole GSO skb): its E comes with the first packet the lock "
                 "holder sees once closing is allowed, at most that many late (here 28 packets after the 1 ms)")
T = 10_000_000
steps = ([(T, 1, 0, G0, 0), (T + 1, 0, 1, G0, 0),                      # G0 closes at T + 1
          (T + 2, 1, 0, G0 + 1, 1), (T + 3, 0, 0, G0 + 1, 1)] +          # quantum reached: extended
         [(T + 4 + i, 0, 0, G0 + 1, 1) for i in range(100)] +           # joins while the bound holds
         [(T + 1_000_100 + i, 0, 0, G0 + 1, 1) for i in range(EXT - 101)] +  # allowed, but joins lock-free
         [(T + 1_000_200, 0, 1, G0 + 1, 1),                              # the lock holder closes it
          (T + 1_000_300, 1, 0, G0 + 2, 0)])
for i, (t, s_, e, g, path) in enumerate(steps):
    p = inner4(payload=bytes([i % 256]) * 8)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, g, s_, e, path=path), now=t)
sprayed(c).count(flows_new=1, groups_opened=3, groups_extended_inflight=1)

# ---- Flow IDs: pool, quarantine, idle reclaim --------------------------------------
c = Case("flow_id_pool_exhausted_degrades", opts=f"--gid0 {G0} --fid-pool 1",
         rules=("--dst 10.20.0.0/24 --quantum 4",), comment="no Flow ID left: not sprayed, never dropped")
a, b = inner4(sport=1111), inner4(sport=2222)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=1_000_000)
c.pkt(frame(b), "TC_ACT_OK", frame(b), now=1_000_001)
c.count(rx=2, tx_sprayed=1, flows_new=1, groups_opened=1, pass_flow_id_exhausted=1, flow_table_sweeps=1)

c = Case("spent_pool_walks_the_table_once_per_ms", opts=f"--gid0 {G0} --fid-pool 1",
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="no Flow ID left: every new flow passes unsprayed, the table is walked for idle flows "
                 "at most once per millisecond, not per packet")
a, b, d, e = inner4(sport=1111), inner4(sport=2222), inner4(sport=3333), inner4(sport=4444)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=1_000_000)
c.pkt(frame(b), "TC_ACT_OK", frame(b), now=1_000_001)      # walks (nothing idle)
c.pkt(frame(d), "TC_ACT_OK", frame(d), now=1_500_000)      # within the interval: no walk
c.pkt(frame(e), "TC_ACT_OK", frame(e), now=2_000_000)      # 1 ms - 1 ns after: no walk
c.pkt(frame(b), "TC_ACT_OK", frame(b), now=2_000_001)      # walks again
c.count(rx=5, tx_sprayed=1, flows_new=1, groups_opened=1, pass_flow_id_exhausted=4, flow_table_sweeps=2)



# The flow table keeps a flow's last packet in units of 2^16 ns: a quarantine from it may run
# up to one unit longer, never shorter (headers/wps_ingress.h, WPS_SEEN_SHIFT).
SEEN_UNIT = 1 << 16


def idle_case(name, pool, comment):
    """A case with Flow IDs 1..pool, idle after 1 ms, 10 ms of quarantine."""
    return Case(name, opts=f"--gid0 {G0} --fid-pool {pool} --idle-ms 1 --quarantine-ms 10",
                rules=("--dst 10.20.0.0/24 --quantum 4",), comment=comment)


c = idle_case("idle_reclaim_and_quarantine", 2,
              "idle flow renewed under a fresh Flow ID; the old one rests 10 ms before reuse")
a, b = inner4(sport=1111), inner4(sport=2222)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=1_000_000)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 2, G0, 1, 0), now=3_000_000)      # idle 2 ms: fid 2
c.pkt(frame(b), "TC_ACT_OK", frame(b), now=3_500_000)                           # 1 resting, 2 in use
c.pkt(frame(b), "TC_ACT_REDIRECT", encap(b, 1, G0, 1, 0), now=14_000_000)      # 1 free again
c.count(rx=4, tx_sprayed=3, flows_new=3, flows_reclaimed=1, groups_opened=3, pass_flow_id_exhausted=1,
        flow_table_sweeps=1)

c = idle_case("pool_held_by_idle_flows_is_swept", 2,
              "the pool spent by flows gone idle: they are forgotten, and their Flow IDs, "
              "after 10 ms of quarantine from their last packet, serve new flows")
a, b, n = inner4(sport=1111), inner4(sport=2222), inner4(sport=3333)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=1_000_000)
c.pkt(frame(b), "TC_ACT_REDIRECT", encap(b, 2, G0, 1, 0), now=1_000_000)
c.pkt(frame(n), "TC_ACT_OK", frame(n), now=3_000_000)        # no ID; a and b idle 2 ms: swept
c.pkt(frame(n), "TC_ACT_OK", frame(n), now=10_999_999)       # both IDs still in quarantine
c.pkt(frame(n), "TC_ACT_REDIRECT", encap(n, 1, G0, 1, 0), now=11_000_000 + SEEN_UNIT)
c.count(rx=5, tx_sprayed=3, flows_new=3, groups_opened=3, pass_flow_id_exhausted=2, flows_reclaimed=2,
        flow_table_sweeps=2)

c = idle_case("idle_flow_holding_the_last_id_is_swept", 1,
              "renewing an idle flow needs a fresh ID; none left: the flow is forgotten, its ID "
              "rests 10 ms from its last packet, then the flow starts again under it")
a = inner4(sport=1111)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=1_000_000)
c.pkt(frame(a), "TC_ACT_OK", frame(a), now=3_000_000)
c.pkt(frame(a), "TC_ACT_OK", frame(a), now=10_999_999)
c.pkt(frame(a), "TC_ACT_REDIRECT", encap(a, 1, G0, 1, 0), now=11_000_000 + SEEN_UNIT)
c.count(rx=4, tx_sprayed=2, flows_new=2, groups_opened=2, pass_flow_id_exhausted=2, flows_reclaimed=1,
        flow_table_sweeps=2)

# ---- one packet on the wire per flag: GSO detour ------------------------------------
c = Case("gso_skb_takes_segmentation_detour", opts=f"--gid0 {G0} --seg-ifindex 99",
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="a GSO skb would copy S/E into every segment: the flow goes round the detour, "
                 "and stays on it so its packets keep their order")
big = inner4(proto="tcp", dport=5201, payload=b"z" * 2800)
small = inner4(proto="tcp", dport=5201, payload=b"s" * 100)
c.pkt(frame(big), "TC_ACT_REDIRECT", frame(big), gso_segs=2, gso_size=1400)
c.pkt(frame(small), "TC_ACT_REDIRECT", frame(small))
c.count(rx=2, redirect_gso_detour=2, flows_new=1)

c = Case("after_detour_one_packet_per_skb", prog="seg", opts=f"--gid0 {G0} --seg-ifindex 99",
         rules=("--dst 10.20.0.0/24 --quantum 2",))
for i in range(3):
    p = inner4(proto="tcp", dport=5201, payload=bytes([i]) * 1000)
    c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0 + i // 2, int(i % 2 == 0), int(i % 2 == 1)))
sprayed(c).count(flows_new=1, groups_opened=2)

# ---- path MTU ---------------------------------------------------------------------------
MTU = 1400
c = Case("too_big_v4_frag_needed", opts=f"--gid0 {G0}", mtu=MTU,
         comment="inner 1345 + 56 > 1400: ICMP Fragmentation Needed, MTU 1344, back into the stack")
fits = inner4(payload=b"a" * (MTU - OVERHEAD - 28))
big = inner4(payload=b"b" * (MTU - OVERHEAD - 28 + 1), flags="DF")
ib = bytes(big)
icmp = (Ether(src=SITE_MAC, dst=DEV_MAC) /
        IP(src="10.20.0.2", dst="10.10.0.2", ttl=64, id=0, tos=0) /
        ICMP(type=3, code=4, nexthopmtu=MTU - OVERHEAD, unused=0) / Raw(ib[:128]))
c.pkt(frame(fits), "TC_ACT_REDIRECT", encap(fits, 1, G0, 1, 0))
c.pkt(frame(big), "TC_ACT_REDIRECT", icmp)
c.count(rx=2, tx_sprayed=1, flows_new=1, groups_opened=1, tx_mtu_icmp=1)   # one flow: same 5-tuple

c = Case("too_big_v6_packet_too_big", opts=f"--gid0 {G0}", mtu=MTU, rules=("--dst fd20::/64 --quantum 4",))
big = inner6(payload=b"c" * (MTU - OVERHEAD - 48 + 1))
ib = bytes(big)
ptb = (Ether(src=SITE_MAC, dst=DEV_MAC) / IPv6(src=SRC6, dst="fd10::2", hlim=64) /
       ICMPv6PacketTooBig(mtu=MTU - OVERHEAD) / Raw(ib[:128]))
c.pkt(frame(big), "TC_ACT_REDIRECT", ptb)
c.count(rx=1, tx_mtu_icmp=1, flows_new=1)

c = Case("learned_path_mtu_lowers_the_limit", opts=f"--gid0 {G0}", mtu=1500,
         rules=("--dst 10.20.0.0/24 --quantum 4",),
         comment="paths of 1500, but Packet Too Big taught the watch agent 1400 (live.pmtu): a packet that "
                 "fits 1500 but not 1400 once encapsulated is answered with MTU 1344; one that fits goes")
big = inner4(payload=b"L" * (1400 - OVERHEAD - 28 + 1), flags="DF")
fits = inner4(payload=b"l" * (1400 - OVERHEAD - 28), flags="DF")
ib = bytes(big)
icmp = (Ether(src=SITE_MAC, dst=DEV_MAC) / IP(src="10.20.0.2", dst="10.10.0.2", ttl=64, id=0, tos=0) /
        ICMP(type=3, code=4, nexthopmtu=1400 - OVERHEAD, unused=0) / Raw(ib[:128]))
c.pkt(frame(big), "TC_ACT_REDIRECT", icmp, pmtu=1400)
c.pkt(frame(fits), "TC_ACT_REDIRECT", encap(fits, 1, G0, 1, 0))
c.count(rx=2, tx_mtu_icmp=1, tx_sprayed=1, flows_new=1, groups_opened=1)

c = Case("too_big_counted_drop_option", opts=f"--gid0 {G0} --mtu-drop", mtu=MTU)
big = inner4(payload=b"b" * (MTU - OVERHEAD - 28 + 1), flags="DF")
c.pkt(frame(big), "TC_ACT_SHOT")
c.count(rx=1, drop_mtu=1, flows_new=1)

# ---- DF=0 IPv4 too big: fragmented before encapsulation (RFC 2473 §7) -----------------------
LO = 1   # the harness's private lo: the detour here, where it sees the clones


def fragments(ip, limit):
    """RFC 791 fragments of ip (scapy IP, DF clear) of at most limit bytes, made here, not by the program:
    non-copied options left out of later fragments as NOPs, offsets from the original's, MF but on the last
    (unless the original had it)."""
    raw = bytes(ip)
    ihl = (raw[0] & 15) * 4
    hdr, pay = bytearray(raw[:ihl]), raw[ihl:]
    later = bytearray(hdr)
    i = 20
    while i < ihl:
        t = later[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        ln = later[i + 1]
        if not t & 0x80:
            later[i:i + ln] = b"\x01" * ln
        i += ln
    fsz = (limit - ihl) & ~7
    off0, mf = ip.frag, bool(ip.flags & 1)
    out = []
    for k in range(0, len(pay), fsz):
        chunk = pay[k:k + fsz]
        h = bytearray(hdr if k == 0 else later)
        last = k + fsz >= len(pay)
        h[2:4] = (ihl + len(chunk)).to_bytes(2, "big")
        h[6:8] = ((off0 + k // 8) | (0 if last and not mf else 0x2000)).to_bytes(2, "big")
        h[10:12] = b"\0\0"
        h[10:12] = checksum(bytes(h)).to_bytes(2, "big")
        out.append(bytes(h) + chunk)
    return out


def eth4(raw):
    return bytes(Ether(src=DEV_MAC, dst=SITE_MAC, type=0x0800)) + raw


FMTU = 1400
c = Case("df0_v4_too_big_is_fragmented", opts=f"--gid0 {G0} --seg-ifindex {LO}", mtu=FMTU,
         comment="DF clear, 1500 bytes for paths of 1400: cut into 1340 + 180 bytes before encapsulation "
                 "(1344 = 1400 - 56 at most), the first sent round the detour at once, the last the skb "
                 "itself; the flow takes the detour from now on; no ICMP")
big = inner4(payload=bytes(range(256)) * 5 + b"q" * (1500 - 28 - 1280))
fr = fragments(big, FMTU - OVERHEAD)
assert [len(x) for x in fr] == [1340, 180]
c.pkt(frame(big), "TC_ACT_REDIRECT", eth4(fr[1]), clones=[eth4(fr[0])], iif=5, cb0_out=0x57500105)
c.count(rx=1, tx_fragmented=1, fragments_made=2, flows_new=1)

c = Case("df0_fragments_finish_a_partial_checksum", opts=f"--gid0 {G0} --seg-ifindex {LO}", mtu=FMTU,
         comment="a UDP checksum the device was to finish (CHECKSUM_PARTIAL: the pseudo-header's sum in the "
                 "field) is finished before the datagram is cut; a finished one is left as it is")
part = inner4(payload=b"p" * 1472)
raw = bytearray(bytes(part))
pseudo = raw[12:20] + bytes([0, 17]) + raw[24:26]
raw[26:28] = ((~checksum(bytes(pseudo))) & 0xFFFF).to_bytes(2, "big")    # what udp4_hwcsum leaves
full = inner4(payload=b"p" * 1472)                                         # scapy's full checksum
fr = fragments(full, FMTU - OVERHEAD)
c.pkt(eth4(bytes(raw)), "TC_ACT_REDIRECT", eth4(fr[1]), clones=[eth4(fr[0])])
c.count(rx=1, tx_fragmented=1, fragments_made=2, flows_new=1)

c = Case("df0_fragments_copy_only_copied_options", opts=f"--gid0 {G0} --seg-ifindex {LO}", mtu=1336,
         comment="options: Router Alert (copied) in every fragment, Record Route (not copied) in the first "
                 "only (NOPs after); a packet already a fragment keeps its offset and MF; three fragments")
opt = IP(src="10.10.0.2", dst="10.20.0.2", id=9, frag=100, flags="MF", proto=17,
         options=[IPOption_RR(routers=["0.0.0.0"]), IPOption_Router_Alert()]) / Raw(bytes(range(200)) * 15)
fr = fragments(opt, 1336 - OVERHEAD)
assert len(fr) == 3 and all(f[6] & 0x20 for f in fr)
c.pkt(eth4(bytes(opt)), "TC_ACT_REDIRECT", eth4(fr[2]), clones=[eth4(fr[0]), eth4(fr[1])])
c.count(rx=1, tx_fragmented=1, fragments_made=3, flows_new=1, inner_fragment=1)

c = Case("df0_segment_cut_after_the_detour_holds_the_flow", opts=f"--gid0 {G0} --seg-ifindex {LO}", mtu=FMTU,
         rules=("--dst 10.20.0.0/24 --proto tcp --dport 5201 --quantum 8",),
         comment="a GSO skb whose DF=0 segments do not fit paths of 1400 goes round the detour; there each "
                 "segment is cut into fragments that go round it again, counted nowhere: the flow's next "
                 "packet from DEV follows them into the detour (with the detour's counts alone, equal "
                 "once both segments were handled, it was sprayed past them)")
t0 = inner4(proto="tcp", dport=5201, payload=b"s" * 100)
t1 = inner4(proto="tcp", dport=5201, payload=b"t" * 100)
gbig = inner4(proto="tcp", dport=5201, payload=b"G" * 2920)
c.pkt(frame(t0), "TC_ACT_REDIRECT", encap(t0, 1, G0, 1, 0))
c.pkt(frame(gbig), "TC_ACT_REDIRECT", frame(gbig), gso_segs=2, gso_size=1460, cb0_out=0x57500200)
for i in range(2):
    sg = inner4(proto="tcp", dport=5201, payload=bytes([0x40 + i]) * 1460)
    fr = fragments(sg, FMTU - OVERHEAD)
    c.pkt(frame(sg), "TC_ACT_REDIRECT", eth4(fr[1]), clones=[eth4(fr[0])], cb0=0x57500200, cb2=0, seg=True,
          cb0_out=0x57500100)
c.pkt(frame(t1), "TC_ACT_REDIRECT", frame(t1), cb0_out=0x57500200)
c.count(rx=5, tx_sprayed=1, redirect_gso_detour=2, tx_fragmented=2, fragments_made=4, flows_new=1, groups_opened=1)

c = Case("df0_fragments_sprayed_in_their_flow", prog="seg", opts=f"--gid0 {G0} --seg-ifindex {LO}",
         rules=("--dst 10.20.0.0/24 --proto udp --dport 5000 --quantum 3",),
         comment="after the detour a fragment after the first (no ports) is sprayed in the flow of the "
                 "packet it was cut from (its ports in cb[1]), under its Flow ID and group")
whole = inner4(payload=b"w" * 40)
f0 = IP(src="10.10.0.2", dst="10.20.0.2", id=7, flags="MF", proto=17) / Raw(bytes(UDP(sport=4000, dport=5000)) + b"a" * 32)
f1 = IP(src="10.10.0.2", dst="10.20.0.2", id=7, frag=5, proto=17) / Raw(b"b" * 24)
ports = int.from_bytes((4000).to_bytes(2, "big") + (5000).to_bytes(2, "big"), "little")
c.pkt(frame(whole), "TC_ACT_REDIRECT", encap(whole, 1, G0, 1, 0, port=5), cb0=0x57500005)
c.pkt(frame(f0), "TC_ACT_REDIRECT", encap(f0, 1, G0, 0, 0, port=5), cb0=0x57500105, cb1=ports)
c.pkt(frame(f1), "TC_ACT_REDIRECT", encap(f1, 1, G0, 0, 1, port=5), cb0=0x57500105, cb1=ports)
sprayed(c).count(flows_new=1, groups_opened=1, inner_fragment=2)

# ---- boundary filter ----------------------------------------------------------------------
WPS_DEST = encap(inner4(), 5, 9, 1, 1)
wps_hbh = encap(inner4(), 5, 9, 1, 1, hbh=True)
opt = bytes([0x81, 12]) + bytes(WPSOption(flow_id=5, group=9))[2:]
# DestOpt of 24 bytes behind HBH and Routing: PadN(0), the WPS option, PadN(6).
dest_hdr = bytes([4, 2]) + bytes([1, 0]) + opt + bytes([1, 6, 0, 0, 0, 0, 0, 0])   # PadN, WPS, PadN -> 24 bytes
deep = (Ether(src=DEV_MAC, dst=SITE_MAC) / IPv6(src=SRC6, dst=DST6, nh=0) /
        Raw(bytes(IPv6ExtHdrHopByHop(nh=43)) + bytes(IPv6ExtHdrRouting(nh=60, addresses=[])) + dest_hdr +
            bytes(inner4())))
plain6 = Ether(src=DEV_MAC, dst=SITE_MAC) / inner6()
other_opt = (Ether(src=DEV_MAC, dst=SITE_MAC) / IPv6(src=SRC6, dst=DST6, nh=60) /
             Raw(bytes([17, 1]) + bytes([0x82, 12]) + bytes(12)) / UDP() / Raw(b"q"))
for prog, d in (("boundary_in", "in"), ("boundary_out", "out")):
    c = Case(f"boundary_{d}", prog=prog, comment="WPS option in DestOpt, in HBH, behind HBH+Routing after PadN")
    c.pkt(WPS_DEST, "TC_ACT_SHOT")
    c.pkt(wps_hbh, "TC_ACT_SHOT")
    c.pkt(deep, "TC_ACT_SHOT")
    c.pkt(plain6, "TC_ACT_OK", plain6)
    c.pkt(other_opt, "TC_ACT_OK", other_opt)
    c.pkt(frame(inner4()), "TC_ACT_OK", frame(inner4()))
    c.count(**{f"rx_{d}": 6, f"drop_wps_{d}": 3, f"pass_{d}": 3})


def main():
    out = sys.stdout
    out.write("# Generated by tests/bpf/gen_wps_fixtures.py from scapy; do not edit.\n")
    out.write(f"# {len(cases)} cases.\n")
    for c in cases:
        out.write(f"\ncase {c.name}\n")
        if c.comment:
            out.write(f"# scapy: {c.comment}\n")
        out.write(f"prog {c.prog}\n")
        if c.opts:
            out.write(f"opts {c.opts}\n")
        for p in c.paths:
            out.write(f"path {p}\n")
        for r in c.rules:
            out.write(f"rule {r}\n")
        for ifx, pid in c.ports:
            out.write(f"port {ifx} {pid}\n")
        for step in c.steps:
            inp, verdict, o, now, segs, size, down, iif, cb0, cb0_out, cb1, clones, pmtu, weights, cb2, seg = step
            out.write(f"in {inp.hex()}\n")
            ctx = []
            if now is not None:
                ctx.append(f"now={now}")
            if segs is not None:
                ctx.append(f"gso_segs={segs}")
            if size is not None:
                ctx.append(f"gso_size={size}")
            if down is not None:
                ctx.append(f"down={down}")
            if pmtu is not None:
                ctx.append(f"pmtu={pmtu}")
            if weights is not None:
                ctx.append("weights=" + ",".join(str(w) for w in weights))
            if iif is not None:
                ctx.append(f"iif={iif}")
            if cb0 is not None:
                ctx.append(f"cb0={cb0:#x}")
            if cb0_out is not None:
                ctx.append(f"cb0_out={cb0_out:#x}")
            if cb1 is not None:
                ctx.append(f"cb1={cb1:#x}")
            if cb2 is not None:
                ctx.append(f"cb2={cb2}")
            if seg:
                ctx.append("seg")
            if ctx:
                out.write("ctx " + " ".join(ctx) + "\n")
            out.write(f"verdict {verdict}\n")
            if o is not None:
                out.write(f"out {o.hex()}\n")
            for cl in clones or ():
                out.write(f"clone {bytes(cl).hex()}\n")
        out.write("count " + " ".join(f"{k}={v}" for k, v in c.counters.items()) + "\n")
        out.write("end\n")


if __name__ == "__main__":
    wps_fixtures_gso.add_cases(Case, frame, encap, inner4, G0)
    main()
