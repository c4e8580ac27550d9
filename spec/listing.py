"""A spec's tables as rows people read: id, from-states, trigger, guard, to-states, reference.

One derivation for every listing (`txncheck tables`, the Markdown of spec/README.md): the
from-states are read off the first guard conjunct that compares the table's status var with enum
literals (or a disjunction of such comparisons); the to-states are the literal leaves of the
status var's update (`(unchanged)` where a branch keeps it), plus `pending X` for a status var's
pending-state var when the caller names one. The guard shown beside them leaves that conjunct out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .expr import Lit, Op, Read, Var, show
from .model import Row, Spec, Table


@dataclass(frozen=True)
class TableLine:
    table: str
    id: str
    from_states: tuple[str, ...]   # empty: any state (or the table has no status var)
    trigger: str
    guard: tuple[str, ...]         # the conjuncts other than the from-state one, as text
    to_states: tuple[str, ...]     # empty: unchanged (or no status var)
    ref: str
    params: tuple[str, ...] = ()   # "name∈Domain"
    tags: tuple[str, ...] = ()
    has_status: bool = False

    @property
    def from_state(self) -> str:
        return "|".join(self.from_states) if self.from_states else ("*" if self.has_status else "–")

    @property
    def to_state(self) -> str:
        return ", ".join(self.to_states) if self.to_states else ("unchanged" if self.has_status else "–")

    @property
    def guard_text(self) -> str:
        return " ∧ ".join(self.guard) or "TRUE"

    def to_json(self) -> dict:
        return {"table": self.table, "id": self.id, "from": self.from_state, "trigger": self.trigger,
                "params": ", ".join(self.params), "guard": self.guard_text, "to": self.to_state, "ref": self.ref,
                "tags": ",".join(self.tags)}


def _reads(e, name: str) -> bool:
    return (isinstance(e, Var) and e.name == name) or (isinstance(e, Read) and e.var.name == name)


def _label(lit: Lit, env) -> str:
    return str(lit.domain.label(lit.value, env or {})) if lit.domain is not None else str(lit.value)


def _from_states(conj, name: str, env) -> list[str] | None:
    if isinstance(conj, Op) and conj.op == "==":
        a, b = conj.args
        if _reads(a, name) and isinstance(b, Lit):
            return [_label(b, env)]
        if _reads(b, name) and isinstance(a, Lit):
            return [_label(a, env)]
        return None
    if isinstance(conj, Op) and conj.op == "or":
        out: list[str] = []
        for x in conj.args:
            sub = _from_states(x, name, env)
            if sub is None:
                return None
            out += sub
        return out
    return None


def _leaves(e, name: str, env) -> list[str]:
    if isinstance(e, Lit):
        return [_label(e, env)]
    if _reads(e, name):
        return ["(unchanged)"]
    if isinstance(e, Op) and e.op == "ite":
        return _leaves(e.args[1], name, env) + _leaves(e.args[2], name, env)
    return [show(e, env)]


def row_line(t: Table, r: Row, env=None, pending: Mapping[str, str] | None = None) -> TableLine:
    status = t.status
    frm: list[str] = []
    rest: list[str] = []
    for c in r.guard:
        fs = _from_states(c, status, env) if status else None
        if fs is not None and not frm:
            frm = fs
        else:
            txt = show(c, env)
            rest.append(f"({txt})" if isinstance(c, Op) and c.op in ("or", "implies") else txt)
    to: list[str] = []
    for u in r.updates:
        if status and u.target.var.name == status:
            to += [x for x in _leaves(u.value, status, env) if x not in to]
    pend = (pending or {}).get(status) if status else None
    for u in r.updates:
        if pend and u.target.var.name == pend:
            to += ["pending " + x for x in _leaves(u.value, pend, env) if x not in ("NONE", "(unchanged)")]
    return TableLine(t.actor, r.id, tuple(frm), r.trigger, tuple(rest), tuple(to), r.ref,
                     tuple(f"{p.name}∈{p.domain.name}" for p in r.params), tuple(r.tags), bool(status))


def table_lines(spec: Spec, env=None, pending: Mapping[str, str] | None = None) -> list[TableLine]:
    return [row_line(t, r, env, pending) for t in spec.tables for r in t.rows]


def render_text(lines: list[TableLine]) -> str:
    """The terminal listing of `txncheck tables`."""
    out: list[str] = []
    current = None
    for ln in lines:
        if ln.table != current:
            current = ln.table
            out.append(f"\n== table {current} ==")
            out.append(f"{'id':<10} {'from':<22} {'trigger':<26} {'to':<18} ref")
        params = ", ".join(ln.params)
        out.append(f"{ln.id:<10} {ln.from_state:<22} {ln.trigger + (f'({params})' if params else ''):<26} "
                   f"{ln.to_state:<18} {ln.ref}")
        out.append(f"{'':<10}   guard: {ln.guard_text}")
    return "\n".join(out).lstrip("\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(spec: Spec, header: tuple[str, ...] = (), pending: Mapping[str, str] | None = None) -> str:
    """Every table as a Markdown table, with each table's doc and status var (spec/README.md)."""
    lines = [f"# Spec `{spec.name}`: transition tables", "", *header]
    by_table = {}
    for ln in table_lines(spec, None, pending):
        by_table.setdefault(ln.table, []).append(ln)
    for t in spec.tables:
        lines += [f"## {t.actor}", "", t.doc, ""]
        if t.status:
            lines += [f"Status var: `{t.status}`.", ""]
        lines += ["| id | from-state | trigger | guard | to-state | reference |", "|---|---|---|---|---|---|"]
        for ln in by_table.get(t.actor, []):
            names = ", ".join(p.split("∈")[0] for p in ln.params)
            trig = ln.trigger + (f" ({names})" if names else "")
            frm = ", ".join(ln.from_states) or ("any" if ln.has_status else "–")
            lines.append("| " + " | ".join(_cell(x) for x in (
                ln.id, frm, trig, ln.guard_text, ln.to_state, ln.ref)) + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
