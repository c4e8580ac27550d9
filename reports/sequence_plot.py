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

Size (at `DPI` = 100 px per inch, the PNG's resolution):
  * width: `LEFT` + lanes × lane width + a right margin (`RIGHT`, or what a trigger beside the
    rightmost lane needs), at least `MIN_WIDTH`; a lane is `LANE_MIN` 2.2 to `LANE_MAX` 3.6 in wide,
    what its longest message label needs, so labels do not overlap the next lane's boxes; a label
    is cut with "…" at `LABEL_MAX` characters or where it would not fit between two lanes' boxes
    (the SVG keeps every full label and step action as a hover <title>);
  * height: `HEAD` + (steps + 2) × row + `FOOT` inches (the 2 extra rows: the initial state and the
    in-flight row), plus `TITLES_H` when the lane titles are repeated at the bottom (more than
    `REPEAT_TITLES_AFTER` = 30 steps): 1.35 + (steps + 2) × 0.30 + 0.45 in up to 30 steps (the
    3-step twophase counterexample: 3.30 in = 330 px).
    A row is `ROW` = 0.30 in up to `SCALE_AFTER` = 200 steps; beyond, rows shrink as
    0.30 × 200 / steps (the rows keep 60 in) down to `MIN_ROW` = 0.10 in (reached at 600 steps),
    fonts shrinking with them (from 8 pt to 4.6 pt at 0.10 in: zoom in to read); the rows never take
    more than `MAX_ROWS_IN` = 201 in, so a 2,000-step trace is 1.35 + 2,002 × 0.10 + 0.85 =
    202.4 in = 20,240 px tall and longer traces get ever thinner rows (past ~2,000 steps the HTML
    viewer or the text trace reads better). `chart_height_px(steps)` is the PNG's pixel height.

The output is deterministic: the same story gives the same bytes (SVG: no date, no software
version, a fixed hash salt, text kept as text; PNG: no software version), and the file is written
atomically (a reader sees the old file or the new one).
"""
from __future__ import annotations

import io
import math
import re
from functools import lru_cache
from xml.sax.saxutils import escape

from txncheck.traces.story import Message, Story, StoryStep

from .atomic import write_atomic

DPI = 100
LEFT = 0.70             # the step-number gutter (inches)
RIGHT = 0.30
MIN_WIDTH = 6.5
LANE_MIN, LANE_MAX = 2.2, 3.6
HEAD = 1.35             # the header: three text lines and the lane titles
LEGEND_H = 0.45
TITLES_H = 0.40         # the lane titles repeated at the bottom
FOOT = LEGEND_H
REPEAT_TITLES_AFTER = 30
ROW = 0.30
SCALE_AFTER = 200
MIN_ROW = 0.10
MAX_ROWS_IN = 201.0
LABEL_MAX = 56          # characters of a message label drawn on its arrow (fewer where the lane gap is narrower)
TRIGGER_MAX = 40        # characters of a trigger drawn beside its step (likewise)
FONT = 8.0              # points, at full row height
TITLE_FONT = 9.0

SVG_FONTS = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Geneva, sans-serif"

INK = "#222222"
LANE_INK = "#9aa3ad"
MSG_INK = "#1f4e89"
FAULT_INK = "#c62828"
FAULT_FILL = "#fde7e7"
BOX_FILL = "#eef3fa"
GREY = "#777777"
LAST_BAND = "#ffe0b2"
HIGHLIGHT_BAND = "#fff6bf"


# ---- geometry ---------------------------------------------------------------------------------
def row_height(n_steps: int) -> float:
    """Inches per row: `ROW` up to `SCALE_AFTER` steps, then shrinking (see the module doc)."""
    row = ROW if n_steps <= SCALE_AFTER else max(ROW * SCALE_AFTER / n_steps, MIN_ROW)
    return min(row, MAX_ROWS_IN / (n_steps + 2))


def _foot(n_steps: int) -> float:
    return FOOT + (TITLES_H if n_steps > REPEAT_TITLES_AFTER else 0.0)


def chart_height_in(n_steps: int) -> float:
    return HEAD + (n_steps + 2) * row_height(n_steps) + _foot(n_steps)


def chart_height_px(n_steps: int) -> int:
    """The PNG's height in pixels for a story of `n_steps` steps."""
    return int(round(chart_height_in(n_steps) * DPI))


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _fit(text: str, n: int, width: float, size: float) -> str:
    """`text` cut with "…" to at most `n` characters and `width` inches at `size` points."""
    text = _clip(text, n)
    while len(text) > 8 and _text_w(text, size) > width:
        keep = min(len(text) - 2, int(len(text) * width / _text_w(text, size)))
        text = text[:max(keep, 7)].rstrip() + "…"
    return text


@lru_cache(maxsize=65536)
def _text_w(text: str, size: float, bold: bool = False) -> float:
    """A string's drawn width in inches (the font's own metrics, no renderer needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path
    prop = FontProperties(family="DejaVu Sans", size=size, weight="bold" if bold else "normal")
    w, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    return w / 72.0


class _Box:
    """A rectangle centred at (cx, cy), w wide and h high, turned `ang` degrees (counter-clockwise
    as drawn; y runs down in the chart's inches)."""

    __slots__ = ("cx", "cy", "w", "h", "ang", "weight", "corners", "x0", "y0", "x1", "y1")

    def __init__(self, cx: float, cy: float, w: float, h: float, ang: float = 0.0, weight: float = 1.0):
        self.cx, self.cy, self.w, self.h, self.ang, self.weight = cx, cy, w, h, ang, weight
        r = math.radians(ang)
        ux, uy = math.cos(r), -math.sin(r)      # along the text
        vx, vy = math.sin(r), math.cos(r)       # across it (downwards when level)
        self.corners = [(cx + sx * ux * w / 2 + sy * vx * h / 2, cy + sx * uy * w / 2 + sy * vy * h / 2)
                        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        xs, ys = [c[0] for c in self.corners], [c[1] for c in self.corners]
        self.x0, self.x1, self.y0, self.y1 = min(xs), max(xs), min(ys), max(ys)

    @classmethod
    def span(cls, x0: float, y0: float, x1: float, y1: float, weight: float = 1.0) -> "_Box":
        """An upright rectangle; `weight`: how much covering it costs a label (a step box most)."""
        return cls((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0, 0.0, weight)

    def _axes(self):
        r = math.radians(self.ang)
        return ((math.cos(r), -math.sin(r)), (math.sin(r), math.cos(r)))

    def hits(self, o: "_Box") -> bool:
        if not (self.x0 < o.x1 and o.x0 < self.x1 and self.y0 < o.y1 and o.y0 < self.y1):
            return False
        for ax_, ay in self._axes() + o._axes():  # separating axis test
            p = [x * ax_ + y * ay for x, y in self.corners]
            q = [x * ax_ + y * ay for x, y in o.corners]
            if max(p) <= min(q) or max(q) <= min(p):
                return False
        return True


class _Obstacles:
    """Rectangles already drawn (step boxes, labels), bucketed by height for quick overlap tests."""

    def __init__(self, bucket: float):
        self.bucket = bucket
        self.cells: dict[int, list[_Box]] = {}

    def _keys(self, b: _Box):
        return range(int(b.y0 // self.bucket), int(b.y1 // self.bucket) + 1)

    def overlap(self, b: _Box) -> float:
        """How much of `b` drawn rectangles cover (their bounding boxes' overlap, where they meet)."""
        seen, area = set(), 0.0
        for k in self._keys(b):
            for o in self.cells.get(k, ()):
                if id(o) not in seen and b.hits(o):
                    seen.add(id(o))
                    area += o.weight * (min(b.x1, o.x1) - max(b.x0, o.x0)) * (min(b.y1, o.y1) - max(b.y0, o.y0))
        return area

    def add(self, b: _Box) -> None:
        for k in self._keys(b):
            self.cells.setdefault(k, []).append(b)


class _Layout:
    def __init__(self, story: Story, trace, highlight):
        self.story = story
        self.trace = trace
        n = len(story.steps)
        self.n = n
        self.row = row_height(n)
        self.scale = self.row / ROW
        self.fs = max(4.6, FONT * math.sqrt(min(1.0, self.scale)))
        # lanes: the story's, then one fallback lane per actor of the steps that have none
        self.lanes: list = list(story.lanes)
        self.titles: dict = {ln: story.title(ln) for ln in story.lanes}
        actors = {s.index: s.actor for s in getattr(trace, "steps", ())} if trace is not None else {}
        self.step_lane: dict[int, object] = {}
        for st in story.steps:
            ln = st.lane
            if ln is None:
                actor = actors.get(st.index) or "(no lane)"
                ln = ("fallback", actor)
                if ln not in self.titles:
                    self.lanes.append(ln)
                    self.titles[ln] = str(actor)
            self.step_lane[st.index] = ln
        self.col = {ln: k for k, ln in enumerate(self.lanes)}
        # box sizes: every step box is as wide as the longest row id
        ids = [_step_id(st) for st in story.steps] or ["x"]
        self.box_hw = max(_text_w(max(ids, key=len), self.fs, True), _text_w("MM-00", self.fs, True)) / 2 + 0.06 * max(self.scale, 0.5)
        self.box_hh = self.row * 0.32
        widest = max((_text_w(_clip(m.label, LABEL_MAX) + _suffix(m, k), FONT)
                      for m in story.messages for k in _kinds(m)), default=1.0)
        self.lane_w = min(LANE_MAX, max(LANE_MIN, widest + 2 * self.box_hw + 0.35))
        self.gap = self.lane_w - 2 * self.box_hw - 0.3  # room for a label between two lanes' boxes
        # a trigger written beside a step on the rightmost lane may need more than RIGHT
        last_lane = self.lanes[-1] if self.lanes else None
        over = max((_text_w(self.trigger(st), self.fs * 0.95) + 0.12 - (self.lane_w / 2 - self.box_hw)
                    for st in story.steps if self.step_lane[st.index] == last_lane and _shows_trigger(st)), default=0.0)
        self.right = max(RIGHT, over + 0.3)
        self.width = max(MIN_WIDTH, LEFT + max(1, len(self.lanes)) * self.lane_w + self.right)
        self.height = chart_height_in(n)
        self.highlight = set(highlight or ())
        self.last = story.steps[-1].index if story.steps else None

    def trigger(self, st: StoryStep) -> str:
        return _fit(st.label, TRIGGER_MAX, self.gap * 0.8, self.fs * 0.95)

    def label(self, m: Message, kind: str) -> str:
        """What an arrow of `m` says: its label, cut to fit a lane gap, and how it ended."""
        suffix = _suffix(m, kind)
        room = max(self.gap - _text_w(suffix, self.fs), 1.0)
        return _fit(m.label, LABEL_MAX, room, self.fs) + suffix

    def x(self, lane) -> float:
        return LEFT + (self.col[lane] + 0.5) * self.lane_w

    def y(self, k: int) -> float:
        """Row k's centre: row 0 the initial state, rows 1..n the steps, n+1 the in-flight row."""
        return HEAD + (k + 0.5) * self.row

    @property
    def rows_bottom(self) -> float:
        return HEAD + (self.n + 2) * self.row


def _step_id(st: StoryStep) -> str:
    return st.row or st.action or st.label or "?"


def _shows_trigger(st: StoryStep) -> bool:
    return bool(st.label) and (st.fault or not (st.sends or st.receives or st.drops)) and st.label != _step_id(st)


def _edge(cx: float, cy: float, hw: float, hh: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from a box's centre (cx, cy) towards (tx, ty) leaves the box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    t = min(t, 1.0)
    return cx + t * dx, cy + t * dy


# ---- drawing ------------------------------------------------------------------------------------
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
    import matplotlib
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lay = _Layout(story, trace, highlight)
    rc = {"svg.hashsalt": "txncheck-sequence-chart", "svg.fonttype": "none", "font.family": "DejaVu Sans",
          "svg.image_inline": True, "path.simplify": False, "text.usetex": False,
          "text.parse_math": False, "figure.dpi": DPI, "savefig.dpi": DPI}
    with matplotlib.style.context("default"), matplotlib.rc_context(rc):
        # the figure is W x H inches and its one axes spans it with data units = inches (y down)
        fig = Figure(figsize=(lay.width, (chart_height_px(lay.n) + 0.01) / DPI), dpi=DPI)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(0, lay.width)
        ax.set_ylim(fig.get_figheight(), 0)
        titles: dict[str, str] = {}
        legend = _draw(ax, lay, titles)
        _draw_header(ax, lay)
        _draw_legend(ax, lay, legend)
        buf = io.BytesIO()
        if fmt == "svg":
            meta = {"Date": None, "Creator": "txncheck", "Title": _title_text(trace)}
            fig.savefig(buf, format="svg", metadata=meta)
            return _svg_tooltips(buf.getvalue(), titles)
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None, "Title": _title_text(trace)})
        return buf.getvalue()


def _title_text(trace) -> str:
    if trace is None:
        return "sequence chart"
    prop = (trace.property or {}).get("name", "?")
    return f"txncheck {trace.spec} {prop}: {trace.kind}"


def _draw_header(ax, lay: _Layout) -> None:
    trace = lay.trace
    if trace is not None:
        cfg = (trace.config or {}).get("name", "?")
        bits = [str(trace.spec), f"config {cfg}"]
        if trace.variant:
            bits.append(f"variant {trace.variant}")
        ax.text(LEFT * 0.4, 0.32, " · ".join(bits), fontsize=11.5, fontweight="bold", color=INK, va="baseline")
        prop = trace.property or {}
        verdict = {"violation": "violated", "witness": "witnessed", "deadlock": "deadlock",
                   "unrecoverable": "unrecoverable", "cti": "counterexample to induction"}.get(trace.kind, trace.kind)
        n = lay.n
        line = (f"property {prop.get('name', '?')} ({prop.get('kind', '?')}) · verdict: {trace.kind}"
                f" ({verdict} after {n} step{'s' if n != 1 else ''})")
        ax.text(LEFT * 0.4, 0.58, line, fontsize=9.5, color=INK, va="baseline")
        doc = " ".join(str(prop.get("doc") or "").split())
        if doc:
            room = lay.width - LEFT * 0.4 - 0.2
            while len(doc) > 8 and _text_w(doc, 9) > room:
                doc = doc[:int(len(doc) * room / _text_w(doc, 9)) - 1].rstrip() + "…"
            ax.text(LEFT * 0.4, 0.80, doc, fontsize=9, color="#444444", style="italic", va="baseline")
    _lane_titles(ax, lay, HEAD - 0.22)


def _lane_titles(ax, lay: _Layout, y: float) -> None:
    for ln in lay.lanes:
        fallback = isinstance(ln, tuple)
        ax.text(lay.x(ln), y, _clip(lay.titles[ln], 28), fontsize=TITLE_FONT, fontweight="bold",
                fontstyle="italic" if fallback else "normal", ha="center", va="center", color=INK, zorder=6,
                bbox=dict(boxstyle="round,pad=0.35", fc="#e3e8ef" if not fallback else "#f2f2f2",
                          ec=LANE_INK, lw=0.8))


def _draw(ax, lay: _Layout, titles: dict) -> set:
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import FancyArrowPatch

    story, n, row, fs = lay.story, lay.n, lay.row, lay.fs
    used: set[str] = set()
    obstacles = _Obstacles(max(row, 0.05) * 4)
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
    if any(_in_flight(m) for m in story.messages):
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
        obstacles.add(_Box.span(x - hw, y - hh, x + hw, y + hh, weight=20.0))
        t = ax.text(x, y, _step_id(st), fontsize=fs, ha="center", va="center", zorder=7,
                    color=FAULT_INK if st.fault else INK, fontweight="bold" if emph or st.fault else "normal")
        gid = f"step-{k}"
        t.set_gid(gid)
        titles[gid] = f"step {k}: {st.action} — {st.label}" + (f" [{', '.join(st.tags)}]" if st.tags else "")
        if st.fault:
            used.add("fault")
            ax.text(x - hw - 0.04, y, "⚡", fontsize=fs * 1.25, ha="right", va="center", color=FAULT_INK, zorder=5)
            obstacles.add(_Box.span(x - hw - 0.04 - fs * 1.25 / 72, y - hh, x - hw, y + hh, weight=10.0))
        if _shows_trigger(st):
            label = lay.trigger(st)
            tw = _text_w(label, fs * 0.95)
            ax.text(x + hw + 0.06, y, label, fontsize=fs * 0.95, ha="left", va="center", zorder=4,
                    color=FAULT_INK if st.fault else "#444444", style="italic",
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
            obstacles.add(_Box.span(x + hw + 0.04, y - hh, x + hw + 0.1 + tw, y + hh))
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
        if _in_flight(m):
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
                obstacles.add(_Box.span(b[0] - 0.08, b[1] - 0.08, b[0] + 0.08, b[1] + 0.08, weight=10.0))
            if kind in labelled:
                continue  # a broadcast: its label once, on its first arrow
            labelled.add(kind)
            text = lay.label(m, kind)
            titles[gid] = f"message {m.id}: {m.label}{_suffix(m, kind)}"
            labels.append((abs(b[0] - a[0]) if not same else 0.0, len(labels),
                           (a, b, same, text, gid, GREY if kind == "superseded" else MSG_INK)))
    # the labels of short arrows first: they have the fewest places to go
    for _, _, args in sorted(labels, key=lambda x: x[:2]):
        _place_label(ax, lay, obstacles, *args)
    return used


def _rect(x, y, w, h, colour, zorder):
    from matplotlib.patches import Rectangle
    return Rectangle((x, y), w, h, facecolor=colour, edgecolor="none", zorder=zorder)


def _suffix(m: Message, kind: str) -> str:
    """How an arrow of `m` ended, after its label."""
    suffix = {"dropped": " ✗ lost", "inflight": " (in flight)", "superseded": " (overwritten)"}.get(kind, "")
    return (" (duplicate)" if m.duplicate else "") + suffix


def _kinds(m: Message) -> list[str]:
    """How the arrows of `m` end."""
    kinds = ["delivered"] if m.delivered else []
    if m.dropped is not None:
        kinds.append("dropped")
    if m.superseded is not None and not m.delivered and m.dropped is None:
        kinds.append("superseded")
    if _in_flight(m):
        kinds.append("inflight")
    return kinds


def _in_flight(m: Message) -> bool:
    return not m.delivered and m.dropped is None and m.superseded is None


def _source(lay: _Layout, m: Message):
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


def _target_x(lay: _Layout, m: Message, where, sx: float) -> float:
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


def _place_label(ax, lay: _Layout, obstacles: _Obstacles, a, b, same: bool, text: str, gid: str, colour) -> None:
    """Put an arrow's label on the arrow (rotated with it, above the line, else below) in the first
    free spot: the middle of the lane gap nearest the sender first, then further along; where no
    spot is free, the one overlapping least."""
    fs = lay.fs
    tw = _text_w(text, fs) + 0.04
    th = fs * 1.3 / 72
    (ax_, ay), (bx, by) = a, b
    cands = []
    if same:
        mx = max(ax_, bx) + 16 * max(lay.scale, 0.5) / 72 + 0.06
        for dy in (0.0, -0.5, 0.5, -1.0, 1.0):
            cands.append((mx, (ay + by) / 2 + dy * lay.row, 0.0, "left", "center"))
    else:
        dx, dy = bx - ax_, by - ay
        lo, hi = min(ax_, bx), max(ax_, bx)
        gaps = sorted((g for g in (LEFT + (c + 1) * lay.lane_w for c in range(len(lay.lanes) - 1)) if lo < g < hi),
                      key=lambda g: abs(g - ax_))
        firsts = [(g - ax_) / dx for g in gaps] if dx else []
        if not firsts:
            firsts = [0.5]
        ts = []
        for t0 in firsts:
            ts += [t0] + [t0 + sgn * 0.07 * i for i in range(1, 7) for sgn in (1, -1)]
        ts = [t for t in ts if 0.06 <= t <= 0.94] or [0.5]
        ang = math.degrees(math.atan2(-dy, dx))
        if ang > 90:
            ang -= 180
        elif ang < -90:
            ang += 180
        for t in ts:
            for va in ("bottom", "top"):
                cands.append((ax_ + t * dx, ay + t * dy, ang, "center", va))
    best, best_cost = None, math.inf
    for cx, cy, ang, ha, va in cands:
        r = math.radians(ang)
        # the label's centre: offset perpendicular to the arrow (above it for va=bottom, below for top)
        off = {"bottom": th * 0.55, "top": -th * 0.55, "center": 0.0}[va]
        mx, my = cx - math.sin(r) * off, cy - math.cos(r) * off
        if ha == "left":
            mx += tw / 2
        box = _Box(mx, my, tw, th, ang)
        cost = obstacles.overlap(box)
        if cost < best_cost:
            best, best_cost = (cx, cy, ang, ha, va, box), cost
            if cost == 0:
                break
    if best is None:
        return
    cx, cy, ang, ha, va, box = best
    if va in ("bottom", "top"):  # clear of the line by a point and a half
        r, d = math.radians(ang), 1.5 / 72 * (1 if va == "bottom" else -1)
        cx, cy = cx - math.sin(r) * d, cy - math.cos(r) * d
    box.weight = 3.0
    obstacles.add(box)
    t = ax.text(cx, cy, text, fontsize=fs, color=colour, ha=ha, va=va, rotation=ang,
                rotation_mode="anchor", zorder=5,
                bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85))
    t.set_gid(gid)


def _draw_legend(ax, lay: _Layout, used: set) -> None:
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
        x += 0.52 + _text_w(label, 8) + 0.3
    if "fault" in used:
        ax.text(x, y, "⚡ fault step", fontsize=8, va="center", color=FAULT_INK)
        x += _text_w("⚡ fault step", 8) + 0.3
    if lay.last is not None:
        ax.add_patch(_rect(x, y - 0.08, 0.3, 0.16, LAST_BAND, zorder=1))
        ax.text(x + 0.38, y, "last step", fontsize=8, va="center", color=INK)
        x += 0.38 + _text_w("last step", 8) + 0.3
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
    # text stays text (searchable, crisp): where the viewer lacks DejaVu Sans, a font of like widths
    text = text.replace("font-family: 'DejaVu Sans'", f"font-family: {SVG_FONTS}")
    return text.encode("utf-8")


# ---- writing ----------------------------------------------------------------------------------
