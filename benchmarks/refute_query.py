"""The one query of `txncheck bmc --refute-below`, solved by z3's `fd` solver and by CaDiCaL.

    .venv/bin/python benchmarks/refute_query.py VARIANT PROPERTY DEPTH [--solver fd|cadical ...]

Builds what `bmc(..., from_depth=DEPTH + 1, refute_below=True)` asks first: PROPERTY fails first at
some depth <= DEPTH of Kafka `tiny` (or the variant), on paths with an idle prefix, with the
properties and strengthening invariants the induction pass keeps asserted on every state. Each
solver gets the same formula in turn and the script prints its verdict and seconds (RESULTS.md,
"B7 shown shortest by one query"). VARIANT `baseline` is the spec's baseline.
"""
from __future__ import annotations

import argparse
import sys
import time
from types import SimpleNamespace

import z3

from txncheck.checker.symbolic import cadical
from txncheck.checker.symbolic.bmc import always_properties, proved_for_every_depth, refute_below_query
from txncheck.checker.symbolic.unroll import Transition
from txncheck.cli.tables import load_model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variant")
    ap.add_argument("property")
    ap.add_argument("depth", type=int)
    ap.add_argument("--solver", action="append", choices=("fd", "cadical"))
    args = ap.parse_args(argv)
    m = load_model(SimpleNamespace(spec="kafka", variant=None if args.variant == "baseline" else args.variant,
                                   config=None, set=[]))
    tr = Transition(m)
    t0 = time.perf_counter()
    _, kept, _ = proved_for_every_depth(m, always_properties(m), tr, "smt")
    print(f"induction pass: {len(kept)} kept ({time.perf_counter() - t0:.1f} s)", flush=True)
    prop = next(p for p in m.properties if p.name == args.property)
    invariants = z3.And(*[tr.holds(p) for p in kept if p is not prop])
    for solver in args.solver or ["cadical", "fd"]:
        fd, _ = refute_below_query(m, tr, args.depth, [prop], invariants)
        t0 = time.perf_counter()
        r = cadical.check(fd)[0] if solver == "cadical" else str(fd.check())
        print(f"{args.property} fails first at some depth <= {args.depth}: {solver} {r} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
