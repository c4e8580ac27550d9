"""Grounding: a spec and a resolved configuration become a fixed state layout and an ordered tuple
of ground actions whose expressions mention only state cells and literals.

Parameters and quantifiers are expanded, configuration constants folded, constant indices turned
into cell positions; computed indices stay as `GDyn` reads, range-checked when evaluated. Every
engine (Python, numpy, z3, Spark) consumes this one representation, so they cannot disagree
about what a row means. Static mistakes (unknown var, index or assignment out of domain, two
updates of one cell, a non-boolean guard) raise `SpecError` naming the row.

The pieces: the ground IR (`ground_ir.py`), the layout (`layout.py`), folding and evaluation
(`evaluate.py`), states by name (`state_text.py`); this module is the grounder.
"""
from __future__ import annotations

import itertools

from .domains import SubsetDomain
from .errors import ConfigError, SpecError
from .evaluate import fold
from .expr import ConfigRef, Expr, Lit, Member, Op, ParamRef, Quant, Read, Var, show
from .ground_ir import BOOL_OPS, GCell, GConst, GDyn, GExpr, GroundAction, GroundModel, GroundProperty, GTable
from .layout import build_layout
from .model import ResolvedConfig, Row, Spec


class Grounder:
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


def config_value(gr: "Grounder", e: Expr, what: str) -> int:
    """The value of an expression over configuration constants only (assumptions, `applies`)."""
    g = gr.g(e, {}, None)
    if not isinstance(g, GConst):
        raise SpecError(f"{what} reads state; it may use configuration constants only")
    return g.value


def ground(spec: Spec, config: ResolvedConfig) -> GroundModel:
    """Expand every row into ground actions (in table order, then params in domain order)."""
    gr = Grounder(spec, config)
    ids = [r.id for r in spec.rows]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SpecError(f"row ids must be unique; repeated: {', '.join(dup)}")
    for a in spec.assumptions:
        if not config_value(gr, a.expr, f"assumption {show(a.expr)}"):
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
        if p.applies is not None and not config_value(gr, p.applies, f"property {p.name}: `applies`"):
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

