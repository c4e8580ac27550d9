"""A trace's sequence chart as a PNG or SVG image (`txncheck view --png/--svg`), for a pull-request
comment or a design doc.

One vertical lane per actor instance (`Story.lanes`, titled at the top, and again at the bottom once
the chart is longer than `REPEAT_TITLES_AFTER` steps); time runs down, one row per step, the step
number in the left margin. Row 0 is the initial state (where messages already in flight start).
A step is a box on its lane holding its row id (and, when it sends and receives nothing or is a
fault, its trigger beside it); a fault step is red with a ⚡; the last step and the `highlight`
steps sit on a tinted band. A message is an arrow from its sender at the sending step to its
receiver at the delivering step, labelled with the message (a delayed message is a long sloping
arrow); a broadcast gets one arrow per delivery; a duplicate is dashed; a lost message ends in a red
✗ at the step that lost it, just short of its receiver's lane; a message overwritten in flight ends
in a grey bar at the step that overwrote it; a message still in flight after the last step ends
with an open arrowhead in the row below it, labelled "(in flight)".

The layout and the chart's size are in `sequence_layout.py`, the placing of arrow labels in
`sequence_labels.py`. The output is deterministic (`mpl_figure.py`): the same story gives the same
bytes, and the file is written atomically (a reader sees the old file or the new one).
"""
from __future__ import annotations

import math
import re
from xml.sax.saxutils import escape

from txncheck.traces.render import OUTCOME
from txncheck.traces.story import Message, Story

from .atomic import write_atomic
from .mpl_figure import DPI, figure_bytes, figure_style, inch_axes, new_figure, text_width
from .sequence_labels import Box, Obstacles, place_label
from .sequence_layout import (HEAD, LEFT, LEGEND_H, REPEAT_TITLES_AFTER, TITLES_H, SequenceLayout, arrow_suffix,
                              chart_height_px, clip, in_flight, shows_trigger, step_id)

TITLE_FONT = 9.0
SVG_FONTS = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Geneva, sans-serif"  # where DejaVu Sans is missing

INK = "#222222"
LANE_INK = "#9aa3ad"
MSG_INK = "#1f4e89"
FAULT_INK = "#c62828"
FAULT_FILL = "#fde7e7"
BOX_FILL = "#eef3fa"
GREY = "#777777"
LAST_BAND = "#ffe0b2"
HIGHLIGHT_BAND = "#fff6bf"


def plot_story(story: Story, trace, path: str, fmt: str = "png", *, highlight=None) -> None:
    """Draw `story` (of `trace`, which gives the header and the actors of steps without a lane;
    None for no header) as a sequence chart into `path`, `fmt` "png" or "svg", written atomically.
    `highlight`: step indices to emphasise besides the last one."""
    data = render_story(story, trace, fmt, highlight=highlight)
    write_atomic(path, data)


