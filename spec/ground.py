"""Grounding: a spec and a resolved configuration become a fixed state layout and an ordered tuple
of ground actions whose expressions mention only state cells and literals.

Parameters and quantifiers are expanded, configuration constants folded, constant indices turned
into cell positions; computed indices stay as `GDyn` reads, range-checked when evaluated. Every
engine (Python, numpy, z3, Spark) consumes this one representation, so they cannot disagree
about what a row means. Static mistakes (unknown var, index or assignment out of domain, a value
of the wrong domain, e.g. another enum's label, two updates of one cell, a non-boolean guard)
raise `SpecError` about the row, property, var, variant, config, constant or domain at fault (its
`subject`, which the loader locates in the spec's source; `DomainCheck` says which values may meet,
`check_shape` that every part of the spec has its type and names what exists).

The pieces: the ground IR (`ground_ir.py`), the layout (`layout.py`), folding and evaluation
(`evaluate.py`), states by name (`state_text.py`); this module is the grounder.
"""
from __future__ import annotations

import itertools
import typing
import weakref
from contextlib import contextmanager
from dataclasses import dataclass

from .domains import BOOL, Domain, EnumDomain, IdSet, SubsetDomain, describe, enums_agree, same_ids
from .errors import ConfigError, SpecError
from .evaluate import fold
from .expr import ANY, ConfigRef, Expr, Lit, Member, OneOf, Op, ParamRef, Quant, Read, Update, Var, show
from .ground_ir import BOOL_OPS, GCell, GConst, GDyn, GExpr, GroundAction, GroundModel, GroundProperty, GTable
from .initial import initial_states
from .layout import build_layout
from .model import (AddRow, Assume, ConfigParam, Edit, NamedConfig, Property, ResolvedConfig, Row, SetParam, Spec,
                    Symmetry, Table, Variant)
from .sequence import Channel, Lane


# ---- static domain checking -------------------------------------------------------------------------
_ARITH = frozenset(("+", "-", "*", "//", "%"))
_COMPARE = frozenset(("==", "!=", "<", "<=", ">", ">="))
_CONNECTIVES = frozenset(("and", "or", "not", "implies"))
_UNSEEN = object()
_LIT = Domain("a bare integer literal")  # the type of an integer literal: a position, if it meets an enum


class _Clash(Exception):
    """Values of two domains that may not meet; the caller names the row, property or var."""


def _q(e: Expr) -> str:
    return show(e, qualified=True)


@dataclass(frozen=True, eq=False)
class _Choices(EnumDomain):
    """The values of a choice constant (Config("protocol")): ints by position among its choices."""


def _desc(d: Domain | None) -> str:
    if d is _LIT:
        return d.name
    if isinstance(d, _Choices):
        return f"the choices of constant {d.name} ({', '.join(d.labels)})"
    return describe(d)


def _label(d: EnumDomain, v: int) -> str:
    if d.is_bool:
        return "True" if v else "False"
    return f"{d.name}.{d.label(v)}"


def _values(d: Domain | None) -> str:
    if d is None or d is _LIT:
        return "an integer"
    if isinstance(d, EnumDomain):
        if d.is_bool:
            return "True, False or a condition"
        shown = [_label(d, v) for v in range(min(len(d.labels), 6))]
        return "one of " + ", ".join(shown) + (", ..." if len(d.labels) > 6 else "")
    if isinstance(d, IdSet):
        return f"an id of {d.name}"
    if isinstance(d, SubsetDomain):
        return f"a subset of domain {d.name}"
    return f"a number of {d.name}"


def _holds(d: Domain | None) -> str:
    if d is None or d is _LIT:
        return "numbers"
    if isinstance(d, IdSet):
        return f"ids of {d.name}"
    if isinstance(d, SubsetDomain):
        return f"subsets of domain {d.name}"
    return f"numbers ({_desc(d)})"


def _whose(ref: Expr | str, d: Domain) -> str:
    """`pcTM's domain PcTM`, or just `PcTM` where the reference is not a simple name."""
    if isinstance(ref, str):
        return f"{ref}'s domain {d.name}" if " " not in ref else d.name
    if isinstance(ref, (Var, Read, ParamRef)):
        return f"{show(ref)}'s domain {d.name}"
    return d.name


