"""The sequence chart of a trace as inline SVG, for the viewer page.

Lanes are columns (their titles are drawn by the page, in a header that stays in view); time runs
down, one row per step. Every element a test or a script needs to find carries a class and data
attributes: `g.step[data-step]`, `g.msg[data-msg][data-from][data-to]`, `line.lane[data-lane]`.
The page's script only toggles classes; the drawing is done here, so it is the same in every
browser and deterministic.
"""
from __future__ import annotations

from html import escape

from txncheck.traces.story import Message, Story

LANE_W = 176
LEFT = 56          # the step-number gutter
ROW_H = 30
TOP = 8
BOX_H = 20
LABEL_MAX = 34     # characters of a message label drawn on its arrow (the full label is its tooltip)
CHAR_W = 6.2       # the mean width of a label character at the label's font size, in pixels


def lane_x(story: Story, lane) -> float:
    return LEFT + (story.lanes.index(lane) + 0.5) * LANE_W


def step_y(k: int) -> float:
    return TOP + (k + 0.5) * ROW_H


RIGHT = 190        # room for the labels of arrows that leave the rightmost lanes


def width(story: Story) -> int:
    return LEFT + max(1, len(story.lanes)) * LANE_W + RIGHT


def height(story: Story) -> int:
    return int(TOP + (len(story.steps) + 2) * ROW_H)


def _clip(text: str, n: int = LABEL_MAX) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _a(text) -> str:
    return escape(str(text), quote=True)


def lane_key(lane) -> str:
    return f"{lane.kind}:{'' if lane.index is None else lane.index}"


def render_chart(story: Story, highlight: set[int], last: int, start: str = "initial state") -> str:
    w, h = width(story), height(story)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" role="img" aria-label="sequence chart">',
           '<defs>'
           '<marker id="ah" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
           '<path d="M0,0 L10,5 L0,10 z" class="ah"/></marker>'
           '<marker id="ah-open" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
           'orient="auto"><path d="M0,0 L10,5 L0,10" fill="none" class="ah-open"/></marker>'
           '</defs>']
    # step rows (click targets), step 0 first
    out.append('<g class="rows">')
    out.append(f'<g class="step init" data-step="0" id="row-0"><rect class="hit" x="0" y="{TOP}" width="{w}" '
               f'height="{ROW_H}"/><text class="num" x="{LEFT - 8}" y="{step_y(0) + 4}">0</text>'
               f'<text class="initlabel" x="{LEFT + 6}" y="{step_y(0) + 4}">{_a(start)}</text></g>')
    for st in story.steps:
        y0 = TOP + st.index * ROW_H
        out.append(f'<g class="step" data-step="{st.index}" id="row-{st.index}"><rect class="hit" x="0" y="{y0}" '
                   f'width="{w}" height="{ROW_H}"/><text class="num" x="{LEFT - 8}" y="{step_y(st.index) + 4}">'
                   f'{st.index}</text></g>')
    out.append('</g>')
    # lane lines
    out.append('<g class="lanes">')
    for ln in story.lanes:
        x = lane_x(story, ln)
        out.append(f'<line class="lane" data-lane="{_a(lane_key(ln))}" x1="{x}" y1="{TOP}" x2="{x}" y2="{h - 4}"/>')
    out.append('</g>')
    # messages under the event boxes
    out.append('<g class="msgs">')
    sends_at: dict[int, int] = {}
    for m in story.messages:
        out.extend(_message(story, m, len(story.steps), sends_at))
    out.append('</g>')
    # a step that sends on another lane's behalf (two hops in one step: the log's append becomes
    # durable and the coordinator's callback answers) is tied to that lane by a dotted line
    msgs = {m.id: m for m in story.messages}
    out.append('<g class="hops">')
    for st in story.steps:
        if st.lane is None or st.lane not in story.lanes:
            continue
        for src in sorted({msgs[i].source for i in st.sends if msgs[i].source not in (None, st.lane)
                           and msgs[i].source in story.lanes}, key=lambda ln: story.lanes.index(ln)):
            x, sx, y = lane_x(story, st.lane), lane_x(story, src), step_y(st.index)
            out.append(f'<g class="hop" data-step="{st.index}"><line x1="{x}" y1="{y}" x2="{sx}" y2="{y}"/>'
                       f'<circle cx="{sx}" cy="{y}" r="3"/></g>')
    out.append('</g>')
    # events
    out.append('<g class="events">')
    for st in story.steps:
        if st.lane is None or st.lane not in story.lanes:
            continue
        x, y = lane_x(story, st.lane), step_y(st.index)
        cls = ["event"]
        if st.fault:
            cls.append("fault")
        if st.zombie:
            cls.append("zombie")
        if st.index in highlight:
            cls.append("key")
        if st.index == last:
            cls.append("last")
        text = f"{'⚡ ' if st.fault else ''}{'☠ ' if st.zombie else ''}{st.row} {st.label}"
        bw = LANE_W - 14
        out.append(f'<g class="{" ".join(cls)}" data-step="{st.index}"><title>{_a(st.action)}: {_a(st.label)}</title>'
                   f'<rect x="{x - bw / 2}" y="{y - BOX_H / 2}" width="{bw}" height="{BOX_H}" rx="4"/>'
                   f'<text x="{x}" y="{y + 4}">{_a(_clip(text, 26))}</text></g>')
    out.append('</g></svg>')
    return "".join(out)


