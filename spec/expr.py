"""The expression AST, built with operator overloading in the style of z3's Python API.

Guards, update right-hand sides and properties are `Expr` trees. Python's own `and`, `or`, `not`
and `if` cannot be overloaded, so an `Expr` refuses to be used as a Python truth value; use
`And`, `Or`, `Not` and `If`. Quantifiers range over finite domains and are expanded when a spec is
grounded, so every engine sees plain formulas.

>>> from txncheck.spec.domains import EnumDomain, IdSet
>>> RM = IdSet("RM", size="rm")
>>> St = EnumDomain("St", ("working", "prepared"))
>>> state = Var("rmState", St, index=(RM,))
>>> show(ForAll(RM, lambda r: state[r] == St.prepared))
'∀r∈RM: rmState[r] = prepared'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from .domains import BOOL, ConstPlus, Domain, EnumDomain
from .errors import SpecError


class Expr:
    __slots__ = ()
    __hash__ = object.__hash__

    def __bool__(self):
        raise SpecError(
            "an Expr was used as a Python truth value (and/or/not/if/chained comparison); "
            "use And(...), Or(...), Not(...) or If(...) instead")

    # arithmetic
    def __add__(self, o): return Op("+", (self, lift(o)))
    def __radd__(self, o): return Op("+", (lift(o), self))
    def __sub__(self, o): return Op("-", (self, lift(o)))
    def __rsub__(self, o): return Op("-", (lift(o), self))
    def __mul__(self, o): return Op("*", (self, lift(o)))
    def __rmul__(self, o): return Op("*", (lift(o), self))
    def __floordiv__(self, o): return Op("//", (self, lift(o)))
    def __mod__(self, o): return Op("%", (self, lift(o)))
    def __neg__(self): return Op("-", (Lit(0), self))

    # comparisons
    def __eq__(self, o): return Op("==", (self, lift(o)))  # type: ignore[override]
    def __ne__(self, o): return Op("!=", (self, lift(o)))  # type: ignore[override]
    def __lt__(self, o): return Op("<", (self, lift(o)))
    def __le__(self, o): return Op("<=", (self, lift(o)))
    def __gt__(self, o): return Op(">", (self, lift(o)))
    def __ge__(self, o): return Op(">=", (self, lift(o)))

    # logic
    def __and__(self, o): return And(self, o)
    def __rand__(self, o): return And(o, self)
    def __or__(self, o): return Or(self, o)
    def __ror__(self, o): return Or(o, self)
    def __invert__(self): return Not(self)

    def __repr__(self):
        return f"<{show(self)}>"

    def is_in(self, *values) -> "Expr":
        """Membership in a finite list of values."""
        return Or(*(self == v for v in values))


@dataclass(frozen=True, eq=False, repr=False)
class Lit(Expr):
    value: int
    domain: Domain | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ConfigRef(Expr):
    """A configuration constant (`rm`, `protocol`), folded to a literal at grounding."""

    name: str


@dataclass(frozen=True, eq=False, repr=False)
class ParamRef(Expr):
    """A row parameter or a quantifier's bound variable."""

    name: str
    domain: Domain


@dataclass(frozen=True, eq=False, repr=False)
class Op(Expr):
    """An operator applied to arguments: + - * // % == != < <= > >= and or not implies ite min max."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False, repr=False)
class Quant(Expr):
    """exists / forall / count / sum / min / max over a finite domain, binding `var`."""

    kind: str
    var: ParamRef
    body: Expr
    default: int = 0  # value of min/max over an empty range


@dataclass(frozen=True, eq=False, repr=False)
class Member(Expr):
    """`elem` belongs to the subset `subset` (a value of a SubsetDomain)."""

    subset: Expr
    elem: Expr


@dataclass(frozen=True, eq=False, repr=False)
class Read(Expr):
    """A read of an array var at index expressions (possibly computed, e.g. `log[p][hw[p]]`)."""

    var: "Var"
    index: tuple[Expr, ...]

    def __getitem__(self, idx) -> "Read":
        more = idx if isinstance(idx, tuple) else (idx,)
        return Read(self.var, self.index + tuple(lift(i) for i in more))

    def set(self, value) -> "Update":
        return Update(self, lift(value))


class OneOf:
    """A var's initial value chosen among several: every cell of the var starts in each of `values` (TLA+'s
    `x \\in S` in Init; for an array var, `x \\in [D -> S]`). `ANY` is every value of the var's domain.
    The initial states are every combination, less those the spec's `init` constraints exclude."""

    __slots__ = ("values",)

    def __init__(self, *values):
        if len(values) == 1 and isinstance(values[0], (set, frozenset, tuple, list)):
            values = tuple(values[0])
        if not values:
            raise SpecError("OneOf() needs at least one value, e.g. OneOf(False, True); for every value of the "
                            "domain write ANY")
        object.__setattr__(self, "values", tuple(lift(v) for v in values))

    def __setattr__(self, key, value):
        raise AttributeError("OneOf is immutable")

    def __repr__(self):
        return f"OneOf({', '.join(map(repr, self.values))})"


