"""Judging a `leads_to` property with the restricted graph in memory or in files, on a random graph:
`python benchmarks/live_disk_bench.py STATES EDGES_PER_STATE SHARE_MIB [memory|files]...`.

The graph: a path through every state (so everything is reachable) plus random edges that mostly go a few
states on and sometimes a few back (cycles), 242 actions each its own weakly fair group (Kafka nightly's
count), 2% of the states the goal. `live.check` judges it with the restricted graph gathered into memory
(`memory`, whatever the estimate says) or left in files (`files`, `checker/vector/live_disk.py`), its passes
over the edges a block at a time within SHARE_MIB. Prints, per way, the
seconds, tracemalloc's peak (numpy's arrays; the memory-mapped files' pages are the page cache's) over the
whole judging and per phase of the files' way, and the lasso's length: both ways must give the same lasso.
"""
from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from types import SimpleNamespace

import numpy as np

from txncheck.checker import liveness
from txncheck.checker.vector import live, live_disk
from txncheck.checker.vector.spill import SpillDir
from txncheck.spec.model import LEADS_TO

GROUPS = 242


class _Outcome(SimpleNamespace):
    def path(self, index):
        return [0] * int(index)  # the path along the first edges


class _Inits:
    def start(self, outcome, index):
        return (0,)


def graph(n: int, per_state: float):
    rng = np.random.default_rng(1)
    E = int(n * per_state)
    src = rng.integers(0, n, E)
    dst = np.clip(src + rng.integers(-3, 40, E), 0, n - 1)
    src[:n - 1], dst[:n - 1] = np.arange(n - 1), np.arange(1, n)
    act = rng.integers(0, GROUPS, E).astype(np.int32)
    groups = liveness.FairnessGroups(tuple(f"g{i}" for i in range(GROUPS)), np.zeros(GROUPS, bool),
                                     np.arange(GROUPS + 1, dtype=np.int64), np.arange(GROUPS, dtype=np.int64))
    outcome = _Outcome(distinct=n, edges=(src, dst, act), fps=rng.permutation(n).astype(np.uint64) + 1,
                       level_sizes=(1,) * n, goal_masks={"P": rng.random(n) < 0.02},
                       when_masks={"P": np.ones(n, bool)})
    model = SimpleNamespace(properties=[SimpleNamespace(name="P", kind=LEADS_TO)])
    return model, outcome, groups


def _phases(peaks: dict) -> None:
    """Record each phase's tracemalloc peak and seconds in `peaks` (the files' way)."""
    def timed(name, f):
        def run(*a, **k):
            tracemalloc.reset_peak()
            t = time.perf_counter()
            out = f(*a, **k)
            peaks[name] = (tracemalloc.get_traced_memory()[1], time.perf_counter() - t)
            return out
        return run
    live_disk.fair_states = timed("fair states", live_disk.fair_states)
    live_disk.DiskLiveGraph.reach = timed("backward search", live_disk.DiskLiveGraph.reach)
    live_disk._fair_cycle = timed("fair cycle", live_disk._fair_cycle)
    init = live_disk.DiskLiveGraph.__init__
    live_disk.DiskLiveGraph.__init__ = timed("files built", init)


def main(n: int, per_state: float, share_mib: float, ways: list[str]) -> None:
    model, outcome, groups = graph(n, per_state)
    share = int(share_mib * 2**20)
    print(f"{n:,} states, {len(outcome.edges[0]):,} edges, share {share_mib:,.0f} MiB")
    for way in ways:
        live.EDGE_BYTES = 0 if way == "memory" else 1 << 40  # always gathered, or never
        peaks: dict = {}
        if way == "files":
            _phases(peaks)
        with tempfile.TemporaryDirectory() as work:
            spill = SpillDir(work)
            tracemalloc.start()
            t = time.perf_counter()
            try:
                lasso = live.check(model, outcome, "P", groups, _Inits(), spill, share)
                got = "holds" if lasso is None else f"lasso of {len(lasso.actions)} actions, loop at {lasso.loop}"
            except live.GraphTooLarge as err:
                got = str(err)
            seconds = time.perf_counter() - t
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            spill.close()
        print(f"{way}: {seconds:.1f} s, {got}" + ("" if peaks else f", peak {peak / 2**20:,.0f} MiB"))
        for name, (p, s) in peaks.items():
            print(f"  {name}: {s:.1f} s, peak {p / 2**20:,.0f} MiB")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]), float(args[1]), float(args[2]), args[3:] or ["memory", "files"])
