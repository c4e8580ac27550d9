"""Numpy code generation for the vector engine.

Ground guards, updates, properties and the terminal condition become generated Python source
whose statements are whole-column numpy operations over a column-major state matrix `C` (one
row of `C` per state cell, one column per state, dtype = the narrowest integer type that holds
every cell's domain).

Two evaluation modes share one emitter:

- *full*: cells are the rows of `C` (views, no copy); used for guards, properties, terminal.
- *rows*: cells are `C[pos][R]`, gathered once per function for the states `R` that enabled an
  action; used for update right-hand sides, computed targets and fingerprint deltas.

Static analysis keeps the hot path lean: each node carries an integer interval, so comparisons
decided by the domains fold to constants and arithmetic is done in the narrowest signed dtype
that cannot overflow. Subexpressions shared by several guards (CSE) are computed once per chunk.

Run-time errors follow the reference interpreter (`ground.evaluate`, which short-circuits `and`,
`or`, `implies` and `ite`): expressions that may fail (computed indices, table lookups, division)
carry an error mask combined with the same short-circuit rules, and a non-empty mask makes the
caller re-run the reference interpreter on the first failing state to raise its exact
`EvaluationError`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from txncheck.spec.ground_ir import BOOL_OPS, GCell, GConst, GDyn, GExpr, GOp, GTable

_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)
_CMP = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def signed_dtype(lo: int, hi: int):
    for t in _INT_TYPES:
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return np.dtype(t)
    raise OverflowError(f"values {lo}..{hi} do not fit in 64 bits")


def matrix_dtype(lo: int, hi: int):
    """The narrowest dtype for a state matrix whose cells range over lo..hi."""
    if lo >= 0 and hi <= 255:
        return np.dtype(np.uint8)
    return signed_dtype(lo, hi)


@dataclass
class Val:
    code: str               # Python expression (a local name or a literal)
    kind: str               # "const", "bool" (bool array) or "int" (int array)
    lo: int
    hi: int
    dtype: object = None    # numpy dtype of an int array
    err: str | None = None  # name of a bool array: rows where evaluating this raises

    @property
    def const(self) -> bool:
        return self.kind == "const"


def _cmp_static(op, a: Val, b: Val):
    """The comparison's value when the intervals decide it, else None."""
    if op == "==":
        if a.hi < b.lo or b.hi < a.lo:
            return 0
        if a.lo == a.hi == b.lo == b.hi:
            return 1
    elif op == "!=":
        r = _cmp_static("==", a, b)
        return None if r is None else 1 - r
    elif op == "<":
        if a.hi < b.lo:
            return 1
        if a.lo >= b.hi:
            return 0
    elif op == "<=":
        if a.hi <= b.lo:
            return 1
        if a.lo > b.hi:
            return 0
    elif op == ">":
        return _cmp_static("<", b, a)
    elif op == ">=":
        return _cmp_static("<=", b, a)
    return None


