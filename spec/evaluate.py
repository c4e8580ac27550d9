"""Folding and the reference evaluator of ground expressions: what the scalar engine, replay and
error messages use, and what the compiled engines must agree with.
"""
from __future__ import annotations

from .errors import EvaluationError, SpecError
from .ground_ir import GCell, GConst, GDyn, GExpr, GOp, GroundAction, GroundModel, GTable


def apply_op(op: str, v: list[int]) -> int:
    if op == "+": return sum(v)
    if op == "-": return v[0] - v[1]
    if op == "*":
        out = 1
        for x in v:
            out *= x
        return out
    if op == "//":
        if v[1] == 0:
            raise ZeroDivisionError
        return v[0] // v[1]
    if op == "%":
        if v[1] == 0:
            raise ZeroDivisionError
        return v[0] % v[1]
    if op == "==": return int(v[0] == v[1])
    if op == "!=": return int(v[0] != v[1])
    if op == "<": return int(v[0] < v[1])
    if op == "<=": return int(v[0] <= v[1])
    if op == ">": return int(v[0] > v[1])
    if op == ">=": return int(v[0] >= v[1])
    if op == "and": return int(all(v))
    if op == "or": return int(any(v))
    if op == "not": return int(not v[0])
    if op == "implies": return int((not v[0]) or bool(v[1]))
    if op == "ite": return v[1] if v[0] else v[2]
    if op == "min": return min(v)
    if op == "max": return max(v)
    raise SpecError(f"unknown operator {op}")


def fold(op: str, args: tuple[GExpr, ...], row=None) -> GExpr:
    """Build `op(args)`, folding constants and simplifying boolean connectives."""
    if op == "and":
        flat = []
        for a in args:
            if isinstance(a, GConst):
                if not a.value:
                    return GConst(0)
                continue
            flat.extend(a.args if isinstance(a, GOp) and a.op == "and" else (a,))
        return GConst(1) if not flat else flat[0] if len(flat) == 1 else GOp("and", tuple(flat))
    if op == "or":
        flat = []
        for a in args:
            if isinstance(a, GConst):
                if a.value:
                    return GConst(1)
                continue
            flat.extend(a.args if isinstance(a, GOp) and a.op == "or" else (a,))
        return GConst(0) if not flat else flat[0] if len(flat) == 1 else GOp("or", tuple(flat))
    if op == "implies":
        a, b = args
        if isinstance(a, GConst):
            return GConst(1) if not a.value else b
        if isinstance(b, GConst):
            return GConst(1) if b.value else fold("not", (a,), row)
    if op in ("min", "max") and len(args) == 1:
        return args[0]
    if op == "ite" and isinstance(args[0], GConst):
        return args[1] if args[0].value else args[2]
    if op == "+":
        consts = sum(a.value for a in args if isinstance(a, GConst))
        rest = tuple(a for a in args if not isinstance(a, GConst))
        if not rest:
            return GConst(consts)
        if consts:
            rest = rest + (GConst(consts),)
        return rest[0] if len(rest) == 1 else GOp("+", rest)
    if all(isinstance(a, GConst) for a in args):
        try:
            return GConst(apply_op(op, [a.value for a in args]))
        except ZeroDivisionError:
            raise SpecError("divides by zero (its divisor is 0 here, whatever the state); change the divisor or guard it", row) from None
    if op == "-" and isinstance(args[1], GConst) and args[1].value == 0:
        return args[0]
    return GOp(op, args)


def evaluate(e: GExpr, s, row: str | None = None) -> int:
    """Reference interpreter of ground expressions over a state tuple (replay, tests, messages)."""
    if isinstance(e, GConst):
        return e.value
    if isinstance(e, GCell):
        return s[e.pos]
    if isinstance(e, GDyn):
        return s[dyn_pos(e, s, row)]
    if isinstance(e, GTable):
        i = evaluate(e.index, s, row)
        if not 0 <= i < len(e.values):
            raise EvaluationError(f"a subset membership test reads position {i}, outside its table; keep the "
                                  "subset and the element within their domains", row)
        return e.values[i]
    if e.op == "and":
        return int(all(evaluate(a, s, row) for a in e.args))
    if e.op == "or":
        return int(any(evaluate(a, s, row) for a in e.args))
    if e.op == "implies":
        return int((not evaluate(e.args[0], s, row)) or bool(evaluate(e.args[1], s, row)))
    if e.op == "ite":
        return evaluate(e.args[1], s, row) if evaluate(e.args[0], s, row) else evaluate(e.args[2], s, row)
    try:
        return apply_op(e.op, [evaluate(a, s, row) for a in e.args])
    except ZeroDivisionError:
        raise EvaluationError("division by zero; add a guard that keeps the divisor non-zero", row) from None


