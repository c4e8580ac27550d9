"""Replay a trace against its spec: re-execute every step, compare states, confirm the claim.

A replay either confirms the trace or reports the first divergence. Confirmed means: each action
is enabled, each state is as recorded, and the final state violates / witnesses the property as
the trace says; and everything else a reader of the trace sees (each step's row, actor, trigger,
label, parameters, tags and changed cells; the property's name, kind and description; the values
that violate it; the explanation; the configuration) is what the builder writes for the same
actions (`traces.build`), so no descriptive field can be false.

A `txncheck.trace/2` file records step 0's state and each step's changed cells; the states a reader
sees are rebuilt from those (`schema.Trace.from_json`), so comparing step 0 and every `changed`
list with the spec's compares every state, and a difference is reported where the file says it:
`steps[k].changed[j]`. A `/1` file records every state, which is compared step by step, and its
`values` are every cell the property reads (`build.read_values`).
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from txncheck.spec import catalog, loader
from txncheck.spec.errors import ConfigError, EvaluationError, SpecError, TxncheckError
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.request import ModelRequest

from .build import (DEADLOCK_EXPLANATION, build_cti_trace, build_trace, cti_explanation, lasso_explanation,
                    read_values, unrecoverable_explanation)
from .lasso import check_lasso, lasso_start
from .schema import TRACE_SCHEMA_V1, Step, Trace, TraceError, field_path, show_value
from .story import find_action

# what a property of each kind can have a trace of
TRACE_KINDS = {"always": ("violation", "cti"), "sometimes": ("witness",), "recoverable": ("unrecoverable",),
               "eventually": ("lasso",), "leads_to": ("lasso",)}
# a descriptive field that is not what the spec gives: the trace was edited, or written by another model
REWRITE = "a trace must say what the spec does; write it again with `txncheck check`"


@dataclass(frozen=True)
class ReplayReport:
    confirmed: bool
    kind: str
    property: str
    steps: int
    message: str
    diverged_at: int | None = None
    field: str | None = None  # the path of the first field that differs, e.g. steps[1].changed[0]


def spec_for(trace: Trace):
    """The spec `trace` was written from. A trace of a spec file or MODULE:ATTR is loaded again from where
    its `spec_source` says, and refused if that source no longer has the hash the trace recorded (checked
    before the changed code runs); a shipped spec, or a trace written before provenance was recorded, is
    looked up by its name in the catalogue, as before."""
    src = trace.spec_source
    if src is None or loader.kind_of(src) == loader.SHIPPED:
        try:
            base = catalog.load(trace.spec)
        except ConfigError as err:
            raise TraceError(f"spec: {err}") from None
        if src is not None and src != trace.spec:
            raise TraceError(f"spec: the trace names spec {show_value(trace.spec)} but says it was loaded as "
                             f"{show_value(src)} (spec_source); write the trace again with `txncheck check`")
        return base
    _same_source(trace, loader.current_sha256(src))
    try:
        loaded = loader.resolve(src)
    except ConfigError as err:
        raise TraceError(f"spec_source: the trace's spec cannot be loaded from where it was written: {err}") \
            from None
    _same_source(trace, loaded.source.sha256)
    if loaded.spec.name != trace.spec:
        raise TraceError(f"spec: the trace names spec {show_value(trace.spec)}, but {_what(src)} defines spec "
                         f"{show_value(loaded.spec.name)}; write the trace again with `txncheck check`")
    return loaded.spec


def _same_source(trace: Trace, now: str | None) -> None:
    if trace.spec_sha256 is not None and now is not None and now != trace.spec_sha256:
        raise TraceError(f"the spec {_what(trace.spec_source)} changed since this trace was written (hash "
                         f"{trace.spec_sha256[:12]}..., now {now[:12]}...); rerun `txncheck check` to write a new "
                         "trace")


def _what(src: str) -> str:
    return f"file {loader.display_path(src)}" if loader.kind_of(src) == loader.FILE else f"module {src}"


def model_for(trace: Trace, variant: str | None = "__trace__") -> GroundModel:
    base = spec_for(trace)
    v = trace.variant if variant == "__trace__" else variant
    try:
        spec = base.with_variant(v)
    except ConfigError as err:
        raise TraceError(f"variant: the trace names a variant this spec does not have: {err}") from None
    cfg = trace.config or {}
    values = dict(cfg.get("values") or {})
    if trace.variant and v != trace.variant:
        # switches forced by the trace's own variant are part of that variant, not of the config
        from txncheck.spec.model import SetParam
        for edit in base.variant_named(trace.variant).edits:
            if isinstance(edit, SetParam):
                values.pop(edit.name, None)
    name = cfg.get("name")
    known = [c.name for c in spec.configs]
    if known and name not in known:
        raise TraceError(f"config.name: spec {trace.spec} has no config {show_value(name)}; "
                         f"the trace must name one of {', '.join(known)}")
    named = next((c for c in spec.configs if c.name == name), None)
    for bound in ("max_states", "max_depth"):  # a bound set on the command line, not by the named config
        if named is not None and bound in cfg and cfg[bound] != getattr(named, bound):
            values[bound] = cfg[bound]
    try:
        # the one recipe every command grounds by (cached there); the spec object, not its name, since
        # the trace's variant and config were checked against this very object
        return ModelRequest.of(base, name if named is not None else None, values, v).ground()
    except TxncheckError as err:
        raise TraceError(f"config.values: the trace's configuration does not fit spec {trace.spec}: {err}") from None


def _no_action(model: GroundModel, step) -> tuple[str, str]:
    """(field path, message) for a step whose row and parameters name no ground action."""
    k = step.index
    rows = [a.row for a in model.actions if a.row.id == step.row]
    if not rows:
        return (field_path(("steps", k, "row")),
                f"step {k}: the spec has no action {show_value(step.label)}: steps[{k}].row says "
                f"{show_value(step.row)}, which is not a row of spec {model.spec.name} (or has no action in this "
                "configuration)")
    params = ", ".join(p.name for p in rows[0].params) or "none"
    got = ", ".join(f"{k2}={show_value(v)}" for k2, v in step.params.items()) or "none"
    return (field_path(("steps", k, "params")),
            f"step {k}: the spec has no action {show_value(step.label)}: row {step.row} has no action with "
            f"parameters {got} (its parameters: {params})")


# ---- comparing what the trace says with what the spec gives ------------------------------------
def _norm(x):
    """A value as JSON sees it: TRUE is not 1, 1 is not "1", and key order does not matter."""
    if isinstance(x, bool):
        return ("bool", x)
    if isinstance(x, int):
        return ("int", x)
    if isinstance(x, str):
        return ("str", x)
    if x is None:
        return ("null",)
    if isinstance(x, dict):
        return ("object", {k: _norm(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return ("array", tuple(_norm(v) for v in x))
    return ("other", repr(x))


def same(a, b) -> bool:
    return _norm(a) == _norm(b)


def _diff_tree(ours, theirs, path: tuple, extra: str = "is not a cell or var of this model") -> tuple[str, str] | None:
    """(field path, what differs) for the first difference between two states or value maps,
    in the spec's order; None if they are the same. `extra`: what a key only `theirs` has is not."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k, v in ours.items():
            if k not in theirs:
                return field_path(path + (k,)), f"{field_path(path + (k,))} is missing (the spec gives {_val(v)})"
            d = _diff_tree(v, theirs[k], path + (k,), extra)
            if d:
                return d
        for k in theirs:
            if k not in ours:
                return field_path(path + (k,)), f"{field_path(path + (k,))} {extra}"
        return None
    if same(ours, theirs):
        return None
    return field_path(path), _says(field_path(path), theirs, ours)


