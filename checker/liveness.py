"""`eventually` and `leads_to` properties under fairness, judged on the stored state graph.

A property `P ~> Q` (`eventually Q` is the same with P the initial states) is violated exactly
when some reachable P-state starts a fair behaviour that never meets Q. Such a behaviour ends in
a lasso: a path through not-Q states into a strongly connected set of not-Q states that it
repeats forever. Every state may also stutter forever (TLA+'s semantics), which is a cycle of its own.

Which cycles are fair is decided per strongly connected component, as in the standard algorithms
for Streett conditions (Emerson and Lei; Latvala and Heljanko):
- weak fairness of a group: the component takes one of its actions inside, or has a state where
  the group is disabled (a cycle through every state of it then satisfies the condition);
- strong fairness: the component takes it inside, or no state of it enables it; otherwise the
  states that enable it cannot be visited infinitely often, so they are removed and what remains
  is split into components again, until every component is fair or gone.
Enabled means an action of the group leads to another state (self-loops are stuttering).

The counterexample is rebuilt deterministically (ties broken by fingerprint, then action id), so
every engine that produces the same stored graph writes the same lasso.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from txncheck.spec.fairness import ground_groups
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import EVENTUALLY

from .lookup import concat_ranges, contains_sorted, distinct, group_starts, occurring
from .outcome import SearchOutcome
from .paths import InitialStates
from .recoverable import EdgeSweep, first_chosen, grouped_by, index_dtype


@dataclass(frozen=True)
class FairnessGroups:
    """`spec.fairness.FairGroups` as arrays: the groups of action a are grp[ptr[a]:ptr[a+1]]."""

    labels: tuple[str, ...]
    strong: np.ndarray  # bool [groups]
    ptr: np.ndarray     # int64 [actions+1]
    grp: np.ndarray     # int64

    @property
    def count(self) -> int:
        return len(self.labels)

    def of_actions(self, act: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into `act`, group) for every group each action belongs to."""
        per_action = np.diff(self.ptr)
        if per_action.max(initial=0) <= 1:  # the common case: a lookup, no expansion
            first = np.full(len(per_action), -1, dtype=np.int32)
            first[per_action == 1] = self.grp
            g = first[act]
            idx = np.flatnonzero(g >= 0).astype(index_dtype(len(act)))
            return idx, g[idx]
        counts = self.ptr[act + 1] - self.ptr[act]
        return (np.repeat(np.arange(len(act), dtype=index_dtype(len(act))), counts),
                self.grp[concat_ranges(self.ptr[act], counts)].astype(np.int32))


def fairness_groups(model: GroundModel) -> FairnessGroups:
    g = ground_groups(model.spec, model.actions, model.env)
    ptr = np.zeros(len(model.actions) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(m) for m in g.of_action])
    grp = np.array([x for m in g.of_action for x in m], dtype=np.int64)
    return FairnessGroups(g.labels, np.array(g.strong, dtype=bool), ptr, grp)


@dataclass(frozen=True)
class Lasso:
    """A fair behaviour that violates the property: `actions` from the initial state; after the last
    one the state is the one after `loop` actions again (`loop == len(actions)`: it stutters there)."""

    actions: tuple[int, ...]
    loop: int
    start: int  # the step where the property's condition holds and its goal never holds again
    initial: tuple[int, ...]  # the initial state the actions start from


class LiveGraph:
    """A graph of states without stuttering edges, with the enabled (state, group) pairs: the stored graph
    (`of`), or the part of it a property can be violated in (`vector/live.py`), whose `enabled` pairs also
    count the edges that leave it."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, act: np.ndarray, fps: np.ndarray,
                 groups: FairnessGroups, enabled: np.ndarray | None = None):
        self.n = n
        self.src, self.dst, self.act = src, dst, act
        self.fps = fps
        self.groups = groups
        G = max(groups.count, 1)
        self.G = G
        e_idx, e_grp = groups.of_actions(self.act)
        self.edge_group_edge, self.edge_group = e_idx, e_grp
        self.enabled = enabled if enabled is not None else _enabled_pairs(n, self.src[e_idx], e_grp, G)

    @staticmethod
    def of(outcome: SearchOutcome, groups: FairnessGroups, sources: np.ndarray | None = None) -> "LiveGraph":
        """The stored graph's moving edges; only those that leave a state of `sources` (a mask) when given:
        the fair-cycle search, its lasso and the enabled pairs look at no other."""
        src, dst, act = outcome.edges
        moving = src != dst
        if sources is not None:
            moving &= sources[src]
        # 32-bit where they fit: on Kafka nightly these are 74 M entries each
        states = index_dtype(outcome.distinct)
        return LiveGraph(outcome.distinct, src[moving].astype(states, copy=False),
                         dst[moving].astype(states, copy=False),
                         act[moving].astype(np.int32), outcome.fps, groups)

    def enabled_at(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(state, group) pairs enabled among `states` (a boolean mask over the states), sorted by state."""
        st, g = np.divmod(self.enabled, self.G)
        keep = states[st]
        return st[keep], g[keep]


