"""The Spark engine: the level-synchronous breadth-first search of `outcome.py`, on any Spark
cluster, with the vector kernel doing the work on executors.

One single-stage Spark job per level, T tasks (T = the cluster's parallelism), each owning the
fingerprint partitions p = t, t + T, ... (P partitions in all, fp mod P). Task t, for each of its
partitions (see worker.py):

    candidates of level d+1 sent to p (Arrow files under cand/, written by the previous job)
      -> least (parent fp, action) per fp, minus the partition's visited fingerprints (a sorted
         array cached in the Python worker, topped up from the store when stale)
      -> properties checked on the new states; levels/d+1/part=p/data.parquet written
      -> the new states expanded at once; their candidates routed by fp mod P into cand/d+2/
      -> one small dict of counts returned (collect)

So the candidates of a level cross the store once and are never shuffled by Spark, the visited
set never moves, and there is no per-level planning, count() or second stage. The first job of a
run (and of a resume) only expands the last stored level. The driver records each level in
`manifest.json` after its job (its Parquet files are complete by then) and only then starts the
next job, so `resume` continues a killed run from its last complete level with the same result;
Spark's task retry survives lost executors (every file a task writes is a deterministic function
of its inputs, written atomically). Before recording a level the driver checks that nothing was
lost between it and the executors (verify.py): a store they do not share is an error, never a
verdict. At the end the executors judge the recoverable properties by a reverse search over the
stored edges (reach.py), and the driver builds the BFS-order index (fps, parent, action) as
memory-mapped .npy files, one level at a time, so it never holds the visited set, nor any edge
unless eventually / leads_to properties are selected: those are judged on the driver, over the
edges out of the states where such a property's goal fails (the only edges their judgement reads).
"""
from __future__ import annotations

import dataclasses
from dataclasses import replace
import os
import shutil
import sys
import tempfile
import time
import uuid
from functools import partial

import numpy as np

from txncheck.checker import checkpoint
from txncheck.checker.levels import DEADLOCK, VIOLATION, WITNESS, Findings, LevelRules
from txncheck.checker.lookup import StoredIndex, group_starts
from txncheck.checker.no_room import is_no_room
from txncheck.checker.outcome import ExploreOptions, SearchOutcome, selected_properties
from txncheck.checker.progress import Progress, peak_rss
from txncheck.checker.recoverable import index_dtype
from txncheck.spec.model import EVENTUALLY, GRAPH_KINDS, LEADS_TO, RECOVERABLE

from . import reach, storage
from .available import require_spark
from .ref import ModelRef, SparkOptions
from .failures import NoRoom, job_failure, raise_any, store_full, task_result
from .session import SparkEngineError
from .verify import Ledger, StoreNotShared, edge_rows, stored_rows
from .worker import COUNT, EXPAND, STEP, LevelCtx, run_task

__all__ = ["explore", "ModelRef", "SparkOptions", "SparkEngineError", "StoreNotShared"]


class _State:
    """The search's bookkeeping, advanced by one level record at a time (also when replaying the
    manifest of a resumed run); when to stop is decided by the rules every engine shares."""

    def __init__(self, options: ExploreOptions, n_actions: int, stop_on_violation: bool):
        self.rules = LevelRules(replace(options, stop_on_violation=stop_on_violation))
        self.generated = 0
        self.fired = np.zeros(n_actions, dtype=np.int64)
        self.found = Findings()   # refs: (level, fp)

    levels = property(lambda self: self.rules.levels)
    depth = property(lambda self: self.rules.depth)
    total = property(lambda self: self.rules.total)
    complete = property(lambda self: self.rules.complete)
    stop_reason = property(lambda self: self.rules.stop_reason)
    finished = property(lambda self: self.rules.finished)

    def _check(self, rec, level: int) -> bool:
        found = False
        for name, (_, fp) in rec.get("viol", {}).items():
            found = self.found.offer(VIOLATION, name, level, int(fp), (level, int(fp))) or found
        for name, fp in rec.get("wit", {}).items():
            self.found.offer(WITNESS, name, level, int(fp), (level, int(fp)))
        return found

    def initial(self, rec) -> None:
        self.rules.initial(int(rec["new"]), self._check(rec, 0))

    def at_limit(self) -> bool:
        return self.rules.at_limit()

    def advance(self, rec) -> None:
        """One expansion of the current last level (record produced by `_run_level`)."""
        d = self.depth
        self.generated += int(rec["generated"])
        self.fired += np.asarray(rec["fired"], dtype=np.int64)
        found = False
        if rec.get("dead"):
            fp = int(rec["dead"][1])
            found = self.found.offer(DEADLOCK, "", d, fp, (d, fp))
        if rec.get("limit"):
            self.rules.advance(int(rec["new"]), found, limit=True)
            return
        found = self._check(rec, d + 1) or found
        self.rules.advance(int(rec["new"]), found)


