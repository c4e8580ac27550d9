"""`txncheck report`: run (or read) the checks a design review needs and write the review as
`report.html` (self-contained), `report.md` (GitHub) with `figures/*.png`, and `report.json` (the
data both are rendered from), as one unit under `--out` (RunOutput).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from txncheck.spec.model import Spec

from .report_compare import compare, load_base
from .report_model import build_report
from .report_render import render_html, render_markdown
from .report_runs import plan_runs, read_runs, run_plans
from .run_output import RunOutput


@dataclass(frozen=True)
class ReportRequest:
    spec: Spec
    spec_name: str                  # as the catalogue (or module:ATTR) names it
    configs: tuple[str, ...] = ()   # () : every config not marked heavy
    protocols: tuple[str, ...] = ()  # () : every protocol version
    variants: object = "all"        # "all", "none" or a tuple of names
    engine: str = "vector"
    out: str = "out/report"
    from_dir: str | None = None
    compare_dir: str | None = None
    prove: bool = False


def write_figures(spec: Spec, runs: list[dict], out: RunOutput) -> dict[str, str]:
    """State diagrams per table with a status var, and states per level per config; returns
    name -> path relative to the report folder."""
    from .level_plot import plot_levels
    from .state_diagram import draw_status_diagram
    from .status_graph import status_graph
    figures = {}
    main = [r for r in runs if not r["variant"]]
    fired = {c["row"] for r in runs for c in r["result"]["coverage"] if c["fired"]}
    # rows every run's configuration switches off: drawn apart from rows that could fire and never did
    off = set.intersection(*(set(r["result"].get("inapplicable_rows", ())) for r in runs)) if runs else set()
    for t in spec.tables:
        if t.status is None:
            continue
        rel = f"figures/status-{t.actor}.png"
        pending = {t.status: t.pending} if t.pending else None
        draw_status_diagram(status_graph(spec, t, pending=pending), fired, out.path(rel), "png",
                            title=f"{t.actor}: {t.status}", inapplicable=off)
        figures[f"status-{t.actor}"] = rel
    for config in dict.fromkeys(r["config"] for r in main):
        series = [(r["result"]["config"]["values"].get("protocol") or r["key"], r["result"]["stats"].get("levels") or [])
                  for r in main if r["config"] == config]
        if any(s for _, s in series):
            rel = f"figures/levels-{config}.png"
            plot_levels(series, out.path(rel), "png", title=f"{spec.name} · {config}: new states per level")
            figures[f"levels-{config}"] = rel
    return figures


def make_report(req: ReportRequest, say=None, timing: dict | None = None) -> dict:
    """Write the report under `req.out`; returns its data. `timing` (optional) receives the seconds
    spent running (or reading) the checks and writing everything else."""
    base = load_base(req.compare_dir) if req.compare_dir else None  # a bad base is named before any check
    plans = None if req.from_dir else plan_runs(req.spec, req.configs, req.protocols, req.variants)
    staged = RunOutput.prepare(req.out)
    with staged:
        t0 = time.perf_counter()
        if req.from_dir:
            runs = read_runs(req.spec, req.from_dir, staged)
        else:
            runs = run_plans(req.spec_name, plans, req.engine, staged, req.prove, say, timing)
        t1 = time.perf_counter()
        figures = write_figures(req.spec, runs, staged)
        report = build_report(req.spec, runs, figures, req.engine)
        if base is not None:
            report["compare"] = compare(base, report)
        staged.write_json("report.json", report)
        staged.write_text("report.md", render_markdown(report))
        staged.write_text("report.html", render_html(report, staged.stage))
        staged.commit()
    if timing is not None:
        timing.update(checks=t1 - t0, rest=time.perf_counter() - t1)
    return report


def report_paths(out: str) -> tuple[str, str]:
    return os.path.join(out, "report.html"), os.path.join(out, "report.md")
