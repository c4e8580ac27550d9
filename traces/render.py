"""Text rendering of traces for terminals and `traces/NAME.txt`.

In order: the header (spec, config and its overrides, variant, the property's kind and name, the
verdict, the property's description); the story, one line per step; step 0's state, summarised
(only the cells that change later, or differ from the initial state, by the actor whose rows write
them; the rest folded); every step with the cells it changed; the cells that make the property
false (a witness: true), and the explanation.

Everything but the trace is optional, so a trace renders without its model (`--show` of a trace
whose spec cannot be loaded): `story` (`{step: line}`, from traces/story.py) says what happens in
sequence-chart terms, else each line is the row's actor and trigger; `guide` (a `StateGuide`, from
traces/text.py) groups the vars and knows the initial values, else the state is one group and
(step 0 being the initial state) every cell that never changes is folded.

>>> from txncheck.traces.schema import Step, Trace
>>> t = Trace("demo", None, {"name": "tiny", "values": {}}, "scalar", {"name": "P", "kind": "always", "doc": ""},
...           "violation", (Step(0, None, None, None, "Init", {}, (), {"x": 0, "y": 0}),
...                         Step(1, "R-1", "A", "inc", "R-1", {}, (), {"x": 1, "y": 0},
...                              ({"cell": "x", "before": 0, "after": 1},))),
...           {"x": 1})
>>> print(render_trace_text(t))  # doctest: +NORMALIZE_WHITESPACE
demo (config tiny): always property P is violated after 1 step
<BLANKLINE>
   1  R-1  A  inc
<BLANKLINE>
   0  Init: the cells that change later; the others keep their initial value
         x = 0
         … 1 more cell at its initial value
   1  R-1  [A: inc]
       x: 0 → 1
<BLANKLINE>
violated by: x = 1
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .schema import Trace

_VERB = {"violation": "is violated", "witness": "is witnessed", "deadlock": "deadlock",
         "unrecoverable": "cannot recover"}
# a trace's kind as the viewer and the plots name its outcome
OUTCOME = {"violation": "violated", "witness": "witnessed", "deadlock": "deadlock", "unrecoverable": "cannot recover",
           "cti": "not inductive", "lasso": "violated"}
WIDTH = 110  # lines of cells are wrapped at this width


@dataclass(frozen=True)
class VarGroup:
    """Vars written by the same actor(s): `title` names them ("producer", "producer + coordinator",
    "history (ghost)"); `legend` is how the text abbreviates the vars ("pc_*", "n_lost")."""

    title: str
    vars: tuple[str, ...]
    legend: tuple[str, ...] = ()


@dataclass(frozen=True)
class StateGuide:
    """What the model tells the text about states: the var groups in the spec's order, every cell's
    initial value (as a trace writes values), and the cells no action of the configuration writes."""

    groups: tuple[VarGroup, ...]
    initial: Mapping[str, object] = field(default_factory=dict)
    unused: frozenset = frozenset()


def _flatten(prefix: str, value, out: list):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}[{k}]", v, out)
    else:
        out.append((prefix, value))


def flat_state(state: dict) -> list[tuple[str, object]]:
    out: list = []
    for k, v in state.items():
        _flatten(k, v, out)
    return out


def render_trace_text(t: Trace, story: Mapping[int, str] | None = None, guide: StateGuide | None = None) -> str:
    lines = _header(t)
    lines.append("")
    lines += _story(t, story)
    lines.append("")
    lines += _first_state(t, guide)
    for s in t.steps[1:]:
        tags = f" ({', '.join(s.tags)})" if s.tags else ""
        lines.append(f"{s.index:>4}  {s.label}  [{s.actor}: {s.trigger}]{tags}")
        # the changed cells, several to a line: a step reads as one short paragraph
        lines += _wrap(" " * 7, [f"{c['cell']}: {_fmt(c['before'])} → {_fmt(c['after'])}" for c in s.changed], " " * 7)
    if t.loop is not None:
        lines.append(_loop_line(t))
    lines.append("")
    if t.values:
        word = "witnessed by" if t.kind == "witness" else "violated by"
        lines += _wrap(f"{word}: ", [f"{k} = {_fmt(v)}" for k, v in t.values.items()], " " * 4)
    if t.explanation:
        lines.append(t.explanation)
    return "\n".join(lines).rstrip() + "\n"


def _loop_line(t: Trace) -> str:
    """TLC's "Back to state": where the lasso's cycle returns, or that it stutters forever."""
    n = t.length
    if t.loop == n:
        return f"      then step {n}'s state repeats forever (stuttering)"
    return f"      back to step {t.loop}: steps {t.loop + 1}-{n} repeat forever"


def _header(t: Trace) -> list[str]:
    cfg = str(t.config.get("name", "?"))
    overrides = t.config.get("overrides")
    if isinstance(overrides, dict) and overrides:  # the settings that produced it, as --set gave them
        cfg += "".join(f", {k}={_fmt(v)}" for k, v in sorted(overrides.items()))
    var = f", variant {t.variant}" if t.variant else ""
    p = t.property
    n = t.length
    if t.kind == "deadlock":
        head = f"{t.spec} (config {cfg}{var}): deadlock after {n} step{'s' if n != 1 else ''}"
    elif t.kind == "lasso":
        then = "stutters" if t.loop == n else "loops"
        head = (f"{t.spec} (config {cfg}{var}): {p.get('kind', '')} property {p['name']} is violated by a fair "
                f"behaviour: {n} step{'s' if n != 1 else ''}, then it {then} forever")
    elif t.kind == "cti":
        head = (f"{t.spec} (config {cfg}{var}): {p.get('kind', '')} property {p['name']} is not inductive: "
                f"a counterexample to {n}-induction")
    else:
        head = (f"{t.spec} (config {cfg}{var}): {p.get('kind', '')} property {p['name']} "
                f"{_VERB[t.kind]} after {n} step{'s' if n != 1 else ''}")
    lines = [head]
    if p.get("doc"):
        lines.append(f"  {p['name']}: {p['doc']}")
    return lines


def _story(t: Trace, story: Mapping[int, str] | None) -> list[str]:
    """One line per step: the row, then where it happens and what it sends and receives (`story`),
    or the row's actor and trigger."""
    steps = t.steps[1:]
    width = max((len(str(s.row)) for s in steps), default=0)
    out = []
    for s in steps:
        line = (story or {}).get(s.index) or f"{s.actor}  {s.trigger}"
        tags = f"  ({', '.join(s.tags)})" if s.tags else ""
        out.append(f"{s.index:>4}  {str(s.row):<{width}}  {line}{tags}")
    return out or ["      (no steps)"]


