"""Unrolling the transition relation of a ground model into a z3 solver, one step at a time.

Step i has one z3 constant per cell (`s<i>.<cell>`) constrained to its domain, and one Bool per
ground action (`s<i>.pick.<action id>`), exactly one of them true: the action taken from state i
to state i+1. The relation between a pre-state and a post-state is encoded once per model, as a
template over abstract cells (`Transition`):

- exactly one action is picked (a pseudo-Boolean equality, native to the finite-domain solver);
- picking a implies guard_a and that every expression a evaluates is defined (a computed index in
  range, no division by zero);
- for each cell c: post[c] = If(pick_a1 [and target_a1 = c], v_a1(pre), If(..., pre[c])) over
  the actions that may write c, so a cell nobody writes is just carried over;
- post within the type bounds, so an assignment outside a var's domain is not a transition
  (the reference semantics makes it an evaluation error; `txncheck tables --verify` reports it).

Each step is the template with its cells and picks substituted (`z3.substitute`, in z3's C++
core), so the Python walk over the ground expressions happens once, not once per step.

This is the relation of `ground.successor` for every action whose evaluation succeeds.

With `por=True` (bounded model checking from the initial state only), two adjacent steps may not
take statically independent actions in decreasing id order (`Transition.por`). Such a pair
commutes to the same state in the same number of steps, so every state reachable in exactly k
steps is still the end of some k-step path and shortest counterexamples keep their length; the
solver has fewer interleavings to refute. Not for k-induction, whose step case assumes the
invariant on every intermediate state: a swap changes an intermediate state, which need not
satisfy it.
"""
from __future__ import annotations

import time

import z3

from txncheck.spec.errors import ConfigError, EvaluationError
from txncheck.spec.evaluate import cells_read, dyn_cells, evaluate, successor
from txncheck.spec.ground_ir import GCell, GroundModel, GroundProperty
from .encode import Encoder, as_bool, as_int, domain_constraints, make_state, value_of
from .simplify import freeze


def footprint(m: GroundModel, a) -> tuple[frozenset, frozenset]:
    """(cells action a reads, cells it writes); a computed read or write: every cell it can denote."""
    r, w = set(cells_read(a.guard)), set()
    for t, v in a.updates:
        r |= cells_read(v)
        if isinstance(t, GCell):
            w.add(t.pos)
        else:
            w.update(dyn_cells(t))
            for x, _stride, _size in t.terms:
                r |= cells_read(x)
    return frozenset(r), frozenset(w)



def require_one_initial_state(m: GroundModel, command: str) -> None:
    """The encodings that start from one initial state (PDR's, the lemma miner's samples, CaDiCaL's refutation
    below a depth); a spec with several is checked by `txncheck check` or plain bmc / k-induction."""
    n = len(m.initial_states)
    if n > 1:
        raise ConfigError(f"spec {m.spec.name} has {n:,} initial states (OneOf/ANY initial values or init constraints); "
                          f"{command} supports specs with one initial state so far: check this one with `txncheck "
                          "check` (every initial state is explored), or with plain `txncheck bmc --depth K` or "
                          "`--induction K`")

