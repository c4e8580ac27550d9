"""Build a trace by replaying action ids from the initial state with the reference interpreter."""
from __future__ import annotations

from dataclasses import replace

from txncheck.spec.errors import EvaluationError
from txncheck.spec.fairness import describe
from txncheck.spec.evaluate import cells_read, evaluate, explain, successor
from txncheck.spec.ground_ir import GroundModel

from .schema import Step, Trace


def _flat_changes(model: GroundModel, before, after) -> tuple[dict, ...]:
    lay = model.layout
    out = []
    for pos, (x, y) in enumerate(zip(before, after)):
        if x != y:
            out.append({"cell": lay.cell_names[pos], "before": _lab(model, pos, x), "after": _lab(model, pos, y)})
    return tuple(out)


def _lab(model: GroundModel, pos: int, value: int):
    vl = model.layout.vars[model.layout.cell_var[pos]]
    d = vl.var.domain
    return bool(value) if d.is_bool else d.label(int(value), model.env)


def step_of(model: GroundModel, index: int, action_id: int | None, before, after) -> Step:
    if action_id is None:
        return Step(0, None, None, None, "Init", {}, (), model.render_state(after), ())
    a = model.actions[action_id]
    params = {name: _param_label(a, name, v, model) for name, v in a.params}
    return Step(index, a.row.id, a.row.actor, a.row.trigger, a.label, params, a.row.tags,
                model.render_state(after), _flat_changes(model, before, after))


def _param_label(a, name, value, model):
    for p in a.row.params:
        if p.name == name:
            lab = p.domain.label(value, model.env)
            return lab
    return value


def states_along(model: GroundModel, action_ids, start=None) -> list[tuple[int, ...]]:
    """The states visited by applying `action_ids` from `start` (by default the first initial state), guards
    checked."""
    s = tuple(model.init) if start is None else tuple(start)
    out = [s]
    for k, aid in enumerate(action_ids):
        a = model.actions[aid]
        if not evaluate(a.guard, s, a.row_id):
            raise EvaluationError(f"step {k + 1}: action {a.label} is not enabled", a.row_id)
        s = successor(model, a, s)
        out.append(s)
    return out


def _ground_property(model: GroundModel, prop_name: str):
    """The property named `prop_name`, or a strengthening invariant (`check --invariants` checks
    them as properties, and a replay of such a trace grounds them as strengthening invariants)."""
    return next((p for p in model.properties + model.strengthening if p.name == prop_name), None)


def property_values(model: GroundModel, prop_name: str, state, kind: str) -> dict:
    """The cells of `state` that make the property what the trace of `kind` shows, by cell name in
    cell order: for a witness the cells that make it true; for a violation, a cti or an unrecoverable
    state the cells that make it false (its `when` guard true and its expression false). Each set
    fixes the property's value whatever the other cells hold (`spec.evaluate.explain`). The builder
    writes these as the trace's `values` and replay recomputes them here, so both say the same."""
    p = _ground_property(model, prop_name)
    if p is None or kind == "deadlock":
        return {}
    if kind == "lasso":  # the goal is false there (and ever after); its condition held earlier
        return _labelled(model, explain(p.expr, state), state)
    if kind == "witness":
        holds = holds_in(p.expr, state)
        cells = explain(p.expr, state) if holds or p.when is None else explain(p.when, state)
    else:
        cells = explain(p.expr, state) | (explain(p.when, state) if p.when is not None else set())
    return _labelled(model, cells, state)


def read_values(model: GroundModel, prop_name: str, state) -> dict:
    """Every cell the property reads (its expression and `when` guard): the `values` of a
    `txncheck.trace/1` file, which replay still reads."""
    p = _ground_property(model, prop_name)
    if p is None:
        return {}
    return _labelled(model, cells_read(p.expr) | (cells_read(p.when) if p.when is not None else set()), state)


def _labelled(model: GroundModel, cells, state) -> dict:
    return {model.layout.cell_names[c]: _lab(model, c, state[c]) for c in sorted(cells)}


def holds_in(e, state) -> bool:
    """`e` is true in `state`; false where it cannot be evaluated there (an index out of its domain)."""
    try:
        return bool(evaluate(e, state))
    except EvaluationError:
        return False


def _steps(model: GroundModel, states, action_ids, start: Step) -> tuple[Step, ...]:
    """`start` as step 0, then a step per action along `states`."""
    return (start,) + tuple(step_of(model, k + 1, aid, states[k], states[k + 1]) for k, aid in enumerate(action_ids))


