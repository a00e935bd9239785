#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The pictures of `make bench`: CSV files the bench scripts write, drawn as SVG.

    bench/plot_svg.py loss    LOSS.csv    OUT.svg   goodput against loss beside the analytic curves
    bench/plot_svg.py buffer  BUFFER.csv  OUT.svg   the WPS egress buffer against time, per skew
    bench/plot_svg.py rounds  ROUNDS.csv  OUT.svg   ns/packet per round, the programs beside their floors
    bench/plot_svg.py stack   STACK.csv   OUT.svg   us per 64 KiB message by category, a stacked bar per case and side

Plain SVG written here, no plotting library: the bench machine needs python3 only.
CSV columns (a header line first):
    loss:   loss_pct,mode,fraction,window      (fraction of the same mode's loss-free goodput)
    buffer: series,t_s,buffered,bound          (bound: rate x skew + one group, the expected ceiling)
    rounds: program,round,ns
    stack:  bar,category,us                    (categories stacked bottom up in the order of the first bar;
                                               "off CPU, runnable", "off CPU, asleep" and "other" in greys)
"""
import csv
import math
import sys
from collections import OrderedDict

W, H = 820, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 270, 40, 55
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f",
          "#bcbd22", "#e377c2"]


def nice_ticks(lo, hi, n=6):
    """About n round-numbered ticks covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first, last = math.floor(lo / step), math.ceil(hi / step - 1e-9)
    ticks = [round(k * step, 10) for k in range(first, last + 1)]
    return ticks


def fmt(v):
    return f"{v:g}" if abs(v) < 1e5 else f"{v:.3g}"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_head(title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'font-family="sans-serif" font-size="12">',
            f'<rect width="{W}" height="{H}" fill="white"/>',
            f'<text x="{LEFT}" y="22" font-size="14" font-weight="bold">{esc(title)}</text>']


def plot(series, title, xlabel, ylabel, out, ylo=None, yhi=None):
    """series: list of dicts {name, points [(x, y)], style 'line'|'points'|'dash'}."""
    xs = [x for s in series for x, _ in s["points"]]
    ys = [y for s in series for _, y in s["points"]]
    if not xs:
        sys.exit(f"plot_svg: no data for {out}")
    xt = nice_ticks(min(xs), max(xs))
    yt = nice_ticks(min(ys) if ylo is None else ylo, max(ys) if yhi is None else yhi)
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + (x - x0) / (x1 - x0 or 1) * pw

    def py(y):
        return TOP + ph - (y - y0) / (y1 - y0 or 1) * ph

    o = svg_head(title)
    for t in xt:
        o.append(f'<line x1="{px(t):.1f}" y1="{TOP}" x2="{px(t):.1f}" y2="{TOP + ph}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{fmt(t)}</text>')
    for t in yt:
        o.append(f'<line x1="{LEFT}" y1="{py(t):.1f}" x2="{LEFT + pw}" y2="{py(t):.1f}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    o.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{LEFT + pw / 2}" y="{H - 14}" text-anchor="middle">{esc(xlabel)}</text>')
    o.append(f'<text transform="translate(16 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">'
             f'{esc(ylabel)}</text>')
    for i, s in enumerate(series):
        c = s.get("color") or COLORS[i % len(COLORS)]
        pts = sorted(s["points"])
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        if s["style"] in ("line", "dash"):
            dash = ' stroke-dasharray="6 4"' if s["style"] == "dash" else ""
            o.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        if s["style"] in ("points", "line") and len(pts) < 60:
            o += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{c}"/>' for x, y in pts]
        ly = TOP + 10 + 18 * i
        lx = LEFT + pw + 14
        dash = ' stroke-dasharray="6 4"' if s["style"] == "dash" else ""
        o.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 22}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/>')
        o.append(f'<text x="{lx + 28}" y="{ly + 4}">{esc(s["name"])}</text>')
    o.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(o) + "\n")


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def loss(csv_path, out):
    """Measured fractions per mode, the SR (1-p) and GBN (1-p)/(1-p+W p) curves drawn continuously."""
    r = rows(csv_path)
    modes = OrderedDict()
    for x in r:
        modes.setdefault(x["mode"], []).append((float(x["loss_pct"]), float(x["fraction"])))
    window = int(r[0]["window"])
    pmax = max(float(x["loss_pct"]) for x in r)
    grid = [pmax * i / 200 for i in range(201)]
    series = [{"name": m, "points": p, "style": "line"} for m, p in modes.items()]
    series.append({"name": "SR ref (1-p)", "style": "dash", "color": "#555",
                   "points": [(g, 1 - g / 100) for g in grid]})
    series.append({"name": f"GBN ref, W={window}", "style": "dash", "color": "#aaa",
                   "points": [(g, (1 - g / 100) / (1 - g / 100 + window * g / 100)) for g in grid]})
    plot(series, "ubperf goodput under loss (routed hop, nftables)", "loss, % of packets",
         "fraction of the loss-free goodput", out, ylo=0, yhi=max(1, max(y for p in modes.values() for _, y in p)))