def dyn_pos(e: GDyn, s, row=None) -> int:
    pos = e.base
    for x, stride, size in e.terms:
        i = evaluate(x, s, row)
        if not 0 <= i < size:
            raise EvaluationError(f"computed index {i} of {e.var} is outside 0..{size - 1}; add a guard that keeps "
                                  "it in range, or widen the index domain", row)
        pos += i * stride
    return pos


def successor(m: GroundModel, a: GroundAction, s) -> tuple[int, ...]:
    """Reference successor (interpreted); checks computed targets and assigned values."""
    writes = []
    for t, v in a.updates:
        pos = t.pos if isinstance(t, GCell) else dyn_pos(t, s, a.row_id)
        writes.append((pos, evaluate(v, s, a.row_id)))
    out = list(s)
    seen = set()
    for pos, val in writes:
        if pos in seen:
            raise EvaluationError(f"two updates of cell {m.layout.cell_names[pos]} in one step; guard the row so "
                                  "the computed indices differ, or write one update", a.row_id)
        seen.add(pos)
        if not m.layout.cell_lo[pos] <= val <= m.layout.cell_hi[pos]:
            raise EvaluationError(
                f"assigns {val} to {m.layout.cell_names[pos]}, outside its domain {m.layout.cell_lo[pos]}.."
                f"{m.layout.cell_hi[pos]}; add a guard that keeps the value in range, or widen the domain", a.row_id)
        out[pos] = val
    return tuple(out)


def dyn_cells(x: GDyn) -> list[int]:
    """Every cell a computed position can denote: a constant index term fixes its coordinate, a
    computed one ranges over its size (an out-of-range index is an evaluation error, not a read)."""
    offs = [0]
    for ix, stride, size in x.terms:
        if isinstance(ix, GConst):
            if not 0 <= ix.value < size:
                return []
            offs = [o + ix.value * stride for o in offs]
        else:
            offs = [o + i * stride for o in offs for i in range(size)]
    return [x.base + o for o in offs]


def cells_read(e: GExpr) -> set[int]:
    """Cells an expression may read (a computed read: every cell its position can denote)."""
    out: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, GCell):
            out.add(x.pos)
        elif isinstance(x, GDyn):
            out.update(dyn_cells(x))
            stack.extend(t[0] for t in x.terms)
        elif isinstance(x, GOp):
            stack.extend(x.args)
        elif isinstance(x, GTable):
            stack.append(x.index)
    return out


# ---- why an expression has its value ----------------------------------------------------------------
def reads(e: GExpr, s) -> set[int]:
    """The cells evaluating `e` in state `s` reads: a computed position's index cells and the one cell
    it denotes in `s`, an `ite`'s condition and the branch taken. Fixing these cells fixes `e`'s value."""
    out: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, GCell):
            out.add(x.pos)
        elif isinstance(x, GDyn):
            out.add(dyn_pos(x, s))
            stack.extend(t[0] for t in x.terms)
        elif isinstance(x, GTable):
            stack.append(x.index)
        elif isinstance(x, GOp):
            if x.op == "ite":
                stack.extend((x.args[0], x.args[1] if evaluate(x.args[0], s) else x.args[2]))
            else:
                stack.extend(x.args)
    return out


def explain(e: GExpr, s) -> set[int]:
    """Cells of state `s` that fix the truth value of the boolean expression `e`: in every state that
    agrees with `s` on them, `e` has the truth value it has in `s`. A false `and` is explained by its
    first false conjunct, a true `or` by its first true disjunct, a true `and` and a false `or` by all
    of their operands; `not` flips what is explained; a false `implies` by its antecedent (true) and
    its consequent (false), a true one by a false antecedent or else its consequent; any other
    expression (a comparison, a cell) by the cells it reads. Quantifiers are and/or after grounding,
    so a false `∀` names one counterexample. An expression that cannot be evaluated in `s` (a computed
    index out of range, only in a made-up state) is explained by every cell it may read."""
    try:
        return _why(e, s, bool(evaluate(e, s)))
    except EvaluationError:
        return cells_read(e)


def _why(e: GExpr, s, value: bool) -> set[int]:
    if isinstance(e, GOp):
        op, args = e.op, e.args
        if op in ("and", "or"):
            decisive = value if op == "or" else not value  # a true disjunct, a false conjunct
            if decisive:
                a = next(a for a in args if bool(evaluate(a, s)) == value)
                return _why(a, s, value)
            return set().union(*(_why(a, s, value) for a in args))
        if op == "not":
            return _why(args[0], s, not value)
        if op == "implies":
            a, b = args
            if not value:
                return _why(a, s, True) | _why(b, s, False)
            return _why(a, s, False) if not evaluate(a, s) else _why(b, s, True)
        if op == "ite":
            c = bool(evaluate(args[0], s))
            return _why(args[0], s, c) | _why(args[1] if c else args[2], s, value)
    return reads(e, s)
