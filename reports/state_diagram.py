"""A table's state machine (`status_graph.py`) drawn as a PNG or SVG figure
(`draw_status_diagram`), for `txncheck report`.

The boxes are laid out in rows from the initial state down (`state_diagram_layout.py`; the initial
state is marked with a dot) and the arrows routed between them (`state_diagram_routes.py`). One
arrow per (from, to) pair, labelled with its rows ("TL-04, TL-05"; with `pending`, the rows that
only prepare the transition follow in parentheses). An "any state" pseudo-node is drawn once per
target, as a dashed box just left of it. A label sits along its arrow where it covers the fewest
boxes, labels and other arrows. With `fired` (the row ids that fired in the checked
configurations), an arrow none of whose rows fired (its durable rows when it has any) is dashed and
grey, and the legend says so; with `inapplicable` too (the rows no checked configuration lets fire,
checker/applicable.py), such an arrow whose rows are all inapplicable is dotted and paler instead,
with its own legend entry: the configurations switch it off, which is no warning sign. Below the
drawing: the states no row enters or leaves (greyed), the legend, and the rows with no arrow
(unchanged, switched off, written by other tables).

Output is deterministic (same graph and options -> same bytes, `mpl_figure.py`) and written
atomically.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .atomic import write_atomic
from .mpl_figure import SVG_FONTS, figure_bytes, figure_style, inch_axes, new_figure, text_width
from .state_diagram_layout import BOX_H, FONT, LABEL_FONT, LOOP_W, Box, Edge, Layout, block_size, diagram_edges
from .state_diagram_routes import along, edge_geometry

if TYPE_CHECKING:
    import networkx as nx

NOTE_FONT = 8.0
TITLE_FONT = 11.0
MARGIN = 0.35

INK = "#222222"
EDGE_INK = "#1f4e89"
UNFIRED_INK = "#9e9e9e"
UNFIRED_TEXT = "#808080"
UNFIRED_DASH = (0, (4, 3))
OFF_INK = "#c8c8c8"
OFF_TEXT = "#a8a8a8"
OFF_DOTS = (0, (1, 2.5))
STATE_FILL = "#eef3fa"
INITIAL_FILL = "#dcebd9"
ISOLATED_FILL = "#f3f3f3"
ANY_INK = "#555555"
NOTE_INK = "#444444"
OFF_LABEL = "not applicable to any checked configuration"


@dataclass
class DrawnDiagram:
    """What `draw_status_diagram` drew: the figure, one arrow and one label per (from, to) pair of
    the graph (self-loops included; an "any state" edge keyed by the pseudo-node's name), the pairs
    drawn as never fired (dashed, grey), the file's bytes, and the pairs drawn as not applicable
    to any checked configuration (dotted, paler)."""
    figure: object
    arrows: dict
    labels: dict
    unfired: tuple
    data: bytes = b""
    inapplicable: tuple = ()


def _wrap_words(text: str, width_in: float, size: float) -> list[str]:
    """`text` broken between words into lines of at most `width_in` inches at `size` points."""
    out: list[str] = []
    cur = ""
    for w in text.split(" "):
        trial = f"{cur} {w}" if cur else w
        if cur and text_width(trial, size) > width_in:
            out.append(cur)
            cur = w
        else:
            cur = trial
    if cur:
        out.append(cur)
    return out


def _notes(graph: nx.MultiDiGraph, edges: list[Edge], status: str) -> list[str]:
    """What the figure says below the legend: the rows with no arrow, and what parentheses mean."""
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
    return notes


def _place_labels(edges: list[Edge], geo: dict, node_boxes: dict[str, Box]):
    """Each arrow's label along its arrow, where it covers the fewest boxes, labels and other
    arrows (self-loops and "any state" arrows first, then the longest labels): the labels' centres,
    their boxes, and the boxes sampled along every arrow."""
    samples: dict[tuple[str, str], list[Box]] = {}
    for k, gm in geo.items():
        pts = [along(gm["pts"], t / 24) for t in range(25)]
        samples[k] = [Box(px - 0.03, py - 0.03, px + 0.03, py + 0.03) for px, py in pts]
    placed: list[Box] = []

    def label_box(cx, cy, text):
        w, h = block_size(text, LABEL_FONT)
        return Box(cx - w / 2 - 0.05, cy - h / 2 - 0.03, cx + w / 2 + 0.05, cy + h / 2 + 0.03)

    label_at: dict[tuple[str, str], tuple[float, float]] = {}
    for e in sorted(edges, key=lambda e: (geo[(e.a, e.b)]["kind"] not in ("any", "loop"), -len(e.label), e.a, e.b)):
        gm = geo[(e.a, e.b)]
        w, h = block_size(e.label, LABEL_FONT)
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
            cands = [along(pts, t) for t in ts]
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
    return label_at, placed, samples


def render_status_diagram(graph: nx.MultiDiGraph, fired: set[str] | None = None, fmt: str = "png",
                          title: str = "", inapplicable: set[str] | None = None) -> DrawnDiagram:
    """Draw `graph` (from `status_graph`); the bytes are in `.data` (see `draw_status_diagram`)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"state diagram format {fmt!r}: use png or svg")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path as MplPath

    fired = set(fired) if fired is not None else None
    edges = diagram_edges(graph, fired, set(inapplicable) if inapplicable else None)
    off_legend = any(not e.applicable for e in edges)
    kinds = {n: d.get("kind", "state") for n, d in graph.nodes(data=True)}
    lay = Layout(graph, edges)
    geo = edge_geometry(lay, edges, kinds)
    initial = lay.initial
    status = graph.graph.get("status", "status")

    node_boxes = {s: lay.box(s) for s in lay.pos}
    label_at, placed, samples = _place_labels(edges, geo, node_boxes)

    # -- extents --------------------------------------------------------------------------------
    boxes = list(node_boxes.values()) + placed + [b for ss in samples.values() for b in ss]
    if initial in lay.pos and initial not in lay.isolated:
        bx = node_boxes[initial]
        cx = (bx.x0 + bx.x1) / 2
        boxes.append(Box(cx - 0.1, bx.y0 - 0.5, cx + 0.1, bx.y0))
    boxes = boxes or [Box(0.0, 0.0, 0.0, 0.0)]   # nothing but isolated states
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
                    else ["transition, with its rows"]) + ([OFF_LABEL] if off_legend else []) + ["initial state"]
    legend_w = sum(text_width(t, NOTE_FONT) + 0.5 for t in legend_items) + 0.2 * len(legend_items)
    width = max(x_max - x_min, 5.0, legend_w + 2 * MARGIN)
    x_min -= (width - (x_max - x_min)) / 2
    x_max = x_min + width

    note_lines = [ln for n in _notes(graph, edges, status) for ln in _wrap_words(n, width - 2 * MARGIN, NOTE_FONT)]
    line_h = NOTE_FONT * 1.45 / 72
    legend_y = graph_end + 0.3
    y_max = legend_y + 0.3 + len(note_lines) * line_h + MARGIN * 0.8
    height = y_max - y_min

    arrows: dict = {}
    labels: dict = {}
    unfired = tuple((e.a, e.b) for e in edges if not e.fired and e.applicable)
    off = tuple((e.a, e.b) for e in edges if not e.applicable)
    with figure_style("txncheck-state-diagram"):
        fig = new_figure(width, height)
        ax = inch_axes(fig, x_min, x_max, y_min, y_max)
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
            color = EDGE_INK if e.fired else UNFIRED_INK if e.applicable else OFF_INK
            style = dict(arrowstyle="-|>", mutation_scale=12, color=color, lw=1.25,
                         linestyle="-" if e.fired else UNFIRED_DASH if e.applicable else OFF_DOTS, zorder=2)
            arr = FancyArrowPatch(path=MplPath(gm["pts"]), **style)
            arr.set_gid(f"edge-{e.a}-{e.b}".replace(" ", "_"))
            ax.add_patch(arr)
            arrows[(e.a, e.b)] = arr
            lab = ax.text(*label_at[(e.a, e.b)], e.label, ha="center", va="center", fontsize=LABEL_FONT,
                          color=INK if e.fired else UNFIRED_TEXT if e.applicable else OFF_TEXT, linespacing=1.1,
                          zorder=5,
                          bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.92))
            lab.set_gid(f"label-{e.a}-{e.b}".replace(" ", "_"))
            labels[(e.a, e.b)] = lab
        handles = [Line2D([], [], color=EDGE_INK, lw=1.25, label="transition, with its rows")]
        if fired is not None:
            handles = [Line2D([], [], color=EDGE_INK, lw=1.25, label="a row of it fired in the checked configurations"),
                       Line2D([], [], color=UNFIRED_INK, lw=1.25, ls=UNFIRED_DASH, label="no row of it ever fired")]
        if off_legend:
            handles.append(Line2D([], [], color=OFF_INK, lw=1.25, ls=OFF_DOTS, label=OFF_LABEL))
        handles.append(Line2D([], [], marker="o", color=INK, ls="none", markersize=5, label="initial state"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(x_min + MARGIN - 0.08, legend_y),
                  bbox_transform=ax.transData, ncol=len(handles), frameon=False, fontsize=NOTE_FONT,
                  handlelength=2.6, borderaxespad=0, borderpad=0, columnspacing=1.5)
        y = legend_y + 0.3
        for ln in note_lines:
            ax.text(x_min + MARGIN, y + line_h * 0.75, ln, fontsize=NOTE_FONT, color=NOTE_INK, va="baseline")
            y += line_h
        data = figure_bytes(fig, fmt, title or f"txncheck {graph.graph.get('table', '')} {status}", SVG_FONTS)
    return DrawnDiagram(fig, arrows, labels, unfired, data, off)


def draw_status_diagram(graph: nx.MultiDiGraph, fired: set[str] | None, path: str, fmt: str = "png",
                        title: str = "", inapplicable: set[str] | None = None) -> DrawnDiagram:
    """Draw `graph` (from `status_graph`) into `path` as `fmt` "png" or "svg", written atomically.
    `fired`: the row ids that fired in the checked configurations (None: coverage unknown, every
    arrow solid, no fired legend). An arrow none of whose rows fired (its durable rows, when it
    has any, else its pending ones) is dashed and grey; dotted and paler when they are all in
    `inapplicable` (rows no checked configuration lets fire). Returns what was drawn (`DrawnDiagram`)."""
    d = render_status_diagram(graph, fired, fmt, title, inapplicable)
    write_atomic(path, d.data)
    return d
