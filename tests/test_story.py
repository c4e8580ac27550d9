"""Sequence-chart data of the shipped specs (spec/sequence.py) and the stories traces/story.py reads
off it: every row happens on a declared lane, every place, lane title and channel grounds under every
shipped config, and the stories of random walks and of golden counterexamples keep the chart's rules
(a message is delivered on its receiver's lane and sent from its sender's, only a fault loses one,
and a label changes in flight only where the model rewrites the message)."""
import itertools
import random
from dataclasses import replace

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check
from txncheck.spec import catalog
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.expr import And
from txncheck.spec.grounder import Grounder
from txncheck.spec.model import Sometimes
from txncheck.spec.request import ModelRequest
from txncheck.traces.replay import model_for
from txncheck.traces.story import build_story, step_lines

# Messages the model really overwrites in flight (a re-driven marker; one response cell per batch,
# rewritten when a second copy of the batch is answered).
REWRITTEN = {"WriteTxnMarkers", "Produce response"}
# Messages a step that is no fault makes vanish: a marker clears the verification guard of a held batch.
CANCELLED = {("verification", "PL-22"), ("verification", "AD-01")}


def _runs():
    for name in catalog.names():
        spec = catalog.load(name)
        for c in spec.configs:
            yield pytest.param(name, c.name, (), None, id=f"{name}-{c.name}")
        for v in spec.variants:
            yield pytest.param(name, v.config, v.settings, v.name, id=f"{name}-{v.name}")


def _model(name, config, settings=(), variant=None):
    return ModelRequest.of(name, config, dict(settings), variant).ground()


@pytest.mark.parametrize("name", catalog.names())
def test_every_row_happens_on_a_declared_lane(name):
    spec = catalog.load(name)
    for s in [spec] + [spec.with_variant(v.name) for v in spec.variants]:
        lanes = [ln.name for ln in s.lanes]
        assert lanes and len(set(lanes)) == len(lanes)
        for t in s.tables:
            for r in t.rows:
                at = t.place(r)
                assert at is not None, f"{s.name}/{s.variant}: row {r.id} has no place"
                assert at.lane in lanes, f"{s.name}: row {r.id} happens on undeclared lane {at.lane}"
        names = [ch.name for ch in s.channels]
        assert len(set(names)) == len(names)
        for ch in s.channels:
            assert ch.sender.lane in lanes and ch.receiver.lane in lanes, ch.name
        for r in s.rows:
            for rc in r.receives:
                ch = next(c for c in s.channels if c.name == rc.channel)
                assert len(rc.key) == len(ch.params), (r.id, rc.channel)


def _index_ok(model, lane_kinds, at, value):
    dom = lane_kinds[at.lane].index
    return value is None if dom is None else value in dom.values(model.env)


@pytest.mark.parametrize("name,config,settings,variant", list(_runs()))
def test_places_titles_and_channels_ground(name, config, settings, variant):
    model = _model(name, config, settings, variant)
    spec, env, s0 = model.spec, model.env, tuple(model.init)
    gr = Grounder(spec, model.config)
    kinds = {ln.name: ln for ln in spec.lanes}

    def value(e, b):
        return evaluate(gr.g(e, b, None), s0)

    places = {r.id: t.place(r) for t in spec.tables for r in t.rows}
    for a in model.actions:
        at = places[a.row.id]
        v = None if at.index is None else value(at.index, dict(a.params))
        assert _index_ok(model, kinds, at, v), f"{a.label}: lane {at.lane} index {v}"
    for ln in spec.lanes:
        for x in (ln.index.values(env) if ln.index is not None else ()):
            for cond, _ in ln.titles:
                value(cond, {ln.param.name: x})
    for ch in spec.channels:
        for combo in itertools.product(*(p.domain.values(env) for p in ch.params)):
            b = {p.name: x for p, x in zip(ch.params, combo)}
            value(ch.copies, b)
            for at in (ch.sender, ch.receiver):
                if at.index is not None and not isinstance(at.index, str):
                    assert _index_ok(model, kinds, at, value(at.index, b)), (ch.name, b)
            for cond, _ in ch.names:
                gr.g(cond, b, None)
            for f in ch.fields:
                gr.g(f.value, b, None)
                if f.when is not None:
                    gr.g(f.when, b, None)


def _walk(model, steps, seed):
    rnd = random.Random(seed)
    s = tuple(model.init)
    actions, states = [], [s]
    for _ in range(steps):
        enabled = [a for a in model.actions if evaluate(a.guard, s, a.row_id)]
        if not enabled:
            break
        a = rnd.choice(enabled)
        s = successor(model, a, s)
        actions.append(a)
        states.append(s)
    return actions, states