_BARE = re.compile(r"[\w.{},<>+()=\[\]-]{1,60}")  # a label that needs no quotes (and cannot pass for a number)


def _val(x) -> str:
    """A value as the text rendering shows it (TRUE, 3, working); anything else as JSON."""
    if isinstance(x, bool):
        return "TRUE" if x else "FALSE"
    if isinstance(x, int) or (isinstance(x, str) and _BARE.fullmatch(x) and x not in ("TRUE", "FALSE")
                              and not re.fullmatch(r"-?\d+", x)):
        return str(x)
    return show_value(x)


def _some(names, n: int = 6) -> str:
    names = list(names)
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "") if names else "none"


def _says(path: str, theirs, ours) -> str:
    return f"{path} says {_val(theirs)}, the spec gives {_val(ours)}"


def _change(c) -> str:
    return f"{c.get('cell')}: {_val(c.get('before'))} → {_val(c.get('after'))}"


def _diff_changed(ours, theirs, k: int) -> tuple[str, str] | None:
    if same(ours, theirs):
        return None
    for j, (o, t) in enumerate(zip(ours, theirs)):
        if not same(o, t):
            return (field_path(("steps", k, "changed", j)),
                    f"step {k}: steps[{k}].changed[{j}] says {_change(t)}, the spec gives {_change(o)}")
    path = field_path(("steps", k, "changed"))
    listed = ", ".join(map(_change, theirs)) or "nothing"
    gives = ", ".join(map(_change, ours)) or "nothing"
    return path, f"step {k}: {path} lists {listed}, the spec changes {gives}"


