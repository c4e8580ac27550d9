"""The shape of a spec: every part has the type it must have and names what exists (`check_shape`),
checked before grounding, so that a Python-level slip is a `SpecError` about its part rather than a
crash inside an engine or a setting silently ignored.
"""
from __future__ import annotations

import typing

from .domains import EnumDomain, describe
from .errors import ConfigError, SpecError
from .expr import Expr, ParamRef, Update, Var, show
from .model import Assume, ConfigParam, Edit, NamedConfig, Property, Row, SetParam, Spec, Symmetry, Table, Variant
from .sequence import Channel, Lane


def _a(obj) -> str:
    """A value as a message names it: `3 (int)`, `x + 1 (Op)`, `an IdSet`."""
    if isinstance(obj, (str, int, float, bool, Expr)):
        return f"{show(obj) if isinstance(obj, Expr) else repr(obj)} ({type(obj).__name__})"
    name = type(obj).__name__
    return ("an " if name[:1] in "AEIOU" else "a ") + name


def _items(values, what: str, cls, example: str, **subject) -> tuple:
    """`values` as a tuple of `cls` instances, else a SpecError about `subject` saying what was given."""
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, (tuple, list)):
        raise SpecError(f"{what} must be a tuple of {cls.__name__}, not {_a(values)}; e.g. {example}", **subject)
    for v in values:
        if not isinstance(v, cls):
            raise SpecError(f"{what} must hold {cls.__name__} objects, but one is {_a(v)}; e.g. {example}", **subject)
    return tuple(values)


