"""The vector engine: level-synchronous breadth-first search over whole frontiers in numpy.

Per level: the kernel lists successor candidates as (canonical fingerprint, parent row, action);
`distinct_least` groups equal fingerprints; the visited store (sorted blocks) filters the known ones;
the least key `parent_row · A + action` picks each new state's parent link. Every level is stored
sorted by fingerprint and a parent is named by its row in that order, so that key's minimum is
exactly the outcome rule "least (parent fingerprint, action id)". Only the new states are
materialised (from their chosen parent and action; without a budget in their parents' order, each
column's fingerprint row beside it: `step.py`), canonicalised, and checked against the properties
in bulk; the least-fingerprint violator of a level is its first.

When to stop (violations, deadlocks, max_states, max_depth, memory) is decided by
`checker/levels.py`, the rules every engine advances, so that all engines return identical outcomes.

With a memory budget (`ExploreOptions.memory_budget`, split by `resources.split_budget`), a level is
expanded in chunks of frontier states and the chunks' new states merged (`step.py`); the frontier and
the next level (`frontier.py`), the visited set (`store.py`) and the edges and property masks
(`spill.py`) each go to files in the workdir once they outgrow their share. The outcome is the same.

Without a budget, the edges' targets (fingerprints as the expansion finds them) are mapped to store indices
level by level in a thread beside the search (`targets.py`); under one, after the search.

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
from ..lookup import StoredIndex
from ..outcome import ExploreOptions, SearchOutcome, selected_properties
from ..progress import Progress, peak_rss
from ..recoverable import index_dtype
from ..resources import split_budget
from .checkpoint import FORMAT, LevelLog
from .frontier import LevelStates, rebuild
from .kernel import VectorKernel
from .spill import Columns, SpillDir, mapped
from .step import LevelExpander
from .store import VisitedStore
from .targets import LevelTargets

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
        self.split = split_budget(options.memory_budget) if options.memory_budget is not None else None
        self.spill = SpillDir(options.workdir)
        self.store = VisitedStore(self.split.visited if self.split else options.visited_budget, spill=self.spill)
        self.rules = LevelRules(options)
        self.progress = Progress(options, "vector")
        self.found = Findings()                 # refs: store indices
        self.front = LevelStates.empty(kernel)  # the frontier (its columns in fingerprint or parents' order)
        self.edges = Columns(self.spill, {"src": np.int64, "dst": _U64, "act": np.int32}, "edges") \
            if self.want_edges else None
        # without a budget the edges' targets are mapped level by level beside the search (`targets.py`), which
        # keeps each level's fingerprints (8 bytes a state, where the edges held in memory take 16 an edge) even
        # once the visited set spills; under one, after the search, out of core where the edges were spilled
        self.targets = LevelTargets() if self.want_edges and self.split is None else None
        self.masks = Columns(self.spill, {f"{part}:{n}": np.bool_ for n in self.recov for part in ("goal", "when")},
                             "masks") if self.recov else None
        self.fired = np.zeros(kernel.n_actions, dtype=np.int64)
        self.generated = 0
        self.chunks = 0
        self.timing = {"expand": 0.0, "dedup": 0.0, "materialise": 0.0, "merge": 0.0, "properties": 0.0,
                       "store": 0.0, "checkpoint": 0.0}
        self.expander = LevelExpander(kernel, self.store, self.spill, self.split, options.chunk_states,
                                      options.check_deadlock, self.timing)
        self.resumed = 0
        self.search_peak = 0

    # -- properties ---------------------------------------------------------------------------------
    def check_level(self, cols, fps, refs, level: int) -> tuple[bool, dict]:
        """Check states of `level` (`refs`: what `found` names them by): whether an always property is
        violated for the first time, and the masks of the properties judged on the graph."""
        t0 = time.perf_counter()
        found = False
        kernel = self.kernel
        masks = {}
        if cols.shape[1]:
            for kind, names, hit in ((VIOLATION, self.always, False), (WITNESS, self.sometimes, True)):
                for name in names:
                    if self.found.open(kind, name, level):
                        at = np.flatnonzero(np.asarray(kernel.prop_cols(name, "expr", cols), dtype=bool) == hit)
                        new = self.found.offer_least(kind, name, level, fps[at], refs[at])
                        found = found or (new and kind == VIOLATION)
            masks = {f"{part}:{name}": kernel.prop_cols(name, "expr" if part == "goal" else "when", cols)
                     for name in self.recov for part in ("goal", "when")}
        self.timing["properties"] += time.perf_counter() - t0
        return found, masks

    def _graph_budget(self) -> None:
        """Edges and masks go to disk once together they outgrow the budget's graph share."""
        if self.split is None:
            return
        parts = [c for c in (self.edges, self.masks) if c is not None]
        if sum(c.memory_bytes() for c in parts) > self.split.graph:
            for c in parts:
                c.spill()

    # -- checkpoint records -------------------------------------------------------------------------
    def _mark(self):
        return set(self.found.chosen)

    def _record(self, mark, new: int, found: bool, limit: bool = False, level=None, states=None, edges=None) -> None:
        """Record the expansion just checked (no-op without a checkpoint): its counts and what it found
        as JSON, its new states (`level`: fps, parent, action), the masks of `states` (their store
        indices [start, stop)) and `edges` (their span in the edge columns) as arrays."""
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
            if self.masks is not None:
                arrays |= self.masks.slice(*states)
        if edges is not None:
            got = self.edges.slice(*edges)
            arrays["edge_src"], arrays["edge_dst"], arrays["edge_act"] = got["src"], got["dst"], got["act"]
        self.log.append(fields, arrays)
        self.timing["checkpoint"] += time.perf_counter() - t0

    @staticmethod
    def _advance(rules: LevelRules, index: int, rec: dict) -> None:
        if index == 0:
            rules.initial(int(rec["new"]), bool(rec["found"]))
        else:
            rules.advance(int(rec["new"]), bool(rec["found"]), limit=bool(rec.get("limit")))

    def _share(self, part: str) -> int | None:
        return getattr(self.split, part) if self.split is not None else None

    # -- level 0 ------------------------------------------------------------------------------------
    def initial(self) -> None:
        kernel = self.kernel
        mark = self._mark()
        cols, fps0, P = kernel.initial_cols()
        n0 = len(fps0)
        parent0, action0 = np.full(n0, -1, np.int64), np.full(n0, -1, np.int32)
        self.store.add_level(fps0, parent0, action0)
        if self.targets is not None:
            self.targets.level(fps0)
        found, masks = self.check_level(cols, fps0, np.arange(n0), 0)
        if self.masks is not None:
            self.masks.append(masks)
        self.front = LevelStates.of(kernel, cols, fps0, P, self.spill, self._share("frontier"))
        self.rules.initial(n0, found)
        self._record(mark, n0, found, level=(fps0, parent0, action0), states=(0, n0))

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
                cols, fps, P = kernel.initial_cols()
                self._same(fps, arr, rec)
                self.front = LevelStates.of(kernel, cols, fps, P, self.spill, self._share("frontier"))
            elif rec["new"] and not limit and need_frontier:
                t0 = time.perf_counter()
                rows = arr["parent"].astype(np.int64) - prev_start
                level = rebuild(kernel, self.front, rows, arr["action"], self.spill, self._share("next_level"),
                                self.expander.chunk_size(len(rows)))
                self.timing["materialise"] += time.perf_counter() - t0
                self._same(level.fps, arr, rec)
                self.front.close()
                self.front = level
            if "fps" in arr:
                self.store.add_level(arr["fps"], arr["parent"], arr["action"])
                if self.targets is not None:
                    self.targets.level(arr["fps"])
                prev_start, start = start, start + len(arr["fps"])
                if self.masks is not None:
                    self.masks.append({k: arr[k] for k in self.masks.dtypes})
            if "edge_src" in arr:
                self.edges.append({"src": arr["edge_src"], "dst": arr["edge_dst"], "act": arr["edge_act"]})
                self._map_targets(i - 1)
            self._graph_budget()
            depth = len(self.rules.levels)  # the level this record stored (and checked)
            for kind, key in ((VIOLATION, "viol"), (WITNESS, "wit")):
                for name, ref in rec[key].items():
                    self.found.restore(kind, name, depth, int(ref))
            if rec.get("deadlock") is not None:
                self.found.restore(DEADLOCK, "", depth - 1, int(rec["deadlock"]))
            self.generated = int(rec["generated"])
            self.fired = arr["fired"].astype(np.int64)
            self._advance(self.rules, i, rec)
        self.resumed = len(records)
        self.progress.base_states = self.store.count
        self.progress.level(self.rules.levels, self.generated, self.spill.written, log.bytes, force=True,
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
        kernel, store, rules = self.kernel, self.store, self.rules
        safe = (store.count, len(rules.levels))  # the last point where every stored level was checked
        try:
            while not rules.finished:
                mark = self._mark()
                at_limit = rules.at_limit()
                level_start = store.count
                base = level_start - self.front.n
                depth = rules.depth
                edges0 = self.edges.length if self.want_edges else 0
                got = self.expander.expand(self.front, base, depth, at_limit, self.found,
                                           self.edges if self.want_edges else None,
                                           lambda cols, fps, refs, d=depth + 1: self.check_level(cols, fps, refs, d))
                self.generated += got.generated
                self.fired += got.fired
                self.chunks += got.chunks
                found = got.deadlocked
                edges = (edges0, self.edges.length) if self.want_edges else None
                if at_limit:  # its edges lead to stored states only: the search may be complete
                    rules.advance(got.new, found, limit=True)
                    self._record(mark, got.new, found, limit=True, edges=edges)
                    self._map_targets(depth)
                    break
                level = None
                self.front.close()
                if got.new:
                    t0 = time.perf_counter()
                    level = (got.fps, got.parents + base, got.actions)
                    store.add_level(*level)
                    if self.targets is not None:
                        self.targets.level(got.fps)
                    self.timing["store"] += time.perf_counter() - t0
                    found = got.violated or found
                    self.front = got.states
                    if self.masks is not None:
                        self.masks.append(got.masks)
                else:
                    self.front = LevelStates.empty(kernel)
                self._graph_budget()
                rules.advance(got.new, found)
                safe = (store.count, len(rules.levels))
                self._record(mark, got.new, found, level=level, states=(level_start, store.count), edges=edges)
                self._map_targets(depth)
                del level, got
                if not rules.finished:  # the last line is the outcome's
                    self.progress.level(rules.levels, self.generated, self.spill.written,
                                        self.log.bytes if self.log is not None else None)
        except MemoryError:
            # out of memory mid-level: keep every level checked so far, report the search incomplete
            self.front.close()  # frees the frontier before the records are read
            self.front = LevelStates.empty(kernel)
            count, n_levels = safe
            rules.out_of_memory(n_levels)
            self.found.locate(n_levels, lambda fp: count)  # the unfinished level's states, offered by fingerprint
            self.found.keep(lambda ref: ref < count)
            self.want_edges = False
            for c in (self.edges, self.masks):
                if c is not None:
                    c.clear()
            if self.targets is not None:
                self.targets.close()
            return count
        return store.count

    # -- the outcome --------------------------------------------------------------------------------
    def _edge_targets(self, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges as (src, dst, action) state indices, 32-bit where they fit: each target fingerprint
        found among the stored states (every target was stored), a block at a time, into one array (a file
        when the edges were spilled). Every array made here is memory the kernel faults in afresh, which on
        Kafka nightly cost more than the lookups themselves (benchmarks/RESULTS.md, 2026-11-29), so no column
        is copied twice and the targets are never joined as fingerprints."""
        sdt = index_dtype(len(fps))
        stored = StoredIndex(fps, sdt)
        if self.edges.spilled:
            # a block's lookups hold about five 8-byte copies of its targets: within the graph's share when set
            block = 1 << 24 if self.split is None else min(1 << 24, max(1 << 16, self.split.graph // 40))
            E = self.edges.length
            path = self.spill.new("edges-dst-index")
            for part in self.edges.blocks("dst", block):
                self.spill.append(path, stored.every(part))
            got = self.edges.arrays()
            src = got["src"]
            if src.dtype != sdt:  # as narrow as in memory
                narrow = self.spill.new("edges-src-index")
                for part in self.edges.blocks("src", block):
                    self.spill.append(narrow, part.astype(sdt))
                src = mapped(narrow, sdt, E)
            return src, mapped(path, sdt, E), got["act"]
        dst = np.empty(self.edges.length, dtype=sdt)
        at = 0
        for part in self.edges.blocks("dst", 1 << 22):  # a few MiB of temporaries, reused block after block
            stored.every(part, out=dst[at:at + len(part)])
            at += len(part)
        self.edges.drop("dst")
        return self.edges.take("src", sdt), dst, self.edges.take("act")

    def _map_targets(self, source_level: int) -> None:
        """Hand the targets of the edges just found, from `source_level`, to the mapping beside the search: every
        one is stored by now (level source_level + 1 is)."""
        if self.targets is not None:
            self.targets.add(source_level, self.edges.hand_over("dst"))

    def _mapped_targets(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges as `_edge_targets` gives them, their targets mapped beside the search (`targets.py`)."""
        sdt = index_dtype(n)
        dst = self.targets.result(sdt)
        self.targets.close()
        if len(dst) != self.edges.length:
            raise RuntimeError(f"internal error: {len(dst):,} edge targets mapped for {self.edges.length:,} edges")
        return self.edges.take("src", sdt), dst, self.edges.take("act")

    def outcome(self, count: int, start: float, t_compile: float) -> SearchOutcome:
        store, kernel, rules = self.store, self.kernel, self.rules
        self.search_peak = peak_rss()
        self.progress.level(rules.levels, self.generated, self.spill.written,
                            self.log.bytes if self.log is not None else None, force=True,
                            final="search complete" if rules.complete else f"search stopped: {rules.stop_reason}")
        self.front.close()
        fps, parent, action = (a[:count] for a in store.records())
        n = len(fps)
        store_bytes = store.nbytes()
        peak_store = store.peak_bytes
        spills = store.spills
        edges = None
        edge_bytes = 0
        if self.want_edges and rules.complete:
            t0 = time.perf_counter()
            # beside the search, most are mapped already: the line says what is waited for
            self.progress.step(f"mapping {self.edges.length:,} edges' targets to state indices")
            edges = self._mapped_targets(n) if self.targets is not None else self._edge_targets(fps)
            edge_bytes = sum(a.nbytes for a in edges)
            self.timing["edge_targets"] = time.perf_counter() - t0
        elif self.want_edges:
            # only a complete search's graph is judged: a stopped one lets its edges go unmapped (on a large
            # run stopped at a limit, mapping them would take seconds and the memory of a copy)
            edge_bytes = self.edges.length * sum(dt.itemsize for dt in self.edges.dtypes.values())
            self.edges.clear()
            if self.targets is not None:
                self.targets.close()
        masks = self.masks.arrays() if self.masks is not None else {}
        spilled = self.spill.written
        store.close()
        self.spill.close()  # a file memory-mapped into the outcome stays readable until it is unmapped
        out = SearchOutcome(
            fps=fps, parent=parent, action=action.astype(np.int32, copy=False), level_sizes=rules.levels,
            generated=self.generated, fired=self.fired, violations=self.found.refs(VIOLATION),
            witnesses=self.found.refs(WITNESS), deadlock=self.found.deadlock(),
            goal_masks={k_: masks.get(f"goal:{k_}", np.zeros(0, bool)) for k_ in self.recov},
            when_masks={k_: masks.get(f"when:{k_}", np.zeros(0, bool)) for k_ in self.recov},
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
            "vector_chunks": self.chunks, "vector_spilled_bytes": int(spilled),
            "vector_search_peak_bytes": int(self.search_peak),
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
        return s.outcome(count, start, t_compile)  # closes the spill directory itself
    except BaseException:
        if s.targets is not None:
            s.targets.close()
        s.front.close()
        s.store.close()
        s.spill.close()  # spilled files go with the failed run (a full disk, a signal, an error)
        raise
    finally:
        if log is not None:
            log.close()


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
