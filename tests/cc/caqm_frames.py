#!/usr/bin/python3
"""Native UB frames with CAQM requests for the CAQM stage on a real port.

  caqm_frames.py send DEV N PAYLOAD       N frames, requests (I, Hint 8) and
                                          plain data (EN) alternating, then
                                          one IPv4 frame that is not UB
  caqm_frames.py check PCAP PAYLOAD THRESH UNIT
                                          the CCIs that arrived against an
                                          independent model of the rule

The model is written here from WIRE.md §5 and docs/CC.md, not taken from the
code under test.
"""
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scapy"))
from scapy.all import Ether, IP, UDP, Raw, rdpcap, sendp  # noqa: E402
from ublayers import UBLPH, UBNTH, UBTPH, UBTAH  # noqa: E402

EN, C, I, LOC = 1 << 10, 1 << 9, 1 << 8, 1 << 11
SRC, DST = "02:00:00:00:0c:01", "02:00:00:00:0c:02"


def frames(n, payload):
    out = []
    for k in range(n):
        cci = EN | I | 8 if k % 2 == 0 else EN
        out.append(Ether(src=SRC, dst=DST) / UBLPH() / UBNTH(cci=cci, pid=1) /
                   IP(src="10.9.0.1", dst="10.9.0.2", flags="DF") / UDP(sport=0xC000, dport=4792) /
                   UBTPH(opcode=1, psn=k) / UBTAH() / Raw(b"\x00" * payload))
    return out


def model(sent, thresh, unit):
    """Virtual queue without drain; approvals in one window."""
    q = approved = 0
    out = []
    for f in sent:
        cci = f[UBNTH].cci
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
    if sys.argv[1] == "send":
        dev, n, payload = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        sendp(frames(n, payload) + [Ether(src=SRC, dst=DST) / IP(dst="10.9.0.2") / UDP()],
              iface=dev, verbose=False)
        return 0
    pcap, payload = sys.argv[2], int(sys.argv[3])
    thresh, unit = int(sys.argv[4]), int(sys.argv[5])
    got = [p for p in rdpcap(pcap) if UBNTH in p]
    sent = frames(len(got), payload)
    want = model(sent, thresh, unit)
    have = [p[UBNTH].cci for p in got]
    print("have", [hex(x) for x in have])
    print("want", [hex(x) for x in want])
    if have != want or len(got) < 8:
        return 1
    asked = [f[UBNTH].cci for f in sent]
    # Everything but the CCI arrived as it was sent.
    for s, g in zip(sent, got):
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
