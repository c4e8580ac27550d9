"""Spark engine vs vector engine, side by side in one run, and the per-level cost model.

    .venv/bin/python benchmarks/spark_bench.py [SPEC] [CONFIG] [--master local[2]] [--partitions 4]

Prints a Markdown block for benchmarks/RESULTS.md ("Spark engine" section): both engines' wall
times, the ratio, and a least-squares fit of level time = fixed + per_state * new states (+ per
generated successor), from the Spark run's per-level timings; shuffle bytes per successor are
estimated from the packed row (part, fp, pfp, action, state) that crosses the shuffle.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
from txncheck.checker.vector.explore import explore as vector_explore


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spec", nargs="?", default="kafka")
    ap.add_argument("config", nargs="?", default="nightly")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=4)
    a = ap.parse_args()
    ref = ModelRef(a.spec, a.config)
    model = ref.build()
    opts = ExploreOptions()
    t = time.perf_counter()
    v = vector_explore(model, opts)
    tv = time.perf_counter() - t
    t = time.perf_counter()
    o = explore(ref, opts, SparkOptions(master=a.master, partitions=a.partitions))
    ts = time.perf_counter() - t
    assert o.distinct == v.distinct and o.level_sizes == v.level_sizes, "engines disagree"
    secs = np.array([x for x in o.extra["level_seconds"]], dtype=float)
    new = np.array(o.level_sizes[1:] + [0] * (len(secs) - len(o.level_sizes) + 1), dtype=float)[:len(secs)]
    warm = slice(1, None)  # the first level pays Python worker start-up and kernel compilation
    A = np.vstack([np.ones_like(new[warm]), new[warm]]).T
    (fixed, per_state), *_ = np.linalg.lstsq(A, secs[warm], rcond=None)
    k = ref.kernel()
    row = 4 + 8 + 8 + 4 + k.width * k.dtype.itemsize + 4  # part, fp, pfp, action, state, arrow offset
    print(f"### {a.spec} {a.config} on {a.master}, {a.partitions} partitions\n")
    print("| engine | distinct | levels | wall s |\n|---|---|---|---|")
    print(f"| vector | {v.distinct:,} | {len(v.level_sizes)} | {tv:.2f} |")
    print(f"| spark  | {o.distinct:,} | {len(o.level_sizes)} | {ts:.2f} |")
    print(f"\nratio spark/vector: {ts / tv:.1f}; first level (start-up) {secs[0]:.2f} s; "
          f"median level {np.median(secs[warm]):.2f} s")
    print(f"fit: level time = {fixed:.3f} s + {per_state * 1e6:.2f} us x new states; "
          f"shuffle bytes per successor candidate ~{row} (generated/distinct = {o.generated / max(o.distinct, 1):.1f})")


if __name__ == "__main__":
    main()
