"""What `txncheck report` costs beyond the checks it runs.

    .venv/bin/python benchmarks/report_bench.py [--spec kafka] [--out /tmp/report-bench]

Writes the spec's default report (every config not marked heavy x every protocol version x every
variant, each `check --continue`) and prints the time spent in the checks (with writing their
results, traces and viewer pages) and in the rest (figures, report.json, Markdown, HTML); then the
same report again from those results (`--from`), which replays every trace for its viewer page.
docs/report.md records a run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

from txncheck.reports.report import ReportRequest, make_report
from txncheck.spec import catalog


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="kafka")
    ap.add_argument("--out", default="/tmp/report-bench")
    args = ap.parse_args()
    spec = catalog.load(args.spec)
    first, again = os.path.join(args.out, "report"), os.path.join(args.out, "again")
    shutil.rmtree(args.out, ignore_errors=True)
    timing: dict = {}
    t0 = time.perf_counter()
    report = make_report(ReportRequest(spec, args.spec, out=first), timing=timing)
    total = time.perf_counter() - t0
    searches = sum(r["seconds"] for r in report["runs"])
    print(f"{args.spec}: {len(report['runs'])} runs; search {searches:.1f} s (the engines' own clocks)")
    print(f"  report:        {total:6.1f} s = checks {timing['checks'] - timing['pages']:.1f} s (search, judging, "
          f"writing results and traces) + viewer pages {timing['pages']:.1f} s + the rest {timing['rest']:.1f} s "
          "(figures, JSON, Markdown, HTML)")
    timing = {}
    t0 = time.perf_counter()
    make_report(ReportRequest(spec, args.spec, out=again, from_dir=first), timing=timing)
    print(f"  report --from: {time.perf_counter() - t0:6.1f} s = reading and replaying {timing['checks']:.1f} s "
          f"+ the rest {timing['rest']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
