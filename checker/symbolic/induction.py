"""k-induction of `always` properties within the type bounds.

What is proved is the conjunction J of the selected `always` properties and the spec's
strengthening invariants (`Spec.invariants_for_induction`): a strengthening invariant is never
merely assumed, it is proved with the rest, so a wrong one cannot make a proof unsound.

For k = 1, 2, ..., K:

- base: no state reachable in fewer than k steps violates a conjunct of J (incremental BMC, the
  same encoding as `bmc`); a model is a real counterexample and becomes a trace;
- step: k consecutive states within the type bounds, each satisfying J, linked by transitions
  and pairwise distinct (the simple-path condition, which makes the method complete for finite
  systems), followed by one more transition to a state violating J. UNSAT proves J (hence every
  selected property) by k-induction.

If the step is still satisfiable at K, the result is the counterexample to induction: the k+1
states (by named var, not necessarily reachable), the action labels between them and the conjunct
that fails at the end; that is where a strengthening invariant is missing.
"""
from __future__ import annotations

import time

import z3

from txncheck.spec.errors import ConfigError
from txncheck.spec.ground import GroundModel
from .bmc import PropertyOutcome, SymbolicResult, always_properties, make_trace
from .encode import Timer, make_solver
from .unroll import Unroller, replay_actions, violated


def k_induction(m: GroundModel, max_k: int, properties=None, simple_path: bool = True,
                traces: bool = True, solver: str = "fd", lemmas=None, on_query=None) -> SymbolicResult:
    """`lemmas`: a `lemmas.LemmaSet` of proved inductive lemmas, assumed on every state of the
    step case (and of the base path): they hold on every reachable state, so this is sound.
    `on_query(label, seconds, result)`: called as each solver query finishes."""
    if max_k < 1:
        raise ConfigError(f"--induction needs k >= 1; got {max_k}")
    start = time.perf_counter()
    props = always_properties(m, properties)
    conj = props + list(m.strengthening)
    timer = Timer(on_query)
    res = SymbolicResult("k-induction", m.spec.name, m.spec.variant, m.config.to_json(), max_k, solver=solver,
                         lemmas=lemmas)
    if not props:
        res.wall_s = time.perf_counter() - start
        return res

    base = make_solver(solver)
    ub = Unroller(m, base, "b", transition=lemmas.transition if lemmas is not None else None)
    ub.add_state()
    ub.constrain_init()
    step = make_solver(solver)
    us = Unroller(m, step, "i", transition=ub.tr)  # one template for both paths
    us.add_state()
    lemma_tmpl = lemmas.template(ub.tr) if lemmas is not None and lemmas.lemmas else None
    if lemma_tmpl is not None:
        us.assume(0, lemma_tmpl)

    def conj_holds(u, i):
        return z3.And(*[u.holds(i, p) for p in conj])

    outcome: PropertyOutcome | None = None
    proved_k = None
    for k in range(1, max_k + 1):
        # base: depth k-1 of the initial path
        d = k - 1
        if d > 0:
            ub.add_transition()
            if lemma_tmpl is not None:
                ub.assume(d, lemma_tmpl)
        # each query under an assumption literal (not push/pop), so the solver keeps what it learnt
        ask = z3.Bool(f"base{d}")
        base.add(z3.Implies(ask, z3.Not(conj_holds(ub, d))))
        r = timer.check(base, f"base depth {d}", ask)
        if r == z3.unknown:
            outcome = PropertyOutcome(", ".join(p.name for p in props), "unknown", d,
                                      note=f"z3 answered unknown ({base.reason_unknown()}); try --solver smt")
            break
        if r == z3.sat:
            ids = ub.action_ids(base.model(), d)
            states = replay_actions(m, ids)
            bad = [p for p in conj if violated(m, p, states[-1])]
            name = bad[0].name if bad else conj[0].name
            is_main = any(p.name == name for p in props)
            outcome = PropertyOutcome(
                name, "violated", d, ids, [m.actions[i].label for i in ids],
                make_trace(m, ids, name, "k-induction") if traces and is_main else None,
                note="" if is_main else f"strengthening invariant {name} is not an invariant of the spec")
            break
        base.add(z3.Not(ask))
        # step: states 0..k-1 satisfy J; state k does not
        step.add(conj_holds(us, k - 1))
        us.add_transition()
        if lemma_tmpl is not None:
            us.assume(k, lemma_tmpl)
        if simple_path:
            us.distinct_from_all(k)
        ask = z3.Bool(f"step{k}")
        step.add(z3.Implies(ask, z3.Not(conj_holds(us, k))))
        r = timer.check(step, f"step k={k}", ask)
        if r == z3.unknown:
            outcome = PropertyOutcome(", ".join(p.name for p in props), "unknown", k,
                                      note=f"z3 answered unknown ({step.reason_unknown()}); try --solver smt")
            break
        if r == z3.unsat:
            proved_k = k
            break
        if k == max_k:
            mdl = step.model()
            ids = us.action_ids(mdl, k)
            states = [us.state_values(mdl, i) for i in range(k + 1)]
            last = states[-1]
            bad = [p.name for p in conj if violated(m, p, last)]
            # the z3 path must agree with the reference semantics
            replay_actions(m, ids, start=states[0])
            outcome = PropertyOutcome(
                ", ".join(p.name for p in props), "cti", k, ids, [m.actions[i].label for i in ids],
                witness={"states": [m.render_state(s) for s in states],
                         "actions": [m.actions[i].label for i in ids], "violates": bad},
                note=f"the last state violates {', '.join(bad)}; add a strengthening invariant that "
                     "excludes the first state")
        step.add(z3.Not(ask))
    if proved_k is not None:
        for p in props:
            res.properties.append(PropertyOutcome(p.name, "proved", proved_k,
                                                  note=f"with {len(m.strengthening)} strengthening invariant(s)"
                                                  + (f" and {len(lemmas.lemmas)} proved lemma(s)" if lemmas else "")))
    elif outcome is not None:
        res.properties.append(outcome)
    res.queries = timer.queries
    res.encode_s = ub.encode_s + us.encode_s
    res.wall_s = time.perf_counter() - start
    return res
