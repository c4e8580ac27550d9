"""The sequence chart as an image (reports/sequence_plot.py): a real twophase counterexample drawn
as PNG and SVG, deterministic bytes, the marks of lost, duplicated and in-flight messages, steps
without a lane, and a 2,000-step story that stays within the documented size."""
import os
import struct
import subprocess
import sys
import time
from xml.sax.saxutils import escape

import pytest

from txncheck.reports.sequence_layout import chart_height_px, row_height
from txncheck.reports.sequence_plot import plot_story, render_story
from txncheck.traces.replay import model_for
from txncheck.traces.schema import Step, Trace, load
from txncheck.traces.story import LaneId, Message, Story, StoryStep, build_story


def png_size(path) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def twophase(tmp_path_factory):
    """twophase's planted bug: TMCommit without every RM prepared (3 steps, one Commit broadcast)."""
    out = tmp_path_factory.mktemp("tp") / "out"
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    p = subprocess.run([exe, "check", "twophase", "--config", "tiny", "--variant", "commit-without-all-prepared",
                        "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr
    t = load(str(out / "traces" / "TCConsistent.json"))
    return t, build_story(model_for(t), t)


# ---- a synthetic Kafka-like story -----------------------------------------------------------------
P1, TC, PART, P2 = LaneId("producer", 1), LaneId("coordinator", None), LaneId("partition", 0), LaneId("producer", 2)
TITLES = {P1: "producer inc1", TC: "coordinator tid1", PART: "partition p1", P2: "producer inc2"}


def synthetic_trace(n: int, actors=None) -> Trace:
    actors = actors or {}
    steps = [Step(0, None, None, None, "Init", {}, (), {})]
    steps += [Step(k, f"R-{k % 100:02d}", actors.get(k, "producer"), "t", f"R-{k % 100:02d}", {}, (), {})
              for k in range(1, n + 1)]
    return Trace(spec="kafka", variant="synthetic", config={"name": "tiny"}, engine="vector",
                 property={"name": "ATOM-2", "kind": "always", "doc": "Partition outcome = decision."},
                 kind="violation", steps=tuple(steps))


def small_story() -> Story:
    """Lost, duplicated, delayed, in-flight, broadcast and overwritten messages, a crash, and a step
    without a lane (the spec's lanes not yet declared for its row)."""
    def step(k, lane, row, label, tags=(), sends=(), receives=(), drops=()):
        return StoryStep(k, lane, row, label, f"{row}(x)", tuple(tags), list(sends), list(receives), list(drops))
    msgs = [
        Message(0, "Produce", "Produce(seq 0, epoch 0)", P1, PART, "partition", 1, delivered=[(2, PART)]),
        Message(1, "Produce", "Produce(seq 0, epoch 0)", P1, PART, "partition", 3, duplicate=True,
                delivered=[(9, PART)]),
        Message(2, "AddPartitions", "AddPartitionsToTxn(p1, epoch 0)", P1, TC, "coordinator", 4, dropped=(5, None)),
        Message(3, "EndTxn", "EndTxn(COMMIT, epoch 0)", P1, TC, "coordinator", 6, delivered=[(7, TC)]),
        Message(4, "Markers", "WriteTxnMarkers(COMMIT, coordinator epoch 0)", TC, None, "partition", 7,
                superseded=8),
        Message(5, "Markers", "WriteTxnMarkers(ABORT)", TC, None, "partition", 8, delivered=[(10, PART)]),
        Message(6, "InitPid", "InitProducerId(tid1)", P2, TC, "coordinator", 11),
        Message(7, "Fence", "Fence(epoch 1)", TC, P1, "producer", 12),
    ]
    steps = [
        step(1, P1, "PC-03", "send"), step(2, PART, "PL-01", "append"), step(3, P1, "NET-01", "resend"),
        step(4, P1, "PC-05", "AddPartitionsToTxn"), step(5, None, "NET-02", "lose request", tags=("network",)),
        step(6, P1, "PC-09", "commit"), step(7, TC, "TC-20", "EndTxn(COMMIT)"), step(8, TC, "TC-31", "failover redrive"),
        step(9, PART, "PL-05", "append duplicate"), step(10, PART, "PL-20", "marker"),
        step(11, P2, "PC-01", "init producer id"), step(12, TC, "TC-01", "fence"),
        step(13, P1, "FLT-01", "producer crashes", tags=("crash",)),
    ]
    for m in msgs:
        steps[m.sent - 1].sends.append(m.id)
        for k, _ in m.delivered:
            steps[k - 1].receives.append(m.id)
        if m.dropped:
            steps[m.dropped[0] - 1].drops.append(m.id)
    return Story([P1, TC, PART, P2], dict(TITLES), steps, msgs)


def big_story(n: int) -> Story:
    """n steps: a produce request on each, delivered one or five steps later, some lost or duplicated."""
    lanes = [P1, TC, PART, P2]
    steps, msgs = [], []
    for k in range(1, n + 1):
        lane = lanes[k % 4]
        steps.append(StoryStep(k, lane, f"R-{k % 100:02d}", "trigger", f"R-{k % 100:02d}(i=1)",
                               ("crash",) if k % 97 == 0 else ()))
    for k in range(1, n - 5):
        src, dst = lanes[k % 4], lanes[(k + 1) % 4] if k % 5 else lanes[(k + 5) % 4]
        at = k + 1 if k % 5 else k + 5
        m = Message(len(msgs), "C", f"Req(seq {k % 8}, epoch {k % 3})", src, dst, dst.kind, k, duplicate=k % 11 == 0)
        if k % 13 == 0:
            m.dropped = (at, dst)
            steps[at - 1].drops.append(m.id)
        else:
            m.delivered.append((at, dst))
            steps[at - 1].receives.append(m.id)
        steps[k - 1].sends.append(m.id)
        msgs.append(m)
    return Story(lanes, dict(TITLES), steps, msgs)


# ---- the tests ------------------------------------------------------------------------------------
def test_a_twophase_counterexample_renders_as_png_and_svg(twophase, tmp_path):
    trace, story = twophase
    plot_story(story, trace, str(tmp_path / "tc.png"), "png")
    plot_story(story, trace, str(tmp_path / "tc.svg"), "svg")
    assert png_size(tmp_path / "tc.png")[1] == chart_height_px(trace.length) == 330
    svg = (tmp_path / "tc.svg").read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and svg.rstrip().endswith("</svg>")
    for lane in story.lanes:
        assert f">{escape(story.title(lane))}</text>" in svg
    assert [story.title(ln) for ln in story.lanes] == ["TM", "RM r1", "RM r3"]
    for m in story.messages:
        assert f">{escape(m.label)}</text>" in svg
    # the header: spec, config, variant, property and verdict
    for word in ("twophase", "config tiny", "variant commit-without-all-prepared", "TCConsistent", "violation"):
        assert word in svg
    # each step is drawn with its row id, and its full action is its tooltip
    for st in story.steps:
        assert f">{st.row}</text>" in svg
        assert f"<title>step {st.index}: {escape(st.action)}" in svg
    assert sorted(os.listdir(tmp_path)) == ["tc.png", "tc.svg"]  # no temporary file left behind


def test_the_same_trace_gives_the_same_bytes(twophase, tmp_path):
    trace, story = twophase
    for fmt in ("svg", "png"):
        plot_story(story, trace, str(tmp_path / f"a.{fmt}"), fmt)
        plot_story(story, trace, str(tmp_path / f"b.{fmt}"), fmt)
        assert (tmp_path / f"a.{fmt}").read_bytes() == (tmp_path / f"b.{fmt}").read_bytes()
    svg = (tmp_path / "a.svg").read_bytes()
    assert b"<dc:date>" not in svg and b"Matplotlib v" not in svg
    assert b"Matplotlib" not in (tmp_path / "a.png").read_bytes()  # no software version in the PNG
    # another process (another hash seed) draws the same bytes, never touching pyplot
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_sequence_plot as t;"
            "from txncheck.reports.sequence_plot import render_story;"
            "sys.stdout.buffer.write(render_story(t.small_story(), t.synthetic_trace(13), 'svg'));"
            "assert 'matplotlib.pyplot' not in sys.modules")
    outs = [subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120) for seed in ("1", "2")]
    assert [p.returncode for p in outs] == [0, 0], outs[0].stderr
    assert outs[0].stdout == outs[1].stdout == render_story(small_story(), synthetic_trace(13), "svg")


