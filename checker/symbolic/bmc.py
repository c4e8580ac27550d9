"""Bounded model checking: the initial state and K steps of the transition relation, asked for a
violation of each `always` property at depth 0, 1, ..., K in turn.

Depths are tried in increasing order on one incremental solver (the unrolled path stays
asserted; each depth asks "does some pending property fail here?" under an assumption literal),
so the first depth with a model is the length of a shortest counterexample, the same number the
breadth-first engines report. Every pending property false in the model is violated at that
depth; the query is repeated for the rest. The model's action picks give the action ids; the
path is re-run with the reference interpreter (`ground.successor`), which re-verifies the
violation, and becomes a standard trace. The path is unrolled with partial-order reduction
(`unroll.Unroller`, `por`), which keeps every state at its exact depth.

`from_depth` K0 > 0 asks only at depths K0..K (nuXmv's single-bound problems): a deep counterexample
without first refuting every shallower depth, whose cost grows about 1.5x per step on Kafka. The
path found is cut at its first violating state, but a shorter counterexample may exist elsewhere,
so the result says it is not known to be the shortest; "none" covers depths K0..K only.
With `refute_below`, one query first decides whether any property fails below K0 (`refute_below_query`:
paths padded with idle steps in front, so every shorter first violation ends at depth K0-1; solved
by CaDiCaL, `cadical.py`). If none does, the depths below K0 are refuted and what the search finds
from K0 on is a shortest counterexample (depth K0 itself is asked of CaDiCaL too, the path read back
from its model); if one does, the search starts from depth 0. On Kafka one
such query costs about what the incremental run pays for its last depth alone.

Before unrolling, an induction pass (`prove`) keeps the largest set of always properties and
strengthening invariants that is 1-inductive together (`lemmas.houdini`). Those properties are
proved for every depth and leave the queries; everything kept is asserted on each unrolled state.
Measured on Kafka B4 (depth 23): the properties that hold but are not proved cost most of the
solver time, not the ones that fail (RESULTS.md "Kafka BMC").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from txncheck.spec.errors import ConfigError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import ALWAYS
from .encode import Timer, make_solver
from .status import HOLDS_TO_DEPTH, outcome_of, verdict_of
from .unroll import Unroller, replay_actions, violated, require_one_initial_state


# the JSON of `txncheck bmc` (bmc, k-induction, pdr); `verdict` and each property's `outcome` are
# additive fields in check's words (status.py), so a /1 reader loses nothing (docs/symbolic.md)
SYMBOLIC_SCHEMA = "txncheck.symbolic/1"


@dataclass
class ProofOutcome:
    """What the solver showed of one always property (bmc, k-induction, PDR): `status` is the detail,
    `outcome` the same in the words of `check`'s `checker.result.PropertyOutcome` (status.py)."""
    name: str
    status: str                       # one of status.STATUSES
    depth: int | None = None          # counterexample length, proof k, or depth explored
    actions: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    trace: object = None              # a traces.Trace when available, else None
    witness: dict | None = None       # counterexample to induction (states by named var)
    note: str = ""

    @property
    def outcome(self) -> str:
        return outcome_of(self.status)

    def to_json(self) -> dict:
        out = {"name": self.name, "outcome": self.outcome, "status": self.status, "depth": self.depth,
               "actions": self.actions, "labels": self.labels}
        if self.note:
            out["note"] = self.note
        if self.witness is not None:
            out["witness"] = self.witness
        return out


