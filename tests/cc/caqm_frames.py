#!/usr/bin/python3
"""Native UB frames with CAQM requests for the CAQM stage on a real port.

  caqm_frames.py send DEV N PAYLOAD [tag] N frames, requests (I, Hint 8) and
                                          plain data (EN) alternating, then
                                          one IPv4 frame that is not UB
  caqm_frames.py check PCAP PAYLOAD THRESH UNIT [tag]
                                          the CCIs that arrived against an
                                          independent model of the rule

With "tag" the frames are UBoE of the IP segment instead, the request in an
Ethernet CAQM tag after an 802.1Q header (openEuler's struct caqm_hdr, docs/WIRE.md
§5): Eth / 802.1Q / CAQM tag / IPv4 / UDP 4792 / ...

The model is written here from docs/WIRE.md §5 and docs/CC.md, not taken from the
code under test.
"""
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scapy"))
from scapy.all import Ether, IP, UDP, Raw, rdpcap, sendp  # noqa: E402
from scapy.layers.l2 import Dot1Q  # noqa: E402
from ublayers import UBLPH, UBNTH, UBTPH, UBTAH, CAQMTag, CAQM_TAG_ETHERTYPE  # noqa: E402

EN, C, I, LOC = 1 << 10, 1 << 9, 1 << 8, 1 << 11
SRC, DST = "02:00:00:00:0c:01", "02:00:00:00:0c:02"


def frames(n, payload, tag=False):
    out = []
    for k in range(n):
        cci = EN | I | 8 if k % 2 == 0 else EN
        ip = (IP(src="10.9.0.1", dst="10.9.0.2", flags="DF") / UDP(sport=0xC000, dport=4792) /
              UBTPH(opcode=1, psn=k) / UBTAH() / Raw(b"\x00" * payload))
        if tag:
            out.append(Ether(src=SRC, dst=DST, type=0x8100) / Dot1Q(vlan=5, type=CAQM_TAG_ETHERTYPE) /
                       CAQMTag(caqm_en=1, i_bit=cci >> 8 & 1, hint=cci & 0xFF, type=0x0800) / ip)
        else:
            out.append(Ether(src=SRC, dst=DST) / UBLPH() / UBNTH(cci=cci, pid=1) / ip)
    return out


def tag_cci(p):
    """The CCI a tagged frame carries: cc_type -> Mode, is_last_hop -> LoC, bits 10-0 as they are."""
    t = CAQMTag(bytes(p)[18:22])
    return (t.cc_type << 12 | t.is_last_hop << 11 | t.caqm_en << 10 | t.c_bit << 9 | t.i_bit << 8 | t.hint)


def is_tagged(p):
    b = bytes(p)
    return len(b) >= 22 and b[12:14] == b"\x81\x00" and int.from_bytes(b[16:18], "big") == CAQM_TAG_ETHERTYPE


def set_tag_cci(p, cci):
    """p's bytes with the tag's info for cci."""
    b = bytearray(bytes(p))
    b[18:20] = ((cci >> 12 & 7) << 13 | (cci >> 11 & 1) << 12 | (cci & 0x7FF)).to_bytes(2, "big")
    return bytes(b)


def model(sent, thresh, unit, cci_of):
    """Virtual queue without drain; approvals in one window."""
    q = approved = 0
    out = []
    for f in sent:
        cci = cci_of(f)
        q += len(f)
        if q > thresh:
            out.append((cci | C) & ~(I | 0xff))
            continue
        if not cci & I:
            out.append(cci)
            continue
        room = max(thresh - q - approved, 0)
        grant = min(room // unit, cci & 0xff)
        approved += grant * unit
        out.append((cci & ~0xff) | grant if grant else cci & ~(I | 0xff))
    return out


def main():
    tag = sys.argv[-1] == "tag"
    if sys.argv[1] == "send":
        dev, n, payload = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        sendp(frames(n, payload, tag) + [Ether(src=SRC, dst=DST) / IP(dst="10.9.0.2") / UDP()],
              iface=dev, verbose=False)
        return 0
    pcap, payload = sys.argv[2], int(sys.argv[3])
    thresh, unit = int(sys.argv[4]), int(sys.argv[5])
    got = [p for p in rdpcap(pcap) if (is_tagged(p) if tag else UBNTH in p)]
    sent = frames(len(got), payload, tag)
    cci_of = tag_cci if tag else (lambda p: p[UBNTH].cci)
    want = model(sent, thresh, unit, cci_of)
    have = [cci_of(p) for p in got]
    print("have", [hex(x) for x in have])
    print("want", [hex(x) for x in want])
    if have != want or len(got) < 8:
        return 1
    asked = [cci_of(f) for f in sent]
    # Everything but the CCI arrived as it was sent.
    for s, g in zip(sent, got):
        if tag:
            s = set_tag_cci(s, cci_of(g))
        else:
            s[UBNTH].cci = g[UBNTH].cci
        if bytes(s) != bytes(g):
            print("frame changed beyond the CCI")
            return 1
    outcomes = {"granted": any(h & I and h & 0xff == 8 for h in have),
                "trimmed": any(h & I and 0 < h & 0xff < 8 for h in have),
                "refused": any(a & I and not h & (I | C) for a, h in zip(asked, have)),
                "congested": any(h & C for h in have)}
    print(outcomes)
    return 0 if all(outcomes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
