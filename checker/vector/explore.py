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
"""
from __future__ import annotations

import time

import numpy as np

from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import ALWAYS, GRAPH_KINDS, SOMETIMES

from ..levels import LevelRules
from ..lookup import group_index
from ..outcome import ExploreOptions, SearchOutcome, selected_properties
from ..progress import Progress, peak_rss
from .kernel import VectorKernel
from .store import VisitedStore

_U64 = np.uint64


def explore(model: GroundModel, options: ExploreOptions, kernel: VectorKernel | None = None) -> SearchOutcome:
    start = time.perf_counter()
    if kernel is None:
        kernel = VectorKernel(model, options.symmetry)
    t_compile = time.perf_counter() - start
    A = max(kernel.n_actions, 1)
    selected = selected_properties(model, options)
    always = [p.name for p in selected if p.kind == ALWAYS]
    sometimes = [p.name for p in selected if p.kind == SOMETIMES]
    recov = [p.name for p in selected if p.kind in GRAPH_KINDS]
    want_edges = bool(recov)
    store = VisitedStore(options.memory_budget, options.workdir)
    progress = Progress(options, "vector")
    last_progress = time.perf_counter()

    violations: dict[str, int] = {}
    witnesses: dict[str, int] = {}
    deadlock = None
    goal_parts: dict[str, list] = {n: [] for n in recov}
    when_parts: dict[str, list] = {n: [] for n in recov}
    edge_src, edge_dst_fp, edge_act = [], [], []
    fired = np.zeros(kernel.n_actions, dtype=np.int64)
    generated = 0
    timing = {"expand": 0.0, "dedup": 0.0, "materialise": 0.0, "properties": 0.0, "store": 0.0}

    def check_level(cols, first_index) -> bool:
        t0 = time.perf_counter()
        found = False
        n = cols.shape[1]
        if n == 0:
            return False
        for name in always:
            if name in violations:
                continue
            ok = kernel.prop_cols(name, "expr", cols)
            if not ok.all():
                violations[name] = first_index + int(np.argmin(ok))  # level sorted: first = least fp
                found = True
        for name in sometimes:
            if name in witnesses:
                continue
            ok = kernel.prop_cols(name, "expr", cols)
            if ok.any():
                witnesses[name] = first_index + int(np.argmax(ok))
        for name in recov:
            goal_parts[name].append(kernel.prop_cols(name, "expr", cols))
            when_parts[name].append(kernel.prop_cols(name, "when", cols))
        timing["properties"] += time.perf_counter() - t0
        return found

    init = np.asarray(model.init, dtype=kernel.dtype).reshape(kernel.width, 1)
    cols, fps0, P = kernel.canonicalise_cols(init)
    store.add_level(fps0, np.array([-1]), np.array([-1]))
    rules = LevelRules(options)
    rules.initial(1, check_level(cols, 0))
    n_front = 1
    safe = (store.count, len(rules.levels))  # the last point where every stored level was checked
    try:
        while not rules.finished:
            at_limit = rules.at_limit()
            level_start = store.count
            base = level_start - n_front
            t0 = time.perf_counter()
            exp = kernel.expand_cols(cols, P, need_has=options.check_deadlock)
            timing["expand"] += time.perf_counter() - t0
            generated += exp.generated
            fired += exp.fired
            found = False
            if options.check_deadlock:
                dead = np.flatnonzero(~exp.has_successor)
                if len(dead):
                    dead = dead[~kernel.terminal_cols(cols[:, dead])]  # as the scalar engine: only where needed
                    if len(dead) and deadlock is None:
                        deadlock = base + int(dead[0])  # level sorted by fingerprint: the least
                        found = True

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
            if want_edges and m:
                src = (exp.parent_rows + base).astype(np.int64)
                if at_limit:
                    cand_known = known[grp]
                    edge_src.append(src[cand_known])
                    edge_dst_fp.append(c[cand_known])
                    edge_act.append(exp.actions[cand_known])
                else:
                    edge_src.append(src)
                    edge_dst_fp.append(c)
                    edge_act.append(exp.actions)
            if at_limit:
                timing["dedup"] += time.perf_counter() - t0
                rules.advance(int(newmask.any()), found, limit=True)
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
            if k:
                t0 = time.perf_counter()
                new_cols, _, newP = kernel.successors_cols(cols, prow, pact, known_fps=new_fps)
                timing["materialise"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                store.add_level(new_fps, prow + base, pact)
                timing["store"] += time.perf_counter() - t0
                found = check_level(new_cols, level_start) or found
                cols, P = new_cols, newP
            else:
                cols = np.zeros((kernel.width, 0), dtype=kernel.dtype)
            del exp
            n_front = k
            rules.advance(k, found)
            safe = (store.count, len(rules.levels))
            if options.progress and time.perf_counter() - last_progress >= options.progress_interval:
                last_progress = time.perf_counter()
                progress.line(store.count, rules.depth, generated)
    except MemoryError:
        # out of memory mid-level: keep every level checked so far, report the search incomplete
        cols = exp = None  # noqa: F841 - frees the frontier before the records are read
        count, n_levels = safe
        rules.out_of_memory(n_levels)
        violations = {k_: v for k_, v in violations.items() if v < count}
        witnesses = {k_: v for k_, v in witnesses.items() if v < count}
        deadlock = deadlock if deadlock is not None and deadlock < count else None
        want_edges = False
        goal_parts = {k_: [] for k_ in goal_parts}
        when_parts = {k_: [] for k_ in when_parts}
    else:
        count = store.count
    progress.done(store.count, rules.depth, generated)

    fps, parent, action = (a[:count] for a in store.records())
    n = len(fps)
    store_bytes = store.nbytes()
    peak_store = store.peak_bytes
    spills = store.spills
    store.close()
    edges = None
    edge_bytes = 0
    if want_edges:
        src = np.concatenate(edge_src) if edge_src else np.zeros(0, np.int64)
        dfp = np.concatenate(edge_dst_fp) if edge_dst_fp else np.zeros(0, _U64)
        act = np.concatenate(edge_act).astype(np.int32) if edge_act else np.zeros(0, np.int32)
        o = np.argsort(fps)
        dst = o[group_index(fps[o], dfp)].astype(np.int64)  # every target was stored
        edges = (src, dst, act)
        edge_bytes = src.nbytes + dst.nbytes + act.nbytes
    out = SearchOutcome(
        fps=fps, parent=parent, action=action.astype(np.int32), level_sizes=rules.levels, generated=generated,
        fired=fired, violations=violations, witnesses=witnesses, deadlock=deadlock,
        goal_masks={k_: (np.concatenate(v) if v else np.zeros(0, bool)) for k_, v in goal_parts.items()},
        when_masks={k_: (np.concatenate(v) if v else np.zeros(0, bool)) for k_, v in when_parts.items()},
        edges=edges, complete=rules.complete, stop_reason=rules.stop_reason,
        elapsed=time.perf_counter() - start, peak_memory=peak_rss(), engine="vector")
    out.store_bytes = int(store_bytes + edge_bytes)
    out.extra = {
        "vector_dtype": str(kernel.dtype), "vector_symmetry_group": kernel.G,
        "vector_store_bytes_per_state": round(store_bytes / n, 1) if n else None,
        "vector_peak_store_bytes": int(peak_store), "vector_spills": spills,
        "vector_seconds": {k_: round(v, 3) for k_, v in timing.items()} | {"compile": round(t_compile, 3)},
    }
    return out


def run(request, model: GroundModel, options: ExploreOptions, settings=None) -> SearchOutcome:
    """The registry's entry (`checker/engines.py`): the vector engine needs only the ground model."""
    return explore(model, options)