def _property(model: GroundModel, prop_name: str, fallback_kind: str) -> dict:
    p = _ground_property(model, prop_name)
    return {"name": p.name, "kind": p.kind, "doc": p.prop.doc} if p is not None else \
        {"name": prop_name, "kind": fallback_kind, "doc": ""}


# The explanations the checker writes; replay compares a trace's explanation with these.
DEADLOCK_EXPLANATION = "no action is enabled and the state is not terminal"
CTI_EXPLANATION = ("A counterexample to induction: step 0 satisfies every property and strengthening invariant the "
                   "induction assumed, but is not known to be reachable. If it is unreachable, a strengthening "
                   "invariant that excludes it is missing; if it is reachable, the property is violated.")


def unrecoverable_explanation(prop) -> str:
    """What `txncheck check` says of a recoverable property's counterexample (`prop` a Property)."""
    excl = f" without {', '.join(prop.exclude_tags)} actions" if prop.exclude_tags else ""
    return f"from the last state no state satisfying {prop.name}'s goal is reachable{excl}"


def lasso_explanation(model: GroundModel, prop, start: int, loop: int, length: int) -> str:
    """What `txncheck check` says of an eventually or leads_to property's lasso (`prop` a Property): where
    its condition held, how the behaviour repeats, and under which fairness."""
    if prop.kind == "leads_to":
        head = f"at step {start} {prop.name}'s condition holds, and its goal never holds from then on"
    else:
        head = f"{prop.name}'s goal never holds"
    if loop == length:
        tail = (f"after step {length} nothing happens forever (stuttering): no action the fairness covers is "
                "enabled there")
    else:
        tail = f"steps {loop + 1}-{length} return to the state of step {loop} and repeat forever"
    return f"{head}: {tail} (fairness: {describe(model.spec.fairness)})"


def build_lasso_trace(model: GroundModel, action_ids, loop: int, start: int, prop_name: str, engine: str,
                      initial=None) -> Trace:
    """A fair behaviour that never meets the goal: the actions to the loop's end, then back to step `loop`."""
    p = _ground_property(model, prop_name)
    explanation = lasso_explanation(model, p.prop, start, loop, len(action_ids))
    return replace(build_trace(model, action_ids, prop_name, "lasso", engine, explanation, initial=initial), loop=loop)


def cti_explanation(others) -> str:
    """A counterexample to induction's explanation; `others`: the other candidates its last state violates."""
    return CTI_EXPLANATION + (f" The last state also violates {', '.join(others)}." if others else "")


def provenance(model: GroundModel) -> dict:
    """The trace fields that say how the model's spec was loaded (`ModelRequest.ground` sets
    `model.source`); none for a model grounded from a Spec object."""
    src = model.source
    if src is None:
        return {}
    return {"spec_source": src.ref, "spec_sha256": src.sha256}


def build_trace(model: GroundModel, action_ids, prop_name: str, kind: str, engine: str,
                explanation: str = "", symmetry: bool = False, initial=None) -> Trace:
    """`initial`: the initial state the actions start from (by default the first; a spec may have several)."""
    states = states_along(model, action_ids, initial)
    steps = _steps(model, states, action_ids, step_of(model, 0, None, None, states[0]))
    prop = _property(model, prop_name, kind)
    if kind == "deadlock":
        prop = {"name": "deadlock", "kind": "deadlock", "doc": "a state with no enabled action that is not terminal"}
    return Trace(spec=model.spec.name, variant=model.spec.variant, config=model.config.to_json(), engine=engine,
                 property=prop, kind=kind, steps=steps,
                 values=property_values(model, prop_name, states[-1], kind),
                 explanation=explanation, symmetry=symmetry, **provenance(model))


def build_cti_trace(model: GroundModel, states, action_ids, prop_name: str, violates, engine: str) -> Trace:
    """A counterexample to induction as a trace of kind "cti": step 0 is the solver's pre-state (it
    satisfies every candidate of the induction, but need not be reachable), then the actions to a
    state that violates `prop_name` (and the other candidates named in `violates`)."""
    start = Step(0, None, None, None, "Start (not known to be reachable)", {}, (), model.render_state(states[0]), ())
    explanation = cti_explanation([n for n in violates if n != prop_name])
    return Trace(spec=model.spec.name, variant=model.spec.variant, config=model.config.to_json(), engine=engine,
                 property=_property(model, prop_name, "always"), kind="cti",
                 steps=_steps(model, states, action_ids, start),
                 values=property_values(model, prop_name, states[-1], "cti"), explanation=explanation,
                 **provenance(model))
