"""Two builds of txncheck side by side on one `check --engine spark` command: whole-process wall time and
the Python driver's peak RSS, runs alternated (A B A B ...), plus a check that both wrote the same
verdicts and byte-identical traces.

    .venv/bin/python benchmarks/spark_recoverable_bench.py --a BEFORE_PKG --b AFTER_PKG [--pairs 3]
        [--work DIR] -- check kafka --config ci --engine spark --master local[2] --partitions 4 \\
        --property LIVE-1 --property LIVE-2 --property LIVE-3

BEFORE_PKG and AFTER_PKG are directories holding a `txncheck` package (each put first on PYTHONPATH).
The driver's peak is its own `getrusage(RUSAGE_SELF).ru_maxrss` at exit: the JVM and the Python workers
are other processes (`/usr/bin/time` would report the largest of them, often the JVM). Each run writes
to its own `--out` under DIR; the traces of every run are compared with the first run's.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAUNCH = """
import json, resource, runpy, sys
sys.argv = ["txncheck"] + sys.argv[1:]
try:
    runpy.run_module("txncheck.cli.main", run_name="__main__")
finally:
    sys.stderr.write("\\nBENCH " + json.dumps({"driver_peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})
                     + "\\n")
"""


def run(pkg: str, args: list[str], out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=pkg)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", LAUNCH, *args, "--out", str(out)], env=env, capture_output=True,
                       text=True)
    wall = time.perf_counter() - t
    line = [x for x in p.stderr.splitlines() if x.startswith("BENCH ")]
    if not line:
        raise SystemExit(f"run failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    got = json.loads(line[-1][6:])
    result = json.loads((out / "result.json").read_text())
    got.update(wall=wall, rc=p.returncode, verdict=result["verdict"], seconds=result["stats"]["seconds"],
               properties={x["name"]: x["outcome"] for x in result["properties"]},
               phases=result["stats"].get("phases", {}),
               reach={k: v for k, v in result["stats"].get("reach", {}).items() if k != "rounds"} |
               ({"rounds": len(result["stats"]["reach"]["rounds"])} if "reach" in result["stats"] else {}),
               traces={f.name: f.read_bytes() for f in sorted((out / "traces").glob("*.json"))})
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="the first build's package directory (before)")
    ap.add_argument("--b", required=True, help="the second build's package directory (after)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--work", help="where the runs write (default: a temporary directory, removed)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the txncheck command line, without --out")
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    work = Path(a.work or tempfile.mkdtemp(prefix="txncheck-bench-"))
    runs: dict[str, list[dict]] = {"a": [], "b": []}
    try:
        for i in range(a.pairs):
            for key, pkg in (("a", a.a), ("b", a.b)):
                out = work / f"{key}{i}"
                shutil.rmtree(out, ignore_errors=True)
                r = run(pkg, args, out)
                runs[key].append(r)
                print(f"{key}{i}: wall {r['wall']:.1f} s, driver peak {r['driver_peak_rss'] / 2**20:.0f} MiB, "
                      f"exit {r['rc']}, phases {r['phases']}, reach {r['reach']}", file=sys.stderr, flush=True)
        first = runs["a"][0]
        for r in runs["a"] + runs["b"]:
            assert r["rc"] == first["rc"] and r["properties"] == first["properties"], "verdicts differ"
            assert r["traces"] == first["traces"], "traces differ"
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    med = {k: (statistics.median(r["wall"] for r in v), statistics.median(r["driver_peak_rss"] for r in v))
           for k, v in runs.items()}
    print(f"`txncheck {' '.join(args)}`, {a.pairs} pairs, medians (all runs: same exit code, property outcomes "
          f"and trace bytes: {len(first['traces'])} traces)\n")
    print("| build | wall s | driver peak RSS MiB | runs: wall s / peak MiB |\n|---|---|---|---|")
    for k, label in (("a", "before"), ("b", "after")):
        each = ", ".join(f"{r['wall']:.1f} / {r['driver_peak_rss'] / 2**20:.0f}" for r in runs[k])
        print(f"| {label} | {med[k][0]:.1f} | {med[k][1] / 2**20:.0f} | {each} |")
    print(f"\nafter/before: wall {med['b'][0] / med['a'][0]:.2f}, driver peak {med['b'][1] / med['a'][1]:.2f}")


if __name__ == "__main__":
    main()