def assert_chart_rules(spec, story):
    """The rules every story of `spec` keeps (REWRITTEN and CANCELLED name the exceptions). A step sends
    from its own lane, or from the lane its row's `sends_from` names (the model does two hops in one
    step: the transaction log's append becomes durable and the coordinator's callback answers; the
    leader passes a verification's rejection on as its Produce response; a ballot leader's phase2a)."""
    lanes = {ln.name for ln in spec.lanes}
    msgs = {m.id: m for m in story.messages}
    rows = {r.id: r for r in spec.rows}
    for st in story.steps:
        assert st.lane is not None and st.lane.kind in lanes, f"step {st.index} {st.action} has no declared lane"
        for mid in st.sends:
            m = msgs[mid]
            assert m.sent == st.index
            sends_from = rows[st.row].sends_from
            if sends_from is None:
                assert m.source == st.lane, f"step {st.index} {st.action} on {story.title(st.lane)} sends {m.label} " \
                                            f"from {story.title(m.source)}"
            else:
                assert m.source.kind == sends_from.lane, f"step {st.index} {st.action} sends {m.label} " \
                                                         f"from {story.title(m.source)}"
        for mid in st.drops:
            m = msgs[mid]
            assert st.fault or (m.channel, st.row) in CANCELLED, f"step {st.index} {st.action} loses {m.label}"
    for m in story.messages:
        assert m.sent is not None, f"{m.label} was in flight in the initial state"
        assert m.source is not None and m.source.kind in lanes
        for k, lane in m.delivered:
            assert (lane == m.target) if m.target is not None else (lane.kind == m.target_kind), \
                f"{m.label} delivered at step {k} on {story.title(lane)}"
        if m.superseded is not None:
            assert m.channel in REWRITTEN, f"{m.label} relabelled in flight at step {m.superseded}"


@pytest.mark.parametrize("name,config,settings,variant", list(_runs()))
def test_random_walk_stories_keep_the_chart_rules(name, config, settings, variant):
    model = _model(name, config, settings, variant)
    for seed in range(3):
        actions, states = _walk(model, 60, seed)
        story = build_story(model, None, actions, states)
        assert_chart_rules(model.spec, story)
        assert len(step_lines(story)) == len(actions)


# ---- golden stories ------------------------------------------------------------------------------------
def _story_of(request, prop):
    r = check(request, options=ExploreOptions(properties=(prop,)))
    trace = r.traces[prop]
    model = model_for(trace)  # the trace replays on the shipped spec
    story = build_story(model, trace)
    assert_chart_rules(model.spec, story)
    return story


def _arrows(story):
    return [(m.label, story.title(m.source), story.title(m.target) if m.target else f"every {m.target_kind}",
             m.sent, tuple(k for k, _ in m.delivered), m.dropped and m.dropped[0]) for m in story.messages]


def test_twophase_commit_without_all_prepared():
    story = _story_of(ModelRequest.of("twophase", "tiny", variant="commit-without-all-prepared"), "TCConsistent")
    assert [story.title(ln) for ln in story.lanes] == ["TM", "RM r1", "RM r3"]
    assert step_lines(story) == {1: "TM  → Commit to every RM", 2: "RM r1  ← Commit from TM",
                                 3: "RM r3  RMChooseToAbort"}


def test_kafka_kip98_late_produce():
    """B1(a): a Produce delayed past the client's delivery timeout is appended after the ABORT marker
    and opens a span the coordinator does not track (TRACK-1)."""
    story = _story_of(ModelRequest.of("kafka", "tiny", {"failovers": 0}, "B1-late-produce"), "TRACK-1")
    P, C, L, P1 = "producer inc1", "coordinator tid1", "__transaction_state tid1", "partition p1"
    assert [story.title(ln) for ln in story.lanes] == [P, C, L, P1]
    assert _arrows(story) == [
        ("InitProducerId", P, C, 1, (2,), None),
        ("append Empty(epoch 0)", C, L, 2, (3,), None),
        ("InitProducerId response(error NONE, epoch 0)", C, P, 3, (4,), None),
        ("AddPartitionsToTxn(partition p1, epoch 0)", P, C, 6, (7,), None),
        ("append Ongoing(epoch 0, partition p1)", C, L, 7, (8,), None),
        ("AddPartitionsToTxn response(error NONE)", C, P, 8, (9,), None),
        ("Produce(epoch 0, seq 0)", P, P1, 10, (17,), None),  # the late produce
        ("EndTxn(ABORT, epoch 0)", P, C, 12, (13,), None),
        ("append PrepareAbort(epoch 0)", C, L, 13, (14,), None),
        ("EndTxn response(error NONE, epoch 0)", C, P, 14, (), None),
        ("WriteTxnMarkers(ABORT, epoch 0, cepoch 0)", C, P1, 14, (15,), None),
        ("Produce response(error NONE)", P1, P, 17, (), None),
    ]
    lines = step_lines(story)
    assert lines[11] == "producer inc1  delivery timeout expires an in-flight batch"
    assert lines[17] == ("partition p1  ← Produce(epoch 0, seq 0) from producer inc1; "
                         "→ Produce response(error NONE) to producer inc1")