class _Any:
    """Every value of the var's domain, as a var's initial value (TLA+'s `x \\in Domain` in Init)."""

    __slots__ = ()

    def __repr__(self):
        return "ANY"


ANY = _Any()
INIT_CHOICES = (OneOf, _Any)


class Var(Expr):
    """A state variable: a scalar, or an array over index domains. Ghost vars serve properties only.

    A scalar var is itself an expression (its current value); an array var is indexed."""

    __slots__ = ("name", "domain", "index", "init", "ghost", "doc")
    __hash__ = object.__hash__

    def __init__(self, name: str, domain: Domain, index: tuple[Domain, ...] = (), init=None,
                 ghost: bool = False, doc: str = ""):
        if not isinstance(name, str) or not name:
            raise SpecError(f"a var's name must be a non-empty string, not {name!r}: Var(\"x\", Domain, ...)")
        if not isinstance(domain, Domain):
            raise SpecError(f"its domain must be a Domain (EnumDomain, IntRange, IdSet, BOOL, ...), not "
                            f"{type(domain).__name__}: Var({name!r}, Domain, ...)", var=name)
        if isinstance(index, Domain) or not isinstance(index, (tuple, list)) or \
                not all(isinstance(d, Domain) for d in index):
            raise SpecError(f"index must be a tuple of domains, e.g. index=(RM,) or index=(RM, Slot), not "
                            f"{index!r}", var=name)
        self.name = name
        self.domain = domain
        self.index = tuple(index)
        self.init = init if isinstance(init, INIT_CHOICES) else lift(init) if init is not None else None
        self.ghost = ghost
        self.doc = doc

    def __getitem__(self, idx) -> Read:
        idxs = idx if isinstance(idx, tuple) else (idx,)
        return Read(self, tuple(lift(i) for i in idxs))

    def set(self, value) -> "Update":
        return Update(Read(self, ()), lift(value))

    def __setattr__(self, key, value):
        if hasattr(self, "name") and key in Var.__slots__ and hasattr(self, "doc"):
            raise AttributeError("Var is immutable")
        object.__setattr__(self, key, value)


@dataclass(frozen=True, eq=False, repr=False)
class Update:
    """`target := value`; every right-hand side of a row reads the pre-state (TLA+ primes)."""

    target: Read
    value: Expr

    def __repr__(self):
        return f"{show(self.target)} := {show(self.value)}"


TRUE = Lit(1, BOOL)
FALSE = Lit(0, BOOL)

ExprLike = Union[Expr, int, bool]


