"""`txncheck replay TRACE`: re-execute a trace and confirm its violation, or say where it diverges."""
from __future__ import annotations

import os
import re
import sys


def register(sub):
    p = sub.add_parser("replay", help="re-execute a trace file and confirm what it claims")
    p.add_argument("trace", metavar="TRACE", help="a trace .json written by `txncheck check`")
    p.add_argument("--baseline", action="store_true",
                   help="replay against the spec without the trace's variant (the fix should stop it)")
    p.add_argument("--show", action="store_true", help="print the trace as text first")
    p.add_argument("--html", metavar="FILE.html", nargs="?", const="",
                   help="also write the trace's viewer page when the replay confirms it (default: TRACE with .html)")
    p.set_defaults(run=run)


def run(args) -> int:
    from txncheck.traces.replay import replay
    from txncheck.traces.schema import load
    from txncheck.traces.text import trace_text
    trace = load(args.trace)
    if args.show:
        _emit(trace_text(trace))  # as `check` writes it, or plainer if the trace's model cannot be built
    report = replay(trace, None if args.baseline else "__trace__")
    against = "baseline spec" if args.baseline else (f"variant {trace.variant}" if trace.variant else "spec")
    if report.confirmed:
        _emit(f"replay: confirmed against {trace.spec} {against}: {report.message}")
        if args.html is not None:
            _emit(f"page: {_write_page(args, trace)}")
        if trace.kind == "cti":
            return 3  # as `txncheck bmc --induction`: not a violation, not a proof
        return 1 if trace.kind in ("violation", "deadlock", "unrecoverable", "lasso") else 0
    where = f" (diverges at step {report.diverged_at})" if report.diverged_at is not None else ""
    _emit(f"replay: NOT confirmed against {trace.spec} {against}: {report.message}{where}")
    return 2


def _write_page(args, trace) -> str:
    from txncheck.reports.atomic import write_atomic
    from txncheck.reports.viewer import render_trace_page
    from .view import default_page
    page = args.html or default_page(args.trace)
    html, _ = render_trace_page(trace, os.path.basename(page), confirmed=not args.baseline)
    write_atomic(page, html)
    return page


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _emit(text: str) -> None:
    """Print text that quotes a trace file: its control characters escaped (a file must not drive the
    terminal), and what the output encoding cannot hold (`→` under PYTHONIOENCODING=ascii) escaped
    too rather than a crash."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) + "\n"
    out = sys.stdout
    try:
        out.write(text)
    except UnicodeEncodeError:
        enc = getattr(out, "encoding", None) or "ascii"
        out.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))
