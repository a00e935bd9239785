#!/usr/bin/python3
"""UDP echo for the endpoint tests: send every datagram received on PORT back
to its sender, from the kernel's own UDP stack (so what an AF_XDP socket sent
was really received by a peer kernel). Exits after --count datagrams or
--timeout seconds of silence; prints how many it echoed."""
import argparse
import socket

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, default=4792)
ap.add_argument("--count", type=int, default=0)
ap.add_argument("--timeout", type=float, default=5.0)
a = ap.parse_args()

s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
# UBoE sends UDP checksum 0 (docs/WIRE.md §1); Linux drops that over IPv6 unless told.
UDP_NO_CHECK6_TX, UDP_NO_CHECK6_RX = 101, 102
s.setsockopt(socket.IPPROTO_UDP, UDP_NO_CHECK6_RX, 1)
s.bind(("::", a.port))
s.settimeout(a.timeout)
n = 0
try:
    while not a.count or n < a.count:
        data, peer = s.recvfrom(65535)
        s.sendto(data, peer)
        n += 1
except socket.timeout:
    pass
print(f"echoed {n}", flush=True)