def absolute(path: str | None) -> str | None:
    """`path` made absolute on the driver. Executors resolve a relative path against their own
    working directory (a standalone worker's is work/app-*/N/), not the driver's, so a relative
    store splits into one per process."""
    if path is None or "://" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def explore(model_ref: ModelRef, options: ExploreOptions, spark_options: SparkOptions | None = None,
            model=None) -> SearchOutcome:
    """`model`: the driver's ground model of `model_ref` when the caller has it (not grounded again)."""
    # first: a missing pyspark/pyarrow is a ConfigError naming the fix, not an ImportError further on
    require_spark(java=False)
    t_start = time.perf_counter()
    sopts = spark_options or SparkOptions()
    sopts = dataclasses.replace(sopts, store=absolute(sopts.store), resume=absolute(sopts.resume))
    model = model if model is not None else model_ref.build()
    kernel = model_ref.kernel(model)
    if bool(options.symmetry) != bool(model_ref.symmetry):
        model_ref = dataclasses.replace(model_ref, symmetry=bool(options.symmetry))
        kernel = model_ref.kernel(model)
    selected = selected_properties(model, options)
    always = tuple(p.name for p in selected if p.kind == "always")
    sometimes = tuple(p.name for p in selected if p.kind == "sometimes")
    recoverable = tuple(p.name for p in selected if p.kind in GRAPH_KINDS)   # their flags in the store
    n_actions = len(model.actions)
    # eventually / leads_to: their fair cycles are found on the driver, over the edges out of their goal-less
    # states; the recoverable properties need nearly every edge (Kafka ci: 90%), so they are judged on the
    # executors whatever else is selected, and no run brings every edge to the driver
    liveness = tuple(p.name for p in selected if p.kind in (EVENTUALLY, LEADS_TO))
    judged = _judged(model, selected, recoverable)

    workdir = os.path.abspath(tempfile.mkdtemp(prefix="txncheck-spark-", dir=options.workdir))
    root = sopts.resume or sopts.store or os.path.join(workdir, "store")
    if sopts.resume and not storage.Manifest(root).exists() and storage.Manifest(os.path.join(root, "spark")).exists():
        root = os.path.join(root, "spark")
    keep = sopts.keep_store if sopts.keep_store is not None else bool(sopts.store or sopts.resume)
    manifest = storage.Manifest(root)
    st = _State(options, n_actions, options.stop_on_violation)
    records: list[dict] = []
    level_times: list[float] = []
    key = checkpoint.search_key(model_ref.to_json(), options, always, sometimes, recoverable)
    if sopts.resume:
        if not manifest.exists():
            raise SparkEngineError(f"--resume {sopts.resume}: no Spark engine store there (no manifest.json); "
                                   "pass the killed run's --out or --checkpoint directory")
        data = manifest.load()
        checkpoint.refuse_other(f"--resume {sopts.resume}: that store", data["search"], key, SparkEngineError)
        partitions = int(data["partitions"])
        records = data["records"]
        st.initial(records[0])
        for rec in records[1:]:
            st.advance(rec)
        # anything beyond the last record was written by the killed level: drop it
        manifest.clear_levels_from(len(st.levels), max(len(st.levels) - 1, 0))
        ledger = Ledger(root, partitions)
        ledger.load(records, len(st.levels))
    else:
        partitions = ledger = None
        if manifest.exists() or sopts.store:
            manifest.clear_levels_from(0, 0)

    spark = None
    owned = True
    bad_refs: dict = {}      # recoverable property -> (level, fp) of its chosen unrecoverable state, or None
    reach_stats: dict = {}
    nonce = uuid.uuid4().hex
    stats: list[dict] = []
    phases: dict[str, float] = {}
    from concurrent.futures import ThreadPoolExecutor
    cleaner = ThreadPoolExecutor(1, thread_name_prefix="txncheck-clean")
    done = False
    try:
        if not st.finished or not records:
            phases["setup"] = time.perf_counter() - t_start
            spark, owned = _session(sopts, workdir)
            phases["session"] = time.perf_counter() - t_start - phases["setup"]
            sc = spark
            dp = sc.defaultParallelism
            if partitions is None:
                partitions = int(sopts.partitions or max(4, 2 * dp))
            tasks = max(1, min(partitions, int(sopts.tasks or dp)))
            if not records:
                manifest.data = {"version": storage.SCHEMA_VERSION, "search": key,
                                 "partitions": partitions, "records": [], "engine": "spark"}
                rec = _initial_level(kernel, model, root, partitions, always, sometimes, recoverable)
                ledger = Ledger(root, partitions)
                rec["parts"] = stored_rows(root, 0, partitions).tolist()
                if sum(rec["parts"]) != rec["new"]:
                    raise StoreNotShared(f"the driver cannot read back the {rec['new']} initial states it wrote "
                                         f"to {root} (it reads {sum(rec['parts'])}); check that filesystem")
                ledger.add_level(rec["parts"])
                records.append(rec)
                manifest.data["records"] = records
                manifest.save()
                st.initial(rec)
            else:
                manifest.data["records"] = records
            runner = _Runner(sc, tasks)
            t_run = time.perf_counter()
            states_run0 = st.total
            pending = None       # expansion counts of the current last level (done by the previous job)
            while not st.finished:
                t0 = time.perf_counter()

                def ctx(mode):
                    return LevelCtx(model_ref, root, nonce, st.depth, partitions, tasks, always, sometimes,
                                    recoverable, options.check_deadlock, bool(recoverable), n_actions, mode,
                                    batch_rows=sopts.batch_rows)
                if pending is None:
                    pending = _merge(runner.run(ctx(EXPAND)), stats, st.depth, EXPAND)
                    ledger.check(pending, st.depth, EXPAND)
                mode = COUNT if st.at_limit() else STEP
                got = _merge(runner.run(ctx(mode)), stats, st.depth, mode)
                # before the level is recorded: a level the driver cannot read all of is an error
                parts = ledger.check(got, st.depth, mode)
                rec = {"new": got["new"], "viol": got["viol"], "wit": got["wit"],
                       "generated": pending["generated"], "fired": pending["fired"], "dead": pending["dead"]}
                if mode == COUNT:
                    rec["limit"] = True
                if parts is not None:
                    rec["parts"] = parts
                pending = got
                dt = time.perf_counter() - t0
                rec["seconds"] = round(dt, 4)
                records.append(rec)
                manifest.data["records"] = records
                manifest.save()          # the level is durable from here on
                cleaner.submit(storage.remove_candidates, root, st.depth + 1)   # consumed; off the critical path
                st.advance(rec)
                if len(st.levels) > len(ledger.levels):
                    ledger.add_level(parts)
                level_times.append(dt)
                if options.progress:
                    rate = (st.total - states_run0) / max(time.perf_counter() - t_run, 1e-9)
                    print(f"progress [spark]: depth {st.depth}, {st.total:,} states (+{rec['new']:,}), "
                          f"{st.generated:,} generated, {rate:,.0f} states/s, level {dt:.2f} s",
                          file=sys.stderr, flush=True)
        cleaner.shutdown(wait=True)
        # the last job expanded the last level ahead of need: drop what the search did not use
        manifest.clear_levels_from(len(st.levels), len(records) - 1)
        manifest.data["finished"] = True
        manifest.save()
        if judged and st.complete:
            t0 = time.perf_counter()
            if spark is None:      # a finished store resumed: no level ran, the judgement needs a context
                spark, owned = _session(sopts, workdir)
            tasks = max(1, min(partitions, int(sopts.tasks or spark.defaultParallelism)))
            runner = _Runner(spark, tasks)
            bad_refs, reach_stats = reach.judge(
                lambda c: runner.call(reach.run_task, c, f"txncheck recoverable {c.mode} {c.round}"),
                root, partitions, tasks, len(st.levels), len(records) - 1, len(recoverable), judged,
                ledger.visited, n_actions)
            phases["reach"] = time.perf_counter() - t0
        done = True
    except (NoRoom, OSError) as err:
        if isinstance(err, OSError) and not is_no_room(err):
            raise
        raise store_full(err, root, keep, len(records), stats) from None
    finally:
        cleaner.shutdown(wait=True)
        t0 = time.perf_counter()
        if spark is not None and owned:
            from .session import stop
            stop(spark)
        phases["stop"] = time.perf_counter() - t0
        if not done:    # an error: no outcome; the scratch space (and a temporary store) go
            shutil.rmtree(workdir, ignore_errors=True)

    stored_edges = sum(edge_rows(root, lv) for lv in range(len(records) - 1)) if recoverable else 0
    after = Progress(options, "spark")  # the steps on the driver after the search, each a line
    after.step(f"reading {st.total:,} states' records onto the driver")
    t0 = time.perf_counter()
    try:
        (fps, parent, action), masks, seg = storage.build_index(root, st.levels, partitions, list(recoverable))
    except OSError as err:
        if not is_no_room(err):
            raise
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        raise store_full(err, root, keep, len(records), stats) from None
    phases["index"] = time.perf_counter() - t0

    def index_of(level: int, fp: int) -> int:
        p = fp % partitions
        lo, hi = int(seg[level, p]), int(seg[level, p + 1])
        i = lo + int(np.searchsorted(fps[lo:hi], np.uint64(fp)))
        if i >= hi or int(fps[i]) != fp:
            raise SparkEngineError(f"store {root}: fingerprint {fp:#x} missing from level {level}")
        return i

    edges = None
    if liveness and st.complete:  # only a complete search's graph is judged
        t0 = time.perf_counter()
        after.step(f"reading the edges out of {', '.join(liveness)}'s goal-less states (of {stored_edges:,} stored) "
                   "onto the driver (eventually and leads_to properties are judged there)")
        edges = _edge_indices(root, len(records) - 1, fps, seg, partitions, _goal_less(masks, liveness))
        phases["edges"] = time.perf_counter() - t0
    unrecoverable = {name: (None if ref is None else index_of(*ref)) for name, ref in bad_refs.items()}
    n = len(fps)
    out = SearchOutcome(
        fps=fps, parent=parent, action=action, level_sizes=list(st.levels), generated=st.generated,
        fired=st.fired, violations={k: index_of(*v) for k, v in st.found.refs(VIOLATION).items()},
        witnesses={k: index_of(*v) for k, v in st.found.refs(WITNESS).items()},
        deadlock=index_of(*st.found.deadlock()) if st.found.deadlock() is not None else None,
        goal_masks={k: v[0] for k, v in masks.items()}, when_masks={k: v[1] for k, v in masks.items()},
        edges=edges, edges_for=liveness if edges is not None else None, unrecoverable=unrecoverable,
        complete=st.complete, stop_reason=st.stop_reason,
        elapsed=time.perf_counter() - t_start, peak_memory=peak_rss(), engine="spark",
        # the index, and the stored edges (in the store, read by the executors; on the driver those
        # the eventually / leads_to properties read: `driver_edges`)
        store_bytes=n * 20 + stored_edges * 20,
        extra={"partitions": partitions, "master": sopts.master, "store": root if keep else None,
               "stored_edges": stored_edges, "driver_edges": len(edges[0]) if edges else 0,
               **({"reach": reach_stats} if reach_stats else {}),
               "level_seconds": [r.get("seconds") for r in records[1:]],
               "resumed_levels": len(records) - 1 - len(level_times) if sopts.resume else 0,
               "tasks": stats, "phases": {k: round(v, 3) for k, v in phases.items()},
               "kernel": type(kernel).__name__})
    if not keep:
        # the memory-mapped index lives in the store; copy it out before removing the store
        out.fps, out.parent, out.action = np.array(fps), np.array(parent), np.array(action)
        del fps, parent, action
        storage.remove_store(root)
    shutil.rmtree(workdir, ignore_errors=True)
    return out


