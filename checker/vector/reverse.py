"""The stored edges by destination, built and searched out of core within a memory share, for judging graph
properties under `--memory-budget` where `recoverable.EdgeSweep` would outgrow it.

Building is a distribution sort in three sequential passes over the (memory-mapped) edges, a block at a
time: the in-degree of every state; each edge appended to the bucket file of its destination's range of
states (ranges cut so that a bucket's edges fit the share); each bucket read back, sorted by destination
(stable) and appended to the reverse CSR's files (sources and actions by destination; the row starts
are the in-degrees' running sum). Blocks are read in edge order and every sort is stable, so the sources
come out in the order of a stable sort by destination (`recoverable.grouped_by`). The search's sorted-run
merge does not fit here: its runs are keyed by distinct fingerprints, while many edges share a
destination, and destinations are dense state indices, which a distribution by range sorts in one pass.

The backward breadth-first search reads the CSR files through read-only memory maps (their pages are the
page cache's, not the process's private memory), a piece of the frontier at a time so that the edges
gathered at once fit the share; per state it holds a few boolean masks and the frontier. Its result is
the set `EdgeSweep.reach` computes.
"""
from __future__ import annotations

import numpy as np

from ..lookup import concat_ranges
from ..recoverable import EdgeSweep, index_dtype, sweep_bytes
from ..resources import split_budget
from .spill import SpillDir, mapped

# bytes per edge the passes hold at once: an edge's columns read (8 + 8 + 4), the sort's order (8) and the
# sorted copies written (8 + 4), with room for numpy's temporaries
EDGE_BYTES = 48
MIN_BLOCK = 4096  # edges: below this numpy's per-call costs dominate


def edge_block(share: int) -> int:
    """Edges handled at once within `share` bytes."""
    return max(MIN_BLOCK, int(share) // EDGE_BYTES)


class DiskReverseGraph:
    """The edges by destination in files under `spill` (removed when it closes), built and searched within
    `share` bytes besides a few bytes per state."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, act: np.ndarray, spill: SpillDir, share: int):
        self.n = int(n)
        self.block = edge_block(share)
        self.spill = spill
        E = len(dst)
        self.edges = E
        sdt, adt = index_dtype(self.n), np.int32
        starts = self._row_starts(dst)
        # bucket b holds the destinations [cuts[b], cuts[b+1]): whole rows of about `block` edges each
        cuts = np.unique(np.r_[np.searchsorted(starts, np.arange(0, E, self.block), side="right") - 1, self.n])
        cuts[0] = 0
        buckets = [tuple(spill.new(f"reverse-bucket-{k}") for k in ("dst", "src", "act")) for _ in cuts[:-1]]
        for a in range(0, E, self.block):
            d = np.asarray(dst[a:a + self.block])
            s, c = np.asarray(src[a:a + self.block]), np.asarray(act[a:a + self.block])
            b = np.searchsorted(cuts, d, side="right") - 1
            if len(cuts) <= 2**15:  # numpy's stable sort of 16-bit values is a radix sort, 8x faster than of int64
                b = b.astype(np.int16)
            order = np.argsort(b, kind="stable")
            b = b[order]
            bounds = np.flatnonzero(np.r_[True, b[1:] != b[:-1], True])
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                at = order[lo:hi]
                for path, col, dt in zip(buckets[b[lo]], (d, s, c), (sdt, sdt, adt)):
                    spill.append(path, col[at].astype(dt, copy=False))
        self.src_path, self.act_path = spill.new("reverse-src"), spill.new("reverse-act")
        for b, paths in enumerate(buckets):
            count = int(starts[cuts[b + 1]] - starts[cuts[b]])
            d, s, c = (np.fromfile(p, dtype=dt, count=count) for p, dt in zip(paths, (sdt, sdt, adt)))
            order = np.argsort(d, kind="stable")
            spill.append(self.src_path, s[order])
            spill.append(self.act_path, c[order])
            for p in paths:
                spill.remove(p)
        self.starts_path = spill.new("reverse-starts")
        spill.append(self.starts_path, starts)
        del starts
        self.starts = mapped(self.starts_path, np.int64, self.n + 1) if self.n else np.zeros(1, np.int64)
        self.src = mapped(self.src_path, sdt, E)
        self.act = mapped(self.act_path, adt, E)

    def _row_starts(self, dst: np.ndarray) -> np.ndarray:
        """Where each destination's row starts (the in-degrees' running sum), counted a block at a time."""
        counts = np.zeros(self.n + 1, dtype=np.int64)
        for a in range(0, len(dst), self.block):
            d = np.asarray(dst[a:a + self.block])
            lo, hi = int(d.min()), int(d.max())
            if hi - lo < 4 * len(d):  # a narrow range: a count over it
                counts[lo + 1:hi + 2] += np.bincount(d - lo, minlength=hi - lo + 1)
            else:
                u, k = np.unique(d, return_counts=True)
                counts[u + 1] += k
        np.cumsum(counts, out=counts)
        return counts

    def reach(self, goal: np.ndarray, actions: np.ndarray | None = None,
              states: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the states from which some goal state is reachable through the edges whose action
        `actions` marks and whose two ends `states` marks (None: every one)."""
        reach = np.array(goal, dtype=bool)
        fresh = np.zeros(self.n, dtype=bool)
        frontier = np.flatnonzero(reach)
        starts, src, act = self.starts, self.src, self.act
        while len(frontier):
            any_edge = False
            for f in range(0, len(frontier), self.block):  # a slice of the frontier, then its rows in pieces
                rows = frontier[f:f + self.block]
                lo = np.asarray(starts[rows])
                counts = np.asarray(starts[rows + 1]) - lo
                if not counts.any():
                    continue
                any_edge = True
                # pieces of rows that together fit a block (a row longer than a block is one piece)
                ends = np.cumsum(counts)
                cut = np.unique(np.r_[0, np.searchsorted(ends, np.arange(self.block, ends[-1], self.block),
                                                         side="right"), len(rows)])
                for i, j in zip(cut[:-1], cut[1:]):
                    idx = concat_ranges(lo[i:j], counts[i:j])
                    preds = np.asarray(src[idx])
                    ok = None
                    if actions is not None:
                        ok = actions[np.asarray(act[idx])]
                    if states is not None:
                        both = states[preds] & np.repeat(states[rows[i:j]], counts[i:j])
                        ok = both if ok is None else ok & both
                    if ok is not None:
                        preds = preds[ok]
                    preds = preds[~reach[preds]]
                    fresh[preds] = True
            if not any_edge:
                break
            frontier = np.flatnonzero(fresh)
            fresh[frontier] = False
            reach[frontier] = True
        return reach

    def close(self) -> None:
        self.starts = self.src = self.act = None
        for p in (self.starts_path, self.src_path, self.act_path):
            self.spill.remove(p)


