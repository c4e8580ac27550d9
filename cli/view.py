"""`txncheck view TRACE.json`: the trace's viewer page (and, on request, its chart as PNG or SVG)."""
from __future__ import annotations

import os
import sys

from txncheck.spec.errors import ConfigError


def register(sub):
    p = sub.add_parser("view", help="write a trace's viewer page: its sequence chart and step panel, as one HTML file",
                       description="Write a self-contained HTML page for a trace written by `txncheck check`, "
                                   "`bmc --out` or `replay`: the sequence chart (one lane per actor instance, one "
                                   "arrow per message), a step panel, and the violated property. The trace is "
                                   "replayed first: a trace the spec does not confirm is refused (exit 2).")
    p.add_argument("trace", metavar="TRACE", help="a trace .json")
    p.add_argument("-o", "--output", metavar="FILE.html", help="where to write the page (default: TRACE with .html)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--png", metavar="FILE.png", help="also draw the chart as a PNG image")
    p.add_argument("--svg", metavar="FILE.svg", help="also draw the chart as an SVG image")
    p.set_defaults(run=run)


def default_page(trace_path: str) -> str:
    base = trace_path[:-len(".json")] if trace_path.endswith(".json") else trace_path
    return base + ".html"


def run(args) -> int:
    from txncheck.reports.atomic import check_writable, write_atomic
    from txncheck.reports.viewer import render_trace_page
    from txncheck.traces.schema import load

    page = args.output or default_page(args.trace)
    if not page.endswith((".html", ".htm")):
        raise ConfigError(f"-o {page}: the page is HTML; give a file name ending in .html")
    outputs = [("-o", page)] + [(f"--{fmt}", path) for fmt, path in (("png", args.png), ("svg", args.svg)) if path]
    for option, path in outputs:
        check_writable(path, option)
        if os.path.abspath(path) == os.path.abspath(args.trace):
            raise ConfigError(f"{option} {path} is the trace itself; give another file name")
    for fmt, path in (("png", args.png), ("svg", args.svg)):
        if path and not path.lower().endswith("." + fmt):
            raise ConfigError(f"--{fmt} {path}: give a file name ending in .{fmt}")
    trace = load(args.trace)
    html, story = render_trace_page(trace, os.path.basename(page))
    if args.png or args.svg:
        from txncheck.reports.sequence_plot import plot_story
        for fmt, path in (("png", args.png), ("svg", args.svg)):
            if path:
                plot_story(story, trace, path, fmt)
                print(f"chart: {path}")
    write_atomic(page, html)
    print(f"page: {page}")
    if args.open:
        import webbrowser
        if not webbrowser.open("file://" + os.path.abspath(page)):
            print("txncheck: no browser could be started; open the page yourself", file=sys.stderr)
    return 0
