"""Where a state diagram's boxes go (`Layout`), and the arrows it draws (`diagram_edges`: one per
(from, to) pair of the graph, with its label). Lengths are in inches, y runs down.

A layered drawing computed here (no graphviz), top to bottom: the initial state in the first row,
each state in the row given by the longest path to it over the forward edges, where an edge is
forward when it leads to a state farther from the initial state (BFS distance, ties broken by the
enum's order: Kafka's TransactionState puts PrepareCommit and PrepareAbort in one row,
CompleteCommit and CompleteAbort in the next). States the initial state does not lead to sit just
above their successors (Kafka's UNINITIALIZED, entered only by a crash), or below everything when
they have none (FATAL_ERROR, entered from "any state"). A row's order and x positions pull each
state towards its neighbours in the other rows. An "any state" pseudo-node gets one copy per
target, just left of it. States no row enters or leaves are placed by the drawing, below the rest.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .mpl_figure import text_width

if TYPE_CHECKING:
    import networkx as nx

FONT = 9.0              # state names (points)
LABEL_FONT = 7.5        # row ids on edges
BOX_H = 0.42            # a state's box (inches)
BOX_PAD = 0.28          # horizontal padding around a state's name
ANY_H = 0.30            # an "any state" pseudo-node
ROW_GAP = 0.95          # vertical gap between two rows of boxes
H_GAP = 0.9             # least horizontal gap between two boxes of a row
LOOP_W = 0.36           # a self-loop's reach to the right of its box
LABEL_CHARS = 24        # an edge label is wrapped at about this many characters a line


def block_size(text: str, size: float, spacing: float = 1.1) -> tuple[float, float]:
    """A multi-line text's width and height in inches at `size` points."""
    lines = text.split("\n")
    return max(text_width(x, size) for x in lines), (len(lines) - 1) * size * spacing * 1.2 / 72.0 + size * 1.2 / 72.0


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


@dataclass
class Edge:
    """One drawn arrow: every row of the graph from `a` to `b`."""
    a: str
    b: str
    write: list[str]
    pending: list[str]
    fired: bool
    label: str = ""
    applicable: bool = True   # False: no checked configuration lets any of its rows fire


@dataclass
class Box:
    """An upright rectangle (inches, y down); `hits` is how much of it another one covers."""
    x0: float
    y0: float
    x1: float
    y1: float

    def hits(self, o: "Box", pad: float = 0.03) -> float:
        w = min(self.x1, o.x1) - max(self.x0, o.x0) + pad
        h = min(self.y1, o.y1) - max(self.y0, o.y0) + pad
        return w * h if w > 0 and h > 0 else 0.0


def diagram_edges(graph: nx.MultiDiGraph, fired: set[str] | None,
                  inapplicable: set[str] | None = None) -> list[Edge]:
    """One arrow per (from, to) pair of `graph`, labelled with its rows (the rows that only set the
    pending state in parentheses); unfired when none of its durable rows (else pending ones) is
    in `fired` (None: coverage unknown, every arrow fired), and not applicable when, unfired, all
    of those rows are in `inapplicable` (rows no checked configuration lets fire)."""
    pairs: dict[tuple[str, str], Edge] = {}
    for a, b, k, d in graph.edges(keys=True, data=True):
        e = pairs.setdefault((a, b), Edge(a, b, [], [], True))
        (e.write if d.get("kind", "write") == "write" else e.pending).append(k)
    for e in pairs.values():
        rows = e.write or e.pending   # the durable rows decide, when there are any
        e.fired = fired is None or any(r in fired for r in rows)
        e.applicable = e.fired or not inapplicable or not all(r in inapplicable for r in rows)
        lines = _wrap_ids(e.write, LABEL_CHARS)
        if e.pending:
            lines += _wrap_ids(e.pending, LABEL_CHARS, "(", ")")
        e.label = "\n".join(lines)
    return list(pairs.values())


class Layout:
    """Rows top to bottom (see the module doc); lengths in inches, y down. `edge_geometry` adds
    which side of each box its lanes leave from (`side_load`) and its self-loop goes (`loop_side`)."""

    def __init__(self, graph: nx.MultiDiGraph, edges: list[Edge]):
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
            self.size[s] = (text_width(s, FONT, weight="bold" if s == self.initial else "normal") + 2 * BOX_PAD, BOX_H)
        for cp, a in self.any_name.items():
            self.size[cp] = (text_width(a, FONT - 0.5, style="italic") + 0.24, ANY_H)
        loops = {e.a: e for e in edges if e.a == e.b}
        any_label = {self.any_copies[(e.a, e.b)]: e.label for e in edges if kinds[e.a] == "any"}

        def sep(left: str, right: str) -> float:
            """Least distance between the centres of two neighbours in a row."""
            gap = H_GAP
            if left in any_label:
                gap = max(0.55, block_size(any_label[left], LABEL_FONT)[0] + 0.2)
            for s in (left, right):   # a self-loop may go on either side of its box
                if s in loops:
                    gap = max(gap, LOOP_W + block_size(loops[s].label, LABEL_FONT)[0] + 0.35)
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

    def box(self, s: str) -> Box:
        x, y = self.pos[s]
        w, h = self.size[s]
        return Box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
