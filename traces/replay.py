"""Replay a trace against its spec: re-execute every step, compare states, confirm the claim.

A replay either confirms the trace (each action enabled, each state as recorded, and the final
state violates / witnesses the property as the trace says) or reports the first divergence.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from txncheck.spec import catalog
from txncheck.spec.errors import ConfigError, EvaluationError, SpecError
from txncheck.spec.ground import GroundModel, evaluate, ground, parse_state, successor

from .schema import Trace, TraceError


@dataclass(frozen=True)
class ReplayReport:
    confirmed: bool
    kind: str
    property: str
    steps: int
    message: str
    diverged_at: int | None = None


def model_for(trace: Trace, variant: str | None = "__trace__") -> GroundModel:
    base = catalog.load(trace.spec)
    v = trace.variant if variant == "__trace__" else variant
    try:
        spec = base.with_variant(v)
    except ConfigError as err:
        raise TraceError(f"the trace names a variant this spec does not have: {err}") from None
    cfg = trace.config or {}
    values = dict(cfg.get("values") or {})
    if trace.variant and v != trace.variant:
        # switches forced by the trace's own variant are part of that variant, not of the config
        from txncheck.spec.model import SetParam
        for edit in base.variant_named(trace.variant).edits:
            if isinstance(edit, SetParam):
                values.pop(edit.name, None)
    name = cfg.get("name")
    known = {c.name for c in spec.configs}
    try:
        rc = spec.resolve_config(name if name in known else None, values)
    except ConfigError as err:
        raise TraceError(f"the trace's configuration does not fit spec {trace.spec}: {err}") from None
    return ground(spec, rc)


def _find_action(model: GroundModel, step):
    for a in model.actions:
        if a.row.id != step.row:
            continue
        labels = {p.name: str(p.domain.label(v, model.env)) for p in a.row.params for n, v in a.params if n == p.name}
        if all(str(step.params.get(k)) == v for k, v in labels.items()) and len(labels) == len(step.params):
            return a
    return None


def replay(trace: Trace, variant: str | None = "__trace__", search_limit: int = 2_000_000) -> ReplayReport:
    model = model_for(trace, variant)
    prop_name = trace.property.get("name")
    if trace.kind == "cti":  # a counterexample to induction starts in the solver's state, not the initial one
        try:
            s = parse_state(model.layout, model.env, trace.steps[0].state)
        except SpecError as err:
            return ReplayReport(False, trace.kind, prop_name, 0, f"step 0 is not a state of this model: {err}", 0)
    else:
        s = tuple(model.init)
    if model.render_state(s) != trace.steps[0].state:
        what = "step 0 names cells this model does not have" if trace.kind == "cti" else \
            "the initial state differs from the trace's step 0"
        return ReplayReport(False, trace.kind, prop_name, 0, what, 0)
    for step in trace.steps[1:]:
        a = _find_action(model, step)
        if a is None:
            return ReplayReport(False, trace.kind, prop_name, step.index,
                                f"step {step.index}: the spec has no action {step.label}", step.index)
        try:
            if not evaluate(a.guard, s, a.row_id):
                return ReplayReport(False, trace.kind, prop_name, step.index,
                                    f"step {step.index}: {a.label} is not enabled here", step.index)
            s = successor(model, a, s)
        except EvaluationError as err:
            return ReplayReport(False, trace.kind, prop_name, step.index, f"step {step.index}: {err}", step.index)
        if model.render_state(s) != step.state:
            return ReplayReport(False, trace.kind, prop_name, step.index,
                                f"step {step.index}: {a.label} leads to a different state than recorded", step.index)
    n = len(trace.steps) - 1
    if trace.kind == "deadlock":
        enabled = [a for a in model.actions if evaluate(a.guard, s)]
        term = model.terminal is not None and evaluate(model.terminal, s)
        ok = not enabled and not term
        return ReplayReport(ok, trace.kind, "deadlock", n, "deadlock confirmed" if ok else "the last state is not a deadlock")
    # a strengthening invariant's violation comes from `txncheck check --invariants`
    prop = next((p for p in model.properties + model.strengthening if p.name == prop_name), None)
    if prop is None:
        return ReplayReport(False, trace.kind, prop_name, n, f"the spec has no property {prop_name}")
    try:
        # a property guarded by `when` holds where its guard is false (as in every engine)
        holds = ((prop.when is not None and not evaluate(prop.when, s))
                 or bool(evaluate(prop.expr, s)))
    except EvaluationError:  # only in a made-up state (a CTI's); k-induction counts it as a violation
        holds = False
    steps = f"{n} step" + ("" if n == 1 else "s")
    if trace.kind == "cti":
        ok = not holds
        msg = (f"every step is a transition of the model and {prop_name} fails after {steps} (a counterexample "
               "to induction: step 0 is not known to be reachable)" if ok else f"{prop_name} holds in the last state")
    elif trace.kind == "violation":
        ok = not holds
        msg = f"{prop_name} is violated after {steps}" if ok else f"{prop_name} holds in the last state"
    elif trace.kind == "witness":
        ok = holds
        msg = f"{prop_name} is witnessed after {steps}" if ok else f"{prop_name} does not hold in the last state"
    else:
        ok = not _goal_reachable(model, prop, s, search_limit)
        msg = (f"{prop_name}: no goal state is reachable from the state after {steps}" if ok
               else f"{prop_name}: a goal state is reachable from the last state")
    return ReplayReport(ok, trace.kind, prop_name, n, msg)


def _goal_reachable(model: GroundModel, prop, s, limit: int) -> bool:
    if prop.when is not None and not evaluate(prop.when, s):
        return True
    excluded = set(prop.prop.exclude_tags)
    actions = [a for a in model.actions if not (set(a.row.tags) & excluded)]
    seen = {s}
    queue = deque([s])
    while queue:
        x = queue.popleft()
        if evaluate(prop.expr, x):
            return True
        for a in actions:
            if evaluate(a.guard, x):
                y = successor(model, a, x)
                if y not in seen:
                    if len(seen) >= limit:
                        raise TraceError(f"replay gave up after {limit:,} states searching for a goal state")
                    seen.add(y)
                    queue.append(y)
    return False
