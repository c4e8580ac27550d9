"""How long judging liveness takes after the search: `python benchmarks/liveness_bench.py [SPEC CONFIG]`.

Searches once (vector engine, to the end as `--continue` does: judging needs the whole graph), then times
each property judged on the state graph, over the edges as stored (`recoverable.EdgeSweep`, as `judge` does): `leads_to` and `eventually` (checker/liveness.py) beside `recoverable`
(checker/recoverable.py). Prints one line each. Memory is kept in the process as `check` keeps it
(`checker/allocator.py`).
"""
from __future__ import annotations

import sys
import time

from txncheck.checker import allocator, engines, liveness, recoverable
from txncheck.checker.outcome import ExploreOptions
from txncheck.spec.errors import TxncheckError
from txncheck.spec.model import EVENTUALLY, LEADS_TO, RECOVERABLE
from txncheck.spec.request import ModelRequest


def main(spec: str = "kafka", config: str = "ci") -> None:
    with allocator.reused_memory():
        _timed(spec, config)


def _timed(spec: str, config: str) -> None:
    req = ModelRequest.of(spec, config, {}, None)
    model = req.ground()
    t = time.perf_counter()
    out = engines.explore(engines.engine_named("vector"), req, model, ExploreOptions(stop_on_violation=False), None)
    print(f"{spec} {config}: search {time.perf_counter() - t:.2f} s, {out.distinct:,} states, "
          f"{len(out.edges[0]) if out.edges else 0:,} edges{'' if out.complete else ' (incomplete: not judged)'}")
    if not out.complete:
        return
    groups = liveness.fairness_groups(model)
    graph = recoverable.EdgeSweep.of(out)  # the backward searches sweep the edges as stored: nothing to build
    for p in model.properties:
        t = time.perf_counter()
        if p.kind in (EVENTUALLY, LEADS_TO):
            verdict = "holds" if liveness.check(model, out, p.name, groups, graph) is None else "violated"
        elif p.kind == RECOVERABLE:
            verdict = "holds" if recoverable.check(model, out, p.name, graph) is None else "violated"
        else:
            continue
        print(f"  {p.name:<10} {p.kind:<12} {verdict:<9} {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    if len(sys.argv) > 3:
        print("usage: python benchmarks/liveness_bench.py [SPEC [CONFIG]]  (default: kafka ci)", file=sys.stderr)
        sys.exit(2)
    try:
        main(*sys.argv[1:3])
    except TxncheckError as err:  # a misspelt spec or config: its message names the fix
        print(f"liveness_bench: {err}", file=sys.stderr)
        sys.exit(2)