@dataclass
class SymbolicResult:
    engine: str                        # "bmc" | "k-induction" | "pdr"
    spec: str
    variant: str | None
    config: dict
    bound: int
    properties: list[ProofOutcome] = field(default_factory=list)
    queries: list[tuple[str, float, str]] = field(default_factory=list)
    encode_s: float = 0.0
    wall_s: float = 0.0
    solver: str = "fd"
    lemmas: object = None              # a lemmas.LemmaSet when proved lemmas were used
    kept_invariants: list | None = None  # strengthening invariants the induction pass kept (bmc)
    from_depth: int = 0                # bmc: depths below it were not searched
    refuted_below: int = 0             # bmc: depths below it were refuted in one query (--refute-below)
    refuted_invariants: list = field(default_factory=list)  # k-induction: (name, depth) violated on a real path

    @property
    def solver_s(self) -> float:
        return sum(q[1] for q in self.queries)

    @property
    def verdict(self) -> str:
        """`check`'s verdict words, decided by `status.verdict_of`; `txncheck bmc` exits with it."""
        return verdict_of(p.status for p in self.properties)

    def to_json(self) -> dict:
        out = {"schema": SYMBOLIC_SCHEMA, "engine": self.engine, "spec": self.spec, "variant": self.variant,
               "config": self.config, "bound": self.bound, "solver": self.solver, "verdict": self.verdict,
               "properties": [p.to_json() for p in self.properties],
               "encode_s": round(self.encode_s, 4), "solver_s": round(self.solver_s, 4), "wall_s": round(self.wall_s, 4),
               "queries": [{"query": q, "seconds": round(t, 5), "result": r} for q, t, r in self.queries]}
        if self.kept_invariants is not None:
            out["strengthening_kept"] = self.kept_invariants
        if self.from_depth:
            out["from_depth"] = self.from_depth
        if self.refuted_below:
            out["refuted_below"] = self.refuted_below
        if self.refuted_invariants:
            out["strengthening_refuted"] = [{"name": n, "depth": d} for n, d in self.refuted_invariants]
        if self.lemmas is not None:
            out["lemmas"] = self.lemmas.to_json()
            out["wall_with_lemmas_s"] = round(self.wall_s + self.lemmas.total_s, 4)
        return out


def always_properties(m: GroundModel, names=None):
    props = [p for p in m.properties if p.kind == ALWAYS]
    if names:
        known = {p.name for p in props}
        bad = [n for n in names if n not in known]
        if bad:
            raise ConfigError(f"{', '.join(bad)}: not an always property of {m.spec.name}; its always "
                              f"properties are {', '.join(sorted(known)) or 'none'}")
        props = [p for p in props if p.name in names]
    return props


def proved_for_every_depth(m: GroundModel, props, tr, solver: str = "smt", lemmas=None):
    """(the properties among `props` that are 1-inductive together with the spec's strengthening
    invariants that survive and the proved lemmas if given; everything kept, strengthening
    invariants included; Houdini rounds). Houdini keeps the
    largest such set, so a strengthening invariant that does not hold (a variant may break one)
    only drops out; what is kept holds on every reachable state. The general SMT solver, not `fd`:
    on Kafka's 94 strengthening invariants its last (unsatisfiable) round is 4-14x faster."""
    from .lemmas import houdini
    keep_l, keep_p, rounds, _ = houdini(m, list(lemmas.lemmas) if lemmas is not None else [], tr, solver,
                                        properties=list(props) + list(m.strengthening), explore_cti=0)
    kept = {id(p) for p in keep_p}
    return [p for p in props if id(p) in kept], keep_p, rounds


def _proved_note(m: GroundModel, lemmas) -> str:
    n = len(m.strengthening)
    return (f"1-inductive with the other proved properties, {n} strengthening invariant(s)"
            + (f" and {len(lemmas.lemmas)} proved lemma(s)" if lemmas is not None else "")
            + "; no counterexample at any depth")


def make_trace(m: GroundModel, action_ids, prop_name: str, engine: str = "bmc", start=None):
    """The standard trace (traces/ schema) for a path found by the solver, from its initial state `start`."""
    from txncheck.traces.build import build_trace
    return build_trace(m, list(action_ids), prop_name, "violation", engine, initial=start)


def refute_below_query(m: GroundModel, tr, d: int, props, invariants, por: bool = True):
    """(a z3 `fd` solver holding "some property of `props` fails first at a depth <= d", its
    Unroller): d steps of which the first ones may be idle (`Unroller.add_transition(idle_prefix=
    True)`), every property holding before the last state and one failing in it. A first violation
    at depth j <= d is such a path with d - j idle steps in front; conversely the actions of such a
    path are a path to a first violation. `invariants` (or None) is asserted on every state after
    the first."""
    fd = make_solver("fd")
    u = Unroller(m, fd, tag="r", transition=tr, por=por)
    u.add_state()
    u.constrain_init()
    for k in range(1, d + 1):
        u.add_transition(idle_prefix=True)
        if invariants is not None:
            u.assume(k, invariants)
    for k in range(d):
        fd.add(*[u.holds(k, p) for p in props])
    fd.add(z3.Or(*[z3.Not(u.holds(d, p)) for p in props]))
    return fd, u


