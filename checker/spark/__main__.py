"""A minimal runner of the Spark engine (used by the tests and benchmarks while the CLI is the
normal entry point): prints a JSON summary of the outcome.

    python -m txncheck.checker.spark SPEC [--config C] [--set k=v ...] [--variant V] [--symmetry]
        [--master URL] [--partitions N] [--tasks T] [--store DIR] [--resume DIR] [--driver-memory 1g] [--progress]
"""
from __future__ import annotations

import argparse
import json
import sys

from txncheck.checker.outcome import ExploreOptions
from txncheck.spec.errors import TxncheckError
from txncheck.spec.request import ModelRequest

from .engine import ModelRef, SparkOptions, explore


def summary(o) -> dict:
    return {"distinct": o.distinct, "level_sizes": list(o.level_sizes), "generated": o.generated,
            "complete": o.complete, "stop_reason": o.stop_reason,
            "violations": {k: {"fp": int(o.fps[v]), "length": len(o.path(v)), "path": o.path(v)}
                           for k, v in sorted(o.violations.items())},
            "witnesses": {k: {"fp": int(o.fps[v]), "length": len(o.path(v))} for k, v in sorted(o.witnesses.items())},
            "deadlock": None if o.deadlock is None else int(o.fps[o.deadlock]),
            "fired": [int(x) for x in o.fired], "elapsed": o.elapsed, "extra": o.extra,
            "peak_memory": o.peak_memory}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m txncheck.checker.spark")
    ap.add_argument("spec")
    ap.add_argument("--config")
    ap.add_argument("--set", action="append", default=[], metavar="K=V")
    ap.add_argument("--variant")
    ap.add_argument("--symmetry", action="store_true")
    ap.add_argument("--deadlock", action="store_true")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--partitions", type=int)
    ap.add_argument("--tasks", type=int, help="Spark tasks per level (default: the cluster's parallelism)")
    ap.add_argument("--store")
    ap.add_argument("--resume")
    ap.add_argument("--driver-memory")
    ap.add_argument("--executor-memory")
    ap.add_argument("--max-states", type=int)
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--json", help="write the summary here (default: stdout)")
    a = ap.parse_args(argv)
    overrides = tuple(tuple(x.split("=", 1)) for x in a.set)
    opts = ExploreOptions(symmetry=a.symmetry, check_deadlock=a.deadlock, progress=a.progress,
                          max_states=a.max_states)
    sopts = SparkOptions(master=a.master, partitions=a.partitions, tasks=a.tasks, store=a.store, resume=a.resume,
                         driver_memory=a.driver_memory, executor_memory=a.executor_memory)
    try:
        request = ModelRequest.of(a.spec, a.config, dict(overrides), a.variant)
        model = request.ground()
        # a spec file travels with the reference: the executors need not have it
        o = explore(ModelRef.of(request, model, a.symmetry), opts, sopts, model)
    except TxncheckError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = json.dumps(summary(o), indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