def render_story(story: Story, trace, fmt: str = "png", *, highlight=None) -> bytes:
    """The chart's bytes (see `plot_story`)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"sequence chart format {fmt!r}: use png or svg")
    lay = SequenceLayout(story, trace, highlight)
    with figure_style("txncheck-sequence-chart"):
        # the height a hair over the pixel rows, so that the PNG has exactly chart_height_px rows
        fig = new_figure(lay.width, (chart_height_px(lay.n) + 0.01) / DPI)
        ax = inch_axes(fig, 0, lay.width, 0, fig.get_figheight())
        titles: dict[str, str] = {}
        legend = _draw(ax, lay, titles)
        _draw_header(ax, lay)
        _draw_legend(ax, lay, legend)
        data = figure_bytes(fig, fmt, _title_text(trace), SVG_FONTS)
    return _svg_tooltips(data, titles) if fmt == "svg" else data


def _title_text(trace) -> str:
    if trace is None:
        return "sequence chart"
    prop = (trace.property or {}).get("name", "?")
    return f"txncheck {trace.spec} {prop}: {trace.kind}"


def _draw_header(ax, lay: SequenceLayout) -> None:
    trace = lay.trace
    if trace is not None:
        cfg = (trace.config or {}).get("name", "?")
        bits = [str(trace.spec), f"config {cfg}"]
        if trace.variant:
            bits.append(f"variant {trace.variant}")
        ax.text(LEFT * 0.4, 0.32, " · ".join(bits), fontsize=11.5, fontweight="bold", color=INK, va="baseline")
        prop = trace.property or {}
        verdict = OUTCOME.get(trace.kind, trace.kind)
        n = lay.n
        line = (f"property {prop.get('name', '?')} ({prop.get('kind', '?')}) · verdict: {trace.kind}"
                f" ({verdict} after {n} step{'s' if n != 1 else ''})")
        if trace.loop is not None:
            line += (", then it stutters forever" if trace.loop == n else f", then back to step {trace.loop}, forever")
        ax.text(LEFT * 0.4, 0.58, line, fontsize=9.5, color=INK, va="baseline")
        doc = " ".join(str(prop.get("doc") or "").split())
        if doc:
            room = lay.width - LEFT * 0.4 - 0.2
            while len(doc) > 8 and text_width(doc, 9) > room:
                doc = doc[:int(len(doc) * room / text_width(doc, 9)) - 1].rstrip() + "…"
            ax.text(LEFT * 0.4, 0.80, doc, fontsize=9, color="#444444", style="italic", va="baseline")
    _lane_titles(ax, lay, HEAD - 0.22)


def _lane_titles(ax, lay: SequenceLayout, y: float) -> None:
    for ln in lay.lanes:
        fallback = isinstance(ln, tuple)
        ax.text(lay.x(ln), y, clip(lay.titles[ln], 28), fontsize=TITLE_FONT, fontweight="bold",
                fontstyle="italic" if fallback else "normal", ha="center", va="center", color=INK, zorder=6,
                bbox=dict(boxstyle="round,pad=0.35", fc="#e3e8ef" if not fallback else "#f2f2f2",
                          ec=LANE_INK, lw=0.8))


def _draw(ax, lay: SequenceLayout, titles: dict) -> set:
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import FancyArrowPatch

    story, n, row, fs = lay.story, lay.n, lay.row, lay.fs
    used: set[str] = set()
    obstacles = Obstacles(max(row, 0.05) * 4)
    top, bottom = HEAD - 0.05, lay.rows_bottom
    ax.add_collection(LineCollection([[(lay.x(ln), top), (lay.x(ln), bottom)] for ln in lay.lanes],
                                     colors=LANE_INK, linewidths=1.0, zorder=1))
    # row bands and numbers
    every = 1 if row >= 0.095 else max(1, int(math.ceil(0.095 / row)))
    bands = []
    for st in story.steps:
        k = st.index
        colour = LAST_BAND if k == lay.last else HIGHLIGHT_BAND if k in lay.highlight else None
        if colour:
            bands.append((k, colour))
        if k % every == 0 or colour:
            ax.text(LEFT - 0.12, lay.y(k), str(k), fontsize=fs, ha="right", va="center",
                    color=INK if colour else GREY, fontweight="bold" if colour else "normal")
    for k, colour in bands:
        y0 = lay.y(k) - row / 2
        ax.add_patch(_rect(LEFT - 0.5, y0, lay.width - 0.1 - (LEFT - 0.5), row, colour, zorder=0))
    ax.text(LEFT - 0.12, lay.y(0), "init", fontsize=fs * 0.9, ha="right", va="center", color=GREY, style="italic")
    if any(in_flight(m) for m in story.messages):
        ax.text(LEFT - 0.12, lay.y(n + 1), "after", fontsize=fs * 0.9, ha="right", va="center", color=GREY,
                style="italic")
    if n > REPEAT_TITLES_AFTER:
        _lane_titles(ax, lay, bottom + TITLES_H / 2)

    # step boxes
    hw, hh = lay.box_hw, lay.box_hh
    polys, faces, edges, widths = [], [], [], []
    for st in story.steps:
        k, ln = st.index, lay.step_lane[st.index]
        x, y = lay.x(ln), lay.y(k)
        emph = k == lay.last or k in lay.highlight
        polys.append([(x - hw, y - hh), (x + hw, y - hh), (x + hw, y + hh), (x - hw, y + hh)])
        faces.append(FAULT_FILL if st.fault else "white" if emph else BOX_FILL)
        edges.append(FAULT_INK if st.fault else INK if emph else MSG_INK)
        widths.append((1.8 if emph else 0.9) * max(lay.scale, 0.5))
        obstacles.add(Box.span(x - hw, y - hh, x + hw, y + hh, weight=20.0))
        t = ax.text(x, y, step_id(st), fontsize=fs, ha="center", va="center", zorder=7,
                    color=FAULT_INK if st.fault else INK, fontweight="bold" if emph or st.fault else "normal")
        gid = f"step-{k}"
        t.set_gid(gid)
        titles[gid] = f"step {k}: {st.action} — {st.label}" + (f" [{', '.join(st.tags)}]" if st.tags else "")
        if st.fault:
            used.add("fault")
            ax.text(x - hw - 0.04, y, "⚡", fontsize=fs * 1.25, ha="right", va="center", color=FAULT_INK, zorder=5)
            obstacles.add(Box.span(x - hw - 0.04 - fs * 1.25 / 72, y - hh, x - hw, y + hh, weight=10.0))
        if shows_trigger(st):
            label = lay.trigger(st)
            tw = text_width(label, fs * 0.95)
            ax.text(x + hw + 0.06, y, label, fontsize=fs * 0.95, ha="left", va="center", zorder=4,
                    color=FAULT_INK if st.fault else "#444444", style="italic",
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
            obstacles.add(Box.span(x + hw + 0.04, y - hh, x + hw + 0.1 + tw, y + hh))
    if polys:
        ax.add_collection(PolyCollection(polys, facecolors=faces, edgecolors=edges, linewidths=widths, zorder=6))

    # messages
    head = max(0.45, lay.scale ** 0.5)
    labels = []
    for m in story.messages:
        src = _source(lay, m)
        if src is None:
            continue
        sx, sy, s_box = src
        dash = "--" if m.duplicate else "-"
        if m.duplicate:
            used.add("duplicate")
        ends = []  # (x, y, whether a step box is there, how the arrow ends)
        for k, ln in m.delivered:
            ln = ln if ln is not None else lay.step_lane.get(k)
            if ln in lay.col:
                ends.append((lay.x(ln), lay.y(k), True, "delivered"))
        if m.dropped is not None:
            k, ln = m.dropped
            tx = _target_x(lay, m, ln if ln is not None else lay.step_lane.get(k), sx)
            side = 1 if tx >= sx else -1
            if abs(tx - sx) < 1e-9:
                xx = sx + hw + 0.35
            else:
                xx = tx - side * min(hw + 0.2, abs(tx - sx) / 2)
            ends.append((xx, lay.y(k), False, "dropped"))
        if m.superseded is not None and not m.delivered and m.dropped is None:
            tx = _target_x(lay, m, None, sx)
            side = 1 if tx >= sx else -1
            ends.append((tx - side * (hw + 0.1) if tx != sx else sx + hw + 0.35, lay.y(m.superseded), False,
                         "superseded"))
        if in_flight(m):
            targets = [m.target] if m.target is not None else [ln for ln in lay.lanes if not isinstance(ln, tuple)
                                                                 and ln.kind == m.target_kind]
            for ln in targets:
                if ln in lay.col:
                    ends.append((lay.x(ln), lay.y(n + 1), False, "inflight"))
            if not targets or not any(ln in lay.col for ln in targets):
                ends.append((sx + lay.lane_w * 0.8, lay.y(n + 1), False, "inflight"))
        labelled = set()
        for j, (tx, ty, boxed, kind) in enumerate(ends):
            same = abs(tx - sx) < 1e-9
            a = _edge(sx, sy, hw, hh, tx, ty) if s_box else (sx, sy)
            b = _edge(tx, ty, hw, hh, sx, sy) if boxed else (tx, ty)
            colour = GREY if kind == "superseded" else MSG_INK
            style = {"delivered": "-|>", "inflight": "->", "dropped": "-", "superseded": "-["}[kind]
            if kind == "inflight":
                used.add("inflight")
            conn = "arc3"
            if same:  # a message to its own lane: a loop out to the right
                a, b = (sx + hw, sy), (tx + hw, ty)
                arm = 16 * max(lay.scale, 0.5)
                conn = f"arc,angleA=0,angleB=0,armA={arm:.2f},armB={arm:.2f},rad={arm / 4:.2f}"
            arrow = FancyArrowPatch(a, b, arrowstyle=style, connectionstyle=conn, mutation_scale=9 * head,
                                    linestyle=dash, linewidth=1.1 * max(lay.scale, 0.6), color=colour,
                                    shrinkA=0, shrinkB=0, zorder=3)
            if style == "-[":
                arrow.set_arrowstyle("-[", widthB=0.35, lengthB=0.0)
            gid = f"msg-{m.id}-{j}"
            arrow.set_gid(gid + "-arrow")
            ax.add_patch(arrow)
            if kind == "dropped":
                used.add("dropped")
                ax.text(b[0], b[1], "✗", fontsize=fs * 1.7, ha="center", va="center", color=FAULT_INK,
                        fontweight="bold", zorder=6)
                obstacles.add(Box.span(b[0] - 0.08, b[1] - 0.08, b[0] + 0.08, b[1] + 0.08, weight=10.0))
            if kind in labelled:
                continue  # a broadcast: its label once, on its first arrow
            labelled.add(kind)
            text = lay.label(m, kind)
            titles[gid] = f"message {m.id}: {m.label}{arrow_suffix(m, kind)}"
            labels.append((abs(b[0] - a[0]) if not same else 0.0, len(labels),
                           (a, b, same, text, gid, GREY if kind == "superseded" else MSG_INK)))
    # the labels of short arrows first: they have the fewest places to go
    for _, _, args in sorted(labels, key=lambda x: x[:2]):
        place_label(ax, lay, obstacles, *args)
    return used


def _rect(x, y, w, h, colour, zorder):
    from matplotlib.patches import Rectangle
    return Rectangle((x, y), w, h, facecolor=colour, edgecolor="none", zorder=zorder)


def _edge(cx: float, cy: float, hw: float, hh: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from a box's centre (cx, cy) towards (tx, ty) leaves the box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    t = min(t, 1.0)
    return cx + t * dx, cy + t * dy


def _source(lay: SequenceLayout, m: Message):
    """Where the arrow starts: the sender's lane at the sending step (row 0 when it was in flight
    at the start); whether there is a step box there to start from."""
    k = 0 if m.sent is None else m.sent
    step_lane = lay.step_lane.get(k) if m.sent is not None else None
    ln = m.source if m.source in lay.col else step_lane
    if ln is None or ln not in lay.col:
        ln = m.target if m.target in lay.col else next(
            (x for x in lay.lanes if not isinstance(x, tuple) and x.kind == m.target_kind), None)
        if ln is None:
            return None
    return lay.x(ln), lay.y(k), (m.sent is not None and step_lane == ln)


def _target_x(lay: SequenceLayout, m: Message, where, sx: float) -> float:
    """Where a message that was not delivered was headed: its receiver's lane; for a broadcast the
    lane of the step that lost it if that is a receiver, else the nearest receiver's lane."""
    if m.target is not None and m.target in lay.col:
        return lay.x(m.target)
    if where in lay.col and not isinstance(where, tuple) and where.kind == m.target_kind:
        return lay.x(where)
    kin = [lay.x(ln) for ln in lay.lanes if not isinstance(ln, tuple) and ln.kind == m.target_kind]
    if kin:
        return min(kin, key=lambda x: (abs(x - sx) < 1e-9, abs(x - sx)))
    return sx + lay.lane_w


