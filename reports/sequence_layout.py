"""Where a sequence chart's lanes, rows and step boxes go (`SequenceLayout`), its size, and
how its texts are cut to fit. Lengths are in inches, y runs down.

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
"""
from __future__ import annotations

import math

from txncheck.traces.story import Message, Story, StoryStep

from .mpl_figure import DPI, text_width

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


def clip(text: str, n: int) -> str:
    """`text` cut with "…" to at most `n` characters."""
    return text if len(text) <= n else text[:n - 1] + "…"


def fit(text: str, n: int, width: float, size: float) -> str:
    """`text` cut with "…" to at most `n` characters and `width` inches at `size` points."""
    text = clip(text, n)
    while len(text) > 8 and text_width(text, size) > width:
        keep = min(len(text) - 2, int(len(text) * width / text_width(text, size)))
        text = text[:max(keep, 7)].rstrip() + "…"
    return text


class SequenceLayout:
    """The chart's lanes (the story's, then one per actor of the steps without a lane), its row
    height and font size, the step boxes' half sizes, the lane width and the chart's size."""

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
        ids = [step_id(st) for st in story.steps] or ["x"]
        widest_id = max(text_width(max(ids, key=len), self.fs, weight="bold"),
                        text_width("MM-00", self.fs, weight="bold"))
        self.box_hw = widest_id / 2 + 0.06 * max(self.scale, 0.5)
        self.box_hh = self.row * 0.32
        widest = max((text_width(clip(m.label, LABEL_MAX) + arrow_suffix(m, k), FONT)
                      for m in story.messages for k in arrow_kinds(m)), default=1.0)
        self.lane_w = min(LANE_MAX, max(LANE_MIN, widest + 2 * self.box_hw + 0.35))
        self.gap = self.lane_w - 2 * self.box_hw - 0.3  # room for a label between two lanes' boxes
        # a trigger written beside a step on the rightmost lane may need more than RIGHT
        last_lane = self.lanes[-1] if self.lanes else None
        over = max((text_width(self.trigger(st), self.fs * 0.95) + 0.12 - (self.lane_w / 2 - self.box_hw)
                    for st in story.steps if self.step_lane[st.index] == last_lane and shows_trigger(st)), default=0.0)
        self.right = max(RIGHT, over + 0.3)
        self.width = max(MIN_WIDTH, LEFT + max(1, len(self.lanes)) * self.lane_w + self.right)
        self.height = chart_height_in(n)
        self.highlight = set(highlight or ())
        self.last = story.steps[-1].index if story.steps else None

    def trigger(self, st: StoryStep) -> str:
        return fit(st.label, TRIGGER_MAX, self.gap * 0.8, self.fs * 0.95)

    def label(self, m: Message, kind: str) -> str:
        """What an arrow of `m` says: its label, cut to fit a lane gap, and how it ended."""
        suffix = arrow_suffix(m, kind)
        room = max(self.gap - text_width(suffix, self.fs), 1.0)
        return fit(m.label, LABEL_MAX, room, self.fs) + suffix

    def x(self, lane) -> float:
        return LEFT + (self.col[lane] + 0.5) * self.lane_w

    def y(self, k: int) -> float:
        """Row k's centre: row 0 the initial state, rows 1..n the steps, n+1 the in-flight row."""
        return HEAD + (k + 0.5) * self.row

    @property
    def rows_bottom(self) -> float:
        return HEAD + (self.n + 2) * self.row


def step_id(st: StoryStep) -> str:
    return st.row or st.action or st.label or "?"


def shows_trigger(st: StoryStep) -> bool:
    return bool(st.label) and (st.fault or not (st.sends or st.receives or st.drops)) and st.label != step_id(st)


def arrow_suffix(m: Message, kind: str) -> str:
    """How an arrow of `m` ended, after its label."""
    suffix = {"dropped": " ✗ lost", "inflight": " (in flight)", "superseded": " (overwritten)"}.get(kind, "")
    return (" (duplicate)" if m.duplicate else "") + suffix


def arrow_kinds(m: Message) -> list[str]:
    """How the arrows of `m` end."""
    kinds = ["delivered"] if m.delivered else []
    if m.dropped is not None:
        kinds.append("dropped")
    if m.superseded is not None and not m.delivered and m.dropped is None:
        kinds.append("superseded")
    if in_flight(m):
        kinds.append("inflight")
    return kinds


def in_flight(m: Message) -> bool:
    return not m.delivered and m.dropped is None and m.superseded is None
