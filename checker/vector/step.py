"""One expansion of a level by the vector engine, a chunk of frontier states at a time.

Per chunk: the kernel lists its successor candidates; they are grouped by fingerprint (`distinct_least`: a
direct-mapped table over the fingerprints' top bits), each distinct fingerprint keeps the least key (parent
row · A + action), and those the visited store holds are dropped. The rest are new states of the level,
each found by its least key; one an earlier chunk found too keeps the lesser of the two keys (the level's
fingerprints and keys so far are held sorted, 16 bytes a state). They are materialised from the chunk's own
states, property-checked (offered to `Findings` by fingerprint, located once the level's order is known)
and kept as a run (`merge.py`): fingerprint, the states in the kernel's columns,
property masks. The fingerprints and keys held give the level (fingerprints, parent rows, actions) the
unchunked search builds; the runs themselves are the next frontier, read in their order with each state's
row in fingerprint order beside it (`LevelStates.rank`). A frontier that fits one chunk is expanded whole,
with no run: the search without a budget.

Without a budget (every level expanded whole) a new level of states of PARENT_ORDER_BYTES or more is
materialised in its parents' order: the new states sorted by their parent's column, so that copying the
parents reads the frontier in order (on Kafka nightly, 638 cells a state, the random-order copy was 27.8 s of
an 80 s search). The level keeps each column's fingerprint row (`LevelStates.rank`), and the expansion names
its states by it, so the store, the least keys, the chosen states and the property masks are the
fingerprint-ordered level's; only the edges of a level come in another order (the same edges, each source's
in action order).

Chunks are sized from the budget's `chunk` share and the most successor candidates per state seen so far,
in whole kernel chunks (`kernel.chunk`), whose order the kernel's candidate lists follow. Edges are given
in the unchunked search's order (kernel chunk of the frontier, then action, then row), re-sorted only when
a chunk does not start and end on a kernel chunk's bounds (a size forced for tests).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..levels import DEADLOCK, Findings
from ..lookup import (distinct, distinct_least, edge_keys, group_index, merge_disjoint, search_sorted, sort_order,
                      split_key)
from ..resources import BudgetSplit
from .frontier import LevelStates
from .kernel import VectorKernel
from .merge import Run
from .spill import Columns, SpillDir, join
from .store import VisitedStore

_U64 = np.uint64
CANDIDATE_BYTES = 80  # per successor candidate while a chunk is expanded and deduplicated (arrays and sort)
MIN_CHUNK = 4096      # frontier states: below this, numpy's per-call costs outweigh the memory saved
# a state's bytes from which copying the parents in their order pays for sorting them: TwoPhase rm=8's 27 lose
# (materialising 0.10 s to 0.20), PaxosCommit's 83 gain (0.44 to 0.37), Kafka's 638 most (benchmarks/RESULTS.md)
PARENT_ORDER_BYTES = 64


@dataclass(frozen=True)
class Expanded:
    """What one expansion found. At the depth limit `new` is 1 if some successor is not visited (none is
    stored) and the level fields are None."""

    generated: int
    fired: np.ndarray
    deadlocked: bool  # a deadlock among the frontier, the first chosen
    violated: bool    # an always property violated for the first time among the new states
    new: int
    fps: np.ndarray | None = None      # the next level, ascending,
    parents: np.ndarray | None = None  # each state's parent row in the frontier,
    actions: np.ndarray | None = None  # and the action from it,
    states: LevelStates | None = None  # the states themselves (in their parents' order where `rank` is set),
    masks: dict | None = None          # and the property masks `check` gave, in the level's order
    chunks: int = 0


class _EdgeOrder:
    """Appends a level's edges (src index, dst fingerprint, action) in the unchunked search's order over the
    frontier's columns (`rank`: each column's row in fingerprint order, where they are not in that order)."""

    def __init__(self, out: Columns, n: int, base: int, window: int, rank: np.ndarray | None):
        self.out, self.n, self.base, self.window, self.rank = out, n, base, window, rank
        self.pending: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # (first row, rows, dst, act)

    def add(self, a: int, b: int, rows: np.ndarray, dst: np.ndarray, act: np.ndarray) -> None:
        """The edges of the chunk of frontier rows [a, b), in the kernel's order for that chunk."""
        w = self.window
        if not self.pending and a % w == 0 and (b % w == 0 or b == self.n):
            self._emit(rows, dst, act)
            return
        self.pending.append((a, rows, dst, act))
        self._flush(self.n if b == self.n else b - b % w)

    def finish(self) -> None:
        self._flush(self.n)

    def _flush(self, upto: int) -> None:
        """Emit the pending edges from rows below `upto`, whose kernel chunks are complete."""
        if not self.pending or self.pending[0][0] >= upto:
            return
        rows, dst, act = (np.concatenate(x) for x in list(zip(*self.pending))[1:])
        done = rows < upto
        r, d, c = rows[done], dst[done], act[done]
        order = np.lexsort((r, c, r // self.window))
        self._emit(r[order], d[order], c[order])
        self.pending = [] if done.all() else [(upto, rows[~done], dst[~done], act[~done])]

    def _emit(self, rows, dst, act) -> None:
        src = self.rank[rows] if self.rank is not None else rows
        self.out.append({"src": src + self.base, "dst": dst, "act": act})


class _Runs:
    """The runs of one expansion: in memory up to `share` bytes, then each written to files of its own."""

    def __init__(self, spill: SpillDir, share: int | None):
        self.spill, self.share = spill, share
        self.runs: list[Run] = []
        self.held = 0

    def add(self, columns: dict[str, np.ndarray]) -> None:
        size = sum(a.nbytes for a in columns.values())
        if self.share is not None and self.held + size > self.share:
            self.runs.append(Run.write(self.spill, "run", columns))
        else:
            self.runs.append(Run(len(columns["fps"]), columns=columns))
            self.held += size

    def close(self) -> None:
        for r in self.runs:
            r.remove(self.spill)
        self.runs = []


Check = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[bool, dict]]


class LevelExpander:
    def __init__(self, kernel: VectorKernel, store: VisitedStore, spill: SpillDir, split: BudgetSplit | None,
                 chunk_states: int | None, check_deadlock: bool, timing: dict):
        self.kernel, self.store, self.spill, self.split = kernel, store, spill, split
        self.chunk_states = chunk_states
        self.check_deadlock = check_deadlock
        self.timing = timing
        self.ratio = 8.0  # successor candidates per frontier state, the most seen (sizes the chunks)
        self.row_bytes = kernel.width * kernel.dtype.itemsize
        # every level expanded whole, states wide enough: see above
        self.parent_order = split is None and not chunk_states and self.row_bytes >= PARENT_ORDER_BYTES

    def chunk_size(self, n: int) -> int:
        """Frontier states per chunk: forced, or the whole frontier without a budget, or what the budget's
        chunk share holds."""
        if self.chunk_states:
            return int(self.chunk_states)
        if self.split is None:
            return max(n, 1)
        k = self.kernel
        per_state = 2 * self.row_bytes + 8 + (8 * k.G if k.symmetric else 0) + int(self.ratio * CANDIDATE_BYTES)
        size = max(MIN_CHUNK, self.split.chunk // per_state)
        return size - size % k.chunk if size >= k.chunk else size

    def expand(self, front: LevelStates, base: int, depth: int, at_limit: bool, found: Findings,
               edges: Columns | None, check: Check) -> Expanded:
        """Expand `front` (level `depth`, its first state at store index `base`): deadlocks offered to
        `found`, edges appended to `edges` (if kept), and `check(cols, fps, refs)` called on the new states
        (`refs`: their store indices, or their fingerprints where those are not known yet), giving whether
        an always property was violated for the first time and the states' property masks."""
        kernel, store, timing = self.kernel, self.store, self.timing
        n = front.n
        size = self.chunk_size(n)
        single = size >= n
        A = _U64(max(kernel.n_actions, 1))
        fired = np.zeros(kernel.n_actions, dtype=np.int64)
        generated, chunks, deadlocked, any_new, violated = 0, 0, False, False, False
        rank = front.rank  # each column's fingerprint row, when the frontier is not in that order
        order = _EdgeOrder(edges, n, base, kernel.chunk, rank) if edges is not None else None
        share = self.split.next_level if self.split else None
        runs = None if single else _Runs(self.spill, share)
        seen = np.zeros(0, dtype=_U64)  # this level's new states so far (chunked), sorted,
        seen_key = np.zeros(0, dtype=_U64)  # and the least key each was found by
        whole = None
        try:
            for a, cols, P, fps in front.chunks(size):
                b = a + cols.shape[1]
                chunks += 1
                t0 = time.perf_counter()
                exp = kernel.expand_cols(cols, P, need_has=self.check_deadlock)
                timing["expand"] += time.perf_counter() - t0
                generated += exp.generated
                fired += exp.fired
                self.ratio = max(self.ratio, exp.generated / max(cols.shape[1], 1))
                if self.check_deadlock:
                    dead = np.flatnonzero(~exp.has_successor)
                    if len(dead):
                        dead = dead[~kernel.terminal_cols(cols[:, dead])]  # as the scalar engine: only where needed
                        at = rank[a + dead] if rank is not None else a + dead
                        deadlocked = found.offer_least(DEADLOCK, "", depth, fps[dead], base + at) or deadlocked

                t0 = time.perf_counter()
                c = exp.fps
                m = len(c)
                least = grp = None
                # each candidate's parent by its row in fingerprint order, the order the outcome rule reads
                prows = rank[exp.parent_rows + a if a else exp.parent_rows] if rank is not None else exp.parent_rows
                if m and not at_limit:  # each group's least key is all the level needs: no group index
                    keys = edge_keys(prows, exp.actions, A, 0 if rank is not None else a)
                    u, least = distinct_least(c, keys)
                    known = store.contains(u)
                elif m:
                    u = distinct(c)
                    known = store.contains(u)
                    grp = group_index(u, c) if order is not None else None
                else:
                    u = np.zeros(0, dtype=_U64)
                    known = np.zeros(0, dtype=bool)
                newmask = ~known
                if order is not None and m:
                    src = exp.parent_rows + a if a else exp.parent_rows  # the parents' columns
                    if at_limit:
                        to_known = known[grp]
                        order.add(a, b, src[to_known], c[to_known], exp.actions[to_known])
                    else:
                        order.add(a, b, src, c, exp.actions)
                if at_limit:
                    any_new = any_new or bool(newmask.any())
                    timing["dedup"] += time.perf_counter() - t0
                    continue
                k = int(newmask.sum())
                if k:
                    kmin = least[newmask]
                    new_fps = u[newmask]
                    if len(seen):  # found by an earlier chunk too: the lesser key stands
                        at, again = search_sorted(seen, new_fps)
                        if again.any():
                            at = at[again]
                            seen_key[at] = np.minimum(seen_key[at], kmin[again])
                            fresh = ~again
                            new_fps, kmin = new_fps[fresh], kmin[fresh]
                            k = len(new_fps)
                del u, known, grp, exp, prows
                timing["dedup"] += time.perf_counter() - t0
                if not k:
                    continue
                t0 = time.perf_counter()
                prow, pact = split_key(kmin, A)
                copied = None  # the order the new states are copied in, where not fingerprint order
                column, acts, known_new = (prow - a if a else prow), pact, new_fps
                if rank is not None and not (single and self.parent_order):  # the parents' columns in the chunk
                    column = _columns_of(rank[a:b], prow)
                if single and self.parent_order:
                    if rank is not None:  # the parents' columns in the frontier
                        where = np.empty(n, dtype=np.int64)
                        where[rank] = np.arange(n)
                        column = where[prow]
                    copied, column = sort_order(column)  # stable: a parent's new states in fingerprint order
                    column, acts, known_new = column.view(np.int64), pact[copied], new_fps[copied]
                new_cols, _, newP = kernel.successors_cols(cols, column, acts, known_fps=known_new)
                del column, acts, known_new
                timing["materialise"] += time.perf_counter() - t0
                if single:
                    whole = (new_fps, prow, pact, new_cols, newP, copied)
                    continue
                got, masks = check(new_cols, new_fps, new_fps)
                violated = got or violated
                t0 = time.perf_counter()
                runs.add({"fps": new_fps, "cols": new_cols, **{f"mask:{name}": v for name, v in masks.items()}})
                seen, seen_key = merge_disjoint(seen, seen_key, new_fps, kmin)
                del new_cols, newP
                timing["merge"] += time.perf_counter() - t0
            if order is not None:
                order.finish()
            if at_limit:
                return Expanded(generated, fired, deadlocked, False, int(any_new), chunks=chunks)
            if single:
                if whole is None:
                    return Expanded(generated, fired, deadlocked, False, 0, chunks=chunks)
                new_fps, prow, pact, new_cols, newP, copied = whole
                whole = None
                if copied is None:
                    violated, masks = check(new_cols, new_fps, base + n + np.arange(len(new_fps)))
                    states = LevelStates.of(kernel, new_cols, new_fps, newP, self.spill, share)
                else:  # in the parents' order: checked there, the masks put back in fingerprint order
                    fps_copied = new_fps[copied]
                    violated, got = check(new_cols, fps_copied, base + n + copied)
                    masks = {}
                    for name, v in got.items():
                        masks[name] = np.empty(len(v), dtype=v.dtype)
                        masks[name][copied] = v
                    states = LevelStates.of(kernel, new_cols, fps_copied, newP, self.spill, share, rank=copied)
                return Expanded(generated, fired, deadlocked, violated, len(new_fps), new_fps, prow, pact, states,
                                masks, chunks)
            if not len(seen):
                return Expanded(generated, fired, deadlocked, False, 0, chunks=chunks)
            got = self._level(runs, seen, seen_key, found, depth + 1, base + n)
            runs = None  # the runs are the next level's now
            return Expanded(generated, fired, deadlocked, violated, len(got[0]), *got, chunks=chunks)
        finally:
            if runs is not None:
                runs.close()

    def _level(self, runs: _Runs, fps: np.ndarray, key: np.ndarray, found: Findings, level: int, start: int):
        """The level from its runs and its fingerprints and least keys (sorted): (fingerprints, parent rows,
        actions, states, masks) in fingerprint order; what `found` chose among it named by store index
        (`start` + its row)."""
        t0 = time.perf_counter()
        A = _U64(max(self.kernel.n_actions, 1))
        found.locate(level, lambda fp: start + int(np.searchsorted(fps, _U64(fp))))
        rank = join([np.searchsorted(fps, r.read("fps", 0, r.n)) for r in runs.runs])  # each run is sorted
        masks = {}
        for name in (k for k in runs.runs[0].names() if k.startswith("mask:")):
            got = join([r.read(name, 0, r.n) for r in runs.runs])
            masks[name.removeprefix("mask:")] = np.empty(len(fps), dtype=got.dtype)
            masks[name.removeprefix("mask:")][rank] = got
        states = LevelStates(self.kernel, fps, spill=self.spill, runs=runs.runs, rank=rank)
        self.timing["merge"] += time.perf_counter() - t0
        return (fps, *split_key(key, A), states, masks)


def _columns_of(rank: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The columns of a chunk whose columns are the fingerprint rows `rank` that hold each of `rows`."""
    order = np.argsort(rank, kind="stable")
    return order[np.searchsorted(rank[order], rows)]
