"""Rebuild the concrete action path to a stored state from parent links.

Without symmetry the stored action ids are the path. With symmetry the stored states are orbit
representatives, so each step replays from the concrete state reached so far and picks the
lowest-numbered enabled action whose successor's canonical fingerprint is the next stored one.
"""
from __future__ import annotations

from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GroundModel

from . import symmetry
from .fingerprint import Fingerprinter
from .outcome import SearchOutcome


def start_state(model: GroundModel, outcome: SearchOutcome, index: int, use_symmetry: bool) -> tuple[int, ...]:
    """The initial state the stored path to `index` starts from: the least initial state whose (canonical)
    fingerprint is the one stored at the path's root."""
    states = model.initial_states
    if len(states) == 1:
        return tuple(states[0])
    root = index
    while outcome.parent[root] >= 0:
        root = int(outcome.parent[root])
    target = int(outcome.fps[root])
    perms = symmetry.permutations(model, use_symmetry)
    fpr = Fingerprinter(model.layout)
    for s in states:
        f = fpr.of(s)
        if perms:
            _, f = symmetry.canonical(perms, fpr, tuple(s), f, model.layout.cell_lo)
        if f == target:
            return tuple(s)
    raise RuntimeError("internal error: no initial state has the fingerprint stored at the path's root")


def concrete_path(model: GroundModel, outcome: SearchOutcome, index: int, use_symmetry: bool,
                  start: tuple[int, ...] | None = None) -> list[int]:
    """The actions from `start` (by default `start_state`) to a state whose stored form is `index`'s."""
    stored = outcome.path(index)
    perms = symmetry.permutations(model, use_symmetry)
    if not perms:
        return stored
    fpr = Fingerprinter(model.layout)
    lo = model.layout.cell_lo
    chain = []
    i = index
    while outcome.parent[i] >= 0:
        chain.append(int(outcome.fps[i]))
        i = int(outcome.parent[i])
    chain.reverse()
    s = start if start is not None else start_state(model, outcome, index, use_symmetry)
    out = []
    for target in chain:
        for a in model.actions:
            if not evaluate(a.guard, s, a.row_id):
                continue
            t = successor(model, a, s)
            _, f = symmetry.canonical(perms, fpr, t, fpr.of(t), lo)
            if f == target:
                out.append(a.id)
                s = t
                break
        else:
            raise RuntimeError("internal error: no action reproduces a stored symmetric step")
    return out
