"""Rows, tables, properties, symmetries, variants, configurations, and the Spec that holds them.

Everything here is frozen data. A spec is written once; a configuration sizes its domains and
sets its switches; a variant is a named, documented edit of it with the property it must break.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping

from .domains import Domain, IdSet, resolve_int
from .errors import ConfigError, SpecError
from .fairness import Fairness, SetFairness
from .expr import TRUE, And, Expr, ParamRef, Update, Var, lift
from .sequence import At, Channel, Lane, Receive

TAGS = ("crash", "zombie", "timeout", "network", "admin", "client", "env")
_ROW_ID = re.compile(r"^(.*\D|)(\d+)(\D*)$")  # stem, number, suffix of a row id


@dataclass(frozen=True, eq=False)
class Row:
    """One line of a transition table.

    `guard` is a tuple of conjuncts (read as their conjunction) so that variants can drop one by
    position and tables can print them one per line. `updates` are simultaneous."""

    id: str
    actor: str
    trigger: str
    guard: tuple[Expr, ...] = ()
    updates: tuple[Update, ...] = ()
    params: tuple[ParamRef, ...] = ()
    tags: tuple[str, ...] = ()
    ref: str = ""
    doc: str = ""
    at: At | None = None  # where the row happens on a sequence chart (default: its table's `at`)
    receives: tuple[Receive, ...] = ()  # messages the row reads (persistent channels) or takes delivery of
    sends_from: At | None = None  # whose messages the row sends, where not its channel's sender

    def __post_init__(self):
        object.__setattr__(self, "receives", tuple(self.receives))
        g = self.guard
        if isinstance(g, Expr):
            object.__setattr__(self, "guard", (g,))
        else:
            object.__setattr__(self, "guard", tuple(lift(x) for x in g))
        object.__setattr__(self, "updates", tuple(self.updates))
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "tags", tuple(self.tags))

    @property
    def guard_expr(self) -> Expr:
        return And(*self.guard) if self.guard else TRUE


@dataclass(frozen=True)
class Conformance:
    """The transitions of a table's status var that the reference implementation allows (e.g.
    Kafka's `validPreviousStates`), as (from, to) label pairs, under the configurations where
    `when` (an expression over configuration constants) holds. `unused` lists allowed transitions
    that no row takes on purpose, with the reason in `doc`."""

    allowed: tuple[tuple[str, str], ...]
    unused: tuple[tuple[str, str], ...] = ()
    when: Expr | None = None
    ref: str = ""
    doc: str = ""


@dataclass(frozen=True, eq=False)
class Table:
    """The rows of one actor. `status` names the var whose value is the actor's state (e.g. the
    coordinator's TransactionState), from which diagrams and conformance checks are derived.
    `nondeterministic` lists triggers for which several rows may be enabled in one state."""

    actor: str
    rows: tuple[Row, ...]
    status: str | None = None
    doc: str = ""
    nondeterministic: tuple[str, ...] = ()
    conformance: tuple[Conformance, ...] = ()
    at: At | None = None  # the lane its rows happen on (a row's own `at` wins)
    pending: str | None = None  # the status var's pending-state var (Kafka's pendingState): "pending X" in listings

    def place(self, r: Row) -> At | None:
        return r.at if r.at is not None else self.at


ALWAYS, SOMETIMES, RECOVERABLE = "always", "sometimes", "recoverable"
EVENTUALLY, LEADS_TO = "eventually", "leads_to"
PROPERTY_KINDS = (ALWAYS, SOMETIMES, RECOVERABLE, EVENTUALLY, LEADS_TO)
# judged on the stored state graph after the search: engines record edges and the goal/when masks
GRAPH_KINDS = (RECOVERABLE, EVENTUALLY, LEADS_TO)


@dataclass(frozen=True, eq=False)
class Property:
    """`always`: holds in every reachable state. `sometimes`: holds in some reachable state (a
    non-vacuity witness). `recoverable`: from every reachable state where `when` holds, a state
    satisfying `expr` is reachable using only rows without the tags in `exclude_tags`.
    `eventually`: every fair behaviour reaches a state satisfying `expr` (TLA+'s `<>expr`).
    `leads_to`: in every fair behaviour, every state where `when` holds is followed (or matched) by
    one satisfying `expr` (TLA+'s `when ~> expr`). Fairness is the spec's (`Spec.fairness`).
    `applies` (configuration constants only) says for which configs the property is checked at all:
    a feature's properties and witnesses do not apply where the config leaves the feature out."""

    name: str
    kind: str
    expr: Expr
    doc: str = ""
    when: Expr | None = None
    exclude_tags: tuple[str, ...] = ()
    ref: str = ""
    applies: Expr | None = None

    def __post_init__(self):
        if self.kind not in PROPERTY_KINDS:
            raise SpecError(f"kind must be one of {', '.join(PROPERTY_KINDS)}, not {self.kind!r}; build it with "
                            "Always(...), Sometimes(...), Recoverable(...), Eventually(...) or LeadsTo(...)", prop=self.name)
        object.__setattr__(self, "expr", lift(self.expr))
        if self.kind == LEADS_TO and self.when is None:
            raise SpecError(f"a leads_to property needs its condition: LeadsTo({self.name!r}, when, goal)",
                            prop=self.name)
        if self.kind == EVENTUALLY and self.when is not None:
            raise SpecError(f"an eventually property has no condition; write LeadsTo({self.name!r}, when, goal) "
                            "for one", prop=self.name)
        if self.applies is not None:
            object.__setattr__(self, "applies", lift(self.applies))


def Always(name, expr, doc="", ref="", applies=None) -> Property:
    return Property(name, ALWAYS, expr, doc, ref=ref, applies=applies)


def Sometimes(name, expr, doc="", ref="", applies=None) -> Property:
    return Property(name, SOMETIMES, expr, doc, ref=ref, applies=applies)


def Recoverable(name, goal, doc="", when=None, exclude_tags=(), ref="") -> Property:
    return Property(name, RECOVERABLE, goal, doc, when=None if when is None else lift(when),
                    exclude_tags=tuple(exclude_tags), ref=ref)


def Eventually(name, goal, doc="", ref="", applies=None) -> Property:
    """Every fair behaviour reaches a state where `goal` holds (TLA+'s `<>goal`)."""
    return Property(name, EVENTUALLY, goal, doc, ref=ref, applies=applies)


def LeadsTo(name, when, goal, doc="", ref="", applies=None) -> Property:
    """Whenever `when` holds, `goal` holds then or later, in every fair behaviour (TLA+'s `when ~> goal`)."""
    return Property(name, LEADS_TO, goal, doc, when=lift(when), ref=ref, applies=applies)


@dataclass(frozen=True)
class Assume:
    """A condition on the configuration constants alone (TLC's ASSUME): a config that violates it
    is rejected with `message` before any search."""

    expr: Expr
    message: str

    def __post_init__(self):
        object.__setattr__(self, "expr", lift(self.expr))


@dataclass(frozen=True)
class Symmetry:
    """Index domains whose elements are interchangeable: permuting them maps reachable states to
    reachable states and preserves every property (`check --symmetry` tests this on a sample of
    reachable states before it searches, `checker/symmetry_check.py`).

    `first` narrows a domain to its first members: `first=((Part, "parts"),)` permutes partitions
    0..parts-1 and leaves the others in place, for a domain sized for the largest configuration whose
    later members are unused or play another part (Kafka's __consumer_offsets partition)."""

    domains: tuple[Domain, ...]
    first: tuple[tuple[Domain, object], ...] = ()  # (domain, Size): only its first Size members are alike

    def members(self, d: Domain, env: Mapping[str, object]) -> range:
        """The members of `d` that are interchangeable under the configuration `env`."""
        values = d.values(env)
        if isinstance(d, IdSet) and d.none:  # the `none` value is nobody's to permute
            values = values[1:]
        for dom, size in self.first:
            if dom is d:
                return values[:max(0, resolve_int(size, env, d.name))]
        return values

    def describe(self) -> list[str]:
        """Each domain as `specs` lists it: `RM`, or `Part (its first parts)`."""
        out = []
        for d in self.domains:
            limit = next((size for dom, size in self.first if dom is d), None)
            out.append(d.name if limit is None else f"{d.name} (its first {limit})")
        return out


# ---- variants -------------------------------------------------------------------------------
@dataclass(frozen=True)
class DropRow:
    row: str


@dataclass(frozen=True)
class DropConjunct:
    row: str
    index: int


@dataclass(frozen=True)
class ReplaceGuard:
    row: str
    guard: tuple


@dataclass(frozen=True)
class ReplaceUpdate:
    """Replace (or, with `value=None`, drop) the update of `target` (a var name) in a row."""

    row: str
    target: str
    value: object = None


@dataclass(frozen=True)
class AddRow:
    """Add a row to the table of `table` (an actor) at its id's place: tables list their rows in id order,
    the order of their ground actions (see `_in_id_order`)."""

    table: str
    row: Row


@dataclass(frozen=True)
class SetParam:
    """Force a configuration switch (e.g. a protocol feature flag) for this variant."""

    name: str
    value: object


Edit = DropRow | DropConjunct | ReplaceGuard | ReplaceUpdate | AddRow | SetParam | SetFairness


@dataclass(frozen=True)
class Variant:
    """A named, documented edit of a spec, with the properties it is expected to break (at least
    one of `breaks` must be violated under `config`)."""

    name: str
    doc: str
    breaks: tuple[str, ...]
    edits: tuple[Edit, ...]
    config: str = "tiny"
    ref: str = ""
    trigger: str = ""
    settings: tuple[tuple[str, object], ...] = ()  # config overrides used to check it


# ---- configuration --------------------------------------------------------------------------
@dataclass(frozen=True)
class ConfigParam:
    """A configuration constant: an int (with inclusive bounds) or a choice among strings."""

    name: str
    default: object
    doc: str = ""
    choices: tuple = ()
    lo: int | None = None
    hi: int | None = None

    def parse(self, text: object) -> object:
        if self.choices:
            if text in self.choices:
                return text
            raise ConfigError(f"{self.name} must be one of {', '.join(map(str, self.choices))}; got {text!r}")
        if isinstance(text, bool):
            return int(text)
        try:
            value = int(text)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ConfigError(f"{self.name} must be an integer; got {text!r}") from None
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            rng = f"{self.lo if self.lo is not None else '-∞'}..{self.hi if self.hi is not None else '∞'}"
            raise ConfigError(f"{self.name} must be in {rng}; got {value}")
        return value


@dataclass(frozen=True)
class NamedConfig:
    """A named preset: values for configuration constants, plus search bounds (None = unbounded)."""

    name: str
    values: tuple[tuple[str, object], ...] = ()
    doc: str = ""
    max_states: int | None = None
    max_depth: int | None = None
    heavy: bool = False  # minutes of search or GiBs: left out of `txncheck report` unless named


@dataclass(frozen=True)
class Spec:
    name: str
    doc: str
    vars: tuple[Var, ...]
    tables: tuple[Table, ...]
    properties: tuple[Property, ...] = ()
    params: tuple[ConfigParam, ...] = ()
    configs: tuple[NamedConfig, ...] = ()
    variants: tuple[Variant, ...] = ()
    symmetry: Symmetry | None = None
    init: tuple[Expr, ...] = ()  # extra constraints on initial states (rarely needed)
    assumptions: tuple[Assume, ...] = ()  # conditions on the configuration constants
    invariants_for_induction: tuple[Property, ...] = ()  # strengthening invariants (symbolic engine)
    terminal: Expr | None = None  # states where having no enabled row is not a deadlock
    ref: str = ""
    variant: str | None = None  # set on a spec produced by `with_variant`
    forced: tuple[tuple[str, object], ...] = ()  # switches a variant's SetParam edits impose
    lanes: tuple[Lane, ...] = ()  # sequence-chart lanes, left to right (spec/sequence.py)
    channels: tuple[Channel, ...] = ()  # the cells that hold messages in flight
    findings: str = ""  # what the checker found: a Markdown file of the txncheck.spec package (txncheck report)
    fairness: tuple[Fairness, ...] = ()  # for eventually / leads_to properties (spec/fairness.py)
    retired: tuple[tuple[str, str], ...] = ()  # constants the spec no longer has: (name, what replaces it)

    # -- lookups ------------------------------------------------------------------------------
    @property
    def rows(self) -> tuple[Row, ...]:
        return tuple(r for t in self.tables for r in t.rows)

    def row(self, row_id: str) -> Row:
        for r in self.rows:
            if r.id == row_id:
                return r
        raise SpecError(f"spec {self.name} has no row {row_id}; `txncheck tables` lists its rows")

    def property(self, name: str) -> Property:
        for p in self.properties:
            if p.name == name:
                return p
        raise ConfigError(f"spec {self.name} has no property {name}; its properties are "
                          + ", ".join(p.name for p in self.properties))

    def config(self, name: str) -> NamedConfig:
        for c in self.configs:
            if c.name == name:
                return c
        raise ConfigError(f"spec {self.name} has no config '{name}'; choose one of "
                          + ", ".join(c.name for c in self.configs))

    def variant_named(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        known = ", ".join(v.name for v in self.variants) or "none"
        raise ConfigError(f"spec {self.name} has no variant '{name}'; its variants are: {known}")

    def param(self, name: str) -> ConfigParam:
        for p in self.params:
            if p.name == name:
                return p
        for old, advice in self.retired:
            if old == name:
                raise ConfigError(f"spec {self.name} has no configuration constant '{name}' any more: {advice}")
        known = ", ".join(p.name for p in self.params) or "none"
        raise ConfigError(f"spec {self.name} has no configuration constant '{name}'; "
                          f"known constants: {known}")

    # -- configuration ------------------------------------------------------------------------
    def resolve_config(self, config: str | None = None, overrides: Mapping[str, object] = ()) -> "ResolvedConfig":
        named = self.config(config) if config else (self.configs[0] if self.configs else NamedConfig("default"))
        values: dict[str, object] = {p.name: p.default for p in self.params}
        for item in named.values:  # a mistake here is written in the spec: about the named config
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ConfigError(f"its values must be (name, value) pairs, e.g. ((\"rm\", 3),), not {named.values!r}",
                                  config=named.name)
            k, v = item
            try:
                values[k] = self.param(k).parse(v)
            except ConfigError as err:
                raise ConfigError(f"sets {k}={v!r}, but {err.message}", config=named.name) from None
        for k, v in self.forced:  # a variant's switch wins over the named config
            values[k] = v
        max_states, max_depth = named.max_states, named.max_depth
        changed: dict[str, object] = {}
        for k, v in dict(overrides).items():
            if k == "max_states":
                max_states = changed[k] = _parse_bound(k, v)
            elif k == "max_depth":
                max_depth = changed[k] = _parse_bound(k, v)
            else:
                parsed = self.param(k).parse(v)
                if parsed != values[k]:
                    changed[k] = parsed
                values[k] = parsed
        return ResolvedConfig(named.name, tuple(sorted(values.items())), max_states, max_depth,
                              tuple(sorted(changed.items())))

    def with_invariants_checked(self) -> "Spec":
        """The strengthening invariants as ordinary always properties, for the explicit engines to check
        on every reachable state (a false one would only be dropped by the induction pass)."""
        names = {p.name for p in self.properties}
        clash = sorted(p.name for p in self.invariants_for_induction if p.name in names)
        if clash:
            raise SpecError("a strengthening invariant has this name too"
                            + (f" (and so have {', '.join(clash[1:])})" if clash[1:] else "") + "; rename them",
                            prop=clash[0])
        return replace(self, properties=self.properties + self.invariants_for_induction, invariants_for_induction=())

    # -- variants -----------------------------------------------------------------------------
    def with_variant(self, name: str | None) -> "Spec":
        if not name:
            return self
        variant = self.variant_named(name)
        tables = list(self.tables)
        params = list(self.params)
        forced = dict(self.forced)
        fairness = self.fairness
        for edit in variant.edits:
            if isinstance(edit, SetFairness):
                fairness = tuple(edit.fairness)
                continue
            if isinstance(edit, SetParam):
                p = self.param(edit.name)
                forced[edit.name] = p.parse(edit.value)
                params = [replace(q, default=forced[edit.name]) if q.name == edit.name else q for q in params]
                continue
            if isinstance(edit, AddRow):
                actors = [t.actor for t in tables]
                if edit.table not in actors:
                    raise SpecError(f"AddRow names table {edit.table}, which the spec does not have; its tables are "
                                    f"{', '.join(actors)}", variant=name)
                idx = actors.index(edit.table)
                tables[idx] = replace(tables[idx], rows=_in_id_order(tables[idx].rows, edit.row))
                continue
            found = False
            for ti, t in enumerate(tables):
                rows = list(t.rows)
                for ri, r in enumerate(rows):
                    if r.id != edit.row:
                        continue
                    found = True
                    rows[ri] = _apply_edit(r, edit, name)
                tables[ti] = replace(t, rows=tuple(x for x in rows if x is not None))
            if not found:
                raise SpecError(f"edits row {edit.row}, which the spec does not have; fix the row id (`txncheck "
                                "tables` lists the rows)", variant=name)
        return replace(self, tables=tuple(tables), params=tuple(params), variant=name,
                       forced=tuple(sorted(forced.items())), fairness=fairness)


def _id_number(rid: str) -> tuple[str, int, str] | None:
    """A row id's stem, number and suffix ("TC-32" -> ("TC-", 32, ""), "LD-02b" -> ("LD-", 2, "b")); None for
    an id with no number."""
    m = _ROW_ID.match(rid)
    return None if m is None else (m.group(1), int(m.group(2)), m.group(3))


def _in_id_order(rows: tuple[Row, ...], row: Row) -> tuple[Row, ...]:
    """`rows` with `row` at its id's place: before the first row of its stem that sorts after it, else after
    the last row of its stem, else (a new stem, or an id with no number) at the end. A row that replaces a
    dropped one takes its place, so the search meets the table's actions in the same order."""
    key = _id_number(row.id)
    at = len(rows)
    if key is not None:
        same = [(n, k[1:]) for n, k in ((n, _id_number(r.id)) for n, r in enumerate(rows)) if k and k[0] == key[0]]
        later = [n for n, rest in same if rest > key[1:]]
        if later:
            at = later[0]
        elif same:
            at = same[-1][0] + 1
    return rows[:at] + (row,) + rows[at:]


def _apply_edit(r: Row, edit, vname: str) -> Row | None:
    if isinstance(edit, DropRow):
        return None
    if isinstance(edit, DropConjunct):
        if not 0 <= edit.index < len(r.guard):
            raise SpecError(f"row {r.id} has no guard conjunct {edit.index}: its {len(r.guard)} conjuncts are "
                            f"numbered from 0", variant=vname)
        return replace(r, guard=r.guard[:edit.index] + r.guard[edit.index + 1:])
    if isinstance(edit, ReplaceGuard):
        return replace(r, guard=tuple(edit.guard) if isinstance(edit.guard, (tuple, list)) else (edit.guard,))
    if isinstance(edit, ReplaceUpdate):
        hits = [k for k, u in enumerate(r.updates) if u.target.var.name == edit.target]
        if not hits:
            raise SpecError(f"row {r.id} does not update {edit.target}; it updates "
                            f"{', '.join(u.target.var.name for u in r.updates) or 'nothing'}", variant=vname)
        if edit.value is None:
            return replace(r, updates=tuple(u for k, u in enumerate(r.updates) if k not in hits))
        k = hits[0]
        return replace(r, updates=r.updates[:k] + (Update(r.updates[k].target, lift(edit.value)),) + r.updates[k + 1:])
    raise SpecError(f"{edit!r} is not an edit; use DropRow, DropConjunct, ReplaceGuard, ReplaceUpdate, AddRow, "
                    "SetParam or SetFairness", variant=vname)


def _parse_bound(k, v) -> int | None:
    if v in (None, "none", "None", ""):
        return None
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{k} must be a positive integer or 'none'; got {v!r}") from None
    if n < 0:
        raise ConfigError(f"{k} must be a positive integer or 'none'; got {v!r}")
    return n


@dataclass(frozen=True)
class ResolvedConfig:
    """A named config with overrides applied: every constant has a value."""

    name: str
    values: tuple[tuple[str, object], ...]
    max_states: int | None = None
    max_depth: int | None = None
    overrides: tuple[tuple[str, object], ...] = ()  # what differs from the named config (--set, a variant's switch)

    @property
    def env(self) -> dict[str, object]:
        return dict(self.values)

    def to_json(self) -> dict:
        d = {"name": self.name, "values": dict(self.values), "max_states": self.max_states,
             "max_depth": self.max_depth}
        if self.overrides:  # absent when there are none, so plain runs write the same bytes as before
            d["overrides"] = dict(self.overrides)
        return d
