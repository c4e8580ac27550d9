"""`recoverable` properties judged on the executors: reverse reachability over the stored edges,
with no per-edge data on the driver.

A recoverable property is violated by a reachable `when` state from which no goal state can be
reached (through the edges the property keeps, see `checker/recoverable.py`). The edges stay in
the store (edges/LLLLL/task-TTTTT.parquet, by source level, and within a file by target partition,
so a partition's in-edges are read alone); the search is two kinds of single-stage Spark jobs of T
tasks, partition p owned by task p mod T as in the search:

    ROUND r  per partition q: the states of q that round r-1's messages newly reach (round 0:
             the goal states), one bit per property; their in-edges carry those bits back to the
             edges' sources, sent as messages (src fp, bits) to reach/msg/r+1/to=src mod P/from-q
    VERDICT  per partition and property: the `when` states not reached, counted, and the least
             (level, fp) among them

Semi-naive: only the newly reached states of a round look up their in-edges, and every property
(up to 64 at a time, one bit each) advances in the same rounds; the driver stops when a round sends
no message. A partition (sorted fps, levels, goal and when bits, in-edges by target) is prepared
once into reach/part/ and memory-mapped from there; its reached bits stay in the Python worker
between rounds, and the bits each round adds are also written to reach/delta/r/part=q, so a task
that finds no (or a stale) copy, e.g. one on another worker or a retry, rebuilds them. Every file is a deterministic function
of the round's inputs, written atomically. The driver collects per property only the count and the
least (level, fp), the state the local engines choose (`recoverable.first_chosen`: least depth,
then least fingerprint), and checks, as after every search job, that nothing was lost between the
tasks (verify.py).
"""
from __future__ import annotations

import io
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from ..lookup import concat_ranges, group_starts, search_sorted, sort_order
from . import storage

ROUND, VERDICT = "round", "verdict"
GROUP = 64          # properties judged together, one bit each in a uint64


@dataclass(frozen=True)
class Judged:
    """One recoverable property: `flag` is its position among the stored flags' properties (bit
    2*flag: goal, 2*flag+1: when); `keep[a]`: whether the edges of action a count for it."""

    name: str
    flag: int
    keep: tuple[bool, ...]


@dataclass(frozen=True)
class ReachCtx:
    store: str
    nonce: str
    partitions: int
    tasks: int
    levels: int                    # stored levels
    n_flags: int                   # properties in the stored flags column
    flags: tuple[int, ...]         # flag positions of this group's properties (bit j: flags[j])
    allowed: tuple[int, ...]       # per action: the bits of the properties whose edges it keeps
    mode: str
    round: int = 0
    files: tuple[str, ...] = ()    # the stored edge files (every level's): where partitions read their in-edges
    cache_bytes: int = 1 << 30     # per Python worker: partitions kept between rounds


def _dtype(ctx: ReachCtx):
    """The narrowest unsigned integer with a bit for each of the group's properties."""
    k = len(ctx.flags)
    return np.dtype(np.uint8 if k <= 8 else np.uint16 if k <= 16 else np.uint32 if k <= 32 else np.uint64)


def scratch(root: str) -> str:
    return f"{root}/reach"


def _msg_dir(base: str, rnd: int, part: int | None = None) -> str:
    d = f"{scratch(base)}/msg/{rnd:05d}"
    return d if part is None else f"{d}/to={part:05d}"


def _delta_file(base: str, rnd: int, part: int) -> str:
    return f"{scratch(base)}/delta/{rnd:05d}/part={part:05d}.npy"


# ---- raw arrays in one file (np.save, one after the other) -----------------------------------
def _write_arrays(fs, path: str, arrays) -> int:
    buf = io.BytesIO()
    for a in arrays:
        np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return storage.write_bytes_atomic(fs, path, buf.getvalue())


def _read_arrays(fs, path: str, k: int) -> list[np.ndarray]:
    with fs.open_input_stream(path) as f:
        buf = io.BytesIO(f.read())
    return [np.load(buf, allow_pickle=False) for _ in range(k)]


def _files(fs, d: str) -> list[str]:
    """The files under directory `d` whose names do not start with a dot, in name order."""
    from pyarrow import fs as pafs
    if fs.get_file_info(d).type != pafs.FileType.Directory:
        return []
    return sorted(i.path for i in fs.get_file_info(pafs.FileSelector(d))
                  if i.type == pafs.FileType.File and not i.base_name.startswith("."))