def _diff_step(ours: Step, theirs: Step, k: int) -> tuple[str, str] | None:
    for name in ("index", "row", "actor", "trigger", "label", "params", "tags"):
        o, t = getattr(ours, name), getattr(theirs, name)
        if not same(o, t):
            if name == "params":
                d = _diff_tree(o, t, ("steps", k, "params"))
                if d:
                    return d[0], f"step {k}: {d[1]}"
            path = field_path(("steps", k, name))
            return path, f"step {k}: {_says(path, t, o)}"
    return _diff_changed(ours.changed, theirs.changed, k)


def _diff_config(ours: dict, theirs: dict) -> tuple[str, str] | None:
    for name in ("name", "values", "max_states", "max_depth"):
        d = _diff_tree(ours.get(name), theirs.get(name), ("config", name))
        if d:
            return d
    # absent means none: a trace that names config nightly with tiny's values must say so, since the
    # text shows the config's name and its overrides only (a trace written before configs carried
    # their overrides, by a run with --set, is refused here and must be written again)
    return _diff_tree(ours.get("overrides", {}), theirs.get("overrides", {}), ("config", "overrides"))


def _violated(model: GroundModel, name: str, s) -> bool | None:
    p = next((q for q in model.properties + model.strengthening if q.name == name), None)
    if p is None:
        return None
    try:
        return not ((p.when is not None and not evaluate(p.when, s)) or bool(evaluate(p.expr, s)))
    except EvaluationError:
        return True


def _diff_explanation(model: GroundModel, trace: Trace, prop, ids, states) -> tuple[str, str] | None:
    said = trace.explanation
    s = states[-1]
    if trace.kind == "cti":
        # the candidates the solver also refuted depend on the run; each one named must be violated
        if said == cti_explanation(()):
            return None
        m = re.fullmatch(re.escape(cti_explanation(())) + r" The last state also violates (.+)\.", said)
        if m:
            named = [(n, _violated(model, n, s)) for n in m.group(1).split(", ")]
            bad = [(n, v) for n, v in named if n == trace.property["name"] or not v]
            if not bad:
                return None
            n, v = bad[0]
            why = ("that is the property itself" if n == trace.property["name"] else
                   "the spec has no such property or strengthening invariant" if v is None else "it does not")
            return "explanation", f"explanation says the last state also violates {show_value(n)}, but {why}"
        expected = cti_explanation(())
    elif trace.kind == "deadlock":
        expected = DEADLOCK_EXPLANATION
    elif trace.kind == "unrecoverable":
        expected = unrecoverable_explanation(prop.prop)
    elif trace.kind == "lasso":
        if not check_lasso(model, prop, ids, states, trace.loop)[0]:
            return None  # not a fair lasso at all: the claim's check says why, which is the better message
        start = lasso_start(prop, states, trace.loop)
        expected = lasso_explanation(model, prop.prop, start, trace.loop, len(states) - 1)
    else:
        expected = ""
    if said == expected:
        return None
    gives = show_value(expected) if expected else "none"
    return "explanation", f"explanation says {show_value(said)}, the spec gives {gives}"


def _describe_differences(model: GroundModel, trace: Trace, prop, ids, states, baseline: bool):
    """(field path, message) for the first field a reader sees that differs from the trace the
    builder writes for the same actions; None if there is none."""
    name = trace.property["name"]
    if trace.kind == "cti":
        built = build_cti_trace(model, states, ids, name, [name], trace.engine)
    else:
        built = build_trace(model, ids, name, trace.kind, trace.engine, symmetry=trace.symmetry, initial=states[0])
    for k, (ours, theirs) in enumerate(zip(built.steps, trace.steps)):
        d = _diff_step(ours, theirs, k)
        if d:
            return d
    for key in ("name", "kind", "doc"):
        if not same(built.property.get(key), trace.property.get(key)):
            path = f"property.{key}"
            return path, _says(path, trace.property.get(key), built.property.get(key))
    # a /1 file's values are every cell the property reads; a /2 file's the cells that decide it
    if trace.schema == TRACE_SCHEMA_V1:
        d = _diff_tree(read_values(model, name, states[-1]), trace.values, ("values",),
                       f"is not a cell that {show_value(name)} reads")
    else:
        d = _diff_tree(built.values, trace.values, ("values",),
                       f"is not one of the cells that decide {show_value(name)} in the last state "
                       f"({_some(built.values)})")
    if d:
        return d
    d = _diff_explanation(model, trace, prop, ids, states)
    if d:
        return d
    if not baseline:  # against another variant the trace's own variant and configuration cannot match
        return _diff_config(built.config, trace.config)
    return None


