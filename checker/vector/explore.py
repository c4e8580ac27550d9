"""The vector engine: level-synchronous breadth-first search over whole frontiers in numpy.

Per level: the kernel lists successor candidates as (canonical fingerprint, parent row, action);
`argsort` groups equal fingerprints; the visited store (sorted blocks) filters the known ones;
`minimum.reduceat` over the key `parent_row · A + action` picks each new state's parent link.
Because every level is stored sorted by fingerprint, frontier row order is fingerprint order, so
that key's minimum is exactly the outcome rule "least (parent fingerprint, action id)". Only the
new states are materialised (from their chosen parent and action), canonicalised, and checked
against the properties in bulk; the least-fingerprint violator of a level is its first.

When to stop (violations, deadlocks, max_states, max_depth, memory) is decided by
`checker/levels.py`, the rules every engine advances, so that all engines return identical outcomes.

With a checkpoint (`checkpoint.py`), every expansion's facts are recorded once its level is checked,
and a resumed search replays the records through the same rules and the same store, rebuilding the
frontier from them, so it continues exactly where the killed one stood.
"""
from __future__ import annotations

import time

import numpy as np

from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import ALWAYS, GRAPH_KINDS, SOMETIMES

from ..checkpoint import CheckpointError, Checkpointing, model_digest, model_identity, search_key, txncheck_version
from ..levels import DEADLOCK, VIOLATION, WITNESS, Findings, LevelRules
from ..lookup import group_index
from ..outcome import ExploreOptions, SearchOutcome, selected_properties
from ..progress import Progress, peak_rss
from .checkpoint import FORMAT, LevelLog
from .kernel import VectorKernel
from .store import VisitedStore

_U64 = np.uint64