def _or_reduce(keys: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, the OR of the bits of each)."""
    if len(keys) == 0:
        return keys, bits
    order, k = sort_order(keys)
    b = bits[order]
    first = np.flatnonzero(group_starts(k))
    return k[first], np.bitwise_or.reduceat(b, first)


# ---- one partition, as a task keeps it between rounds ----------------------------------------
_FIELDS = ("fps", "level", "goal", "when", "starts", "src", "ebits", "counts")


class _Part:
    """A partition's states (sorted fps, levels, goal and when bits), its in-edges by target (CSR:
    the edges into state i are starts[i]:starts[i+1] of src and ebits), and the bits reached so far.
    All but `reach` are read-only, memory-mapped from the scratch space on a local store."""

    def __init__(self, fps, level, goal, when, starts, src, ebits, counts):
        self.fps, self.level, self.goal, self.when = fps, level, goal, when
        self.starts, self.src, self.ebits = starts, src, ebits
        self.missing = int(counts[0])         # in-edges whose target the store does not hold (dropped)
        self.read = int(counts[1])            # in-edges read from the store, those no property keeps included
        self.reach = np.array(goal)
        self.upto = 0                         # rounds applied to `reach`

    @property
    def nbytes(self) -> int:
        """The memory it holds privately (mapped files are the page cache's)."""
        return sum(a.nbytes for a in (self.fps, self.level, self.goal, self.when, self.starts, self.src,
                                      self.ebits, self.reach) if not isinstance(a, np.memmap))


_PARTS: "OrderedDict[tuple, _Part]" = OrderedDict()


def _part_dir(base: str, flags: tuple[int, ...], part: int) -> str:
    return f"{scratch(base)}/part/{'-'.join(map(str, flags))}/{part:05d}"


def _load(ctx: ReachCtx, q: int, out: dict) -> _Part:
    """Partition q, prepared once per judgement (`_prepare`) and kept in the scratch space, from
    where a task that has no copy of it maps it again (or reads it, on a remote store)."""
    from pyarrow import fs as pafs
    t0 = time.perf_counter()
    fs, base = storage.fs_and_path(ctx.store)
    d = _part_dir(base, ctx.flags, q)
    if fs.get_file_info(f"{d}/{_FIELDS[-1]}.npy").type != pafs.FileType.File:    # written last
        for name, a in zip(_FIELDS, _prepare(ctx, q)):
            _write_arrays(fs, f"{d}/{name}.npy", (a,))
    if isinstance(fs, pafs.LocalFileSystem):
        arrays = [np.load(f"{d}/{name}.npy", mmap_mode="r", allow_pickle=False) for name in _FIELDS]
    else:
        arrays = [_read_arrays(fs, f"{d}/{name}.npy", 1)[0] for name in _FIELDS]
    part = _Part(*arrays)
    out["load_s"] += time.perf_counter() - t0
    out["states"][q] = len(part.fps)
    out["edges"][q] = part.read
    out["missing"] += part.missing
    return part


def _prepare(ctx: ReachCtx, q: int) -> tuple[np.ndarray, ...]:
    """Partition q from the store: its states of every level (sorted by fp) with their goal and
    when bits, and its in-edges by target, with the bits of the properties whose edges each one's
    action keeps (edges that count for none are dropped)."""
    fs, base = storage.fs_and_path(ctx.store)
    W = _dtype(ctx)
    fps, lvl, fl = [], [], []
    width = storage.flag_width(ctx.n_flags)
    for lv in range(ctx.levels):
        t = storage.read_part(ctx.store, lv, q, ("fp", "flags"))
        if t is None or t.num_rows == 0:
            continue
        fps.append(t.column("fp").to_numpy().view(np.uint64))
        lvl.append(np.full(t.num_rows, lv, dtype=np.int32))
        fl.append(storage.binary_matrix(t.column("flags"), width, np.uint8))
    if fps:
        f, lv, flags = np.concatenate(fps), np.concatenate(lvl), np.concatenate(fl)
    else:
        f, lv, flags = np.zeros(0, np.uint64), np.zeros(0, np.int32), np.zeros((0, width), np.uint8)
    del fps, lvl, fl
    order, f = sort_order(f)
    lv = lv[order]
    bits = np.unpackbits(flags[order], axis=1, count=2 * ctx.n_flags).astype(W)
    goal, when = np.zeros(len(f), W), np.zeros(len(f), W)
    for j, flag in enumerate(ctx.flags):
        goal |= bits[:, 2 * flag] << W.type(j)
        when |= bits[:, 2 * flag + 1] << W.type(j)
    del bits, flags
    allowed = np.asarray(ctx.allowed, dtype=np.uint64).astype(W)
    dst, src, eb = [], [], []
    read = 0
    for path in ctx.files:
        try:
            t = storage.read_edges_into(fs, path, q)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not an edges file of this store ({exc})") from None
        if t is None:
            continue
        read += t.num_rows
        b = allowed[t.column("action").to_numpy()]
        k = b != 0
        dst.append(t.column("dst").to_numpy().view(np.uint64)[k])
        src.append(t.column("src").to_numpy().view(np.uint64)[k])
        eb.append(b[k])
        del t
    if dst:
        d, s, b = np.concatenate(dst), np.concatenate(src), np.concatenate(eb)
    else:
        d, s, b = np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, W)
    del dst, src, eb
    starts, s, b, missing = in_edges_by_target(f, d, s, b)
    return f, lv, goal, when, starts, s, b, np.array([missing, read], dtype=np.int64)


