"""The scalar reference engine: breadth-first search over state tuples with generated Python.

It stores `(fingerprint, parent, action)` per state in compact arrays, keeps full states only for
the frontier, and follows the rules in `outcome.py` exactly, so the other engines can be tested
against it.
"""
from __future__ import annotations

import time
from array import array

import numpy as np

from txncheck.spec.errors import EvaluationError
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import ALWAYS, GRAPH_KINDS, SOMETIMES

from .. import symmetry
from ..compile_py import CompiledModel
from ..levels import DEADLOCK, VIOLATION, WITNESS, Findings, LevelRules
from ..outcome import ExploreOptions, SearchOutcome, selected_properties
from ..progress import Progress, peak_rss


def explore(model: GroundModel, options: ExploreOptions) -> SearchOutcome:
    start = time.perf_counter()
    cm = CompiledModel(model)
    fpr = cm.fpr
    lo = model.layout.cell_lo
    perms = symmetry.permutations(model, options.symmetry)
    selected = selected_properties(model, options)
    always = [(p.name, cm.prop_fns[p.name]) for p in selected if p.kind == ALWAYS]
    sometimes = [(p.name, cm.prop_fns[p.name]) for p in selected if p.kind == SOMETIMES]
    recov = [p for p in selected if p.kind in GRAPH_KINDS]
    want_edges = bool(recov)

    def canon(t, f):
        return symmetry.canonical(perms, fpr, t, f, lo) if perms else (t, f)

    # the distinct canonical initial states, by increasing fingerprint (as the vector engine stores them)
    level0 = dict(canon(tuple(s), fpr.of(s))[::-1] for s in model.initial_states)
    fps = array("Q", sorted(level0))
    parent = array("q", [-1] * len(fps))
    action = array("i", [-1] * len(fps))
    index = {f: i for i, f in enumerate(fps)}
    fired = [0] * len(model.actions)
    generated = 0
    found_states = Findings()
    goal = {p.name: bytearray() for p in recov}
    when = {p.name: bytearray() for p in recov}
    esrc, edst, eact = array("q"), array("q"), array("i")
    progress = Progress(options, "scalar")

    def check_level(states, first_index, level):
        found = False
        for kind, props, hit in ((VIOLATION, always, False), (WITNESS, sometimes, True)):
            for name, fn in props:
                if found_states.open(kind, name, level):
                    refs = [first_index + i for i, s in enumerate(states) if bool(fn(s)) is hit]
                    new = found_states.offer_least(kind, name, level, [fps[i] for i in refs], refs)
                    found = found or (new and kind == VIOLATION)
        for p in recov:
            g, w = cm.prop_fns[p.name], cm.when_fns.get(p.name)
            goal[p.name].extend(1 if g(s) else 0 for s in states)
            when[p.name].extend((1 if w(s) else 0) if w else 1 for s in states)
        return found

    frontier = [level0[f] for f in fps]
    rules = LevelRules(options)
    rules.initial(len(frontier), check_level(frontier, 0, 0))
    while not rules.finished:
        at_limit = rules.at_limit()
        level_start = len(fps)
        base = level_start - len(frontier)
        new_states = []
        dead = []
        unseen_beyond_limit = False
        for k, s in enumerate(frontier):
            i = base + k
            out: list = []
            try:
                cm.expand(s, fps[i], out)
            except EvaluationError as err:
                raise _locate(model, s, err) from None
            if not out and options.check_deadlock and not cm.terminal(s):
                dead.append(i)
            generated += len(out)
            for aid, t, f in out:
                fired[aid] += 1
                if perms:
                    t, f = canon(t, f)
                j = index.get(f)
                if j is None:
                    if at_limit:
                        unseen_beyond_limit = True
                        continue
                    j = len(fps)
                    index[f] = j
                    fps.append(f)
                    parent.append(i)
                    action.append(aid)
                    new_states.append(t)
                elif j >= level_start:
                    pj = parent[j]
                    if (fps[i], aid) < (fps[pj], action[j]):
                        parent[j] = i
                        action[j] = aid
                if want_edges:
                    esrc.append(i)
                    edst.append(j)
                    eact.append(aid)
            progress.tick(len(fps), rules.depth, generated)
        found = found_states.offer_least(DEADLOCK, "", rules.depth, [fps[i] for i in dead], dead)
        if at_limit:
            rules.advance(int(unseen_beyond_limit), found, limit=True)
            break
        found = check_level(new_states, level_start, rules.depth + 1) or found
        frontier = new_states
        rules.advance(len(new_states), found)
    progress.done(len(fps), rules.depth, generated)
    n = len(fps)
    edges = None
    if want_edges and rules.complete:  # only a complete search's graph is judged
        edges = (np.frombuffer(esrc, dtype=np.int64).copy(), np.frombuffer(edst, dtype=np.int64).copy(),
                 np.frombuffer(eact, dtype=np.int32).copy())
    out = SearchOutcome(
        fps=np.frombuffer(fps, dtype=np.uint64).copy(),
        parent=np.frombuffer(parent, dtype=np.int64).copy(),
        action=np.frombuffer(action, dtype=np.int32).copy(),
        level_sizes=rules.levels, generated=generated, fired=np.asarray(fired, dtype=np.int64),
        violations=found_states.refs(VIOLATION), witnesses=found_states.refs(WITNESS),
        deadlock=found_states.deadlock(),
        goal_masks={k: np.frombuffer(bytes(v), dtype=np.uint8).astype(bool) for k, v in goal.items()},
        when_masks={k: np.frombuffer(bytes(v), dtype=np.uint8).astype(bool) for k, v in when.items()},
        edges=edges, complete=rules.complete, stop_reason=rules.stop_reason,
        elapsed=time.perf_counter() - start, peak_memory=peak_rss(), engine="scalar")
    out.store_bytes = n * (8 + 8 + 4) + (len(esrc) * 20 if want_edges else 0) + n * 60
    return out


def _locate(model: GroundModel, s, err: EvaluationError) -> EvaluationError:
    """Re-run the reference interpreter to name the row whose step failed."""
    for a in model.actions:
        try:
            if evaluate(a.guard, s, a.row_id):
                successor(model, a, s)
        except EvaluationError as e2:
            e2.state = model.render_state(s)
            return EvaluationError(f"{e2.args[0].split(': ', 1)[-1]} (action {a.label})", a.row_id,
                                   model.render_state(s))
    err.state = model.render_state(s)
    return err


def run(request, model: GroundModel, options: ExploreOptions, settings=None) -> SearchOutcome:
    """The registry's entry (`checker/engines.py`): the scalar engine needs only the ground model."""
    return explore(model, options)
