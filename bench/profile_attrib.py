#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Where each microsecond of a ubperf message goes: `perf script` samples of
both ubperf processes sorted into categories, as microseconds per message
(bench/profile_64k.sh records them).

    bench/profile_attrib.py round --objs DIR --script PERF.txt --client PID --server PID
            --case NAME --round N --json CLIENT.json --start S --period-us US
            --sched "WALL_S CLI_RUN_NS CLI_WAIT_NS SRV_RUN_NS SRV_WAIT_NS" >>ROUNDS.csv
    bench/profile_attrib.py table ROUNDS.csv STACK.csv     prints the table, writes the picture's CSV

`perf record -e cpu-clock -c PERIOD` takes a sample every PERIOD of CPU time,
so a side's samples in a category x PERIOD / messages is the CPU time the
category took per message. A sample's category is that of its first frame,
leaf upwards, that has one: a copy inside __xsk_rcv is AF_XDP rx, one inside
xsk_build_skb is AF_XDP tx. User-space frames are named by the object file
(build/obj/user/DIR/*.o) that defines their symbol: ubperf is built without
frame pointers, so above its leaf only the frame a system call came from is
sure, and the leaf decides. What a side did not run for in the window is off
CPU, split as /proc/PID/schedstat splits the same seconds (--sched: the time the
process ran and the time it waited runnable on a run queue, read before and
after perf record): runnable while the machine's other work ran, or asleep.
The window is the first to the last sample before the client's run ended; its
messages are the client's delivered goodput (--interval series, 1 s each) over
the part of each second the window covers. --start: when the client process
began, boot-time seconds (the run's clock starts after its setup, a little
later: the window is placed up to that much early).
ROUNDS.csv: case,round,side,category,samples,messages,window_s,period_us.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
from collections import Counter, OrderedDict

# Stacking order, bottom up; the table's rows.
CATEGORIES = OrderedDict([	# key: (the picture's label, the table's row)
    ("icrc", ("ICRC", "ICRC (user/lib/icrc.c, ISA-L or zlib CRC)")),
    ("copy", ("endpoint copies", "endpoint copies (libc memmove/memcpy)")),
    ("payload", ("ubperf payload", "ubperf payload fill/check")),
    ("transport", ("transport core", "transport core (user/transport)")),
    ("endpoint", ("endpoint loop, rings", "endpoint loop, framing, AF_XDP rings")),
    ("xsk_tx", ("AF_XDP tx (sendto)", "AF_XDP tx syscall (sendto, skb build)")),
    ("veth", ("veth, NAPI", "veth and NAPI (veth_xmit, veth_poll)")),
    ("xdp", ("XDP program", "XDP program (bpf_prog_*)")),
    ("xsk_rx", ("AF_XDP rx (__xsk_rcv)", "AF_XDP rx (__xsk_rcv copy into UMEM)")),
    ("sched", ("scheduling, waits", "scheduling, poll waits")),
    ("other", ("other", "other on CPU")),
    ("runq", ("off CPU, runnable", "off CPU, runnable (waiting for a CPU)")),
    ("asleep", ("off CPU, asleep", "off CPU, asleep (nothing to do)")),
])
OFF = ("runq", "asleep")

# Kernel functions by category, matched on the symbol's full name or its prefix.
KERNEL = [
    ("xsk_rx", re.compile(r"^(__xsk_rcv|xsk_rcv|__xsk_map_redirect|__xsk_map_flush|xsk_map_|xdp_do_redirect"
                          r"|xdp_do_flush|xp_alloc|xsk_recvmsg|__xsk_recvmsg|xsk_poll)")),
    ("xdp", re.compile(r"^(bpf_prog_|bpf_dispatcher_xdp)")),
    ("veth", re.compile(r"^(veth_|__dev_forward_skb|net_rx_action|__napi_poll|napi_|__napi_|gro_)")),
    ("xsk_tx", re.compile(r"^(xsk_sendmsg|__xsk_sendmsg|xsk_generic_xmit|__xsk_generic_xmit|xsk_build_skb"
                          r"|xsk_destruct_skb|xsk_skb_|__dev_direct_xmit|__sys_sendto|__x64_sys_sendto)")),
    ("sched", re.compile(r"^(__schedule|schedule|finish_task_switch|pick_next_task|do_sys_poll|do_poll"
                         r"|__x64_sys_poll|__x64_sys_ppoll|ep_poll|do_epoll_wait|do_nanosleep|hrtimer_nanosleep"
                         r"|__x64_sys_sched_yield|do_sched_yield)")),
]
USER_DIRS = {"transport": "transport", "endpoint": "endpoint", "xsk": "endpoint", "io": "endpoint",
             "lib": "endpoint"}


def symbol_files(objs):
    """{symbol: category} for the functions user/ objects define (ICRC: user/lib/icrc.o)."""
    cats = {}
    for d in sorted(os.listdir(objs)):
        path = os.path.join(objs, d)
        if not os.path.isdir(path):
            continue
        for f in sorted(os.listdir(path)):
            if not f.endswith(".o"):
                continue
            out = subprocess.run(["nm", "--defined-only", os.path.join(path, f)], capture_output=True,
                                 text=True, check=True).stdout
            if d == "lib" and f == "icrc.o":
                cat = "icrc"
            elif d == "ubperf":
                cat = "payload" if f == "payload.o" else "other"
            else:
                cat = USER_DIRS.get(d, "other")
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in "tTW":
                    cats.setdefault(p[2], cat)
    return cats


def frame_category(sym, dso, users):
    if dso.startswith("[kernel") or sym.startswith("bpf_prog_"):
        for cat, rx in KERNEL:
            if rx.match(sym):
                return cat
        return None
    base = os.path.basename(dso)
    if base.startswith("libisal") or (base.startswith("libz.") and sym.startswith("crc32")):
        return "icrc"
    if base.startswith("libc."):
        if re.search(r"mem(move|cpy)", sym):
            return "copy"
        if re.search(r"sendto", sym):
            return "xsk_tx"	# the endpoint's only sendto: the AF_XDP tx kick
        if re.search(r"^_*(ppoll|poll)\b", sym):
            return "sched"
    if base.startswith(("libxdp", "libbpf")):
        return "endpoint"
    return users.get(sym)


def samples(path):
    """((comm, pid, time), [(sym, dso), ...] leaf first) of each sample in `perf script -F comm,pid,tid,time,ip,sym,dso`."""
    head, frames = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if head:
                    yield head, frames
                head, frames = None, []
            elif not line[0].isspace():
                m = re.match(r"^(.*?)\s+(\d+)/(\d+)\s+([0-9.]+):", line)
                head = (m.group(1), int(m.group(2)), float(m.group(4))) if m else None
            else:
                m = re.match(r"^\s*[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$", line)
                if m:
                    frames.append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
    if head:
        yield head, frames


def classify(frames, users):
    for sym, dso in frames:
        cat = frame_category(sym, dso, users)
        if cat:
            return cat
    return "other"


def window_messages(j, w0, w1):
    """Messages the client saw delivered from w0 to w1 s into its run: each --interval's rate over its overlap."""
    bits, prev = 0.0, 0.0
    for p in j["per_channel"][0]["series"]:
        bits += p["goodput_bps"] * max(0.0, min(p["t_s"], w1) - max(prev, w0))
        prev = p["t_s"]
    return bits / 8 / j["size"]


def cmd_round(a):
    users = symbol_files(a.objs)
    sides = {a.client: "client", a.server: "server"}
    count = Counter()
    j = json.load(open(a.json))
    # perf's clock is boot time (-k boottime), as is the client's start (/proc/PID/stat).
    end = a.start + j["duration_s"]
    t0 = t1 = None
    for (comm, pid, t), frames in samples(a.script):
        if t > end:
            break
        t0 = t if t0 is None else t0
        t1 = t
        side = sides.get(pid)
        if side is None:
            # The NAPI work ksoftirqd took over from the two processes (veth, XDP, AF_XDP rx).
            if not comm.startswith("ksoftirqd"):
                continue
            side = "ksoftirqd"
            cat = classify(frames, users)
            if cat not in ("veth", "xdp", "xsk_rx"):
                continue
        else:
            cat = classify(frames, users)
        count[side, cat] += 1
    if t0 is None:
        sys.exit(f"profile_attrib: no samples in {a.script}")
    msgs = window_messages(j, t0 - a.start, t1 - a.start)
    if msgs <= 0:
        sys.exit(f"profile_attrib: {a.case}, round {a.round}: no message delivered in the window")
    wall, crun, cwait, srun, swait = (float(x) for x in a.sched.split())
    for side, run, wait in (("client", crun, cwait), ("server", srun, swait)):
        on = sum(n for (s, _), n in count.items() if s == side)
        off = max(0.0, (t1 - t0) * 1e6 / a.period_us - on)
        runq = min(1.0, wait / max(wall * 1e9 - run, 1.0))
        count[side, "runq"] = off * runq
        count[side, "asleep"] = off * (1 - runq)
    w = csv.writer(sys.stdout, lineterminator="\n")
    for (side, cat), n in sorted(count.items()):
        w.writerow([a.case, a.round, side, cat, f"{n:.1f}", f"{msgs:.1f}", f"{t1 - t0:.4f}", a.period_us])


def cmd_table(a):
    rows = list(csv.DictReader(open(a.rounds)))
    cases = OrderedDict()
    for r in rows:
        cases.setdefault(r["case"], OrderedDict()).setdefault(r["round"], []).append(r)
    stack = open(a.stack, "w", newline="")
    sw = csv.writer(stack, lineterminator="\n")
    sw.writerow(["bar", "category", "us"])
    for case, rounds in cases.items():
        # Rounds pooled: every sample over every message of the case.
        msgs = sum(float(rs[0]["messages"]) for rs in rounds.values())
        wall = sum(float(rs[0]["window_s"]) for rs in rounds.values())
        period = float(next(iter(rounds.values()))[0]["period_us"])
        us = Counter()
        for rs in rounds.values():
            for r in rs:
                us[r["side"], r["category"]] += float(r["samples"]) * period / msgs
        sides = [s for s in ("client", "server", "ksoftirqd") if any(k[0] == s for k in us)]
        wall_us = wall * 1e6 / msgs
        cpu = sum(v for k, v in us.items() if k[1] not in OFF)
        print(f"\n{case}: {len(rounds)} round(s), {msgs:.0f} messages in {wall:.2f} s "
              f"({wall_us:.1f} us of wall time a message, {msgs * 65536 * 8 / wall / 1e6:.0f} Mbit/s)")
        print(f"{'us per 64 KiB message':44}" + "".join(f"{s:>11}" for s in sides) + f"{'both':>9}{'% CPU':>8}")
        for cat, (_, name) in CATEGORIES.items():
            v = [us[s, cat] for s in sides]
            both = sum(v)
            share = "" if cat in OFF else f"{100 * both / cpu:7.1f}%"
            print(f"{name:44}" + "".join(f"{x:11.1f}" for x in v) + f"{both:9.1f}{share:>8}")
        def oncpu(side):
            return sum(v for k, v in us.items() if k[0] == side and k[1] not in OFF)

        print(f"{'on CPU':44}" + "".join(f"{oncpu(s):11.1f}" for s in sides) + f"{cpu:9.1f}")
        ic = sum(us[s, "icrc"] for s in sides)
        per = "; ".join(f"{s} {us[s, 'icrc']:.1f} of {oncpu(s):.1f}, {100 * us[s, 'icrc'] / oncpu(s):.1f} %"
                        for s in ("client", "server") if oncpu(s))
        print(f"ICRC: {ic:.1f} us a message, {100 * ic / cpu:.1f} % of the CPU time both sides spent on it "
              f"({per}), {100 * ic / (2 * wall_us):.1f} % of the two sides' wall time")
        for rnd, rs in rounds.items():
            m = float(rs[0]["messages"])
            ic = sum(float(r["samples"]) for r in rs if r["category"] == "icrc") * period / m
            tot = sum(float(r["samples"]) for r in rs if r["category"] not in OFF) * period / m
            print(f"  round {rnd}: {m:.0f} messages in {float(rs[0]['window_s']):.2f} s, CPU {tot:.1f} us/message, "
                  f"ICRC {ic:.1f} ({100 * ic / tot if tot else 0:.1f} %)")
        for s in sides:
            # ksoftirqd took a bar only where it took a share worth seeing.
            if s == "ksoftirqd" and sum(v for k, v in us.items() if k[0] == s) < cpu / 50:
                continue
            for cat, (label, _) in CATEGORIES.items():
                sw.writerow([f"{case}, {s}", label, f"{us[s, cat]:.3f}"])
    stack.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("round")
    r.add_argument("--objs", required=True)
    r.add_argument("--script", required=True)
    r.add_argument("--client", type=int, required=True)
    r.add_argument("--server", type=int, required=True)
    r.add_argument("--case", required=True)
    r.add_argument("--round", required=True)
    r.add_argument("--json", required=True)
    r.add_argument("--start", type=float, required=True)
    r.add_argument("--sched", required=True)
    r.add_argument("--period-us", type=float, required=True)
    t = sub.add_parser("table")
    t.add_argument("rounds")
    t.add_argument("stack")
    a = p.parse_args()
    if a.cmd == "round":
        cmd_round(a)
    else:
        cmd_table(a)


if __name__ == "__main__":
    main()
