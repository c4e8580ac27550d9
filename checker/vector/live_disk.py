"""The restricted graph of an `eventually`/`leads_to` property in files, and its fair cycles found out of core:
`liveness.check_within` for a restricted graph whose edges outgrow judging's share (`live.py` gathers the
smaller ones into memory).

In memory are only arrays of a few bytes per restricted state and a block of edges at a time; the edges are
read through memory maps, in sequential passes or by rows:
- one pass over the stored edges writes the restricted graph's moving edges (numbered as `live.py` numbers
  them), and, grouped by fairness group, the edges each group takes and the states that enable it;
- the edges by source (`DiskReverseGraph` with its ends swapped) give, a round at a time, the deduplicated
  sparse matrix of the component search (scipy's strong components read its index arrays from a file); its
  values are never read, so they come from a file that is all hole;
- each group's edges and enabled states are then read once per round, to decide which components are fair
  as `liveness.fair_states` does (weak fairness: taken inside, or disabled somewhere in the component;
  strong: taken inside, or enabled nowhere in it, else the states enabling it are removed and the rest split
  again); where `fair_states` sorts (component, group) keys, this counts one group at a time, so no array
  grows with components times groups;
- the states that reach a fair one, by `DiskReverseGraph`'s backward search;
- the lasso, by the breadth-first searches of `liveness._Forward` and the waypoints of `liveness._fair_cycle`
  over the rows of the edges by source: the same choices, so the same lasso.
"""
from __future__ import annotations

import os

import numpy as np

from txncheck.spec.ground_ir import GroundModel

from ..liveness import FairnessGroups, Lasso, lasso_of, strong_components
from ..lookup import concat_ranges, distinct, group_starts
from ..outcome import SearchOutcome
from ..paths import InitialStates
from ..recoverable import first_chosen, index_dtype
from . import reverse
from .reverse import DiskReverseGraph
from .spill import SpillDir, mapped

# per restricted state, what judging holds at its peak (the round's, fair and group masks, the component labels
# and counts, the matrix's row starts, scipy's labels and stacks): tracemalloc's peaks of `fair_states`, with
# the pieces of edges it reads, were 41-47 bytes a state on a random graph of 3.9 M restricted states and 38 on
# one of 19.6 M (benchmarks/RESULTS.md, "LIVE-4 judged with its restricted graph in files")
STATE_BYTES = 48
# per stored edge of a block, what the passes over the edges hold at once (the block's columns filtered,
# renumbered, grouped and their sort orders; the component search's keys and their sorted copy): measured
# 62-66 by tracemalloc on a random graph of 4 M states (benchmarks/live_disk_bench.py)
BLOCK_EDGE_BYTES = 72