class _Search:
    """One search's state between levels: what a checkpoint records and a resume restores."""

    def __init__(self, model: GroundModel, options: ExploreOptions, kernel: VectorKernel, log: LevelLog | None):
        self.model, self.options, self.kernel, self.log = model, options, kernel, log
        selected = selected_properties(model, options)
        self.always = [p.name for p in selected if p.kind == ALWAYS]
        self.sometimes = [p.name for p in selected if p.kind == SOMETIMES]
        self.recov = [p.name for p in selected if p.kind in GRAPH_KINDS]
        self.want_edges = bool(self.recov)
        self.store = VisitedStore(options.memory_budget, options.workdir)
        self.rules = LevelRules(options)
        self.progress = Progress(options, "vector")
        self.found = Findings()                 # refs: store indices
        self.front_fps = np.zeros(0, dtype=_U64)  # the frontier's fingerprints, ascending
        self.goal_parts: dict[str, list] = {n: [] for n in self.recov}
        self.when_parts: dict[str, list] = {n: [] for n in self.recov}
        self.edge_src, self.edge_dst_fp, self.edge_act = [], [], []
        self.fired = np.zeros(kernel.n_actions, dtype=np.int64)
        self.generated = 0
        self.timing = {"expand": 0.0, "dedup": 0.0, "materialise": 0.0, "properties": 0.0, "store": 0.0,
                       "checkpoint": 0.0}
        self.cols = self.P = None
        self.n_front = 0
        self.resumed = 0

    # -- properties ---------------------------------------------------------------------------------
    def check_level(self, cols, fps, first_index, level: int) -> bool:
        t0 = time.perf_counter()
        found = False
        n = cols.shape[1]
        if n == 0:
            return False
        kernel = self.kernel
        for kind, names, hit in ((VIOLATION, self.always, False), (WITNESS, self.sometimes, True)):
            for name in names:
                if self.found.open(kind, name, level):
                    at = np.flatnonzero(np.asarray(kernel.prop_cols(name, "expr", cols), dtype=bool) == hit)
                    new = self.found.offer_least(kind, name, level, fps[at], first_index + at)
                    found = found or (new and kind == VIOLATION)
        for name in self.recov:
            self.goal_parts[name].append(kernel.prop_cols(name, "expr", cols))
            self.when_parts[name].append(kernel.prop_cols(name, "when", cols))
        self.timing["properties"] += time.perf_counter() - t0
        return found

    # -- checkpoint records -------------------------------------------------------------------------
    def _mark(self):
        return set(self.found.chosen)

    def _record(self, mark, new: int, found: bool, limit: bool = False, level=None, edges=None) -> None:
        """Record the expansion just checked (no-op without a checkpoint): its counts and what it found
        as JSON, its new states (`level`: fps, parent, action), masks and `edges` as arrays."""
        if self.log is None:
            return
        t0 = time.perf_counter()
        chosen = {key: int(got[2]) for key, got in self.found.chosen.items() if key not in mark}
        fields = {"new": int(new), "found": bool(found), "generated": int(self.generated),
                  "viol": {n: i for (k, n), i in sorted(chosen.items()) if k == VIOLATION},
                  "wit": {n: i for (k, n), i in sorted(chosen.items()) if k == WITNESS}}
        if limit:
            fields["limit"] = True
        if (DEADLOCK, "") in chosen:
            fields["deadlock"] = chosen[(DEADLOCK, "")]
        arrays = {"fired": self.fired.copy()}  # the search adds to its own
        if level is not None:
            arrays["fps"], arrays["parent"], arrays["action"] = (np.asarray(level[0], _U64),
                                                                 np.asarray(level[1], np.int64),
                                                                 np.asarray(level[2], np.int32))
            for name in self.recov:
                arrays[f"goal:{name}"] = self.goal_parts[name][-1]
                arrays[f"when:{name}"] = self.when_parts[name][-1]
        if edges is not None:
            arrays["edge_src"], arrays["edge_dst"], arrays["edge_act"] = edges
        self.log.append(fields, arrays)
        self.timing["checkpoint"] += time.perf_counter() - t0

    @staticmethod
    def _advance(rules: LevelRules, index: int, rec: dict) -> None:
        if index == 0:
            rules.initial(int(rec["new"]), bool(rec["found"]))
        else:
            rules.advance(int(rec["new"]), bool(rec["found"]), limit=bool(rec.get("limit")))

    # -- level 0 ------------------------------------------------------------------------------------
    def initial(self) -> None:
        kernel = self.kernel
        mark = self._mark()
        self.cols, fps0, self.P = kernel.initial_cols()
        n0 = len(fps0)
        parent0, action0 = np.full(n0, -1, np.int64), np.full(n0, -1, np.int32)
        self.store.add_level(fps0, parent0, action0)
        found = self.check_level(self.cols, fps0, 0, 0)
        self.rules.initial(n0, found)
        self.n_front, self.front_fps = n0, fps0
        self._record(mark, n0, found, level=(fps0, parent0, action0))

    # -- resume -------------------------------------------------------------------------------------
    def replay(self) -> None:
        """Restore the search the checkpoint recorded: every record through the rules and into the store;
        the frontier rebuilt level by level (only if the search goes on), each level's fingerprints
        checked against the recorded ones."""
        log, kernel, records = self.log, self.kernel, self.log.records
        dry = LevelRules(self.options)
        for i, rec in enumerate(records):
            self._advance(dry, i, rec)
        need_frontier = not dry.finished
        start = prev_start = 0
        for i, rec in enumerate(records):
            arr = log.read(rec)
            limit = bool(rec.get("limit"))
            if i == 0:
                self.cols, fps, self.P = kernel.initial_cols()
                self._same(fps, arr, rec)
                self.front_fps = fps
            elif rec["new"] and not limit and need_frontier:
                t0 = time.perf_counter()
                rows = arr["parent"].astype(np.int64) - prev_start
                self.cols, fps, self.P = kernel.successors_cols(self.cols, rows, arr["action"])
                self.timing["materialise"] += time.perf_counter() - t0
                self._same(fps, arr, rec)
                self.front_fps = fps
            if "fps" in arr:
                self.store.add_level(arr["fps"], arr["parent"], arr["action"])
                prev_start, start = start, start + len(arr["fps"])
                for name in self.recov:
                    self.goal_parts[name].append(arr[f"goal:{name}"])
                    self.when_parts[name].append(arr[f"when:{name}"])
            if "edge_src" in arr:
                self.edge_src.append(arr["edge_src"])
                self.edge_dst_fp.append(arr["edge_dst"])
                self.edge_act.append(arr["edge_act"])
            depth = len(self.rules.levels)  # the level this record stored (and checked)
            for kind, key in ((VIOLATION, "viol"), (WITNESS, "wit")):
                for name, ref in rec[key].items():
                    self.found.restore(kind, name, depth, int(ref))
            if rec.get("deadlock") is not None:
                self.found.restore(DEADLOCK, "", depth - 1, int(rec["deadlock"]))
            self.generated = int(rec["generated"])
            self.fired = arr["fired"].astype(np.int64)
            self._advance(self.rules, i, rec)
        self.n_front = self.rules.levels[-1]
        self.resumed = len(records)
        self.progress.base_states = self.store.count
        self.progress.level(self.rules.levels, self.generated, self.store.spilled_bytes, log.bytes, force=True,
                            final=f"resumed from {len(records)} checkpointed levels")

    def _same(self, fps: np.ndarray, arr: dict, rec: dict) -> None:
        if not np.array_equal(np.asarray(fps, _U64), arr["fps"]):
            raise CheckpointError(f"checkpoint {self.log.directory}: level {rec['level']} does not match this model "
                                  "(its states have other fingerprints: the spec or txncheck changed since it "
                                  "was written); remove the directory to start over")

    # -- the levels ---------------------------------------------------------------------------------
    def search(self) -> int:
        """Expand level after level until the rules stop; the number of states kept (fewer than stored
        when memory ran out mid-level)."""
        kernel, store, rules, options = self.kernel, self.store, self.rules, self.options
        A = max(kernel.n_actions, 1)
        timing = self.timing
        safe = (store.count, len(rules.levels))  # the last point where every stored level was checked
        exp = None
        try:
            while not rules.finished:
                mark = self._mark()
                at_limit = rules.at_limit()
                level_start = store.count
                base = level_start - self.n_front
                t0 = time.perf_counter()
                exp = kernel.expand_cols(self.cols, self.P, need_has=options.check_deadlock)
                timing["expand"] += time.perf_counter() - t0
                self.generated += exp.generated
                self.fired += exp.fired
                found = False
                if options.check_deadlock:
                    dead = np.flatnonzero(~exp.has_successor)
                    if len(dead):
                        dead = dead[~kernel.terminal_cols(self.cols[:, dead])]  # as the scalar engine: only where needed
                        found = self.found.offer_least(DEADLOCK, "", rules.depth, self.front_fps[dead], base + dead)

                # -- deduplicate --------------------------------------------------------------------
                t0 = time.perf_counter()
                c = exp.fps
                m = len(c)
                if m:
                    s = np.sort(c)
                    flag = np.empty(m, dtype=bool)
                    flag[0] = True
                    np.not_equal(s[1:], s[:-1], out=flag[1:])
                    u = s[flag]
                    del s, flag
                    known = store.contains(u)
                    grp = group_index(u, c)
                else:
                    u = np.zeros(0, dtype=_U64)
                    grp = np.zeros(0, dtype=np.int64)
                    known = np.zeros(0, dtype=bool)
                newmask = ~known
                edges = None
                if self.want_edges and m:
                    src = (exp.parent_rows + base).astype(np.int64)
                    if at_limit:
                        cand_known = known[grp]
                        edges = (src[cand_known], c[cand_known], exp.actions[cand_known])
                    else:
                        edges = (src, c, exp.actions)
                    self.edge_src.append(edges[0])
                    self.edge_dst_fp.append(edges[1])
                    self.edge_act.append(edges[2])
                if at_limit:
                    timing["dedup"] += time.perf_counter() - t0
                    rules.advance(int(newmask.any()), found, limit=True)
                    self._record(mark, int(newmask.any()), found, limit=True, edges=edges)
                    break
                k = int(newmask.sum())
                if k:
                    key = exp.parent_rows.astype(_U64)
                    key *= _U64(A)
                    key += exp.actions.astype(_U64)
                    best = np.full(len(u), np.iinfo(np.uint64).max, dtype=_U64)
                    np.minimum.at(best, grp, key)
                    kmin = best[newmask]
                    new_fps = u[newmask]
                    prow = (kmin // _U64(A)).astype(np.int64)
                    pact = (kmin % _U64(A)).astype(np.int32)
                    del key, best, kmin
                del u, known, grp
                timing["dedup"] += time.perf_counter() - t0
                level = None
                if k:
                    t0 = time.perf_counter()
                    new_cols, _, newP = kernel.successors_cols(self.cols, prow, pact, known_fps=new_fps)
                    timing["materialise"] += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    level = (new_fps, prow + base, pact)
                    store.add_level(*level)
                    timing["store"] += time.perf_counter() - t0
                    found = self.check_level(new_cols, new_fps, level_start, rules.depth + 1) or found
                    self.cols, self.P, self.front_fps = new_cols, newP, new_fps
                else:
                    self.cols = np.zeros((kernel.width, 0), dtype=kernel.dtype)
                    self.front_fps = np.zeros(0, dtype=_U64)
                exp = None
                self.n_front = k
                rules.advance(k, found)
                safe = (store.count, len(rules.levels))
                self._record(mark, k, found, level=level, edges=edges)
                del level, edges
                if not rules.finished:  # the last line is the outcome's
                    self.progress.level(rules.levels, self.generated, store.spilled_bytes,
                                        self.log.bytes if self.log is not None else None)
        except MemoryError:
            # out of memory mid-level: keep every level checked so far, report the search incomplete
            self.cols = exp = None  # noqa: F841 - frees the frontier before the records are read
            count, n_levels = safe
            rules.out_of_memory(n_levels)
            self.found.keep(lambda ref: ref < count)
            self.want_edges = False
            self.goal_parts = {k_: [] for k_ in self.goal_parts}
            self.when_parts = {k_: [] for k_ in self.when_parts}
            return count
        return store.count

    # -- the outcome --------------------------------------------------------------------------------
    def outcome(self, count: int, start: float, t_compile: float) -> SearchOutcome:
        store, kernel, rules = self.store, self.kernel, self.rules
        self.progress.level(rules.levels, self.generated, store.spilled_bytes,
                            self.log.bytes if self.log is not None else None, force=True,
                            final="search complete" if rules.complete else f"search stopped: {rules.stop_reason}")
        fps, parent, action = (a[:count] for a in store.records())
        n = len(fps)
        store_bytes = store.nbytes()
        peak_store = store.peak_bytes
        spills = store.spills
        store.close()
        edges = None
        edge_bytes = 0
        if self.want_edges:
            src = np.concatenate(self.edge_src) if self.edge_src else np.zeros(0, np.int64)
            dfp = np.concatenate(self.edge_dst_fp) if self.edge_dst_fp else np.zeros(0, _U64)
            act = np.concatenate(self.edge_act).astype(np.int32) if self.edge_act else np.zeros(0, np.int32)
            o = np.argsort(fps)
            dst = o[group_index(fps[o], dfp)].astype(np.int64)  # every target was stored
            edges = (src, dst, act)
            edge_bytes = src.nbytes + dst.nbytes + act.nbytes
        out = SearchOutcome(
            fps=fps, parent=parent, action=action.astype(np.int32), level_sizes=rules.levels,
            generated=self.generated, fired=self.fired, violations=self.found.refs(VIOLATION),
            witnesses=self.found.refs(WITNESS), deadlock=self.found.deadlock(),
            goal_masks={k_: (np.concatenate(v) if v else np.zeros(0, bool)) for k_, v in self.goal_parts.items()},
            when_masks={k_: (np.concatenate(v) if v else np.zeros(0, bool)) for k_, v in self.when_parts.items()},
            edges=edges, complete=rules.complete, stop_reason=rules.stop_reason,
            elapsed=time.perf_counter() - start, peak_memory=peak_rss(), engine="vector")
        out.store_bytes = int(store_bytes + edge_bytes)
        timing = dict(self.timing)
        if self.log is None:
            del timing["checkpoint"]
        out.extra = {
            "vector_dtype": str(kernel.dtype), "vector_symmetry_group": kernel.G,
            "vector_store_bytes_per_state": round(store_bytes / n, 1) if n else None,
            "vector_peak_store_bytes": int(peak_store), "vector_spills": spills,
            "vector_seconds": {k_: round(v, 3) for k_, v in timing.items()} | {"compile": round(t_compile, 3)},
        }
        if self.log is not None:
            out.extra |= {"vector_checkpoint_bytes": int(self.log.bytes), "vector_resumed_levels": self.resumed}
        return out


def explore(model: GroundModel, options: ExploreOptions, kernel: VectorKernel | None = None,
            log: LevelLog | None = None) -> SearchOutcome:
    """Search `model`; with `log` (an open checkpoint) record every level there, after first restoring
    the levels it already holds."""
    start = time.perf_counter()
    if kernel is None:
        kernel = VectorKernel(model, options.symmetry)
    t_compile = time.perf_counter() - start
    s = _Search(model, options, kernel, log)
    try:
        if log is not None and log.records:
            s.replay()
        else:
            s.initial()
        count = s.search()
        if log is not None:
            t0 = time.perf_counter()
            log.wait()  # every level is in the checkpoint before the outcome is reported
            s.timing["checkpoint"] += time.perf_counter() - t0
    except BaseException:
        s.store.close()  # spilled files go with the failed run
        raise
    finally:
        if log is not None:
            log.close()
    return s.outcome(count, start, t_compile)


def checkpoint_header(request, model: GroundModel, options: ExploreOptions) -> dict:
    """What a checkpoint records of its search, and a resume must match (`checkpoint.refuse_other`)."""
    selected = selected_properties(model, options)
    return {"format": FORMAT, "txncheck": txncheck_version(), "model_digest": model_digest(model),
            "search": search_key(model_identity(request, model, options.symmetry), options,
                                 [p.name for p in selected if p.kind == ALWAYS],
                                 [p.name for p in selected if p.kind == SOMETIMES],
                                 [p.name for p in selected if p.kind in GRAPH_KINDS])}


def run(request, model: GroundModel, options: ExploreOptions, settings: Checkpointing | None = None) -> SearchOutcome:
    """The registry's entry (`checker/engines.py`): the vector engine needs only the ground model, and the
    request's identity when it checkpoints (`settings`)."""
    if settings is None:
        return explore(model, options)
    if not isinstance(settings, Checkpointing):
        raise TypeError(f"the vector engine's settings are a Checkpointing, not {type(settings).__name__}")
    log = LevelLog.open(settings, checkpoint_header(request, model, options))
    return explore(model, options, log=log)
