"""Fuzz `txncheck replay` with a few thousand mutated real traces and print what it did.

    .venv/bin/python benchmarks/fuzz_traces.py [--n 3000] [--seed 15]

The mutator and the bar are tests/test_trace_fuzz.py's: never exit 4, never a traceback, a trace
changed where a reader would see it is exit 2 with a message naming a field, and a trace unchanged
to a reader replays as before. Prints the exit-code histogram, the mutations by class, and any
failure with the seed that replays it; exits 1 if there was one. docs/traces.md records a run.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

from test_trace_fuzz import Base, check_one, make_base_traces, mutate  # noqa: E402


def fuzz(bases, n: int, seed: int, workdir: str, report=None) -> collections.Counter:
    """Run `n` mutations (mutation i from random.Random(f"{seed}:{i}")); count exit codes, classes,
    tracebacks, exit 4 and failures of the bar."""
    counts = collections.Counter({"exit 4": 0, "tracebacks": 0, "failures": 0})
    path = os.path.join(workdir, "mutated.json")
    for i in range(n):
        rnd = random.Random(f"{seed}:{i}")
        base = rnd.choice(bases)
        what, blob = mutate(base, rnd)
        show = rnd.random() < 0.5
        try:
            code, cls = check_one(base, blob, path, show, what)
        except AssertionError as err:
            counts["failures"] += 1
            text = str(err)
            counts["exit 4"] += " exit 4\n" in text
            counts["tracebacks"] += "Traceback" in text
            if report is not None and counts["failures"] <= 5:
                report(f"FAILURE at mutation {i} (seed {seed}): {text[:1500]}")
            continue
        counts[f"exit {code}"] += 1
        counts[f"class {cls}, exit {code}"] += 1
        counts[f"op {what.split(':')[0]}"] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="mutations to run (default 3000)")
    ap.add_argument("--seed", type=int, default=15, help="seed (default 15)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="txncheck-fuzz-") as tmp:
        t0 = time.perf_counter()
        bases = [Base(p) for p in make_base_traces(tmp)]
        print(f"base traces: {', '.join(os.path.relpath(b.path, tmp) for b in bases)}")
        counts = fuzz(bases, args.n, args.seed, tmp, report=print)
        secs = time.perf_counter() - t0
    print(f"{args.n} mutations (seed {args.seed}) in {secs:.0f} s")
    for key in sorted(counts):
        print(f"  {key:<22} {counts[key]}")
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