def buffer(csv_path, out):
    """Buffered packets over time for each series, its expected ceiling dashed in the same colour."""
    r = rows(csv_path)
    names = OrderedDict()
    for x in r:
        names.setdefault(x["series"], []).append(x)
    series = []
    for i, (n, pts) in enumerate(names.items()):
        c = COLORS[i % len(COLORS)]
        series.append({"name": n, "style": "line", "color": c,
                       "points": [(float(p["t_s"]), float(p["buffered"])) for p in pts]})
        bounds = [float(p["bound"]) for p in pts if p["bound"]]
        if bounds:
            t = [float(p["t_s"]) for p in pts]
            series.append({"name": f"{n}: rate x skew + group", "style": "dash", "color": c,
                           "points": [(min(t), bounds[-1]), (max(t), bounds[-1])]})
    plot(series, "WPS egress: packets held for reordering", "time, s", "packets buffered", out, ylo=0)


def rounds(csv_path, out):
    """ns/packet of every program in every round: the programs beside their floors, round by round."""
    progs = OrderedDict()
    for x in rows(csv_path):
        progs.setdefault(x["program"], []).append((float(x["round"]), float(x["ns"])))
    series = [{"name": n, "points": p, "style": "line"} for n, p in progs.items()]
    plot(series, "ns/packet by round (BPF_PROG_RUN), beside the floors", "round", "ns/packet", out, ylo=0)


def stack(csv_path, out):
    """One bar per case and side, its microseconds a message stacked by category (bench/profile_attrib.py)."""
    bars, cats = OrderedDict(), []
    for x in rows(csv_path):
        bars.setdefault(x["bar"], {})[x["category"]] = float(x["us"])
        if x["category"] not in cats:
            cats.append(x["category"])
    if not bars:
        sys.exit(f"plot_svg: no data for {out}")
    yt = nice_ticks(0, max(sum(b.values()) for b in bars.values()))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    slot = pw / len(bars)

    def py(y):
        return TOP + ph - y / yt[-1] * ph

    # Off CPU light: the time a side waited, not what it ran.
    fixed = {"off CPU, runnable": "#c8c8c8", "off CPU, asleep": "#ececec", "other": "#555555"}
    color = {c: fixed.get(c, COLORS[i % len(COLORS)]) for i, c in enumerate(cats)}
    o = svg_head("Where each microsecond of a 64 KiB message goes (ubperf, perf cpu-clock)")
    for t in yt:
        o.append(f'<line x1="{LEFT}" y1="{py(t):.1f}" x2="{LEFT + pw}" y2="{py(t):.1f}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    for i, (name, b) in enumerate(bars.items()):
        x, y = LEFT + slot * (i + 0.2), 0.0
        for c in cats:
            v = b.get(c, 0.0)
            if v > 0:
                o.append(f'<rect x="{x:.1f}" y="{py(y + v):.1f}" width="{slot * 0.6:.1f}" '
                         f'height="{py(y) - py(y + v):.1f}" fill="{color[c]}"><title>{esc(name)}: {esc(c)} '
                         f'{v:.1f} us</title></rect>')
            y += v
        case, _, side = name.partition(", ")
        o.append(f'<text x="{x + slot * 0.3:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{esc(side)}</text>')
        o.append(f'<text x="{x + slot * 0.3:.1f}" y="{TOP + ph + 30}" text-anchor="middle">{esc(case)}</text>')
    o.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(f'<text transform="translate(16 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">'
             f'us per 64 KiB message</text>')
    for i, c in enumerate(reversed(cats)):
        ly, lx = TOP + 10 + 18 * i, LEFT + pw + 14
        o.append(f'<rect x="{lx}" y="{ly - 6}" width="22" height="12" fill="{color[c]}"/>')
        o.append(f'<text x="{lx + 28}" y="{ly + 4}">{esc(c)}</text>')
    o.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(o) + "\n")


if __name__ == "__main__":
    kinds = {"loss": loss, "buffer": buffer, "rounds": rounds, "stack": stack}
    if len(sys.argv) != 4 or sys.argv[1] not in kinds:
        sys.exit("usage: bench/plot_svg.py loss|buffer|rounds|stack CSV OUT.svg")
    kinds[sys.argv[1]](sys.argv[2], sys.argv[3])
