"""Code that runs on executors (inside Python workers). A task receives a `LevelCtx` (plain data,
with the `ModelRef`) and its task number; the model and kernel are rebuilt from the reference
once per Python worker process. No pyspark import is needed here.

One Spark task per group of fingerprint partitions (partition p belongs to task p mod T) does a
whole level step for its partitions in one pass, with no Spark shuffle:

    cand/L+1/to=p/from=*.arrow   candidates (fp, pfp, action, state) other tasks sent to p
      -> least (pfp, action) per fp, minus p's visited fingerprints (sorted array cached in the
         Python worker, refreshed from the store's Parquet levels when stale or absent)
      -> properties of the new states; levels/L+1/part=p/data.parquet (atomic)
      -> expand the new states; candidates go to cand/L+2/to=q/from=t.arrow by q = fp mod P

The exchange goes through the store (which every executor must see anyway), so a level is one
single-stage Spark job: the per-level fixed cost is one job of T tasks. Every file is a
deterministic function of the level's inputs and is written atomically, so a retried task
(lost executor) rewrites the same files.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import storage
from .ref import ModelRef

from ..lookup import contains_sorted, distinct_least, edge_keys, group_starts, split_key

EXPAND, STEP, COUNT = "expand", "step", "count"


@dataclass(frozen=True)
class LevelCtx:
    ref: ModelRef
    store: str
    nonce: str
    level: int                      # the frontier's level; new states get level + 1
    partitions: int
    tasks: int
    always: tuple[str, ...]
    sometimes: tuple[str, ...]
    recoverable: tuple[str, ...]
    check_deadlock: bool
    edges: bool
    n_actions: int
    mode: str = STEP                # EXPAND: expand stored level `level` only (first job of a run)
                                    # STEP: dedupe level+1's candidates, store them, expand them
                                    # COUNT: at the depth limit, count unseen candidates only
    cache_bytes: int = 1 << 30      # per Python worker: visited fingerprints kept between levels
    batch_rows: int = 65536         # frontier rows expanded at a time


def parts_of(ctx: LevelCtx, task: int) -> range:
    return range(task, ctx.partitions, ctx.tasks)


# ---- the task -------------------------------------------------------------------------------
def run_task(ctx: LevelCtx, task: int) -> dict:
    """One level step for the fingerprint partitions of `task`; returns its counts."""
    t0 = time.perf_counter()
    k = ctx.ref.kernel()
    # seen/vis/wrote/sent/edge_rows: what this task read and wrote, per partition, for the driver
    # to check against what it recorded and what it can read itself (verify.py)
    out = {"task": task, "new": 0, "viol": {}, "wit": {}, "generated": 0, "fired": [0] * ctx.n_actions,
           "dead": None, "cand_bytes": 0, "cand_rows": 0, "level_bytes": 0, "t": {},
           "seen": {}, "vis": {}, "wrote": {}, "sent": None, "edge_rows": None}
    timing = out["t"]
    sender = _Sender(ctx, task) if ctx.mode in (EXPAND, STEP) else None
    fired = np.zeros(ctx.n_actions, dtype=np.int64)
    edge_parts = []
    # every partition's new states first, then their expansion: by then this worker's visited
    # sets of all its partitions include the new level, and filter the candidates sent to them
    fronts = []
    for p in parts_of(ctx, task):
        if ctx.mode == EXPAND:
            fronts.append(_read_frontier(ctx, p, k))
            out["seen"][p] = len(fronts[-1][0])
        else:
            fronts.append(_step(ctx, p, k, out, timing))
    if ctx.mode != COUNT:
        own = {p: _cached(ctx, p, ctx.level + (ctx.mode == STEP)) for p in parts_of(ctx, task)}
        pool = _Pool(ctx, k, sender, timing, own)
        for fps, cols in fronts:
            if len(fps):
                _expand(ctx, k, fps, cols, pool, out, fired, edge_parts, timing)
        pool.flush()
    del fronts
    if sender is not None:
        t1 = time.perf_counter()
        sender.close()
        out["cand_bytes"], out["cand_rows"] = sender.nbytes, sender.rows
        out["sent"] = sender.per_dest.tolist()
        if ctx.edges:
            out["edge_rows"] = _write_edges(ctx, task, edge_parts)
        _add(timing, "send", time.perf_counter() - t1)
    out["fired"] = fired.tolist()
    timing["total"] = time.perf_counter() - t0
    return out


def _add(timing: dict, key: str, dt: float) -> None:
    timing[key] = timing.get(key, 0.0) + dt


def _read_frontier(ctx: LevelCtx, part: int, k):
    """A stored level's partition: fps and column-major states (the kernel's layout)."""
    t = storage.read_part(ctx.store, ctx.level, part, ("fp", "state"))
    if t is None:
        return np.zeros(0, np.uint64), np.zeros((k.width, 0), k.dtype)
    rows = storage.binary_matrix(t.column("state"), k.width, k.dtype)
    return t.column("fp").to_numpy().view(np.uint64).copy(), np.ascontiguousarray(rows.T)


def _step(ctx: LevelCtx, part: int, k, out: dict, timing: dict):
    """Deduplicate the candidates of level+1 in `part`; store and check the new states.
    Returns their fps (ascending) and column-major states."""
    empty = (np.zeros(0, np.uint64), np.zeros((k.width, 0), k.dtype))
    t0 = time.perf_counter()
    c = storage.read_candidates(ctx.store, ctx.level + 1, part, k.width, k.dtype)
    out["seen"][part] = len(c)
    _add(timing, "read", time.perf_counter() - t0)
    t0 = time.perf_counter()
    visited = _visited(ctx, part)
    out["vis"][part] = len(visited)
    _add(timing, "visited", time.perf_counter() - t0)
    if len(c) == 0:
        _remember(ctx, part, visited, ctx.level + (ctx.mode == STEP))
        return empty
    t0 = time.perf_counter()
    sel = least_in_edge(c.fps, c.pfps, c.actions)
    sel = sel[~contains_sorted(visited, c.fps[sel])]
    new_fps = c.fps[sel]                     # ascending (unsigned)
    pfp, act = c.pfps[sel], c.actions[sel]
    out["new"] += len(sel)
    _add(timing, "dedup", time.perf_counter() - t0)
    if ctx.mode == COUNT:
        _remember(ctx, part, visited, ctx.level)
        return empty
    if not len(sel):
        _remember(ctx, part, visited, ctx.level + 1)
        return empty
    t0 = time.perf_counter()
    cols = c.states(sel)
    del c
    masks = k.properties_cols(cols, ctx.always + ctx.sometimes + ctx.recoverable)
    for name in ctx.always:
        m = np.asarray(masks[name], dtype=bool)
        if m.any():
            cnt, fp = int(m.sum()), int(new_fps[m].min())
            old = out["viol"].get(name)
            out["viol"][name] = [cnt + old[0], min(fp, old[1])] if old else [cnt, fp]
    for name in ctx.sometimes:
        m = np.asarray(masks[name], dtype=bool)
        if m.any():
            fp = int(new_fps[m].min())
            out["wit"][name] = min(fp, out["wit"].get(name, fp))
    flags = None
    if ctx.recoverable:
        bits = np.zeros((len(sel), 2 * len(ctx.recoverable)), dtype=bool)
        for i, name in enumerate(ctx.recoverable):
            bits[:, 2 * i] = np.asarray(masks[name], dtype=bool)
            bits[:, 2 * i + 1] = np.asarray(masks.get(name + ":when", np.ones(len(sel), bool)), dtype=bool)
        flags = np.packbits(bits, axis=1)
    _add(timing, "props", time.perf_counter() - t0)
    t0 = time.perf_counter()
    table = storage.level_table(new_fps, pfp, act, None, flags, cols=cols)
    fs, base = storage.fs_and_path(ctx.store)
    out["level_bytes"] += storage.write_table_atomic(table, storage.part_file(base, ctx.level + 1, part), fs)
    out["wrote"][part] = len(new_fps)
    del table
    _add(timing, "write", time.perf_counter() - t0)
    t0 = time.perf_counter()
    merged = np.concatenate([visited, new_fps])
    merged.sort(kind="stable")               # two sorted runs: timsort merges them in linear time
    _remember(ctx, part, merged, ctx.level + 1)
    _add(timing, "visited", time.perf_counter() - t0)
    return new_fps, cols


def _expand(ctx: LevelCtx, k, fps, cols, pool, out: dict, fired, edge_parts, timing: dict) -> None:
    """Expand a frontier slice (fps ascending, column-major states); its candidates (least in-edge
    per fp within a batch) go to the pool."""
    for a in range(0, len(fps), ctx.batch_rows):
        t0 = time.perf_counter()
        fp = fps[a:a + ctx.batch_rows]
        C = cols if len(fp) == len(fps) else np.ascontiguousarray(cols[:, a:a + ctx.batch_rows])
        P = k.perm_fps_cols(C) if getattr(k, "symmetric", False) else fp
        e = k.expand_cols(C, P, need_has=ctx.check_deadlock)
        out["generated"] += int(e.generated)
        fired += np.asarray(e.fired, dtype=np.int64)
        if ctx.check_deadlock:
            dead = np.flatnonzero(~np.asarray(e.has_successor, dtype=bool))
            if len(dead):
                dead = dead[~np.asarray(k.terminal_cols(C[:, dead]), dtype=bool)]
            if len(dead):
                cnt, m = len(dead), int(fp[dead].min())
                old = out["dead"]
                out["dead"] = [cnt + old[0], min(m, old[1])] if old else [cnt, m]
        _add(timing, "expand", time.perf_counter() - t0)
        if len(e.fps) == 0:
            continue
        t0 = time.perf_counter()
        cfps = np.asarray(e.fps, dtype=np.uint64)
        rows = np.asarray(e.parent_rows, dtype=np.int64)
        acts = np.asarray(e.actions, dtype=np.int32)
        if ctx.edges:
            edge_parts.append((fp[rows], cfps, acts))
        if len(fp) < 2 or bool(np.all(fp[1:] > fp[:-1])):
            # frontier rows ascend by fp (every stored level does): row order is parent-fp order
            u, prow, pact = least_in_edge_rows(cfps, rows, acts, k.n_actions)
        else:
            sel = least_in_edge(cfps, fp[rows], acts)
            u, prow, pact = cfps[sel], rows[sel], acts[sel]
        del e, cfps, rows, acts
        _add(timing, "dedup", time.perf_counter() - t0)
        pool.add(fp, C, u, prow, pact)


class _Pool:
    """The task's candidates across all its frontier batches, deduplicated together before any
    state is materialised (least (parent fp, action) per fp), then materialised per source batch
    in destination order and sent. Candidates for this worker's own partitions that their visited
    sets (`own`) already hold are dropped here rather than at the destination. Flushed early
    beyond `limit` candidates to bound memory."""

    def __init__(self, ctx: LevelCtx, k, sender, timing: dict, own: dict, limit: int = 1 << 23):
        self.ctx, self.k, self.sender, self.timing, self.limit = ctx, k, sender, timing, limit
        self.own = own
        self.batches: list = []                  # (frontier fps, cols) per batch
        self.parts: list = []                    # (u, prow, pact, batch index)
        self.n = 0

    def add(self, fp, C, u, prow, pact) -> None:
        if not len(u):
            return
        if not self.batches or self.batches[-1][1] is not C:
            self.batches.append((fp, C))
        self.parts.append((u, prow, pact, len(self.batches) - 1))
        self.n += len(u)
        if self.n >= self.limit:
            self.flush()

    def flush(self) -> None:
        if not self.parts:
            return
        t0 = time.perf_counter()
        u = np.concatenate([x[0] for x in self.parts])
        prow = np.concatenate([x[1] for x in self.parts])
        pact = np.concatenate([x[2] for x in self.parts])
        bidx = np.concatenate([np.full(len(x[0]), x[3], dtype=np.int32) for x in self.parts])
        self.parts = []
        pfp = np.empty(len(u), dtype=np.uint64)
        for b, (fp, _) in enumerate(self.batches):
            m = bidx == b
            pfp[m] = fp[prow[m]]
        if len(self.batches) > 1:
            sel = least_in_edge(u, pfp, pact)       # concatenated fp-sorted runs: near-linear
            u, prow, pact, bidx, pfp = u[sel], prow[sel], pact[sel], bidx[sel], pfp[sel]
        P = self.ctx.partitions
        dest = storage.partition_keys(u, P)
        keep = None
        for p, vis in self.own.items():
            if vis is not None and len(vis):
                m = np.flatnonzero(dest == p)
                hit = contains_sorted(vis, u[m])
                if hit.any():
                    keep = np.ones(len(u), dtype=bool) if keep is None else keep
                    keep[m[hit]] = False
        if keep is not None:
            u, prow, pact, bidx, pfp, dest = u[keep], prow[keep], pact[keep], bidx[keep], pfp[keep], dest[keep]
        order = np.argsort(dest, kind="stable")      # a radix sort: fp order kept per destination
        u, prow, pact, bidx, pfp, dest = u[order], prow[order], pact[order], bidx[order], pfp[order], dest[order]
        _add(self.timing, "dedup", time.perf_counter() - t0)
        for b, (fp, C) in enumerate(self.batches):
            m = np.flatnonzero(bidx == b) if len(self.batches) > 1 else slice(None)
            t0 = time.perf_counter()
            child, _, _ = self.k.successors_cols(C, prow[m], pact[m], known_fps=u[m])
            _add(self.timing, "materialise", time.perf_counter() - t0)
            t0 = time.perf_counter()
            self.sender.send(u[m], pfp[m], pact[m], child, dest[m])
            _add(self.timing, "send", time.perf_counter() - t0)
        self.batches, self.n = [], 0


class _Sender:
    """Candidates of this task routed by destination partition, one file per destination
    (a chunk per send), moved into place when the task is done."""

    def __init__(self, ctx: LevelCtx, task: int):
        self.ctx, self.task = ctx, task
        self.level = ctx.level + (1 if ctx.mode == EXPAND else 2)
        self.fs, self.base = storage.fs_and_path(ctx.store)
        self.writers: dict[int, storage.CandidateWriter] = {}
        self.nbytes = self.rows = 0
        self.per_dest = np.zeros(ctx.partitions, dtype=np.int64)   # rows sent to each partition

    def send(self, fps, pfps, acts, cols, dest) -> None:
        """Send candidates already ordered by destination partition `dest`."""
        counts = np.bincount(dest, minlength=self.ctx.partitions)
        self.per_dest += counts
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for q in np.flatnonzero(counts):
            a, b = int(bounds[q]), int(bounds[q + 1])
            w = self.writers.get(int(q))
            if w is None:
                w = self.writers[int(q)] = storage.CandidateWriter(self.fs, self.base, self.level, int(q), self.task)
            w.write(fps[a:b], pfps[a:b], acts[a:b], cols[:, a:b])
            self.rows += b - a

    def close(self) -> None:
        for q in sorted(self.writers):
            self.nbytes += self.writers[q].close()
        self.writers = {}


def _write_edges(ctx: LevelCtx, task: int, parts) -> int:
    import pyarrow as pa
    lv = ctx.level if ctx.mode == EXPAND else ctx.level + 1    # the level whose edges these are
    fs, base = storage.fs_and_path(ctx.store)
    if parts:
        src = np.concatenate([p[0] for p in parts])
        dst = np.concatenate([p[1] for p in parts])
        act = np.concatenate([p[2] for p in parts])
    else:
        src = dst = np.zeros(0, np.uint64)
        act = np.zeros(0, np.int32)
    # by target partition (a radix sort), so the reverse search reads each partition's in-edges alone
    dest = storage.partition_keys(dst, ctx.partitions)
    order = np.argsort(dest, kind="stable")
    src, dst, act = src[order], dst[order], act[order]
    counts = np.bincount(dest, minlength=ctx.partitions)
    del order, dest
    t = pa.table({"src": src.view(np.int64), "dst": dst.view(np.int64), "action": act.astype(np.int32)})
    storage.write_edges_atomic(t, counts, f"{storage.edges_dir(base, lv)}/task-{task:05d}.parquet", fs)
    return len(src)


def least_in_edge(fps: np.ndarray, pfp: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Indices of one entry per distinct fp: the least (parent fp, action), unsigned; sorted by fp.

    A stable argsort of fp alone (the input is a concatenation of fp-sorted runs, which timsort
    merges in near-linear time); only the fps that occur more than once (few: each sender has
    deduplicated its own) go through the segmented minima."""
    if len(fps) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(fps, kind="stable")
    s = fps[order]
    eq = s[1:] == s[:-1]
    if not eq.any():
        return order
    dup = np.zeros(len(s), dtype=bool)            # members of groups of two or more
    dup[1:] = eq
    dup[:-1] |= eq
    d = np.flatnonzero(dup)
    sd = s[d]
    first = group_starts(sd)
    starts = np.flatnonzero(first)
    gid = np.cumsum(first) - 1
    od = order[d]
    ps = pfp[od]
    pmin = np.minimum.reduceat(ps, starts)
    cand = ps == pmin[gid]
    a = np.where(cand, actions[od], np.iinfo(np.int32).max).astype(np.int64)
    amin = np.minimum.reduceat(a, starts)
    best = np.flatnonzero(cand & (a == amin[gid]))
    if len(best) != len(starts):         # an identical (fp, pfp, action) twice: keep the first
        best = best[group_starts(sd[best])]
    keep = ~dup
    keep[d[best]] = True
    return order[keep]


