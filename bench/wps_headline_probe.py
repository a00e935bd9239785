#!/usr/bin/python3
"""Where the headline's goodput goes (bench/wps_headline.sh --probe): samples the four
paths' tbf qdiscs and the two TCP sockets every INTERVAL ms while the flow runs, and prints
per path the bytes sent against rate x time (is the path busy all the time?), how often its
queue was empty, its backlog and drops; at site B how full the receive buffer was (the app
not reading shrinks the window); at the sender the send window and bytes in flight.

  wps_headline_probe.py GW_NS SRC_NS DST_NS RATE_MBIT SECONDS OMIT_S [INTERVAL_MS]

The queues are read over rtnetlink every INTERVAL ms (default 5), the sockets with ss every
0.5 s; it still costs some CPU on a loaded machine, so it is off by default."""
import ctypes
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time

gw, src, dst = sys.argv[1:4]
rate, secs, omit = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
secs += omit + 2	# iperf3 -t SECONDS -O OMIT sends for both, and may connect late
interval = float(sys.argv[7]) / 1000 if len(sys.argv) > 7 else 0.005
devs = [f"wan{k}" for k in range(4)]


def netlink_in(ns):
    """A rtnetlink socket in network namespace NS (the socket keeps the namespace it was made in)."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    if libc.setns(fd, 0x40000000):	# CLONE_NEWNET
        sys.exit(f"probe: setns {ns}: {os.strerror(ctypes.get_errno())}")
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)	# NETLINK_ROUTE
    libc.setns(own, 0x40000000)
    os.close(fd)
    os.close(own)
    s.bind((0, 0))
    return s


def attrs(buf, off, end):
    while off + 4 <= end:
        ln, typ = struct.unpack_from("HH", buf, off)
        if ln < 4:
            break
        yield typ & 0x3fff, off + 4, off + ln
        off += (ln + 3) & ~3


seq = 0


def tbf():
    """{dev: (bytes sent, backlog, drops, packets sent)} of the tbf qdiscs on wan0..3 (one RTM_GETQDISC dump,
    no fork: cheap enough to ask every few ms)."""
    global seq
    seq += 1
    nl.send(struct.pack("IHHII", 16 + 20, 38, 0x301, seq, 0) + struct.pack("BxxxiIII", 0, 0, 0, 0, 0))
    out = {}
    while True:
        buf = nl.recv(1 << 16)
        off = 0
        while off + 16 <= len(buf):
            ln, typ = struct.unpack_from("IH", buf, off)
            if typ == 3:	# NLMSG_DONE
                return out
            if typ == 36:	# RTM_NEWQDISC
                ifindex = struct.unpack_from("i", buf, off + 20)[0]
                kind, st = None, None
                for t, a, b in attrs(buf, off + 36, off + ln):
                    if t == 1:
                        kind = buf[a:b].rstrip(b"\0").decode()
                    elif t == 7:	# TCA_STATS2
                        by = pk = bl = dr = 0
                        for t2, a2, _ in attrs(buf, a, b):
                            if t2 == 1:
                                by, pk = struct.unpack_from("QI", buf, a2)
                            elif t2 == 3:
                                _, bl, dr = struct.unpack_from("III", buf, a2)
                        st = (by, bl, dr, pk)
                if kind == "tbf" and ifindex in names and st:
                    out[names[ifindex]] = st
            off += (ln + 3) & ~3


def sock(ns, port_filter):
    """The data connection's ss -tinm line (the one with the most bytes moved)."""
    out = subprocess.run(["ss", "-N", ns, "-tinmH", *port_filter], capture_output=True, text=True).stdout
    best, most = "", -1
    for entry in re.split(r"\n(?=\S)", out):
        m = re.search(r"bytes_(?:received|acked):(\d+)", entry)
        n = int(m.group(1)) if m else 0
        if n > most:
            best, most = entry, n
    return best