class DiskLiveGraph:
    """The restricted graph over `states` (sorted store indices; `inside` their mask) in files under `spill`,
    built from the stored edges within `share` bytes besides `STATE_BYTES` a state; `close` removes them."""

    def __init__(self, states: np.ndarray, inside: np.ndarray, src, dst, act, fps, groups: FairnessGroups,
                 spill: SpillDir, share: int):
        self.states, self.fps, self.groups, self.spill = states, fps, groups, spill
        self.m = m = len(states)
        self.G = groups.count
        self.share = share
        self.block = max(reverse.MIN_BLOCK, share // BLOCK_EDGE_BYTES)
        sdt = index_dtype(m)
        self.sdt = sdt
        self.paths: list[str] = []
        edges = [self._new(f"live-{k}") for k in ("src", "dst", "act")]
        self.taken = _Grouped(self, ("src", "dst", "act"), (sdt, sdt, np.int32))
        self.enabling = _Grouped(self, ("state",), (sdt,))
        # store index to local number: 4 bytes a stored state while building, where a binary search of the
        # states per edge took 3/4 of the building (400 ns an edge)
        local = np.cumsum(inside, dtype=sdt)
        local -= 1
        count = 0
        for a in range(0, len(dst), self.block):
            s, d = np.asarray(src[a:a + self.block]), np.asarray(dst[a:a + self.block])
            c = np.asarray(act[a:a + self.block])
            moving = (s != d) & inside[s]
            s, d, c = s[moving], d[moving], c[moving].astype(np.int32)
            ls = local[s]
            e_idx, e_grp = groups.of_actions(c)
            self.enabling.add(e_grp, ls[e_idx])
            k = inside[d]
            ls, ld, c = ls[k], local[d[k]], c[k]
            for path, col in zip(edges, (ls, ld, c)):
                spill.append(path, col)
            count += len(ld)
            e_idx, e_grp = groups.of_actions(c)
            self.taken.add(e_grp, ls[e_idx], ld[e_idx], c[e_idx])
        del local
        self.edges = count
        self.src, self.dst, self.act = (mapped(p, dt, count) for p, dt in zip(edges, (sdt, sdt, np.int32)))
        self.taken.close_writing()
        self.enabling.close_writing()
        # by source: the edges reversed, grouped by their new destination
        self.forward = DiskReverseGraph(m, self.dst, self.src, self.act, spill, share)
        self.backward: DiskReverseGraph | None = None

    def _new(self, stem: str) -> str:
        path = self.spill.new(stem)
        self.paths.append(path)
        return path

    def state_fps(self, local: np.ndarray) -> np.ndarray:
        return np.asarray(self.fps[self.states[local]])

    def reach(self, goal: np.ndarray) -> np.ndarray:
        """The states from which a `goal` state is reachable."""
        if self.backward is None:
            self.backward = DiskReverseGraph(self.m, self.src, self.dst, self.act, self.spill, self.share)
        return self.backward.reach(goal)

    def close(self) -> None:
        for g in (self.forward, self.backward):
            if g is not None:
                g.close()
        self.forward = self.backward = None
        self.src = self.dst = self.act = None
        self.taken.maps = self.enabling.maps = None
        for p in self.paths:
            self.spill.remove(p)

    # -- the rows of the edges by source -------------------------------------------------------------
    def row_pieces(self):
        """(first row, end row) of consecutive rows whose edges together fit a block (a longer row alone)."""
        starts = self.forward.starts
        E = self.edges
        cuts = np.searchsorted(starts, np.arange(0, E, self.block), side="right") - 1
        cuts = np.unique(np.r_[0, cuts, self.m])
        return zip(cuts[:-1].tolist(), cuts[1:].tolist())

    def rows(self, rows: np.ndarray):
        """(source, target, action) of the edges leaving `rows`, in pieces of about a block."""
        starts, targets, acts = self.forward.starts, self.forward.src, self.forward.act
        for f in range(0, len(rows), self.block):
            part = rows[f:f + self.block]
            lo = np.asarray(starts[part])
            counts = np.asarray(starts[part + 1]) - lo
            if not counts.any():
                continue
            ends = np.cumsum(counts)
            cut = np.unique(np.r_[0, np.searchsorted(ends, np.arange(self.block, ends[-1], self.block), side="right"),
                                  len(part)])
            for i, j in zip(cut[:-1], cut[1:]):
                idx = concat_ranges(lo[i:j], counts[i:j])
                yield np.repeat(part[i:j], counts[i:j]), np.asarray(targets[idx]), np.asarray(acts[idx])


class _Grouped:
    """Columns appended a block at a time, each block's entries ordered by fairness group, so that a group's
    entries are a slice of every block: read back a piece at a time by `pieces`."""

    def __init__(self, graph: DiskLiveGraph, names: tuple[str, ...], dtypes: tuple):
        self.graph = graph
        self.dtypes = dtypes
        self.files = [graph._new(f"live-group-{k}") for k in names]
        self.bounds: list[np.ndarray] = []  # per block, where each group's entries start and end in the files
        self.length = 0
        self.maps = None

    def add(self, group: np.ndarray, *cols: np.ndarray) -> None:
        G = self.graph.G
        # 16 bits where the groups fit: numpy's stable sort of them is then a radix sort, 8x faster than of int64
        order = np.argsort(group.astype(np.int16 if G < 2**15 else np.int64), kind="stable")
        for path, col, dt in zip(self.files, cols, self.dtypes):
            self.graph.spill.append(path, col[order].astype(dt, copy=False))
        counts = np.bincount(group, minlength=G) if G else np.zeros(0, np.int64)
        self.bounds.append(self.length + np.r_[0, np.cumsum(counts)])
        self.length += len(group)

    def close_writing(self) -> None:
        self.maps = [mapped(p, dt, self.length) for p, dt in zip(self.files, self.dtypes)]

    def pieces(self, g: int):
        """The entries of group `g`, a tuple of columns at a time (at most a block each)."""
        block = self.graph.block
        for b in self.bounds:
            lo, hi = int(b[g]), int(b[g + 1])
            for a in range(lo, hi, block):
                yield tuple(np.asarray(m[a:min(hi, a + block)]) for m in self.maps)


def fair_states(gr: DiskLiveGraph) -> tuple[np.ndarray, np.ndarray]:
    """`liveness.fair_states(gr, all states)` out of core: (fair mask, component label per state, -1 elsewhere);
    the labels number the fair components differently, but name the same sets of states."""
    m, G = gr.m, gr.G
    sdt = gr.sdt
    fair = np.zeros(m, dtype=bool)
    comp = np.full(m, -1, dtype=sdt)
    M = np.ones(m, dtype=bool)
    numbered = 0
    while M.any():
        lab, count = _components(gr, M)
        size = np.bincount(lab[M], minlength=count)
        unfair = np.zeros(count, dtype=bool)
        refine = np.zeros(count, dtype=bool)
        drop = np.zeros(m, dtype=bool)  # states enabling a strongly fair group their component neglects
        enabling = np.zeros(m, dtype=bool)
        for g in range(G):
            enabling[:] = False
            for (st,) in gr.enabling.pieces(g):
                enabling[st] = True
            enabling &= M
            if not enabling.any():
                continue
            at = lab[enabling]
            ecount = np.bincount(at, minlength=count)
            taken = np.zeros(count, dtype=bool)
            for s, d, _ in gr.taken.pieces(g):
                k = M[s] & M[d]
                a, b = lab[s[k]], lab[d[k]]
                taken[a[a == b]] = True
            neglected = ~taken & (ecount > 0)
            if gr.groups.strong[g]:
                refine |= neglected
                drop[np.flatnonzero(enabling)[neglected[at]]] = True
            else:
                unfair |= neglected & (ecount == size)
            del at, ecount, taken
        refine &= ~unfair
        kept = ~unfair & ~refine
        number = np.cumsum(kept, dtype=np.int64) - 1 + numbered
        here = M & kept[np.maximum(lab, 0)]
        fair |= here
        comp[here] = number[lab[here]]
        numbered += int(kept.sum())
        M &= refine[np.maximum(lab, 0)]
        M &= ~drop
        del lab, size, unfair, refine, kept, number, here, drop, enabling
    return fair, comp


def _components(gr: DiskLiveGraph, M: np.ndarray) -> tuple[np.ndarray, int]:
    """(label per state, -1 outside `M`; their count): the strong components of the graph's edges within M."""
    from scipy.sparse import csr_matrix  # only liveness under a budget pays for importing scipy

    m = gr.m
    dense = np.cumsum(M, dtype=gr.sdt)
    nM = int(dense[-1]) if m else 0
    dense -= 1
    if gr.edges >= 2**31:
        raise ValueError("internal error: scipy's component search takes fewer than 2^31 edges")
    indptr = np.zeros(nM + 1, dtype=np.int32)
    path = gr.spill.new("live-matrix")
    nnz = 0
    starts, targets = gr.forward.starts, gr.forward.src
    width = max(nM, 1)
    for r0, r1 in gr.row_pieces():
        lo, hi = int(starts[r0]), int(starts[r1])
        if lo == hi:
            continue
        t = np.asarray(targets[lo:hi])
        r = np.repeat(np.arange(r0, r1, dtype=gr.sdt), np.diff(np.asarray(starts[r0:r1 + 1])))
        keep = M[r] & M[t]
        # the dense numbering keeps the order, so a piece's sorted distinct keys are its rows' entries in order
        # (numpy's unique hashes: 200x slower than sorting these nearly sorted keys)
        keys = distinct(dense[r[keep]].astype(np.int64) * width + dense[t[keep]], kind="stable")
        del t, r, keep
        if len(keys) == 0:
            continue
        rows, cols = np.divmod(keys, width)
        first = int(rows[0])
        per_row = np.bincount(rows - first)
        indptr[first + 1:first + 1 + len(per_row)] += per_row.astype(np.int32)
        gr.spill.append(path, cols.astype(np.int32))
        nnz += len(cols)
        del keys, rows, cols, per_row
    del dense
    np.cumsum(indptr, dtype=np.int32, out=indptr)  # int32 throughout: no int64 temporary of a state each
    values = gr.spill.new("live-matrix-values")
    try:
        # the component search reads the index arrays only: the values are a file of holes, on no disk
        os.truncate(values, nnz * 8)
        indices = mapped(path, np.int32, nnz)
        data = mapped(values, np.float64, nnz)
        labels = strong_components(csr_matrix((data, indices, indptr), shape=(nM, nM), copy=False))
        del indices, data, indptr
    finally:
        gr.spill.remove(path)
        gr.spill.remove(values)
    lab = np.full(m, -1, dtype=np.int32)
    lab[M] = labels
    count = int(labels.max()) + 1 if len(labels) else 0
    return lab, count


def check_within(model: GroundModel, outcome: SearchOutcome, gr: DiskLiveGraph, sources: np.ndarray,
                 inits: InitialStates | None) -> Lasso | None:
    """`liveness.check_within` on the restricted graph in files: the same verdict and the same lasso."""
    fair, comp = fair_states(gr)
    if not fair.any():
        return None
    bad = gr.reach(fair)
    starts = np.flatnonzero(sources & bad)
    del bad
    if len(starts) == 0:
        return None
    s0 = first_chosen(outcome, gr.states[starts])
    local = int(np.searchsorted(gr.states, s0))
    to_fair, f = _path(gr, local, fair, None)
    return lasso_of(model, outcome, s0, to_fair, _fair_cycle(gr, comp, f), inits)


def _path(gr: DiskLiveGraph, start: int, target: np.ndarray, within: np.ndarray | None) -> tuple[tuple[int, ...], int]:
    """`liveness._Forward.path` over the edges with both ends in `within` (None: every edge): a shortest path
    from `start` to a `target` state, each state reached by its least (source fingerprint, action) edge, and the
    least fingerprint among the nearest."""
    if target[start]:
        return (), start
    seen = np.zeros(gr.m, dtype=bool)
    seen[start] = True
    frontier = np.array([start], dtype=gr.sdt)
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (reached, from, action), sorted by reached
    while len(frontier):
        found = []
        for s, d, a in gr.rows(frontier):
            k = ~seen[d] if within is None else ~seen[d] & within[d]
            s, d, a = s[k], d[k], a[k]
            found.append(_least_per_target(gr, s, d, a))
        if not found:
            break
        s, d, a = _least_per_target(gr, *(np.concatenate(x) for x in zip(*found)))
        if len(d) == 0:
            break
        levels.append((d, s, a))
        seen[d] = True
        frontier = d
        hit = d[target[d]]
        if len(hit):
            end = node = int(hit[np.argmin(gr.state_fps(hit))])
            acts = []
            for reached, came, action in reversed(levels):
                i = int(np.searchsorted(reached, node))
                acts.append(int(action[i]))
                node = int(came[i])
            return tuple(reversed(acts)), end
    raise RuntimeError("internal error: no path to a fair state inside the graph that reaches one")


def _least_per_target(gr: DiskLiveGraph, s: np.ndarray, d: np.ndarray, a: np.ndarray):
    """(source, target, action) of each target's least (source fingerprint, action) edge, sorted by target."""
    o = np.lexsort((a, gr.state_fps(s), d))
    s, d, a = s[o], d[o], a[o]
    first = group_starts(d)
    return s[first], d[first], a[first]


def _fair_cycle(gr: DiskLiveGraph, comp: np.ndarray, f: int) -> tuple[int, ...]:
    """`liveness._fair_cycle`: the actions of a fair cycle from `f` back to `f` inside its component; () when
    stuttering at f is fair."""
    in_comp = comp == comp[f]
    at_f = [g for g in range(gr.G) if any(bool((st == f).any()) for (st,) in gr.enabling.pieces(g))]
    if not at_f:
        return ()
    waypoints: list[tuple[int, int, int] | int] = []  # an edge (source, target, action) to take, or a state to visit
    for g in range(gr.G):
        best = None  # (source fingerprint, action, source, target)
        for s, d, a in gr.taken.pieces(g):
            k = in_comp[s] & in_comp[d]
            if not k.any():
                continue
            s, d, a = s[k], d[k], a[k]
            i = np.lexsort((a, gr.state_fps(s)))[0]
            cand = (int(gr.state_fps(s[i:i + 1])[0]), int(a[i]), int(s[i]), int(d[i]))
            best = cand if best is None or cand[:2] < best[:2] else best
        if best is not None:
            waypoints.append((best[2], best[3], best[1]))
        elif g in at_f:
            # weakly fair and not taken here: visit a state that disables it (strong: none enables it)
            free = in_comp.copy()
            for (st,) in gr.enabling.pieces(g):
                free[st] = False
            where = np.flatnonzero(free)
            waypoints.append(int(where[np.argmin(gr.state_fps(where))]))
    out: tuple[int, ...] = ()
    cur = f
    for w in waypoints:
        steps, cur = _path(gr, cur, _mask(gr.m, w[0] if isinstance(w, tuple) else w), in_comp)
        out += steps
        if isinstance(w, tuple):
            out += (w[2],)
            cur = w[1]
    return out + _path(gr, cur, _mask(gr.m, f), in_comp)[0]


def _mask(n: int, i: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[i] = True
    return m