class DomainCheck:
    """Static domain checking, once per row, property and var (it reads only the spec, so it does not
    depend on the configuration; a row or property that passed is not checked again in this process).

    Enum values, ids and integers are all ints once grounded, so a value of one enum stored in, or
    compared with, a var of another is read by position: `pcTM.set(PcBTM.Done)` would give pcTM
    the label PcTM has at Done's position in PcBTM. Each expression's domain is inferred where it
    has one (a var or a read: its var's; a literal: its enum, or `_LIT` for a bare integer; a
    parameter or bound variable: its domain; a choice constant such as Config("protocol"): its
    choices; If, Min, Max, MinOver and MaxOver: their operands'; comparisons, connectives, Exists,
    ForAll, Member: Bool; arithmetic, Count, Sum and integer constants: None, a plain integer), and
    these may not meet:

    - a value of an enum (Bool included) and anything but a value of an enum that agrees with it:
      the same enum, or one whose labels begin the other's (Decision = (prepared, aborted) within
      Val = (prepared, aborted, none), so positions mean the same labels). In particular not a bare
      integer literal (`pcTM == 3`), an id or an IntRange value;
    - ids of two different id sets (a Part where a Tid is expected); a subset and anything but a
      subset of the same domain;
    - an enum or subset value and arithmetic (+ - * // %, Sum).

    Two values meet as the sides of a comparison (is_in is a disjunction of them), the branches of
    If and the operands of Min/Max, an assigned value and its target, an index and its index
    domain, a Member element and the subset's base, an initial value and its var. Ids and integer
    ranges mix with integers freely: an id used as a number (`i >= 1`, `x[i - 1]`,
    `Min(i, Config('tids') - 1)`) is deliberate, and the result is a plain integer, which has no
    domain to disagree with (where it is stored, its range is checked at search time).
    """

    def __init__(self, spec: Spec):
        self.choices: dict[str, EnumDomain] = {}
        for p in spec.params:
            if p.choices:
                try:
                    self.choices[p.name] = _Choices(p.name, tuple(map(str, p.choices)))
                except ValueError:
                    pass
        self.memo: dict[int, Domain | None] = {}  # by id: expressions are shared between rows
        self.alive: list[Expr] = []
        self.key = tuple(sorted((n, d.labels) for n, d in self.choices.items()))

    # -- entry points: each raises SpecError naming the row, property or var ------------------------
    def row(self, r: Row) -> None:
        if self.key in _PASSED.get(r, ()):
            return
        try:
            for c in r.guard:
                self.type(c)
            for u in r.updates:
                self.type(u.target)
                self.into(u.target.var.domain, u.value, u.target, "assign")
        except _Clash as err:
            raise SpecError(str(err), r.id) from None
        _PASSED.setdefault(r, set()).add(self.key)

    def property(self, p: Property) -> None:
        if self.key in _PASSED.get(p, ()):
            return
        for e in (p.applies, p.expr, p.when):
            self.expr(e, None, prop=p.name)
        _PASSED.setdefault(p, set()).add(self.key)

    def expr(self, e: Expr | None, what: str | None, **subject) -> None:
        """Check `e`, a part of the spec that is not a row: `subject` names it (prop=, assumption=,
        field=), `what` says which expression it is where the subject's name does not."""
        if e is None:
            return
        try:
            self.type(e)
        except _Clash as err:
            raise SpecError(f"{what}: {err}" if what else str(err), **subject) from None

    def init(self, v: Var) -> None:
        if v.init is None or v.init is ANY:
            return
        try:
            for value in (v.init.values if isinstance(v.init, OneOf) else (v.init,)):
                self.into(v.domain, value, v, "init")
        except _Clash as err:
            raise SpecError(str(err), var=v.name) from None

    # -- inference -----------------------------------------------------------------------------------
    def type(self, e: Expr) -> Domain | None:
        """The domain of e's values (None: a plain integer); raises _Clash where two values may not meet."""
        cls = e.__class__
        if cls is ParamRef or cls is Var:
            return e.domain
        if cls is Lit:
            return _LIT if e.domain is None else e.domain
        if cls is Read:  # the most common node, and cheap: not worth a memo entry
            return self.read(e)
        if cls is ConfigRef:
            return self.choices.get(e.name)
        t = self.memo.get(id(e), _UNSEEN)
        if t is _UNSEEN:
            t = self.memo[id(e)] = self._infer(e)
            self.alive.append(e)  # so that no other expression takes its id while the memo lives
        return t

    def _infer(self, e: Expr) -> Domain | None:
        if e.__class__ is Op:
            ts = []
            for a in e.args:
                c = a.__class__
                ts.append(a.domain if (c is ParamRef or c is Var or c is Lit and a.domain is not None)
                          else self.type(a))
            op = e.op
            if op in _COMPARE:
                if ts[0] is not ts[1]:
                    self.compare(e, ts)
                return BOOL
            if op in _CONNECTIVES:
                return BOOL  # the grounder checks that their operands are boolean
            if op == "ite":
                return self.join(e, e.args[1:], ts[1:])
            if op in ("min", "max"):
                return self.join(e, e.args, ts)
            self.arith(e, e.args, ts)
            return None
        if isinstance(e, Quant):
            bt = self.type(e.body)
            if e.kind in ("exists", "forall"):
                return BOOL
            if e.kind == "sum":
                self.arith(e, (e.body,), (bt,))
            return bt if e.kind in ("min", "max") else None
        if isinstance(e, Member):
            st = self.type(e.subset)
            if isinstance(st, SubsetDomain):
                self.into(st.base, e.elem, e, "member")
            else:
                self.type(e.elem)
            return BOOL
        if isinstance(e, Read):
            return self.read(e)
        if isinstance(e, ConfigRef):
            return self.choices.get(e.name)
        return getattr(e, "domain", None)

    def read(self, e: Read) -> Domain:
        for k, (ix, d) in enumerate(zip(e.index, e.var.index)):
            c = ix.__class__
            t = ix.domain if c is ParamRef or c is Var else self.type(ix)
            if t is not d and self.clash(d, t):
                self.into(d, ix, e, "index", k)
        return e.var.domain

    @staticmethod
    def clash(a: Domain | None, b: Domain | None) -> bool:
        if a is b or a is None or b is None:  # a plain (computed) integer has no domain to disagree with
            return False
        if a is _LIT or b is _LIT:
            return isinstance(b if a is _LIT else a, (EnumDomain, SubsetDomain))
        ea, eb = isinstance(a, EnumDomain), isinstance(b, EnumDomain)
        if ea or eb:
            return not (ea and eb and enums_agree(a, b))
        sa, sb = isinstance(a, SubsetDomain), isinstance(b, SubsetDomain)
        if sa or sb:
            return not (sa and sb and same_ids(a, b))
        if isinstance(a, IdSet) and isinstance(b, IdSet):
            return not same_ids(a, b)
        return False

    def compare(self, e: Op, ts) -> None:
        (a, b), (ta, tb) = e.args, ts
        if not self.clash(ta, tb):
            return
        labels_a, labels_b = isinstance(ta, (EnumDomain, SubsetDomain)), isinstance(tb, (EnumDomain, SubsetDomain))
        if (labels_b and not labels_a and not isinstance(b, Lit)) or (isinstance(a, Lit) and not isinstance(b, Lit)):
            a, b, ta, tb = b, a, tb, ta  # explain from the enum's side, else from the side that is not a literal
        raise _Clash(f"compares {_q(a)} ({_desc(ta)}) with {_q(b)} ({_desc(tb)}) in {_q(e)}: "
                     + self.advice(a, ta, b, tb, "compared"))

    def join(self, e: Op, args, ts) -> Domain | None:
        t0, a0 = ts[0], args[0]
        for a, t in zip(args[1:], ts[1:]):
            if self.clash(t0, t):
                what = "the branches of If" if e.op == "ite" else f"the operands of {e.op.capitalize()}"
                if not isinstance(t0, EnumDomain) and isinstance(t, EnumDomain):
                    a0, t0, a, t = a, t, a0, t0
                raise _Clash(f"{what} mix {_q(a0)} ({_desc(t0)}) and {_q(a)} ({_desc(t)}) in {_q(e)}: "
                             + self.advice(a0, t0, a, t, "mixed"))
            if isinstance(t0, EnumDomain) and isinstance(t, EnumDomain):
                t0, a0 = (t0, a0) if len(t0.labels) >= len(t.labels) else (t, a)
            elif t0 is None or t is None or not (t0 is t or same_ids(t0, t)):
                t0 = None  # ids mixed with integers are plain integers
        return t0

    def arith(self, e: Expr, args, ts) -> None:
        for a, t in zip(args, ts):
            if isinstance(t, EnumDomain):
                fix = (f"test it instead ({_q(a)} = True), or count with If({_q(a)}, 1, 0)" if t.is_bool
                       else f"compare it with labels instead ({_values(t)}), or choose the label with If; "
                       "a quantity belongs in an IntRange var")
            elif isinstance(t, SubsetDomain):
                fix = "test membership with Member(...) instead"
            else:
                continue
            raise _Clash(f"arithmetic on {_q(a)} ({_desc(t)}) in {_q(e)}: its values are labels, not numbers "
                         f"(their positions would be computed with); {fix}")

    def into(self, d: Domain, value: Expr, target, how: str, k: int = 0) -> None:
        """`value` stands where a value of `d` is expected: an assignment, an index, an element, an init."""
        tv = self.type(value)
        if tv is d or not self.clash(d, tv):
            return
        ref: Expr | str = target
        if how == "assign":
            head = f"assigns {_q(value)} ({_desc(tv)}) to {_q(target)}, whose domain is {_desc(d)}"
        elif how == "init":
            head = f"its initial value {_q(value)} ({_desc(tv)}) is not of its domain {_desc(d)}"
        elif how == "index":
            head = (f"indexes {target.var.name} with {_q(value)} ({_desc(tv)}) in {_q(target)}, "
                    f"where index {k + 1} is {_desc(d)}")
            ref = f"index {k + 1} of {target.var.name}"
        else:
            head = f"tests {_q(value)} ({_desc(tv)}) for membership in {_q(target.subset)}, a subset of {_desc(d)}"
            ref = f"the elements of {_q(target.subset)}"
        raise _Clash(f"{head}: " + self.advice(ref, d, value, tv, "stored" if how != "index" else "used"))

    @staticmethod
    def advice(ref: Expr | str, rd: Domain | None, other: Expr, od: Domain | None, verb: str) -> str:
        """Why `other` (of domain `od`) may not meet `ref`, whose domain `rd` is the expected one; the fix."""
        name = ref if isinstance(ref, str) else _q(ref)
        for d in (rd, od):
            if isinstance(d, _Choices):
                return (f"Config('{d.name}') is its choice's position among {', '.join(d.labels)}; compare it "
                        "with a value of an enum declared with exactly these labels, in this order")
        if isinstance(rd, EnumDomain) and isinstance(od, EnumDomain):
            why = f"enum values are {verb} by position, not by label"
            if isinstance(other, Lit) and not od.is_bool and not rd.is_bool:
                v = other.value
                why += (f", so {_q(other)} would be {_label(rd, v)}, the label at its position in {rd.name}"
                        if 0 <= v < len(rd.labels) else f", and {_q(other)}'s position {v} is outside {rd.name}")
                lab = od.label(v)
                if lab in rd.labels:
                    return f"{why}; use {_label(rd, rd.labels.index(lab))}, a value of {_whose(ref, rd)}"
            return f"{why}; use a value of {_whose(ref, rd)} ({_values(rd)})"
        if isinstance(rd, EnumDomain):
            if _bare(other):
                v = other.value
                if rd.is_bool:
                    return "a bare integer is not a truth value; write True or False (or a condition)"
                if 0 <= v < len(rd.labels):
                    return (f"a bare integer stands for an enum value only by its position ({v} is {_label(rd, v)}), "
                            f"which silently changes meaning if the labels change; write {_label(rd, v)}")
                return f"{v} is not a position of {rd.name}; use a value of {_whose(ref, rd)} ({_values(rd)})"
            return (f"{_q(other)} holds {_holds(od)}, not values of {rd.name}; use a value of {_whose(ref, rd)} "
                    f"({_values(rd)})")
        if isinstance(od, EnumDomain):
            return (f"{_q(other)} is a label of {_desc(od)}, not {'an id' if isinstance(rd, IdSet) else 'a number'}, "
                    f"and {name} holds {_holds(rd)}; use {_values(rd)}")
        if isinstance(rd, IdSet) and isinstance(od, IdSet):
            return (f"ids of {od.name} and of {rd.name} are different things even where their positions agree; "
                    f"use {_values(rd)}")
        if isinstance(rd, SubsetDomain) or isinstance(od, SubsetDomain):
            d = rd if isinstance(rd, SubsetDomain) else od
            return (f"subsets of {d.name} are numbered in {d.name}'s own order and meet only subsets of {d.name}; "
                    "test membership with Member(...)")
        return f"use {_values(rd)} where {name} is expected"