def _enabled_pairs(n: int, src: np.ndarray, grp: np.ndarray, G: int) -> np.ndarray:
    """The distinct keys state · G + group of the (source, group) pairs of the edges, sorted: a state enables a
    group where some action of it moves the state. Each source's edges come in action order, so where group ids
    follow action ids (fairness per action, as Kafka's) the keys are nearly sorted wherever the sources are, and
    timsort is linear on them (Kafka nightly, 25 M keys: 0.3 s where quicksort takes 2.2). The vector engine
    without a budget gives a level's sources in its parents' order, though (`vector/step.py`); then a counting
    sort by source first (`grouped_by`, linear) keeps the sort linear: 1.7 s where timsort took 3.3 on 37 M."""
    keys = src.astype(np.int64) * G + grp
    if np.count_nonzero(src[1:] < src[:-1]) * 64 > len(src):
        keys = keys[grouped_by(src, n)[0]]
    return distinct(keys, kind="stable")


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    # imported here: scipy costs every `check` 0.14 s at start-up, and only graph properties need it
    from scipy.sparse import csr_matrix

    # from (row, col) pairs, which sums repeated edges (two actions between the same states): scipy 1.17.1's strong
    # components never return on a CSR matrix that stores an edge twice (a 3-cycle with one edge repeated will do)
    m = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    return strong_components(m).astype(index_dtype(n), copy=False)


def strong_components(m) -> np.ndarray:
    """The strong component labels of the square sparse matrix `m`'s graph (scipy's, int32), which must store
    no entry twice."""
    from scipy.sparse.csgraph import connected_components

    # scipy's compiled search reports an error inside it (an allocation that fails under a memory cap) as
    # "Exception ignored" and returns labels it never finished: caught here and raised, never judged on
    ignored = []
    hook, sys.unraisablehook = sys.unraisablehook, ignored.append
    try:
        labels = connected_components(m, directed=True, connection="strong")[1]
    finally:
        sys.unraisablehook = hook
    if ignored:
        raise ignored[0].exc_value
    return labels


def fair_states(gr: LiveGraph, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fair mask, component label per state): the states of `allowed` on a fair cycle within `allowed`
    (stuttering included); labels number the fair components (-1 elsewhere)."""
    n, G = gr.n, gr.G
    fair = np.zeros(n, dtype=bool)
    comp = np.full(n, -1, dtype=np.int64)
    M = allowed.copy()
    offset = 0
    while M.any():
        nodes = np.flatnonzero(M)
        inside = M[gr.src] & M[gr.dst]
        # the component search numbers M's states only: fewer nodes for it, and fewer components, whose
        # (component, group) keys then fit 32 bits (half the sorting time) where they would not over all states
        dense = np.cumsum(M, dtype=index_dtype(n))
        dense -= 1
        cs, cd = dense[gr.src[inside]], dense[gr.dst[inside]]
        del dense
        lab = _components(len(nodes), cs, cd)
        count = int(lab.max()) + 1
        size = np.bincount(lab, minlength=count)
        internal = np.zeros_like(inside)  # the edges inside one component
        internal[inside] = lab[cs] == lab[cd]
        del cs, cd, inside
        key = np.uint32 if count * G <= 1 << 32 else np.int64
        state_lab = np.zeros(n, dtype=key)
        state_lab[nodes] = lab
        sel = internal[gr.edge_group_edge]
        taken = distinct(_keys(state_lab[gr.src[gr.edge_group_edge[sel]]], G, gr.edge_group[sel]))
        est, eg = gr.enabled_at(M)
        keys = np.sort(_keys(state_lab[est], G, eg))
        first = np.flatnonzero(group_starts(keys))
        ekeys, ecount = keys[first], np.diff(np.r_[first, len(keys)])
        del keys, first
        not_taken = ~occurring(ekeys, taken)  # the taken keys are enabled ones: fewer to search for
        klab, kg = np.divmod(ekeys, G)
        strong = gr.groups.strong[kg] if gr.groups.count else np.zeros(len(kg), dtype=bool)
        weak_bad = not_taken & ~strong & (ecount == size[klab])
        strong_bad = not_taken & strong
        unfair = np.zeros(count, dtype=bool)
        unfair[klab[weak_bad]] = True
        refine = np.zeros(count, dtype=bool)
        refine[klab[strong_bad]] = True
        refine &= ~unfair
        kept = ~unfair[lab] & ~refine[lab]
        fair[nodes[kept]] = True
        comp[nodes[kept]] = lab[kept] + np.int64(offset)  # 64-bit: the offsets add up over the rounds
        offset += count
        # strong fairness: the states enabling a neglected group cannot recur; split the rest again
        bad_keys = ekeys[strong_bad]
        M = np.zeros(n, dtype=bool)
        M[nodes[refine[lab]]] = True
        if len(bad_keys):
            M[est[contains_sorted(bad_keys, _keys(state_lab[est], G, eg))]] = False
    return fair, comp


def _keys(labels: np.ndarray, G: int, groups: np.ndarray) -> np.ndarray:
    """label * G + group, in the labels' dtype (`groups` are int32 or int64; the sum fits by construction)."""
    k = labels * labels.dtype.type(G)
    return np.add(k, groups, out=k, casting="unsafe")