def check_shape(spec: Spec) -> None:
    """The parts of a spec have the types they must have and refer to one another by names that exist,
    before grounding: a Python-level slip (a comparison where an update belongs, a dict where pairs do,
    a variant that edits a row that is not there) is a SpecError about its part, not a crash inside an
    engine or a setting silently ignored. Variants are checked against the spec they edit (not once one
    of them is applied)."""
    _items(spec.vars, "Spec(vars=...)", Var, 'vars=(rmState, tmState)', field="vars")
    for t in _items(spec.tables, "Spec(tables=...)", Table, 'tables=(Table("RM", rows=(...)),)', field="tables"):
        for r in _items(t.rows, f"the rows of table {t.actor}", Row, 'Table("RM", rows=(Row(...), ...))', table=t.actor):
            _items(r.updates, "its updates", Update, "updates=(x.set(1), arr[i].set(St.done))", row=r.id)
            _items(r.params, "its params", ParamRef, 'params=(Param("r", RM),)', row=r.id)
        if t.status is not None:
            status = next((v for v in spec.vars if v.name == t.status), None)
            if status is None:
                raise SpecError(f"status names var {t.status!r}, which the spec does not declare; give the name of the "
                                "var that holds the actor's state (or leave status out)", table=t.actor)
            if not isinstance(status.domain, EnumDomain):
                raise SpecError(f"status var {t.status} must have an enum domain (its values are the actor's states), "
                                f"not {describe(status.domain)}; name an enum var or leave status out", table=t.actor)
    _items(spec.properties, "Spec(properties=...)", Property, 'properties=(Always("Safe", expr),)', field="properties")
    _items(spec.invariants_for_induction, "Spec(invariants_for_induction=...)", Property,
           'invariants_for_induction=(Always("Inv", expr),)', field="invariants_for_induction")
    _items(spec.assumptions, "Spec(assumptions=...)", Assume, 'assumptions=(Assume(expr, "why"),)', field="assumptions")
    _items(spec.lanes, "Spec(lanes=...)", Lane, 'lanes=(Lane("TM"), Lane("RM", RM))', field="lanes")
    _items(spec.channels, "Spec(channels=...)", Channel, "channels=(Channel(...),)", field="channels")
    if isinstance(spec.init, Expr) or not all(isinstance(c, Expr) for c in spec.init):
        raise SpecError(f"init must be a tuple of conditions on the initial state, e.g. init=(x != y,), not "
                        f"{spec.init!r}", field="init")
    if spec.symmetry is not None and not isinstance(spec.symmetry, Symmetry):
        raise SpecError(f"symmetry must be a Symmetry, not {_a(spec.symmetry)}; e.g. symmetry=Symmetry((RM,))",
                        field="symmetry")
    if spec.symmetry is not None:
        for entry in spec.symmetry.first:
            if not (isinstance(entry, tuple) and len(entry) == 2
                    and any(entry[0] is d for d in spec.symmetry.domains)):
                raise SpecError(f"Symmetry(first=...) holds (domain, size) pairs over the symmetry's own domains, not "
                                f"{_a(entry)}; e.g. Symmetry((Part,), first=((Part, \"parts\"),))", field="symmetry")
    if spec.terminal is not None and not isinstance(spec.terminal, Expr):
        raise SpecError(f"terminal must be a condition (an expression), not {_a(spec.terminal)}", field="terminal")
    params = {}
    for p in _items(spec.params, "Spec(params=...)", ConfigParam, 'params=(ConfigParam("rm", 3, lo=1, hi=5),)',
                    field="params"):
        try:
            p.parse(p.default)
        except ConfigError as err:
            raise SpecError(f"its default {p.default!r} is not one of its own values: {err.message}; change the "
                            "default or the bounds", param=p.name) from None
        params[p.name] = p
    for c in _items(spec.configs, "Spec(configs=...)", NamedConfig, 'configs=(NamedConfig("tiny", (("rm", 3),)),)',
                    field="configs"):
        _pairs(c.values, params, "its values", config=c.name)
    if spec.variant is not None:
        return
    names = {p.name for p in spec.properties}
    configs = {c.name for c in spec.configs}
    edits = typing.get_args(Edit)
    for v in _items(spec.variants, "Spec(variants=...)", Variant, 'variants=(Variant("name", "doc", ("Safe",), (...)),)',
                    field="variants"):
        if not isinstance(v.breaks, (tuple, list)) or any(b not in names for b in v.breaks):
            raise SpecError(f"breaks must name the properties the variant violates, a tuple such as "
                            f"(\"{next(iter(sorted(names)), 'Safe')}\",), not {v.breaks!r}; the spec's properties are "
                            f"{', '.join(sorted(names)) or 'none'}", variant=v.name)
        if v.config not in configs:
            raise SpecError(f"config {v.config!r} is not a config of the spec; give config= one of "
                            f"{', '.join(sorted(configs))}" if configs else
                            f"it runs under config {v.config!r}, but the spec declares no named config; add "
                            f"NamedConfig({v.config!r}, ...) to its configs", variant=v.name)
        _pairs(v.settings, params, "its settings", variant=v.name)
        for e in _items(v.edits, "its edits", object, "edits=(DropConjunct(\"R-1\", 0),)", variant=v.name):
            if not isinstance(e, edits):
                raise SpecError(f"{_a(e)} is not an edit; use {', '.join(x.__name__ for x in edits)}",
                                variant=v.name)
            if isinstance(e, SetParam):
                _pairs(((e.name, e.value),), params, "a SetParam", variant=v.name)
        spec.with_variant(v.name)


def _pairs(values, params: dict, what: str, **subject) -> None:
    """(constant, value) pairs, each naming a declared constant with a value of its own."""
    if isinstance(values, dict) or not isinstance(values, (tuple, list)) or \
            not all(isinstance(x, (tuple, list)) and len(x) == 2 for x in values):
        raise SpecError(f"{what} must be (name, value) pairs, e.g. ((\"rm\", 3),), not {values!r}", **subject)
    for k, v in values:
        if k not in params:
            raise SpecError(f"{what} set '{k}', which is not a configuration constant of the spec; declared: "
                            f"{', '.join(sorted(params)) or 'none'}", **subject)
        try:
            params[k].parse(v)
        except ConfigError as err:
            raise SpecError(f"{what} set {k}={v!r}, but {err.message}", **subject) from None

