"""The Spark engine: the level-synchronous breadth-first search of `outcome.py`, on any Spark
cluster, with the vector kernel doing the work on executors.

One Spark job per level:

    frontier (Parquet, level d: fp, state)
      -> mapInArrow(expand)        executors rebuild the model from the ModelRef, expand each Arrow
                                   batch with the vector kernel, keep per child fp its least
                                   (parent fp, action), tag it with part = fp mod P
      -> groupBy(part).applyInArrow(dedupe)
                                   one call per fingerprint partition: least in-edge per fp, minus
                                   the partition's visited fingerprints (a sorted array cached in
                                   the Python worker, reloaded from the store when absent), checks
                                   properties on the new states, writes them as
                                   levels/d+1/part=P/data.parquet, returns counts and the least
                                   violating fingerprint per property
      -> collect() of one small row per partition

The visited set is never shuffled: only the level's candidate successors are. Every level is on
storage (and recorded in the manifest) before the next starts, so `resume` continues a killed run
from its last complete level with the same result; Spark's task retry survives lost executors
(outputs are deterministic and written atomically, so a retried task rewrites the same file).
At the end the driver builds the BFS-order index (fps, parent, action) as memory-mapped .npy
files, one level at a time, so the driver never holds the visited set in RAM.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from functools import partial

import numpy as np

from txncheck.checker.outcome import ExploreOptions, SearchOutcome
from txncheck.checker.progress import peak_rss

from . import storage
from .ref import ModelRef, SparkOptions
from .session import SparkEngineError
from .worker import EXPAND_SCHEMA, GROUP_SCHEMA, STATS_PART, LevelCtx, dedupe_group, expand as _expand

__all__ = ["explore", "ModelRef", "SparkOptions", "SparkEngineError"]


def _selected(model, options: ExploreOptions):
    if options.properties is None:
        return model.properties
    names = set(options.properties)
    return tuple(p for p in model.properties if p.name in names)


class _State:
    """The search's bookkeeping, advanced by one level record at a time (also when replaying
    the manifest of a resumed run), following scalar.py's loop exactly."""

    def __init__(self, options: ExploreOptions, n_actions: int, stop_on_violation: bool):
        self.options = options
        self.levels: list[int] = []
        self.generated = 0
        self.fired = np.zeros(n_actions, dtype=np.int64)
        self.violations: dict[str, tuple[int, int]] = {}   # name -> (level, fp)
        self.witnesses: dict[str, tuple[int, int]] = {}
        self.deadlock: tuple[int, int] | None = None
        self.complete, self.stop_reason = True, None
        self.finished = False
        self.stop_on_violation = stop_on_violation

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def total(self) -> int:
        return int(sum(self.levels))

    def _check(self, rec, level: int) -> bool:
        found = False
        for name, (_, fp) in rec.get("viol", {}).items():
            if name not in self.violations:
                self.violations[name] = (level, int(fp))
                found = True
        for name, fp in rec.get("wit", {}).items():
            if name not in self.witnesses:
                self.witnesses[name] = (level, int(fp))
        return found

    def initial(self, rec) -> None:
        self.levels = [int(rec["new"])]
        if self._check(rec, 0) and self.stop_on_violation:
            self.complete, self.stop_reason, self.finished = False, "violation", True

    def at_limit(self) -> bool:
        return self.options.max_depth is not None and self.depth >= self.options.max_depth

    def advance(self, rec) -> None:
        """One expansion of the current last level (record produced by `_run_level`)."""
        d = self.depth
        self.generated += int(rec["generated"])
        self.fired += np.asarray(rec["fired"], dtype=np.int64)
        found = False
        if rec.get("dead") and self.deadlock is None:
            self.deadlock = (d, int(rec["dead"][1]))
            found = True
        if rec.get("limit"):
            if rec["new"]:
                self.complete, self.stop_reason = False, "max_depth"
            self.finished = True
            return
        if rec["new"]:
            self.levels.append(int(rec["new"]))
        else:
            self.finished = True  # empty frontier: the search is over
        found = self._check(rec, d + 1) or found
        if found and self.stop_on_violation:
            self.complete, self.stop_reason, self.finished = False, "violation", True
            return
        ms = self.options.max_states
        if not self.finished and ms is not None and self.total >= ms:
            self.complete, self.stop_reason, self.finished = False, "max_states", True