def replay(trace: Trace, variant: str | None = "__trace__", search_limit: int = 2_000_000) -> ReplayReport:
    model = model_for(trace, variant)
    baseline = variant != "__trace__"
    prop_name = trace.property.get("name")
    n = len(trace.steps) - 1

    def fail(at: int | None, message: str, where: str | None = None, steps: int | None = None) -> ReplayReport:
        return ReplayReport(False, trace.kind, prop_name, n if steps is None else steps, message, at, where)

    if trace.kind == "cti":  # a counterexample to induction starts in the solver's state, not the initial one
        try:
            s = model.parse_state(trace.steps[0].state)
        except SpecError as err:
            return fail(0, f"step 0 is not a state of this model: {err}", "steps[0].state", 0)
    elif len(model.initial_states) > 1:  # the spec has several: step 0 must be one of them
        try:
            s = model.parse_state(trace.steps[0].state)
        except SpecError as err:
            return fail(0, f"step 0 is not a state of this model: {err}", "steps[0].state", 0)
        if s not in set(model.initial_states):
            return fail(0, f"step 0 is not one of the spec's {len(model.initial_states):,} initial states (its vars' "
                           "initial values and init constraints)", "steps[0].state", 0)
    else:
        s = tuple(model.init)
    d = _diff_tree(model.render_state(s), trace.steps[0].state, ("steps", 0, "state"))
    if d:
        what = "step 0 is not written as this model writes its states" if trace.kind == "cti" else \
            "the initial state differs from the trace's step 0"
        return fail(0, f"{what}: {d[1]}", d[0], 0)
    ids, states = [], [s]
    for step in trace.steps[1:]:
        k = step.index
        a = find_action(model, step)
        if a is None:
            where, msg = _no_action(model, step)
            return fail(k, msg, where, k)
        try:
            if not evaluate(a.guard, s, a.row_id):
                return fail(k, f"step {k}: {a.label} is not enabled here", field_path(("steps", k, "row")), k)
            s = successor(model, a, s)
        except EvaluationError as err:
            return fail(k, f"step {k}: {err}", field_path(("steps", k, "row")), k)
        if trace.schema == TRACE_SCHEMA_V1:  # a /2 file's states are its changed cells, compared below
            d = _diff_tree(model.render_state(s), step.state, ("steps", k, "state"))
            if d:
                return fail(k, f"step {k}: {a.label} leads to a different state than recorded: {d[1]}", d[0], k)
        ids.append(a.id)
        states.append(s)
    prop = None
    if trace.kind != "deadlock":
        # a strengthening invariant's violation comes from `txncheck check --invariants`
        prop = next((p for p in model.properties + model.strengthening if p.name == prop_name), None)
        if prop is None:
            return fail(None, f"property.name: the spec has no property {show_value(prop_name)}", "property.name")
        if trace.kind not in TRACE_KINDS.get(prop.kind, ()):
            allowed = " or ".join(TRACE_KINDS.get(prop.kind, ()))
            return fail(None, f"kind says {trace.kind}, but {prop_name} is {'an' if prop.kind[0] in 'aeiou' else 'a'} "
                              f"{prop.kind} property, whose trace is a {allowed}", "kind")
    d = _describe_differences(model, trace, prop, ids, states, baseline)
    if d:
        where, msg = d
        at = int(m.group(1)) if (m := re.match(r"steps\[(\d+)\]", where)) else None
        return fail(at, msg if baseline else f"{msg}; {REWRITE}", where, at)
    if trace.schema != TRACE_SCHEMA_V1:  # (a /1 file's states were compared step by step above)
        # every changed list is the spec's, so every rebuilt state is too; this guards the rebuilding
        for k, (step, st) in enumerate(zip(trace.steps[1:], states[1:]), start=1):
            d = _diff_tree(model.render_state(st), step.state, ("steps", k, "state"))
            if d:
                return fail(k, f"step {k}: the state rebuilt from steps[0].state and the changed cells differs "
                               f"from the spec's: {d[1]}", field_path(("steps", k, "changed")), k)
    if trace.kind == "deadlock":
        enabled = [a for a in model.actions if evaluate(a.guard, s)]
        term = model.terminal is not None and evaluate(model.terminal, s)
        ok = not enabled and not term
        return ReplayReport(ok, trace.kind, "deadlock", n, "deadlock confirmed" if ok else
                            f"the last state (step {n}) is not a deadlock")
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
               "to induction: step 0 is not known to be reachable)" if ok
               else f"{prop_name} holds in the last state (step {n})")
    elif trace.kind == "violation":
        ok = not holds
        msg = f"{prop_name} is violated after {steps}" if ok else f"{prop_name} holds in the last state (step {n})"
    elif trace.kind == "witness":
        ok = holds
        msg = f"{prop_name} is witnessed after {steps}" if ok else \
            f"{prop_name} does not hold in the last state (step {n})"
    elif trace.kind == "lasso":
        ok, msg = check_lasso(model, prop, ids, states, trace.loop)
    else:
        ok = not _goal_reachable(model, prop, s, search_limit)
        msg = (f"{prop_name}: no goal state is reachable from the state after {steps}" if ok
               else f"{prop_name}: a goal state is reachable from the last state (step {n})")
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
