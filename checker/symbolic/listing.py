"""A spec's tables as printable rows (id, from-state, trigger, guard, to-state, reference).

Pure Python (no z3): `txncheck tables SPEC` without `--verify` needs only this. The from- and
to-states are read off the row syntactically: a guard conjunct comparing the table's status var
with enum literals gives the from-states, an update of the status var with a literal gives the
to-state. Anything else prints as `*` (any) or the expression itself.
"""
from __future__ import annotations

from dataclasses import dataclass

from txncheck.spec.expr import Lit, Op, Read, Var, show
from txncheck.spec.model import Row, Spec, Table


@dataclass(frozen=True)
class TableLine:
    table: str
    id: str
    from_state: str
    trigger: str
    guard: str
    to_state: str
    ref: str
    params: str = ""
    tags: str = ""

    def to_json(self) -> dict:
        return {"table": self.table, "id": self.id, "from": self.from_state, "trigger": self.trigger,
                "params": self.params, "guard": self.guard, "to": self.to_state, "ref": self.ref,
                "tags": self.tags}


def _status_read(e, status: str) -> bool:
    return (isinstance(e, Var) and e.name == status) or (isinstance(e, Read) and e.var.name == status)


def _from_labels(row: Row, status: str | None, env) -> list[str] | None:
    if not status:
        return None
    for c in row.guard:
        labels = _eq_labels(c, status, env)
        if labels is not None:
            return labels
    return None


def _eq_labels(c, status, env):
    if isinstance(c, Op) and c.op == "==":
        a, b = c.args
        if _status_read(a, status) and isinstance(b, Lit):
            return [show(b, env)]
        if _status_read(b, status) and isinstance(a, Lit):
            return [show(a, env)]
    if isinstance(c, Op) and c.op == "or":
        out = []
        for x in c.args:
            sub = _eq_labels(x, status, env)
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


def table_lines(spec: Spec, env=None) -> list[TableLine]:
    out = []
    for t in spec.tables:
        for r in t.rows:
            out.append(row_line(t, r, env))
    return out


def row_line(t: Table, r: Row, env=None) -> TableLine:
    frm = _from_labels(r, t.status, env)
    to = "—"
    if t.status:
        for u in r.updates:
            if u.target.var.name == t.status:
                to = show(u.value, env)
    return TableLine(t.actor, r.id, "|".join(frm) if frm else "*", r.trigger,
                     " ∧ ".join(show(c, env) for c in r.guard) or "TRUE", to, r.ref,
                     ", ".join(f"{p.name}∈{p.domain.name}" for p in r.params), ",".join(r.tags))


def render_lines(lines: list[TableLine]) -> str:
    out = []
    current = None
    for ln in lines:
        if ln.table != current:
            current = ln.table
            out.append(f"\n== table {current} ==")
            out.append(f"{'id':<10} {'from':<22} {'trigger':<26} {'to':<18} ref")
        out.append(f"{ln.id:<10} {ln.from_state:<22} {ln.trigger + (f'({ln.params})' if ln.params else ''):<26} "
                   f"{ln.to_state:<18} {ln.ref}")
        out.append(f"{'':<10}   guard: {ln.guard}")
    return "\n".join(out).lstrip("\n")
