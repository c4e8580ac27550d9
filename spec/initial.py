"""The initial states of a ground model: every combination of the vars' initial values that the spec's
`init` constraints allow (TLA+'s Init).

A var's `init` is one value, `OneOf(a, b, ...)` (every cell starts in each of them: TLA+'s `x \\in S`, or
`x \\in [D -> S]` for an array var) or `ANY` (every value of its domain). `Spec.init` holds conditions on
the whole state that an initial state must meet (the other conjuncts of Init). The states are listed in
increasing order of their cell values, so every engine starts from the same level 0.
"""
from __future__ import annotations

import itertools
import math

from .errors import EvaluationError, SpecError
from .evaluate import evaluate
from .expr import INIT_CHOICES, Lit, Op, OneOf, show
from .ground_ir import GConst, GExpr

MAX_INITIAL_STATES = 1_000_000  # combinations enumerated before the constraints filter them


def initial_states(gr, spec) -> tuple[tuple[int, ...], ...]:
    """`gr`: the spec's Grounder (its layout sized by the configuration)."""
    choices: list[tuple[int, ...]] = []
    for vl in gr.layout.vars:
        v = vl.var
        if v.init is None:
            raise SpecError("has no initial value; give it init=... (TLA+'s Init), or init=OneOf(a, b) for a "
                            "choice", var=v.name)
        gr.domains.init(v)
        choices.extend([_values(gr, vl)] * vl.size)
    constraints = _constraints(gr, spec)
    total = math.prod(len(c) for c in choices)
    if total > MAX_INITIAL_STATES:
        raise SpecError(f"the vars' initial values combine into {total:,} candidate initial states, more than "
                        f"{MAX_INITIAL_STATES:,}; narrow the OneOf/ANY choices (the `init` constraints are applied "
                        "to each candidate)", field="init")
    varying = [i for i, c in enumerate(choices) if len(c) > 1]
    base = [c[0] for c in choices]
    out = []
    for combo in itertools.product(*(choices[i] for i in varying)):
        s = list(base)
        for i, x in zip(varying, combo):
            s[i] = x
        s = tuple(s)
        if all(_holds(c, s) for c in constraints):
            out.append(s)
    if not out:
        raise SpecError("no combination of the vars' initial values satisfies the init constraints, so the spec has "
                        "no initial state; loosen a constraint or widen a var's OneOf", field="init")
    return tuple(sorted(out))


def _values(gr, vl) -> tuple[int, ...]:
    v = vl.var
    if v.init.__class__ not in INIT_CHOICES:
        if isinstance(v.init, Op) and v.init.op == "or" and all(isinstance(a, Lit) for a in v.init.args):
            raise SpecError(f"its initial value is {show(v.init)}, which is one value (their disjunction), not a "
                            "choice among several; write init=OneOf(a, b) for a choice", var=v.name)
        exprs = (v.init,)
    elif isinstance(v.init, OneOf):
        exprs = v.init.values
    else:  # ANY
        return tuple(range(vl.lo, vl.hi + 1))
    values = set()
    for e in exprs:
        try:
            g = gr.g(e, {}, None)
        except SpecError as err:
            raise SpecError(f"its initial value {show(e)}: {err.message}", var=v.name) from None
        if not isinstance(g, GConst):
            raise SpecError(f"its initial value must be constant, not {show(e)}; give a literal (or an expression "
                            "over configuration constants), and put conditions that relate vars in the spec's "
                            "`init` constraints", var=v.name)
        if not vl.lo <= g.value <= vl.hi:
            raise SpecError(f"its initial value {g.value} is outside its domain {v.domain.name} ({vl.lo}..{vl.hi}); "
                            "give a value within it", var=v.name)
        values.add(g.value)
    return tuple(sorted(values))


def _constraints(gr, spec) -> list[GExpr]:
    out = []
    for c in spec.init:
        gr.domains.expr(c, "an init constraint", field="init")
        if not gr.is_bool(c):
            raise SpecError(f"an init constraint is not boolean: {show(c)}; compare it with a value", field="init")
        try:
            out.append(gr.g(c, {}, None))
        except SpecError as err:
            raise SpecError(f"the init constraint {show(c)}: {err.message}", field="init") from None
    return out


def _holds(c: GExpr, s) -> bool:
    try:
        return bool(evaluate(c, s))
    except EvaluationError as err:
        raise SpecError(f"an init constraint cannot be evaluated in a candidate initial state: {err}; guard its "
                        "index with a condition", field="init") from None
