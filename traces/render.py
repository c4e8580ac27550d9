"""Text rendering of traces for terminals: one block per step, changed cells only after step 0.

>>> from txncheck.traces.schema import Step, Trace
>>> t = Trace("demo", None, {"name": "tiny", "values": {}}, "scalar", {"name": "P", "kind": "always", "doc": ""},
...           "violation", (Step(0, None, None, None, "Init", {}, (), {"x": 0}),
...                         Step(1, "R-1", "A", "inc", "R-1", {}, (), {"x": 1}, ({"cell": "x", "before": 0, "after": 1},))),
...           {"x": 1})
>>> print(render_trace_text(t))  # doctest: +NORMALIZE_WHITESPACE
demo (config tiny): always property P is violated after 1 step
<BLANKLINE>
  0  Init
       x = 0
  1  R-1  [A: inc]
       x: 0 → 1
<BLANKLINE>
violated by: x = 1
"""
from __future__ import annotations

from .schema import Trace

_VERB = {"violation": "is violated", "witness": "is witnessed", "deadlock": "deadlock",
         "unrecoverable": "cannot recover"}


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


def render_trace_text(t: Trace) -> str:
    cfg = str(t.config.get("name", "?"))
    overrides = t.config.get("overrides")
    if isinstance(overrides, dict) and overrides:  # the settings that produced it, as --set gave them
        cfg += "".join(f", {k}={_fmt(v)}" for k, v in sorted(overrides.items()))
    var = f", variant {t.variant}" if t.variant else ""
    p = t.property
    n = t.length
    if t.kind == "deadlock":
        head = f"{t.spec} (config {cfg}{var}): deadlock after {n} step{'s' if n != 1 else ''}"
    elif t.kind == "cti":
        head = (f"{t.spec} (config {cfg}{var}): {p.get('kind', '')} property {p['name']} is not inductive: "
                f"a counterexample to {n}-induction")
    else:
        head = (f"{t.spec} (config {cfg}{var}): {p.get('kind', '')} property {p['name']} "
                f"{_VERB[t.kind]} after {n} step{'s' if n != 1 else ''}")
    lines = [head]
    if p.get("doc"):
        lines.append(f"  {p['name']}: {p['doc']}")
    lines.append("")
    for s in t.steps:
        if s.row is None:
            lines.append(f"{s.index:>3}  {s.label if t.kind == 'cti' else 'Init'}")
            for k, v in flat_state(s.state):
                lines.append(f"       {k} = {_fmt(v)}")
            continue
        tags = f" ({', '.join(s.tags)})" if s.tags else ""
        lines.append(f"{s.index:>3}  {s.label}  [{s.actor}: {s.trigger}]{tags}")
        for c in s.changed:
            lines.append(f"       {c['cell']}: {_fmt(c['before'])} → {_fmt(c['after'])}")
    lines.append("")
    if t.values:
        word = "witnessed by" if t.kind == "witness" else "violated by"
        lines.append(f"{word}: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in t.values.items()))
    if t.explanation:
        lines.append(t.explanation)
    return "\n".join(lines).rstrip() + "\n"


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return str(v)
