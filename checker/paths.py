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


def concrete_path(model: GroundModel, outcome: SearchOutcome, index: int, use_symmetry: bool) -> list[int]:
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
    s = tuple(model.init)
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