def explore(model_ref: ModelRef, options: ExploreOptions, spark_options: SparkOptions | None = None) -> SearchOutcome:
    t_start = time.perf_counter()
    sopts = spark_options or SparkOptions()
    model = model_ref.build()
    kernel = model_ref.kernel()
    if bool(options.symmetry) != bool(model_ref.symmetry):
        model_ref = ModelRef(model_ref.spec, model_ref.config, model_ref.overrides, model_ref.variant,
                             bool(options.symmetry))
        kernel = model_ref.kernel()
    selected = _selected(model, options)
    always = tuple(p.name for p in selected if p.kind == "always")
    sometimes = tuple(p.name for p in selected if p.kind == "sometimes")
    recoverable = tuple(p.name for p in selected if p.kind == "recoverable")
    n_actions = len(model.actions)

    workdir = tempfile.mkdtemp(prefix="txncheck-spark-", dir=options.workdir)
    root = sopts.resume or sopts.store or os.path.join(workdir, "store")
    if sopts.resume and not storage.Manifest(root).exists() and storage.Manifest(os.path.join(root, "spark")).exists():
        root = os.path.join(root, "spark")
    keep = sopts.keep_store if sopts.keep_store is not None else bool(sopts.store or sopts.resume)
    manifest = storage.Manifest(root)
    st = _State(options, n_actions, options.stop_on_violation)
    records: list[dict] = []
    level_times: list[float] = []
    search_key = {"model": model_ref.to_json(), "always": always, "sometimes": sometimes,
                  "recoverable": recoverable, "check_deadlock": options.check_deadlock,
                  "max_states": options.max_states, "max_depth": options.max_depth,
                  "stop_on_violation": options.stop_on_violation}
    if sopts.resume:
        if not manifest.exists():
            raise SparkEngineError(f"--resume {sopts.resume}: no Spark engine store there (no manifest.json); "
                                   "pass the directory given as --out to the killed run")
        data = manifest.load()
        if data["search"] != json.loads(json.dumps(search_key)):
            raise SparkEngineError(f"--resume {sopts.resume}: that store was written for another model or "
                                   f"options ({data['search']['model']}); run without --resume to start over")
        partitions = int(data["partitions"])
        records = data["records"]
        st.initial(records[0])
        for rec in records[1:]:
            st.advance(rec)
        # anything beyond the last record was written by the killed level: drop it
        manifest.clear_levels_from(len(st.levels), max(len(st.levels) - 1, 0))
    else:
        partitions = None
        if manifest.exists() or sopts.store:
            manifest.clear_levels_from(0, 0)

    spark = None
    owned = True
    nonce = uuid.uuid4().hex
    try:
        if not st.finished or not records:
            spark, owned = _session(sopts, workdir)
            if partitions is None:
                dp = spark.sparkContext.defaultParallelism
                partitions = int(sopts.partitions or max(4, 2 * dp))
            spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
            if not records:
                manifest.data = {"version": storage.SCHEMA_VERSION, "search": json.loads(json.dumps(search_key)),
                                 "partitions": partitions, "records": [], "engine": "spark"}
                rec = _initial_level(kernel, model, root, partitions, always, sometimes, recoverable)
                records.append(rec)
                manifest.data["records"] = records
                manifest.save()
                st.initial(rec)
            else:
                manifest.data["records"] = records
            t_run = time.perf_counter()
            states_run0 = st.total
            while not st.finished:
                t0 = time.perf_counter()
                ctx = LevelCtx(model_ref, root, nonce, st.depth, partitions, always, sometimes, recoverable,
                               options.check_deadlock, bool(recoverable), n_actions)
                rec = _run_level(spark, ctx, limit=st.at_limit())
                dt = time.perf_counter() - t0
                rec["seconds"] = round(dt, 4)
                records.append(rec)
                manifest.data["records"] = records
                manifest.save()          # the level is durable from here on
                st.advance(rec)
                level_times.append(dt)
                if options.progress:
                    rate = (st.total - states_run0) / max(time.perf_counter() - t_run, 1e-9)
                    print(f"progress [spark]: depth {st.depth}, {st.total:,} states (+{rec['new']:,}), "
                          f"{st.generated:,} generated, {rate:,.0f} states/s, level {dt:.2f} s",
                          file=sys.stderr, flush=True)
        manifest.data["finished"] = True
        manifest.save()
    finally:
        if spark is not None and owned:
            spark.stop()

    (fps, parent, action), masks = storage.build_index(root, st.levels, list(recoverable))
    offsets = np.concatenate([[0], np.cumsum(st.levels)]).astype(np.int64)

    def index_of(level: int, fp: int) -> int:
        lo, hi = int(offsets[level]), int(offsets[level + 1])
        i = lo + int(np.searchsorted(fps[lo:hi], np.uint64(fp)))
        if i >= hi or int(fps[i]) != fp:
            raise SparkEngineError(f"store {root}: fingerprint {fp:#x} missing from level {level}")
        return i

    edges = None
    if recoverable:
        src, dst, act = storage.read_edges(root, len(st.levels))
        order = np.argsort(fps, kind="stable")
        sfps = np.asarray(fps)[order]

        def to_index(x):
            i = np.searchsorted(sfps, x)
            i[i == len(sfps)] = 0
            ok = sfps[i] == x
            return order[i], ok
        si, sok = to_index(src)
        di, dok = to_index(dst)
        keep_e = sok & dok
        edges = (si[keep_e].astype(np.int64), di[keep_e].astype(np.int64), act[keep_e].astype(np.int32))
    n = len(fps)
    out = SearchOutcome(
        fps=fps, parent=parent, action=action, level_sizes=list(st.levels), generated=st.generated,
        fired=st.fired, violations={k: index_of(*v) for k, v in st.violations.items()},
        witnesses={k: index_of(*v) for k, v in st.witnesses.items()},
        deadlock=index_of(*st.deadlock) if st.deadlock is not None else None,
        goal_masks={k: v[0] for k, v in masks.items()}, when_masks={k: v[1] for k, v in masks.items()},
        edges=edges, complete=st.complete, stop_reason=st.stop_reason,
        elapsed=time.perf_counter() - t_start, peak_memory=peak_rss(), engine="spark",
        store_bytes=n * 20 + (len(edges[0]) * 20 if edges else 0),
        extra={"partitions": partitions, "master": sopts.master, "store": root if keep else None,
               "level_seconds": [r.get("seconds") for r in records[1:]],
               "resumed_levels": len(records) - 1 - len(level_times) if sopts.resume else 0,
               "kernel": type(kernel).__name__})
    if not keep:
        # the memory-mapped index lives in the store; copy it out before removing the store
        out.fps, out.parent, out.action = np.array(fps), np.array(parent), np.array(action)
        del fps, parent, action
        storage.remove_store(root)
    shutil.rmtree(workdir, ignore_errors=True)
    return out


