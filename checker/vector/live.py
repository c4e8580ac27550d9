"""`eventually` and `leads_to` properties judged under `--memory-budget` without holding every edge.

A violation of `P ~> Q` is a lasso entirely inside not-Q states, entered from a P-and-not-Q state through
not-Q states (`eventually`: P is the initial states). So only the not-Q states reachable through not-Q
states from the P-and-not-Q states matter (the restricted graph), with, for fairness, the groups enabled
at each of them: an action to a Q state still enables its group there, while only the edges inside count
as taken. Its strongly connected components are the whole graph's components that meet it, with the same
edges inside and the same enabled groups, so `liveness.fair_states` finds the same fair states on it, and
the same states reach them; its states keep their order and fingerprints, so the chosen lasso is the
in-memory one's, byte for byte.

Built in sequential passes over the stored edges (memory-mapped), a block at a time within judging's
share, as `reverse.py` does: the moving not-Q-to-not-Q edges to files; the states they reach from the
sources, a backward search over those edges reversed (`DiskReverseGraph` with its ends swapped); the
restricted graph's edges counted. Where the restricted graph fits the share it is gathered into memory with
its enabled pairs; where it does not, it stays in files and its fair cycles are found out of core
(`live_disk.py`), holding a few bytes per state. If even those outgrow the share, `GraphTooLarge` says so
with the figures: the property is left unknown (`run.judge`), the other properties keep their outcomes, and
the run ends incomplete (exit 3) unless one of them is violated.
"""
from __future__ import annotations

import numpy as np

from txncheck.spec.errors import ResourceError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import EVENTUALLY

from ..liveness import FairnessGroups, Lasso, LiveGraph, check_within
from ..lookup import distinct
from ..outcome import SearchOutcome
from ..paths import InitialStates
from ..recoverable import index_dtype
from ..resources import split_budget
from . import live_disk, reverse
from .live_disk import DiskLiveGraph
from .reverse import DiskReverseGraph, edge_block
from .spill import SpillDir, mapped

# what judging one property holds at its peak (`fair_states`: the edges' labels and masks, the sparse
# matrix of the component search, the enabled pairs split by state), fitted to tracemalloc's peaks on Kafka
# eos and ci (1.0 M and 2.9 M restricted edges) with 6-12% to spare (benchmarks/RESULTS.md); FIXED is what
# the first import of scipy.sparse.csgraph allocates
EDGE_BYTES = 56
PAIR_BYTES = 32   # an enabled (state, group) pair
STATE_BYTES = 48
FIXED_BYTES = 16 << 20


class GraphTooLarge(ResourceError):
    """The part of the graph a property can be violated in does not fit judging's share of the budget."""


def in_memory_bytes(n: int, edges: int, pairs: int = 0) -> int:
    """About what judging one `eventually`/`leads_to` property holds on a graph of `n` states, `edges` moving
    edges and `pairs` enabled pairs (0 where they are not counted yet: a lower bound)."""
    return FIXED_BYTES + edges * EDGE_BYTES + pairs * PAIR_BYTES + n * STATE_BYTES