def test_kafka_zombie_is_fenced():
    """A restart leaves the old incarnation running; the new one's InitProducerId bumps the epoch, the leader's
    verification refuses the zombie's next batch (TV2: the coordinator's PRODUCER_FENCED reaches the client as
    INVALID_PRODUCER_EPOCH, abortable), and the zombie's EndTxn(ABORT) is fenced by the coordinator (fatal).
    No delivery timeout or coordinator timeout, which give shorter ways to the same end."""
    from txncheck.spec.kafka import SPEC
    from txncheck.spec.kafka.domains import PcState
    from txncheck.spec.kafka.state import pc_st
    fenced = Sometimes("ZombieFenced", And(pc_st[0] == PcState.FATAL_ERROR, pc_st[1] != PcState.IDLE),
                       "the old incarnation, left running, ends fenced")
    spec = replace(SPEC, properties=SPEC.properties + (fenced,))
    story = _story_of(ModelRequest.of(spec, "tiny", {"zombies": 1, "failovers": 0, "delays": 0, "timeouts": 0}),
                      "ZombieFenced")
    assert [story.title(ln) for ln in story.lanes] == [
        "producer inc1", "producer inc2", "coordinator tid1", "__transaction_state tid1", "partition p1"]
    steps = {st.row: st for st in story.steps}
    restart = steps["FLT-02"]
    assert restart.fault and story.title(restart.lane) == "producer inc1"
    msgs = {m.label: m for m in story.messages}
    bump = msgs["InitProducerId response(error NONE, epoch 1)"]
    assert story.title(bump.target) == "producer inc2"
    refused = msgs["Produce response(error INVALID_PRODUCER_EPOCH/INVALID_TXN_STATE)"]
    assert story.title(refused.target) == "producer inc1" and refused.delivered
    assert story.steps[refused.sent - 1].row == "TC-64" and bump.sent < refused.sent
    fence = msgs["EndTxn response(error PRODUCER_FENCED)"]
    assert story.title(fence.target) == "producer inc1" and fence.delivered and refused.sent < fence.sent
    # once inc2 has started, whatever inc1 does is a zombie's doing, and the chart says so
    old = [st for st in story.steps if story.title(st.lane) == "producer inc1"]
    started = next(st.index for st in story.steps if st.row == "FLT-02")
    assert [st.zombie for st in old] == [st.index > started for st in old] and any(st.zombie for st in old)
    assert not any(st.zombie for st in story.steps if story.title(st.lane) != "producer inc1")
    assert "producer inc1 (zombie)  ← EndTxn response(error PRODUCER_FENCED)" in step_lines(story)[story.steps[-1].index]


def test_kafka_coordinator_failover_redrives_markers():
    """B10: the failover re-drives the ABORT markers with coordinator epoch 1; without the W2 check the
    deposed coordinator's marker (cepoch 0) is appended after it (CEPOCH-1)."""
    story = _story_of(ModelRequest.of("kafka", "tiny", variant="B10-no-marker-cepoch-check"), "CEPOCH-1")
    assert [story.title(ln) for ln in story.lanes] == [
        "producer inc1", "coordinator tid1", "__transaction_state tid1", "partition p1"]
    failover = next(st for st in story.steps if st.row == "FLT-03")
    assert failover.fault and story.title(failover.lane) == "coordinator tid1"
    msgs = {m.label: m for m in story.messages}
    old = msgs["WriteTxnMarkers(ABORT, epoch 1, cepoch 0)"]
    new = msgs["WriteTxnMarkers(ABORT, epoch 1, cepoch 1)"]
    assert old.sent < failover.index == new.sent
    assert story.title(old.source) == story.title(new.source) == "coordinator tid1"
    assert new.delivered[0][0] < old.delivered[0][0] == len(story.steps)
    assert story.title(old.delivered[0][1]) == "partition p1"
