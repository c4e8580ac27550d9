"""Well-formedness of handler tables, for every state within the type bounds (not only the
reachable ones), checked with z3 on the ground rows.

Checks, per table and trigger:

determinism
    Rows answer a trigger in one way. The ground actions of one table and one trigger are
    compared pairwise; two of them *conflict* when they come from different rows, agree on the
    value of every parameter the two rows share by name (the parameters that identify the
    request, e.g. the transactional id), and some state within the type bounds enables both.
    Different triggers are different events: a choice between them (TwoPhase's TMCommit and
    TMAbort, both enabled when every RM has prepared) is the interleaving every model has, not a
    table's nondeterminism, and is not reported. Triggers listed in `Table.nondeterministic` are
    exempt. Two ground actions of one row never conflict (their bindings differ).

completeness
    Every state in which a request is present has a row that answers it (a reply or an explicit
    rejection). The *trigger precondition* is inferred from data: for each trigger, group its
    ground actions by the binding of the parameters common to all of its rows (the request key);
    the precondition of a group is the conjunction of the ground guard conjuncts that every action
    of the group carries (typically the presence of the request in the network, plus any
    protocol-version switch). A state satisfying the precondition and no guard of the group is a
    finding. A trigger whose rows share no conjunct is spontaneous (an internal choice, a timeout)
    and has no completeness obligation; it is listed in the report's notes.

type preservation
    No enabled row assigns a value outside its var's domain, reads or writes through a computed
    index outside its array, divides by zero, or writes one cell twice; evaluation follows the
    reference interpreter's short-circuit order (`ground.evaluate`).

conformance
    For the table's status var: every (from, to) pair a row can take is allowed by the
    `Conformance` entries whose `when` holds under the configuration (e.g. Kafka's
    validPreviousStates for the configured protocol version); every allowed pair is taken by some
    row or listed in `unused`; no pair listed in `unused` is taken. Only rows that assign the
    status var make a transition (an assignment of the current value is the self-transition
    from -> from, as in Kafka's `prepareTransitionTo`).

Each finding names the rows and carries a witness state (as JSON and text).
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import z3

from txncheck.spec.errors import SpecError
from txncheck.spec.evaluate import cells_read
from txncheck.spec.grounder import Grounder
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GOp, GroundAction, GroundModel
from .encode import Encoder, Timer, domain_constraints, make_state, value_of

CHECKS = ("determinism", "completeness", "type", "conformance")


@dataclass(frozen=True)
class TableFinding:
    check: str                 # determinism | completeness | type | conformance
    table: str
    trigger: str | None
    rows: tuple[str, ...]      # the rows involved (row ids)
    message: str
    actions: tuple[str, ...] = ()   # ground action labels
    witness: dict | None = None     # the relevant cells of the witness state, by cell name
    state: dict | None = None       # the whole witness state, by named var

    def to_json(self) -> dict:
        return {"check": self.check, "table": self.table, "trigger": self.trigger,
                "rows": list(self.rows), "actions": list(self.actions), "message": self.message,
                "witness": self.witness, "state": self.state}

    def text(self) -> str:
        head = f"[{self.check}] table {self.table}"
        if self.trigger:
            head += f", trigger {self.trigger}"
        if self.rows:
            head += f", rows {', '.join(self.rows)}"
        out = [head, f"  {self.message}"]
        if self.witness:
            out.append("  witness: " + ", ".join(f"{k}={v}" for k, v in self.witness.items()))
        return "\n".join(out)


@dataclass
class TableReport:
    spec: str
    config: dict
    findings: list[TableFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: dict = field(default_factory=dict)   # check -> number of obligations discharged
    timings: dict = field(default_factory=dict)   # check -> {"queries": n, "solver_s": t, "wall_s": t}

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict:
        return {"spec": self.spec, "config": self.config, "ok": self.ok,
                "findings": [f.to_json() for f in self.findings], "notes": self.notes,
                "checked": self.checked, "timings": self.timings}

    def text(self) -> str:
        out = [f.text() for f in self.findings]
        for n in self.notes:
            out.append(f"note: {n}")
        summary = ", ".join(f"{k}: {self.checked.get(k, 0)} obligations, "
                            f"{self.timings[k]['queries']} queries, {self.timings[k]['solver_s']:.3f} s solver"
                            for k in CHECKS if k in self.timings)
        out.append(f"{len(self.findings)} finding(s). {summary}")
        return "\n".join(out)


def _conjuncts(g) -> tuple:
    if isinstance(g, GOp) and g.op == "and":
        return g.args
    if isinstance(g, GConst) and g.value:
        return ()
    return (g,)


class _Checker:
    def __init__(self, m: GroundModel, assume_invariants: bool = False):
        self.m = m
        self.state = make_state(m, "s")
        self.enc = Encoder(self.state)
        self.solver = z3.Solver()
        self.solver.add(*domain_constraints(m, self.state))
        if assume_invariants:
            for p in m.strengthening:
                self.solver.add(self.enc.defined(p.expr), self.enc.bool(p.expr))
        self.timer = Timer()
        self.table_of = {r.id: t for t in m.spec.tables for r in t.rows}

    def sat(self, label: str, *constraints):
        self.solver.push()
        try:
            self.solver.add(*constraints)
            r = self.timer.check(self.solver, label)
            if r == z3.unknown:
                raise SpecError(f"z3 could not decide {label}: {self.solver.reason_unknown()}")
            return self.solver.model() if r == z3.sat else None
        finally:
            self.solver.pop()

    def witness(self, model, exprs) -> tuple[dict, dict]:
        s = tuple(value_of(model, x) for x in self.state)
        cells = set()
        for e in exprs:
            cells |= cells_read(e)
        lay = self.m.layout
        rendered = self.m.render_state(s)
        relevant = {}
        for pos in sorted(cells):
            vl = lay.vars[lay.cell_var[pos]]
            relevant[lay.cell_names[pos]] = _label(vl.var.domain, s[pos], self.m.env)
        return relevant, rendered

    def guard(self, a: GroundAction):
        return z3.And(self.enc.defined(a.guard), self.enc.bool(a.guard))

    # -- determinism ----------------------------------------------------------------------------
    def determinism(self, table, trigger, actions, report):
        n = 0
        seen_pairs = set()
        for a, b in itertools.combinations(actions, 2):
            if a.row is b.row:
                continue
            pair = (a.row.id, b.row.id)
            if pair in seen_pairs:
                continue
            pa, pb = dict(a.params), dict(b.params)
            if any(pa[k] != pb[k] for k in pa.keys() & pb.keys()):
                continue
            n += 1
            mdl = self.sat(f"determinism {a.label} / {b.label}", self.guard(a), self.guard(b))
            if mdl is not None:
                seen_pairs.add(pair)
                wit, st = self.witness(mdl, (a.guard, b.guard))
                report.findings.append(TableFinding(
                    "determinism", table.actor, trigger, pair,
                    f"rows {a.row.id} and {b.row.id} are both enabled for one {trigger} request "
                    f"({a.label} and {b.label}); declare the trigger nondeterministic or make the guards disjoint",
                    (a.label, b.label), wit, st))
        return n

    # -- completeness ---------------------------------------------------------------------------
    def implies(self, label, premise, conclusion) -> bool:
        return self.sat(label, premise, z3.Not(conclusion)) is None

    def completeness(self, table, trigger, actions, table_actions, report):
        rows = []
        for a in actions:
            if a.row not in rows:
                rows.append(a.row)
        key = set(p.name for p in rows[0].params)
        for r in rows[1:]:
            key &= {p.name for p in r.params}
        groups: dict = {}
        for a in actions:
            k = tuple(sorted((n, v) for n, v in a.params if n in key))
            groups.setdefault(k, []).append(a)
        n = 0
        spontaneous = True
        for k, acts in groups.items():
            if len(acts) == 1:
                # a single action: its guard is its own precondition, complete by construction
                spontaneous = False
                n += 1
                continue
            binding = ", ".join(f"{nm}={v}" for nm, v in k)
            # the precondition: every conjunct (of any row of the group) that every guard implies
            cands = []
            for a in acts:
                for c in _conjuncts(a.guard):
                    if c not in cands:
                        cands.append(c)
            pre_parts = []
            for c in cands:
                cz = z3.And(self.enc.defined(c), self.enc.bool(c))
                if all(c in _conjuncts(a.guard) or
                       self.implies(f"precondition {table.actor}.{trigger}({binding})", self.guard(a), cz)
                       for a in acts):
                    pre_parts.append((c, cz))
            if not pre_parts:
                continue
            spontaneous = False
            pre_exprs = [c for c, _ in pre_parts]
            pre = z3.And(*[cz for _, cz in pre_parts])
            pre_cells = set().union(*[cells_read(c) for c in pre_exprs])
            # the handlers: actions of the table (any trigger) for the same request key whose guard
            # implies the precondition, i.e. rows that answer this kind of request
            handlers = []
            bind = dict(k)
            for b in table_actions:
                pb = dict(b.params)
                if any(pb[x] != v for x, v in bind.items() if x in pb):
                    continue
                if b in acts:
                    handlers.append(b)
                    continue
                gc = _conjuncts(b.guard)
                if all(c in gc for c in pre_exprs):
                    handlers.append(b)
                    continue
                if not pre_cells <= cells_read(b.guard):
                    continue
                if self.implies(f"handler {b.label} of {trigger}", self.guard(b), pre):
                    handlers.append(b)
            n += 1
            answered = z3.Or(*[self.guard(a) for a in handlers])
            mdl = self.sat(f"completeness {table.actor}.{trigger}({binding})", pre, z3.Not(answered))
            if mdl is not None:
                wit, st = self.witness(mdl, tuple(pre_exprs) + tuple(a.guard for a in handlers))
                row_ids = tuple(dict.fromkeys(a.row.id for a in handlers))
                report.findings.append(TableFinding(
                    "completeness", table.actor, trigger, row_ids,
                    f"a {trigger} request{f' ({binding})' if binding else ''} can be present in a state "
                    f"where none of rows {', '.join(row_ids)} answers it; add a row (a reply or an "
                    f"explicit rejection) for that state",
                    tuple(a.label for a in handlers), wit, st))
        if spontaneous:
            report.notes.append(f"table {table.actor}, trigger {trigger}: its rows share no guard conjunct, "
                                "so it is treated as spontaneous (no completeness obligation)")
        return n

    # -- type preservation ----------------------------------------------------------------------
    def type_preservation(self, table, a: GroundAction, report):
        lay = self.m.layout
        g = self.enc.bool(a.guard)
        problems = [("its guard reads outside an array or divides by zero", z3.Not(self.enc.defined(a.guard)))]
        for t, v in a.updates:
            if isinstance(t, GCell):
                lo, hi, name = lay.cell_lo[t.pos], lay.cell_hi[t.pos], lay.cell_names[t.pos]
            else:
                vl = lay.var(t.var)
                lo, hi, name = vl.lo, vl.hi, t.var + "[…]"
                problems.append((f"it writes {t.var} at a computed index outside the array",
                                 z3.And(g, z3.Not(self.enc.defined(t)))))
            problems.append((f"its update of {name} cannot be evaluated (index outside an array or "
                             "division by zero)", z3.And(g, z3.Not(self.enc.defined(v)))))
            x = self.enc.enc(v)
            if not z3.is_bool(x):
                problems.append((f"it assigns a value outside {lo}..{hi} to {name}",
                                 z3.And(g, self.enc.defined(v), z3.Or(x < lo, x > hi))))
        dyn = [(i, t) for i, (t, _) in enumerate(a.updates) if isinstance(t, GDyn)]
        for i, t in dyn:
            for j, (u, _) in enumerate(a.updates):
                if j == i or (isinstance(u, GDyn) and j < i):
                    continue
                if isinstance(u, GCell):
                    same = self.enc.position_is(t, u.pos)
                elif u.var == t.var:
                    same = z3.Or(*[z3.And(self.enc.position_is(t, p), self.enc.position_is(u, p))
                                   for p in range(lay.var(t.var).offset,
                                                  lay.var(t.var).offset + lay.var(t.var).size)])
                else:
                    continue
                problems.append((f"it may write one cell of {t.var} twice", z3.And(g, same)))
        probs = [p for p in problems if not z3.is_false(z3.simplify(p[1]))]
        if not probs:
            return 1
        mdl = self.sat(f"type {a.label}", z3.Or(*[p[1] for p in probs]))
        if mdl is not None:
            why = [msg for msg, c in probs if z3.is_true(mdl.eval(c, model_completion=True))]
            exprs = (a.guard,) + tuple(x for tv in a.updates for x in tv)
            wit, st = self.witness(mdl, exprs)
            report.findings.append(TableFinding(
                "type", table.actor, a.row.trigger, (a.row.id,),
                f"{a.label}: " + "; ".join(why), (a.label,), wit, st))
        return 1

    # -- conformance ----------------------------------------------------------------------------
    def conformance(self, table, actions, report):
        m = self.m
        status = table.status
        try:
            vl = m.layout.var(status)
        except KeyError:
            raise SpecError(f"names status var '{status}', which the spec does not declare", table=table.actor)
        dom = vl.var.domain
        labels = getattr(dom, "labels", None)
        if labels is None:
            raise SpecError(f"status var {status} must have an enum domain", table=table.actor)
        gr = Grounder(m.spec, m.config)
        allowed, unused, refs = set(), set(), []
        for c in table.conformance:
            if c.when is not None:
                w = gr.g(c.when, {}, None)
                if not isinstance(w, GConst):
                    raise SpecError("a conformance `when` must depend only on configuration constants; move the "
                                    "condition on the state into the allowed pairs", table=table.actor)
                if not w.value:
                    continue
            for pair in c.allowed + c.unused:
                for lab in pair:
                    if lab not in labels:
                        raise SpecError(f"conformance names state '{lab}', which is not a value of {dom.name} "
                                        f"({', '.join(labels)}); use one of these labels", table=table.actor)
            allowed |= set(c.allowed)
            unused |= set(c.unused)
            refs.append(c.ref)
        if not refs:
            report.notes.append(f"table {table.actor}: no conformance entry applies under config "
                                f"{m.config.name}; conformance not checked")
            return 0
        used: dict = {}
        reported: set = set()
        n = 0
        cells = range(vl.offset, vl.offset + vl.size)
        for a in actions:
            for t, v in a.updates:
                if isinstance(t, GCell):
                    if t.pos not in cells:
                        continue
                    targets = [(t.pos, z3.BoolVal(True))]
                elif t.var == status:
                    targets = [(p, self.enc.position_is(t, p)) for p in cells]
                else:
                    continue
                to = self.enc.int(v)
                for pos, cond in targets:
                    frm = self.enc.int(GCell(pos))
                    self.solver.push()
                    self.solver.add(self.guard(a), cond)
                    try:
                        while True:
                            n += 1
                            r = self.timer.check(self.solver, f"conformance {a.label} {m.layout.cell_names[pos]}")
                            if r != z3.sat:
                                break
                            mdl = self.solver.model()
                            f, tv = value_of(mdl, frm), value_of(mdl, to)
                            pair = (dom.label(f), dom.label(tv))
                            if pair not in used:
                                used[pair] = []
                            if a.row.id not in used[pair]:
                                used[pair].append(a.row.id)
                            if pair not in allowed and (a.row.id, pair) not in reported:
                                reported.add((a.row.id, pair))
                                wit, st = self.witness(mdl, (a.guard, v))
                                report.findings.append(TableFinding(
                                    "conformance", table.actor, a.row.trigger, (a.row.id,),
                                    f"{a.label} takes {status} from {pair[0]} to {pair[1]}, which "
                                    f"{' / '.join(x for x in refs if x) or 'the reference table'} does not allow",
                                    (a.label,), wit, st))
                            self.solver.add(z3.Not(z3.And(frm == f, to == tv)))
                    finally:
                        self.solver.pop()
        for pair in sorted(allowed - set(used) - unused):
            report.findings.append(TableFinding(
                "conformance", table.actor, None, (),
                f"{pair[0]} -> {pair[1]} is allowed by {' / '.join(x for x in refs if x) or 'the reference table'} "
                f"but no row takes it; add the row or list the pair in Conformance.unused with the reason"))
        for pair in sorted(unused & set(used)):
            report.findings.append(TableFinding(
                "conformance", table.actor, None, tuple(used[pair]),
                f"{pair[0]} -> {pair[1]} is listed as deliberately unused, but rows "
                f"{', '.join(used[pair])} take it; remove it from Conformance.unused"))
        report.notes.append(f"table {table.actor}: {status} transitions taken: "
                            + ", ".join(f"{a}->{b}" for a, b in sorted(used)))
        return n


def _label(domain, value, env):
    if domain.is_bool:
        return bool(value)
    return domain.label(value, env)


def verify_tables(m: GroundModel, checks=CHECKS, tables: tuple[str, ...] | None = None,
                  assume_invariants: bool = False) -> TableReport:
    """Run the table checks on a ground model; findings are in table order, then trigger order.

    With `assume_invariants`, the states checked are those within the type bounds that satisfy the
    spec's strengthening invariants (`Spec.invariants_for_induction`); that is sound only once
    `txncheck bmc SPEC --induction K` has proved them, and the report says so in a note."""
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise SpecError(f"unknown table check(s) {', '.join(sorted(unknown))}; choose from {', '.join(CHECKS)}")
    ck = _Checker(m, assume_invariants)
    report = TableReport(m.spec.name, m.config.to_json())
    if assume_invariants:
        names = ", ".join(p.name for p in m.strengthening) or "none declared"
        report.notes.append(f"states restricted to the strengthening invariants ({names}); prove them with "
                            f"`txncheck bmc {m.spec.name} --induction K`")
    by_table: dict = {}
    for a in m.actions:
        by_table.setdefault(ck.table_of[a.row.id].actor, []).append(a)
    counts = {c: 0 for c in checks}
    for c in checks:
        q0, t0, w0 = len(ck.timer.queries), ck.timer.total, time.perf_counter()
        for table in m.spec.tables:
            if tables and table.actor not in tables:
                continue
            acts = by_table.get(table.actor, [])
            triggers: dict = {}
            for a in acts:
                triggers.setdefault(a.row.trigger, []).append(a)
            if c == "determinism":
                for trig, ta in triggers.items():
                    if trig in table.nondeterministic:
                        continue
                    counts[c] += ck.determinism(table, trig, ta, report)
            elif c == "completeness":
                for trig, ta in triggers.items():
                    counts[c] += ck.completeness(table, trig, ta, acts, report)
            elif c == "type":
                for a in acts:
                    counts[c] += ck.type_preservation(table, a, report)
            elif c == "conformance":
                if table.status and table.conformance:
                    counts[c] += ck.conformance(table, acts, report)
        report.timings[c] = {"queries": len(ck.timer.queries) - q0,
                             "solver_s": round(ck.timer.total - t0, 4),
                             "wall_s": round(time.perf_counter() - w0, 4)}
    report.checked = counts
    return report