def check(model: GroundModel, outcome: SearchOutcome, name: str, groups: FairnessGroups | None = None,
          graph=None, inits: InitialStates | None = None) -> Lasso | None:
    """The lasso that violates property `name`, or None when it holds under the spec's fairness. `graph`:
    the outcome's edges to search backwards (an `EdgeSweep`, or `vector/reverse.py`'s edges by destination, which
    `judge` builds on its first `reach`: only where there is a fair cycle), `inits` the model's initial states, if
    the caller has them already."""
    prop = next(p for p in model.properties if p.name == name)
    groups = groups if groups is not None else fairness_groups(model)
    n = outcome.distinct
    goal = outcome.goal_masks[name][:n]
    allowed = ~goal
    gr = LiveGraph.of(outcome, groups, allowed)  # on nightly about half the edges leave a goal state
    fair, comp = fair_states(gr, allowed)
    if not fair.any():
        return None  # no fair cycle, so no fair behaviour that never meets the goal: no backward search needed
    graph = graph if graph is not None else EdgeSweep.of(outcome)
    bad = graph.reach(fair, states=allowed)  # through goal-less states only
    if prop.kind == EVENTUALLY:
        starts = np.flatnonzero(bad[:outcome.level_sizes[0]])
    else:
        starts = np.flatnonzero(outcome.when_masks[name][:n] & bad)
    if len(starts) == 0:
        return None
    s0 = first_chosen(outcome, starts)
    within = _Forward(gr, allowed[gr.src] & allowed[gr.dst])
    return _lasso(model, outcome, gr, within, fair, comp, s0, s0, inits)


def check_within(model: GroundModel, outcome: SearchOutcome, name: str, gr: LiveGraph, states: np.ndarray,
                 sources: np.ndarray, inits: InitialStates | None = None) -> Lasso | None:
    """`check` on the part of the graph a violation lies in: `gr` over the goal-less `states` (sorted indices
    into the outcome, numbered in their order) reachable through goal-less states from the goal-less
    `sources` (a mask over `states`: the states where the condition holds). A fair cycle, the states that
    reach one and the paths between them stay inside that part, and its states keep their order and
    fingerprints, so the lasso is `check`'s."""
    fair, comp = fair_states(gr, np.ones(gr.n, dtype=bool))
    bad = EdgeSweep(gr.n, gr.src, gr.dst).reach(fair)
    starts = np.flatnonzero(sources & bad)
    if len(starts) == 0:
        return None
    s0 = first_chosen(outcome, states[starts])
    within = _Forward(gr, np.ones(len(gr.src), dtype=bool))
    return _lasso(model, outcome, gr, within, fair, comp, int(np.searchsorted(states, s0)), s0, inits)


def _lasso(model: GroundModel, outcome: SearchOutcome, gr: LiveGraph, within: "_Forward", fair: np.ndarray,
           comp: np.ndarray, local: int, s0: int, inits: InitialStates | None) -> Lasso:
    """The lasso from state `s0` (`local` in `gr`'s numbering): its shortest path, a shortest path through
    goal-less states to a fair state, and a fair cycle there."""
    to_fair, f = within.path(local, fair)
    return lasso_of(model, outcome, s0, to_fair, _fair_cycle(gr, comp, f), inits)


