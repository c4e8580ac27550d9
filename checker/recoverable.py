"""`recoverable` properties on the stored edge graph: from every reachable state where `when`
holds, some goal state must be reachable (using only actions whose rows lack the excluded tags).

Computed by reverse reachability: a backward breadth-first search from the goal states over the
reversed edges, in numpy (CSR by destination), then `when & ~can_reach` are the violations.
"""
from __future__ import annotations

import numpy as np

from txncheck.spec.ground_ir import GroundModel

from .outcome import SearchOutcome


def can_reach(n: int, src: np.ndarray, dst: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """Boolean mask of the states from which some goal state is reachable."""
    reach = goal.copy()
    if len(src) == 0:
        return reach
    order = np.argsort(dst, kind="stable")
    s_sorted = src[order]
    starts = np.searchsorted(dst[order], np.arange(n + 1))
    frontier = np.flatnonzero(reach)
    while len(frontier):
        lo, hi = starts[frontier], starts[frontier + 1]
        counts = hi - lo
        if counts.sum() == 0:
            break
        idx = np.repeat(lo - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
        preds = s_sorted[idx]
        preds = preds[~reach[preds]]
        preds = np.unique(preds)
        reach[preds] = True
        frontier = preds
    return reach


def check(model: GroundModel, outcome: SearchOutcome, name: str) -> int | None:
    """The chosen violating state (least depth, then least fingerprint), or None."""
    prop = next(p for p in model.properties if p.name == name)
    n = outcome.distinct
    goal = outcome.goal_masks[name][:n]
    when = outcome.when_masks[name][:n]
    src, dst, act = outcome.edges
    excluded = set(prop.prop.exclude_tags)
    if excluded:
        keep_action = np.array([not (set(a.row.tags) & excluded) for a in model.actions], dtype=bool)
        keep = keep_action[act] if len(act) else np.zeros(0, dtype=bool)
        src, dst = src[keep], dst[keep]
    reach = can_reach(n, src, dst, goal)
    bad = np.flatnonzero(when & ~reach)
    if len(bad) == 0:
        return None
    depth_bounds = np.cumsum(outcome.level_sizes)
    first_level_end = depth_bounds[np.searchsorted(depth_bounds, bad[0], side="right")]
    cand = bad[bad < first_level_end]
    return int(cand[np.argmin(outcome.fps[cand])])