class Transition:
    """The transition relation over abstract cells `pre`, `post` and picks `pick`, built once per
    model and instantiated per step by substitution; also the property templates over `pre`."""

    def __init__(self, m: GroundModel):
        # the model with the cells no action changes replaced by constants (simplify.py); the same
        # action ids, so paths through it are paths of m
        self.m, self.sub = freeze(m)
        self.pre = make_state(m, "pre")
        self.post = make_state(m, "post")
        self.pick = [z3.Bool(f"pick.{a.id}") for a in m.actions]
        self._holds: dict = {}
        self._por = None
        self._indep = None
        self._pre_enc = Encoder(self.pre)
        effects = self._relation()
        one_action = z3.PbEq([(b, 1) for b in self.pick], 1) if self.pick else z3.BoolVal(False)
        self.relation = z3.And(one_action, *effects)
        # the same effects with an extra "idle" pick instead: no action, the state copied (every
        # post cell defaults to its pre cell when no action is picked), for paths padded at the start
        self.idle = z3.Bool("idle")
        self.relation_or_idle = z3.And(z3.PbEq([(b, 1) for b in self.pick] + [(self.idle, 1)], 1), *effects)

    def _relation(self) -> list:
        m, e, pick = self.m, self._pre_enc, self.pick
        cons = []   # what each picked action requires and does; __init__ adds how many are picked
        for a in m.actions:
            parts = [e.defined(a.guard), e.bool(a.guard)]
            for t, v in a.updates:
                if not isinstance(t, GCell):
                    parts.append(e.defined(t))
                parts.append(e.defined(v))
            parts = [x for x in parts if not z3.is_true(x)]
            if parts:
                cons.append(z3.Implies(pick[a.id], z3.And(*parts)))
        # which actions may write each cell
        writers: list[list] = [[] for _ in range(m.layout.width)]
        for a in m.actions:
            for t, v in a.updates:
                if isinstance(t, GCell):
                    writers[t.pos].append((a.id, None, v))
                else:
                    for p in dyn_cells(t):
                        writers[p].append((a.id, t, v))
        for pos, ws in enumerate(writers):
            cur = self.pre[pos]
            boolean = z3.is_bool(cur)
            out = cur
            for aid, dyn, v in reversed(ws):
                val = e.enc(v)
                if boolean:
                    if not z3.is_bool(val):
                        # an integer written to a boolean cell must be 0 or 1
                        cons.append(z3.Implies(pick[aid], z3.And(val >= 0, val <= 1)))
                    val = as_bool(val)
                else:
                    val = as_int(val)
                cond = pick[aid] if dyn is None else z3.And(pick[aid], e.position_is(dyn, pos))
                out = z3.If(cond, val, out)
            cons.append(self.post[pos] == out)
        cons += domain_constraints(m, self.post)
        return cons

    def state_constraints(self, state: list) -> list:
        """A state any step may start from: its cells within the type bounds, and the cells no
        action changes (`sub.frozen`; e.g. a second tid's cells under tids=1) at their initial value,
        which every reachable state keeps. Without the latter, k-induction's counterexamples to
        induction start from states with an unused tid's or partition's cells set."""
        init = self.m.init
        return domain_constraints(self.m, state) + [
            (state[p] == bool(init[p])) if z3.is_bool(state[p]) else (state[p] == init[p])
            for p in sorted(self.sub.frozen)]

    def holds(self, p: GroundProperty):
        """Property p (guarded by its `when`) holds and is defined in `pre`."""
        hit = self._holds.get(id(p))
        if hit is None:
            e = self._pre_enc
            expr, when = self.sub(p.expr), self.sub(p.when)
            body = z3.And(e.defined(expr), e.bool(expr))
            if when is not None:
                body = z3.Implies(z3.And(e.defined(when), e.bool(when)), body)
            hit = self._holds[id(p)] = (p, body)  # p kept alive, so its id stays its own
        return hit[1]

    def independence(self) -> list[list[int]]:
        """For each action, the actions statically independent of it: neither writes a cell the
        other reads or writes (a computed read or write: every cell it can denote). Independent
        actions commute: if a then b is a path, so is b then a, to the same state."""
        if self._indep is None:
            m = self.m
            reads, writes = zip(*(footprint(m, a) for a in m.actions)) if m.actions else ((), ())
            n = len(m.actions)
            self._indep = [[b for b in range(n) if b != a and not (writes[a] & (reads[b] | writes[b]))
                            and not (writes[b] & reads[a])] for a in range(n)]
        return self._indep

    def por(self):
        """(template, picks of the next step): the next step may not take an action independent
        of this step's and smaller than it. (The full lexicographic normal form, which also looks
        past intervening independent actions, cost more solver time than it saved on Kafka.)"""
        if self._por is None:
            indep = self.independence()
            pick2 = [z3.Bool(f"pick2.{a}") for a in range(len(self.m.actions))]
            cons = []
            for a, ind in enumerate(indep):
                smaller = [pick2[b] for b in ind if b < a]
                if smaller:
                    cons.append(z3.Implies(self.pick[a], z3.Not(z3.Or(*smaller))))
            self._por = (z3.And(*cons) if cons else z3.BoolVal(True), pick2)
        return self._por


