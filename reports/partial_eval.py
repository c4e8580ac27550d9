"""Partial evaluation of spec expressions, for reading a table's transitions off its rows
(`status_graph`): constant folding under assumptions about some reads, and what assuming a
condition true or false tells about the reads it compares.

Folding is conservative: an expression folds to FALSE only when it is FALSE whatever the
expressions left symbolic hold. Expressions are compared by `expr_key` (an Expr's == builds an
expression instead of comparing).
"""
from __future__ import annotations

from typing import Mapping

from txncheck.spec.expr import FALSE, TRUE, ConfigRef, Lit, Member, Op, ParamRef, Quant, Read, Var
from txncheck.spec.model import Spec


def expr_key(e) -> tuple:
    """A structural key for an expression (Expr's == builds an expression instead of comparing)."""
    if isinstance(e, Lit):
        return ("L", int(e.value))
    if isinstance(e, Var):
        return ("R", e.name, ())
    if isinstance(e, Read):
        return ("R", e.var.name, tuple(expr_key(i) for i in e.index))
    if isinstance(e, ConfigRef):
        return ("C", e.name)
    if isinstance(e, ParamRef):
        return ("P", e.name)
    if isinstance(e, Op):
        return ("O", e.op, tuple(expr_key(a) for a in e.args))
    if isinstance(e, Quant):
        return ("Q", e.kind, e.var.name, expr_key(e.body), e.default)
    if isinstance(e, Member):
        return ("M", expr_key(e.subset), expr_key(e.elem))
    return ("?", id(e))


def _mentions(key: tuple, sub: tuple) -> bool:
    return key == sub or any(isinstance(x, tuple) and _mentions(x, sub) for x in key)


def _lit(v) -> Lit:
    return Lit(int(v))


def is_lit(e, v: bool | None = None) -> bool:
    if not isinstance(e, Lit):
        return False
    return v is None or bool(e.value) == v


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class Folder:
    """Constant folding under assumptions: `subst` maps an expression's key to a literal."""

    def __init__(self, consts: Mapping[str, int]):
        self.consts = consts

    def fold(self, e, subst: Mapping[tuple, Lit]):
        if isinstance(e, Lit):
            return e
        if isinstance(e, ConfigRef):
            return _lit(self.consts[e.name]) if e.name in self.consts else subst.get(expr_key(e), e)
        if isinstance(e, ParamRef):
            return subst.get(expr_key(e), e)
        if isinstance(e, Var):
            return subst.get(expr_key(e), e)
        if isinstance(e, Read):
            out = Read(e.var, tuple(self.fold(i, subst) for i in e.index))
            return subst.get(expr_key(out), out)
        if isinstance(e, Quant):   # what is known about a name the quantifier rebinds does not hold inside
            bound = ("P", e.var.name)
            body = self.fold(e.body, {k: v for k, v in subst.items() if not _mentions(k, bound)})
            if (e.kind == "exists" and is_lit(body, False)) or (e.kind == "forall" and is_lit(body, True)):
                return body
            out = Quant(e.kind, e.var, body, e.default)
            return subst.get(expr_key(out), out)
        if isinstance(e, Member):
            out = Member(self.fold(e.subset, subst), self.fold(e.elem, subst))
            return subst.get(expr_key(out), out)
        if isinstance(e, Op):
            out = self._op(e.op, [self.fold(a, subst) for a in e.args])
            return out if isinstance(out, Lit) else subst.get(expr_key(out), out)
        return e

    @staticmethod
    def _op(op: str, a: list):
        if op == "and":
            if any(is_lit(x, False) for x in a):
                return FALSE
            rest = [x for x in a if not is_lit(x, True)]
            return TRUE if not rest else rest[0] if len(rest) == 1 else Op("and", tuple(rest))
        if op == "or":
            if any(is_lit(x, True) for x in a):
                return TRUE
            rest = [x for x in a if not is_lit(x, False)]
            return FALSE if not rest else rest[0] if len(rest) == 1 else Op("or", tuple(rest))
        if op == "not":
            return (FALSE if a[0].value else TRUE) if isinstance(a[0], Lit) else Op("not", tuple(a))
        if op == "implies":
            if is_lit(a[0], False) or is_lit(a[1], True):
                return TRUE
            if is_lit(a[0], True):
                return a[1]
            return Op("implies", tuple(a))
        if op == "ite":
            if isinstance(a[0], Lit):
                return a[1] if a[0].value else a[2]
            return Op("ite", tuple(a))
        if all(isinstance(x, Lit) for x in a):
            vals = [int(x.value) for x in a]
            if op in _ARITH and len(vals) == 2:
                return _lit(_ARITH[op](*vals))
            if op == "min" and vals:
                return _lit(min(vals))
            if op == "max" and vals:
                return _lit(max(vals))
            if op in ("//", "%") and len(vals) == 2 and vals[1] != 0:
                return _lit(vals[0] // vals[1] if op == "//" else vals[0] % vals[1])
        return Op(op, tuple(a))


def assume(c, val: bool, subst: dict) -> dict:
    """`subst` plus what knowing that the (folded) condition `c` is `val` tells."""
    out = dict(subst)

    def go(x, v):
        out[expr_key(x)] = TRUE if v else FALSE
        if isinstance(x, Op):
            if x.op == "not":
                go(x.args[0], not v)
            elif (x.op == "and" and v) or (x.op == "or" and not v):
                for y in x.args:
                    go(y, v)
            elif x.op in ("==", "!=") and (v == (x.op == "==")):
                a, b = x.args
                if isinstance(b, Lit) and isinstance(a, (Read, Var)):
                    out[expr_key(a)] = b
                elif isinstance(a, Lit) and isinstance(b, (Read, Var)):
                    out[expr_key(b)] = a
    go(c, val)
    return out


def config_constants(spec: Spec, env: Mapping[str, object] | None) -> dict[str, int]:
    """Configuration constants as integers (a choice parameter's label -> its index)."""
    if not env:
        return {}
    choices = {p.name: tuple(p.choices) for p in spec.params if getattr(p, "choices", None)}
    out: dict[str, int] = {}
    for name, v in env.items():
        if isinstance(v, bool) or isinstance(v, int):
            out[name] = int(v)
        elif isinstance(v, str) and name in choices and v in choices[name]:
            out[name] = choices[name].index(v)
    return out
