"""Static domain checking: which values of a spec may meet (`DomainCheck`), and the message that says
why two may not and what to write instead. It reads only the spec, never a configuration's values, so
a row or property is checked once per process. Its entry points (`row`, `property`, `expr`, `init`)
raise a `SpecError` about that part of the spec; the grounder, `ground` and the initial states call
them.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from .domains import BOOL, Domain, EnumDomain, IdSet, SubsetDomain, describe, enums_agree, same_ids
from .errors import SpecError
from .expr import ANY, ConfigRef, Expr, Lit, Member, OneOf, Op, ParamRef, Quant, Read, Var, show
from .model import Property, Row, Spec

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