class Emitter:
    """Emits straight-line numpy code for ground expressions into `lines` (one function body)."""

    def __init__(self, prog: "Program", mode: str, indent: str = "    "):
        self.prog = prog
        self.mode = mode  # "full" or "rows"
        self.indent = indent
        self.lines: list[str] = []
        self.memo: dict[int, Val] = {}
        self.positions: dict[int, tuple[str, str | None]] = {}  # a computed position by its node, once
        self.clips: dict[tuple[str, int], str] = {}  # an index's range check, once per (code, size)
        self.cells: dict[int, str] = {}
        self.uses_index = False

    # -- helpers --------------------------------------------------------------------------
    def tmp(self, prefix="t") -> str:
        return self.prog.fresh(prefix)

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def cell(self, pos: int) -> str:
        name = self.cells.get(pos)
        if name is None:
            name = f"c{pos}"
            if self.mode == "full":
                self.emit(f"{name} = C[{pos}]")
            else:
                self.emit(f"{name} = C[{pos}][R]")
            self.cells[pos] = name
        return name

    def index_vector(self) -> str:
        """The state column of each evaluated row in `C` (arange in full mode, R in rows mode)."""
        self.uses_index = True
        return "_AR" if self.mode == "full" else "R"

    def as_bool(self, v: Val) -> Val:
        if v.kind == "const":
            return Val("True" if v.lo else "False", "const", int(bool(v.lo)), int(bool(v.lo)), err=v.err)
        if v.kind == "bool":
            return v
        if v.lo >= 0 and v.hi <= 1 and np.dtype(v.dtype).itemsize == 1:
            return Val(f"{v.code}.view(_bool)", "bool", 0, 1, err=v.err)
        if v.lo == v.hi == 0:
            return Val("False", "const", 0, 0, err=v.err)
        t = self.tmp()
        self.emit(f"{t} = {v.code} != 0")
        return Val(t, "bool", 0, 1, err=v.err)

    def as_int(self, v: Val, dt) -> str:
        if v.kind == "const":
            return str(int(v.lo))
        if v.kind == "bool":
            if np.dtype(dt) in (np.dtype(np.int8), np.dtype(np.uint8)):
                return f"{v.code}.view(_dt_{np.dtype(dt).name})"
            return f"{v.code}.astype(_dt_{np.dtype(dt).name})"
        if np.dtype(v.dtype) == np.dtype(dt):
            return v.code
        return f"{v.code}.astype(_dt_{np.dtype(dt).name})"

    def const(self, value: int) -> Val:
        value = int(value)
        return Val(str(value), "const", value, value)

    def or_err(self, *errs) -> str | None:
        errs = list(dict.fromkeys(e for e in errs if e))  # a mask named twice is ORed once
        if not errs:
            return None
        if len(errs) == 1:
            return errs[0]
        t = self.tmp("e")
        self.emit(f"{t} = " + " | ".join(errs))
        return t

    # -- expressions ----------------------------------------------------------------------
    def expr(self, e: GExpr) -> Val:
        key = self.prog.node_id(e)
        v = self.memo.get(key)
        if v is None:
            v = self._expr(e)
            self.memo[key] = v
        return v

    def _expr(self, e: GExpr) -> Val:
        lay = self.prog.layout
        if isinstance(e, GConst):
            return self.const(e.value)
        if isinstance(e, GCell):
            lo, hi = lay.cell_lo[e.pos], lay.cell_hi[e.pos]
            if lo == hi:
                return self.const(lo)
            return Val(self.cell(e.pos), "int", lo, hi, self.prog.dtype)
        if isinstance(e, GDyn):
            return self.dyn_read(e)
        if isinstance(e, GTable):
            return self.table(e)
        op, args = e.op, e.args
        if op in ("and", "or"):
            return self.andor(op, args)
        if op == "not":
            a = self.as_bool(self.expr(args[0]))
            if a.const:
                return Val("False" if a.lo else "True", "const", 1 - a.lo, 1 - a.lo, err=a.err)
            t = self.tmp()
            self.emit(f"{t} = ~{a.code}")
            return Val(t, "bool", 0, 1, err=a.err)
        if op == "implies":
            a = self.as_bool(self.expr(args[0]))
            b = self.as_bool(self.expr(args[1]))
            berr = None
            if b.err and not (a.const and not a.lo):
                if a.const:
                    berr = b.err
                else:
                    berr = self.tmp("e")
                    self.emit(f"{berr} = {b.err} & {a.code}")
            err = self.or_err(a.err, berr)
            if a.const:
                if not a.lo:
                    return Val("True", "const", 1, 1, err=err)
                return Val(b.code, b.kind, b.lo, b.hi, b.dtype, err)
            if b.const:
                if b.lo:
                    return Val("True", "const", 1, 1, err=err)
                t = self.tmp()
                self.emit(f"{t} = ~{a.code}")
                return Val(t, "bool", 0, 1, err=err)
            t = self.tmp()
            self.emit(f"{t} = ~{a.code} | {b.code}")
            return Val(t, "bool", 0, 1, err=err)
        if op == "ite":
            return self.ite(args)
        if op in _CMP:
            a, b = self.expr(args[0]), self.expr(args[1])
            err = self.or_err(a.err, b.err)
            s = _cmp_static(op, a, b)
            if s is not None:
                return Val(str(bool(s)), "const", s, s, err=err)
            ca = a.code if a.kind != "bool" else f"{a.code}.view(_dt_uint8)"
            cb = b.code if b.kind != "bool" else f"{b.code}.view(_dt_uint8)"
            if a.const and b.const:
                r = int(eval(f"{a.lo} {op} {b.lo}"))
                return Val(str(bool(r)), "const", r, r, err=err)
            t = self.tmp()
            self.emit(f"{t} = {ca} {_CMP[op]} {cb}")
            return Val(t, "bool", 0, 1, err=err)
        if op in ("+", "-", "*", "min", "max", "//", "%"):
            return self.arith(op, args)
        raise ValueError(f"unknown operator {op}")

    def andor(self, op, args) -> Val:
        is_and = op == "and"
        vals = []
        for x in args:
            v = self.as_bool(self.expr(x))
            vals.append(v)
        # short-circuit error semantics: arg k is evaluated only where args 0..k-1 did not decide
        errs = []
        prefix: list[str] = []
        decided_const = False
        for v in vals:
            if decided_const:
                break
            if v.err:
                if prefix:
                    e = self.tmp("e")
                    self.emit(f"{e} = {v.err} & " + " & ".join(prefix))
                    errs.append(e)
                else:
                    errs.append(v.err)
            if v.const:
                if bool(v.lo) != is_and:  # False in and / True in or: decides
                    decided_const = True
                continue
            prefix.append(v.code if is_and else f"~{v.code}")
        err = self.or_err(*errs)
        arrays = []
        for v in vals:
            if v.const:
                if bool(v.lo) != is_and:
                    r = 0 if is_and else 1
                    return Val(str(bool(r)), "const", r, r, err=err)
                continue
            arrays.append(v.code)
        if not arrays:
            r = 1 if is_and else 0
            return Val(str(bool(r)), "const", r, r, err=err)
        if len(arrays) == 1:
            return Val(arrays[0], "bool", 0, 1, err=err)
        t = self.tmp()
        self.emit(f"{t} = " + (" & " if is_and else " | ").join(arrays))
        return Val(t, "bool", 0, 1, err=err)

    def ite(self, args) -> Val:
        c = self.as_bool(self.expr(args[0]))
        x, y = self.expr(args[1]), self.expr(args[2])
        if c.const:
            v = x if c.lo else y
            return Val(v.code, v.kind, v.lo, v.hi, v.dtype, self.or_err(c.err, v.err))
        errs = [c.err]
        if x.err:
            e = self.tmp("e")
            self.emit(f"{e} = {x.err} & {c.code}")
            errs.append(e)
        if y.err:
            e = self.tmp("e")
            self.emit(f"{e} = {y.err} & ~{c.code}")
            errs.append(e)
        err = self.or_err(*errs)
        lo, hi = min(x.lo, y.lo), max(x.hi, y.hi)
        boolish = all(v.kind == "bool" or (v.const and v.lo in (0, 1)) for v in (x, y))
        if boolish:
            xb, yb = self.as_bool(x), self.as_bool(y)
            t = self.tmp()
            if xb.const and yb.const:
                if xb.lo and not yb.lo:
                    return Val(c.code, "bool", 0, 1, err=err)
                if yb.lo and not xb.lo:
                    self.emit(f"{t} = ~{c.code}")
                    return Val(t, "bool", 0, 1, err=err)
                return Val(xb.code, "const", xb.lo, xb.lo, err=err)
            self.emit(f"{t} = _np.where({c.code}, {xb.code}, {yb.code})")
            return Val(t, "bool", 0, 1, err=err)
        dt = signed_dtype(lo, hi)
        t = self.tmp()
        self.emit(f"{t} = _np.where({c.code}, {self.as_int(x, dt)}, {self.as_int(y, dt)}).astype(_dt_{dt.name}, copy=False)")
        return Val(t, "int", lo, hi, dt, err)

    def arith(self, op, args) -> Val:
        vals = [self.expr(a) for a in args]
        err = self.or_err(*(v.err for v in vals))
        if op == "+":
            lo, hi = sum(v.lo for v in vals), sum(v.hi for v in vals)
            bound = sum(max(abs(v.lo), abs(v.hi)) for v in vals)
            dt = signed_dtype(-bound, bound)
        elif op == "-":
            a, b = vals
            lo, hi = a.lo - b.hi, a.hi - b.lo
            bound = max(abs(a.lo), abs(a.hi)) + max(abs(b.lo), abs(b.hi))
            dt = signed_dtype(-bound, bound)
        elif op == "*":
            lo, hi = vals[0].lo, vals[0].hi
            for v in vals[1:]:
                cands = [lo * v.lo, lo * v.hi, hi * v.lo, hi * v.hi]
                lo, hi = min(cands), max(cands)
            bound = 1
            for v in vals:
                bound *= max(abs(v.lo), abs(v.hi), 1)
            dt = signed_dtype(-bound, bound)
        elif op in ("min", "max"):
            lo = (min if op == "min" else max)(v.lo for v in vals)
            hi = (min if op == "min" else max)(v.hi for v in vals)
            dt = signed_dtype(min(v.lo for v in vals), max(v.hi for v in vals))
        else:  # // and %
            a, b = vals
            m = max(abs(a.lo), abs(a.hi)) + 1
            mb = max(abs(b.lo), abs(b.hi))
            if op == "//":
                lo, hi = -m, m
            else:
                lo, hi = -mb, mb
            dt = signed_dtype(min(lo, -mb), max(hi, mb))
        if all(v.const for v in vals):
            from txncheck.spec.evaluate import apply_op
            try:
                r = apply_op(op, [v.lo for v in vals])
            except ZeroDivisionError:
                # only reachable when the expression is evaluated: mark every row as failing
                return Val("0", "const", 0, 0, err=self.or_err(err, self._every_row_fails()))
            return Val(str(r), "const", r, r, err=err)
        codes = [self.as_int(v, dt) for v in vals]
        t = self.tmp()
        if op in ("+", "-", "*"):
            self.emit(f"{t} = " + f" {op} ".join(codes))
        elif op in ("min", "max"):
            fn = "_np.minimum" if op == "min" else "_np.maximum"
            acc = codes[0]
            for c in codes[1:]:
                acc = f"{fn}({acc}, {c})"
            self.emit(f"{t} = {acc}")
        else:
            a, b = vals
            fn = "_np.floor_divide" if op == "//" else "_np.remainder"
            if b.lo <= 0 <= b.hi:
                if b.const:  # constant zero divisor
                    return Val("0", "const", 0, 0, err=self.or_err(err, self._every_row_fails()))
                e = self.tmp("e")
                self.emit(f"{e} = {codes[1]} == 0")
                err = self.or_err(err, e)
                self.emit(f"{t} = {fn}({codes[0]}, _np.where({e}, 1, {codes[1]}).astype(_dt_{dt.name}, copy=False))")
            else:
                self.emit(f"{t} = {fn}({codes[0]}, {codes[1]})")
        # make sure the result really is an array of dtype dt (a const-only op was folded above)
        self.emit(f"{t} = _np.asarray({t}, dtype=_dt_{dt.name})")
        return Val(t, "int", lo, hi, dt, err)

    def _n(self) -> str:
        return "C.shape[1]" if self.mode == "full" else "len(R)"

    def _every_row_fails(self) -> str:
        """An error mask set on every row (an operation that fails wherever it is evaluated)."""
        e = self.tmp("e")
        self.emit(f"{e} = _np.ones({self._n()}, dtype=_bool)")
        return e

    def _clipped(self, code: str, size: int, errs: list) -> str:
        """`code` clipped into [0, size), with an error mask (added to `errs`) where it was outside."""
        # keyed by code: a temporary is assigned once (its dtype cast, on the very next line, is the only re-assignment)
        ev = self.clips.get((code, size))
        if ev is None:  # the same index of several arrays (a read and the write of one cell, or a record's fields)
            ev = self.tmp("e")
            self.emit(f"{ev} = ({code} < 0) | ({code} >= {size})")
            self.clips[(code, size)] = ev
        if ev not in errs:
            errs.append(ev)
        return f"_np.clip({code}, 0, {size - 1})"

    def position(self, e: GDyn) -> tuple[str, str | None]:
        """Code for the computed cell position (int64 array) and its error mask; emitted once per function
        (an update's target is most often a cell its value reads)."""
        key = self.prog.node_id(e)
        got = self.positions.get(key)
        if got is None:
            got = self.positions[key] = self._position(e)
        return got

    def _position(self, e: GDyn) -> tuple[str, str | None]:
        parts = [str(e.base)]
        errs = []
        for x, stride, size in e.terms:
            v = self.expr(x)
            if v.err:
                errs.append(v.err)
            if v.const:
                if not 0 <= v.lo < size:
                    errs.append(self._every_row_fails())
                    parts.append("0")
                else:
                    parts.append(str(v.lo * stride))
                continue
            code = self.as_int(v, np.int64)
            if v.lo < 0 or v.hi >= size:
                code = self._clipped(code, size, errs)
            elif v.kind != "int" or np.dtype(v.dtype) != np.dtype(np.int64):
                code = f"{code}.astype(_dt_int64)" if v.kind == "int" else code
            parts.append(code if stride == 1 else f"{code} * {stride}")
        p = self.tmp("p")
        self.emit(f"{p} = _np.asarray(" + " + ".join(parts) + ", dtype=_dt_int64)")
        if all(part.lstrip("-").isdigit() for part in parts):
            self.emit(f"{p} = _np.full({self._n()}, {p}, dtype=_dt_int64)")
        return p, self.or_err(*errs)

    def dyn_read(self, e: GDyn) -> Val:
        lay = self.prog.layout
        p, err = self.position(e)
        idx = self.index_vector()
        t = self.tmp()
        self.emit(f"{t} = C[{p}, {idx}]")
        lo, hi = lay.cell_lo[e.base], lay.cell_hi[e.base]
        return Val(t, "int", lo, hi, self.prog.dtype, err)

    def table(self, e: GTable) -> Val:
        v = self.expr(e.index)
        n = len(e.values)
        name = self.prog.constant(np.asarray(e.values, dtype=signed_dtype(min(e.values), max(e.values))))
        errs = [v.err]
        if v.const:
            if not 0 <= v.lo < n:
                return Val("0", "const", 0, 0, err=self.or_err(v.err, self._every_row_fails()))
            r = e.values[v.lo]
            return Val(str(r), "const", r, r, err=v.err)
        code = self.as_int(v, np.int64)
        if v.lo < 0 or v.hi >= n:
            code = self._clipped(code, n, errs)
        sub = e.values[max(v.lo, 0): min(v.hi, n - 1) + 1] or e.values
        lo, hi = min(sub), max(sub)
        t = self.tmp()
        self.emit(f"{t} = {name}[{code}]")
        dt = signed_dtype(min(e.values), max(e.values))
        return Val(t, "int", lo, hi, dt, self.or_err(*errs))