def test_drawing_leaves_matplotlib_as_it_was(twophase):
    import matplotlib
    trace, story = twophase
    before = dict(matplotlib.rcParams)
    render_story(story, trace, "svg")
    render_story(story, trace, "png")
    assert dict(matplotlib.rcParams) == before


def test_lost_duplicated_in_flight_and_overwritten_messages_have_their_marks(tmp_path):
    story, trace = small_story(), synthetic_trace(13, {5: "network"})
    plot_story(story, trace, str(tmp_path / "s.svg"), "svg", highlight={7})
    plot_story(story, trace, str(tmp_path / "s.png"), "png", highlight={7})
    svg = (tmp_path / "s.svg").read_text(encoding="utf-8")
    assert ">AddPartitionsToTxn(p1, epoch 0) ✗ lost</text>" in svg   # the label says so ...
    assert svg.count(">✗</text>") == 1                                # ... and a red cross ends its arrow
    assert ">Produce(seq 0, epoch 0) (duplicate)</text>" in svg
    assert "stroke-dasharray" in svg                                  # the duplicate's arrow is dashed
    assert ">InitProducerId(tid1) (in flight)</text>" in svg and ">Fence(epoch 1) (in flight)</text>" in svg
    assert "(overwritten)</text>" in svg
    assert "<title>message 4: WriteTxnMarkers(COMMIT, coordinator epoch 0) (overwritten)</title>" in svg
    assert svg.count(">⚡</text>") == 2                                # the lost request and the crash
    # the step without a lane is drawn on a lane named after its actor, right of the spec's lanes
    assert ">network</text>" in svg
    for title in TITLES.values():
        assert f">{title}</text>" in svg
    assert svg.count("<title>message ") >= len(story.messages)
    assert png_size(tmp_path / "s.png")[1] == chart_height_px(13)


