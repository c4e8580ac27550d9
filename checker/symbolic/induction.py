"""k-induction of `always` properties within the type bounds, with Houdini over the candidates.

The candidates are the selected `always` properties (the goals), the spec's other `always`
properties and its strengthening invariants (`Spec.invariants_for_induction`). Nothing is merely
assumed: a candidate is used only once it is proved with the rest, so a wrong strengthening
invariant cannot make a proof unsound, and one that fails only drops out.

For k = 1, 2, ..., K:

- base: no state reachable in k-1 steps violates a live candidate (incremental BMC, the same
  encoding as `bmc`). A model is a real counterexample: a goal it violates is reported with its
  trace; any other candidate it violates is refuted (a strengthening invariant that is not one is
  listed in the result) and never used again. Repeated until no live candidate fails.
- step (Houdini): J starts as every live candidate not yet proved. Assume J, and everything
  proved at a smaller k, on k consecutive states within the type bounds, linked by transitions and
  pairwise distinct (the simple-path condition, which makes the method complete for finite
  systems); ask for one more transition to a state violating J. UNSAT proves all of J by
  k-induction. SAT drops from J the candidates false in the last state (a goal dropped keeps that
  counterexample to induction) and asks again, until UNSAT or no unproved goal is left in J.

A goal still unproved at K is reported with its counterexample to induction: the k+1 states (by
named var, not necessarily reachable), the action labels between them and the candidates that fail
at the end; that is where a strengthening invariant is missing.
"""
from __future__ import annotations

import time

import z3

from txncheck.spec.errors import ConfigError
from txncheck.spec.ground_ir import GroundModel
from txncheck.traces.build import build_cti_trace
from .bmc import ProofOutcome, SymbolicResult, always_properties, make_trace
from .encode import Timer, make_solver
from .unroll import Unroller, replay_actions, violated


