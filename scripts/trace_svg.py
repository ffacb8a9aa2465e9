#!/usr/bin/env python3
"""Draws a RAL trace (Chrome trace-event JSON, include/ral/trace.h) as an SVG timeline: one row of
tracks per thread and per device queue (named by the trace's metadata), spans nested by time,
coloured by category, named where they are wide enough.
For pictures in the docs; to explore a trace, open it in https://ui.perfetto.dev.

  trace_svg.py TRACE.json OUT.svg [--execution N] [--width PIXELS] [--title TEXT]

--execution N draws only the time of the N-th "execution" span (0 = the first; negative counts
from the end) and what lies inside it; without it, the whole trace.
"""
import argparse
import html
import json
import sys

COLOURS = {
    "execution": "#4e79a7",
    "submission": "#76b7b2",
    "ral": "#f28e2b",
    "kernel": "#59a14f",
    "driver": "#e15759",
    "device": "#b07aa1",
}
ROW = 18  # pixels per nesting level
LABEL_PX = 6.2  # approximate width of one character at the font size used


def load(path):
    """The trace's spans, and the names of its tracks that are not threads (device queues)."""
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return [e for e in events if e.get("ph") == "X"], names


def window(events, execution):
    if execution is None:
        start = min(e["ts"] for e in events)
        end = max(e["ts"] + e["dur"] for e in events)
        return start, end
    executions = sorted((e for e in events if e["cat"] == "execution"), key=lambda e: e["ts"])
    if not executions:
        sys.exit("trace_svg: the trace has no execution span")
    e = executions[execution]
    return e["ts"], e["ts"] + e["dur"]


def depths(spans):
    """Nesting level of each span of one thread (spans sorted by start, longest first)."""
    out, stack = [], []
    for s in spans:
        while stack and stack[-1] <= s["ts"]:
            stack.pop()
        out.append(len(stack))
        stack.append(s["ts"] + s["dur"])
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--execution", type=int)
    p.add_argument("--width", type=int, default=1200)
    p.add_argument("--title", default="")
    args = p.parse_args()

    events, names = load(args.trace)
    start, end = window(events, args.execution)
    span = max(end - start, 1e-9)
    inside = [e for e in events if e["ts"] < end and e["ts"] + e["dur"] > start]
    threads = sorted({e["tid"] for e in inside})
    left, top, width = 70, 40, args.width - 90
    x = lambda t: left + (min(max(t, start), end) - start) / span * width  # noqa: E731

    parts, y = [], top
    for tid in threads:
        spans = sorted((e for e in inside if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
        levels = depths(spans)
        rows = max(levels) + 1
        label = names.get(tid, f"thread {tid}").split(" (")[0]
        parts.append(f'<text x="4" y="{y + 13}" class="t">{html.escape(label)}</text>')
        for s, d in zip(spans, levels):
            x0, x1 = x(s["ts"]), x(s["ts"] + s["dur"])
            w = max(x1 - x0, 0.5)
            colour = COLOURS.get(s["cat"], "#bab0ac")
            tip = html.escape(f'{s["name"]} ({s["cat"]}): {s["dur"] / 1000:.3f} ms')
            parts.append(
                f'<rect x="{x0:.1f}" y="{y + d * ROW}" width="{w:.1f}" height="{ROW - 2}" '
                f'fill="{colour}" stroke="#fff" stroke-width="0.6"><title>{tip}</title></rect>'
            )
            if w > LABEL_PX * 4:
                label = s["name"][: int(w / LABEL_PX)]
                parts.append(
                    f'<text x="{x0 + 2:.1f}" y="{y + d * ROW + 12}" class="s">'
                    f"{html.escape(label)}</text>"
                )
        y += rows * ROW + 12

    # The time axis, in milliseconds from the window's start.
    ms = span / 1000
    step = next(s for s in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if ms / s <= 12)
    tick, axis = 0.0, []
    while tick <= ms + 1e-9:
        tx = left + tick / ms * width
        axis.append(f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{y}" class="g"/>')
        axis.append(f'<text x="{tx + 2:.1f}" y="{top - 8}" class="t">{tick:g} ms</text>')
        tick += step
    legend = "".join(
        f'<rect x="{left + 130 * i}" y="{y + 6}" width="12" height="12" fill="{c}"/>'
        f'<text x="{left + 130 * i + 16}" y="{y + 16}" class="t">{k}</text>'
        for i, (k, c) in enumerate(COLOURS.items())
    )
    height = y + 30
    title = f'<text x="4" y="14" class="h">{html.escape(args.title)}</text>' if args.title else ""
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{args.width}" height="{height}" '
        f'font-family="sans-serif">'
        "<style>.t{font-size:11px;fill:#333}.s{font-size:10px;fill:#fff}"
        ".h{font-size:13px;font-weight:bold;fill:#222}.g{stroke:#ddd;stroke-width:1}</style>"
        f'<rect width="100%" height="100%" fill="#fff"/>{title}{"".join(axis)}{"".join(parts)}'
        f"{legend}</svg>\n"
    )
    with open(args.out, "w") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
