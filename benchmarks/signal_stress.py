"""Signals at random moments during `txncheck check`: the output directory is always one whole run.

    python benchmarks/signal_stress.py [--runs N] [--seed S] [--workdir DIR]

For each of SIGINT, SIGTERM and SIGKILL, starts N runs of a passing check into an --out that
holds a previous run's violation, sends the signal after a random delay spread over the whole
process lifetime (start-up, search, judging, writing, the swap), and checks afterwards:
- the exit code is 130 (SIGINT), 143 (SIGTERM, or death by SIGTERM, which a shell reports as
  143), death by SIGKILL, or the run's own verdict when it finished first;
- `out/result.json` and the traces it names are exactly one run's (the old one or the new one);
- no staging directory or spilled visited set is left (after SIGKILL: none once the next run
  into the same --out has started);
- no traceback on stderr.
Signals that land before Python has run txncheck's first line (the interpreter's own start-up)
are counted apart: there the operating system's and Python's defaults apply.
Prints a table of counts; exit 1 if any check failed.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
NEW = ["check", "twophase", "--set", "rm=8", "--memory-budget", "8", "--out", "run"]
OLD = ["check", "twophase", "--variant", "commit-without-all-prepared", "--set", "rm=8", "--out", "run"]


def one_run_in(out: str) -> str | None:
    """The verdict of the one run `out` holds, or None when it is a mix or unreadable."""
    try:
        result = json.load(open(os.path.join(out, "result.json")))
        named = {p["trace"] for p in result["properties"] if p["trace"]}
        tdir = os.path.join(out, "traces")
        files = {f"traces/{f}" for f in os.listdir(tdir) if f.endswith(".json")} if os.path.isdir(tdir) else set()
        if files != named or os.path.exists(os.path.join(out, "spill")):
            return None
        for n in named:
            json.load(open(os.path.join(out, n)))
        return result["verdict"]
    except (OSError, ValueError, KeyError):
        return None


def stress(sig: int, runs: int, rng: random.Random, work: str) -> dict:
    counts = {"runs": 0, "signalled": 0, "finished first": 0, "before start-up": 0, "failures": 0}
    subprocess.run([EXE, *OLD], cwd=work, capture_output=True, check=False)
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -signal.SIGKILL}[sig]
    for _ in range(runs):
        p = subprocess.Popen([EXE, *NEW], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.0, 1.3))
        p.send_signal(sig)
        _, err = p.communicate(timeout=300)
        counts["runs"] += 1
        rc = p.returncode
        startup = rc == -sig or ("KeyboardInterrupt" in err and "from txncheck.cli.main import entry" in err)
        ok = one_run_in(os.path.join(work, "run")) is not None
        if sig == signal.SIGKILL:
            subprocess.run([EXE, *NEW[:-2], "--out", "run"], cwd=work, capture_output=True, check=False)
        left = [e for e in os.listdir(work) if e.startswith(".txncheck-")]
        ok = ok and not left
        if startup and sig != signal.SIGKILL:
            counts["before start-up"] += 1
        elif rc == expected:
            counts["signalled"] += 1
            ok = ok and "Traceback" not in err
        elif rc == 0:
            counts["finished first"] += 1
            ok = ok and "Traceback" not in err
        else:
            ok = False
        if not ok:
            counts["failures"] += 1
            print(f"FAILED: signal {sig}, exit {rc}, leftovers {left}, stderr: {err[-500:]}", file=sys.stderr)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs per signal (default 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", help="where to run (default: a fresh temporary directory)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = args.workdir or tempfile.mkdtemp(prefix="txncheck-signal-stress-")
    os.makedirs(work, exist_ok=True)
    failed = 0
    print(f"signal stress: {args.runs} runs per signal, seed {args.seed}, in {work}")
    print("| signal | runs | signalled | finished first | before start-up | failures |")
    print("|---|---|---|---|---|---|")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        c = stress(sig, args.runs, rng, work)
        failed += c["failures"]
        print(f"| {signal.Signals(sig).name} | {c['runs']} | {c['signalled']} | {c['finished first']} | "
              f"{c['before start-up']} | {c['failures']} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