def _draw_legend(ax, lay: SequenceLayout, used: set) -> None:
    from matplotlib.patches import FancyArrowPatch

    y = lay.height - LEGEND_H / 2
    x = LEFT * 0.4
    items = [("message", "-|>", "-", MSG_INK)] if lay.story.messages else []
    if "duplicate" in used:
        items.append(("duplicate", "-|>", "--", MSG_INK))
    if "dropped" in used:
        items.append(("lost ✗", "-", "-", MSG_INK))
    if "inflight" in used:
        items.append(("in flight", "->", "-", MSG_INK))
    for label, style, dash, colour in items:
        ax.add_patch(FancyArrowPatch((x, y), (x + 0.45, y), arrowstyle=style, linestyle=dash, color=colour,
                                     mutation_scale=9, shrinkA=0, shrinkB=0, linewidth=1.1))
        ax.text(x + 0.52, y, label, fontsize=8, va="center", color=INK)
        x += 0.52 + text_width(label, 8) + 0.3
    if "fault" in used:
        ax.text(x, y, "⚡ fault step", fontsize=8, va="center", color=FAULT_INK)
        x += text_width("⚡ fault step", 8) + 0.3
    if lay.last is not None:
        ax.add_patch(_rect(x, y - 0.08, 0.3, 0.16, LAST_BAND, zorder=1))
        ax.text(x + 0.38, y, "last step", fontsize=8, va="center", color=INK)
        x += 0.38 + text_width("last step", 8) + 0.3
    if lay.highlight & {st.index for st in lay.story.steps}:
        ax.add_patch(_rect(x, y - 0.08, 0.3, 0.16, HIGHLIGHT_BAND, zorder=1))
        ax.text(x + 0.38, y, "highlighted", fontsize=8, va="center", color=INK)


def _svg_tooltips(svg: bytes, titles: dict) -> bytes:
    """Give every step and message label its full text as a hover <title> (the drawn one may be cut)."""
    text = svg.decode("utf-8")

    def add(mo):
        gid = mo.group(1)
        full = titles.get(gid)
        return mo.group(0) if full is None else f"{mo.group(0)}\n   <title>{escape(full)}</title>"
    text = re.sub(r'<g id="((?:step|msg)-[0-9-]+)">', add, text)
    return text.encode("utf-8")
