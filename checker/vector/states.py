"""Sample states of a model, materialised by the vector kernel: every reachable state (a
breadth-first prefix when capped) or the states random walks visit. Candidate invariants are mined
from them (`checker/symbolic/lemmas.py`).
"""
from __future__ import annotations

import numpy as np

from txncheck.spec.ground_ir import GroundModel

from ..outcome import ExploreOptions
from .explore import explore
from .kernel import VectorKernel


def reachable_states(m: GroundModel, max_states: int | None = None) -> np.ndarray:
    """The vector engine's reachable states (rows; cells as columns), a breadth-first prefix of at
    least `max_states` states when capped."""
    kernel = VectorKernel(m)
    o = explore(m, ExploreOptions(stop_on_violation=False, properties=(), max_states=max_states), kernel)
    parent, action = o.parent, o.action
    cols = np.asarray(m.init, dtype=kernel.dtype).reshape(kernel.width, 1)
    out = [cols]
    off = 0
    for d in range(1, len(o.level_sizes)):
        prev = o.level_sizes[d - 1]
        start = off + prev
        n = o.level_sizes[d]
        rows = parent[start:start + n] - off
        cols, _, _ = kernel.successors_cols(cols, rows.astype(np.int64), action[start:start + n])
        out.append(cols)
        off = start
    return np.ascontiguousarray(np.concatenate(out, axis=1).T.astype(np.int16))


def simulated_states(m: GroundModel, walks: int = 2000, length: int = 80, seed: int = 0) -> np.ndarray:
    """States visited by `walks` random walks of up to `length` steps from the initial state, run
    in parallel with the vector kernel (each step: a uniformly random enabled action)."""
    kernel = VectorKernel(m)
    rng = np.random.default_rng(seed)
    cols = np.repeat(np.asarray(m.init, dtype=kernel.dtype).reshape(kernel.width, 1), walks, axis=1)
    out = [cols[:, :1]]
    A = kernel.n_actions
    alive = np.arange(walks)
    for _ in range(length):
        C = cols[:, alive]
        en = np.zeros((A, C.shape[1]), dtype=bool)
        with np.errstate(all="ignore"):
            for aid, mask in kernel._guards(C):
                en[aid] = True if mask is True else mask
        cnt = en.sum(axis=0)
        live = cnt > 0
        if not live.any():
            break
        C, en, cnt = C[:, live], en[:, live], cnt[live]
        alive = alive[live]
        pick = (rng.random(len(cnt)) * cnt).astype(np.int64)
        # the pick-th enabled action of each column
        acts = (np.cumsum(en, axis=0) > pick[None, :]).argmax(axis=0).astype(np.int32)
        nxt, _, _ = kernel.successors_cols(C, np.arange(C.shape[1]), acts)
        cols = cols.copy()
        cols[:, alive] = nxt
        out.append(nxt)
    X = np.concatenate(out, axis=1).T.astype(np.int16)
    return np.unique(X, axis=0)