class Program:
    """Shared state of one generated module: fresh names, constants, structural node ids."""

    def __init__(self, layout, dtype):
        self.layout = layout
        self.dtype = np.dtype(dtype)
        self.counter = 0
        self.consts: dict[str, object] = {}
        self._ids: dict[int, int] = {}
        self._keys: dict[tuple, int] = {}
        self._keep: list = []

    def fresh(self, prefix="t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value) -> str:
        name = f"_K{len(self.consts)}"
        self.consts[name] = value
        return name

    def node_id(self, e: GExpr) -> int:
        """A structural id: equal expressions (from different actions) get one id (for CSE)."""
        i = self._ids.get(id(e))
        if i is not None:
            return i
        if isinstance(e, GConst):
            key = ("c", e.value)
        elif isinstance(e, GCell):
            key = ("cell", e.pos)
        elif isinstance(e, GDyn):
            key = ("dyn", e.base) + tuple((self.node_id(x), st, sz) for x, st, sz in e.terms)
        elif isinstance(e, GTable):
            key = ("tab", e.values, self.node_id(e.index))
        else:
            key = ("op", e.op) + tuple(self.node_id(a) for a in e.args)
        i = self._keys.get(key)
        if i is None:
            i = len(self._keys)
            self._keys[key] = i
        self._ids[id(e)] = i
        self._keep.append(e)
        return i


def pinned_cells(guard: GExpr, layout) -> dict[int, int]:
    """Cells whose value a guard fixes (top-level conjuncts `cell == k`, `cell`, `not cell`)."""
    out: dict[int, int] = {}
    conj = guard.args if isinstance(guard, GOp) and guard.op == "and" else (guard,)
    for c in conj:
        if isinstance(c, GCell) and layout.cell_lo[c.pos] == 0 and layout.cell_hi[c.pos] == 1:
            out[c.pos] = 1
        elif isinstance(c, GOp) and c.op == "not" and isinstance(c.args[0], GCell):
            p = c.args[0].pos
            if layout.cell_lo[p] == 0 and layout.cell_hi[p] == 1:
                out[p] = 0
        elif isinstance(c, GOp) and c.op == "==":
            a, b = c.args
            if isinstance(a, GCell) and isinstance(b, GConst):
                out[a.pos] = b.value
            elif isinstance(b, GCell) and isinstance(a, GConst):
                out[b.pos] = a.value
    return out


__all__ = ["Emitter", "Program", "Val", "matrix_dtype", "signed_dtype", "pinned_cells", "BOOL_OPS"]