def least_in_edge_rows(fps: np.ndarray, rows: np.ndarray, actions: np.ndarray, n_actions: int):
    """(distinct fps ascending, parent row, action) of the least (parent row, action) per fp, when
    parent rows are in parent-fingerprint order: the least key row * A + action per fp, grouped as the
    vector engine does (`distinct_least`)."""
    A = np.uint64(max(n_actions, 1))
    u, least = distinct_least(fps, edge_keys(rows, actions, A))
    return (u, *split_key(least, A))


# ---- the visited fingerprints of a partition, cached per Python worker -----------------------
_VISITED: "OrderedDict[tuple, tuple[int, np.ndarray]]" = OrderedDict()


def _visited(ctx: LevelCtx, part: int) -> np.ndarray:
    """Sorted fingerprints of partition `part` in levels 0..ctx.level: from this worker's cache
    when it is not ahead of the store (a retried task may find it one level ahead), topped up
    with the levels it missed, else reloaded from the store."""
    key = (ctx.store, ctx.nonce, part)
    got = _VISITED.pop(key, None)
    if got is not None and got[0] <= ctx.level:
        upto, arr = got
        if upto < ctx.level:
            more = storage.read_fps(ctx.store, range(upto + 1, ctx.level + 1), part)
            arr = np.sort(np.concatenate([arr, np.sort(more)]), kind="stable")
    else:
        arr = np.sort(storage.read_fps(ctx.store, range(0, ctx.level + 1), part))
    return arr


def _cached(ctx: LevelCtx, part: int, upto: int):
    """This worker's visited fingerprints of `part` if they are exactly levels 0..upto."""
    got = _VISITED.get((ctx.store, ctx.nonce, part))
    return got[1] if got is not None and got[0] == upto else None


def _remember(ctx: LevelCtx, part: int, arr: np.ndarray, upto: int) -> None:
    _VISITED[(ctx.store, ctx.nonce, part)] = (upto, arr)
    total = sum(v[1].nbytes for v in _VISITED.values())
    while total > ctx.cache_bytes and len(_VISITED) > 1:
        _, (_, old) = _VISITED.popitem(last=False)
        total -= old.nbytes
