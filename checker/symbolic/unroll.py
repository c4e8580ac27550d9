"""Unrolling the transition relation of a ground model into a z3 solver, one step at a time.

Step i has one z3 constant per cell (`s<i>.<cell>`) constrained to its domain, and one integer
action-choice variable `act<i>` in 0..n_actions-1 whose value is the ground action id taken from
state i to state i+1. The transition i -> i+1 is encoded once, with shared subterms:

- for each action a: act_i = a.id  =>  guard_a(s_i) and every expression a evaluates is defined
  (a computed index in range, no division by zero);
- for each cell c: s_{i+1}[c] = If(act_i = a1 [and target_a1 = c], v_a1(s_i), If(..., s_i[c]))
  over the actions that may write c (frame conditions come for free: an action writes only
  its targets);
- s_{i+1} within the type bounds, so an assignment outside a var's domain is not a transition
  (the reference semantics makes it an evaluation error; `txncheck tables --verify` reports it).

This is the relation of `ground.successor` for every action whose evaluation succeeds.
"""
from __future__ import annotations

import time

import z3

from txncheck.spec.ground import GCell, GroundModel, GroundProperty, evaluate, successor
from .encode import Encoder, as_bool, as_int, domain_constraints, make_state, value_of


class Unroller:
    def __init__(self, m: GroundModel, solver: z3.Solver, tag: str = "s"):
        self.m = m
        self.solver = solver
        self.tag = tag
        self.states: list[list] = []
        self.encoders: list[Encoder] = []
        self.acts: list = []
        self.encode_s = 0.0
        n = m.layout.width
        # which actions may write each cell, computed once
        self._writers: list[list[tuple[int, object, object]]] = [[] for _ in range(n)]
        for a in m.actions:
            for t, v in a.updates:
                if isinstance(t, GCell):
                    self._writers[t.pos].append((a.id, None, v))
                else:
                    vl = m.layout.var(t.var)
                    for p in range(vl.offset, vl.offset + vl.size):
                        self._writers[p].append((a.id, t, v))

    def add_state(self) -> list:
        t0 = time.perf_counter()
        s = make_state(self.m, f"{self.tag}{len(self.states)}")
        self.states.append(s)
        self.encoders.append(Encoder(s))
        self.solver.add(*domain_constraints(self.m, s))
        self.encode_s += time.perf_counter() - t0
        return s

    def constrain_init(self):
        s = self.states[0]
        self.solver.add(*[(x == bool(v)) if z3.is_bool(x) else (x == v) for x, v in zip(s, self.m.init)])

    def holds(self, i: int, p: GroundProperty):
        """Property p (guarded by its `when`) holds and is defined in state i."""
        e = self.encoders[i]
        body = z3.And(e.defined(p.expr), e.bool(p.expr))
        if p.when is not None:
            body = z3.Implies(z3.And(e.defined(p.when), e.bool(p.when)), body)
        return body

    def add_transition(self):
        """Add state i+1 and the transition from the last state to it."""
        t0 = time.perf_counter()
        i = len(self.states) - 1
        e = self.encoders[i]
        s = self.states[i]
        n_act = len(self.m.actions)
        act = z3.Int(f"act{self.tag}{i}")
        self.acts.append(act)
        cons = [act >= 0, act < n_act]
        is_a = [act == a.id for a in self.m.actions]
        for a in self.m.actions:
            parts = [e.defined(a.guard), e.bool(a.guard)]
            for t, v in a.updates:
                if not isinstance(t, GCell):
                    parts.append(e.defined(t))
                parts.append(e.defined(v))
            parts = [x for x in parts if not z3.is_true(x)]
            if parts:
                cons.append(z3.Implies(is_a[a.id], z3.And(*parts)))
        self.solver.add(*cons)
        nxt = self.add_state_raw(i + 1)
        eqs = []
        for pos, writers in enumerate(self._writers):
            cur = s[pos]
            boolean = z3.is_bool(cur)
            out = cur
            for aid, dyn, v in reversed(writers):
                val = e.enc(v)
                if boolean:
                    if not z3.is_bool(val):
                        # an integer written to a boolean cell must be 0 or 1
                        self.solver.add(z3.Implies(is_a[aid], z3.And(val >= 0, val <= 1)))
                    val = as_bool(val)
                else:
                    val = as_int(val)
                cond = is_a[aid] if dyn is None else z3.And(is_a[aid], e.position_is(dyn, pos))
                out = z3.If(cond, val, out)
            if out is not cur:
                eqs.append(nxt[pos] == out)
            else:
                eqs.append(nxt[pos] == cur)
        self.solver.add(*eqs)
        self.encode_s += time.perf_counter() - t0
        return nxt

    def add_state_raw(self, i):
        s = make_state(self.m, f"{self.tag}{i}")
        self.states.append(s)
        self.encoders.append(Encoder(s))
        self.solver.add(*domain_constraints(self.m, s))
        return s

    def distinct_from_all(self, i: int):
        """State i differs from every earlier state (the simple-path constraint of k-induction)."""
        s = self.states[i]
        for j in range(i):
            t = self.states[j]
            self.solver.add(z3.Or(*[a != b for a, b in zip(s, t)]))

    # -- reading a model back ----------------------------------------------------------------
    def action_ids(self, model, k: int) -> list[int]:
        return [value_of(model, self.acts[i]) for i in range(k)]

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
    if p.when is not None and not evaluate(p.when, s):
        return False
    return not evaluate(p.expr, s)
