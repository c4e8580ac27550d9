"""The story of a trace: which actor instance each step happens on, and the messages between them.

Built from the spec's lanes and channels (spec/sequence.py) evaluated on the trace's states: a
channel cell whose copy count rises sends a message (a duplicate if a copy was already in
flight), one whose count falls delivers it where the step happens on the message's receiver and
drops it anywhere else (a lost request, a crash). Messages of one cell are matched first in,
first out, so a message sent at step 3 and delivered at step 17 is one long arrow. The viewer draws
this; the text trace prints it as one line per step.
"""
from __future__ import annotations

import itertools
from collections import defaultdict, deque
from dataclasses import dataclass, field

from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.grounder import Grounder
from txncheck.spec.ground_ir import GroundAction, GroundModel
from txncheck.spec.sequence import At, Channel
from txncheck.spec.state_text import value_label

from .schema import Trace, TraceError

FAULT_TAGS = ("crash", "zombie", "timeout", "network")


@dataclass(frozen=True)
class LaneId:
    kind: str
    index: int | None  # None: an unindexed lane

    def sort_key(self, order: dict) -> tuple:
        return (order.get(self.kind, len(order)), self.kind, -1 if self.index is None else self.index)


@dataclass
class Message:
    id: int
    channel: str
    label: str
    source: LaneId | None
    target: LaneId | None          # None: every lane of `target_kind` (a broadcast)
    target_kind: str
    sent: int | None               # the step that sent it (None: in flight in step 0)
    duplicate: bool = False
    delivered: list = field(default_factory=list)  # [(step, LaneId)]
    dropped: tuple | None = None   # (step, LaneId) of the step that lost it
    superseded: int | None = None  # the step that overwrote it while in flight
    persistent: bool = False       # of a persistent channel: it stays after delivery (a TLA+ msgs set)


@dataclass
class StoryStep:
    index: int
    lane: LaneId | None
    row: str | None
    label: str          # the row's trigger
    action: str         # the ground action, e.g. RM-02(rm=r3)
    tags: tuple[str, ...]
    zombie: bool = False  # the step's actor instance has been replaced (its lane's `stale` holds)
    sends: list = field(default_factory=list)      # message ids
    receives: list = field(default_factory=list)
    drops: list = field(default_factory=list)

    @property
    def fault(self) -> bool:
        return any(t in FAULT_TAGS for t in self.tags)


@dataclass
class Story:
    lanes: list[LaneId]
    lane_titles: dict
    steps: list[StoryStep]
    messages: list[Message]

    def title(self, lane: LaneId | None) -> str:
        return "" if lane is None else self.lane_titles[lane]


# ---- walking the trace ----------------------------------------------------------------------
def find_action(model: GroundModel, step) -> GroundAction | None:
    """The ground action a trace step names (its row and parameter labels)."""
    for a in model.actions:
        if a.row.id != step.row:
            continue
        labels = {p.name: str(p.domain.label(v, model.env)) for p in a.row.params for n, v in a.params if n == p.name}
        if all(str(step.params.get(k)) == v for k, v in labels.items()) and len(labels) == len(step.params):
            return a
    return None


def walk(model: GroundModel, trace: Trace) -> tuple[list[GroundAction], list[tuple[int, ...]]]:
    """The actions and states of a trace (step 0's state as written, for a counterexample to
    induction; the initial state otherwise). Raises TraceError where a step is no action of the
    model or is not enabled (`txncheck replay` says more)."""
    if trace.kind == "cti" or len(model.initial_states) > 1:  # which initial state: the one step 0 writes
        s = model.parse_state(trace.steps[0].state)
    else:
        s = tuple(model.init)
    actions, states = [], [s]
    for step in trace.steps[1:]:
        a = find_action(model, step)
        if a is None or not evaluate(a.guard, s, a.row_id):
            raise TraceError(f"steps[{step.index}]: {step.label} is not a step of spec {model.spec.name} here; "
                             f"`txncheck replay` shows where the trace and the spec part")
        s = successor(model, a, s)
        actions.append(a)
        states.append(s)
    return actions, states