def k_induction(m: GroundModel, max_k: int, properties=None, simple_path: bool = True,
                traces: bool = True, solver: str = "smt", lemmas=None, on_query=None) -> SymbolicResult:
    """`solver`: z3's general solver by default: on Kafka ci the final (unsatisfiable) step query took
    66 s with it and 267 s with `fd` (2026-11-22).
    `lemmas`: a `lemmas.LemmaSet` of proved inductive lemmas, assumed on every state of the
    step case (and of the base path): they hold on every reachable state, so this is sound.
    `on_query(label, seconds, result)`: called as each solver query finishes."""
    if max_k < 1:
        raise ConfigError(f"--induction needs k >= 1; got {max_k}")
    start = time.perf_counter()
    goals = always_properties(m, properties)
    goal_names = {p.name for p in goals}
    candidates = goals + [p for p in always_properties(m) if p.name not in goal_names] + list(m.strengthening)
    strengthening = {p.name for p in m.strengthening}
    timer = Timer(on_query)
    res = SymbolicResult("k-induction", m.spec.name, m.spec.variant, m.config.to_json(), max_k, solver=solver,
                         lemmas=lemmas)
    if not goals:
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
    # hypothesis literal per candidate: assumed true, the candidate holds on the step's states 0..k-1
    hyp = {c.name: z3.Bool(f"hyp.{c.name}") for c in candidates}
    found: dict[str, ProofOutcome] = {}
    ctis: dict[str, ProofOutcome] = {}
    refuted: set[str] = set()
    proved: set[str] = set()

    def undecided(names) -> list[str]:
        return [n for n in names if n in goal_names and n not in found]

    def give_up(k: int, s) -> None:
        for n in undecided(goal_names):
            found[n] = ProofOutcome(n, "unknown", k, note=f"z3 answered unknown ({s.reason_unknown()}); "
                                       "try the other --solver")

    for k in range(1, max_k + 1):
        # base: depth k-1 of the initial path; queries under assumption literals, not push/pop, so
        # the solver keeps what it learnt
        d = k - 1
        if d > 0:
            ub.add_transition()
            if lemma_tmpl is not None:
                ub.assume(d, lemma_tmpl)
        live = [c for c in candidates if c.name not in refuted and c.name not in proved]
        while undecided(c.name for c in live):
            ask = z3.Bool(f"base{d}.{len(live)}")
            base.add(z3.Implies(ask, z3.Not(z3.And(*[ub.holds(d, c) for c in live]))))
            r = timer.check(base, f"base depth {d}", ask)
            mdl = base.model() if r == z3.sat else None
            base.add(z3.Not(ask))  # after reading the model: adding a constraint discards it
            if r == z3.unknown:
                give_up(d, base)
                break
            if r == z3.unsat:
                break
            ids = ub.action_ids(mdl, d)
            first = ub.state_values(mdl, 0)  # the initial state the solver chose
            states = replay_actions(m, ids, first)
            bad = [c for c in live if violated(m, c, states[-1])]
            if not bad:
                raise AssertionError(f"k-induction: z3's path of depth {d} violates no candidate when replayed")
            for c in bad:
                refuted.add(c.name)
                if c.name in goal_names:
                    found[c.name] = ProofOutcome(c.name, "violated", d, ids, [m.actions[i].label for i in ids],
                                                    make_trace(m, ids, c.name, "k-induction", first) if traces else None)
                elif c.name in strengthening:
                    res.refuted_invariants.append((c.name, d))
            live = [c for c in live if c.name not in refuted]
        if not undecided(goal_names) or any(p.status == "unknown" for p in found.values()):
            break
        # step: states 0..k-1 satisfy the assumed candidates; state k violates one of J
        for c in candidates:
            step.add(z3.Implies(hyp[c.name], us.holds(k - 1, c)))
        us.add_transition()
        if lemma_tmpl is not None:
            us.assume(k, lemma_tmpl)
        if simple_path:
            us.distinct_from_all(k)
        J = [c for c in candidates if c.name not in refuted and c.name not in proved]
        while undecided(c.name for c in J):
            ask = z3.Bool(f"step{k}.{len(J)}")
            step.add(z3.Implies(ask, z3.Not(z3.And(*[us.holds(k, c) for c in J]))))
            assumed = {c.name for c in J} | proved
            r = timer.check(step, f"step k={k} ({len(J)} candidates)", ask,
                            *[hyp[c.name] if c.name in assumed else z3.Not(hyp[c.name]) for c in candidates])
            mdl = step.model() if r == z3.sat else None
            step.add(z3.Not(ask))
            if r == z3.unknown:
                give_up(k, step)
                break
            if r == z3.unsat:
                proved |= {c.name for c in J}
                for n in undecided(c.name for c in J):
                    found[n] = ProofOutcome(n, "proved", k, note=_proved_note(k, len(J), lemmas))
                break
            ids = us.action_ids(mdl, k)
            states = [us.state_values(mdl, i) for i in range(k + 1)]
            bad = [c.name for c in J if violated(m, c, states[-1])]
            if not bad:
                raise AssertionError(f"k-induction: z3's step model at k={k} violates no candidate")
            replay_actions(m, ids, start=states[0])  # the z3 path must agree with the reference semantics
            witness = {"states": [m.render_state(s) for s in states],
                       "actions": [m.actions[i].label for i in ids], "violates": bad}
            for n in undecided(bad):
                ctis[n] = ProofOutcome(
                    n, "cti", k, ids, [m.actions[i].label for i in ids], witness=witness,
                    trace=build_cti_trace(m, states, ids, n, bad, "k-induction") if traces else None,
                    note=f"the last state violates {', '.join(bad)}; add a strengthening invariant that "
                         "excludes the first state")
            J = [c for c in J if c.name not in bad]
        if not undecided(goal_names) or any(p.status == "unknown" for p in found.values()):
            break
    for p in goals:
        res.properties.append(found.get(p.name) or ctis[p.name])
    res.queries = timer.queries
    res.encode_s = ub.encode_s + us.encode_s
    res.wall_s = time.perf_counter() - start
    return res


def _proved_note(k: int, together: int, lemmas) -> str:
    return (f"{k}-inductive together with {together - 1} other properties and strengthening invariants"
            + (f" and {len(lemmas.lemmas)} proved lemma(s)" if lemmas else ""))
