"""Ground expressions (`txncheck.spec.ground_ir`) as z3 terms.

A *state* is a list of z3 terms, one per cell of the layout: a z3 Bool for a cell of a boolean
var, a z3 Int (constrained to its domain by `domain_constraints`) for every other cell. The
encoder follows the reference interpreter `ground.evaluate` exactly:

- integers and booleans mix as in Python (a boolean is 0/1 in arithmetic, an integer is true when
  non-zero);
- `//` and `%` are Python's floor division and modulo;
- a computed index (`GDyn`, `GTable`) becomes a case split over the index's range; the
  out-of-range case, an evaluation error in the reference semantics, is reported separately by
  `defined`, which mirrors the interpreter's short-circuit evaluation of and/or/implies/ite.

Every encoding is memoised per state by the identity of the ground expression (ground models
share subterms, and the dataclasses' structural hash would be recomputed on every lookup).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from txncheck.spec.ground_ir import GCell, GConst, GDyn, GExpr, GOp, GroundModel, GTable

_CMP = {"==", "!=", "<", "<=", ">", ">="}


def is_bool_cell(m: GroundModel, pos: int) -> bool:
    vl = m.layout.vars[m.layout.cell_var[pos]]
    return vl.var.domain.is_bool


def make_state(m: GroundModel, tag: str) -> list:
    """Fresh z3 constants for every cell, named `<tag>.<cell name>`."""
    out = []
    for pos, name in enumerate(m.layout.cell_names):
        n = f"{tag}.{name}"
        out.append(z3.Bool(n) if is_bool_cell(m, pos) else z3.Int(n))
    return out


def domain_constraints(m: GroundModel, state: list) -> list:
    """Each non-boolean cell within its var's domain (the type bounds)."""
    out = []
    lo, hi = m.layout.cell_lo, m.layout.cell_hi
    for pos, x in enumerate(state):
        if z3.is_bool(x):
            continue
        if lo[pos] == hi[pos]:
            out.append(x == lo[pos])
        else:
            out.append(z3.And(x >= lo[pos], x <= hi[pos]))
    return out


def as_bool(x):
    if z3.is_bool(x):
        return x
    if z3.is_int_value(x):
        return z3.BoolVal(x.as_long() != 0)
    return x != 0


def as_int(x):
    if z3.is_bool(x):
        if z3.is_true(x):
            return z3.IntVal(1)
        if z3.is_false(x):
            return z3.IntVal(0)
        return z3.If(x, z3.IntVal(1), z3.IntVal(0))
    return x


def value_of(model: z3.ModelRef, x) -> int:
    v = model.eval(x, model_completion=True)
    if z3.is_bool(v):
        return int(z3.is_true(v))
    return v.as_long()


