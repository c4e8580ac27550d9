"""Grounding: a spec and a resolved configuration become a fixed state layout and an ordered tuple
of ground actions whose expressions mention only state cells and literals.

Parameters and quantifiers are expanded, configuration constants folded, constant indices turned
into cell positions; computed indices stay as `GDyn` reads, range-checked when evaluated. Every
engine (Python, numpy, z3, Spark) consumes this one representation, so they cannot disagree
about what a row means. Static mistakes (unknown var, index or assignment out of domain, two
updates of one cell, a non-boolean guard) raise `SpecError` naming the row.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping

from .domains import BOOL, Domain, EnumDomain, IdSet, IntRange, SubsetDomain
from .errors import ConfigError, EvaluationError, SpecError
from .expr import ConfigRef, Expr, Lit, Member, Op, ParamRef, Quant, Read, Var, show
from .model import Property, ResolvedConfig, Row, Spec


# ---- ground expressions ---------------------------------------------------------------------
class GExpr:
    __slots__ = ()


@dataclass(frozen=True)
class GConst(GExpr):
    value: int


@dataclass(frozen=True)
class GCell(GExpr):
    pos: int


@dataclass(frozen=True)
class GDyn(GExpr):
    """A read (or write target) at a computed position: base + Σ index_k·stride_k, each index_k
    (already shifted to start at 0) range-checked against size_k."""

    var: str
    base: int
    terms: tuple[tuple[GExpr, int, int], ...]  # (index expr shifted to 0, stride, size)


@dataclass(frozen=True)
class GOp(GExpr):
    op: str
    args: tuple[GExpr, ...]


@dataclass(frozen=True)
class GTable(GExpr):
    """A constant table indexed by a computed expression (e.g. subset membership)."""

    values: tuple[int, ...]
    index: GExpr


BOOL_OPS = {"==", "!=", "<", "<=", ">", ">=", "and", "or", "not", "implies"}


# ---- layout ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class VarLayout:
    var: Var
    offset: int
    dims: tuple[int, ...]
    index_lo: tuple[int, ...]
    strides: tuple[int, ...]
    lo: int
    hi: int

    @property
    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass(frozen=True)
class Layout:
    vars: tuple[VarLayout, ...]
    width: int
    cell_lo: tuple[int, ...]
    cell_hi: tuple[int, ...]
    cell_names: tuple[str, ...]
    cell_var: tuple[int, ...]  # index into vars

    def var(self, name: str) -> VarLayout:
        for v in self.vars:
            if v.var.name == name:
                return v
        raise KeyError(name)


def build_layout(spec: Spec, env: Mapping[str, object]) -> Layout:
    out, offset = [], 0
    lo_list, hi_list, names, owner = [], [], [], []
    seen = set()
    for vi, v in enumerate(spec.vars):
        if v.name in seen:
            raise SpecError(f"var {v.name} is declared twice")
        seen.add(v.name)
        dom_vals = v.domain.values(env)
        idx_vals = [d.values(env) for d in v.index]
        dims = tuple(len(r) for r in idx_vals)
        strides = []
        s = 1
        for d in reversed(dims):
            strides.append(s)
            s *= d
        strides = tuple(reversed(strides))
        vl = VarLayout(v, offset, dims, tuple(r.start for r in idx_vals), strides,
                       dom_vals.start, dom_vals.stop - 1)
        for combo in itertools.product(*idx_vals):
            label = v.name + "".join(f"[{d.label(i, env)}]" for d, i in zip(v.index, combo))
            names.append(label)
            lo_list.append(vl.lo)
            hi_list.append(vl.hi)
            owner.append(vi)
        offset += vl.size
        out.append(vl)
    return Layout(tuple(out), offset, tuple(lo_list), tuple(hi_list), tuple(names), tuple(owner))


# ---- ground actions and properties ----------------------------------------------------------
@dataclass(frozen=True)
class GroundAction:
    id: int
    row: Row
    params: tuple[tuple[str, int], ...]
    label: str
    guard: GExpr
    updates: tuple[tuple[GExpr, GExpr], ...]  # (GCell or GDyn target, value)

    @property
    def row_id(self) -> str:
        return self.row.id


@dataclass(frozen=True)
class GroundProperty:
    prop: Property
    expr: GExpr
    when: GExpr | None

    @property
    def name(self) -> str:
        return self.prop.name

    @property
    def kind(self) -> str:
        return self.prop.kind


@dataclass(frozen=True)
class GroundModel:
    spec: Spec
    config: ResolvedConfig
    layout: Layout
    actions: tuple[GroundAction, ...]
    init: tuple[int, ...]
    properties: tuple[GroundProperty, ...]
    terminal: GExpr | None
    env: Mapping[str, object] = field(default_factory=dict)
    strengthening: tuple[GroundProperty, ...] = ()
    not_applicable: tuple[str, ...] = ()  # properties whose `applies` is false under this config

    @property
    def width(self) -> int:
        return self.layout.width

    def render_state(self, state) -> dict:
        return render_state(self.layout, self.env, state)


def render_state(layout: Layout, env, state) -> dict:
    """The state by named var: scalars as labels, arrays as nested dicts keyed by index labels."""
    out: dict = {}
    for vl in layout.vars:
        v = vl.var
        vals = state[vl.offset: vl.offset + vl.size]
        if not v.index:
            out[v.name] = _label(v.domain, vals[0], env)
            continue
        idx_vals = [d.values(env) for d in v.index]
        nested: dict = {}
        for k, combo in enumerate(itertools.product(*idx_vals)):
            node = nested
            for d, i in zip(v.index[:-1], combo[:-1]):
                node = node.setdefault(str(d.label(i, env)), {})
            node[str(v.index[-1].label(combo[-1], env))] = _label(v.domain, vals[k], env)
        out[v.name] = nested
    return out


def parse_state(layout: Layout, env, rendered: dict) -> tuple[int, ...]:
    """The inverse of `render_state`: a state by named var back to cell values. Raises SpecError
    naming the first var or label that does not fit the layout."""
    if not isinstance(rendered, dict):
        raise SpecError(f"a state is an object by var name, not {type(rendered).__name__}")
    cells: list[int] = []
    for vl in layout.vars:
        v = vl.var
        if v.name not in rendered:
            raise SpecError(f"the state has no var {v.name}")
        values = {str(_label(v.domain, x, env)): x for x in range(vl.lo, vl.hi + 1)}

        def value(label, where: str) -> int:
            got = values.get(str(label))
            if got is None:
                raise SpecError(f"{where} = {label!r} is not a value of its domain {v.domain.name}")
            return got

        if not v.index:
            cells.append(value(rendered[v.name], v.name))
            continue
        idx_vals = [d.values(env) for d in v.index]
        for combo in itertools.product(*idx_vals):
            node, where = rendered[v.name], v.name
            for d, i in zip(v.index, combo):
                key = str(d.label(i, env))
                if not isinstance(node, dict) or key not in node:
                    raise SpecError(f"the state has no {where}[{key}]")
                node, where = node[key], f"{where}[{key}]"
            cells.append(value(node, where))
    return tuple(cells)


def _label(domain: Domain, value: int, env):
    value = int(value)
    if domain.is_bool:
        return bool(value)
    lab = domain.label(value, env)
    return lab


# ---- grounding ------------------------------------------------------------------------------
class _Grounder:
    def __init__(self, spec: Spec, config: ResolvedConfig):
        self.spec = spec
        self.env = config.env
        self.layout = build_layout(spec, self.env)
        self.var_by_name = {vl.var.name: vl for vl in self.layout.vars}
        self.choice_index = {p.name: p.choices for p in spec.params if p.choices}

    # type inference on the IR: is this expression boolean?
    def is_bool(self, e: Expr) -> bool:
        if isinstance(e, Lit):
            return e.domain is not None and e.domain.is_bool
        if isinstance(e, Var):
            return e.domain.is_bool and not e.index
        if isinstance(e, Read):
            return e.var.domain.is_bool
        if isinstance(e, ParamRef):
            return e.domain.is_bool
        if isinstance(e, Member):
            return True
        if isinstance(e, Quant):
            return e.kind in ("exists", "forall")
        if isinstance(e, Op):
            if e.op in BOOL_OPS:
                return True
            if e.op == "ite":
                return self.is_bool(e.args[1]) and self.is_bool(e.args[2])
        return False

    def g(self, e: Expr, b: dict, row: str | None) -> GExpr:
        if isinstance(e, Lit):
            return GConst(int(e.value))
        if isinstance(e, ConfigRef):
            if e.name not in self.env:
                raise SpecError(f"unknown configuration constant '{e.name}'", row)
            val = self.env[e.name]
            if isinstance(val, str):
                return GConst(self.choice_index[e.name].index(val))
            return GConst(int(val))
        if isinstance(e, ParamRef):
            if e.name not in b:
                raise SpecError(f"parameter '{e.name}' is not bound; list it in the row's params", row)
            return GConst(b[e.name])
        if isinstance(e, Var):
            return self.read(e, (), b, row)
        if isinstance(e, Read):
            return self.read(e.var, e.index, b, row)
        if isinstance(e, Member):
            return self.member(e, b, row)
        if isinstance(e, Quant):
            return self.quant(e, b, row)
        if isinstance(e, Op):
            if e.op in ("and", "or", "not", "implies"):
                for a in e.args:
                    if not self.is_bool(a):
                        raise SpecError(f"'{e.op}' needs boolean operands, but {show(a)} is an integer "
                                        f"(compare it, e.g. {show(a)} = 1)", row)
            if e.op == "ite" and not self.is_bool(e.args[0]):
                raise SpecError(f"the condition of If is not boolean: {show(e.args[0])}", row)
            return self.lazy(e, b, row)
        raise SpecError(f"cannot ground {e!r}", row)

    def lazy(self, e: Op, b: dict, row) -> GExpr:
        """Ground operands left to right, skipping those a constant operand makes irrelevant, so a
        conjunct like `i >= 1` protects a later `x[i - 1]` as it would at run time."""
        if e.op in ("and", "or", "implies"):
            stop = 0 if e.op == "and" else 1
            out = []
            for k, a in enumerate(e.args):
                g = self.g(a, b, row)
                if isinstance(g, GConst):
                    if e.op == "implies" and k == 0:
                        if not g.value:
                            return GConst(1)
                    elif e.op != "implies" and bool(g.value) == bool(stop):
                        return GConst(stop)
                out.append(g)
            return fold(e.op, tuple(out), row)
        if e.op == "ite":
            c = self.g(e.args[0], b, row)
            if isinstance(c, GConst):
                return self.g(e.args[1] if c.value else e.args[2], b, row)
            return fold("ite", (c, self.g(e.args[1], b, row), self.g(e.args[2], b, row)), row)
        return fold(e.op, tuple(self.g(a, b, row) for a in e.args), row)

    def read(self, var: Var, index: tuple, b: dict, row) -> GExpr:
        vl = self.var_by_name.get(var.name)
        if vl is None or vl.var is not var:
            raise SpecError(f"unknown var '{var.name}': it is not declared in spec {self.spec.name}'s vars", row)
        if len(index) != len(var.index):
            raise SpecError(f"{var.name} has {len(var.index)} index(es) but is read with {len(index)}", row)
        gi = [self.g(i, b, row) for i in index]
        if all(isinstance(x, GConst) for x in gi):
            pos = vl.offset
            for k, (x, d, lo, st) in enumerate(zip(gi, vl.dims, vl.index_lo, vl.strides)):
                if not lo <= x.value < lo + d:
                    dom = var.index[k]
                    raise SpecError(f"index {x.value} of {var.name} is outside domain {dom.name} "
                                    f"({lo}..{lo + d - 1})", row)
                pos += (x.value - lo) * st
            return GCell(pos)
        terms = tuple((fold("-", (x, GConst(lo)), row) if lo else x, st, d)
                      for x, d, lo, st in zip(gi, vl.dims, vl.index_lo, vl.strides))
        return GDyn(var.name, vl.offset, terms)

    def member(self, e: Member, b: dict, row) -> GExpr:
        dom = e.subset.domain if isinstance(e.subset, ParamRef) else None
        if not isinstance(dom, SubsetDomain):
            raise SpecError("Member needs a parameter over a SubsetDomain as its set", row)
        subsets = dom.subsets(self.env)
        n = len(dom.base.values(self.env))
        table = tuple(int(x in s) for s in subsets for x in range(n))
        s, x = self.g(e.subset, b, row), self.g(e.elem, b, row)
        if isinstance(s, GConst) and isinstance(x, GConst):
            return GConst(int(x.value in subsets[s.value]))
        return GTable(table, fold("+", (fold("*", (s, GConst(n)), row), x), row))

    def quant(self, e: Quant, b: dict, row) -> GExpr:
        if e.kind in ("exists", "forall") and not self.is_bool(e.body):
            raise SpecError(f"the body of {e.kind} over {e.var.domain.name} is not boolean: {show(e.body)}", row)
        parts = []
        for v in e.var.domain.values(self.env):
            nb = dict(b)
            nb[e.var.name] = v
            parts.append(self.g(e.body, nb, row))
        if e.kind == "exists":
            return fold("or", tuple(parts), row) if parts else GConst(0)
        if e.kind == "forall":
            return fold("and", tuple(parts), row) if parts else GConst(1)
        if e.kind == "count":
            return fold("+", tuple(fold("ite", (p, GConst(1), GConst(0)), row) for p in parts), row) if parts else GConst(0)
        if e.kind == "sum":
            return fold("+", tuple(parts), row) if parts else GConst(0)
        if e.kind in ("min", "max"):
            return fold(e.kind, tuple(parts), row) if parts else GConst(e.default)
        raise SpecError(f"unknown quantifier {e.kind}", row)

    # -- rows -------------------------------------------------------------------------------
    def row_actions(self, r: Row, start: int) -> list[GroundAction]:
        for c in r.guard:
            if not self.is_bool(c):
                raise SpecError(f"guard conjunct {show(c)} is not boolean (an integer expression); "
                                "compare it with a value", r.id)
        names = [p.name for p in r.params]
        if len(set(names)) != len(names):
            raise SpecError("two params share a name", r.id)
        out = []
        domains = [p.domain.values(self.env) for p in r.params]
        for combo in itertools.product(*domains):
            b = dict(zip(names, combo))
            guard_parts, disabled = [], False
            for c in r.guard:
                gc = self.g(c, b, r.id)
                if isinstance(gc, GConst) and not gc.value:
                    disabled = True  # later conjuncts are never evaluated, as at run time
                    break
                guard_parts.append(gc)
            if disabled:
                continue
            guard = fold("and", tuple(guard_parts), r.id) if guard_parts else GConst(1)
            if isinstance(guard, GConst) and not guard.value:
                continue
            updates = []
            static_targets = {}
            for u in r.updates:
                t = self.g(u.target, b, r.id)
                if isinstance(t, GCell):
                    if t.pos in static_targets:
                        raise SpecError(f"two updates of one cell ({self.layout.cell_names[t.pos]}) in one row", r.id)
                    static_targets[t.pos] = u
                val = self.g(u.value, b, r.id)
                if isinstance(val, GConst):
                    vl = self.var_by_name[u.target.var.name]
                    if not vl.lo <= val.value <= vl.hi:
                        raise SpecError(
                            f"assigns {val.value} to {show(u.target)}, outside domain {vl.var.domain.name} "
                            f"({vl.lo}..{vl.hi}); add a guard or widen the domain", r.id)
                updates.append((t, val))
            label = r.id + ("(" + ", ".join(f"{p.name}={p.domain.label(v, self.env)}"
                                              for p, v in zip(r.params, combo)) + ")" if r.params else "")
            out.append(GroundAction(start + len(out), r, tuple(zip(names, combo)), label, guard, tuple(updates)))
        return out


def _config_value(gr: "_Grounder", e: Expr, what: str) -> int:
    """The value of an expression over configuration constants only (assumptions, `applies`)."""
    g = gr.g(e, {}, None)
    if not isinstance(g, GConst):
        raise SpecError(f"{what} reads state; it may use configuration constants only")
    return g.value


def ground(spec: Spec, config: ResolvedConfig) -> GroundModel:
    """Expand every row into ground actions (in table order, then params in domain order)."""
    gr = _Grounder(spec, config)
    ids = [r.id for r in spec.rows]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SpecError(f"row ids must be unique; repeated: {', '.join(dup)}")
    for a in spec.assumptions:
        if not _config_value(gr, a.expr, f"assumption {show(a.expr)}"):
            raise ConfigError(f"configuration rejected: {a.message}")
    actions: list[GroundAction] = []
    for r in spec.rows:
        actions.extend(gr.row_actions(r, len(actions)))
    init = []
    for vl in gr.layout.vars:
        v = vl.var
        if v.init is None:
            raise SpecError(f"var {v.name} has no initial value; give it init=...")
        g = gr.g(v.init, {}, None)
        if not isinstance(g, GConst):
            raise SpecError(f"the initial value of {v.name} must be constant, not {show(v.init)}")
        if not vl.lo <= g.value <= vl.hi:
            raise SpecError(f"the initial value {g.value} of {v.name} is outside its domain {vl.var.domain.name}")
        init.extend([g.value] * vl.size)
    names = [p.name for p in spec.properties]
    dupp = sorted({n for n in names if names.count(n) > 1})
    if dupp:
        raise SpecError(f"property names must be unique; repeated: {', '.join(dupp)}")
    props = []
    skipped = []
    for p in tuple(spec.properties) + tuple(spec.invariants_for_induction):
        if p.applies is not None and not _config_value(gr, p.applies, f"property {p.name}: `applies`"):
            skipped.append(p.name)
            continue
        if not gr.is_bool(p.expr):
            raise SpecError(f"property {p.name} is not boolean: {show(p.expr)}")
        try:
            expr = gr.g(p.expr, {}, None)
            when = gr.g(p.when, {}, None) if p.when is not None else None
        except SpecError as err:
            raise SpecError(f"property {p.name}: {err}") from None
        props.append(GroundProperty(p, expr, when))
    terminal = gr.g(spec.terminal, {}, None) if spec.terminal is not None else None
    main = {p.name for p in spec.properties}
    return GroundModel(spec, config, gr.layout, tuple(actions), tuple(init),
                       tuple(p for p in props if p.name in main), terminal, gr.env,
                       tuple(p for p in props if p.name not in main), tuple(skipped))


# ---- folding and evaluation -----------------------------------------------------------------
def _apply(op: str, v: list[int]) -> int:
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
            return GConst(_apply(op, [a.value for a in args]))
        except ZeroDivisionError:
            raise SpecError("division by zero", row) from None
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
            raise EvaluationError(f"table index {i} out of range", row)
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
        return _apply(e.op, [evaluate(a, s, row) for a in e.args])
    except ZeroDivisionError:
        raise EvaluationError("division by zero", row) from None


def dyn_pos(e: GDyn, s, row=None) -> int:
    pos = e.base
    for x, stride, size in e.terms:
        i = evaluate(x, s, row)
        if not 0 <= i < size:
            raise EvaluationError(f"computed index {i} of {e.var} is outside 0..{size - 1}", row)
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
            raise EvaluationError(f"two updates of cell {m.layout.cell_names[pos]} in one step", a.row_id)
        seen.add(pos)
        if not m.layout.cell_lo[pos] <= val <= m.layout.cell_hi[pos]:
            raise EvaluationError(
                f"assigns {val} to {m.layout.cell_names[pos]}, outside its domain {m.layout.cell_lo[pos]}..{m.layout.cell_hi[pos]}",
                a.row_id)
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
