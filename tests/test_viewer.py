"""The counterexample viewer (`txncheck view`, `check --html`), tested in a real headless Chromium:
one lane per actor instance, one arrow per message, the step panel, the keyboard, step links, and
bad input refused with one message and no page."""
import json
import os
import sys

import pytest

from browser_env import Page, browser, require_browser

from txncheck.reports.viewer import render_page
from txncheck.spec.request import ModelRequest
from txncheck.traces.build import build_trace
from txncheck.traces.replay import model_for
from txncheck.traces.schema import load
from txncheck.traces.story import build_story

require_browser()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """twophase with its planted bug, checked with --html (the user's command)."""
    import subprocess
    out = tmp_path_factory.mktemp("tp") / "out"
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    p = subprocess.run([exe, "check", "twophase", "--variant", "commit-without-all-prepared", "--html",
                        "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr
    assert f"viewer: {out}/traces/index.html" in p.stdout
    return out


@pytest.fixture(scope="module")
def chromium():
    with browser() as b:
        yield b


def _story(path):
    t = load(str(path))
    return t, build_story(model_for(t), t)


def test_the_chart_has_a_lane_per_actor_instance_and_an_arrow_per_message(run_dir, chromium):
    trace, story = _story(run_dir / "traces" / "TCConsistent.json")
    pg = Page(chromium, run_dir / "traces" / "TCConsistent.html")
    p = pg.page
    titles = p.locator("#lanehead .lanetitle").all_inner_texts()
    assert titles == ["TM", "RM r1", "RM r3"] == [story.title(ln) for ln in story.lanes]
    assert p.locator("svg line.lane").count() == len(story.lanes)
    # TMCommit broadcasts Commit; RM r1 receives it: one arrow, from TM's step 1 to RM r1's step 2
    msgs = p.locator("svg g.msg")
    assert msgs.count() == len(story.messages) == 1
    assert msgs.first.get_attribute("data-sent") == "1" and msgs.first.get_attribute("data-to") == "2"
    assert "Commit" in msgs.first.text_content()
    assert p.locator("svg g.event").count() == trace.length
    assert pg.errors == [] and pg.network() == []


def test_clicking_a_step_fills_the_panel_and_the_keyboard_moves(run_dir, chromium):
    pg = Page(chromium, run_dir / "traces" / "TCConsistent.html")
    p = pg.page
    # opens on the last step (the one that violates the property)
    assert p.locator("#panel h2").inner_text().startswith("Step 3 · RM-02")
    p.locator('svg g.event[data-step="1"]').click()
    assert p.locator("#panel h2").inner_text().startswith("Step 1 · TM-02")
    assert p.locator("#panel-story").inner_text() == "TM → Commit to every RM"  # HTML folds the double space
    assert p.locator("#guard li").all_inner_texts() == ["tmState = init"]  # the variant dropped the ∀ conjunct
    assert "tmState := done" in p.locator("#updates").inner_text()
    assert p.locator("#ref").inner_text() == "TwoPhase.tla TMCommit"
    assert p.locator("#changed tr").all_inner_texts() == ["tmState\tinit → done", "msgCommit\tFALSE → TRUE"]
    assert p.locator("#panel tr.chg").count() >= 4  # the changed cells again, marked in the full state
    assert p.evaluate("location.hash") == "#step-1"
    p.keyboard.press("ArrowDown")
    assert p.locator("#panel h2").inner_text().startswith("Step 2 · RM-03")
    p.keyboard.press("k")
    assert p.locator("#panel h2").inner_text().startswith("Step 1 ·")
    p.keyboard.press("Home")
    assert p.locator("#panel h2").inner_text().startswith("Step 0 · initial state")
    p.keyboard.press("ArrowUp")  # stays at 0
    assert p.locator("#panel h2").inner_text().startswith("Step 0")
    p.keyboard.press("End")
    assert p.locator("#panel h2").inner_text().startswith("Step 3")
    assert pg.errors == []


def test_a_step_link_opens_that_step(run_dir, chromium):
    pg = Page(chromium, str(run_dir / "traces" / "TCConsistent.html") + "#step-2")
    assert pg.page.locator("#panel h2").inner_text().startswith("Step 2 · RM-03")
    pg.page.evaluate("location.hash = '#step-1'")
    pg.page.wait_for_function("document.querySelector('#panel h2').textContent.startsWith('Step 1')")
    assert pg.errors == []


def test_the_property_and_the_planted_bug_are_shown(run_dir, chromium):
    pg = Page(chromium, run_dir / "traces" / "TCConsistent.html")
    p = pg.page
    assert "∀r1∈RM" in p.locator("#formula").inner_text()
    assert p.locator("#values").inner_text().startswith("violated by: ")
    v = p.locator("#variant").inner_text()
    assert "Planted bug: commit-without-all-prepared" in v
    # replay --baseline's divergence: without the variant TMCommit is not enabled at step 1
    assert "diverges at step 1" in v
    # the steps that wrote the cells the property reads are marked, and the last step
    assert p.locator("svg g.event.key").count() >= 2
    assert p.locator('svg g.event.last[data-step="3"]').count() == 1


def test_the_index_lists_every_trace_of_the_run(run_dir, chromium):
    pg = Page(chromium, run_dir / "traces" / "index.html")
    rows = pg.page.locator("#traces tbody tr")
    names = sorted(f[:-5] for f in os.listdir(run_dir / "traces") if f.endswith(".json"))
    assert rows.count() == len(names) == 3
    assert [r.get_attribute("data-trace") for r in rows.all()] == names
    for r in rows.all():
        href = r.locator("a").get_attribute("href")
        assert os.path.exists(run_dir / "traces" / href)
    assert "violated" in pg.page.locator('tr[data-trace="TCConsistent"]').inner_text()
    assert pg.errors == []


def test_a_long_trace_still_opens(tmp_path, chromium):
    sys.path.insert(0, os.path.dirname(__file__))
    from models.ping_pong import SPEC
    model = ModelRequest.of(SPEC, None, {"rounds": 700}).ground()
    trace = build_trace(model, [0, 2, 1] * 700, "Done", "witness", "scalar")
    assert trace.length == 2100
    page = tmp_path / "long.html"
    page.write_text(render_page(trace, model))
    pg = Page(chromium, page)
    assert pg.page.locator("#panel h2").inner_text().startswith("Step 2100 · C-02")
    assert pg.page.locator("svg g.msg").count() == 1400
    pg.page.keyboard.press("ArrowUp")
    assert pg.page.locator("#panel h2").inner_text().startswith("Step 2099 · S-01")
    assert pg.errors == []


# ---- the command and its bad input ---------------------------------------------------------------
def test_view_writes_the_page_beside_the_trace(run_dir, tmp_path, txncheck_cli):
    src = run_dir / "traces" / "SomeAbort.json"
    (tmp_path / "t.json").write_bytes(src.read_bytes())
    code, out, err = txncheck_cli("view", "t.json", cwd=tmp_path)
    assert code == 0, err
    assert out.strip() == "page: t.html" and (tmp_path / "t.html").exists()
    code, out, err = txncheck_cli("view", "t.json", "-o", "sub/page.html", cwd=tmp_path)
    assert code == 0 and (tmp_path / "sub" / "page.html").exists()


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.update(schema="txncheck.trace/999"), "unsupported trace schema"),
    (lambda d: d.update(spec="nosuchspec"), "unknown spec 'nosuchspec'"),
    (lambda d: d["steps"][1].update(row="TM-03"), "does not replay"),
])
def test_bad_traces_are_refused_with_one_message_and_no_page(run_dir, tmp_path, txncheck_cli, edit, needle):
    d = json.loads((run_dir / "traces" / "TCConsistent.json").read_text())
    edit(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    code, out, err = txncheck_cli("view", "bad.json", cwd=tmp_path)
    assert code == 2
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "bad.html").exists()
    assert [f for f in os.listdir(tmp_path) if f != "bad.json"] == []