@dataclass
class Encoder:
    """Encodes ground expressions over one state (a list of z3 terms, one per cell)."""

    state: list
    _memo: dict = field(default_factory=dict)
    _keep: list = field(default_factory=list)

    def _cached(self, kind: str, e: GExpr, compute):
        """`compute(e)`, memoised per (kind, identity of e) for the life of this encoder."""
        key = (kind, id(e))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = compute(e)
            self._keep.append(e)  # a live e keeps its id from being reused by another expression
        return hit

    # -- values -------------------------------------------------------------------------------
    def enc(self, e: GExpr):
        return self._cached("value", e, self._enc)

    def bool(self, e: GExpr):
        return as_bool(self.enc(e))

    def int(self, e: GExpr):
        return as_int(self.enc(e))

    def _enc(self, e: GExpr):
        if isinstance(e, GConst):
            return z3.IntVal(e.value)
        if isinstance(e, GCell):
            return self.state[e.pos]
        if isinstance(e, GDyn):
            return self.case_split(e.terms, lambda off: self.state[e.base + off])
        if isinstance(e, GTable):
            idx = self.int(e.index)
            vals = e.values
            out = z3.IntVal(vals[-1])
            for i in range(len(vals) - 2, -1, -1):
                out = z3.If(idx == i, z3.IntVal(vals[i]), out)
            return out
        assert isinstance(e, GOp), e
        op, args = e.op, e.args
        if op == "and":
            return z3.And(*[self.bool(a) for a in args])
        if op == "or":
            return z3.Or(*[self.bool(a) for a in args])
        if op == "not":
            return z3.Not(self.bool(args[0]))
        if op == "implies":
            return z3.Implies(self.bool(args[0]), self.bool(args[1]))
        if op == "ite":
            c = self.bool(args[0])
            a, b = self.enc(args[1]), self.enc(args[2])
            if z3.is_bool(a) and z3.is_bool(b):
                return z3.If(c, a, b)
            return z3.If(c, as_int(a), as_int(b))
        if op in _CMP:
            a, b = self.enc(args[0]), self.enc(args[1])
            if op in ("==", "!=") and z3.is_bool(a) and z3.is_bool(b):
                return a == b if op == "==" else a != b
            a, b = as_int(a), as_int(b)
            return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
                    "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()
        xs = [self.int(a) for a in args]
        if op == "+":
            return z3.Sum(*xs) if len(xs) > 2 else xs[0] + xs[1] if len(xs) == 2 else xs[0]
        if op == "-":
            return xs[0] - xs[1]
        if op == "*":
            return z3.Product(*xs) if len(xs) > 2 else xs[0] * xs[1]
        if op in ("//", "%"):
            a, b = xs
            if z3.is_int_value(b) and b.as_long() > 0:
                q = a / b  # SMT-LIB div is floor division for a positive divisor
            else:
                q = z3.If(b > 0, a / b, (-a) / (-b))
            return q if op == "//" else a - b * q
        if op in ("min", "max"):
            out = xs[0]
            for x in xs[1:]:
                out = z3.If(x < out, x, out) if op == "min" else z3.If(x > out, x, out)
            return out
        raise ValueError(f"unknown ground operator {op}")

    def case_split(self, terms, leaf):
        """`leaf(offset)` for the offset the computed index terms select (the last case stands for
        every out-of-range index; `defined` reports those)."""
        def go(k: int, off: int):
            if k == len(terms):
                return leaf(off)
            x, stride, size = terms[k]
            if isinstance(x, GConst):
                return go(k + 1, off + x.value * stride)
            idx = self.int(x)
            out = go(k + 1, off + (size - 1) * stride)
            for i in range(size - 2, -1, -1):
                a = go(k + 1, off + i * stride)
                out = z3.If(idx == i, a, out) if not (z3.is_bool(a) ^ z3.is_bool(out)) else \
                    z3.If(idx == i, as_int(a), as_int(out))
            return out
        return go(0, 0)

    def position_is(self, target: GDyn, pos: int):
        """The condition under which the computed target `target` denotes cell `pos`."""
        off = pos - target.base
        conds = []
        for x, stride, size in target.terms:
            i, off = divmod(off, stride)
            if not 0 <= i < size:
                return z3.BoolVal(False)
            if isinstance(x, GConst):
                if x.value != i:
                    return z3.BoolVal(False)
            else:
                conds.append(self.int(x) == i)
        if off != 0:
            return z3.BoolVal(False)
        return z3.And(*conds) if conds else z3.BoolVal(True)

    # -- definedness --------------------------------------------------------------------------
    def defined(self, e: GExpr):
        """True where the reference interpreter evaluates `e` without an index error."""
        return self._cached("defined", e, self._defined)

    def _defined(self, e: GExpr):
        T = z3.BoolVal(True)
        if not may_fail(e):
            return T
        if isinstance(e, GDyn):
            parts = []
            for x, _stride, size in e.terms:
                parts.append(self.defined(x))
                if isinstance(x, GConst):
                    if not 0 <= x.value < size:
                        return z3.BoolVal(False)
                    continue
                i = self.int(x)
                parts.append(z3.And(i >= 0, i < size))
            return _and(parts)
        if isinstance(e, GTable):
            i = self.int(e.index)
            return _and([self.defined(e.index), i >= 0, i < len(e.values)])
        op, args = e.op, e.args
        if op in ("and", "or", "implies"):
            # left to right, stopping where the interpreter stops
            parts, prefix = [], []
            for k, a in enumerate(args):
                d = self.defined(a)
                if not z3.is_true(d):
                    parts.append(z3.Implies(_and(prefix), d) if prefix else d)
                v = self.bool(a)
                if op == "and":
                    prefix.append(v)
                elif op == "or":
                    prefix.append(z3.Not(v))
                else:
                    prefix.append(v)
            return _and(parts)
        if op == "ite":
            dt, de = self.defined(args[1]), self.defined(args[2])
            branch = T if z3.is_true(dt) and z3.is_true(de) else z3.If(self.bool(args[0]), dt, de)
            return _and([self.defined(args[0]), branch])
        parts = [self.defined(a) for a in args]
        if op in ("//", "%"):
            parts.append(self.int(args[1]) != 0)
        return _and(parts)


_MAY_FAIL: dict = {}


def may_fail(e: GExpr) -> bool:
    """Can evaluating `e` raise (a computed index, a table lookup, a division)? Cached by identity."""
    key = id(e)
    hit = _MAY_FAIL.get(key)
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, (GConst, GCell)):
        out = False
    elif isinstance(e, (GDyn, GTable)):
        out = True
    elif e.op in ("//", "%") and not (isinstance(e.args[1], GConst) and e.args[1].value != 0):
        out = True
    else:
        out = any(may_fail(a) for a in e.args)
    _MAY_FAIL[key] = (e, out)
    return out


def _and(parts):
    parts = [p for p in parts if not z3.is_true(p)]
    if not parts:
        return z3.BoolVal(True)
    return parts[0] if len(parts) == 1 else z3.And(*parts)


SOLVERS = ("fd", "smt")


def make_solver(kind: str = "fd"):
    """`fd`: z3's finite-domain solver (bounded integers and booleans bit-blasted to its
    incremental SAT core; 10-15x faster on the shipped specs' unrollings). `smt`: the general
    incremental SMT solver, for comparison or if `fd` answers unknown."""
    if kind == "fd":
        return z3.SolverFor("QF_FD")
    if kind == "smt":
        return z3.Solver()
    raise ValueError(f"unknown solver {kind!r}; choose one of {', '.join(SOLVERS)}")


class Timer:
    """Wall time of each solver query, for the report (`queries` is a list of (label, seconds, result)).
    `on_query(label, seconds, result)`, if given, hears each one as it finishes (progress of long runs)."""

    def __init__(self, on_query=None):
        self.queries: list[tuple[str, float, str]] = []
        self.on_query = on_query

    def record(self, label: str, seconds: float, result: str) -> None:
        self.queries.append((label, seconds, result))
        if self.on_query is not None:
            self.on_query(label, seconds, result)

    def check(self, solver, label: str, *assumptions):
        t0 = time.perf_counter()
        r = solver.check(*assumptions)
        self.record(label, time.perf_counter() - t0, str(r))
        return r

    @property
    def total(self) -> float:
        return sum(q[1] for q in self.queries)