def field(text, name):
    m = re.search(r"\b" + name + r"[:(](\d+)", text)
    return int(m.group(1)) if m else 0


names = {l["ifindex"]: l["ifname"] for l in json.loads(subprocess.run(
    ["ip", "-j", "-n", gw, "link", "show"], capture_output=True, text=True).stdout) if l["ifname"] in devs}
nl = netlink_in(gw)

# Queues every INTERVAL (no fork); the sockets (ss forks) every 0.5 s.
t0 = time.monotonic()
samples, socks = [], []	# (t, {dev: (bytes, backlog, drops)}); (t, rcv_r, rcv_rb, snd_wnd, unacked)
next_ss = 0.0
while time.monotonic() - t0 < secs:
    t = time.monotonic() - t0
    samples.append((t, tbf()))
    if t >= next_ss:
        r = sock(dst, ["src", ":5201"])
        s = sock(src, ["dst", ":5201"])
        sk = re.search(r"skmem:\(r(\d+),rb(\d+)", r)
        socks.append((t, int(sk.group(1)) if sk else 0, int(sk.group(2)) if sk else 0,
                      field(s, "snd_wnd"), field(s, "unacked")))
        next_ss = t + 0.5
    time.sleep(interval)

# The flow's clock starts with its first byte on a path (iperf3 connects late on a loaded
# machine); the figures cover [start + OMIT, the last sample that still moved bytes].
moved = [i for i in range(1, len(samples)) if len(samples[i][1]) == 4 and len(samples[i - 1][1]) == 4
         and sum(samples[i][1][d][0] for d in devs) > sum(samples[i - 1][1][d][0] for d in devs)]
start = samples[moved[0] - 1][0] if moved else 0.0
last = samples[moved[-1]][0] if moved else secs
run = [x for x in samples if start + omit <= x[0] <= last and len(x[1]) == 4]
if len(run) < 2:
    print("probe: too few samples")
    sys.exit(0)
a, b = run[0], run[-1]
dt = b[0] - a[0]
print(f"probe: {len(run)} samples over {dt:.2f} s, from {omit:g} s after the flow's first byte (every {interval * 1000:.0f} ms asked)")
for d in devs:
    sent = b[1][d][0] - a[1][d][0]
    frame = sent / max(1, b[1][d][3] - a[1][d][3])
    empty = sum(1 for x in run if x[1][d][1] == 0) / len(run)
    bl = sorted(x[1][d][1] for x in run)
    print(f"  {d}: sent / (rate x time) {sent * 8 / (rate * 1e6 * dt):.3f}, queue empty in {empty:.0%} of samples,"
          f" backlog median {bl[len(bl) // 2] / 1000:.0f} KB max {bl[-1] / 1000:.0f} KB, drops {b[1][d][2] - a[1][d][2]},"
          f" {frame:.0f} bytes counted per frame")
allempty = sum(1 for x in run if all(x[1][d][1] == 0 for d in devs)) / len(run)
anyempty = sum(1 for x in run if any(x[1][d][1] == 0 for d in devs)) / len(run)
print(f"  all four queues empty in {allempty:.0%} of samples, at least one empty in {anyempty:.0%}")
sk = [x for x in socks if start + omit <= x[0] <= last]
full = sorted(x[1] / x[2] for x in sk if x[2])
if full:
    print(f"  site B receive buffer used (r / rb): median {full[len(full) // 2]:.2f}, max {full[-1]:.2f}"
          f" (rb {sk[-1][2]}, {len(sk)} samples)")
if sk:
    wnd = sorted(x[3] for x in sk)
    ua = sorted(x[4] for x in sk)
    print(f"  sender: snd_wnd median {wnd[len(wnd) // 2] / 1000:.0f} KB (min {wnd[0] / 1000:.0f}, max {wnd[-1] / 1000:.0f}),"
          f" unacked median {ua[len(ua) // 2]} segments (min {ua[0]}, max {ua[-1]})")
