"""A table's state machine as a graph (`status_graph`), for `txncheck report`'s state diagrams
(drawn by `state_diagram.py`).

Nodes are the values of the table's status var (`Table.status`, e.g. the coordinator's `tc_st`,
TransactionState): every enum value that a row of the table names as a from- or to-state (the
listing's, `spec/listing.py`), plus the var's initial value. Edges are rows: one edge per row and
(from-state, to-state) pair, keyed by the row id, carrying `row`, `trigger` and `kind`.

The listing's from- and to-states are the starting point; each row is then read once per
candidate from-state s (the listing's from-states, or every value when it shows "*"), with the
status var of the row's own instance (the index its update writes) replaced by s and everything
else left symbolic:
  * s is dropped when the guard folds to FALSE (so a guard like `pc_st = UNINITIALIZED ∨ (i = 0 ∧
    pc_st = IDLE)`, which the listing shows as "*", gives IDLE and UNINITIALIZED);
  * the update's if-then-else tree is followed per branch, each branch's condition assumed true or
    false in the guard: `tc_st := if tc_st = PrepareCommit then CompleteCommit else CompleteAbort`
    gives PrepareCommit -> CompleteCommit and PrepareAbort -> CompleteAbort, not the listing's
    cross product; a branch whose assumption makes the guard FALSE is dropped;
  * with `env` (a configuration's constants), configuration constants are folded too, so a row
    that the configuration switches off has no edge (it is listed under `disabled`).
A to-state that is not a literal (say `st := other_var`) is a node named by the expression, of
`kind="other"` (a dashed box). Folding is conservative (`partial_eval.py`: it only ever concludes
FALSE when the guard is FALSE whatever the other vars hold), so an edge may be drawn that the full
model never takes, never the other way round.

Decisions:
  * "Unchanged" is not an edge. A row that never writes the status var (or writes it back through
    an `if` branch that keeps it) is listed in `graph.graph["unchanged"]` (most of Kafka's
    coordinator handlers: they answer, or set the pending state). A row that *writes* the state it
    came from (TL-01: Empty -> Empty, a durable transaction-log write) is a self-loop.
  * "Any state": when a row goes to the same to-state from at least 3 states and from all but at
    most 2 of the graph's states (twophase's RM-03 RMRcvCommitMsg, Kafka's PC-10 "fatal from
    anywhere"), its edge starts at one pseudo-node "any state" (or "any state except CRASHED"),
    node attribute `kind="any"` with `members`, instead of fanning out from every state.
  * `pending` (e.g. Kafka's `{"tc_st": "tc_pend"}`, `txncheck.spec.kafka.doc.PENDING`): a row that
    does not write the status var but sets its pending-state var to X (Kafka's prepareTransitionTo)
    gets an edge s -> X of `kind="pending"`; the drawing shows those row ids in parentheses after
    the rows that make the transition durable. Without `pending` such rows are "unchanged".
  * Rows of other tables that write the status var (Kafka's coordinator failover, FLT-03) are not
    edges of this table; they are listed in `graph.graph["written_elsewhere"]`.
Every row of the table is thus on at least one edge or in exactly one of `unchanged` and
`disabled`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import networkx as nx

from txncheck.spec.expr import Lit, Op, Read, Var, show
from txncheck.spec.listing import row_line
from txncheck.spec.model import Row, Spec, Table

from .partial_eval import Folder, assume, config_constants, expr_key, is_lit

ANY = "any state"
ANY_MIN_STATES = 3      # an "any state" pseudo-node stands for at least this many from-states
ANY_MAX_EXCEPT = 2      # ... and all but at most this many of the graph's states


@dataclass
class _RowResult:
    pairs: list[tuple[str, str, str]] = field(default_factory=list)   # (from, to, kind)
    disabled: bool = False


def _leaves(folder: Folder, e, subst: dict, guard, keep_key: tuple):
    """(to-state literal or None for "keeps the status", or the expression) per feasible branch of `e`."""
    if isinstance(e, Op) and e.op == "ite":
        c = folder.fold(e.args[0], subst)
        if isinstance(c, Lit):
            yield from _leaves(folder, e.args[1] if c.value else e.args[2], subst, guard, keep_key)
            return
        for v, branch in ((True, e.args[1]), (False, e.args[2])):
            s2 = assume(c, v, subst)
            if not is_lit(folder.fold(guard, s2), False):
                yield from _leaves(folder, branch, s2, guard, keep_key)
        return
    if isinstance(e, (Read, Var)) and expr_key(folder.fold(e, {})) == keep_key:
        yield None
        return
    yield folder.fold(e, subst)


def _row_result(table: Table, row: Row, labels: tuple[str, ...], folder: Folder, listed_from: tuple[str, ...],
                pending_var: str | None, pending_labels: tuple[str, ...] | None, env) -> _RowResult:
    """The row's (from, to, kind) pairs (none: it keeps the status; `disabled`: its guard is FALSE
    whatever the status, under the configuration constants folded)."""
    status = table.status
    writes = [u for u in row.updates if u.target.var.name == status]
    pend = [u for u in row.updates if pending_var and u.target.var.name == pending_var]
    if not writes and not pend:
        return _RowResult(disabled=is_lit(folder.fold(row.guard_expr, {}), False))
    kind = "write" if writes else "pending"
    upd = writes[0] if writes else pend[0]
    skey = ("R", status, tuple(expr_key(folder.fold(i, {})) for i in upd.target.index))
    keep_key = expr_key(folder.fold(upd.target, {}))
    guard = row.guard_expr
    cands = [labels.index(x) for x in listed_from if x in labels] if listed_from else range(len(labels))
    res = _RowResult()
    any_feasible = False
    for s in cands:
        subst = {skey: Lit(s)}
        if is_lit(folder.fold(guard, subst), False):
            continue
        any_feasible = True
        for leaf in _leaves(folder, upd.value, subst, guard, keep_key):
            if leaf is None:
                continue
            if isinstance(leaf, Lit):
                dom = upd.target.var.domain
                to = str(dom.label(int(leaf.value), env or {}))
            else:
                to = show(leaf, env)
            if kind == "pending" and (to == "NONE" or (pending_labels is not None and to not in labels)):
                continue
            pair = (labels[s], to, kind)
            if pair not in res.pairs:
                res.pairs.append(pair)
    res.disabled = not any_feasible
    return res


def _table(spec: Spec, table: Table | str) -> Table:
    if isinstance(table, Table):
        return table
    for t in spec.tables:
        if t.actor == table:
            return t
    raise ValueError(f"spec {spec.name} has no table {table!r}; its tables are "
                     f"{', '.join(t.actor for t in spec.tables)}")


def _var(spec: Spec, name: str):
    for v in spec.vars:
        if v.name == name:
            return v
    raise ValueError(f"spec {spec.name} declares no var {name!r}")


def _any_label(excluded: Iterable[str]) -> str:
    ex = list(excluded)
    return ANY if not ex else f"{ANY} except {', '.join(ex)}"


def status_graph(spec: Spec, table: Table | str, env: Mapping[str, object] | None = None,
                 pending: Mapping[str, str] | None = None) -> nx.MultiDiGraph:
    """The state machine of `table`'s status var (see the module doc): nodes are states, edges are
    rows (key = row id; attributes `row`, `trigger`, `kind` "write" or "pending"). `env`: a
    configuration's constants (`ResolvedConfig.env`), to fold its switches; `pending`: status var ->
    its pending-state var. Graph attributes: `table`, `status`, `states` (the enum order),
    `initial`, `unchanged` and `disabled` (row ids), `written_elsewhere` ((row id, table) pairs)."""
    t = _table(spec, table)
    if not t.status:
        raise ValueError(f"table {t.actor} has no status var")
    var = _var(spec, t.status)
    labels = tuple(getattr(var.domain, "labels", ()) or ())
    if not labels:
        raise ValueError(f"table {t.actor}: status var {t.status} must have an enum domain")
    pending_var = (pending or {}).get(t.status)
    pending_labels = tuple(getattr(_var(spec, pending_var).domain, "labels", ())) if pending_var else None
    folder = Folder(config_constants(spec, env))

    initial = None
    if var.init is not None:
        init = folder.fold(var.init, {})
        if isinstance(init, Lit):
            initial = labels[int(init.value)]

    mentioned: set[str] = set()
    per_row: list[tuple[Row, list[tuple[str, str, str]]]] = []
    unchanged: list[str] = []
    disabled: list[str] = []
    for r in t.rows:
        line = row_line(t, r, env)
        mentioned.update(x for x in line.from_states if x in labels)
        mentioned.update(x for x in line.to_states if x in labels)
        res = _row_result(t, r, labels, folder, line.from_states, pending_var, pending_labels, env)
        if res.disabled:
            disabled.append(r.id)
        elif not res.pairs:
            unchanged.append(r.id)
        else:
            per_row.append((r, res.pairs))
    for _, pairs in per_row:
        for a, b, _k in pairs:
            mentioned.update(x for x in (a, b) if x in labels)
    if initial:
        mentioned.add(initial)
    states = [x for x in labels if x in mentioned]

    g = nx.MultiDiGraph(table=t.actor, status=t.status, domain=var.domain.name, states=tuple(states),
                        initial=initial, unchanged=tuple(unchanged), disabled=tuple(disabled),
                        written_elsewhere=tuple((r.id, o.actor) for o in spec.tables if o is not t for r in o.rows
                                                if any(u.target.var.name == t.status for u in r.updates)))
    for s in states:
        g.add_node(s, kind="state", label=s, initial=(s == initial))
    for s in (x for _, pairs in per_row for _a, b, _k in pairs for x in (b,) if x not in g):
        g.add_node(s, kind="other", label=s, initial=False)   # a to-state that is not a literal
    for r, pairs in per_row:
        by_target: dict[tuple[str, str], list[str]] = {}
        for a, b, k in pairs:
            by_target.setdefault((b, k), []).append(a)
        for (b, k), froms in by_target.items():
            excluded = [x for x in states if x not in froms]
            if len(froms) >= ANY_MIN_STATES and len(excluded) <= ANY_MAX_EXCEPT:
                node = _any_label(excluded)
                if node not in g:
                    g.add_node(node, kind="any", label=node, members=tuple(froms), initial=False)
                froms = [node]
            for a in froms:
                g.add_edge(a, b, key=r.id, row=r.id, trigger=r.trigger, kind=k)
    return g


def edge_rows(graph: nx.MultiDiGraph) -> dict[str, list[tuple[str, str]]]:
    """Row id -> the (from, to) pairs of its edges."""
    out: dict[str, list[tuple[str, str]]] = {}
    for a, b, k in graph.edges(keys=True):
        out.setdefault(k, []).append((a, b))
    return out
