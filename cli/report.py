"""`txncheck report SPEC`: a design-review document from the spec's tables and the checks' results."""
from __future__ import annotations

import sys

from .common import SPEC_HELP, model_request_spec


def register(sub):
    p = sub.add_parser("report", help="write a design-review report (HTML, Markdown) of a spec and its checks",
                       description="Run the checks a design review needs (every config not marked heavy, every "
                                   "protocol version, every variant; each as `check --continue`) or read them "
                                   "(--from), and write DIR/report.html (self-contained, prints to PDF), "
                                   "DIR/report.md (GitHub) with DIR/figures/*.png, and DIR/report.json.")
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    p.add_argument("--config", action="append", metavar="NAME", help="a config to cover (repeatable; default: every "
                   "config not marked heavy)")
    p.add_argument("--protocol", action="append", metavar="VERSION",
                   help="a protocol version to cover (repeatable; default: every version the spec has)")
    p.add_argument("--variants", nargs="+", default=["all"], metavar="NAME",
                   help="variants to check: all (default), none, or names")
    p.add_argument("--engine", default="vector", help="the explicit engine for the checks (default vector)")
    p.add_argument("--out", metavar="DIR", help="where to write the report (default out/report-SPEC)")
    p.add_argument("--from", dest="from_dir", metavar="RESULTS_DIR",
                   help="read the results a previous report or `txncheck check` wrote instead of running checks")
    p.add_argument("--compare", metavar="BASE_DIR", help="a base report's folder: add a change review against it")
    p.add_argument("--prove", action="store_true", help="also run k-induction (z3) per config: proved for every depth")
    p.add_argument("--quiet", action="store_true", help="do not list the checks as they run")
    p.set_defaults(run=run)


def run(args) -> int:
    from txncheck.checker import engines
    from txncheck.reports.report import ReportRequest, make_report, report_paths
    from txncheck.spec.errors import ConfigError
    spec = model_request_spec(args.spec)
    engine = engines.engine_named(args.engine)
    if not engine.in_process:
        raise ConfigError(f"--engine {args.engine}: a report runs its checks in this process; use vector or scalar")
    if args.from_dir and (args.config or args.protocol or args.variants != ["all"] or args.prove):
        raise ConfigError("--from reads results already written; drop --config, --protocol, --variants and --prove")
    variants = args.variants[0] if args.variants in (["all"], ["none"]) else tuple(args.variants)
    out = args.out or f"out/report-{spec.name}"
    req = ReportRequest(spec, args.spec, tuple(args.config or ()), tuple(args.protocol or ()), variants,
                        engine.name, out, args.from_dir, args.compare, args.prove)
    say = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    report = make_report(req, say)
    html, md = report_paths(out)
    for item in report["look_first"]:
        print(f"  look at: {item['text']}")
    print(f"report: {html}\nmarkdown: {md}")
    return 0
