#!/usr/bin/python3
"""Burst injector of bench/wps_threads.sh: WPS frames (R = 1, 64-byte inner UDP) for FLOWS
flows in groups of 4, group by group round-robin over the paths (the four in-dK), COUNT per
path per burst; each line "go" on stdin sends one burst (Group IDs going on from the last)
and answers "sent N". The frames are one scapy template with the option's fields patched."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "wps_egress"))
import wps_tool  # noqa: E402

S, E, R = wps_tool.S, wps_tool.E, wps_tool.R


def main():
    devs, flows, per_path = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3])
    socks = []
    for d in devs:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((d, 0))
        socks.append(s)
    tmpl = [bytearray(wps_tool.outer(k, wps_tool.inner(1, 0), S | R, 1, 0)) for k in range(len(devs))]
    # Ether 14, IPv6 40, DestOpt NextHdr/HdrExtLen 2, option type/length 2: the data's flags at 58
    off = 58
    assert tmpl[0][off - 2] == 0x81, "option not where expected"
    gid = [0] * flows
    glen = 4
    for line in sys.stdin:
        if line.strip() != "go":
            continue
        burst = [[] for _ in devs]
        total = per_path * len(devs)
        g = 0
        while sum(len(b) for b in burst) < total:
            for f in range(flows):
                path = (gid[f] + f) % len(devs)
                for i in range(glen):
                    fr = bytearray(tmpl[path])
                    fl = (S if i == 0 else 0) | (E if i == glen - 1 else 0) | R
                    struct.pack_into("!BBH", fr, off, fl, 0, 100 + f)
                    struct.pack_into("!H", fr, off + 8, gid[f])
                    burst[path].append(bytes(fr))
                gid[f] = (gid[f] + 1) & 0xffff
            g += 1
        n = 0
        # Path by path in slices, paced: a veth's XDP ring holds 256 frames.
        for start in range(0, max(len(b) for b in burst), 64):
            for k, b in enumerate(burst):
                for fr in b[start:start + 64]:
                    socks[k].send(fr)
                    n += 1
            time.sleep(0.0002)
        print(f"sent {n}", flush=True)


if __name__ == "__main__":
    main()
