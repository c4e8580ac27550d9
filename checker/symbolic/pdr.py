"""IC3/PDR with z3's Spacer engine: `always` properties as constrained Horn clauses (experimental).

The ground model becomes Horn clauses over one relation Inv(cells) (a Bool argument per boolean
cell, an Int argument per other cell):

    Inv(init)                                                    (a fact)
    Inv(post) <- Inv(pre) & Dom(pre) & T(pre, post, pick)        (the transition)
    Err       <- Inv(pre) & not P(pre)                           (the query)

T is `unroll.Transition.relation`, the same template bmc and k-induction instantiate, with each
`post[c] == value(pre, pick)` conjunct moved into the head (`inline_post`: the head is
Inv(value_1(pre, pick), ...), no post variables). Shapes:

- default (`split=False`, `pick="bool"`): one rule whose picks are existentially quantified body
  variables (the "exactly one" pseudo-Boolean constraint included). The counterexample's actions
  are read from the ground states of Spacer's refutation (`get_answer()` after sat, a
  hyper-resolution proof whose conclusions are ground Inv facts): the action whose successor
  under the reference interpreter is the next state. `Fixedpoint.get_ground_sat_answer()`
  returned just False in z3 5.4.0 (with or without `spacer.ground_pobs`).
- `pick="int"`: the action as one Int body variable `act`, pick_a replaced by act == a.
- `split=True`: one rule per ground action a (pick_a true, the others false, simplified), named
  `a<id>`, so `Fixedpoint.get_rule_names_along_trace()` (query first, fact last) lists the
  action ids. 10-20x slower than the monolithic rule on TwoPhase proofs.

Answers: `unsat` proves P: `get_answer()` is an inductive invariant (a formula over the cells),
re-checked here with a plain solver (initiation, consecution, safety) before it is reported;
`sat` is a counterexample, replayed with the reference interpreter (`unroll.replay_actions`).
Spacer does not promise a shortest counterexample: its length is reported as found (the
explicit engine's or bmc's depth is the shortest).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from txncheck.spec.ground_ir import GroundModel
from .bmc import ProofOutcome, SymbolicResult, always_properties, make_trace
from .unroll import Transition, replay_actions, violated, require_one_initial_state


@dataclass
class Invariant:
    """The inductive invariant Spacer found for a property, over the abstract cells `tr.pre`."""
    formula: object                    # z3 BoolRef over Transition.pre
    conjuncts: int                     # top-level conjuncts (Spacer's lemmas, roughly)
    ast_nodes: int                     # size of the formula (distinct AST nodes)
    checked: str                       # "inductive" | "not inductive: ..." | "unchecked"
    check_s: float = 0.0


@dataclass
class PdrOutcome:
    prop: ProofOutcome
    answer: str                        # "unsat" (proved) | "sat" (violated) | "unknown"
    solver_s: float
    levels: int | None = None          # Spacer's frame count at the end
    invariant: Invariant | None = None
    stats: dict = field(default_factory=dict)


def _ast_size(e) -> int:
    seen, todo = set(), [e]
    while todo:
        x = todo.pop()
        k = x.get_id()
        if k in seen:
            continue
        seen.add(k)
        todo.extend(x.children())
    return len(seen)


class HornEncoding:
    """The Horn clauses of a ground model, built once (one Transition) and loaded into a fresh
    Fixedpoint per query."""

    def __init__(self, m: GroundModel, split: bool = False, transition: Transition | None = None,
                 inline_post: bool = True, pick: str = "bool"):
        t0 = time.perf_counter()
        self.m = m
        self.split = split
        self.inline_post = inline_post
        self.pick = pick
        self.act = None
        self.tr = tr = transition or Transition(m)
        self.sorts = [x.sort() for x in tr.pre]
        self.inv = z3.Function("Inv", *self.sorts, z3.BoolSort())
        self.dom_pre = z3.And(*tr.state_constraints(tr.pre)) if tr.pre else z3.BoolVal(True)
        self.init = [z3.BoolVal(bool(v)) if z3.is_bool(x) else z3.IntVal(v) for x, v in zip(tr.pre, m.init)]
        # (head arguments, body formula over pre[/post][/pick], name)
        self.rules: list[tuple[list, object, str]] = []
        # the relation's conjuncts: `post[c] == value(pre, pick)` for every cell, and the rest
        post_pos = {x.get_id(): i for i, x in enumerate(tr.post)}
        conj = tr.relation.children() if z3.is_and(tr.relation) else [tr.relation]
        values: list = [None] * len(tr.post)
        rest = []
        for c in conj:
            if inline_post and z3.is_eq(c) and c.arg(0).get_id() in post_pos and values[post_pos[c.arg(0).get_id()]] is None:
                values[post_pos[c.arg(0).get_id()]] = c.arg(1)
            else:
                rest.append(c)
        self.inlined = inline_post and all(v is not None for v in values)
        if not self.inlined:
            values, rest = list(tr.post), conj
        n = len(m.actions)
        if split:
            for a in range(n):
                sub = [(tr.pick[b], z3.BoolVal(b == a)) for b in range(n)]
                head = [z3.simplify(z3.substitute(v, *sub)) for v in values]
                post_sub = list(zip(tr.post, head)) if self.inlined else []
                body = z3.simplify(z3.substitute(z3.And(*rest), *sub, *post_sub))
                if z3.is_false(body):
                    continue
                self.rules.append((head, body, f"a{a}"))
        elif pick == "int":
            # the action as one Int body variable: pick_a is act == a (no pseudo-Boolean constraint)
            self.act = z3.Int("act")
            sub = [(tr.pick[a], self.act == a) for a in range(n)]
            rest = [c for c in rest if not z3.is_app_of(c, z3.Z3_OP_PB_EQ)]
            head = [z3.substitute(v, *sub) for v in values]
            post_sub = list(zip(tr.post, head)) if self.inlined else []
            body = z3.And(self.act >= 0, self.act < n, z3.substitute(z3.And(*rest), *sub, *post_sub))
            self.rules.append((head, body, "T"))
        else:
            post_sub = list(zip(tr.post, values)) if self.inlined else []
            body = z3.substitute(z3.And(*rest), *post_sub) if post_sub else z3.And(*rest)
            self.rules.append((values, body, "T"))
        self.encode_s = time.perf_counter() - t0

    def fixedpoint(self, timeout_s: float | None, params: dict | None = None) -> z3.Fixedpoint:
        tr = self.tr
        fp = z3.Fixedpoint()
        fp.set(engine="spacer")
        # keep the rules as written: no slicing or inlining that would rename our action rules
        fp.set("xform.slice", False)
        fp.set("xform.inline_linear", False)
        fp.set("xform.inline_eager", False)
        fp.set("spacer.ground_pobs", False)
        if timeout_s is not None:
            fp.set(timeout=int(timeout_s * 1000))
        for k, v in (params or {}).items():
            fp.set(k, v)
        fp.register_relation(self.inv)
        fp.declare_var(*tr.pre)
        if not self.inlined:
            fp.declare_var(*tr.post)
        if self.act is not None:
            fp.declare_var(self.act)
        elif not self.split:
            fp.declare_var(*tr.pick)
        fp.rule(self.inv(*self.init), name="init")
        pre_inv = self.inv(*tr.pre)
        for head, body, name in self.rules:
            fp.rule(self.inv(*head), [pre_inv, self.dom_pre, body], name=name)
        return fp

    # -- the invariant ---------------------------------------------------------------------
    def invariant_over_pre(self, fp) -> object:
        """Spacer's answer for Inv as a formula over `tr.pre`. The answer interprets every
        relation, e.g. And(Err == False, ForAll(args, Inv(args) == body)); a relation with no
        constraint may be left out (then Inv is true)."""
        found = []

        def walk(e):
            if z3.is_quantifier(e):
                body = e.body()
                if (z3.is_eq(body) or z3.is_app_of(body, z3.Z3_OP_IFF)) and z3.is_app(body.arg(0)) \
                        and body.arg(0).decl().eq(self.inv):
                    n = e.num_vars()
                    # Var(i) counts from the innermost binder: argument j of Inv is Var(n-1-j)
                    found.append(z3.substitute_vars(body.arg(1), *reversed(self.tr.pre[:n])))
                return
            if z3.is_app(e) and e.decl().eq(self.inv):
                found.append(z3.BoolVal(True))
                return
            if z3.is_eq(e) and z3.is_app(e.arg(0)) and e.arg(0).decl().eq(self.inv):
                found.append(e.arg(1))  # Inv of no argument
                return
            for c in e.children():
                walk(c)
        walk(fp.get_answer())
        if not found:
            return z3.BoolVal(True)
        return found[0]

    def check_invariant(self, inv, holds, timeout_s: float = 60.0) -> tuple[str, float]:
        """Initiation, consecution and safety of `inv` (over `tr.pre`), each by a plain solver."""
        tr = self.tr
        t0 = time.perf_counter()
        inv_post = z3.substitute(inv, *zip(tr.pre, tr.post))
        checks = [
            ("initiation", z3.And(*[x == v for x, v in zip(tr.pre, self.init)], z3.Not(inv))),
            ("consecution", z3.And(inv, self.dom_pre, tr.relation, z3.Not(inv_post))),
            ("safety", z3.And(inv, self.dom_pre, z3.Not(holds))),
        ]
        for name, f in checks:
            # the finite-domain solver first (every cell is bounded: Dom(pre), and the relation
            # bounds post), the general one if it gives up
            # (a level-0 answer can hold quantifiers and Spacer's internal bit-vector terms, which
            # QF_FD rejects with an exception)
            for kind in ("QF_FD", None):
                s = z3.SolverFor(kind) if kind else z3.Solver()
                s.set(timeout=int(timeout_s * 1000))
                s.add(f)
                try:
                    r = s.check()
                except z3.Z3Exception:
                    r = z3.unknown
                if r != z3.unknown:
                    break
            if r != z3.unsat:
                return f"not inductive: {name} {r}", time.perf_counter() - t0
        return "inductive", time.perf_counter() - t0

    # -- a counterexample ------------------------------------------------------------------
    def trace_actions(self, fp) -> list[int]:
        if self.split:
            names = fp.get_rule_names_along_trace()
            seq = [str(n) for n in (names.split(";") if isinstance(names, str) else names)]
            seq = [s for s in (x.strip() for x in seq) if s]
            # listed from the query back to the fact: keep the action rules, in forward order
            acts = [int(s[1:]) for s in seq if s.startswith("a") and s[1:].isdigit()]
            return acts[::-1]
        return self._actions_from_states(fp)

    def ground_states(self, fp) -> list[tuple[int, ...]]:
        """The states of Spacer's refutation (`get_answer()` after sat: a hyper-resolution proof
        whose conclusions are ground Inv facts), from the initial state on."""
        states: list = []
        seen = set()

        def walk(e):
            if not z3.is_app(e) or e.get_id() in seen:
                return
            seen.add(e.get_id())
            if z3.is_app(e) and e.decl().eq(self.inv):
                if all(z3.is_int_value(a) or z3.is_true(a) or z3.is_false(a) for a in e.children()):
                    states.append(tuple(int(z3.is_true(a)) if z3.is_bool(a) else a.as_long() for a in e.children()))
                return
            name = e.decl().name()
            if name in ("hyper-res", "mp"):
                kids = e.children()
                walk(kids[-1])             # the conclusion first: the proof runs from the query back
                for c in kids[:-1]:
                    walk(c)
        walk(fp.get_answer())
        states.reverse()
        return states

    def _actions_from_states(self, fp) -> list[int]:
        """Action ids between Spacer's ground states (monolithic encoding): the first action whose
        successor under the reference interpreter is the next state."""
        from txncheck.spec.evaluate import evaluate, successor
        states = self.ground_states(fp)
        m = self.m
        if not states or states[0] != tuple(m.init):
            raise AssertionError("pdr: Spacer's refutation does not start in the initial state")
        ids = []
        for s, t in zip(states, states[1:]):
            for a in m.actions:
                if evaluate(a.guard, s, a.row_id) and successor(m, a, s) == t:
                    ids.append(a.id)
                    break
            else:
                raise AssertionError("pdr: no action leads between two consecutive ground states")
        return ids


def pdr(m: GroundModel, properties=None, timeout_s: float | None = 300.0, split: bool = False,
        conjunction: bool = False, traces: bool = True, check_invariant: bool = True,
        params: dict | None = None, encoding: HornEncoding | None = None):
    """Spacer on each selected `always` property in turn (or on their conjunction). Returns
    (SymbolicResult with engine "pdr", list of PdrOutcome)."""
    require_one_initial_state(m, "txncheck bmc --pdr")
    start = time.perf_counter()
    props = always_properties(m, properties)
    enc = encoding or HornEncoding(m, split=split)
    res = SymbolicResult("pdr", m.spec.name, m.spec.variant, m.config.to_json(), 0, solver="spacer")
    outcomes: list[PdrOutcome] = []
    groups = [props] if conjunction and props else [[p] for p in props]
    tr = enc.tr
    for group in groups:
        label = group[0].name if len(group) == 1 else " & ".join(p.name for p in group)
        holds = z3.And(*[tr.holds(p) for p in group])
        fp = enc.fixedpoint(timeout_s, params)
        err = z3.Function(f"Err_{len(outcomes)}", z3.BoolSort())
        fp.register_relation(err)
        fp.rule(err(), [enc.inv(*tr.pre), enc.dom_pre, z3.Not(holds)], name="bad")
        t0 = time.perf_counter()
        try:
            r = fp.query(err())
        except z3.Z3Exception as ex:  # a timeout cancels the query with an exception
            r, cancel = z3.unknown, str(ex)
        else:
            cancel = ""
        dt = time.perf_counter() - t0
        res.queries.append((label, dt, str(r)))
        try:
            levels = fp.get_num_levels(enc.inv)
        except z3.Z3Exception:
            levels = None
        stats = {}
        try:
            st = fp.statistics()
            stats = {k: st.get_key_value(k) for k in st.keys()}
        except z3.Z3Exception:
            pass
        if r == z3.unsat:
            inv = enc.invariant_over_pre(fp)
            conj = len(inv.children()) if z3.is_and(inv) else 1
            checked, cs = ("unchecked", 0.0)
            if check_invariant:
                checked, cs = enc.check_invariant(inv, holds)
            invariant = Invariant(inv, conj, _ast_size(inv), checked, cs)
            for p in group:
                o = ProofOutcome(p.name, "proved", levels,
                                    note=f"PDR invariant: {conj} conjuncts, {invariant.ast_nodes} AST nodes, {checked}")
                res.properties.append(o)
                outcomes.append(PdrOutcome(o, "unsat", dt, levels, invariant, stats))
        elif r == z3.sat:
            ids = enc.trace_actions(fp)
            states = replay_actions(m, ids)  # raises if an action is not enabled
            failing = [p for p in group if violated(m, p, states[-1])]
            if not failing:
                raise AssertionError(f"pdr: Spacer's path for {label} does not violate it when replayed")
            for p in group:
                if p in failing:
                    o = ProofOutcome(p.name, "violated", len(ids), ids, [m.actions[i].label for i in ids],
                                        make_trace(m, ids, p.name, "pdr") if traces else None,
                                        note="Spacer's counterexample; not necessarily the shortest")
                else:
                    o = ProofOutcome(p.name, "unknown", None, note="another conjunct failed first")
                res.properties.append(o)
                outcomes.append(PdrOutcome(o, "sat", dt, levels, None, stats))
        else:
            reason = cancel or fp.reason_unknown()
            for p in group:
                o = ProofOutcome(p.name, "unknown", levels, note=f"spacer: {reason}")
                res.properties.append(o)
                outcomes.append(PdrOutcome(o, "unknown", dt, levels, None, stats))
    res.encode_s = enc.encode_s
    res.wall_s = time.perf_counter() - start
    return res, outcomes