# ---- grounding the chart data -----------------------------------------------------------------
class _Places:
    def __init__(self, model: GroundModel):
        self.model = model
        self.gr = Grounder(model.spec, model.config)
        self.lanes = {ln.name: ln for ln in model.spec.lanes}
        kinds = [ln.name for ln in model.spec.lanes]
        kinds += [t.actor for t in model.spec.tables if t.actor not in kinds]  # fallback lanes, in table order
        kinds += [r.actor for r in model.spec.rows if r.actor not in kinds]
        self.order = {k: n for n, k in enumerate(kinds)}
        self._cache: dict = {}

    def ground(self, e, b: dict):
        key = (id(e), tuple(sorted(b.items())))
        g = self._cache.get(key)
        if g is None:
            g = self._cache[key] = (e, self.gr.g(e, b, None))
        return g[1]

    def value(self, e, b: dict, s) -> int:
        return evaluate(self.ground(e, b), s)

    def lane(self, at: At | None, b: dict, s) -> LaneId | None:
        if at is None or at.lane not in self.lanes:
            return None
        if at.index is None or isinstance(at.index, str):
            return LaneId(at.lane, None)
        return LaneId(at.lane, self.value(at.index, b, s))

    def label(self, e, b: dict, s, domain=None) -> str:
        v = self.value(e, b, s)
        dom = domain or getattr(e, "domain", None) or getattr(getattr(e, "var", None), "domain", None)
        return str(value_label(dom, v, self.model.env)) if dom is not None else str(v)

    def stale(self, lane: LaneId, s) -> bool:
        ln = self.lanes.get(lane.kind)
        if ln is None or ln.stale is None or lane.index is None:
            return False
        return bool(self.value(ln.stale, {ln.param.name: lane.index} if ln.param is not None else {}, s))

    def title(self, lane: LaneId) -> str:
        ln = self.lanes.get(lane.kind)
        if ln is None:
            return lane.kind
        if lane.index is None or ln.index is None:
            return ln.name
        b = {ln.param.name: lane.index} if ln.param is not None else {}
        for cond, title in ln.titles:
            if self.value(cond, b, self.model.init):
                return title
        return f"{ln.name} {ln.index.label(lane.index, self.model.env)}"


def _instances(model: GroundModel, ch: Channel):
    names = [p.name for p in ch.params]
    for combo in itertools.product(*(p.domain.values(model.env) for p in ch.params)):
        yield dict(zip(names, combo))


def _message_label(pl: _Places, ch: Channel, b: dict, s) -> str:
    name = next((n for c, n in ch.names if pl.value(c, b, s)), ch.name)
    fields = [f"{f.name} {pl.label(f.value, b, s, f.domain)}".strip() for f in ch.fields
              if f.when is None or pl.value(f.when, b, s)]
    return f"{name}({', '.join(fields)})" if fields else name