def _bare(e: Expr) -> bool:
    return isinstance(e, Lit) and e.domain is None


# Rows and properties that passed, with the choice constants they were checked under: the check reads
# only immutable spec data, so regrounding under another config or a variant (which shares the rows it
# does not edit) skips it.
_PASSED: "weakref.WeakKeyDictionary[object, set]" = weakref.WeakKeyDictionary()


class Grounder:
    def __init__(self, spec: Spec, config: ResolvedConfig):
        self.spec = spec
        self.env = config.env
        self.layout = build_layout(spec, self.env)
        self.var_by_name = {vl.var.name: vl for vl in self.layout.vars}
        self.choice_index = {p.name: p.choices for p in spec.params if p.choices}
        self.domains = DomainCheck(spec)

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


# ---- the shape of a spec ----------------------------------------------------------------------------
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


@contextmanager
def _about(**subject):
    """A SpecError raised inside without a subject (grounding an expression that is not a row's) is about
    this part of the spec: a property, a var's init, an assumption, a field of the Spec."""
    try:
        yield
    except SpecError as err:
        if err.subject is not None:
            raise
        raise SpecError(err.message, **subject) from None


def config_value(gr: "Grounder", e: Expr, what: str) -> int:
    """The value of an expression over configuration constants only (assumptions, `applies`)."""
    g = gr.g(e, {}, None)
    if not isinstance(g, GConst):
        raise SpecError(f"{what} reads state; it may use configuration constants only: move the condition on the "
                        "state into a guard or a property")
    return g.value