def lasso_of(model: GroundModel, outcome: SearchOutcome, s0: int, to_fair: tuple[int, ...], cycle: tuple[int, ...],
             inits: InitialStates | None) -> Lasso:
    """The lasso through stored state `s0`: its shortest path from an initial state, then `to_fair`'s actions to
    a fair state, then `cycle`'s back to that state."""
    prefix = outcome.path(s0)
    actions = tuple(int(a) for a in prefix) + to_fair + cycle
    inits = inits if inits is not None else InitialStates.of(model, False)
    return Lasso(actions, len(prefix) + len(to_fair), len(prefix), inits.start(outcome, s0))


def _fair_cycle(gr: LiveGraph, comp: np.ndarray, f: int) -> tuple[int, ...]:
    """Actions of a fair cycle from `f` back to `f` inside f's component; () when stuttering at f is fair."""
    in_comp = comp == comp[f]
    members = np.flatnonzero(in_comp)
    inside = in_comp[gr.src] & in_comp[gr.dst]
    est, eg = gr.enabled_at(in_comp)
    at_f = set(eg[est == f].tolist())
    if not at_f:
        return ()  # no fair action is enabled at f: it may stop there forever
    sel = inside[gr.edge_group_edge]
    taken_e, taken_g = gr.edge_group_edge[sel], gr.edge_group[sel]
    waypoints: list[tuple[str, int]] = []
    for g in range(gr.groups.count):
        mine = taken_e[taken_g == g]
        if len(mine):
            # the group's least edge inside (by source fingerprint, then action)
            e = mine[np.lexsort((gr.act[mine], gr.fps[gr.src[mine]]))[0]]
            waypoints.append(("edge", int(e)))
        elif g in at_f:
            # weakly fair and not taken here: visit a state that disables it (strong: none enables it)
            where = members[~np.isin(members, est[eg == g])]
            waypoints.append(("state", int(where[np.argmin(gr.fps[where])])))
    component = _Forward(gr, inside)
    out: tuple[int, ...] = ()
    cur = f
    for kind, x in waypoints:
        steps, cur = component.path(cur, _mask(gr.n, int(gr.src[x]) if kind == "edge" else x))
        out += steps
        if kind == "edge":
            out += (int(gr.act[x]),)
            cur = int(gr.dst[x])
    return out + component.path(cur, _mask(gr.n, f))[0]


def _mask(n: int, i: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[i] = True
    return m


class _Forward:
    """The edges of `gr` that `keep` marks, by source (CSR, built once), for shortest paths through them."""

    def __init__(self, gr: LiveGraph, keep: np.ndarray):
        self.fps = gr.fps
        self.src, self.dst, self.act = gr.src[keep], gr.dst[keep], gr.act[keep]
        self.order, self.starts = grouped_by(self.src, gr.n)

    def path(self, start: int, target: np.ndarray) -> tuple[tuple[int, ...], int]:
        """(actions, end) of a shortest path from `start` to a `target` state (the least fingerprint among
        the nearest; each state reached by its least (source fingerprint, action) edge); no actions if
        `start` is one."""
        if target[start]:
            return (), start
        fps, src, dst, act = self.fps, self.src, self.dst, self.act
        via = np.full(len(target), -1, dtype=np.int64)
        seen = np.zeros(len(target), dtype=bool)
        seen[start] = True
        frontier = np.array([start])
        while len(frontier):
            lo = self.starts[frontier]
            idx = self.order[concat_ranges(lo, self.starts[frontier + 1] - lo)]
            idx = idx[~seen[dst[idx]]]
            if len(idx) == 0:
                break
            idx = idx[np.lexsort((act[idx], fps[src[idx]], dst[idx]))]
            idx = idx[group_starts(dst[idx])]
            via[dst[idx]] = idx
            seen[dst[idx]] = True
            frontier = dst[idx]
            hit = frontier[target[frontier]]
            if len(hit):
                end = node = int(hit[np.argmin(fps[hit])])
                edges = []
                while node != start:
                    edges.append(int(via[node]))
                    node = int(src[edges[-1]])
                return tuple(int(act[e]) for e in reversed(edges)), end
        raise RuntimeError("internal error: no path to a fair state inside the graph that reaches one")
