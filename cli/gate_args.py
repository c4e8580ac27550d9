"""`txncheck gate`'s command line. The gate's machinery (workers, cache, baseline, reports) is imported
only when the command runs, so that every other command starts without it."""
from __future__ import annotations

import os


def register(sub):
    p = sub.add_parser("gate", help="run the checks of a gate file (txncheck.toml) as a CI gate, with JUnit, "
                       "SARIF, annotations and a job summary")
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="the gate file (default txncheck.toml, else [tool.txncheck.gate] in pyproject.toml)")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    p.add_argument("--sarif", metavar="PATH", help="write a SARIF 2.1.0 report")
    p.add_argument("--summary", metavar="PATH", help="write a Markdown summary (also appended to "
                   "$GITHUB_STEP_SUMMARY when it is set)")
    p.add_argument("--annotations", action="store_true",
                   help="print GitHub Actions ::error annotations (on by default when GITHUB_ACTIONS=true)")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="run at most N entries at once (default: the cores)")
    p.add_argument("--only", action="append", metavar="NAME", help="run only this entry (repeatable)")
    p.add_argument("--out", metavar="DIR", default=os.path.join("out", "gate"),
                   help="where each entry's result.json and traces go, as DIR/NAME (default out/gate)")
    p.add_argument("--baseline", metavar="PATH",
                   help="compare every entry with this baseline (default: txncheck-baseline.json beside the gate "
                   "file, when it exists); a lost witness, row, violation or a changed count fails the entry")
    p.add_argument("--update-baseline", nargs="?", const="", metavar="PATH",
                   help="write the baseline (default: --baseline, else txncheck-baseline.json beside the gate file) "
                   "from this run; written only when every entry showed what it must")
    p.add_argument("--cache", metavar="DIR", help="where green outcomes are cached (default OUT/.cache)")
    p.add_argument("--no-cache", action="store_true", help="search every entry even when it is cached")
    p.set_defaults(run=_run)


def _run(args) -> int:
    from .gate import run
    return run(args)
