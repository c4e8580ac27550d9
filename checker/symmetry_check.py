"""Is a declared symmetry sound? Tested on a sample of reachable states before a `--symmetry` search.

Symmetry reduction (`symmetry.py`) explores one state per orbit. That keeps every verdict and every
shortest-counterexample length only when each permutation π of the declared domains is an
automorphism of the state graph that preserves what is judged:

- the initial states are closed under π;
- successors commute: succ(π s) = π(succ s), as sets of states, for the whole step relation and for
  the steps of the rows a `recoverable` property may use (those without its `exclude_tags`);
- every checked property's expression (and a `recoverable` property's `when`), and under
  `--deadlock` the spec's `terminal`, has the same value in s and π s.

Then π maps paths to paths of the same length, so an orbit is reached at the depth of each of its
members, and a goal is reachable from a state exactly when it is reachable from its permuted twin:
`recoverable` judged on the quotient graph (its edges join orbits) is the judgement on the model.

The sample is deterministic: the first `BFS_STATES` states in breadth-first order, then `WALKS`
seeded random walks of `WALK_STEPS` steps, which reach the deep states (after crashes, failovers,
fences) a breadth-first prefix does not. Each sampled state is permuted by every group element, or
by a generating set (transpositions) when the group has more than `ALL_PERMUTATIONS` elements. A
sample passing is evidence, not a proof; a failure is a definite counterexample, reported with the
row or property at fault, the permutation and the state.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from txncheck.spec.errors import EvaluationError, SpecError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import RECOVERABLE
from txncheck.spec.state_text import value_label

from . import symmetry
from .compile_py import CompiledModel

BFS_STATES = 400
WALKS = 24
WALK_STEPS = 60
SEED = 20
ALL_PERMUTATIONS = 24  # S_4: larger groups are checked on their transpositions


@dataclass(frozen=True)
class Breach:
    """Where a declared symmetry fails: a row (successors do not commute), a property or `terminal`
    (its value changes), or the initial states (not closed)."""

    kind: str  # "row" | "property" | "terminal" | "init"
    name: str  # the row id or property name ("" for terminal and init)
    permutation: str
    message: str
    state: tuple[int, ...]

    def error(self, model: GroundModel) -> SpecError:
        text = (f"the declared symmetry is not sound under the permutation {self.permutation}: {self.message} "
                f"(the state: {describe_state(model, self.state)}; its twin: the state permuted); fix the spec so "
                "that it treats the members alike, narrow or drop its Symmetry, or run without --symmetry")
        if self.kind == "row":
            return SpecError(text, self.name)
        if self.kind == "property":
            return SpecError(text, prop=self.name)
        return SpecError(text, field="symmetry")


def describe_state(model: GroundModel, state) -> str:
    """A state in one line: its cells that differ from the (first) initial state, as name=value."""
    layout, env = model.layout, model.env
    shown = []
    for vl in layout.vars:
        for pos in range(vl.offset, vl.offset + vl.size):
            if state[pos] != model.init[pos]:
                shown.append(f"{layout.cell_names[pos]}={value_label(vl.var.domain, state[pos], env)}")
    return ", ".join(shown) if shown else "the initial state"


def sample(model: GroundModel, cm: CompiledModel) -> list[tuple[int, ...]]:
    """Reachable states, deterministically: a breadth-first prefix, then seeded random walks."""
    seen: dict[tuple[int, ...], None] = {}
    frontier = [tuple(s) for s in model.initial_states]
    for s in frontier:
        seen.setdefault(s)
    while frontier and len(seen) < BFS_STATES:
        nxt = []
        for s in frontier:
            for _, t, _ in _successors(cm, s):
                if t not in seen and len(seen) < BFS_STATES:
                    seen[t] = None
                    nxt.append(t)
        frontier = nxt
    rng = random.Random(SEED)
    inits = [tuple(s) for s in model.initial_states]
    for _ in range(WALKS):
        s = inits[rng.randrange(len(inits))]
        for _ in range(WALK_STEPS):
            succ = _successors(cm, s)
            if not succ:
                break
            s = succ[rng.randrange(len(succ))][1]
            seen.setdefault(s)
    return list(seen)


def _successors(cm: CompiledModel, s) -> list:
    """The steps from `s`; none where a step fails to evaluate (that error is the search's to report)."""
    try:
        return cm.successors(s)
    except EvaluationError:
        return []


def find_breach(model: GroundModel, properties=None, deadlock: bool = False) -> Breach | None:
    """The first breach of the spec's declared symmetry on the sample (None: none found). `properties`:
    the ground properties judged (default: all of the model's)."""
    perms = symmetry.permutations(model, True) if symmetry.group_size(model) - 1 <= ALL_PERMUTATIONS \
        else symmetry.generators(model)
    if not perms:
        return None
    props = tuple(model.properties if properties is None else properties)
    cm = CompiledModel(model)
    lo = model.layout.cell_lo
    inits = {tuple(s) for s in model.initial_states}
    for p in perms:
        for s in sorted(inits):
            if symmetry.apply(p, s, lo) not in inits:
                return Breach("init", "", p.label, "the twin of an initial state is not an initial state", s)
    row_of = [a.row for a in model.actions]  # rows by action id
    # the step relations a judgement uses: every row, and the rows each recoverable property may use
    restricted = sorted({tuple(sorted(q.prop.exclude_tags)) for q in props
                         if q.kind == RECOVERABLE and q.prop.exclude_tags})
    states = sample(model, cm)
    for s in states:
        succ = _successors(cm, s)
        for p in perms:
            u = symmetry.apply(p, s, lo)
            found = _property_breach(cm, props, deadlock, s, u, p)
            if found is None:
                found = _step_breach(model, cm, row_of, restricted, succ, s, u, p, lo)
            if found is not None:
                return found
    return None


def _property_breach(cm, props, deadlock, s, u, p) -> Breach | None:
    for q in props:
        for what, fn in (("", cm.prop_fns[q.name]), (" condition (when)", cm.when_fns.get(q.name))):
            if fn is not None and bool(fn(s)) != bool(fn(u)):
                return Breach("property", q.name, p.label,
                              f"its{what} value is {bool(fn(s))} in a state and {bool(fn(u))} in its twin", s)
    if deadlock and bool(cm.terminal(s)) != bool(cm.terminal(u)):
        return Breach("terminal", "", p.label, f"terminal is {bool(cm.terminal(s))} in a state and "
                      f"{bool(cm.terminal(u))} in its twin", s)
    return None


def _step_breach(model, cm, row_of, restricted, succ, s, u, p, lo) -> Breach | None:
    try:
        twin = cm.successors(u)
    except EvaluationError as err:
        return Breach("row", err.row or "", p.label, f"it fails in the twin of a state "
                      f"({err.message}) but not in the state", s)
    image = [(aid, symmetry.apply(p, t, lo)) for aid, t, _ in succ]
    mine = [(aid, t) for aid, t, _ in twin]
    relations = [()] + list(restricted)
    for excluded in relations:
        want = {t for aid, t in image if not set(row_of[aid].tags) & set(excluded)}
        got = {t for aid, t in mine if not set(row_of[aid].tags) & set(excluded)}
        if want == got:
            continue
        for r in model.spec.rows:  # some row's own steps differ when the union does: name the first
            w = {t for aid, t in image if row_of[aid].id == r.id}
            g = {t for aid, t in mine if row_of[aid].id == r.id}
            if w != g:
                if g - w:
                    how = "from the twin of a state it takes a step that is not the twin of any of its steps from the state"
                else:
                    how = "from a state it takes a step whose twin it cannot take from the state's twin"
                scope = "" if not excluded else f" (steps without tags {', '.join(excluded)}, as a recoverable property uses them)"
                return Breach("row", r.id, p.label, how + scope, s)
    return None
