"""Regenerate the viewer screenshots in docs/ (needs Chromium and playwright, as the browser tests).

    .venv/bin/python docs/images/screenshots.py

Two pages: KIP-98's late produce (variant B1, TRACK-1) opened at the late Produce's delivery, and
a zombie fenced by its successor (the test-only property of tests/test_story.py), plus the
matplotlib chart of the first (`txncheck view --png`).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check
from txncheck.reports.sequence_plot import plot_story
from txncheck.reports.viewer import render_page, render_trace_page
from txncheck.spec.expr import And
from txncheck.spec.model import Sometimes
from txncheck.spec.request import ModelRequest
from txncheck.traces.story import build_story

HERE = os.path.dirname(os.path.abspath(__file__))


def shoot(html: str, out: str, step: int, width: int = 1500, height: int = 860) -> None:
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, "page.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--headless", "--no-sandbox"])
            pg = b.new_page(viewport={"width": width, "height": height})
            pg.goto(f"file://{page}#step-{step}")
            pg.screenshot(path=out)
            b.close()


def main() -> int:
    r = check(ModelRequest.of("kafka", "tiny", {"failovers": 0}, "B1-late-produce"),
              options=ExploreOptions(properties=("TRACK-1",)))
    trace = r.traces["TRACK-1"]
    html, story = render_trace_page(trace)
    shoot(html, os.path.join(HERE, "viewer-kafka-late-produce.png"), 17)
    plot_story(story, trace, os.path.join(HERE, "chart-kafka-late-produce.png"), "png")

    from txncheck.spec.kafka import SPEC
    from txncheck.spec.kafka.domains import PcState
    from txncheck.spec.kafka.state import pc_st
    fenced = Sometimes("ZombieFenced", And(pc_st[0] == PcState.FATAL_ERROR, pc_st[1] != PcState.IDLE),
                       "the old incarnation, left running after a restart, ends fenced (PRODUCER_FENCED)")
    spec = replace(SPEC, properties=SPEC.properties + (fenced,))
    request = ModelRequest.of(spec, "tiny", {"zombies": 1, "failovers": 0})
    trace = check(request, options=ExploreOptions(properties=("ZombieFenced",))).traces["ZombieFenced"]
    model = request.ground()
    shoot(render_page(trace, model, story=build_story(model, trace)),
          os.path.join(HERE, "viewer-kafka-zombie-fenced.png"), trace.length)
    return 0


if __name__ == "__main__":
    sys.exit(main())