def lift(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return TRUE if x else FALSE
    if isinstance(x, int):
        return Lit(x)
    if isinstance(x, str):
        raise SpecError(f"cannot use string {x!r} in an expression; enum labels are attributes of "
                        "their domain (e.g. TxnState.ONGOING) and constants are Config('name')")
    if isinstance(x, ConstPlus):
        raise SpecError(f"ConstPlus({x.name!r}, {x.delta}) bounds domains only; in an expression write "
                        f"Config({x.name!r}) {'-' if x.delta < 0 else '+'} {abs(x.delta)}")
    if isinstance(x, Domain):
        raise SpecError(f"domain {x.name} is not a value; bind a row parameter over it (Param('x', {x.name})) or "
                        f"quantify over it (ForAll({x.name}, lambda x: ...))")
    if isinstance(x, (set, frozenset, tuple, list)):
        raise SpecError(f"cannot use the {type(x).__name__} {x!r} in an expression: a var holds one value; for a "
                        "choice among several, give the row a parameter over a domain (Param) and one row per case")
    raise SpecError(f"cannot use {x!r} ({type(x).__name__}) in an expression; use a literal, "
                    "a var read, a parameter or an enum label")


def Param(name: str, domain: Domain) -> ParamRef:
    return ParamRef(name, domain)


def Config(name: str) -> ConfigRef:
    return ConfigRef(name)


def _flat(op: str, xs) -> tuple[Expr, ...]:
    out: list[Expr] = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out.extend(_flat(op, x))
            continue
        e = lift(x)
        if isinstance(e, Op) and e.op == op:
            out.extend(e.args)
        else:
            out.append(e)
    return tuple(out)


def And(*xs) -> Expr:
    args = _flat("and", xs)
    return TRUE if not args else args[0] if len(args) == 1 else Op("and", args)


def Or(*xs) -> Expr:
    args = _flat("or", xs)
    return FALSE if not args else args[0] if len(args) == 1 else Op("or", args)


def Not(x) -> Expr:
    return Op("not", (lift(x),))


def Implies(a, b) -> Expr:
    return Op("implies", (lift(a), lift(b)))


def If(c, a, b) -> Expr:
    return Op("ite", (lift(c), lift(a), lift(b)))


def Min(*xs) -> Expr:
    return Op("min", tuple(lift(x) for x in xs))


def Max(*xs) -> Expr:
    return Op("max", tuple(lift(x) for x in xs))


def _free_params(e: Expr, bound: tuple = ()) -> list:
    """The ParamRef objects in e that no quantifier inside e binds (by identity, not name)."""
    if isinstance(e, ParamRef):
        return [] if any(e is b for b in bound) else [e]
    if isinstance(e, Quant):
        return _free_params(e.body, bound + (e.var,))
    if isinstance(e, Op):
        return [x for a in e.args for x in _free_params(a, bound)]
    if isinstance(e, Member):
        return _free_params(e.subset, bound) + _free_params(e.elem, bound)
    if isinstance(e, Read):
        return [x for a in e.index for x in _free_params(a, bound)]
    return []


def _binder(kind: str, domain: Domain, fn: Callable[[ParamRef], object], default: int = 0) -> Quant:
    """The bound variable is named after fn's argument. Grounding binds by name, so when the body
    also mentions another variable of that name (an enclosing quantifier's or a row's, reached through
    a closure, e.g. a helper nested in itself), the bound one is renamed (i -> i') instead of
    capturing it."""
    code = getattr(fn, "__code__", None)
    name = code.co_varnames[0] if code is not None and code.co_argcount >= 1 else "x"
    var = ParamRef(name, domain)
    body = lift(fn(var))
    taken = {p.name for p in _free_params(body) if p is not var}
    if name in taken:
        while name in taken:
            name += "'"
        var = ParamRef(name, domain)
        body = lift(fn(var))
    return Quant(kind, var, body, default)


def Exists(domain: Domain, fn) -> Expr: return _binder("exists", domain, fn)
def ForAll(domain: Domain, fn) -> Expr: return _binder("forall", domain, fn)
def Count(domain: Domain, fn) -> Expr: return _binder("count", domain, fn)
def Sum(domain: Domain, fn) -> Expr: return _binder("sum", domain, fn)
def MinOver(domain: Domain, fn, default: int) -> Expr: return _binder("min", domain, fn, default)
def MaxOver(domain: Domain, fn, default: int) -> Expr: return _binder("max", domain, fn, default)


def Assign(target, value) -> Update:
    if isinstance(target, Var):
        target = Read(target, ())
    if not isinstance(target, Read):
        raise SpecError(f"the target of an assignment must be a var or an indexed var, not {show(target)}; write "
                        "x.set(value) or x[i].set(value)")
    return Update(target, lift(value))


# ---------------------------------------------------------------------------------------------
_INFIX = {"+": "+", "-": "-", "*": "*", "//": "÷", "%": "mod", "==": "=", "!=": "≠", "<": "<",
          "<=": "≤", ">": ">", ">=": "≥", "and": "∧", "or": "∨", "implies": "⇒"}
_QSYM = {"exists": "∃", "forall": "∀", "count": "#", "sum": "Σ", "min": "min", "max": "max"}


def show(e, env=None, qualified: bool = False) -> str:
    """A compact human rendering, used in tables, traces and error messages. `qualified` names enum
    labels with their domain (PcTM.Done), as domain errors do."""
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Lit):
        if e.domain is not None:
            if e.domain.is_bool:
                return "TRUE" if e.value else "FALSE"
            label = str(e.domain.label(e.value, env or {}))
            return f"{e.domain.name}.{label}" if qualified and isinstance(e.domain, EnumDomain) else label
        return str(e.value)
    if isinstance(e, ConfigRef):
        return e.name
    if isinstance(e, ParamRef):
        return e.name
    if isinstance(e, Read):
        return e.var.name + "".join(f"[{show(i, env, qualified)}]" for i in e.index)
    if isinstance(e, Member):
        return f"{show(e.elem, env, qualified)} ∈ {show(e.subset, env, qualified)}"
    if isinstance(e, Quant):
        sym = _QSYM[e.kind]
        return f"{sym}{e.var.name}∈{e.var.domain.name}: {show(e.body, env, qualified)}"
    if isinstance(e, Op):
        a = e.args
        if e.op == "not":
            return f"¬({show(a[0], env, qualified)})" if isinstance(a[0], Op) else f"¬{show(a[0], env, qualified)}"
        if e.op == "ite":
            c, x, y = (show(v, env, qualified) for v in a)
            return f"if {c} then {x} else {y}"
        if e.op in ("min", "max"):
            return f"{e.op}({', '.join(show(x, env, qualified) for x in a)})"
        sep = f" {_INFIX[e.op]} "
        parts = [f"({show(x, env, qualified)})" if isinstance(x, Op) and x.op not in ("min", "max", "not")
                 and x.op != e.op else show(x, env, qualified) for x in a]
        return sep.join(parts)
    return repr(e)