class JudgingGraph:
    """An outcome's edges for the backward searches of judging its graph properties, made on first use and
    shared by them: `EdgeSweep` over the edges as stored, or `DiskReverseGraph` when a memory budget is set and
    the sweep could outgrow judging's share of it (`resources.BudgetSplit.judging`); `close` removes its files."""

    def __init__(self, outcome, budget: int | None, workdir: str | None):
        self.outcome, self.budget, self.workdir = outcome, budget, workdir
        self.graph = None
        self.spill: SpillDir | None = None

    def out_of_core(self) -> bool:
        if self.budget is None or self.outcome.edges is None:
            return False
        return sweep_bytes(self.outcome.distinct, len(self.outcome.edges[1])) > split_budget(self.budget).judging

    def spill_dir(self) -> SpillDir:
        """Where judging's files go (the run's workdir, or a temporary directory), removed by `close`."""
        if self.spill is None:
            self.spill = SpillDir(self.workdir)
        return self.spill

    def reach(self, goal, actions=None, states=None):
        """The backward search of the graph (`EdgeSweep.reach`, or the out-of-core one), made on the first call."""
        return self.get().reach(goal, actions, states)

    def get(self):
        if self.graph is None:
            if self.out_of_core():
                src, dst, act = self.outcome.edges
                self.graph = DiskReverseGraph(self.outcome.distinct, src, dst, act, self.spill_dir(),
                                              split_budget(self.budget).judging)
            else:
                self.graph = EdgeSweep.of(self.outcome)
        return self.graph

    @property
    def spilled_bytes(self) -> int | None:
        """Bytes written to build the out-of-core graph (None when it was not built)."""
        return self.spill.written if self.spill is not None else None

    def close(self) -> None:
        if isinstance(self.graph, DiskReverseGraph):
            self.graph.close()
        if self.spill is not None:
            self.spill.close()
