"""`recoverable` properties on the stored edge graph: from every reachable state where `when`
holds, some goal state must be reachable (using only actions whose rows lack the excluded tags).

Computed by backward reachability from the goal states over the stored edges (`EdgeSweep`, in numpy; under
a memory budget the edges by destination in files, `vector/reverse.py`), then the `when` states that cannot
reach a goal state are the violations. The Spark engine computes the same on its executors
(`spark/reach.py`, over the edges in its store) and returns the chosen states in
`SearchOutcome.unrecoverable`.
"""
from __future__ import annotations

import numpy as np

from txncheck.spec.ground_ir import GroundModel

from .lookup import concat_ranges
from .outcome import SearchOutcome

# edges a sweep looks at in one step: a step sees the states the steps before it reached (on Kafka nightly
# 2^16 took the fewest sweeps for the time: 2^14 and 2^17 were 5-10% slower, benchmarks/RESULTS.md)
SWEEP_BLOCK = 1 << 16
# a sweep that marks states but keeps more than this share of the edges it looked at hands them to the search by
# destination: sweeping on would take about one sweep per step of the paths left (Kafka nightly's sweeps keep at
# most 42% of what they look at, 19% at the first; tests/models/counters.py's `wide` keeps 99% at the first: its paths
# to the goal go back through every level)
SLOW_SWEEP = 0.75
# nor do the sweeps after the first look at more than this many times the edges the first kept
SWEEP_WORK = 3


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


def sweep_bytes(n: int, edges: int) -> int:
    """About what `EdgeSweep.reach` holds at its peak, which is its search by destination's where it comes to
    that (the counting sort's keys, positions and CSR, the sorted sources and actions: about four indices and
    two bytes an edge); the row starts, their 64-bit copy and a mask per state. The sweeps alone hold the
    kept edges, at most `SLOW_SWEEP` of them at two indices each, twice while they are gathered."""
    idx = np.dtype(index_dtype(max(n, edges) + 1)).itemsize
    return edges * (4 * idx + 2) + (idx + 8 + 2) * (n + 1) + SWEEP_BLOCK * 32


class EdgeSweep:
    """The stored edges, for backward reachability without sorting them by destination.

    A sweep goes through the edges a block at a time and marks the source of every edge into a marked state;
    each block sees what the blocks before it marked, so a path whose edges come in the sweep's order is
    marked in one sweep. The first goes from the last stored edge to the first: a breadth-first search
    stores most edges from one level to the next (Kafka nightly: 84.6% of them), so the paths forward through
    the levels are marked at once. It keeps the edges whose source is still unmarked, and the next sweeps go
    through those alone, in alternating directions (paths back through the levels), until a sweep marks
    nothing: every kept edge then leads to an unmarked state, so the marked states are exactly those from
    which a goal state is reachable. Where the paths left go against every order, sweeping on would take a
    sweep per step: a sweep that marks states but keeps more than `SLOW_SWEEP` of the edges it looked at, or
    sweeps that add up to `SWEEP_WORK` times what the first kept, hand the kept edges to a breadth-first search
    by destination, which costs what sorting them costs. The first sweep keeps its edges block by block and
    stops keeping them once they are too many, so it never holds more than that share; it then searches the
    stored edges by destination itself."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, act: np.ndarray | None = None,
                 block: int = SWEEP_BLOCK):
        self.n = int(n)
        self.edges = (src, dst, act)
        self.block = int(block)

    @staticmethod
    def of(outcome: SearchOutcome) -> "EdgeSweep":
        src, dst, act = outcome.edges
        return EdgeSweep(outcome.distinct, src, dst, act)

    def reach(self, goal: np.ndarray, actions: np.ndarray | None = None,
              states: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the states from which some goal state is reachable, using only the edges whose
        action `actions` marks and whose two ends `states` marks (None: all); `vector/reverse.py`'s
        out-of-core graph answers the same question."""
        reach = np.array(goal, dtype=bool)  # a copy
        src, dst, act = self.edges
        E, B = len(src), self.block
        dt = index_dtype(self.n)
        pieces: list | None = []  # each block's edges whose source is unmarked after it
        kept, marked = 0, 0
        for hi in range(E, 0, -B):
            lo = max(0, hi - B)
            bs, bd = src[lo:hi], dst[lo:hi]
            keep = ~reach[bs]
            if actions is not None:
                keep &= actions[act[lo:hi]]
            if states is not None:
                keep &= states[bs]
                keep &= states[bd]
            if pieces is None:  # too many kept already: this sweep only marks on
                marked += _mark(reach, bs[keep], bd[keep])
                continue
            got, ls, ld = _step(reach, bs[keep], bd[keep])
            marked += got
            kept += len(ls)
            if kept > SLOW_SWEEP * E:
                pieces = None  # too many to sweep again: the search by destination takes them
            else:
                pieces.append((ls.astype(dt, copy=False), ld.astype(dt, copy=False)))
        if pieces is None:
            return _by_destination(reach, src, dst, self.n, act, actions, states) if marked else reach
        s = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, dtype=dt)
        d = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, dtype=dt)
        del pieces  # the kept edges are compacted in place from here on
        a, b = 0, kept
        looked, backward = E, True  # the kept edges lie in the first sweep's order: the next goes the other way
        work = 0
        while marked and b > a:
            if b - a > SLOW_SWEEP * looked or work > SWEEP_WORK * kept:
                return _by_destination(reach, s[a:b], d[a:b], self.n)
            looked = b - a
            work += looked
            marked = 0
            if backward:  # from the last kept edge to the first, compacting towards the end
                end = b
                for hi in range(b, a, -B):
                    lo = max(a, hi - B)
                    got, ls, ld = _step(reach, s[lo:hi], d[lo:hi])
                    marked += got
                    s[end - len(ls):end], d[end - len(ls):end] = ls, ld  # never past what is still to read
                    end -= len(ls)
                a = end
            else:
                at = a
                for lo in range(a, b, B):
                    hi = min(b, lo + B)
                    got, ls, ld = _step(reach, s[lo:hi], d[lo:hi])
                    marked += got
                    s[at:at + len(ls)], d[at:at + len(ls)] = ls, ld
                    at += len(ls)
                b = at
            backward = not backward
        return reach


