"""Grounding: a spec and a resolved configuration become a fixed state layout and an ordered tuple
of ground actions whose expressions mention only state cells and literals (`ground`).

Every engine (Python, numpy, z3, Spark) consumes this one representation, so they cannot disagree
about what a row means. Static mistakes raise `SpecError` about the row, property, var, variant,
config, constant or domain at fault (its `subject`, which the loader locates in the spec's source).

The pieces: the shape of a spec (`shape.py`), which values may meet (`domain_check.py`), the
grounder of expressions and rows (`grounder.py`), the initial states (`initial.py`), the ground IR
(`ground_ir.py`), the layout (`layout.py`), folding and evaluation (`evaluate.py`), states by name
(`state_text.py`); this module puts them together.
"""
from __future__ import annotations

from contextlib import contextmanager

from .errors import ConfigError, SpecError
from .expr import Expr, show
from .ground_ir import GConst, GroundAction, GroundModel, GroundProperty
from .grounder import Grounder
from .initial import initial_states
from .model import AddRow, ResolvedConfig, Spec
from .shape import check_shape


@contextmanager
def _about(**subject):
    """A SpecError raised inside without a subject (grounding an expression that is not a row's) is about
    this part of the spec: a property, a var's init, an assumption, a field of the Spec."""
    try:
        yield
    except SpecError as err:
        if err.subject is not None:
            raise
        raise SpecError(err.message, **subject) from None


def config_value(gr: "Grounder", e: Expr, what: str) -> int:
    """The value of an expression over configuration constants only (assumptions, `applies`)."""
    g = gr.g(e, {}, None)
    if not isinstance(g, GConst):
        raise SpecError(f"{what} reads state; it may use configuration constants only: move the condition on the "
                        "state into a guard or a property")
    return g.value


def ground(spec: Spec, config: ResolvedConfig) -> GroundModel:
    """Expand every row into ground actions (in table order, then params in domain order)."""
    check_shape(spec)
    dup = _first_repeated(r.id for r in spec.rows)
    if dup is not None:
        raise SpecError("another row has this id already; row ids must be unique (traces and the report name rows "
                        "by them): rename one", dup, nth=2)
    gr = Grounder(spec, config)
    for a in spec.assumptions:
        what = f"the assumption {show(a.expr)}"
        with _about(assumption=a.message):
            gr.domains.expr(a.expr, what, assumption=a.message)
            holds = config_value(gr, a.expr, what)
        if not holds:
            raise ConfigError(f"configuration rejected: {a.message} (the assumption {show(a.expr)} is false for "
                              f"{_settings(config)}); choose values it accepts", assumption=a.message)
    actions: list[GroundAction] = []
    edited = _edited_rows(spec)
    for r in spec.rows:
        try:
            actions.extend(gr.row_actions(r, len(actions)))
        except SpecError as err:
            if r.id not in edited or err.subject is None or err.subject.kind != "row":
                raise
            raise SpecError(f"row {r.id} as the variant makes it: {err.message}", variant=spec.variant) from None
    if spec.variant is None:
        _check_variant_rows(gr, spec)
    inits = initial_states(gr, spec)
    dupp = _first_repeated(p.name for p in spec.properties)
    if dupp is not None:
        raise SpecError("another property has this name already; property names must be unique: rename one",
                        prop=dupp, nth=2)
    props = []
    skipped = []
    for p in tuple(spec.properties) + tuple(spec.invariants_for_induction):
        gr.domains.property(p)
        with _about(prop=p.name):
            if p.applies is not None and not config_value(gr, p.applies, "its `applies` condition"):
                skipped.append(p.name)
                continue
            if not gr.is_bool(p.expr):
                raise SpecError(f"its expression is not boolean: {show(p.expr)}; compare it with a value",
                                prop=p.name)
            expr = gr.g(p.expr, {}, None)
            when = gr.g(p.when, {}, None) if p.when is not None else None
        props.append(GroundProperty(p, expr, when))
    gr.domains.expr(spec.terminal, "the terminal condition", field="terminal")
    terminal = None
    if spec.terminal is not None:
        if not gr.is_bool(spec.terminal):
            raise SpecError(f"the terminal condition is not boolean: {show(spec.terminal)}; compare it with a value",
                            field="terminal")
        with _about(field="terminal"):
            terminal = gr.g(spec.terminal, {}, None)
    main = {p.name for p in spec.properties}
    return GroundModel(spec, config, gr.layout, tuple(actions), inits[0],
                       tuple(p for p in props if p.name in main), terminal, gr.env,
                       tuple(p for p in props if p.name not in main), tuple(skipped), inits=inits)


def _first_repeated(names) -> str | None:
    seen: set = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


def _edited_rows(spec: Spec) -> set[str]:
    """The ids of the rows the applied variant adds or edits: a mistake in one of them is the variant's."""
    if spec.variant is None:
        return set()
    return {e.row.id if isinstance(e, AddRow) else e.row for e in spec.variant_named(spec.variant).edits
            if hasattr(e, "row")}


def _check_variant_rows(gr: Grounder, spec: Spec) -> None:
    """The rows a variant adds or edits are type-checked with the spec, as its own rows are (a variant that
    compares across enums is a mistake before anyone checks it); a mistake is the variant's."""
    own = {id(r) for r in spec.rows}
    for v in spec.variants:
        for r in spec.with_variant(v.name).rows:
            if id(r) in own:
                continue
            try:
                for c in r.guard:
                    if not gr.is_bool(c):
                        raise SpecError(f"guard conjunct {show(c)} is not boolean (an integer expression); compare it "
                                        "with a value", r.id)
                gr.domains.row(r)
            except SpecError as err:
                raise SpecError(f"row {r.id} as the variant makes it: {err.message}", variant=v.name) from None


def _settings(config: ResolvedConfig) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.values) or "this configuration"