def _judged(model, selected, flags: tuple[str, ...]) -> tuple[reach.Judged, ...]:
    """The selected recoverable properties, with their position in the stored flags and the
    actions whose edges count for each (those of rows without the property's excluded tags)."""
    out = []
    for p in selected:
        if p.kind == RECOVERABLE:
            excluded = set(p.prop.exclude_tags)
            keep = tuple(not (set(a.row.tags) & excluded) for a in model.actions)
            out.append(reach.Judged(p.name, flags.index(p.name), keep))
    return tuple(out)


def _goal_less(masks: dict, names: tuple[str, ...]) -> np.ndarray:
    """The states where the goal of at least one of the properties `names` fails."""
    out = np.zeros(len(masks[names[0]][0]), dtype=bool)
    for name in names:
        out |= ~masks[name][0]
    return out


def _edge_indices(root: str, max_level: int, fps, seg, partitions: int, sources: np.ndarray):
    """The stored edges out of the states `sources` marks, self-loops left out, as (source index, target
    index, action) into the index `fps`: for eventually / leads_to properties, whose fair cycles are found
    on the driver among the states where their goal fails (`liveness.LiveGraph` reads no other edge;
    recoverable properties are judged on the executors, reach.py). The store is read a batch at a time
    and filtered as it is read, so the driver never holds the edges it leaves out.

    A source lies in the level whose edges these are, in its fingerprint partition's sorted
    segment, so it is found by a search in that small segment. Targets may lie in any level: they
    are found in the globally sorted fingerprints through a bucket directory (`lookup.StoredIndex`;
    random binary searches of 10^8 targets in a 10^7-entry array cost 8x more, in cache misses)."""
    sdt = index_dtype(len(fps))  # 32-bit indices where they fit, as the vector engine's edges
    kept = []
    for lv, (src, dst, act) in storage.iter_edges(root, max_level):
        si = np.empty(len(src), dtype=np.int64)
        part = (src % np.uint64(partitions)).astype(np.int64)
        for p in range(partitions):
            sel = np.flatnonzero(part == p)
            lo, hi = int(seg[lv, p]), int(seg[lv, p + 1])
            si[sel] = lo + np.searchsorted(fps[lo:hi], src[sel])
        si = np.minimum(si, len(fps) - 1)
        ok = (np.asarray(fps)[si] == src) & sources[si] & (src != dst)
        kept.append([si[ok].astype(sdt), dst[ok], act[ok].astype(np.int32)])
    n = sum(len(k[0]) for k in kept)
    # the targets found a level at a time into the one array that holds them, each level's parts let go as they
    # are written: no column is held twice, and the lookups' temporaries are one level's (tests/test_spark_memory.py)
    stored = StoredIndex(fps, sdt)
    out = (np.empty(n, sdt), np.empty(n, sdt), np.empty(n, np.int32))
    at = 0
    for i, (s_, d_, a_) in enumerate(kept):
        targets, ok = stored.found(d_)
        j = at + len(targets)
        out[0][at:j], out[1][at:j], out[2][at:j] = s_[ok], targets, a_[ok]
        at = j
        kept[i] = None
    return tuple(a[:at] for a in out)