def _cadical_query(m: GroundModel, tr, d: int, props, invariants, por: bool, timer, label: str):
    """("sat" | "unsat", the path's action ids or None): `refute_below_query` decided by CaDiCaL.
    The ids are None when unsat or when a step's pick cannot be read back (z3 simplified it away)."""
    from . import cadical
    fd, u = refute_below_query(m, tr, d, props, invariants, por)
    names = [[str(b) for b in step] for step in u.acts]
    t0 = time.perf_counter()
    r, values = cadical.check(fd, [n for step in names for n in step] + [str(i) for i in u.idles])
    what = props[0].name if len(props) == 1 else f"any of {len(props)} properties"
    timer.record(f"{what} {label} (one query, CaDiCaL)", time.perf_counter() - t0, r)
    if values is None:
        return r, None
    ids = []
    for step, idle in zip(names, u.idles):
        if values.get(str(idle)):
            continue
        picked = [aid for aid, n in enumerate(step) if values.get(n)]
        if len(picked) != 1 or any(n not in values for n in step):
            return r, None
        ids.append(picked[0])
    return r, ids


def bmc(m: GroundModel, depth: int, properties=None, traces: bool = True, solver: str = "fd",
        por: bool = True, lemmas=None, prove: bool = True, on_query=None, from_depth: int = 0,
        refute_below: bool = False) -> SymbolicResult:
    """`por`: unroll with partial-order reduction (same depths, fewer paths; off only to compare).
    `lemmas`: a `lemmas.LemmaSet` of proved inductive lemmas, asserted on every unrolled state
    (they hold on every reachable state, so no path is lost). `wall_s` excludes proving them; the
    JSON's `lemmas` and `wall_with_lemmas_s` report that time.
    `prove`: first keep the largest set of the properties and the spec's strengthening invariants
    that is 1-inductive together (Houdini, `proved_for_every_depth`); those are proved for every
    depth and left out of the unrolled queries, which are then about the rest only.
    `on_query(label, seconds, result)`: called as each solver query finishes (`Timer`).
    `from_depth`: ask only at depths from_depth..depth (module docstring).
    `refute_below`: with `from_depth`, first show in one query (CaDiCaL) that no property fails
    below it, so what is found from there on is a shortest counterexample; if one does fail, search
    shortest-first from depth 0 instead."""
    if refute_below:
        require_one_initial_state(m, "txncheck bmc --refute-below")
    if depth < 0:
        raise ConfigError(f"--depth must be 0 or more; got {depth}")
    if not 0 <= from_depth <= depth:
        raise ConfigError(f"--from-depth must be between 0 and --depth ({depth}); got {from_depth}")
    start = time.perf_counter()
    props = always_properties(m, properties)
    solver_kind = solver
    solver = make_solver(solver_kind)
    timer = Timer(on_query)
    u = Unroller(m, solver, por=por, transition=lemmas.transition if lemmas is not None else None)
    lemma_tmpl = lemmas.template(u.tr) if lemmas is not None and lemmas.lemmas else None
    found: dict = {}
    kept_names = None
    if prove and props:
        t0 = time.perf_counter()
        # every always property is a candidate, selected or not: each one kept is one more invariant
        proved, invariants, rounds = proved_for_every_depth(m, always_properties(m), u.tr, "smt", lemmas)
        proved = {p.name for p in proved}
        strengthening = {p.name for p in m.strengthening}
        kept_names = [p.name for p in invariants if p.name in strengthening]
        timer.record(f"1-induction pass ({rounds} Houdini rounds)", time.perf_counter() - t0,
                     f"{len(proved)} proved")
        for p in props:
            if p.name in proved:
                found[p.name] = ProofOutcome(p.name, "proved", 1, note=_proved_note(m, lemmas))
        if invariants:
            # they hold on every reachable state: asserted on each unrolled one, they prune like lemmas
            inv = z3.And(*[u.tr.holds(p) for p in invariants])
            lemma_tmpl = inv if lemma_tmpl is None else z3.And(lemma_tmpl, inv)
    u.add_state()
    u.constrain_init()
    pending = [p for p in props if p.name not in found]
    refuted_below = False
    if refute_below and from_depth and pending:
        r, _ = _cadical_query(m, u.tr, from_depth - 1, pending, lemma_tmpl, por, timer, f"depths 0..{from_depth - 1}")
        refuted_below = r == "unsat"
        if not refuted_below:
            from_depth = 0   # a shorter counterexample exists: search shortest-first from depth 0
    for k in range(depth + 1):
        if not pending:
            break
        if k > 0:
            u.add_transition()
            if lemma_tmpl is not None:
                u.assume(k, lemma_tmpl)
        if k < from_depth:
            if refuted_below:   # proved by the one query: saying so helps the deeper queries
                solver.add(*[u.holds(k, p) for p in pending])
            continue
        holds = {p.name: u.holds(k, p) for p in pending}
        while pending:
            ask = failing = None
            if refuted_below and k == from_depth:
                # nothing fails below k: the first depth's question is as large as the one query
                # and z3 has learnt nothing yet, so it goes to CaDiCaL too, its path read back
                r, ids = _cadical_query(m, u.tr, k, pending, lemma_tmpl, por, timer, f"depth {k}")
                if r == "unsat":
                    solver.add(*holds.values())
                    break
                if ids is not None:    # else z3 asks the same below
                    first = None  # --refute-below takes one initial state
                    states = replay_actions(m, ids)
                    failing = [p for p in pending if violated(m, p, states[-1])]
                    if len(ids) != k or not failing:
                        raise AssertionError(f"bmc: CaDiCaL's path at depth {k} violates no pending property")
            if failing is None:
                # one query: does some pending property fail in state k? An assumption literal, not
                # push/pop, so the solver keeps what it learnt about the path.
                ask = z3.Bool(f"bad{k}.{len(pending)}")
                solver.add(z3.Implies(ask, z3.Or(*[z3.Not(holds[p.name]) for p in pending])))
                label = f"{pending[0].name} depth {k}" if len(pending) == 1 else f"any of {len(pending)} properties depth {k}"
                r = timer.check(solver, label, ask)
                if r == z3.unsat:
                    # every state reachable in exactly k steps satisfies the pending properties; saying
                    # so helps the deeper queries and excludes no path
                    solver.add(z3.Not(ask), *holds.values())
                    break
                if r == z3.unknown:
                    for p in pending:
                        found[p.name] = ProofOutcome(p.name, "unknown", k, note=solver.reason_unknown())
                    pending = []
                    break
                mdl = solver.model()
                ids = u.action_ids(mdl, k)
                first = u.state_values(mdl, 0)  # the initial state the solver chose
                states = replay_actions(m, ids, first)
                failing = [p for p in pending if z3.is_false(mdl.eval(holds[p.name], model_completion=True))]
                if not failing:
                    raise AssertionError(f"bmc: z3's model at depth {k} violates no pending property")
            for p in failing:
                if not violated(m, p, states[-1]):
                    raise AssertionError(f"bmc: the solver's path for {p.name} does not violate it when replayed")
                # below from_depth the path was not kept clear of p: cut it at its first violation
                skipped = from_depth and not refuted_below
                j = next(j for j in range(k + 1) if violated(m, p, states[j])) if skipped else k
                note = f"depths below {from_depth} not searched: not known to be the shortest" if skipped else ""
                found[p.name] = ProofOutcome(p.name, "violated", j, ids[:j], [m.actions[i].label for i in ids[:j]],
                                                make_trace(m, ids[:j], p.name, start=first) if traces else None,
                                                note=note)
                pending.remove(p)
                del holds[p.name]
            if ask is not None:
                solver.add(z3.Not(ask))
    res = SymbolicResult("bmc", m.spec.name, m.spec.variant, m.config.to_json(), depth, solver=solver_kind,
                         lemmas=lemmas, kept_invariants=kept_names, from_depth=0 if refuted_below else from_depth,
                         refuted_below=from_depth if refuted_below else 0)
    for p in props:
        res.properties.append(found.get(p.name) or ProofOutcome(p.name, HOLDS_TO_DEPTH, depth))
    res.queries = timer.queries
    res.encode_s = u.encode_s
    res.wall_s = time.perf_counter() - start
    return res