def test_a_label_too_long_for_its_lane_gap_is_cut(tmp_path):
    long = "WriteTxnMarkers(" + ", ".join(f"field{k} value{k}" for k in range(12)) + ")"
    steps = [StoryStep(1, P1, "PC-01", "send", "PC-01", (), [0]), StoryStep(2, TC, "TC-01", "recv", "TC-01", (), [], [0])]
    story = Story([P1, TC], dict(TITLES), steps, [Message(0, "C", long, P1, TC, "coordinator", 1, delivered=[(2, TC)])])
    svg = render_story(story, synthetic_trace(2), "svg").decode()
    assert f"<title>message 0: {long}</title>" in svg
    drawn = [line for line in svg.splitlines() if "WriteTxnMarkers(" in line and "</text>" in line]
    assert len(drawn) == 1 and "…</text>" in drawn[0] and long not in drawn[0]


def test_a_story_without_steps_still_draws(tmp_path):
    plot_story(Story([], {}, [], []), None, str(tmp_path / "e.png"), "png")
    assert png_size(tmp_path / "e.png")[1] == chart_height_px(0)


def test_a_bad_format_is_refused_and_an_existing_chart_is_kept(tmp_path):
    path = tmp_path / "c.png"
    path.write_bytes(b"old")
    with pytest.raises(ValueError, match="png or svg"):
        plot_story(small_story(), synthetic_trace(13), str(path), "pdf")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["c.png"]
    plot_story(small_story(), synthetic_trace(13), str(path), "png")
    assert path.read_bytes()[:4] == b"\x89PNG" and os.listdir(tmp_path) == ["c.png"]


@pytest.mark.long  # about 20 s
def test_a_2000_step_story_renders_in_reasonable_time_at_the_documented_size(tmp_path):
    n = 2000
    story, trace = big_story(n), synthetic_trace(n)
    t0 = time.monotonic()
    plot_story(story, trace, str(tmp_path / "big.png"), "png")
    took = time.monotonic() - t0
    w, h = png_size(tmp_path / "big.png")
    assert h == chart_height_px(n) == 20240  # sequence_layout.py's docstring: its 2,000-step figure
    assert w < 2000
    assert took < 90, f"{took:.1f} s"
    t0 = time.monotonic()
    plot_story(story, trace, str(tmp_path / "big.svg"), "svg")
    assert time.monotonic() - t0 < 90
    svg = (tmp_path / "big.svg").read_text(encoding="utf-8")
    assert svg.count("<title>step ") == n


def test_row_height_shrinks_beyond_200_steps_and_the_height_is_capped():
    assert row_height(3) == row_height(200) == 0.30
    assert row_height(400) == pytest.approx(0.15) and row_height(600) == pytest.approx(0.10)
    assert row_height(2000) == pytest.approx(0.10)
    assert chart_height_px(3) == 330 and chart_height_px(31) == 1210
    assert chart_height_px(10_000) <= 20_400 and chart_height_px(100_000) <= 20_400


def test_a_broadcast_gets_an_arrow_per_delivery_and_per_receiver_it_has_not_reached():
    tm, r1, r2, r3 = LaneId("TM", None), LaneId("RM", 0), LaneId("RM", 1), LaneId("RM", 2)

    def st(k, lane, row, sends=(), receives=()):
        return StoryStep(k, lane, row, row.lower(), row, (), list(sends), list(receives))
    steps = [st(1, tm, "TM-02", [0]), st(2, r1, "RM-03", [], [0]), st(3, r3, "RM-03", [], [0]),
             st(4, r2, "RM-05", [1]), st(5, r2, "RM-06", [], [1]), st(6, tm, "TM-09", [2])]
    msgs = [Message(0, "Commit", "Commit", tm, None, "RM", 1, delivered=[(2, r1), (3, r3)]),
            Message(1, "Self", "Reminder(x 1)", r2, r2, "RM", 4, delivered=[(5, r2)]),   # to its own lane
            Message(2, "Abort", "Abort", tm, None, "RM", 6)]                             # reaches no one
    story = Story([tm, r1, r2, r3], {tm: "TM", r1: "RM r1", r2: "RM r2", r3: "RM r3"}, steps, msgs)
    svg = render_story(story, synthetic_trace(6), "svg").decode()
    arrows = sorted(a.split('"')[1] for a in svg.split("id=")[1:] if a.startswith('"msg-') and "-arrow" in a[:20])
    assert arrows == ["msg-0-0-arrow", "msg-0-1-arrow", "msg-1-0-arrow",
                      "msg-2-0-arrow", "msg-2-1-arrow", "msg-2-2-arrow"]
    assert svg.count(">Commit</text>") == 1 and svg.count(">Abort (in flight)</text>") == 1  # labelled once
    assert ">Reminder(x 1)</text>" in svg
