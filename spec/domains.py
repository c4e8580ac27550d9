"""Finite domains: enums, integer ranges, id sets sized by a configuration constant, subsets.

A domain's size may depend on configuration constants; `values(env)` resolves it. Values are
plain ints: enums and ids count from 0, ranges carry their own integers (possibly negative).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Union

from .errors import ConfigError


@dataclass(frozen=True)
class ConstPlus:
    """A configuration constant plus a fixed amount, as a domain bound: `ConstPlus("inputs", -1)`
    is the last offset of an input partition of `inputs` records."""

    name: str
    delta: int

    def __str__(self) -> str:
        return f"{self.name}{self.delta:+d}"


Size = Union[int, str, ConstPlus]  # an int, an int configuration constant's name, or one plus an amount


def resolve_int(size: Size, env: Mapping[str, object], domain: str) -> int:
    """A bound or size of the domain named `domain` under a configuration; a mistake is about the domain."""
    if isinstance(size, bool):
        raise ConfigError(f"a bound or size is {size}, a boolean; give an integer or the name of an integer "
                          "configuration constant", domain=domain)
    if isinstance(size, int):
        return size
    if isinstance(size, ConstPlus):
        return resolve_int(size.name, env, domain) + size.delta
    if not isinstance(size, str):
        raise ConfigError(f"a bound or size is {size!r}; give an integer, the name of an integer configuration "
                          "constant, or ConstPlus(name, amount)", domain=domain)
    if size not in env:
        known = ", ".join(sorted(env)) or "none"
        raise ConfigError(f"depends on configuration constant '{size}', which the spec does not declare; add "
                          f"ConfigParam('{size}', default, ...) to its params or fix the name (declared: {known})",
                          domain=domain)
    value = env[size]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"configuration constant '{size}' sizes it, so it must be an integer, but it is {value!r}; "
                          "size the domain with an integer constant", domain=domain)
    return value


@dataclass(frozen=True, eq=False)
class Domain:
    name: str

    def values(self, env: Mapping[str, object]) -> range:
        raise NotImplementedError

    def label(self, value: int, env: Mapping[str, object]) -> str | int:
        return value

    def parse(self, text: object, env: Mapping[str, object]) -> int:
        """The value a label stands for (inverse of `label`)."""
        for v in self.values(env):
            if self.label(v, env) == text or str(self.label(v, env)) == str(text):
                return v
        raise ValueError(f"{text!r} is not a value of domain {self.name}")

    def in_use(self, value: int, env: Mapping[str, object]) -> bool:
        """Whether member `value` of an index domain is used under this configuration (a domain sized at a fixed
        maximum has members beyond the configured size, whose cells keep their initial value)."""
        return True

    @property
    def is_bool(self) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class EnumDomain(Domain):
    """Named constants. `TxnState.ONGOING` is the literal for label ONGOING."""

    labels: tuple[str, ...] = ()

    def __post_init__(self):
        if len(set(self.labels)) != len(self.labels) or not self.labels:
            repeated = sorted({x for x in self.labels if self.labels.count(x) > 1})
            raise ValueError(f"enum {self.name}: labels must be distinct and non-empty, "
                             + (f"but {', '.join(map(repr, repeated))} is repeated" if repeated else "but there are none")
                             + f"; e.g. EnumDomain({self.name!r}, ('a', 'b'))")

    def values(self, env=None) -> range:
        return range(len(self.labels))

    def label(self, value, env=None):
        return self.labels[value] if 0 <= value < len(self.labels) else f"<{value}>"

    def __getattr__(self, item: str):
        labels = self.__dict__.get("labels", ())
        if item in labels:
            from .expr import Lit
            return Lit(labels.index(item), self)
        raise AttributeError(f"enum {self.__dict__.get('name')} has no label {item}; its labels are "
                             + ", ".join(labels))

    def lit(self, label: str):
        from .expr import Lit
        return Lit(self.labels.index(label), self)

    @property
    def is_bool(self) -> bool:
        return self.labels == ("false", "true")


@dataclass(frozen=True, eq=False)
class IntRange(Domain):
    """Integers lo..hi inclusive; either bound may be a configuration constant's name. `used_hi` (a constant's
    name) marks a copy with a fixed `hi`, for an array var a row updates for every member: members above `used_hi`
    are unused under the configuration and keep their initial value."""

    lo: Size = 0
    hi: Size = 0
    used_hi: Size | None = None

    def in_use(self, value, env):
        return self.used_hi is None or value <= resolve_int(self.used_hi, env, self.name)

    def values(self, env: Mapping[str, object]) -> range:
        lo = resolve_int(self.lo, env, self.name)
        hi = resolve_int(self.hi, env, self.name)
        if hi < lo:
            raise ConfigError(f"has no values under this configuration ({lo}..{hi}); raise its upper bound (or the "
                              "constant it depends on), or lower its lower bound", domain=self.name)
        return range(lo, hi + 1)

    def parse(self, text, env):
        try:
            v = int(text)
        except (TypeError, ValueError):
            raise ValueError(f"{text!r} is not an integer of domain {self.name}") from None
        if v not in self.values(env):
            raise ValueError(f"{v} is outside domain {self.name}")
        return v


@dataclass(frozen=True, eq=False)
class IdSet(Domain):
    """Interchangeable identities (resource managers, transactional ids, partitions): 0..size-1.

    `none` labels an extra value -1, "no member", for a var that holds an id only some of the time
    (the partition of a request in flight): resetting it to -1 rather than to a member keeps the members
    alike, so that a symmetry over the id set stays sound. Such a domain is the same ids as the one
    without `none` (they compare and mix), and symmetry leaves -1 in place.

    `widest` marks a copy sized at the largest size the configuration allows (a fixed number), for an array
    var that a row updates for every member with a loop written out in the spec: it is the same ids as the
    configured set, and its members beyond the configured size (`used`, a constant's name) keep their initial
    value."""

    size: Size = 1
    prefix: str = ""
    none: str = ""
    widest: bool = False
    used: Size | None = None

    def in_use(self, value, env):
        return self.used is None or value < resolve_int(self.used, env, self.name)

    def values(self, env: Mapping[str, object]) -> range:
        n = resolve_int(self.size, env, self.name)
        if n < 1:
            fix = f"set {self.size.name if isinstance(self.size, ConstPlus) else self.size} higher" \
                if isinstance(self.size, (str, ConstPlus)) else "give it a size of at least 1"
            raise ConfigError(f"needs at least one element, but its size is {n}; {fix}", domain=self.name)
        return range(-1 if self.none else 0, n)

    def label(self, value, env=None):
        if value == -1 and self.none:
            return self.none
        return f"{self.prefix or self.name.lower()}{value + 1}"


@dataclass(frozen=True, eq=False)
class SubsetDomain(Domain):
    """The subsets of `base` with at least `min_size` elements (e.g. majorities of acceptors).

    Values index `subsets(env)`, ordered by size, then lexicographically."""

    base: Domain = None  # type: ignore[assignment]
    min_size: Size | str = 0
    majority: bool = False

    def subsets(self, env) -> tuple[tuple[int, ...], ...]:
        elems = list(self.base.values(env))
        k = len(elems) // 2 + 1 if self.majority else resolve_int(self.min_size, env, self.name)
        out = []
        for size in range(max(k, 0), len(elems) + 1):
            out.extend(itertools.combinations(elems, size))
        return tuple(out)

    def values(self, env) -> range:
        return range(len(self.subsets(env)))

    def label(self, value, env):
        subset = self.subsets(env)[value]
        return "{" + ",".join(str(self.base.label(v, env)) for v in subset) + "}"


BOOL = EnumDomain("Bool", ("false", "true"))


# ---- which values may meet (static domain checking, spec/domain_check.py) ---------------------------
def enums_agree(a: EnumDomain, b: EnumDomain) -> bool:
    """Values of enums `a` and `b` may meet (be compared, or one stored where the other is expected):
    enum values are positions, so this holds when every position the two share names the same label,
    i.e. one's labels begin the other's (`Decision` = (prepared, aborted) within `Val` = (prepared,
    aborted, none)). Then comparing positions compares labels, and a stored value keeps its label."""
    if a is b:
        return True
    n = min(len(a.labels), len(b.labels))
    return a.labels[:n] == b.labels[:n]


def same_ids(a: Domain, b: Domain) -> bool:
    """Two id sets (or two subset domains) are the same domain: one object, or a copy of it (an id set may be
    copied with another label prefix, to show what its ids stand for in some vars)."""
    if a is b:
        return True
    if isinstance(a, IdSet) and isinstance(b, IdSet):  # with or without a `none` value, or widest: the same ids;
        # the label prefix is only how a value is shown
        skip = {"none", "size", "widest", "used", "prefix"} if a.widest or b.widest else {"none", "prefix"}
        return ({k: v for k, v in a.__dict__.items() if k not in skip}
                == {k: v for k, v in b.__dict__.items() if k not in skip})
    return type(a) is type(b) and a.__dict__ == b.__dict__


def describe(d: Domain | None) -> str:
    """A domain as error messages name it."""
    if d is None:
        return "a plain integer"
    if d.is_bool:
        return "Bool"
    kind = {EnumDomain: "enum", IdSet: "id set", IntRange: "integer range", SubsetDomain: "subset domain"}
    return f"{kind.get(type(d), 'domain')} {d.name}"
