"""Compile ground actions and properties into generated Python functions over state tuples.

One generated function `expand(s, fp, out)` tests every guard in action order and appends
`(action_id, successor, successor_fp)` for each enabled action, updating the Zobrist fingerprint
incrementally for the cells an action writes. Property checks compile the same way. Generated
source is kept on the object (`.source`) for debugging.
"""
from __future__ import annotations

from txncheck.spec.errors import EvaluationError
from txncheck.spec.ground_ir import BOOL_OPS, GCell, GConst, GDyn, GExpr, GOp, GroundModel, GTable

from .fingerprint import Fingerprinter

_PYOP = {"+": "+", "-": "-", "*": "*", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Emitter:
    def __init__(self):
        self.tables: list[tuple[int, ...]] = []

    def expr(self, e: GExpr) -> str:
        if isinstance(e, GConst):
            return str(e.value)
        if isinstance(e, GCell):
            return f"s[{e.pos}]"
        if isinstance(e, GDyn):
            return f"s[{self.dyn_pos(e)}]"
        if isinstance(e, GTable):
            k = len(self.tables)
            self.tables.append(e.values)
            return f"_T{k}[_chk({self.expr(e.index)}, {len(e.values)}, 'table')]"
        a = e.args
        if e.op == "and":
            return "(" + " and ".join(self.expr(x) for x in a) + ")"
        if e.op == "or":
            return "(" + " or ".join(self.expr(x) for x in a) + ")"
        if e.op == "not":
            return f"(not {self.expr(a[0])})"
        if e.op == "implies":
            return f"((not {self.expr(a[0])}) or {self.expr(a[1])})"
        if e.op == "ite":
            return f"({self.value(a[1])} if {self.expr(a[0])} else {self.value(a[2])})"
        if e.op in ("min", "max"):
            return f"{e.op}({', '.join(self.value(x) for x in a)})"
        if e.op == "//":
            return f"_div({self.value(a[0])}, {self.value(a[1])})"
        if e.op == "%":
            return f"_mod({self.value(a[0])}, {self.value(a[1])})"
        if e.op in _PYOP:
            return "(" + f" {_PYOP[e.op]} ".join(self.value(x) for x in a) + ")"
        raise ValueError(f"unknown operator {e.op}")

    def value(self, e: GExpr) -> str:
        """An expression used as an integer (booleans become 0/1)."""
        if isinstance(e, GOp) and e.op in BOOL_OPS:
            return f"(1 if {self.expr(e)} else 0)"
        return self.expr(e)

    def dyn_pos(self, e: GDyn) -> str:
        parts = [str(e.base)]
        for x, stride, size in e.terms:
            ix = f"_chk({self.value(x)}, {size}, {e.var!r})"
            parts.append(ix if stride == 1 else f"{ix}*{stride}")
        return " + ".join(parts)


def _chk(i, size, what):
    if 0 <= i < size:
        return i
    raise EvaluationError(f"computed index {i} of {what} is outside 0..{size - 1}")


def _div(a, b):
    if b == 0:
        raise EvaluationError("division by zero")
    return a // b


def _mod(a, b):
    if b == 0:
        raise EvaluationError("division by zero")
    return a % b


class CompiledModel:
    """Generated Python for one ground model: `expand`, property checks, and `fingerprint`."""

    def __init__(self, model: GroundModel):
        self.model = model
        self.fpr = Fingerprinter(model.layout)
        em = _Emitter()
        lo, hi = model.layout.cell_lo, model.layout.cell_hi
        lines = ["def expand(s, fp, out):"]
        if not model.actions:
            lines.append("    return")
        for a in model.actions:
            lines.append(f"    # {a.label}")
            lines.append(f"    if {em.expr(a.guard)}:")
            body = []
            writes = []
            for k, (t, v) in enumerate(a.updates):
                body.append(f"v{k} = {em.value(v)}")
                if isinstance(t, GCell):
                    writes.append((k, str(t.pos), t.pos))
                else:
                    body.append(f"p{k} = {em.dyn_pos(t)}")
                    writes.append((k, f"p{k}", None))
            body.append("t = list(s)")
            body.append("f = fp")
            dynamic = any(p is None for _, _, p in writes)
            if dynamic and len(writes) > 1:
                names = ", ".join(p for _, p, _ in writes)
                body.append(f"if len({{{names}}}) != {len(writes)}: _dup({a.id})")
            for k, pexpr, pos in writes:
                v = f"v{k}"
                if pos is not None:
                    const = isinstance(a.updates[k][1], GConst)
                    if not const:
                        body.append(f"if not {lo[pos]} <= {v} <= {hi[pos]}: _oob({a.id}, {pos}, {v})")
                    body.append(f"o = s[{pos}]")
                    body.append(f"if o != {v}: f ^= Z[{pos}][o - {lo[pos]}] ^ Z[{pos}][{v} - {lo[pos]}]; t[{pos}] = {v}")
                else:
                    body.append(f"if not LO[{pexpr}] <= {v} <= HI[{pexpr}]: _oob({a.id}, {pexpr}, {v})")
                    body.append(f"o = s[{pexpr}]")
                    body.append(f"if o != {v}: f ^= Z[{pexpr}][o - LO[{pexpr}]] ^ Z[{pexpr}][{v} - LO[{pexpr}]]; t[{pexpr}] = {v}")
            body.append(f"out.append(({a.id}, tuple(t), f))")
            lines.extend("        " + b for b in body)
        # properties: one function per property returning truth of its expression
        props = []
        for i, p in enumerate(model.properties):
            props.append(f"def prop_{i}(s):\n    return {em.expr(p.expr)}")
            if p.when is not None:
                props.append(f"def when_{i}(s):\n    return {em.expr(p.when)}")
        term = f"def terminal(s):\n    return {em.expr(model.terminal) if model.terminal is not None else 'False'}"
        self.source = "\n".join(lines) + "\n\n" + "\n\n".join(props + [term]) + "\n"
        ns = {"Z": self.fpr.table, "LO": lo, "HI": hi, "_chk": _chk, "_div": _div, "_mod": _mod,
              "_oob": self._oob, "_dup": self._dup}
        for k, t in enumerate(em.tables):
            ns[f"_T{k}"] = t
        exec(compile(self.source, f"<txncheck:{model.spec.name}>", "exec"), ns)
        self.expand = ns["expand"]
        self.prop_fns = {p.name: ns[f"prop_{i}"] for i, p in enumerate(model.properties)}
        self.when_fns = {p.name: ns[f"when_{i}"] for i, p in enumerate(model.properties) if p.when is not None}
        self.terminal = ns["terminal"]

    def _oob(self, aid, pos, v):
        a = self.model.actions[aid]
        lay = self.model.layout
        raise EvaluationError(f"assigns {v} to {lay.cell_names[pos]}, outside its domain "
                              f"{lay.cell_lo[pos]}..{lay.cell_hi[pos]} (action {a.label})", a.row_id)

    def _dup(self, aid):
        a = self.model.actions[aid]
        raise EvaluationError(f"two updates of one cell in one step (action {a.label})", a.row_id)

    def successors(self, s, fp=None):
        out: list = []
        try:
            self.expand(s, self.fpr.of(s) if fp is None else fp, out)
        except EvaluationError as err:
            if err.state is None:
                err.state = self.model.render_state(s)
            raise
        return out