def in_edges_by_target(f: np.ndarray, d: np.ndarray, s: np.ndarray, b: np.ndarray):
    """(starts, src, bits, missing): the edges (target d, source s, bits b) grouped by target as CSR rows over
    the sorted states `f` (the edges into f[i] are starts[i]:starts[i+1] of src and bits), dropping the
    `missing` edges whose target is not among f."""
    # sorted by target: the in-edges of each state are then a run, found by one binary search per distinct
    # target (kafka nightly, 22 M in-edges a partition: 31 s with a binary search per edge in random order)
    order, d = sort_order(d)
    s, b = s[order], b[order]
    del order
    first = np.flatnonzero(group_starts(d))
    runs = np.diff(np.r_[first, len(d)])
    targets = d[first]
    del d
    at, found = search_sorted(f, targets)
    missing = int(runs[~found].sum())
    if missing:
        keep = np.repeat(found, runs)
        s, b, at, runs = s[keep], b[keep], at[found], runs[found]
    starts = np.zeros(len(f) + 1, dtype=np.int64)
    starts[at + 1] = runs
    np.cumsum(starts, out=starts)
    return starts, s, b, missing


def _part(ctx: ReachCtx, q: int, out: dict, upto: int) -> _Part:
    """Partition q with the bits of rounds 0..upto reached: this worker's copy (taken out of the
    cache, so a task that fails half-way leaves none behind), topped up with the rounds it missed,
    else rebuilt from the store."""
    key = (ctx.store, ctx.nonce, ctx.flags, q)
    part = _PARTS.pop(key, None)
    if part is None or part.upto > upto:
        part = _load(ctx, q, out)
    fs, base = storage.fs_and_path(ctx.store)
    for rnd in range(part.upto + 1, upto + 1):
        u, b = _read_arrays(fs, _delta_file(base, rnd, q), 2)
        part.reach[u] |= b
    part.upto = upto
    return part


def _remember(ctx: ReachCtx, q: int, part: _Part) -> None:
    _PARTS[(ctx.store, ctx.nonce, ctx.flags, q)] = part
    total = sum(p.nbytes for p in _PARTS.values())
    while total > ctx.cache_bytes and len(_PARTS) > 1:
        _, old = _PARTS.popitem(last=False)
        total -= old.nbytes


def _drop_stale(ctx: ReachCtx) -> None:
    """Free what this worker holds for the store and no longer needs: the search's visited
    fingerprints (worker.py) and the partitions of earlier judgements."""
    from . import worker
    for key in [k for k in worker._VISITED if k[0] == ctx.store]:
        del worker._VISITED[key]
    for key in [k for k in _PARTS if k[0] == ctx.store and k[1] != ctx.nonce]:
        del _PARTS[key]


