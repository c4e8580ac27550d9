"""A slow stand-in for `txncheck.checker.vector.kernel.VectorKernel`, with the same interface.

Used only when the vector kernel is not importable (the engine prefers the real one). It
interprets ground actions state by state with the reference evaluator, so it is correct but slow.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from txncheck.checker.fingerprint import Fingerprinter
from txncheck.checker import symmetry as sym
from txncheck.spec.ground import GroundModel, evaluate, successor


@dataclass
class _Expansion:
    fps: np.ndarray
    parent_rows: np.ndarray
    actions: np.ndarray
    fired: np.ndarray
    has_successor: np.ndarray
    _states: np.ndarray

    def states(self, select) -> np.ndarray:
        return self._states[np.asarray(select, dtype=np.int64)]


class FallbackKernel:
    def __init__(self, model: GroundModel, symmetry: bool = False):
        self.model = model
        self.width = model.layout.width
        span = max([max(abs(lo), abs(hi)) for lo, hi in zip(model.layout.cell_lo, model.layout.cell_hi)] or [0])
        self.dtype = np.dtype(np.int8 if span < 127 else np.int16 if span < 32767 else np.int32)
        self.fp = Fingerprinter(model.layout)
        self.perms = sym.permutations(model, symmetry)
        self.lo = model.layout.cell_lo
        self.n_actions = len(model.actions)
        self.symmetric = False    # fingerprints are canonical already; P is never needed

    def _canon(self, s: tuple) -> tuple[tuple, int]:
        f = self.fp.of(s)
        if self.perms:
            return sym.canonical(self.perms, self.fp, s, f, self.lo)
        return s, f

    def initial(self) -> np.ndarray:
        s, _ = self._canon(tuple(self.model.init))
        return np.array([s], dtype=self.dtype)

    def fingerprints(self, states: np.ndarray) -> np.ndarray:
        return np.array([self._canon(tuple(int(x) for x in r))[1] for r in states], dtype=np.uint64)

    def expand(self, states: np.ndarray) -> _Expansion:
        n_act = len(self.model.actions)
        fps, rows, acts, children = [], [], [], []
        fired = np.zeros(n_act, dtype=np.int64)
        has = np.zeros(len(states), dtype=bool)
        for i, r in enumerate(states):
            s = tuple(int(x) for x in r)
            for a in self.model.actions:
                if not evaluate(a.guard, s, a.row_id):
                    continue
                c, f = self._canon(successor(self.model, a, s))
                fired[a.id] += 1
                has[i] = True
                fps.append(f)
                rows.append(i)
                acts.append(a.id)
                children.append(c)
        mat = np.array(children, dtype=self.dtype).reshape(len(children), self.width)
        return _Expansion(np.array(fps, dtype=np.uint64), np.array(rows, dtype=np.int64),
                          np.array(acts, dtype=np.int32), fired, has, mat)

    def properties(self, states: np.ndarray, names=None) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        tuples = [tuple(int(x) for x in r) for r in states]
        for p in self.model.properties:
            if names is not None and p.name not in names:
                continue
            vals = np.array([bool(evaluate(p.expr, s)) for s in tuples], dtype=bool)
            if p.kind == "always":
                out[p.name] = ~vals
            elif p.kind == "sometimes":
                out[p.name] = vals
            else:
                out[p.name] = vals
                if p.when is not None:
                    out[p.name + ":when"] = np.array([bool(evaluate(p.when, s)) for s in tuples], dtype=bool)
                else:
                    out[p.name + ":when"] = np.ones(len(tuples), dtype=bool)
        return out

    def deadlocks(self, states: np.ndarray, has_successor: np.ndarray) -> np.ndarray:
        dead = ~np.asarray(has_successor, dtype=bool)
        t = self.model.terminal
        if t is not None:
            for i in np.flatnonzero(dead):
                if evaluate(t, tuple(int(x) for x in states[i])):
                    dead[i] = False
        return dead

    # -- the column-major interface the Spark worker uses (states as width x n) ----------------
    def expand_cols(self, cols: np.ndarray, P=None, need_has: bool = True) -> _Expansion:
        e = self.expand(np.ascontiguousarray(cols.T))
        e._cols = cols
        return e

    def properties_cols(self, cols: np.ndarray, names=None) -> dict[str, np.ndarray]:
        return self.properties(np.ascontiguousarray(cols.T), names)

    def terminal_cols(self, cols: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(cols.T)
        return ~self.deadlocks(rows, np.zeros(len(rows), dtype=bool))

    def successors_cols(self, cols: np.ndarray, parent_rows, actions, known_fps=None):
        out = []
        for r, a in zip(np.asarray(parent_rows), np.asarray(actions)):
            s = tuple(int(x) for x in cols[:, r])
            c, _ = self._canon(successor(self.model, self.model.actions[int(a)], s))
            out.append(c)
        mat = np.array(out, dtype=self.dtype).reshape(len(out), self.width)
        fps = self.fingerprints(mat)
        return np.ascontiguousarray(mat.T), fps, fps
