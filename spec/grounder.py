"""The grounder: expressions of a spec become ground expressions (`ground_ir.py`) under one resolved
configuration, and a row becomes its ground actions, one per combination of its parameters' values.

Parameters and quantifiers are expanded, configuration constants folded, constant indices turned into
cell positions; computed indices stay as `GDyn` reads, range-checked when evaluated. A mistake the
grounding meets (an unknown var or constant, an index or an assigned value outside its domain, two
updates of one cell, a non-boolean guard) is a `SpecError` naming the row, when there is one.
"""
from __future__ import annotations

import itertools

from .domain_check import DomainCheck
from .domains import SubsetDomain
from .errors import SpecError
from .evaluate import fold
from .expr import ConfigRef, Expr, Lit, Member, Op, ParamRef, Quant, Read, Var, show
from .ground_ir import BOOL_OPS, GCell, GConst, GDyn, GExpr, GroundAction, GTable
from .layout import build_layout
from .model import ResolvedConfig, Row, Spec



_UNBOUND = object()  # a free parameter with no value: grounding it raises, so nothing is cached


class Grounder:
    """The expressions and rows of `spec` under one configuration (`g`, `row_actions`); `domains` checks
    each row and property the grounding meets."""

    def __init__(self, spec: Spec, config: ResolvedConfig):
        self.spec = spec
        self.env = config.env
        self.layout = build_layout(spec, self.env)
        self.var_by_name = {vl.var.name: vl for vl in self.layout.vars}
        self.choice_index = {p.name: p.choices for p in spec.params if p.choices}
        self.domains = DomainCheck(spec)
        # a composite expression grounds to the same thing wherever its free parameters have the same
        # values: rows share helpers (a guard over every log slot, say) across all their parameter
        # combinations, so grounding each once per distinct binding keeps grounding linear in the spec
        self._grounded: dict = {}
        self._free: dict = {}
        self._bool: dict = {}

    # type inference on the IR: is this expression boolean?
    def is_bool(self, e: Expr) -> bool:
        got = self._bool.get(e)
        if got is None:
            got = self._bool[e] = self._is_bool(e)
        return got

    def _is_bool(self, e: Expr) -> bool:
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

    def free_names(self, e: Expr) -> tuple:
        """The names of the parameters e reads that no quantifier inside it binds (sorted). By name, as grounding
        binds, and memoised per node: `expr._free_params` answers by identity and walks the whole subtree on every
        call, which made grounding Kafka ci about a third slower when called per node."""
        got = self._free.get(e)
        if got is None:
            if isinstance(e, ParamRef):
                names = {e.name}
            elif isinstance(e, Quant):
                names = set(self.free_names(e.body)) - {e.var.name}
            elif isinstance(e, Op):
                names = {n for a in e.args for n in self.free_names(a)}
            elif isinstance(e, Member):
                names = set(self.free_names(e.subset)) | set(self.free_names(e.elem))
            elif isinstance(e, Read):
                names = {n for a in e.index for n in self.free_names(a)}
            else:
                names = set()
            got = self._free[e] = tuple(sorted(names))
        return got

    def g(self, e: Expr, b: dict, row: str | None) -> GExpr:
        if isinstance(e, (Op, Quant, Read, Member)):
            key = (e, *(b.get(n, _UNBOUND) for n in self.free_names(e)))
            got = self._grounded.get(key)
            if got is None:
                got = self._grounded[key] = self._g(e, b, row)
            return got
        return self._g(e, b, row)

    def _g(self, e: Expr, b: dict, row: str | None) -> GExpr:
        if isinstance(e, Lit):
            return GConst(int(e.value))
        if isinstance(e, ConfigRef):
            if e.name not in self.env:
                known = ", ".join(sorted(self.env)) or "none"
                raise SpecError(f"unknown configuration constant '{e.name}': declare it in the spec's params "
                                f"(ConfigParam('{e.name}', default, ...)) or fix the name (declared: {known})", row)
            val = self.env[e.name]
            if isinstance(val, str):
                return GConst(self.choice_index[e.name].index(val))
            return GConst(int(val))
        if isinstance(e, ParamRef):
            if e.name not in b:
                raise SpecError(f"parameter '{e.name}' is not bound; list it in the row's params, or bind it "
                                f"with ForAll/Exists({e.domain.name}, lambda {e.name}: ...)", row)
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
                raise SpecError(f"the condition of If is not boolean: {show(e.args[0])}; compare it with a value "
                                f"(e.g. {show(e.args[0])} = 1)", row)
            return self.lazy(e, b, row)
        raise SpecError(f"{e!r} is not an expression txncheck knows; build expressions from vars, parameters, "
                        "literals and the functions of txncheck.spec.expr", row)

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
        if vl is None:
            raise SpecError(f"unknown var '{var.name}': it is not declared in spec {self.spec.name}'s vars; add it "
                            "to Spec(vars=...)", row)
        if vl.var is not var:
            raise SpecError(f"unknown var '{var.name}': this is another Var object than the one of that name in "
                            f"spec {self.spec.name}'s vars (declared twice?); use the declared one", row)
        if len(index) != len(var.index):
            want = ", ".join(d.name for d in var.index)
            raise SpecError(f"{var.name} has {len(var.index)} index(es) but is read with {len(index)}; write "
                            + (f"{var.name}[{want}]" if want else var.name), row)
        gi = [self.g(i, b, row) for i in index]
        if all(isinstance(x, GConst) for x in gi):
            pos = vl.offset
            for k, (x, d, lo, st) in enumerate(zip(gi, vl.dims, vl.index_lo, vl.strides)):
                if not lo <= x.value < lo + d:
                    dom = var.index[k]
                    raise SpecError(f"index {x.value} of {var.name} is outside domain {dom.name} "
                                    f"({lo}..{lo + d - 1}); use an index within it, or widen the domain", row)
                pos += (x.value - lo) * st
            return GCell(pos)
        terms = tuple((fold("-", (x, GConst(lo)), row) if lo else x, st, d)
                      for x, d, lo, st in zip(gi, vl.dims, vl.index_lo, vl.strides))
        return GDyn(var.name, vl.offset, terms)

    def member(self, e: Member, b: dict, row) -> GExpr:
        dom = e.subset.domain if isinstance(e.subset, ParamRef) else None
        if not isinstance(dom, SubsetDomain):
            raise SpecError(f"Member needs a parameter over a SubsetDomain as its set, not {show(e.subset)}; bind "
                            "one as a row parameter or with ForAll/Exists(Subsets, lambda q: Member(q, x))", row)
        subsets = dom.subsets(self.env)
        n = len(dom.base.values(self.env))
        table = tuple(int(x in s) for s in subsets for x in range(n))
        s, x = self.g(e.subset, b, row), self.g(e.elem, b, row)
        if isinstance(s, GConst) and isinstance(x, GConst):
            return GConst(int(x.value in subsets[s.value]))
        return GTable(table, fold("+", (fold("*", (s, GConst(n)), row), x), row))

    def quant(self, e: Quant, b: dict, row) -> GExpr:
        if e.kind in ("exists", "forall") and not self.is_bool(e.body):
            raise SpecError(f"the body of {e.kind} over {e.var.domain.name} is not boolean: {show(e.body)}; compare "
                            "it with a value", row)
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
        self.domains.row(r)
        names = [p.name for p in r.params]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise SpecError(f"two params share the name {', '.join(twice)}; give each its own name", r.id)
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
                        raise SpecError(f"two updates of one cell ({self.layout.cell_names[t.pos]}) in one row; "
                                        "write one update and choose its value with If", r.id)
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
