"""Where the label of a message's arrow goes on a sequence chart (`place_label`): on the arrow,
turned with it, in the spot that the marks already drawn (`Obstacles`: step boxes, crosses,
triggers, other labels) cover least.
"""
from __future__ import annotations

import math

from .mpl_figure import text_width
from .sequence_layout import LEFT, SequenceLayout


class Box:
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
    def span(cls, x0: float, y0: float, x1: float, y1: float, weight: float = 1.0) -> "Box":
        """An upright rectangle; `weight`: how much covering it costs a label (a step box most)."""
        return cls((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0, 0.0, weight)

    def _axes(self):
        r = math.radians(self.ang)
        return ((math.cos(r), -math.sin(r)), (math.sin(r), math.cos(r)))

    def hits(self, o: "Box") -> bool:
        if not (self.x0 < o.x1 and o.x0 < self.x1 and self.y0 < o.y1 and o.y0 < self.y1):
            return False
        for ax_, ay in self._axes() + o._axes():  # separating axis test
            p = [x * ax_ + y * ay for x, y in self.corners]
            q = [x * ax_ + y * ay for x, y in o.corners]
            if max(p) <= min(q) or max(q) <= min(p):
                return False
        return True


class Obstacles:
    """Rectangles already drawn (step boxes, labels), bucketed by height for quick overlap tests."""

    def __init__(self, bucket: float):
        self.bucket = bucket
        self.cells: dict[int, list[Box]] = {}

    def _keys(self, b: Box):
        return range(int(b.y0 // self.bucket), int(b.y1 // self.bucket) + 1)

    def overlap(self, b: Box) -> float:
        """How much of `b` drawn rectangles cover (their bounding boxes' overlap, where they meet)."""
        seen, area = set(), 0.0
        for k in self._keys(b):
            for o in self.cells.get(k, ()):
                if id(o) not in seen and b.hits(o):
                    seen.add(id(o))
                    area += o.weight * (min(b.x1, o.x1) - max(b.x0, o.x0)) * (min(b.y1, o.y1) - max(b.y0, o.y0))
        return area

    def add(self, b: Box) -> None:
        for k in self._keys(b):
            self.cells.setdefault(k, []).append(b)


def place_label(ax, lay: SequenceLayout, obstacles: Obstacles, a, b, same: bool, text: str, gid: str, colour) -> None:
    """Put an arrow's label on the arrow (rotated with it, above the line, else below) in the first
    free spot: the middle of the lane gap nearest the sender first, then further along; where no
    spot is free, the one overlapping least."""
    fs = lay.fs
    tw = text_width(text, fs) + 0.04
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
        box = Box(mx, my, tw, th, ang)
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
