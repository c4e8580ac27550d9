"""Fairness: which actions a behaviour may not neglect forever, for `eventually` and `leads_to` properties.

A behaviour of a spec may stop doing anything at any point (TLA+'s stuttering): without fairness
no liveness property holds except one already true at the start. A fairness condition rules out
behaviours that neglect an action forever, as TLA+'s `WF_vars(A)` and `SF_vars(A)` do:

- weak (`WeakFair`): a behaviour in which the action is enabled continuously from some point on
  must take it infinitely often;
- strong (`StrongFair`): a behaviour in which the action is enabled infinitely often must take it
  infinitely often.

The action is a group of rows, named by row id or by actor (every row of that table); no names
means every row (TLA+'s `WF_vars(Next)`). `per` splits the group by the values of some of the rows'
parameters, one condition per value (PlusCal's `fair process`: `\\A self \\in RM: WF_vars(rm(self))`
is `WeakFair("RM", per=("r",))`). An action counts as enabled only where it changes the state
(`ENABLED <<A>>_vars`), and as taken only where it did.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import SpecError

WEAK, STRONG = "weak", "strong"


@dataclass(frozen=True)
class Fairness:
    kind: str                       # WEAK or STRONG
    actions: tuple[str, ...] = ()   # row ids or actor names; empty: every row
    per: tuple[str, ...] = ()       # parameter names: one condition per value of these
    each: bool = False              # one condition per ground action (every row and parameter value)
    exclude_tags: tuple[str, ...] = ()  # rows with these tags are left out (faults, timeouts)

    def __post_init__(self):
        if self.each and self.per:
            raise SpecError(f"fairness {self.label}: `each` already makes one condition per action; drop `per`")
        if self.kind not in (WEAK, STRONG):
            raise SpecError(f"fairness: kind must be {WEAK!r} or {STRONG!r}, not {self.kind!r}; "
                            "write WeakFair(...) or StrongFair(...)")
        for what, names in (("actions", self.actions), ("per", self.per), ("exclude_tags", self.exclude_tags)):
            if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
                raise SpecError(f"fairness {self.label}: {what} must be names (strings), e.g. "
                                f"WeakFair(\"RM\", per=(\"r\",)), not {names!r}")

    @property
    def label(self) -> str:
        """As TLA+ writes it: `WF(RM per r)`, `SF(Next)`."""
        names = " ".join(self.actions) if self.actions else "Next"
        per = f" per {', '.join(self.per)}" if self.per else " each" if self.each else ""
        without = f" without {', '.join(self.exclude_tags)}" if self.exclude_tags else ""
        return f"{'WF' if self.kind == WEAK else 'SF'}({names}{per}{without})"


def _fair(kind, actions, per, each, exclude_tags) -> Fairness:
    return Fairness(kind, tuple(actions), (per,) if isinstance(per, str) else tuple(per), each,
                    (exclude_tags,) if isinstance(exclude_tags, str) else tuple(exclude_tags))


def WeakFair(*actions: str, per: tuple[str, ...] | str = (), each: bool = False,
             exclude_tags: tuple[str, ...] | str = ()) -> Fairness:
    return _fair(WEAK, actions, per, each, exclude_tags)


def StrongFair(*actions: str, per: tuple[str, ...] | str = (), each: bool = False,
               exclude_tags: tuple[str, ...] | str = ()) -> Fairness:
    return _fair(STRONG, actions, per, each, exclude_tags)


@dataclass(frozen=True)
class SetFairness:
    """A variant edit: replace the spec's fairness (`()` drops it, to show a property needs it)."""

    fairness: tuple[Fairness, ...]


def describe(fairness: tuple[Fairness, ...]) -> str:
    return ", ".join(f.label for f in fairness) if fairness else "no fairness"


@dataclass(frozen=True)
class FairGroups:
    """A spec's fairness over ground actions: one group per condition and `per` value, in a fixed order."""

    labels: tuple[str, ...]                 # e.g. "WF(RM per r=r2)"
    strong: tuple[bool, ...]
    of_action: tuple[tuple[int, ...], ...]  # the groups of each ground action, by action id

    @property
    def count(self) -> int:
        return len(self.labels)


def ground_groups(spec, actions, env) -> FairGroups:
    """`spec.fairness` over `actions` (a ground model's, by id), checked against the spec's rows."""
    rows = spec.rows
    ids = {r.id for r in rows}
    actors = {r.actor for r in rows}
    found: dict[tuple, list[int]] = {}
    for fi, f in enumerate(spec.fairness):
        unknown = [n for n in f.actions if n not in ids and n not in actors]
        if unknown:
            raise SpecError(f"fairness {f.label}: no row or actor named {', '.join(unknown)}; name rows by id "
                            f"or actors by table ({', '.join(sorted(actors))})")
        chosen = {r.id for r in rows if (not f.actions or r.id in f.actions or r.actor in f.actions)
                  and not set(r.tags) & set(f.exclude_tags)}
        for r in rows:
            missing = [p for p in f.per if r.id in chosen and p not in {q.name for q in r.params}]
            if missing:
                raise SpecError(f"fairness {f.label}: row {r.id} has no parameter {', '.join(missing)}; "
                                "`per` must name a parameter of every row the condition covers")
        for a in actions:
            if a.row.id in chosen:
                values = dict(a.params)
                key = (a.id,) if f.each else tuple(values[p] for p in f.per)
                found.setdefault((fi, key), []).append(a.id)
    keys = sorted(found)
    members: list[set[int]] = [set() for _ in actions]
    labels = []
    for g, key in enumerate(keys):
        for aid in found[key]:
            members[aid].add(g)
        fi, values = key
        f = spec.fairness[fi]
        a = actions[found[key][0]]
        named = {p.name: p.domain for p in a.row.params}
        if f.each:
            labels.append(f"{'WF' if f.kind == WEAK else 'SF'}({a.label})")
            continue
        names = " ".join(f.actions) if f.actions else "Next"
        per = "".join(f" {p}={named[p].label(v, env)}" for p, v in zip(f.per, values))
        labels.append(f"{'WF' if f.kind == WEAK else 'SF'}({names}{per})")
    return FairGroups(tuple(labels), tuple(spec.fairness[fi].kind == STRONG for fi, _ in keys),
                      tuple(tuple(sorted(m)) for m in members))