class Unroller:
    def __init__(self, m: GroundModel, solver, tag: str = "s", transition: Transition | None = None,
                 por: bool = False):
        self.m = m
        self.solver = solver
        self.tag = tag
        self.states: list[list] = []
        self.acts: list[list] = []     # per step, one Bool per action
        self.encode_s = 0.0
        t0 = time.perf_counter()
        self.tr = transition or Transition(m)
        self.por = por
        self._pairs: list[list] = []   # per state, (abstract pre cell, cell of the state)
        self.idles: list = []          # per step added with idle_prefix, its "idle" Bool
        self.encode_s += time.perf_counter() - t0

    def _new_state(self) -> list:
        i = len(self.states)
        s = make_state(self.m, f"{self.tag}{i}")
        self.states.append(s)
        self._pairs.append(list(zip(self.tr.pre, s)))
        return s

    def add_state(self) -> list:
        """The first state: fresh cells within the type bounds (`Transition.state_constraints`)."""
        t0 = time.perf_counter()
        s = self._new_state()
        self.solver.add(*self.tr.state_constraints(s))
        self.encode_s += time.perf_counter() - t0
        return s

    def constrain_init(self):
        """State 0 is an initial state: the cells every initial state agrees on, then one of the
        combinations of the others (TLA+'s Init as a disjunction)."""
        s = self.states[0]

        def eq(x, v):
            return (x == bool(v)) if z3.is_bool(x) else (x == v)
        inits = self.m.initial_states
        varying = [c for c in range(len(s)) if any(t[c] != inits[0][c] for t in inits)]
        self.solver.add(*[eq(s[c], v) for c, v in enumerate(inits[0]) if c not in set(varying)])
        if varying:
            combos = sorted({tuple(t[c] for c in varying) for t in inits})
            self.solver.add(z3.Or(*[z3.And(*[eq(s[c], v) for c, v in zip(varying, combo)]) for combo in combos]))

    def holds(self, i: int, p: GroundProperty):
        """Property p (guarded by its `when`) holds and is defined in state i."""
        t0 = time.perf_counter()
        out = z3.substitute(self.tr.holds(p), *self._pairs[i])
        self.encode_s += time.perf_counter() - t0
        return out

    def assume(self, i: int, template):
        """Assert `template` (a formula over the abstract pre-state `tr.pre`, e.g. proved lemmas)
        on state i."""
        t0 = time.perf_counter()
        self.solver.add(z3.substitute(template, *self._pairs[i]))
        self.encode_s += time.perf_counter() - t0

    def add_transition(self, idle_prefix: bool = False):
        """Add state i+1 and the transition from the last state to it. `idle_prefix`: the step may
        also be idle (no action, the same state), but only if every earlier step was: a path of
        j actions padded at the start to this length, whose states are the initial one repeated,
        then the j states of the path."""
        t0 = time.perf_counter()
        i = len(self.states) - 1
        pick = [z3.Bool(f"{self.tag}{i}.pick.{a.id}") for a in self.m.actions]
        self.acts.append(pick)
        pre = self._pairs[i]
        nxt = self._new_state()
        sub = (*pre, *zip(self.tr.post, nxt), *zip(self.tr.pick, pick))
        if idle_prefix:
            idle = z3.Bool(f"{self.tag}{i}.idle")
            self.solver.add(z3.substitute(self.tr.relation_or_idle, *sub, (self.tr.idle, idle)))
            if self.idles:
                self.solver.add(z3.Implies(idle, self.idles[-1]))
            self.idles.append(idle)
        else:
            self.solver.add(z3.substitute(self.tr.relation, *sub))
        if self.por and i >= 1:
            tmpl, pick2 = self.tr.por()
            self.solver.add(z3.substitute(tmpl, *zip(self.tr.pick, self.acts[i - 1]), *zip(pick2, pick)))
        self.encode_s += time.perf_counter() - t0
        return nxt

    def chose(self, i: int, aid: int):
        """The literal: step i takes action aid."""
        return self.acts[i][aid]

    def distinct_from_all(self, i: int):
        """State i differs from every earlier state (the simple-path constraint of k-induction)."""
        s = self.states[i]
        for j in range(i):
            t = self.states[j]
            self.solver.add(z3.Or(*[a != b for a, b in zip(s, t)]))

    # -- reading a model back ----------------------------------------------------------------
    def action_ids(self, model, k: int) -> list[int]:
        out = []
        for i in range(k):
            out.append(next(aid for aid, b in enumerate(self.acts[i])
                            if z3.is_true(model.eval(b, model_completion=True))))
        return out

    def state_values(self, model, i: int) -> tuple[int, ...]:
        return tuple(value_of(model, x) for x in self.states[i])


def replay_actions(m: GroundModel, action_ids, start=None) -> list[tuple[int, ...]]:
    """States visited by the action ids from `start` (default: the initial state), checking each
    guard with the reference interpreter; raises ValueError when an action is not enabled."""
    s = tuple(m.init) if start is None else tuple(start)
    states = [s]
    for aid in action_ids:
        a = m.actions[aid]
        if not evaluate(a.guard, s, a.row_id):
            raise ValueError(f"action {a.label} is not enabled in step {len(states)} of the z3 path")
        s = successor(m, a, s)
        states.append(s)
    return states


def violated(m: GroundModel, p: GroundProperty, s) -> bool:
    """p fails in state s; as in the z3 encoding (`Transition.holds`), a property whose evaluation
    fails (a computed index out of range, in a state k-induction made up) does not hold."""
    try:
        if p.when is not None and not evaluate(p.when, s):
            return False
        return not evaluate(p.expr, s)
    except EvaluationError:
        return True