# ---- the tasks -------------------------------------------------------------------------------
def run_task(ctx: ReachCtx, task: int) -> dict:
    t0 = time.perf_counter()
    out = {"task": task, "sent": [0] * ctx.partitions, "states": {}, "edges": {}, "recv": {},
           "missing": 0, "new": 0, "bad": {}, "load_s": 0.0}
    _drop_stale(ctx)
    for q in range(task, ctx.partitions, ctx.tasks):
        if ctx.mode == ROUND:
            _round(ctx, q, out)
        else:
            _verdict(ctx, q, out)
    out["seconds"] = time.perf_counter() - t0
    return out


def _round(ctx: ReachCtx, q: int, out: dict) -> None:
    fs, base = storage.fs_and_path(ctx.store)
    W = _dtype(ctx)
    r = ctx.round
    if r == 0:
        part = _part(ctx, q, out, 0)
        new = np.flatnonzero(part.goal)
        nb = part.goal[new]
    else:
        part = _part(ctx, q, out, r - 1)
        fps, bits = [], []
        for path in _files(fs, _msg_dir(base, r, q)):
            f, b = _read_arrays(fs, path, 2)
            fps.append(f), bits.append(b)
        f = np.concatenate(fps) if fps else np.zeros(0, np.uint64)
        b = np.concatenate(bits).astype(W) if bits else np.zeros(0, W)
        out["recv"][q] = len(f)
        loc = np.searchsorted(part.fps, f)
        ok = loc < len(part.fps)
        ok[ok] = part.fps[loc[ok]] == f[ok]
        out["missing"] += int((~ok).sum())
        got = np.zeros(len(part.fps), W)     # the bits each state receives, OR-ed (no sort)
        np.bitwise_or.at(got, loc[ok], b[ok])
        got &= ~part.reach
        new = np.flatnonzero(got)
        nb = got[new]
        part.reach[new] |= nb
        _write_arrays(fs, _delta_file(base, r, q), (new, nb))
        part.upto = r
    out["new"] += len(new)
    if not len(new):
        _remember(ctx, q, part)
        return
    # the in-edges of the newly reached states carry their bits back to the edges' sources
    lo = part.starts[new]
    counts = part.starts[new + 1] - lo
    idx = concat_ranges(lo, counts)
    s = part.src[idx]
    b = np.repeat(nb, counts) & part.ebits[idx]
    k = b != 0
    s, b = _or_reduce(s[k], b[k])
    _remember(ctx, q, part)
    if not len(s):
        return
    dest = storage.partition_keys(s, ctx.partitions)
    order = np.argsort(dest, kind="stable")      # a radix sort for 16-bit keys
    s, b, dest = s[order], b[order], dest[order]
    counts = np.bincount(dest, minlength=ctx.partitions)
    bounds = np.r_[0, np.cumsum(counts)]
    # one file per (sending partition, target partition): names stay deterministic under retries
    for p in np.flatnonzero(counts):
        a, z = int(bounds[p]), int(bounds[p + 1])
        _write_arrays(fs, f"{_msg_dir(base, r + 1, int(p))}/from-{q:05d}.npy", (s[a:z], b[a:z]))
        out["sent"][int(p)] += z - a


def _verdict(ctx: ReachCtx, q: int, out: dict) -> None:
    """Per property: how many `when` states of q reach no goal, and the least (level, fp) of them."""
    part = _part(ctx, q, out, ctx.round)
    W = _dtype(ctx)
    bad = part.when & ~part.reach
    for j in range(len(ctx.flags)):
        m = np.flatnonzero((bad >> W.type(j)) & W.type(1))
        if not len(m):
            continue
        lv = int(part.level[m].min())
        fp = int(part.fps[m[part.level[m] == lv]].min())
        old = out["bad"].get(j)
        best = min((lv, fp), (old[1], int(old[2]))) if old else (lv, fp)
        out["bad"][j] = [len(m) + (old[0] if old else 0), best[0], str(best[1])]
    # the last use of the partition: not cached again