def _mark(reach: np.ndarray, src: np.ndarray, dst: np.ndarray) -> int:
    """Marks the source of every edge into a marked state; how many edges led to one."""
    got = src[reach[dst]]
    reach[got] = True
    return len(got)


def _step(reach: np.ndarray, src: np.ndarray, dst: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """A sweep's step over a block of edges: `_mark`, and the sources and destinations of the edges whose source
    is still unmarked (copies)."""
    got = _mark(reach, src, dst)
    live = ~reach[src]
    return got, src[live], dst[live]


def _by_destination(reach: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int, act: np.ndarray | None = None,
                    actions: np.ndarray | None = None, states: np.ndarray | None = None) -> np.ndarray:
    """`reach` closed under predecessors along the edges (src, dst) whose action `actions` marks and whose two ends
    `states` marks (None: all), by a breadth-first search over them by destination from every marked state."""
    order, starts = grouped_by(dst, n)
    src = src[order].astype(index_dtype(n), copy=False)  # 32-bit where it fits: on Kafka nightly 88 M entries
    edge_act = act[order] if actions is not None else None
    del order
    fresh = np.zeros(n, dtype=bool)
    frontier = np.flatnonzero(reach)
    if states is not None:
        frontier = frontier[states[frontier]]  # no kept edge ends outside `states`; later frontiers are in it
    while len(frontier):
        lo = starts[frontier]
        counts = starts[frontier + 1] - lo
        if not counts.any():
            break
        idx = concat_ranges(lo, counts)
        if edge_act is not None:
            idx = idx[actions[edge_act[idx]]]
        preds = src[idx]
        preds = preds[~reach[preds]]
        if states is not None:
            preds = preds[states[preds]]
        fresh[preds] = True  # a scratch mask rather than np.unique: duplicates collapse without a sort
        frontier = np.flatnonzero(fresh)
        fresh[frontier] = False
        reach[frontier] = True
    return reach


def check(model: GroundModel, outcome: SearchOutcome, name: str, graph=None) -> int | None:
    """The chosen violating state (least depth, then least fingerprint), or None. `graph`: the outcome's
    edges to search (an `EdgeSweep`, or the out-of-core graph of `vector/reverse.py`)."""
    prop = next(p for p in model.properties if p.name == name)
    n = outcome.distinct
    goal = outcome.goal_masks[name][:n]
    when = outcome.when_masks[name][:n]
    graph = graph if graph is not None else EdgeSweep.of(outcome)
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
