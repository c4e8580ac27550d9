"""Code that runs on executors (inside Python workers). Functions here receive a `LevelCtx`
(plain data, with the `ModelRef`) and Arrow batches; the model and kernel are rebuilt from the
reference once per process. No pyspark import is needed here.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import storage
from .ref import ModelRef

EXPAND_SCHEMA = "part int, fp long, pfp long, action int, state binary"
GROUP_SCHEMA = "part int, new long, info string"
STATS_PART = -1


@dataclass(frozen=True)
class LevelCtx:
    ref: ModelRef
    store: str
    nonce: str
    level: int                      # the frontier's level; new states get level + 1
    partitions: int
    always: tuple[str, ...]
    sometimes: tuple[str, ...]
    recoverable: tuple[str, ...]
    check_deadlock: bool
    edges: bool
    n_actions: int
    cache_bytes: int = 1 << 30      # per Python worker: visited fingerprints kept between levels
    write: bool = True              # False at the depth limit: count unseen successors only


# ---- expansion (mapInArrow) -----------------------------------------------------------------
def expand(ctx: LevelCtx, batches):
    import pyarrow as pa
    k = ctx.ref.kernel()
    fired = np.zeros(ctx.n_actions, dtype=np.int64)
    generated = expanded = dead_count = 0
    dead_min = None
    schema = pa.schema([("part", pa.int32()), ("fp", pa.int64()), ("pfp", pa.int64()),
                        ("action", pa.int32()), ("state", pa.binary())])
    edge_parts = []
    for b in batches:
        if b.num_rows == 0:
            continue
        fp = b.column(b.schema.get_field_index("fp")).to_numpy().view(np.uint64)
        states = storage.binary_matrix(b.column(b.schema.get_field_index("state")), k.width, k.dtype)
        e = k.expand(states)
        expanded += len(fp)
        generated += int(np.asarray(e.fired, dtype=np.int64).sum())
        fired += np.asarray(e.fired, dtype=np.int64)
        if ctx.check_deadlock:
            dead = np.asarray(k.deadlocks(states, e.has_successor), dtype=bool)
            if dead.any():
                dead_count += int(dead.sum())
                m = int(fp[dead].min())
                dead_min = m if dead_min is None else min(dead_min, m)
        if len(e.fps) == 0:
            continue
        pfp = fp[e.parent_rows]
        if ctx.edges:
            edge_parts.append((pfp, np.asarray(e.fps, dtype=np.uint64), np.asarray(e.actions, dtype=np.int32)))
        sel = least_in_edge(np.asarray(e.fps, dtype=np.uint64), pfp, np.asarray(e.actions))
        cfp = np.asarray(e.fps, dtype=np.uint64)[sel]
        child = np.ascontiguousarray(e.states(sel))
        part = (cfp % np.uint64(ctx.partitions)).astype(np.int32)
        t = storage.level_table(cfp, pfp[sel], np.asarray(e.actions)[sel], child, None)
        yield pa.RecordBatch.from_arrays([pa.array(part)] + [t.column(c).combine_chunks() for c in ("fp", "pfp", "action", "state")],
                                         schema=schema)
    if ctx.edges and edge_parts:
        _write_edges(ctx, edge_parts)
    dmin = np.array([dead_min or 0], dtype=np.uint64).view(np.int64)[0]
    tail = np.array([generated, expanded, dead_count, dmin, int(dead_min is not None)], dtype=np.int64)
    stats = np.concatenate([fired, tail])
    yield pa.RecordBatch.from_arrays(
        [pa.array([STATS_PART], pa.int32()), pa.array([0], pa.int64()), pa.array([0], pa.int64()),
         pa.array([-2], pa.int32()), pa.array([stats.tobytes()], pa.binary())], schema=schema)


def _write_edges(ctx: LevelCtx, parts) -> None:
    import pyarrow as pa
    try:
        from pyspark import TaskContext
        tc = TaskContext.get()
        tid = tc.partitionId() if tc is not None else 0
    except ImportError:
        tid = 0
    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    act = np.concatenate([p[2] for p in parts])
    t = pa.table({"src": src.view(np.int64), "dst": dst.view(np.int64), "action": act})
    fs, base = storage.fs_and_path(ctx.store)
    storage.write_table_atomic(t, f"{storage.edges_dir(base, ctx.level)}/task-{tid:05d}.parquet", fs)


def least_in_edge(fps: np.ndarray, pfp: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Indices of one entry per distinct fp: the least (parent fp, action), unsigned; sorted by fp."""
    if len(fps) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((actions, pfp, fps))
    s = fps[order]
    first = np.empty(len(s), dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return order[first]


# ---- deduplication per fingerprint partition (groupBy(part).applyInArrow) ----------------------
_VISITED: "OrderedDict[tuple, tuple[int, np.ndarray]]" = OrderedDict()


def _visited(ctx: LevelCtx, part: int) -> np.ndarray:
    """Sorted fingerprints of partition `part` in levels 0..ctx.level: from this worker's cache
    when it is current, else (partly) reloaded from the store."""
    key = (ctx.store, ctx.nonce, part)
    got = _VISITED.pop(key, None)
    if got is not None and got[0] <= ctx.level:
        upto, arr = got
        if upto < ctx.level:
            more = storage.read_fps(ctx.store, range(upto + 1, ctx.level + 1), part)
            arr = np.sort(np.concatenate([arr, more]))
    else:
        arr = np.sort(storage.read_fps(ctx.store, range(0, ctx.level + 1), part))
    return arr


def _remember(ctx: LevelCtx, part: int, arr: np.ndarray, upto: int) -> None:
    _VISITED[(ctx.store, ctx.nonce, part)] = (upto, arr)
    total = sum(v[1].nbytes for v in _VISITED.values())
    while total > ctx.cache_bytes and len(_VISITED) > 1:
        _, (_, old) = _VISITED.popitem(last=False)
        total -= old.nbytes


def in_sorted(sorted_arr: np.ndarray, x: np.ndarray) -> np.ndarray:
    if len(sorted_arr) == 0:
        return np.zeros(len(x), dtype=bool)
    i = np.searchsorted(sorted_arr, x)
    i[i == len(sorted_arr)] = len(sorted_arr) - 1
    return sorted_arr[i] == x


def dedupe_group(ctx: LevelCtx, table):
    import pyarrow as pa
    part = int(table.column("part")[0].as_py())
    if part == STATS_PART:
        return _reduce_stats(ctx, table)
    k = ctx.ref.kernel()
    fps = table.column("fp").to_numpy().view(np.uint64)
    pfp = table.column("pfp").to_numpy().view(np.uint64)
    act = table.column("action").to_numpy()
    sel = least_in_edge(fps, pfp, act)
    visited = _visited(ctx, part)
    sel = sel[~in_sorted(visited, fps[sel])]
    new_fps = fps[sel]                       # ascending (unsigned)
    if not ctx.write:
        _remember(ctx, part, visited, ctx.level)
        return pa.table({"part": pa.array([part], pa.int32()), "new": pa.array([len(sel)], pa.int64()),
                         "info": pa.array([json.dumps({"viol": {}, "wit": {}})])})
    states = storage.binary_matrix(table.column("state"), k.width, k.dtype)[sel]
    info: dict = {"viol": {}, "wit": {}}
    flags = None
    if len(sel):
        masks = k.properties(states, ctx.always + ctx.sometimes + ctx.recoverable)
        for name in ctx.always:
            m = np.asarray(masks[name], dtype=bool)
            if m.any():
                info["viol"][name] = [int(m.sum()), str(int(new_fps[m].min()))]
        for name in ctx.sometimes:
            m = np.asarray(masks[name], dtype=bool)
            if m.any():
                info["wit"][name] = str(int(new_fps[m].min()))
        if ctx.recoverable:
            bits = np.zeros((len(sel), 2 * len(ctx.recoverable)), dtype=bool)
            for i, name in enumerate(ctx.recoverable):
                bits[:, 2 * i] = np.asarray(masks[name], dtype=bool)
                bits[:, 2 * i + 1] = np.asarray(masks.get(name + ":when", np.ones(len(sel), bool)), dtype=bool)
            flags = np.packbits(bits, axis=1)
    t = storage.level_table(new_fps, pfp[sel], act[sel], states, flags)
    fs, base = storage.fs_and_path(ctx.store)
    if len(sel):
        storage.write_table_atomic(t, storage.part_file(base, ctx.level + 1, part), fs)
        merged = np.concatenate([visited, new_fps])
        merged.sort(kind="stable")
    else:
        merged = visited
    _remember(ctx, part, merged, ctx.level + 1)
    return pa.table({"part": pa.array([part], pa.int32()), "new": pa.array([len(sel)], pa.int64()),
                     "info": pa.array([json.dumps(info)])})


def _reduce_stats(ctx: LevelCtx, table):
    import pyarrow as pa
    n = ctx.n_actions
    fired = np.zeros(n, dtype=np.int64)
    generated = expanded = dead_count = 0
    dead_min = None
    for v in table.column("state").to_pylist():
        a = np.frombuffer(v, dtype=np.int64)
        fired += a[:n]
        generated += int(a[n]); expanded += int(a[n + 1]); dead_count += int(a[n + 2])
        if a[n + 4]:
            m = int(a[n + 3:n + 4].view(np.uint64)[0])
            dead_min = m if dead_min is None else min(dead_min, m)
    info = {"generated": generated, "expanded": expanded, "fired": fired.tolist(),
            "dead": [dead_count, str(dead_min)] if dead_min is not None else None}
    return pa.table({"part": pa.array([STATS_PART], pa.int32()), "new": pa.array([0], pa.int64()),
                     "info": pa.array([json.dumps(info)])})