# ---- the driver ------------------------------------------------------------------------------
def judge(call, root: str, partitions: int, tasks: int, levels: int, edge_levels: int, n_flags: int,
          judged: tuple[Judged, ...], visited: np.ndarray, n_actions: int) -> tuple[dict, dict]:
    """({name: (level, fp) of the chosen unrecoverable state, or None when the property holds},
    statistics). `call(ctx)`: run one job of `tasks` tasks of `run_task` and collect their dicts;
    `visited`: the states the driver recorded per partition (all levels); the edges are those out
    of levels < edge_levels."""
    from .verify import StoreNotShared, edge_rows, FIX
    fs, base = storage.fs_and_path(root)
    storage.remove_dir(root, scratch(base))
    nonce = uuid.uuid4().hex
    files = []
    for lv in range(edge_levels):
        files += [p for p in _files(fs, storage.edges_dir(base, lv)) if p.rsplit("/", 1)[1].startswith("task-")]
    want_edges = sum(edge_rows(root, lv) for lv in range(edge_levels))
    verdicts: dict = {}
    stats = {"rounds": [], "edges": int(want_edges), "messages": 0, "seconds": 0.0,
             "rounds_s": 0.0, "verdict_s": 0.0, "load_s": 0.0}

    def timed(key, ctx):
        t0 = time.perf_counter()
        got = call(ctx)
        stats[key] = round(stats[key] + time.perf_counter() - t0, 3)
        stats["load_s"] = round(stats["load_s"] + max(r["load_s"] for r in got), 3)   # the slowest task's
        return got
    t_start = time.perf_counter()
    try:
        for g in range(0, len(judged), GROUP):
            group = judged[g:g + GROUP]
            allowed = np.zeros(n_actions, dtype=np.uint64)
            for j, prop in enumerate(group):
                allowed |= np.asarray(prop.keep, dtype=np.uint64) << np.uint64(j)
            base_ctx = ReachCtx(root, nonce, partitions, tasks, levels, n_flags, tuple(p.flag for p in group),
                                tuple(int(a) for a in allowed), ROUND, files=tuple(files))
            sent = None
            rnd = 0
            while True:
                got = timed("rounds_s", replace(base_ctx, round=rnd))
                _check_round(got, rnd, sent, visited, root)
                if rnd == 0:       # every partition was prepared from the store in round 0
                    read = sum(sum(r["edges"].values()) for r in got)
                    if read != want_edges:
                        raise StoreNotShared(f"the Spark executors read {read:,} stored edges of the store at {root}, "
                                             f"the driver reads {want_edges:,}: {FIX}")
                storage.remove_dir(root, _msg_dir(base, rnd))
                sent = np.sum([r["sent"] for r in got], axis=0)
                stats["rounds"].append(int(sum(r["new"] for r in got)))
                stats["messages"] += int(sent.sum())
                if not sent.any():
                    break
                rnd += 1
            got = timed("verdict_s", replace(base_ctx, mode=VERDICT, round=rnd))
            _check_round(got, None, None, visited, root)
            for j, prop in enumerate(group):
                found = [r["bad"][j] for r in got if j in r["bad"]]
                verdicts[prop.name] = min((b[1], int(b[2])) for b in found) if found else None
    finally:
        storage.remove_dir(root, scratch(base))
    stats["seconds"] = round(time.perf_counter() - t_start, 3)
    return verdicts, stats


def _check_round(got: list[dict], rnd: int | None, sent, visited: np.ndarray, root: str) -> None:
    """Nothing lost between the tasks: every partition loaded holds the states the driver recorded;
    every message of round `rnd` > 0 arrived; every edge and message names a stored state."""
    from .verify import StoreNotShared, FIX
    P = len(visited)
    for r in got:
        for q, n in r["states"].items():
            if n != int(visited[int(q)]):
                raise StoreNotShared(f"the Spark executors read {n:,} states of partition {q} of the store at {root} "
                                     f"for the recoverable properties, the driver recorded {int(visited[int(q)]):,}: "
                                     f"{FIX}")
        if r["missing"]:
            raise StoreNotShared(f"the Spark executors found {r['missing']:,} edges into states that the store at "
                                 f"{root} does not hold: {FIX}")
    if not rnd:
        return
    seen = np.zeros(P, dtype=np.int64)
    for r in got:
        for q, n in r["recv"].items():
            seen[int(q)] = n
    if not np.array_equal(seen, sent):
        raise StoreNotShared(f"the Spark executors lost messages of round {rnd} of the reverse search between "
                             f"tasks in the store at {root} ({int(sent.sum()):,} sent, {int(seen.sum()):,} "
                             f"received): {FIX}")