def _first_state(t: Trace, guide: StateGuide | None) -> list[str]:
    """Step 0: the cells that change later or differ from the initial state, by group; the others
    folded into a count."""
    s0 = t.steps[0]
    cells = flat_state(s0.state)
    changing = {c.get("cell") for s in t.steps[1:] for c in s.changed}
    initial = guide.initial if guide is not None else {}
    cti = t.kind == "cti"

    def shown(name, value) -> bool:
        if name in changing:
            return True
        if guide is None:
            return cti  # a cti's start is not the initial state: without the model, show it all
        return name not in initial or not _same(initial[name], value)

    title = s0.label if cti else "Init"
    which = "the cells that differ from the initial state or change later" if cti else "the cells that change later"
    if guide is None and cti:
        out = [f"{0:>4}  {title}"]
    elif guide is None:
        out = [f"{0:>4}  {title}: {which}; the others keep their initial value"]
    else:
        stars = any(tok.endswith("*") for g in guide.groups for tok in g.legend)
        out = [f"{0:>4}  {title}: {which}, by the actor whose rows write them"
               + (" (x_*: the vars named x_...)" if stars else "")]
    if guide is None:
        groups = [(None, cells)]
    else:
        by_var = {v: k for k, g in enumerate(guide.groups) for v in g.vars}
        buckets: list[list] = [[] for _ in guide.groups]
        other: list = []
        for name, value in cells:
            k = by_var.get(str(name).split("[", 1)[0])
            (other if k is None else buckets[k]).append((name, value))
        groups = [(g, b) for g, b in zip(guide.groups, buckets)]
        if other:
            groups.append((VarGroup("other", ()), other))
    indent = " " * 9
    for g, members in groups:
        if g is not None:
            legend = f": {', '.join(g.legend)}" if g.legend else ""
            out.append(f"       {g.title}{legend}")
        seen = [(n, v) for n, v in members if shown(n, v)]
        out += _wrap(indent, [f"{n} = {_fmt(v)}" for n, v in seen], indent)
        folded = [n for n, v in members if not shown(n, v)]
        if folded:
            n = len(folded)
            what = f"{n} {'more ' if seen else ''}{'cell' if n == 1 else 'cells'} at {'its' if n == 1 else 'their'} " \
                   "initial value"
            unused = sum(1 for c in folded if guide is not None and c in guide.unused)
            if unused:
                what += ", never written in this configuration" if unused == n else \
                    f", {unused} of them never written in this configuration"
            out.append(f"{indent}… {what}")
    return out


def _wrap(first: str, items: list[str], indent: str) -> list[str]:
    """`items` joined by ", ", in lines of at most WIDTH characters (an item longer than that alone)."""
    out: list[str] = []
    line = first
    for k, item in enumerate(items):
        piece = item + ("," if k < len(items) - 1 else "")
        if line.strip() and len(line) + 1 + len(piece) > WIDTH and line not in (first, indent):
            out.append(line)
            line = indent + piece
        else:
            line += ("" if line in (first, indent) else " ") + piece
    if line.strip():
        out.append(line)
    return out


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return str(v)