def out_of_core(outcome: SearchOutcome, budget: int | None) -> bool:
    """Whether a budget is set and the whole graph's judging would outgrow judging's share of it."""
    if budget is None or outcome.edges is None:
        return False
    return in_memory_bytes(outcome.distinct, len(outcome.edges[1])) > split_budget(budget).judging


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def check(model: GroundModel, outcome: SearchOutcome, name: str, groups: FairnessGroups,
          inits: InitialStates | None, spill: SpillDir, share: int) -> Lasso | None:
    """`liveness.check`'s answer, from the restricted graph built within `share` bytes (besides a few bytes
    per state); its files under `spill` are removed before returning."""
    prop = next(p for p in model.properties if p.name == name)
    n = outcome.distinct
    allowed = ~np.asarray(outcome.goal_masks[name][:n], dtype=bool)
    if prop.kind == EVENTUALLY:
        sources = np.zeros(n, dtype=bool)
        sources[:outcome.level_sizes[0]] = True
        sources &= allowed
    else:
        sources = np.asarray(outcome.when_masks[name][:n], dtype=bool) & allowed
    if not sources.any():
        return None
    src, dst, act = outcome.edges
    block = edge_block(share)
    inside = _restricted_states(n, src, dst, allowed, sources, spill, share, block)
    del allowed
    states = np.flatnonzero(inside).astype(index_dtype(n))
    # the restricted graph's moving edges (both ends inside: an edge from inside to a not-Q state ends inside)
    # and, at most, its enabled pairs (a pair per group of every moving edge from inside)
    count = most = 0
    for a in range(0, len(dst), block):
        s, d = np.asarray(src[a:a + block]), np.asarray(dst[a:a + block])
        moving = inside[s] & (s != d)
        count += int(np.count_nonzero(moving & inside[d]))
        most += len(groups.of_actions(np.asarray(act[a:a + block])[moving])[0])
    m = len(states)
    if in_memory_bytes(m, count, most) <= share:
        gr = _gather(states, inside, src, dst, act, outcome.fps, groups, count, block)
        return check_within(model, outcome, name, gr, states, sources[states], inits)
    # its edges in files: what stays in memory is a few bytes per state
    held = disk_bytes(n, m)
    if held + edge_block_bytes(reverse.MIN_BLOCK) > share:
        advice = -(-(held + edge_block_bytes(reverse.MIN_BLOCK)) * 2 // 2**20)  # judging's share is half the budget
        raise GraphTooLarge(
            f"judging {name} out of core: the part of the state graph it can be violated in ({m:,} of {n:,} "
            f"states, {count:,} of {len(dst):,} edges) needs about {_mib(held)} in memory even with its edges on "
            f"disk, more than judging's share of --memory-budget ({_mib(share)}); give --memory-budget "
            f"{advice:,} or more, or leave {name} out with --property")
    starts = sources[states]
    del sources
    graph = DiskLiveGraph(states, inside, src, dst, act, outcome.fps, groups, spill, share - held)
    del inside
    try:
        return live_disk.check_within(model, outcome, graph, starts, inits)
    finally:
        graph.close()


def disk_bytes(n: int, m: int) -> int:
    """What judging out of core holds besides its blocks of edges, for `m` restricted states of `n` stored: while
    building, the restricted states' mask and numbering over the stored states, their indices and the row
    starts of the edges by source; then `live_disk.STATE_BYTES` a restricted state."""
    return FIXED_BYTES + max(n * (1 + 4) + m * (4 + 8), m * live_disk.STATE_BYTES)


def edge_block_bytes(edges: int) -> int:
    return edges * max(reverse.EDGE_BYTES, live_disk.BLOCK_EDGE_BYTES)


def _restricted_states(n: int, src, dst, allowed: np.ndarray, sources: np.ndarray, spill: SpillDir,
                       share: int, block: int) -> np.ndarray:
    """The mask of the not-Q states reachable from `sources` through not-Q states."""
    sdt = index_dtype(n)
    paths = [spill.new(f"live-{k}") for k in ("src", "dst")]
    count = 0
    for a in range(0, len(dst), block):
        s, d = np.asarray(src[a:a + block]), np.asarray(dst[a:a + block])
        keep = (s != d) & allowed[s] & allowed[d]
        spill.append(paths[0], s[keep].astype(sdt))
        spill.append(paths[1], d[keep].astype(sdt))
        count += int(keep.sum())
    fs, fd = (mapped(p, sdt, count) for p in paths)
    fa = np.broadcast_to(np.int32(0), (count,))  # no action filter: any one action
    # forward reachability is backward reachability over the edges reversed
    forward = DiskReverseGraph(n, fd, fs, fa, spill, share)
    try:
        return forward.reach(sources)
    finally:
        forward.close()
        del fs, fd, fa
        for p in paths:
            spill.remove(p)


def _gather(states: np.ndarray, inside: np.ndarray, src, dst, act, fps: np.ndarray, groups: FairnessGroups,
            count: int, block: int) -> LiveGraph:
    """The restricted graph in memory, its states numbered in their order: its `count` moving edges in the
    stored order, and the groups each of its states enables (by any moving edge, inside or not)."""
    m = len(states)
    sdt = index_dtype(m)
    G = max(groups.count, 1)
    s_out, d_out, a_out = np.empty(count, sdt), np.empty(count, sdt), np.empty(count, np.int32)
    keys: list[np.ndarray] = []
    held = at = 0
    for a in range(0, len(dst), block):
        s, d = np.asarray(src[a:a + block]), np.asarray(dst[a:a + block])
        c = np.asarray(act[a:a + block])
        moving = (s != d) & inside[s]
        s, d, c = s[moving], d[moving], c[moving].astype(np.int32)
        ls = np.searchsorted(states, s).astype(sdt)
        e_idx, e_grp = groups.of_actions(c)
        keys.append(distinct(ls[e_idx].astype(np.int64) * G + e_grp))
        held += len(keys[-1])
        if held > max(count, block):  # merged as they grow: a state's pairs repeat across blocks
            keys = [distinct(np.concatenate(keys))]
            held = len(keys[0])
        k = inside[d]
        j = at + int(k.sum())
        s_out[at:j], d_out[at:j], a_out[at:j] = ls[k], np.searchsorted(states, d[k]), c[k]
        at = j
    enabled = distinct(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
    return LiveGraph(m, s_out, d_out, a_out, np.asarray(fps)[states], groups, enabled)
