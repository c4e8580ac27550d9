"""Rebuild the concrete action path to a stored state from parent links.

Without symmetry the stored action ids are the path. With symmetry the stored states are orbit
representatives, so each step replays from the concrete state reached so far and picks the
lowest-numbered enabled action whose successor's canonical fingerprint is the next stored one.
"""
from __future__ import annotations

from dataclasses import dataclass

from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GroundModel

from . import symmetry
from .fingerprint import Fingerprinter
from .outcome import SearchOutcome


@dataclass(frozen=True)
class InitialStates:
    """The initial state a stored path starts from, looked up by the fingerprint stored at its root: built
    once per judge (`of`), so that a model with many initial states fingerprints them once, not once per
    trace. Under symmetry the stored fingerprint is the canonical one, so that is the key; where several
    initial states share it, the least (the first, as `model.initial_states` is sorted) is the one."""

    by_fp: dict[int, tuple[int, ...]]
    only: tuple[int, ...] | None  # the model's one initial state: every path starts there

    @classmethod
    def of(cls, model: GroundModel, use_symmetry: bool) -> "InitialStates":
        states = model.initial_states
        if len(states) == 1:
            return cls({}, tuple(states[0]))
        perms = symmetry.permutations(model, use_symmetry)
        fpr = Fingerprinter(model.layout)
        by_fp: dict[int, tuple[int, ...]] = {}
        for s in states:
            f = fpr.of(s)
            if perms:
                _, f = symmetry.canonical(perms, fpr, tuple(s), f, model.layout.cell_lo)
            by_fp.setdefault(f, tuple(s))
        return cls(by_fp, None)

    def start(self, outcome: SearchOutcome, index: int) -> tuple[int, ...]:
        """The initial state the stored path to `index` starts from."""
        if self.only is not None:
            return self.only
        root = index
        while outcome.parent[root] >= 0:
            root = int(outcome.parent[root])
        found = self.by_fp.get(int(outcome.fps[root]))
        if found is None:
            raise RuntimeError("internal error: no initial state has the fingerprint stored at the path's root")
        return found


def concrete_path(model: GroundModel, outcome: SearchOutcome, index: int, use_symmetry: bool,
                  start: tuple[int, ...]) -> list[int]:
    """The actions from `start` (`InitialStates.start`) to a state whose stored form is `index`'s."""
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
    s = start
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