def _session(sopts: SparkOptions, workdir: str):
    """(SparkContext, owned): a running context is reused (and left running) when allowed."""
    if sopts.reuse_session:
        from pyspark import SparkContext
        active = SparkContext._active_spark_context
        if active is not None:
            return active, False
    from .session import start_session
    return start_session(sopts, workdir), True


def _initial_level(kernel, model, root, partitions, always, sometimes, recoverable) -> dict:
    init = np.ascontiguousarray(kernel.initial())
    fps = np.asarray(kernel.fingerprints(init), dtype=np.uint64)
    order = np.argsort(fps, kind="stable")
    keep = order[group_starts(fps[order])]
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


class _Runner:
    """Runs one single-stage job of `tasks` tasks and collects their counts."""

    def __init__(self, sc, tasks: int):
        self.sc, self.tasks = sc, tasks
        self.rdd = sc.parallelize(range(tasks), tasks)

    def run(self, ctx: LevelCtx) -> list[dict]:
        return self.call(run_task, ctx, f"txncheck level {ctx.level} {ctx.mode}")

    def call(self, fn, ctx, description: str) -> list[dict]:
        """`fn(ctx, task)` on every task; their results."""
        self.sc.setJobDescription(description)
        try:
            results = self.rdd.mapPartitionsWithIndex(partial(_task, fn, ctx)).collect()
        except Exception as err:   # noqa: BLE001 - a job Spark gave up on: one line, not its Java trace
            failed = job_failure(err, description)
            if failed is None:
                raise
            raise failed from err
        raise_any(results, description)
        return results


