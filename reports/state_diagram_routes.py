"""The path each arrow of a state diagram follows (`edge_geometry`), as a polyline in the
layout's inches (y down), and points along it (`along`, where the drawing tries its labels).

Arrows between neighbouring rows are straight (a pair of opposite arrows bends apart); a back edge,
or one that skips rows and would cross a box, runs in a lane outside the boxes on the nearer side,
shorter lanes inside longer ones. Self-loops are small loops beside their box, on the side with
fewer lanes. An "any state" arrow runs from its pseudo-node's copy straight to its target.
"""
from __future__ import annotations

import math

from .state_diagram_layout import BOX_H, LOOP_W, Box, Edge, Layout

LANE_GAP = 0.28          # distance between two side lanes (and from the boxes to the first)
CORNER = 0.10            # radius of a lane's corners


def _quad(p0, c, p2, n: int = 32) -> list[tuple[float, float]]:
    """n + 1 points of the quadratic Bézier curve from p0 to p2 with control point c."""
    out = []
    for k in range(n + 1):
        t = k / n
        u = 1 - t
        out.append((u * u * p0[0] + 2 * u * t * c[0] + t * t * p2[0], u * u * p0[1] + 2 * u * t * c[1] + t * t * p2[1]))
    return out


def _inside(p, b: Box, pad: float = 0.0) -> bool:
    return b.x0 - pad <= p[0] <= b.x1 + pad and b.y0 - pad <= p[1] <= b.y1 + pad


def _crossing(p_in, p_out, b: Box):
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        q = (p_in[0] + (p_out[0] - p_in[0]) * mid, p_in[1] + (p_out[1] - p_in[1]) * mid)
        if _inside(q, b):
            lo = mid
        else:
            hi = mid
    return (p_in[0] + (p_out[0] - p_in[0]) * hi, p_in[1] + (p_out[1] - p_in[1]) * hi)


def _clip(pts: list, a: Box, b: Box, gap: float = 0.02) -> list:
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


def _segment_hits(p, q, b: Box, pad: float = 0.06) -> bool:
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


def edge_geometry(lay: Layout, edges: list[Edge], kinds: dict) -> dict:
    """Per (from, to): the polyline its arrow follows (data inches, y down) and its kind."""
    geo: dict[tuple[str, str], dict] = {}
    pair_set = {(e.a, e.b) for e in edges}
    boxes = {s: lay.box(s) for s in lay.pos}
    placed = [s for s in lay.pos if s not in lay.isolated]
    xs = [lay.pos[s][0] for s in placed]
    centre = (min(xs) + max(xs)) / 2 if xs else 0.0
    lanes: list[Edge] = []
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


def along(pts: list, f: float) -> tuple[float, float]:
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
