"""Spark engine vs vector engine, side by side in one run, and the per-level cost model.

    .venv/bin/python benchmarks/spark_bench.py [SPEC] [CONFIG] [--set K=V ...] [--master local[2]]
        [--partitions 4] [--tasks T] [--continue] [--json FILE]

Runs the vector engine, then the Spark engine (a fresh SparkContext: its start-up is included in
the Spark wall time), checks that they agree exactly, and prints a Markdown block for
benchmarks/RESULTS.md ("Spark engine" section):

- both engines' wall times and the ratio;
- Spark's phases: context start-up, first level (Python workers start, kernels compile), the other
  levels, stop, the driver's index build;
- a least-squares fit over the warm levels: level time = fixed + per_state x new states;
- exchange bytes: the candidate files every level writes for the next (the engine's shuffle,
  measured from the files) per new state and per successor candidate, and the Parquet bytes
  stored per state.
With --master spark://..., the same on a standalone cluster.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
from txncheck.checker.vector.explore import explore as vector_explore


def fit(secs: np.ndarray, new: np.ndarray) -> tuple[float, float]:
    A = np.vstack([np.ones_like(new), new]).T
    (fixed, per_state), *_ = np.linalg.lstsq(A, secs, rcond=None)
    return float(fixed), float(per_state)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spec", nargs="?", default="kafka")
    ap.add_argument("config", nargs="?", default="nightly")
    ap.add_argument("--set", action="append", default=[], metavar="K=V")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--json", help="also write the measurements here")
    ap.add_argument("--continue", dest="cont", action="store_true",
                    help="explore the whole space past violations (the CLI's --continue)")
    a = ap.parse_args()
    overrides = tuple(tuple(x.split("=", 1)) for x in a.set)
    config = None if a.config in ("-", "none") else a.config
    ref = ModelRef(a.spec, config, overrides)
    model = ref.build()
    opts = ExploreOptions(stop_on_violation=not a.cont)
    t = time.perf_counter()
    v = vector_explore(model, opts)
    tv = time.perf_counter() - t
    t = time.perf_counter()
    o = explore(ref, opts, SparkOptions(master=a.master, partitions=a.partitions, tasks=a.tasks))
    ts = time.perf_counter() - t
    assert (o.distinct, o.level_sizes, o.generated) == (v.distinct, v.level_sizes, v.generated), "engines disagree"
    assert np.array_equal(o.fired, v.fired) and set(o.violations) == set(v.violations), "engines disagree"
    secs = np.array(o.extra["level_seconds"], dtype=float)
    new = np.array((list(o.level_sizes[1:]) + [0] * len(secs))[:len(secs)], dtype=float)
    warm = slice(1, None)  # the first level pays Python worker start-up and kernel compilation
    fixed, per_state = fit(secs[warm], new[warm])
    small = secs[warm][new[warm] < 1000]
    steps = [s for s in o.extra["tasks"] if s["mode"] != "count"]
    cand_bytes = sum(s["cand_bytes"] for s in steps)
    cand_rows = sum(s["cand_rows"] for s in steps)
    level_bytes = sum(s["level_bytes"] for s in steps)
    ph = o.extra["phases"]
    label = f"{a.spec} {config or ''} {' '.join(a.set)}{' --continue' if a.cont else ''}".strip()
    res = {"case": label, "master": a.master, "partitions": o.extra["partitions"],
           "distinct": o.distinct, "levels": len(o.level_sizes), "generated": o.generated,
           "vector_s": round(tv, 2), "spark_s": round(ts, 2), "ratio": round(ts / tv, 1),
           "session_s": ph.get("session"), "first_level_s": round(float(secs[0]), 2),
           "levels_s": round(float(secs.sum()), 2), "stop_s": ph.get("stop"), "index_s": ph.get("index"),
           "edges_s": ph.get("edges"),
           "median_level_s": round(float(np.median(secs[warm])), 3),
           "median_small_level_s": round(float(np.median(small)), 3) if len(small) else None,
           "fit_fixed_s": round(fixed, 3), "fit_per_state_us": round(per_state * 1e6, 2),
           "exchange_bytes_per_state": round(cand_bytes / max(o.distinct, 1), 1),
           "exchange_bytes_per_candidate": round(cand_bytes / max(cand_rows, 1), 1),
           "candidates_per_state": round(cand_rows / max(o.distinct, 1), 2),
           "parquet_bytes_per_state": round(level_bytes / max(o.distinct, 1), 1),
           "jobs": len(o.extra["tasks"])}
    print(f"### {label} on {a.master}, {res['partitions']} partitions\n")
    print("| engine | distinct | levels | wall s |\n|---|---|---|---|")
    print(f"| vector | {v.distinct:,} | {len(v.level_sizes)} | {tv:.2f} |")
    print(f"| spark  | {o.distinct:,} | {len(o.level_sizes)} | {ts:.2f} |")
    print(f"\nratio spark/vector: {ts / tv:.1f}. Spark phases: context start {ph.get('session', 0):.2f} s, "
          f"first level {secs[0]:.2f} s, other {len(secs) - 1} levels {secs[warm].sum():.2f} s "
          f"(median {np.median(secs[warm]):.3f} s; levels under 1,000 new states: median "
          f"{res['median_small_level_s']} s), stop {ph.get('stop', 0):.2f} s, index {ph.get('index', 0):.2f} s, "
          f"edge index (recoverable properties) {ph.get('edges', 0):.2f} s; "
          f"{res['jobs']} Spark jobs (one single-stage job per level, plus the first expansion)")
    print(f"fit over warm levels: level time = {fixed:.3f} s + {per_state * 1e6:.2f} us x new states")
    print(f"exchange (candidate files): {res['exchange_bytes_per_state']} B per new state, "
          f"{res['exchange_bytes_per_candidate']} B per candidate, {res['candidates_per_state']} candidates "
          f"per state; Parquet store {res['parquet_bytes_per_state']} B per state")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res | {"level_seconds": o.extra["level_seconds"], "level_sizes": o.level_sizes}, f, indent=1)


if __name__ == "__main__":
    main()
