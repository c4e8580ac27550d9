"""`recoverable` properties on the stored edge graph: from every reachable state where `when`
holds, some goal state must be reachable (using only actions whose rows lack the excluded tags).

Computed by reverse reachability: a backward breadth-first search from the goal states over the
reversed edges, in numpy (CSR by destination, `ReverseGraph`; under a memory budget the same graph
in files, `vector/reverse.py`), then the `when` states that cannot reach a goal state are the
violations. The Spark engine computes the same on its executors (`spark/reach.py`, over the edges
in its store) and returns the chosen states in `SearchOutcome.unrecoverable`.
"""
from __future__ import annotations

import numpy as np

from txncheck.spec.ground_ir import GroundModel

from .lookup import concat_ranges
from .outcome import SearchOutcome


def index_dtype(n: int):
    """The narrowest of int32 and int64 that indexes `n` items."""
    return np.int32 if n < 2**31 else np.int64


def grouped_by(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, starts) of `keys` (ints in [0, n)): the positions of key 0's entries, then key 1's, ..., each
    group in position order (what a stable argsort gives), and where each group starts in it (n + 1 entries,
    int64). A counting sort, by scipy's conversion of a COO matrix with one entry per key, in column
    `position`, to CSR: on Kafka nightly's 88 M edges it takes a few seconds where the argsort took 7-21."""
    from scipy.sparse import coo_array  # only graph properties pay for importing scipy

    E = len(keys)
    dt = index_dtype(max(n, E) + 1)
    m = coo_array((np.ones(E, dtype=bool), (keys.astype(dt, copy=False), np.arange(E, dtype=dt))),
                  shape=(n, E)).tocsr()
    # every column holds one entry, so no two are summed and each row's columns come out ascending
    return m.indices.astype(index_dtype(E), copy=False), m.indptr.astype(np.int64, copy=False)


class ReverseGraph:
    """The stored edges by destination (CSR), sorted once per search and shared by every property judged on
    the graph: on Kafka nightly's 88 M edges even the counting sort takes seconds."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, act: np.ndarray | None = None):
        self.n = n
        self.edges = (src, dst, act)  # the outcome's own arrays: `reach` filters by their actions
        # 32-bit where they fit: on Kafka nightly each is 88 M entries
        self.order, self.starts = grouped_by(dst, n)
        self.src_sorted = src[self.order].astype(index_dtype(n), copy=False)

    @staticmethod
    def of(outcome: SearchOutcome) -> "ReverseGraph":
        src, dst, act = outcome.edges
        return ReverseGraph(outcome.distinct, src, dst, act)

    def reach(self, goal: np.ndarray, actions: np.ndarray | None = None,
              states: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the states from which some goal state is reachable, using only the edges whose
        action `actions` marks and whose two ends `states` marks (None: all); `vector/reverse.py`'s
        out-of-core graph answers the same question. The filters are applied to the edges the search looks
        at, not built over every edge first: on Kafka nightly that was three passes over 88 M edges per
        property."""
        reach = goal.copy()
        fresh = np.zeros(self.n, dtype=bool)
        frontier = np.flatnonzero(reach)
        if states is not None:
            frontier = frontier[states[frontier]]  # no kept edge ends outside `states`; later frontiers are in it
        starts, src, order = self.starts, self.src_sorted, self.order
        edges = len(src)
        act = self.edges[2]
        while len(frontier):
            lo = starts[frontier]
            counts = starts[frontier + 1] - lo
            total = int(counts.sum())
            if total == 0:
                break
            if 4 * total > edges:
                # most edges lead into the frontier (the first level, where the goal is most states): one pass
                # over the edges from states not reached yet, in stored order, is cheaper than gathering the
                # frontier's in-edges (on Kafka nightly LIVE-1's first level 0.5 s against 2.2). It may also take
                # edges into states reached but not expanded yet: a search for the reachable set may.
                preds = self._pulled(reach, actions, states)
            else:
                idx = concat_ranges(lo, counts)
                if actions is not None:
                    idx = idx[actions[act[order[idx]]]]
                preds = src[idx]
                preds = preds[~reach[preds]]
                if states is not None:
                    preds = preds[states[preds]]
            fresh[preds] = True  # a scratch mask rather than np.unique: duplicates collapse without a sort
            frontier = np.flatnonzero(fresh)
            fresh[frontier] = False
            reach[frontier] = True
        return reach

    def _pulled(self, reach: np.ndarray, actions: np.ndarray | None, states: np.ndarray | None) -> np.ndarray:
        """The sources of the kept edges from a state not in `reach` to one in it."""
        src, dst, act = self.edges
        keep = ~reach[src]
        if actions is not None:
            keep &= actions[act]
        if states is not None:
            keep &= states[src]
            keep &= states[dst]  # `reach` holds goal states outside `states`, which no kept edge enters
        keep &= reach[dst]
        return src[keep]


def check(model: GroundModel, outcome: SearchOutcome, name: str, graph=None) -> int | None:
    """The chosen violating state (least depth, then least fingerprint), or None. `graph`: the outcome's
    edges by destination (a `ReverseGraph`, or the out-of-core one of `vector/reverse.py`)."""
    prop = next(p for p in model.properties if p.name == name)
    n = outcome.distinct
    goal = outcome.goal_masks[name][:n]
    when = outcome.when_masks[name][:n]
    graph = graph if graph is not None else ReverseGraph.of(outcome)
    excluded = set(prop.prop.exclude_tags)
    keep_action = None
    if excluded:
        keep_action = np.array([not (set(a.row.tags) & excluded) for a in model.actions], dtype=bool)
    reach = graph.reach(goal, keep_action)
    bad = np.flatnonzero(when & ~reach)
    if len(bad) == 0:
        return None
    return first_chosen(outcome, bad)


def first_chosen(outcome: SearchOutcome, states: np.ndarray) -> int:
    """Among `states` (sorted indices), the one a counterexample starts from: least depth, then least
    fingerprint (independent of the order an engine stored a level in)."""
    depth_bounds = np.cumsum(outcome.level_sizes)
    first_level_end = depth_bounds[np.searchsorted(depth_bounds, states[0], side="right")]
    cand = states[states < first_level_end]
    return int(cand[np.argmin(outcome.fps[cand])])