def _task(fn, ctx, index: int, _rows):
    try:
        out = fn(ctx, index)
    except Exception as err:   # noqa: BLE001 - what a user can act on is reported, not retried (failures.py)
        out = task_result(err, index)
        if out is None:
            raise
    yield out


def _merge(parts: list[dict], stats: list[dict], level: int, mode: str) -> dict:
    """The counts of one job (sum over tasks; least fingerprint per property)."""
    out: dict = {"new": 0, "viol": {}, "wit": {}, "generated": 0, "fired": None, "dead": None,
                 "seen": {}, "vis": {}, "wrote": {}, "sent": None, "edge_rows": None}
    agg = {"level": level, "mode": mode, "cand_bytes": 0, "cand_rows": 0, "level_bytes": 0, "t": {}}
    for r in sorted(parts, key=lambda r: r["task"]):
        out["new"] += r["new"]
        out["generated"] += r["generated"]
        f = np.asarray(r["fired"], dtype=np.int64)
        out["fired"] = f if out["fired"] is None else out["fired"] + f
        for name, (cnt, fp) in r["viol"].items():
            old = out["viol"].get(name)
            out["viol"][name] = [cnt + old[0], min(fp, old[1])] if old else [cnt, fp]
        for name, fp in r["wit"].items():
            out["wit"][name] = min(fp, out["wit"].get(name, fp))
        if r["dead"] is not None:
            old = out["dead"]
            out["dead"] = [r["dead"][0] + old[0], min(r["dead"][1], old[1])] if old else list(r["dead"])
        for key in ("cand_bytes", "cand_rows", "level_bytes"):
            agg[key] += r[key]
        for key in ("seen", "vis", "wrote"):     # per partition: each is one task's
            out[key].update(r[key])
        if r["sent"] is not None:
            s = np.asarray(r["sent"], dtype=np.int64)
            out["sent"] = s if out["sent"] is None else out["sent"] + s
        if r["edge_rows"] is not None:
            out["edge_rows"] = (out["edge_rows"] or 0) + r["edge_rows"]
        for key, v in r["t"].items():
            agg["t"][key] = round(max(agg["t"].get(key, 0.0), v), 4)   # the slowest task's time
    stats.append(agg)
    # the manifest's JSON form: fingerprints as decimal strings (they exceed JSON's safe integers)
    out["fired"] = [] if out["fired"] is None else out["fired"].tolist()
    out["viol"] = {k: [c, str(fp)] for k, (c, fp) in sorted(out["viol"].items())}
    out["wit"] = {k: str(fp) for k, fp in sorted(out["wit"].items())}
    if out["dead"] is not None:
        out["dead"] = [out["dead"][0], str(out["dead"][1])]
    return out



def run(request, model, options: ExploreOptions, settings: SparkOptions | None = None) -> SearchOutcome:
    """The registry's entry (`checker/engines.py`): executors rebuild the model from the request by name."""
    return explore(ModelRef.of(request, model, options.symmetry), options, settings, model)
