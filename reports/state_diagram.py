"""A table's state machine as a graph (`status_graph`) and as a PNG or SVG figure
(`draw_status_diagram`), for `txncheck report`.

The graph
---------
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
`kind="other"` (a dashed box). Folding is conservative (it only ever concludes FALSE when the guard is FALSE whatever the other
vars hold), so an edge may be drawn that the full model never takes, never the other way round.

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

The figure
----------
A layered drawing computed here (no graphviz), top to bottom: the initial state (marked with a
dot) in the first row, each state in the row given by the longest path to it over the forward
edges, where an edge is forward when it leads to a state farther from the initial state (BFS
distance, ties broken by the enum's order: Kafka's TransactionState puts PrepareCommit and
PrepareAbort in one row, CompleteCommit and CompleteAbort in the next). States the initial state
does not lead to sit just above their successors (Kafka's UNINITIALIZED, entered only by a crash),
or below everything when they have none (FATAL_ERROR, entered from "any state"). A row's order and
x positions pull each state towards its neighbours in the other rows.

One arrow per (from, to) pair, labelled with its rows ("TL-04, TL-05"; with `pending`, the rows
that only prepare the transition follow in parentheses). Arrows between neighbouring rows are
straight (a pair of opposite arrows bends apart); a back edge, or one that skips rows and would
cross a box, runs in a lane outside the boxes on the nearer side, shorter lanes inside longer ones.
Self-loops are small loops beside their box, on the side with fewer lanes. An "any state"
pseudo-node is drawn once per target, as a dashed box just left of it. A label sits along its
arrow where it covers the fewest boxes, labels and other arrows. With `fired` (the row ids that
fired in the checked configurations), an arrow none of whose rows fired (its durable rows when it
has any) is dashed and grey, and the legend says so. Below the drawing: the states no row enters
or leaves (greyed), the legend, and the rows with no arrow (unchanged, switched off, written by
other tables).

Output is deterministic (same graph and options -> same bytes: SVG without date, fixed hash salt,
text kept as text; PNG without software version) and written atomically.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping

import networkx as nx

from txncheck.spec.expr import FALSE, TRUE, ConfigRef, Lit, Member, Op, ParamRef, Quant, Read, Var, show
from txncheck.spec.listing import row_line
from txncheck.spec.model import Row, Spec, Table

from .atomic import write_atomic

ANY = "any state"
ANY_MIN_STATES = 3      # an "any state" pseudo-node stands for at least this many from-states
ANY_MAX_EXCEPT = 2      # ... and all but at most this many of the graph's states

# ---- partial evaluation ---------------------------------------------------------------------------


def _key(e) -> tuple:
    """A structural key for an expression (Expr's == builds an expression instead of comparing)."""
    if isinstance(e, Lit):
        return ("L", int(e.value))
    if isinstance(e, Var):
        return ("R", e.name, ())
    if isinstance(e, Read):
        return ("R", e.var.name, tuple(_key(i) for i in e.index))
    if isinstance(e, ConfigRef):
        return ("C", e.name)
    if isinstance(e, ParamRef):
        return ("P", e.name)
    if isinstance(e, Op):
        return ("O", e.op, tuple(_key(a) for a in e.args))
    if isinstance(e, Quant):
        return ("Q", e.kind, e.var.name, _key(e.body), e.default)
    if isinstance(e, Member):
        return ("M", _key(e.subset), _key(e.elem))
    return ("?", id(e))


def _mentions(key: tuple, sub: tuple) -> bool:
    return key == sub or any(isinstance(x, tuple) and _mentions(x, sub) for x in key)


def _lit(v) -> Lit:
    return Lit(int(v))


def _is_lit(e, v: bool | None = None) -> bool:
    if not isinstance(e, Lit):
        return False
    return v is None or bool(e.value) == v


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class _Folder:
    """Constant folding under assumptions: `subst` maps an expression's key to a literal."""

    def __init__(self, consts: Mapping[str, int]):
        self.consts = consts

    def fold(self, e, subst: Mapping[tuple, Lit]):
        if isinstance(e, Lit):
            return e
        if isinstance(e, ConfigRef):
            return _lit(self.consts[e.name]) if e.name in self.consts else subst.get(_key(e), e)
        if isinstance(e, ParamRef):
            return subst.get(_key(e), e)
        if isinstance(e, Var):
            return subst.get(_key(e), e)
        if isinstance(e, Read):
            out = Read(e.var, tuple(self.fold(i, subst) for i in e.index))
            return subst.get(_key(out), out)
        if isinstance(e, Quant):   # what is known about a name the quantifier rebinds does not hold inside
            bound = ("P", e.var.name)
            body = self.fold(e.body, {k: v for k, v in subst.items() if not _mentions(k, bound)})
            if (e.kind == "exists" and _is_lit(body, False)) or (e.kind == "forall" and _is_lit(body, True)):
                return body
            out = Quant(e.kind, e.var, body, e.default)
            return subst.get(_key(out), out)
        if isinstance(e, Member):
            out = Member(self.fold(e.subset, subst), self.fold(e.elem, subst))
            return subst.get(_key(out), out)
        if isinstance(e, Op):
            out = self._op(e.op, [self.fold(a, subst) for a in e.args])
            return out if isinstance(out, Lit) else subst.get(_key(out), out)
        return e

    @staticmethod
    def _op(op: str, a: list):
        if op == "and":
            if any(_is_lit(x, False) for x in a):
                return FALSE
            rest = [x for x in a if not _is_lit(x, True)]
            return TRUE if not rest else rest[0] if len(rest) == 1 else Op("and", tuple(rest))
        if op == "or":
            if any(_is_lit(x, True) for x in a):
                return TRUE
            rest = [x for x in a if not _is_lit(x, False)]
            return FALSE if not rest else rest[0] if len(rest) == 1 else Op("or", tuple(rest))
        if op == "not":
            return (FALSE if a[0].value else TRUE) if isinstance(a[0], Lit) else Op("not", tuple(a))
        if op == "implies":
            if _is_lit(a[0], False) or _is_lit(a[1], True):
                return TRUE
            if _is_lit(a[0], True):
                return a[1]
            return Op("implies", tuple(a))
        if op == "ite":
            if isinstance(a[0], Lit):
                return a[1] if a[0].value else a[2]
            return Op("ite", tuple(a))
        if all(isinstance(x, Lit) for x in a):
            vals = [int(x.value) for x in a]
            if op in _ARITH and len(vals) == 2:
                return _lit(_ARITH[op](*vals))
            if op == "min" and vals:
                return _lit(min(vals))
            if op == "max" and vals:
                return _lit(max(vals))
            if op in ("//", "%") and len(vals) == 2 and vals[1] != 0:
                return _lit(vals[0] // vals[1] if op == "//" else vals[0] % vals[1])
        return Op(op, tuple(a))


def _assume(c, val: bool, subst: dict) -> dict:
    """`subst` plus what knowing that the (folded) condition `c` is `val` tells."""
    out = dict(subst)

    def go(x, v):
        out[_key(x)] = TRUE if v else FALSE
        if isinstance(x, Op):
            if x.op == "not":
                go(x.args[0], not v)
            elif (x.op == "and" and v) or (x.op == "or" and not v):
                for y in x.args:
                    go(y, v)
            elif x.op in ("==", "!=") and (v == (x.op == "==")):
                a, b = x.args
                if isinstance(b, Lit) and isinstance(a, (Read, Var)):
                    out[_key(a)] = b
                elif isinstance(a, Lit) and isinstance(b, (Read, Var)):
                    out[_key(b)] = a
    go(c, val)
    return out


def _consts(spec: Spec, env: Mapping[str, object] | None) -> dict[str, int]:
    """Configuration constants as integers (a choice parameter's label -> its index)."""
    if not env:
        return {}
    choices = {p.name: tuple(p.choices) for p in spec.params if getattr(p, "choices", None)}
    out: dict[str, int] = {}
    for name, v in env.items():
        if isinstance(v, bool) or isinstance(v, int):
            out[name] = int(v)
        elif isinstance(v, str) and name in choices and v in choices[name]:
            out[name] = choices[name].index(v)
    return out


# ---- the graph -----------------------------------------------------------------------------------
@dataclass
class _RowResult:
    pairs: list[tuple[str, str, str]] = field(default_factory=list)   # (from, to, kind)
    disabled: bool = False


def _leaves(folder: _Folder, e, subst: dict, guard, keep_key: tuple):
    """(to-state literal or None for "keeps the status", or the expression) per feasible branch of `e`."""
    if isinstance(e, Op) and e.op == "ite":
        c = folder.fold(e.args[0], subst)
        if isinstance(c, Lit):
            yield from _leaves(folder, e.args[1] if c.value else e.args[2], subst, guard, keep_key)
            return
        for v, branch in ((True, e.args[1]), (False, e.args[2])):
            s2 = _assume(c, v, subst)
            if not _is_lit(folder.fold(guard, s2), False):
                yield from _leaves(folder, branch, s2, guard, keep_key)
        return
    if isinstance(e, (Read, Var)) and _key(folder.fold(e, {})) == keep_key:
        yield None
        return
    yield folder.fold(e, subst)


def _row_result(table: Table, row: Row, labels: tuple[str, ...], folder: _Folder, listed_from: tuple[str, ...],
                pending_var: str | None, pending_labels: tuple[str, ...] | None, env) -> _RowResult:
    """The row's (from, to, kind) pairs (none: it keeps the status; `disabled`: its guard is FALSE
    whatever the status, under the configuration constants folded)."""
    status = table.status
    writes = [u for u in row.updates if u.target.var.name == status]
    pend = [u for u in row.updates if pending_var and u.target.var.name == pending_var]
    if not writes and not pend:
        return _RowResult(disabled=_is_lit(folder.fold(row.guard_expr, {}), False))
    kind = "write" if writes else "pending"
    upd = writes[0] if writes else pend[0]
    skey = ("R", status, tuple(_key(folder.fold(i, {})) for i in upd.target.index))
    keep_key = _key(folder.fold(upd.target, {}))
    guard = row.guard_expr
    cands = [labels.index(x) for x in listed_from if x in labels] if listed_from else range(len(labels))
    res = _RowResult()
    any_feasible = False
    for s in cands:
        subst = {skey: Lit(s)}
        if _is_lit(folder.fold(guard, subst), False):
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
    folder = _Folder(_consts(spec, env))

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


# ---- the figure ----------------------------------------------------------------------------------
DPI = 100
FONT = 9.0              # state names (points)
LABEL_FONT = 7.5        # row ids on edges
NOTE_FONT = 8.0
TITLE_FONT = 11.0
BOX_H = 0.42            # a state's box (inches)
BOX_PAD = 0.28          # horizontal padding around a state's name
ANY_H = 0.30            # an "any state" pseudo-node
ROW_GAP = 0.95          # vertical gap between two rows of boxes
H_GAP = 0.9             # least horizontal gap between two boxes of a row
LOOP_W = 0.36           # a self-loop's reach to the right of its box
LABEL_CHARS = 24        # an edge label is wrapped at about this many characters a line
MARGIN = 0.35

INK = "#222222"
EDGE_INK = "#1f4e89"
UNFIRED_INK = "#9e9e9e"
UNFIRED_TEXT = "#808080"
UNFIRED_DASH = (0, (4, 3))
STATE_FILL = "#eef3fa"
INITIAL_FILL = "#dcebd9"
ISOLATED_FILL = "#f3f3f3"
ANY_INK = "#555555"
NOTE_INK = "#444444"


@dataclass
class DrawnDiagram:
    """What `draw_status_diagram` drew: the figure, one arrow and one label per (from, to) pair of
    the graph (self-loops included; an "any state" edge keyed by the pseudo-node's name), the pairs
    drawn as never fired (dashed, grey), and the file's bytes."""
    figure: object
    arrows: dict
    labels: dict
    unfired: tuple
    data: bytes = b""


@lru_cache(maxsize=4096)
def _text_w(text: str, size: float, style: str = "normal", weight: str = "normal") -> float:
    """A one-line string's drawn width in inches (the font's own metrics, no renderer needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path
    prop = FontProperties(family="DejaVu Sans", size=size, style=style, weight=weight)
    w, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    return w / 72.0


def _block_size(text: str, size: float, spacing: float = 1.1) -> tuple[float, float]:
    lines = text.split("\n")
    return max(_text_w(x, size) for x in lines), (len(lines) - 1) * size * spacing * 1.2 / 72.0 + size * 1.2 / 72.0


def _wrap_ids(ids: list[str], width: int, prefix: str = "", suffix: str = "") -> list[str]:
    """Row ids joined with ", ", wrapped at about `width` characters."""
    lines: list[str] = []
    cur = prefix
    for n, x in enumerate(ids):
        piece = x + (", " if n < len(ids) - 1 else suffix)
        if cur.strip(prefix) and len(cur) + len(piece.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += piece
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def _wrap_words(text: str, width_in: float, size: float) -> list[str]:
    out: list[str] = []
    cur = ""
    for w in text.split(" "):
        trial = f"{cur} {w}" if cur else w
        if cur and _text_w(trial, size) > width_in:
            out.append(cur)
            cur = w
        else:
            cur = trial
    if cur:
        out.append(cur)
    return out


@dataclass
class _Edge:
    """One drawn arrow: every row of the graph from `a` to `b`."""
    a: str
    b: str
    write: list[str]
    pending: list[str]
    fired: bool
    label: str = ""


@dataclass
class _Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def hits(self, o: "_Box", pad: float = 0.03) -> float:
        w = min(self.x1, o.x1) - max(self.x0, o.x0) + pad
        h = min(self.y1, o.y1) - max(self.y0, o.y0) + pad
        return w * h if w > 0 and h > 0 else 0.0


def _edges(graph: nx.MultiDiGraph, fired: set[str] | None) -> list[_Edge]:
    pairs: dict[tuple[str, str], _Edge] = {}
    for a, b, k, d in graph.edges(keys=True, data=True):
        e = pairs.setdefault((a, b), _Edge(a, b, [], [], True))
        (e.write if d.get("kind", "write") == "write" else e.pending).append(k)
    for e in pairs.values():
        rows = e.write or e.pending   # the durable rows decide, when there are any
        e.fired = fired is None or any(r in fired for r in rows)
        lines = _wrap_ids(e.write, LABEL_CHARS)
        if e.pending:
            lines += _wrap_ids(e.pending, LABEL_CHARS, "(", ")")
        e.label = "\n".join(lines)
    return list(pairs.values())


class _Layout:
    """Rows top to bottom (see the module doc); lengths in inches, y down."""

    def __init__(self, graph: nx.MultiDiGraph, edges: list[_Edge]):
        kinds = {n: d.get("kind", "state") for n, d in graph.nodes(data=True)}
        order = {s: n for n, s in enumerate(graph.graph.get("states", ()))}
        states = [n for n in graph.nodes if kinds[n] != "any"]
        for s in states:
            order.setdefault(s, len(order))
        states.sort(key=order.get)
        self.enum = order
        self.initial = graph.graph.get("initial")
        linked = {x for e in edges for x in (e.a, e.b) if kinds.get(x) != "any"}
        self.isolated = [s for s in states if s not in linked]
        main = [s for s in states if s in linked]
        real = [e for e in edges if e.a != e.b and kinds[e.a] != "any"]
        succ: dict[str, list[str]] = {s: sorted({e.b for e in real if e.a == s}, key=order.get) for s in main}
        pred: dict[str, list[str]] = {s: sorted({e.a for e in real if e.b == s}, key=order.get) for s in main}
        # rank: BFS distance from the initial state; an edge is forward when it goes up in (rank, enum order)
        dist: dict[str, int] = {}
        if self.initial in succ:
            dist[self.initial] = 0
            frontier = [self.initial]
            while frontier:
                nxt = []
                for s in frontier:
                    for t in succ[s]:
                        if t not in dist:
                            dist[t] = dist[s] + 1
                            nxt.append(t)
                frontier = nxt
        reached = sorted(dist, key=lambda s: (dist[s], order[s]))
        layer: dict[str, int] = {}
        for s in reached:
            layer[s] = max([layer[p] + 1 for p in pred[s] if p in layer and (dist[p], order[p]) < (dist[s], order[s])],
                           default=0)
        # states the initial one does not lead to: just above their successors, else below everything
        last = max(layer.values(), default=-1)
        for s in (x for x in main if x not in layer):
            below = [layer[t] for t in succ[s] if t in layer]
            above = [layer[p] for p in pred[s] if p in layer]
            layer[s] = max(0, min(below) - 1) if below else (max(above) + 1 if above else last + 1)
        self.layer = layer
        nrows = max(layer.values(), default=-1) + 1
        rows: list[list[str]] = [sorted((s for s in main if layer[s] == r), key=order.get) for r in range(nrows)]
        # order within a row: barycentres of the neighbours in other rows, a few sweeps
        for _ in range(4):
            for direction in (1, -1):
                pos = {s: i - (len(row) - 1) / 2 for row in rows for i, s in enumerate(row)}
                for r in (range(1, nrows) if direction == 1 else range(nrows - 2, -1, -1)):
                    def bary(s, r=r):
                        nb = [pos[x] for x in (pred[s] + succ[s]) if layer[x] != r]
                        return sum(nb) / len(nb) if nb else pos[s]
                    rows[r] = sorted(rows[r], key=lambda s: (bary(s), order[s]))
                    pos.update({s: i - (len(rows[r]) - 1) / 2 for i, s in enumerate(rows[r])})
        # the pseudo-nodes: one copy just left of each target
        self.any_copies: dict[tuple[str, str], str] = {}
        self.any_name: dict[str, str] = {}
        for e in edges:
            if kinds[e.a] == "any":
                cp = f"{e.a}\u2192{e.b}"
                self.any_copies[(e.a, e.b)] = cp
                self.any_name[cp] = e.a
                row = rows[layer[e.b]]
                row.insert(row.index(e.b), cp)
                layer[cp] = layer[e.b]
        self.rows = rows
        self.size: dict[str, tuple[float, float]] = {}
        for s in states:
            self.size[s] = (_text_w(s, FONT, weight="bold" if s == self.initial else "normal") + 2 * BOX_PAD, BOX_H)
        for cp, a in self.any_name.items():
            self.size[cp] = (_text_w(a, FONT - 0.5, style="italic") + 0.24, ANY_H)
        loops = {e.a: e for e in edges if e.a == e.b}
        any_label = {self.any_copies[(e.a, e.b)]: e.label for e in edges if kinds[e.a] == "any"}

        def sep(left: str, right: str) -> float:
            """Least distance between the centres of two neighbours in a row."""
            gap = H_GAP
            if left in any_label:
                gap = max(0.55, _block_size(any_label[left], LABEL_FONT)[0] + 0.2)
            for s in (left, right):   # a self-loop may go on either side of its box
                if s in loops:
                    gap = max(gap, LOOP_W + _block_size(loops[s].label, LABEL_FONT)[0] + 0.35)
            return self.size[left][0] / 2 + gap + self.size[right][0] / 2

        # x: pack each row, then pull every box towards its neighbours in other rows (a few sweeps)
        x: dict[str, float] = {}
        for row in rows:
            cur = 0.0
            for i, s in enumerate(row):
                cur = cur + sep(row[i - 1], s) if i else 0.0
                x[s] = cur
            shift = -(x[row[0]] + x[row[-1]]) / 2 if row else 0.0
            for s in row:
                x[s] += shift
        for _ in range(6):
            for r in list(range(nrows)) + list(range(nrows - 2, -1, -1)):
                row = rows[r]
                want = []
                for s in row:
                    if s in self.any_name:
                        want.append(None)
                        continue
                    nb = [x[t] for t in pred.get(s, []) + succ.get(s, []) if layer.get(t) != r]
                    want.append(sum(nb) / len(nb) if nb else x[s])
                # keep the order and the separations; place as close to the wishes as that allows
                for i, s in enumerate(row):    # a pseudo-node wishes to sit by its target
                    if want[i] is None:
                        j = i + 1
                        while want[j] is None:
                            j += 1
                        want[i] = want[j] - sum(sep(row[k], row[k + 1]) for k in range(i, j))
                new = []
                for i, s in enumerate(row):
                    new.append(want[i] if i == 0 else max(want[i], new[-1] + sep(row[i - 1], s)))
                shift = sum(w - n for w, n in zip(want, new)) / len(row) if row else 0.0
                for i, s in enumerate(row):
                    x[s] = new[i] + shift
        # a row linked to no other (a state entered only from "any state"): centred under the rest
        lone = [r for r, row in enumerate(rows) if not any(t for s in row for t in pred.get(s, []) + succ.get(s, []))]
        rest = [x[s] + d * self.size[s][0] / 2
                for r, row in enumerate(rows) if r not in lone for s in row for d in (-1, 1)]
        if rest:
            mid = (min(rest) + max(rest)) / 2
            for r in lone:
                row = rows[r]
                ext = [x[s] + d * self.size[s][0] / 2 for s in row for d in (-1, 1)]
                shift = mid - (min(ext) + max(ext)) / 2
                for s in row:
                    x[s] += shift
        self.pos: dict[str, tuple[float, float]] = {}
        y = 0.0
        for r, row in enumerate(rows):
            for s in row:
                self.pos[s] = (x[s], y + BOX_H / 2)
            y += BOX_H + ROW_GAP
        self.loops = loops   # isolated states are placed by the drawing, below everything else

    def box(self, s: str) -> _Box:
        x, y = self.pos[s]
        w, h = self.size[s]
        return _Box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)


LANE_GAP = 0.28          # distance between two side lanes (and from the boxes to the first)
CORNER = 0.10            # radius of a lane's corners


def _quad(p0, c, p2, n: int = 32) -> list[tuple[float, float]]:
    out = []
    for k in range(n + 1):
        t = k / n
        u = 1 - t
        out.append((u * u * p0[0] + 2 * u * t * c[0] + t * t * p2[0], u * u * p0[1] + 2 * u * t * c[1] + t * t * p2[1]))
    return out


def _inside(p, b: _Box, pad: float = 0.0) -> bool:
    return b.x0 - pad <= p[0] <= b.x1 + pad and b.y0 - pad <= p[1] <= b.y1 + pad


def _crossing(p_in, p_out, b: _Box):
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        q = (p_in[0] + (p_out[0] - p_in[0]) * mid, p_in[1] + (p_out[1] - p_in[1]) * mid)
        if _inside(q, b):
            lo = mid
        else:
            hi = mid
    return (p_in[0] + (p_out[0] - p_in[0]) * hi, p_in[1] + (p_out[1] - p_in[1]) * hi)


def _clip(pts: list, a: _Box, b: _Box, gap: float = 0.02) -> list:
    """The polyline `pts` (from inside box a to inside box b) cut where it leaves a and enters b."""
    i = 0
    while i < len(pts) - 1 and _inside(pts[i + 1], a):
        i += 1
    j = len(pts) - 1
    while j > i + 1 and _inside(pts[j - 1], b):
        j -= 1
    start = _crossing(pts[i], pts[i + 1], a) if _inside(pts[i], a) else pts[i]
    end = _crossing(pts[j], pts[j - 1], b) if _inside(pts[j], b) else pts[j]
    mid = pts[i + 1:j]
    out = [start] + mid + [end]
    # leave a hair of space at both ends
    (x0, y0), (x1, y1) = out[0], out[1]
    d = math.hypot(x1 - x0, y1 - y0) or 1.0
    out[0] = (x0 + (x1 - x0) * gap / d, y0 + (y1 - y0) * gap / d)
    (x0, y0), (x1, y1) = out[-1], out[-2]
    d = math.hypot(x1 - x0, y1 - y0) or 1.0
    out[-1] = (x0 + (x1 - x0) * gap / d, y0 + (y1 - y0) * gap / d)
    return out


def _segment_hits(p, q, b: _Box, pad: float = 0.06) -> bool:
    n = max(2, int(math.hypot(q[0] - p[0], q[1] - p[1]) / 0.03))
    return any(_inside((p[0] + (q[0] - p[0]) * k / n, p[1] + (q[1] - p[1]) * k / n), b, pad) for k in range(n + 1))


def _corner(c, r, a0, a1, n: int = 6) -> list:
    """Points of a circular arc around centre c from angle a0 to a1 (radians, y down)."""
    return [(c[0] + r * math.cos(a0 + (a1 - a0) * k / n), c[1] + r * math.sin(a0 + (a1 - a0) * k / n))
            for k in range(n + 1)]


def _lane(p0, p1, lane_x: float) -> list:
    """From p0 (on a box's side) horizontally out to x = lane_x, vertically to p1's height, and
    horizontally back in to p1 (on a box's side), with rounded corners."""
    r = max(0.0, min(CORNER, abs(p1[1] - p0[1]) / 2, abs(lane_x - p0[0]), abs(lane_x - p1[0])))
    sx0 = 1 if lane_x > p0[0] else -1
    sx1 = 1 if lane_x > p1[0] else -1
    sy = 1 if p1[1] > p0[1] else -1
    pts = [p0]
    if r > 1e-3:
        pts += _corner((lane_x - sx0 * r, p0[1] + sy * r), r, -sy * math.pi / 2, 0.0 if sx0 > 0 else -sy * math.pi)
        pts += _corner((lane_x - sx1 * r, p1[1] - sy * r), r, 0.0 if sx1 > 0 else sy * math.pi, sy * math.pi / 2)
    else:
        pts += [(lane_x, p0[1]), (lane_x, p1[1])]
    pts.append(p1)
    return pts


def _edge_geometry(lay: _Layout, edges: list[_Edge], kinds: dict) -> dict:
    """Per (from, to): the polyline its arrow follows (data inches, y down) and its kind."""
    geo: dict[tuple[str, str], dict] = {}
    pair_set = {(e.a, e.b) for e in edges}
    boxes = {s: lay.box(s) for s in lay.pos}
    placed = [s for s in lay.pos if s not in lay.isolated]
    xs = [lay.pos[s][0] for s in placed]
    centre = (min(xs) + max(xs)) / 2 if xs else 0.0
    lanes: list[_Edge] = []
    for e in edges:
        if kinds.get(e.a) == "any":
            cp = lay.any_copies[(e.a, e.b)]
            y = lay.pos[e.b][1]
            geo[(e.a, e.b)] = {"kind": "any", "pts": [(boxes[cp].x1 + 0.02, y), (boxes[e.b].x0 - 0.02, y)]}
            continue
        if e.a == e.b:
            continue
        la, lb = lay.layer[e.a], lay.layer[e.b]
        pa, pb = lay.pos[e.a], lay.pos[e.b]
        between = [boxes[s] for s in placed if s not in (e.a, e.b)
                   and min(la, lb) <= lay.layer.get(s, -99) <= max(la, lb)]
        if la == lb:
            row = lay.rows[la]
            if abs(row.index(e.a) - row.index(e.b)) == 1 and (e.b, e.a) not in pair_set:
                pts = [pa, pb]
            else:
                rad = 0.35 * (1 if pb[0] > pa[0] else -1)
                pts = _quad(pa, _ctrl(pa, pb, rad), pb)
            geo[(e.a, e.b)] = {"kind": "edge", "pts": _clip(pts, boxes[e.a], boxes[e.b])}
        elif abs(la - lb) == 1 and (e.b, e.a) in pair_set:
            pts = _quad(pa, _ctrl(pa, pb, 0.22), pb)
            geo[(e.a, e.b)] = {"kind": "edge", "pts": _clip(pts, boxes[e.a], boxes[e.b])}
        elif not any(_segment_hits(pa, pb, b) for b in between):
            geo[(e.a, e.b)] = {"kind": "edge", "pts": _clip([pa, pb], boxes[e.a], boxes[e.b])}
        else:
            lanes.append(e)
    # side lanes: left or right of everything in the rows they pass, shorter ones inside
    side_of: dict[tuple[str, str], int] = {}
    for e in lanes:
        mid = (lay.pos[e.a][0] + lay.pos[e.b][0]) / 2
        side_of[(e.a, e.b)] = (-1 if mid < centre - 0.05 else 1 if mid > centre + 0.05
                               else -1 if lay.pos[e.a][0] < centre else 1)
    track: dict[tuple[str, str], int] = {}
    used: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in sorted(lanes, key=lambda e: (abs(lay.pos[e.b][1] - lay.pos[e.a][1]), lay.enum.get(e.a, 0),
                                          lay.enum.get(e.b, 0))):
        side = side_of[(e.a, e.b)]
        y0, y1 = sorted((lay.pos[e.a][1], lay.pos[e.b][1]))
        k = 0
        while any(not (y1 + 0.3 < u0 or u1 + 0.3 < y0) for u0, u1 in used.get((side, k), [])):
            k += 1
        used.setdefault((side, k), []).append((y0, y1))
        track[(e.a, e.b)] = k
    # stubs: where each lane leaves / enters its box's side (outer lanes further from the other end)
    stubs: dict[tuple[str, int], list[tuple[float, tuple[str, str], str]]] = {}
    for e in lanes:
        side = side_of[(e.a, e.b)]
        k = track[(e.a, e.b)]
        for node, other, end in ((e.a, e.b, "a"), (e.b, e.a, "b")):
            below = lay.pos[other][1] > lay.pos[node][1]   # the lane runs downwards from this end
            stubs.setdefault((node, side), []).append((-k if below else k, (e.a, e.b), end))
    lay.side_load = {key: len(items) for key, items in stubs.items()}
    lay.loop_side = {s: (1 if lay.side_load.get((s, 1), 0) <= lay.side_load.get((s, -1), 0) else -1)
                     for s in lay.loops}
    stub_y: dict[tuple[tuple[str, str], str], float] = {}
    for (node, side), items in stubs.items():
        items.sort(key=lambda t: (t[0], t[1]))
        n = len(items)
        h = lay.size[node][1]
        y = lay.pos[node][1]
        if lay.loop_side.get(node) == side:     # the loop takes the upper half
            lo, hi = y + 0.04, y + h / 2 - 0.07
        else:
            lo, hi = y - h / 2 + 0.09, y + h / 2 - 0.09
        for i, (_, pair, end) in enumerate(items):
            stub_y[(pair, end)] = (lo + hi) / 2 if n == 1 and lay.loop_side.get(node) != side else \
                lo + (hi - lo) * (i / (n - 1) if n > 1 else 0.5)
    for e in lanes:
        side = side_of[(e.a, e.b)]
        k = track[(e.a, e.b)]
        y0, y1 = sorted((lay.pos[e.a][1], lay.pos[e.b][1]))
        in_rows = [boxes[s] for s in placed if y0 - BOX_H <= lay.pos[s][1] <= y1 + BOX_H]
        edge_x = min(b.x0 for b in in_rows) if side < 0 else max(b.x1 for b in in_rows)
        loop_room = max((LOOP_W + 0.1 for s in lay.loops if s in lay.pos and y0 - BOX_H <= lay.pos[s][1] <= y1 + BOX_H
                         and lay.loop_side.get(s) == side), default=0.0)
        lane_x = edge_x + side * (LANE_GAP * (k + 1) + loop_room)
        ba, bb = boxes[e.a], boxes[e.b]
        p0 = (ba.x0 - 0.02 if side < 0 else ba.x1 + 0.02, stub_y[((e.a, e.b), "a")])
        p1 = (bb.x0 - 0.02 if side < 0 else bb.x1 + 0.02, stub_y[((e.a, e.b), "b")])
        geo[(e.a, e.b)] = {"kind": "lane", "pts": _lane(p0, p1, lane_x)}
    # self-loops: on the side with fewer lane stubs (the upper half of it when it has stubs)
    for e in edges:
        if e.a == e.b:
            side = lay.loop_side[e.a]
            b = boxes[e.a]
            x = (b.x1 if side > 0 else b.x0) + side * 0.02
            y = lay.pos[e.a][1]
            top, bot = (y - 0.18, y - 0.02) if lay.side_load.get((e.a, side)) else (y - 0.09, y + 0.09)
            geo[(e.a, e.b)] = {"kind": "loop", "pts": _lane((x, top), (x, bot), x + side * LOOP_W), "side": side}
    return geo


def _ctrl(p0, p2, rad):
    """arc3's control point (matplotlib computes it in display space, y up; here y runs down)."""
    mx, my = (p0[0] + p2[0]) / 2, (p0[1] + p2[1]) / 2
    dx, dy = p2[0] - p0[0], p2[1] - p0[1]
    return (mx - rad * dy, my + rad * dx)


def _along(pts: list, f: float) -> tuple[float, float]:
    """The point at fraction f of the polyline's length."""
    seg = [math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in zip(pts, pts[1:])]
    total = sum(seg) or 1.0
    want = f * total
    for (p, q), s in zip(zip(pts, pts[1:]), seg):
        if want <= s and s > 0:
            t = want / s
            return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t)
        want -= s
    return pts[-1]


def render_status_diagram(graph: nx.MultiDiGraph, fired: set[str] | None = None, fmt: str = "png",
                          title: str = "") -> DrawnDiagram:
    """Draw `graph` (from `status_graph`); the bytes are in `.data` (see `draw_status_diagram`)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"state diagram format {fmt!r}: use png or svg")
    import matplotlib
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path as MplPath

    fired = set(fired) if fired is not None else None
    edges = _edges(graph, fired)
    kinds = {n: d.get("kind", "state") for n, d in graph.nodes(data=True)}
    lay = _Layout(graph, edges)
    geo = _edge_geometry(lay, edges, kinds)
    initial = lay.initial
    status = graph.graph.get("status", "status")

    # -- labels: along their arrow, where they cover the fewest boxes, labels and other arrows ------
    node_boxes = {s: lay.box(s) for s in lay.pos}
    samples: dict[tuple[str, str], list[_Box]] = {}
    for k, gm in geo.items():
        pts = [_along(gm["pts"], t / 24) for t in range(25)]
        samples[k] = [_Box(px - 0.03, py - 0.03, px + 0.03, py + 0.03) for px, py in pts]
    placed: list[_Box] = []

    def label_box(cx, cy, text):
        w, h = _block_size(text, LABEL_FONT)
        return _Box(cx - w / 2 - 0.05, cy - h / 2 - 0.03, cx + w / 2 + 0.05, cy + h / 2 + 0.03)

    label_at: dict[tuple[str, str], tuple[float, float]] = {}
    for e in sorted(edges, key=lambda e: (geo[(e.a, e.b)]["kind"] not in ("any", "loop"), -len(e.label), e.a, e.b)):
        gm = geo[(e.a, e.b)]
        w, h = _block_size(e.label, LABEL_FONT)
        pts = gm["pts"]
        if gm["kind"] == "any":
            mx = (pts[0][0] + pts[-1][0]) / 2
            cands = [(mx, pts[0][1] - h / 2 - 0.07), (mx, pts[0][1] + h / 2 + 0.07)]
        elif gm["kind"] == "loop":
            side = gm["side"]
            xo = max(p[0] for p in pts) if side > 0 else min(p[0] for p in pts)
            y = (pts[0][1] + pts[-1][1]) / 2
            x = xo + side * (0.07 + w / 2)
            cands = [(x, y), (x, y - 0.25), (x, y + 0.25), (xo - side * LOOP_W / 2, pts[0][1] - h / 2 - 0.05)]
        else:
            ts = (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73, 0.2, 0.8, 0.14, 0.86)
            cands = [_along(pts, t) for t in ts]
        own = (e.a, e.b)
        best, best_cost = None, math.inf
        for n, (cx, cy) in enumerate(cands):
            bx = label_box(cx, cy, e.label)
            cost = (sum(bx.hits(o) for o in node_boxes.values()) * 20 + sum(bx.hits(o) for o in placed) * 20
                    + sum(bx.hits(o) for k, ss in samples.items() if k != own for o in ss) * 4 + n * 1e-3)
            if cost < best_cost:
                best, best_cost = (cx, cy), cost
        label_at[(e.a, e.b)] = best
        placed.append(label_box(*best, e.label))

    # -- extents --------------------------------------------------------------------------------
    boxes = list(node_boxes.values()) + placed + [b for ss in samples.values() for b in ss]
    if initial in lay.pos and initial not in lay.isolated:
        bx = node_boxes[initial]
        cx = (bx.x0 + bx.x1) / 2
        boxes.append(_Box(cx - 0.1, bx.y0 - 0.5, cx + 0.1, bx.y0))
    boxes = boxes or [_Box(0.0, 0.0, 0.0, 0.0)]   # nothing but isolated states
    x_min = min(b.x0 for b in boxes) - MARGIN
    x_max = max(b.x1 for b in boxes) + MARGIN
    head = 0.5 if title else 0.05
    y_min = min(b.y0 for b in boxes) - MARGIN - head
    graph_end = max(b.y1 for b in boxes)
    if lay.isolated:
        lay_iso = graph_end + 0.75
        ix = x_min + MARGIN
        for s in lay.isolated:
            w = lay.size[s][0]
            lay.pos[s] = (ix + w / 2, lay_iso)
            node_boxes[s] = lay.box(s)
            ix += w + 0.25
        x_max = max(x_max, ix + MARGIN)
        graph_end = lay_iso + BOX_H / 2
    legend_items = (["a row of it fired in the checked configurations", "no row of it ever fired"] if fired is not None
                    else ["transition, with its rows"]) + ["initial state"]
    legend_w = sum(_text_w(t, NOTE_FONT) + 0.5 for t in legend_items) + 0.2 * len(legend_items)
    width = max(x_max - x_min, 5.0, legend_w + 2 * MARGIN)
    x_min -= (width - (x_max - x_min)) / 2
    x_max = x_min + width

    notes: list[str] = []
    if graph.graph.get("unchanged"):
        notes.append(f"Rows that leave {status} unchanged (no arrow): " + ", ".join(graph.graph["unchanged"]) + ".")
    if any(e.pending for e in edges):
        notes.append("In parentheses: rows that only set the pending state; the rows before them make the "
                     "transition durable.")
    if graph.graph.get("disabled"):
        notes.append("Rows this configuration switches off (no arrow): " + ", ".join(graph.graph["disabled"]) + ".")
    if graph.graph.get("written_elsewhere"):
        notes.append(f"{status} is also written by rows of other tables: "
                     + ", ".join(f"{r} ({t})" for r, t in graph.graph["written_elsewhere"]) + ".")
    note_lines = [ln for n in notes for ln in _wrap_words(n, width - 2 * MARGIN, NOTE_FONT)]
    line_h = NOTE_FONT * 1.45 / 72
    legend_y = graph_end + 0.3
    y_max = legend_y + 0.3 + len(note_lines) * line_h + MARGIN * 0.8
    height = y_max - y_min

    rc = {"svg.hashsalt": "txncheck-state-diagram", "svg.fonttype": "none", "font.family": "DejaVu Sans",
          "svg.image_inline": True, "path.simplify": False, "text.usetex": False,
          "text.parse_math": False, "figure.dpi": DPI, "savefig.dpi": DPI}
    arrows: dict = {}
    labels: dict = {}
    unfired = tuple((e.a, e.b) for e in edges if not e.fired)
    with matplotlib.style.context("default"), matplotlib.rc_context(rc):
        fig = Figure(figsize=(width, height), dpi=DPI)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(x_min, x_max)
        ax.set_ylim(y_max, y_min)
        if title:
            ax.text(x_min + MARGIN, y_min + 0.33, title, fontsize=TITLE_FONT, fontweight="bold", color=INK,
                    va="baseline")
        patches = {}
        for s in lay.pos:
            bx = node_boxes[s]
            if s in lay.any_name:
                p = FancyBboxPatch((bx.x0, bx.y0), bx.x1 - bx.x0, bx.y1 - bx.y0,
                                   boxstyle="round,pad=0,rounding_size=0.08", fc="white", ec="#aaaaaa", lw=0.8,
                                   ls=(0, (2, 2)), zorder=3)
                ax.add_patch(p)
                ax.text(*lay.pos[s], lay.any_name[s], ha="center", va="center", fontsize=FONT - 0.5,
                        style="italic", color=ANY_INK, zorder=4)
                patches[s] = p
                continue
            iso = s in lay.isolated
            p = FancyBboxPatch((bx.x0, bx.y0), bx.x1 - bx.x0, bx.y1 - bx.y0,
                               boxstyle="round,pad=0,rounding_size=0.12",
                               fc=INITIAL_FILL if s == initial else ISOLATED_FILL if iso else STATE_FILL,
                               ec="#999999" if iso else INK, lw=1.6 if s == initial else 1.0,
                               ls="--" if kinds.get(s) == "other" else "-", zorder=3)
            p.set_gid(f"state-{s}")
            ax.add_patch(p)
            patches[s] = p
            ax.text(*lay.pos[s], s, ha="center", va="center", fontsize=FONT, color="#777777" if iso else INK,
                    fontweight="bold" if s == initial else "normal", zorder=4)
        if initial in lay.pos and initial not in lay.isolated:
            bx = node_boxes[initial]
            x = lay.pos[initial][0]
            ax.add_patch(Circle((x, bx.y0 - 0.42), 0.065, fc=INK, ec=INK, zorder=4))
            ax.add_patch(FancyArrowPatch((x, bx.y0 - 0.36), (x, bx.y0), arrowstyle="-|>", mutation_scale=11,
                                         color=INK, lw=1.2, shrinkA=0, shrinkB=1, zorder=2))
        if lay.isolated:
            ax.text(x_min + MARGIN, lay.pos[lay.isolated[0]][1] - BOX_H / 2 - 0.12,
                    "States that no row of this table enters or leaves:", fontsize=NOTE_FONT, color=NOTE_INK,
                    va="baseline")
        for e in edges:
            gm = geo[(e.a, e.b)]
            color = EDGE_INK if e.fired else UNFIRED_INK
            style = dict(arrowstyle="-|>", mutation_scale=12, color=color, lw=1.25,
                         linestyle="-" if e.fired else UNFIRED_DASH, zorder=2)
            arr = FancyArrowPatch(path=MplPath(gm["pts"]), **style)
            arr.set_gid(f"edge-{e.a}-{e.b}".replace(" ", "_"))
            ax.add_patch(arr)
            arrows[(e.a, e.b)] = arr
            lab = ax.text(*label_at[(e.a, e.b)], e.label, ha="center", va="center", fontsize=LABEL_FONT,
                          color=INK if e.fired else UNFIRED_TEXT, linespacing=1.1, zorder=5,
                          bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.92))
            lab.set_gid(f"label-{e.a}-{e.b}".replace(" ", "_"))
            labels[(e.a, e.b)] = lab
        handles = [Line2D([], [], color=EDGE_INK, lw=1.25, label="transition, with its rows")]
        if fired is not None:
            handles = [Line2D([], [], color=EDGE_INK, lw=1.25, label="a row of it fired in the checked configurations"),
                       Line2D([], [], color=UNFIRED_INK, lw=1.25, ls=UNFIRED_DASH, label="no row of it ever fired")]
        handles.append(Line2D([], [], marker="o", color=INK, ls="none", markersize=5, label="initial state"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(x_min + MARGIN - 0.08, legend_y),
                  bbox_transform=ax.transData, ncol=len(handles), frameon=False, fontsize=NOTE_FONT,
                  handlelength=2.6, borderaxespad=0, borderpad=0, columnspacing=1.5)
        y = legend_y + 0.3
        for ln in note_lines:
            ax.text(x_min + MARGIN, y + line_h * 0.75, ln, fontsize=NOTE_FONT, color=NOTE_INK, va="baseline")
            y += line_h
        buf = io.BytesIO()
        name = title or f"txncheck {graph.graph.get('table', '')} {status}"
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "txncheck", "Title": name})
            data = buf.getvalue().decode("utf-8").replace(
                "font-family: 'DejaVu Sans'", "font-family: 'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif"
            ).encode("utf-8")
        else:
            fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None, "Title": name})
            data = buf.getvalue()
    return DrawnDiagram(fig, arrows, labels, unfired, data)


def draw_status_diagram(graph: nx.MultiDiGraph, fired: set[str] | None, path: str, fmt: str = "png",
                        title: str = "") -> DrawnDiagram:
    """Draw `graph` (from `status_graph`) into `path` as `fmt` "png" or "svg", written atomically.
    `fired`: the row ids that fired in the checked configurations (None: coverage unknown, every
    arrow solid, no fired legend). An arrow none of whose rows fired (its durable rows, when it
    has any, else its pending ones) is dashed and grey. Returns what was drawn (`DrawnDiagram`)."""
    d = render_status_diagram(graph, fired, fmt, title)
    write_atomic(path, d.data)
    return d