def _session(sopts: SparkOptions, workdir: str):
    """(session, owned): an active session is reused (and left running) when allowed."""
    if sopts.reuse_session:
        from pyspark.sql import SparkSession
        active = SparkSession.getActiveSession()
        if active is not None:
            return active, False
    from .session import start_session
    return start_session(sopts, workdir), True


def _initial_level(kernel, model, root, partitions, always, sometimes, recoverable) -> dict:
    init = np.ascontiguousarray(kernel.initial())
    fps = np.asarray(kernel.fingerprints(init), dtype=np.uint64)
    order = np.argsort(fps, kind="stable")
    keep = order[np.concatenate([[True], fps[order][1:] != fps[order][:-1]])] if len(fps) else order
    init, fps = init[keep], fps[keep]
    masks = kernel.properties(init)
    rec: dict = {"new": int(len(fps)), "viol": {}, "wit": {}}
    for name in always:
        m = np.asarray(masks[name], dtype=bool)
        if m.any():
            rec["viol"][name] = [int(m.sum()), str(int(fps[m].min()))]
    for name in sometimes:
        m = np.asarray(masks[name], dtype=bool)
        if m.any():
            rec["wit"][name] = str(int(fps[m].min()))
    flags = None
    if recoverable:
        bits = np.zeros((len(fps), 2 * len(recoverable)), dtype=bool)
        for i, name in enumerate(recoverable):
            bits[:, 2 * i] = masks[name]
            bits[:, 2 * i + 1] = masks.get(name + ":when", np.ones(len(fps), bool))
        flags = np.packbits(bits, axis=1)
    parts = (fps % np.uint64(partitions)).astype(np.int64)
    fs, base = storage.fs_and_path(root)
    for p in np.unique(parts):
        m = parts == p
        t = storage.level_table(fps[m], np.zeros(int(m.sum()), np.uint64), np.full(int(m.sum()), -1, np.int32),
                                init[m], flags[m] if flags is not None else None)
        storage.write_table_atomic(t, storage.part_file(base, 0, int(p)), fs)
    return rec


def _run_level(spark, ctx: LevelCtx, limit: bool) -> dict:
    frontier = spark.read.parquet(storage.level_dir(_spark_path(ctx.store), ctx.level)).select("fp", "state")
    succ = frontier.mapInArrow(partial(_expand, ctx), EXPAND_SCHEMA)
    ctx2 = ctx if not limit else _limited(ctx)
    rows = succ.groupBy("part").applyInArrow(partial(dedupe_group, ctx2), GROUP_SCHEMA).collect()
    rec: dict = {"new": 0, "viol": {}, "wit": {}, "generated": 0, "fired": [0] * ctx.n_actions, "dead": None}
    if limit:
        rec["limit"] = True
    for r in rows:
        info = json.loads(r["info"])
        if r["part"] == STATS_PART:
            rec["generated"] = info["generated"]
            rec["fired"] = info["fired"]
            rec["dead"] = info["dead"]
            continue
        rec["new"] += int(r["new"])
        for name, (cnt, fp) in info["viol"].items():
            old = rec["viol"].get(name)
            rec["viol"][name] = [cnt + (old[0] if old else 0), str(min(int(fp), int(old[1])) if old else int(fp))]
        for name, fp in info["wit"].items():
            old = rec["wit"].get(name)
            rec["wit"][name] = str(min(int(fp), int(old)) if old else int(fp))
    return rec


def _spark_path(root: str) -> str:
    return root if "://" in root else "file://" + os.path.abspath(root)


def _limited(ctx: LevelCtx) -> LevelCtx:
    from dataclasses import replace
    return replace(ctx, always=(), sometimes=(), recoverable=(), write=False)
