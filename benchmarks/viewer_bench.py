"""How heavy and how fast the viewer's pages are: a 60-step Kafka trace and a 2,100-step witness.

    .venv/bin/python benchmarks/viewer_bench.py [--runs 5]

For each trace: the time to render the page (Python: story, SVG, template), its size, and the time
a real headless Chromium takes from navigation to a filled step panel (the page's script has run),
the median of --runs openings. The 60-step Kafka trace is a fixed random walk (the first seed from 1 that runs
60 steps) through `kafka --config ci` with 3 incarnations of 3 transactions, the issue's "60-step trace"; the long one is tests/models/ping_pong.py with
700 rounds. docs/viewer.md records a run.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

from txncheck.reports.viewer import render_page  # noqa: E402
from txncheck.spec.evaluate import evaluate, successor  # noqa: E402
from txncheck.spec.request import ModelRequest  # noqa: E402
from txncheck.traces.build import build_trace  # noqa: E402


def kafka_walk(steps: int = 60, seed: int = 1):
    """The first random walk (seeds from `seed` on) that runs `steps` steps without ending."""
    model = ModelRequest.of("kafka", "ci", {"txns": 3, "restart_txns": 3, "incs": 3}).ground()
    while True:
        rnd = random.Random(seed)
        s, ids = tuple(model.init), []
        while len(ids) < steps:
            enabled = [a for a in model.actions if evaluate(a.guard, s, a.row_id)]
            if not enabled:
                break
            a = rnd.choice(enabled)
            s = successor(model, a, s)
            ids.append(a.id)
        if len(ids) == steps:
            return model, build_trace(model, ids, "Commit", "witness", "scalar")
        seed += 1


def ping_pong(rounds: int = 700):
    from models.ping_pong import SPEC
    model = ModelRequest.of(SPEC, None, {"rounds": rounds}).ground()
    return model, build_trace(model, [0, 2, 1] * rounds, "Done", "witness", "scalar")


def open_times(path: str, runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright
    exe = shutil.which("chromium")
    out = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for _ in range(runs):
            page = b.new_page(viewport={"width": 1400, "height": 900})
            t0 = time.perf_counter()
            page.goto("file://" + path)
            page.wait_for_function("document.querySelector('#panel h2') !== null")
            out.append(time.perf_counter() - t0)
            page.close()
        b.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"{'trace':<28} {'steps':>6} {'render s':>9} {'page KB':>8} {'open s (median)':>16}")
    with tempfile.TemporaryDirectory() as d:
        for name, make in (("kafka ci, random walk", kafka_walk), ("pingpong, 700 rounds", ping_pong)):
            model, trace = make()
            t0 = time.perf_counter()
            html = render_page(trace, model)
            render = time.perf_counter() - t0
            path = os.path.join(d, "page.html")
            with open(path, "w", encoding="utf-8") as f:
                f.write(html)
            times = open_times(path, args.runs)
            print(f"{name:<28} {trace.length:>6} {render:>9.2f} {len(html.encode()) / 1024:>8.0f} "
                  f"{statistics.median(times):>16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