def ground(spec: Spec, config: ResolvedConfig) -> GroundModel:
    """Expand every row into ground actions (in table order, then params in domain order)."""
    check_shape(spec)
    dup = _first_repeated(r.id for r in spec.rows)
    if dup is not None:
        raise SpecError("another row has this id already; row ids must be unique (traces and the report name rows "
                        "by them): rename one", dup, nth=2)
    gr = Grounder(spec, config)
    for a in spec.assumptions:
        what = f"the assumption {show(a.expr)}"
        with _about(assumption=a.message):
            gr.domains.expr(a.expr, what, assumption=a.message)
            holds = config_value(gr, a.expr, what)
        if not holds:
            raise ConfigError(f"configuration rejected: {a.message} (the assumption {show(a.expr)} is false for "
                              f"{_settings(config)}); choose values it accepts", assumption=a.message)
    actions: list[GroundAction] = []
    edited = _edited_rows(spec)
    for r in spec.rows:
        try:
            actions.extend(gr.row_actions(r, len(actions)))
        except SpecError as err:
            if r.id not in edited or err.subject is None or err.subject.kind != "row":
                raise
            raise SpecError(f"row {r.id} as the variant makes it: {err.message}", variant=spec.variant) from None
    if spec.variant is None:
        _check_variant_rows(gr, spec)
    inits = initial_states(gr, spec)
    dupp = _first_repeated(p.name for p in spec.properties)
    if dupp is not None:
        raise SpecError("another property has this name already; property names must be unique: rename one",
                        prop=dupp, nth=2)
    props = []
    skipped = []
    for p in tuple(spec.properties) + tuple(spec.invariants_for_induction):
        gr.domains.property(p)
        with _about(prop=p.name):
            if p.applies is not None and not config_value(gr, p.applies, "its `applies` condition"):
                skipped.append(p.name)
                continue
            if not gr.is_bool(p.expr):
                raise SpecError(f"its expression is not boolean: {show(p.expr)}; compare it with a value",
                                prop=p.name)
            expr = gr.g(p.expr, {}, None)
            when = gr.g(p.when, {}, None) if p.when is not None else None
        props.append(GroundProperty(p, expr, when))
    gr.domains.expr(spec.terminal, "the terminal condition", field="terminal")
    terminal = None
    if spec.terminal is not None:
        if not gr.is_bool(spec.terminal):
            raise SpecError(f"the terminal condition is not boolean: {show(spec.terminal)}; compare it with a value",
                            field="terminal")
        with _about(field="terminal"):
            terminal = gr.g(spec.terminal, {}, None)
    main = {p.name for p in spec.properties}
    return GroundModel(spec, config, gr.layout, tuple(actions), inits[0],
                       tuple(p for p in props if p.name in main), terminal, gr.env,
                       tuple(p for p in props if p.name not in main), tuple(skipped), inits=inits)


def _first_repeated(names) -> str | None:
    seen: set = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


def _edited_rows(spec: Spec) -> set[str]:
    """The ids of the rows the applied variant adds or edits: a mistake in one of them is the variant's."""
    if spec.variant is None:
        return set()
    return {e.row.id if isinstance(e, AddRow) else e.row for e in spec.variant_named(spec.variant).edits
            if hasattr(e, "row")}


def _check_variant_rows(gr: Grounder, spec: Spec) -> None:
    """The rows a variant adds or edits are type-checked with the spec, as its own rows are (a variant that
    compares across enums is a mistake before anyone checks it); a mistake is the variant's."""
    own = {id(r) for r in spec.rows}
    for v in spec.variants:
        for r in spec.with_variant(v.name).rows:
            if id(r) in own:
                continue
            try:
                for c in r.guard:
                    if not gr.is_bool(c):
                        raise SpecError(f"guard conjunct {show(c)} is not boolean (an integer expression); compare it "
                                        "with a value", r.id)
                gr.domains.row(r)
            except SpecError as err:
                raise SpecError(f"row {r.id} as the variant makes it: {err.message}", variant=v.name) from None


def _settings(config: ResolvedConfig) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.values) or "this configuration"