def build_story(model: GroundModel, trace: Trace, actions=None, states=None) -> Story:
    if actions is None or states is None:
        actions, states = walk(model, trace)
    pl = _Places(model)
    spec = model.spec
    places = {r.id: t.place(r) for t in spec.tables for r in t.rows}
    channels = [(ch, b, pl.ground(ch.copies, b)) for ch in spec.channels for b in _instances(model, ch)]
    by_name = {ch.name: ch for ch in spec.channels}
    queues: dict = defaultdict(deque)   # (channel, key) -> messages in flight, oldest first
    latest: dict = {}                   # (channel, key) -> the newest message (persistent channels)
    messages: list[Message] = []
    steps: list[StoryStep] = []

    def new_message(ch, b, s, sent, source_lane, dup=False) -> Message:
        m = Message(len(messages), ch.name, _message_label(pl, ch, b, s),
                    pl.lane(ch.sender, b, s) if source_lane is None else source_lane,
                    None if isinstance(ch.receiver.index, str) else pl.lane(ch.receiver, b, s), ch.receiver.lane, sent, dup,
                    persistent=ch.persistent)
        messages.append(m)
        return m

    for k, (a, before, after) in enumerate(zip(actions, states, states[1:]), start=1):
        b = dict(a.params)
        # a row with no place (a spec without lanes) happens on a lane named after its actor
        lane = pl.lane(places.get(a.row.id), b, before) or LaneId(a.row.actor, None)
        st = StoryStep(k, lane, a.row.id, a.row.trigger, a.label, a.row.tags, pl.stale(lane, before))
        source = pl.lane(a.row.sends_from, b, after) if a.row.sends_from is not None else None
        taken = _taken(pl, by_name, a, b, before)  # (channel, key) the row takes delivery of wherever it happens
        for ch, cb, copies in channels:
            c0, c1 = evaluate(copies, before), evaluate(copies, after)
            key = (ch.name, tuple(sorted(cb.items())))
            q = queues[key]
            if c1 > c0:
                for n in range(c1 - c0):
                    m = new_message(ch, cb, after, k, source, dup=c0 + n > 0 and not ch.persistent)
                    q.append(m)
                    latest[key] = m
                    st.sends.append(m.id)
            elif c1 < c0 and not ch.persistent:
                for _ in range(c0 - c1):
                    m = q.popleft() if q else new_message(ch, cb, before, None, None)
                    if key in taken and m.target is not None:
                        m.delivered.append((k, m.target))
                        st.receives.append(m.id)
                    elif lane is not None and _reaches(m, lane):
                        m.delivered.append((k, lane))
                        st.receives.append(m.id)
                    else:
                        m.dropped = (k, lane)
                        st.drops.append(m.id)
            elif c1 == c0 > 0 and q and _message_label(pl, ch, cb, after) != q[-1].label:
                old = q.pop()  # rewritten in flight (e.g. markers re-driven): the old content is gone
                old.superseded = k
                m = new_message(ch, cb, after, k, source, dup=False)
                q.append(m)
                latest[key] = m
                st.sends.append(m.id)
        for rc in a.row.receives:
            ch = by_name.get(rc.channel)
            if ch is None or not ch.persistent or (rc.when is not None and not pl.value(rc.when, b, before)):
                continue
            kb = {p.name: pl.value(e, b, before) for p, e in zip(ch.params, rc.key)}
            m = latest.get((ch.name, tuple(sorted(kb.items()))))
            if m is None:
                m = new_message(ch, kb, before, None, None)
                latest[(ch.name, tuple(sorted(kb.items())))] = m
            if lane is not None:
                m.delivered.append((k, lane))
                st.receives.append(m.id)
        steps.append(st)

    seen = {s.lane for s in steps if s.lane is not None}
    for m in messages:
        seen.update(x for x in (m.source, m.target) if x is not None)
        seen.update(ln for _, ln in m.delivered if ln is not None)
    lanes = sorted(seen, key=lambda x: x.sort_key(pl.order))
    return Story(lanes, {ln: pl.title(ln) for ln in lanes}, steps, messages)


def _taken(pl: _Places, by_name: dict, a: GroundAction, b: dict, s) -> set:
    out = set()
    for rc in a.row.receives:
        ch = by_name.get(rc.channel)
        if ch is None or ch.persistent or (rc.when is not None and not pl.value(rc.when, b, s)):
            continue
        kb = {p.name: pl.value(e, b, s) for p, e in zip(ch.params, rc.key)}
        out.add((ch.name, tuple(sorted(kb.items()))))
    return out


def _reaches(m: Message, lane: LaneId) -> bool:
    return lane == m.target if m.target is not None else lane.kind == m.target_kind


# ---- the story as text ------------------------------------------------------------------------
def step_lines(story: Story) -> dict[int, str]:
    """Per step, what happens in the chart's terms: `partition p1 ← WriteTxnMarkers(ABORT) from
    coordinator tid1`."""
    msgs = {m.id: m for m in story.messages}
    out = {}
    for st in story.steps:
        parts = []
        for mid in st.receives:
            m = msgs[mid]
            src = f" from {story.title(m.source)}" if m.source is not None else ""
            at = next((ln for k, ln in m.delivered if k == st.index), st.lane)
            if at != st.lane:  # taken delivery of elsewhere (an append found durable by a failover)
                parts.append(f"{m.label}{src} reached {story.title(at)}")
            else:
                parts.append(f"← {m.label}{src}")
        for mid in st.drops:
            m = msgs[mid]
            parts.append(f"✗ {m.label} lost" + (f" ({story.title(m.source)} → {_target(story, m)})"
                                                  if m.source is not None else ""))
        for mid in st.sends:
            m = msgs[mid]
            parts.append(f"→ {m.label} to {_target(story, m)}" + (" (duplicate)" if m.duplicate else ""))
        what = "; ".join(parts)
        if not parts or st.fault:
            what = f"{st.label}" + (f": {what}" if what else "")
        where = story.title(st.lane) if st.lane is not None else ""
        if st.zombie:
            where += " (zombie)"
        out[st.index] = f"{where}  {what}".strip()
    return out


def _target(story: Story, m: Message) -> str:
    return story.title(m.target) if m.target is not None else f"every {m.target_kind}"