def _message(story: Story, m: Message, n_steps: int, sends_at: dict) -> list[str]:
    if m.source is None or m.source not in story.lanes:
        return []
    # every arrow leaves the box of the step that sent it; where that step acts for another lane
    # (a hop), the dotted line to that lane says so; a message already in flight in step 0 (a
    # counterexample to induction starts anywhere) leaves its sender's lane at step 0
    sent = m.sent or 0
    at = story.steps[sent - 1].lane if 0 < sent <= len(story.steps) else None
    x1, y1 = lane_x(story, at if at in story.lanes else m.source), step_y(sent)
    slot = sends_at.get(sent, 0)
    sends_at[sent] = slot + 1
    cls = "msg" + (" dup" if m.duplicate else "")
    ends = []  # (x2, y2, kind)
    for k, lane in m.delivered:
        if lane in story.lanes:
            ends.append((lane_x(story, lane), step_y(k), "delivered"))
    if m.dropped is not None:
        tx = lane_x(story, m.target) if m.target in story.lanes else x1 + LANE_W / 2
        ends.append(((x1 + tx) / 2, step_y(m.dropped[0]), "dropped"))
        cls += " lost"
    if m.superseded is not None:
        tx = lane_x(story, m.target) if m.target in story.lanes else x1 + LANE_W / 2
        ends.append(((x1 + tx) / 2, step_y(m.superseded), "superseded"))
        cls += " superseded"
    if not ends and m.persistent:  # sent to the set of messages; no row of this trace reads it
        tx = lane_x(story, m.target) if m.target in story.lanes else x1 + LANE_W
        ends.append((x1 + (1 if tx >= x1 else -1) * (LANE_W / 2 + 30), y1, "posted"))
        cls += " posted"
    elif not ends:
        tx = lane_x(story, m.target) if m.target in story.lanes else x1 + LANE_W / 2
        ends.append((tx, step_y(n_steps + 1) - 6, "inflight"))
        cls += " inflight"
    to = ",".join(f"{k}" for k, _ in m.delivered)
    parts = [f'<g class="{cls}" data-msg="{m.id}" data-sent="{sent}" data-to="{_a(to)}" '
             f'data-from="{_a(lane_key(m.source))}"><title>{_a(m.label)}</title>']
    for x2, y2, kind in ends:
        dash = ' stroke-dasharray="5 3"' if m.duplicate or kind == "inflight" else ""
        if abs(x2 - x1) < 1:  # to its own lane: a small loop
            parts.append(f'<path d="M{x1},{y1} C{x1 + 60},{y1} {x2 + 60},{y2} {x2 + 6},{y2}" fill="none"{dash} '
                         f'marker-end="url(#ah)"/>')
            continue
        direction = 1 if x2 > x1 else -1
        half = (LANE_W - 14) / 2
        sx = x1 + direction * half if sent else x1  # from the side of the sender's box (step 0 has none)
        ex = x2 - direction * half if kind == "delivered" else x2  # to the side of the receiver's box
        marker = {"delivered": ' marker-end="url(#ah)"', "inflight": ' marker-end="url(#ah-open)"',
                  "posted": ' marker-end="url(#ah-open)"'}.get(kind, "")
        parts.append(f'<line x1="{sx}" y1="{y1}" x2="{ex}" y2="{y2}"{dash}{marker}/>')
        if kind in ("dropped", "superseded"):
            parts.append(f'<text class="x" x="{x2}" y="{y2 + 5}">✗</text>')
        if kind == "inflight":
            parts.append(f'<text class="note" x="{x2 + 4}" y="{y2 - 4}">(in flight)</text>')
    x2 = ends[0][0]
    direction = 1 if x2 >= x1 else -1
    lx = x1 + direction * ((LANE_W - 14) / 2 + 4)
    anchor = "start" if direction > 0 else "end"
    ly = y1 - 4 - 11 * slot
    label = _clip(m.label) + (" (dup)" if m.duplicate else "")
    if anchor == "end" and lx - CHAR_W * len(label) < LEFT + 2:  # would run over the step numbers
        label = _clip(label, max(10, int((lx - LEFT - 2) / CHAR_W)))
    parts.append(f'<text class="mlabel" x="{lx}" y="{ly}" text-anchor="{anchor}">{_a(label)}</text></g>')
    return parts