def test_a_truncated_trace_is_refused(run_dir, tmp_path, txncheck_cli):
    data = (run_dir / "traces" / "TCConsistent.json").read_bytes()
    (tmp_path / "cut.json").write_bytes(data[: len(data) // 2])
    code, out, err = txncheck_cli("view", "cut.json", cwd=tmp_path)
    assert code == 2 and "Traceback" not in err
    assert os.listdir(tmp_path) == ["cut.json"]


# ---- a known Kafka counterexample -------------------------------------------------------------------
@pytest.fixture(scope="module")
def kafka_late_produce(tmp_path_factory):
    """KIP-98's late produce (variant B1): a Produce delayed past the client's delivery timeout lands
    after the ABORT marker and opens a span nobody tracks (TRACK-1)."""
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import check
    from txncheck.reports.viewer import render_trace_page
    r = check(ModelRequest.of("kafka", "tiny", {"failovers": 0}, "B1-late-produce"),
              options=ExploreOptions(properties=("TRACK-1",)))
    trace = r.traces["TRACK-1"]
    html, story = render_trace_page(trace, "TRACK-1.html")
    page = tmp_path_factory.mktemp("kafka") / "TRACK-1.html"
    page.write_text(html)
    return trace, story, page


def test_a_kafka_chart_has_the_whiteboard_lanes_and_every_message(kafka_late_produce, chromium):
    trace, story, page = kafka_late_produce
    pg = Page(chromium, page)
    p = pg.page
    assert p.locator("#lanehead .lanetitle").all_inner_texts() == [
        "producer inc1", "coordinator tid1", "__transaction_state tid1", "partition p1"]
    arrows = p.locator("svg g.msg")
    assert arrows.count() == len(story.messages) == 12
    drawn = sorted((g.get_attribute("data-sent"), g.get_attribute("data-to"), g.locator("title").text_content())
                   for g in arrows.all())
    expected = sorted((str(m.sent), ",".join(str(k) for k, _ in m.delivered), m.label) for m in story.messages)
    assert drawn == expected
    late = p.locator("svg g.msg", has=p.locator("title", has_text="Produce(epoch 0, seq 0)"))
    assert late.get_attribute("data-sent") == "10" and late.get_attribute("data-to") == "17"  # the long arrow
    assert p.locator("svg g.event.fault").count() == 1  # PC-12: the delivery timeout
    p.locator('svg g.event[data-step="17"]').click()
    assert p.locator("#panel-story").inner_text() == (
        "partition p1 ← Produce(epoch 0, seq 0) from producer inc1; → Produce response(error NONE) to producer inc1")
    assert "Planted bug: B1-late-produce" in p.locator("#variant").inner_text()
    assert pg.errors == [] and pg.network() == []
    assert os.path.getsize(page) < 1_000_000


def test_view_draws_the_chart_as_png_and_svg(run_dir, tmp_path, txncheck_cli):
    src = run_dir / "traces" / "TCConsistent.json"
    code, out, err = txncheck_cli("view", str(src), "-o", "p.html", "--png", "c.png", "--svg", "c.svg", cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "c.svg").read_text()
    assert "RM r1" in svg and "Commit" in svg
    # a wrong extension is refused before anything is written
    code, out, err = txncheck_cli("view", str(src), "-o", "q.html", "--png", "c.svg", cwd=tmp_path)
    assert code == 2 and "--png c.svg: give a file name ending in .png" in err
    assert not (tmp_path / "q.html").exists()
