"""Writing results: `result.json` and every trace (JSON and text) of a run into its staged output."""
from __future__ import annotations

import os

from txncheck.checker.result import CheckResult
from txncheck.checker.run import trace_path
from txncheck.traces.text import trace_text

from .run_output import RunOutput


def write_check(result: CheckResult, out: RunOutput) -> None:
    """A check's `result.json` and `traces/NAME.json` + `traces/NAME.txt` per counterexample and witness
    (the text with the trace's story and its state grouped by actor: `traces.text.trace_text`)."""
    for name, tr in sorted(result.traces.items()):
        out.write_json(trace_path(name), tr.to_json())
        out.write_text(trace_path(name)[:-len(".json")] + ".txt", trace_text(tr))
    out.write_json("result.json", result.to_json())


def write_symbolic(data: dict, traces: dict, out: RunOutput) -> dict[str, str]:
    """A bmc run's `result.json` and its traces, named as `check` names them (`traces/NAME.json` and
    `.txt`; the trace's kind says whether it is a counterexample or a counterexample to induction);
    returns each property's trace path relative to the output directory."""
    paths = {}
    for name, trace in sorted(traces.items()):
        out.write_json(trace_path(name), trace.to_json())
        out.write_text(trace_path(name)[:-len(".json")] + ".txt", trace_text(trace))
        paths[name] = trace_path(name)
    out.write_json("result.json", data)
    return paths


def write_views(traces: dict, out: RunOutput, title: str, confirmed: bool = True, model=None) -> str | None:
    """`traces/NAME.html`, a viewer page per trace (`traces`: name -> Trace; `confirmed`: as just
    built and judged by the checker, so not replayed again), and `traces/index.html` listing them;
    returns the index's path relative to the output directory."""
    from .viewer import IndexEntry, render_index, render_trace_page  # jinja2 only when pages are asked for
    entries = []
    for name, tr in sorted(traces.items()):
        page = trace_path(name)[:-len(".json")] + ".html"
        html, _ = render_trace_page(tr, os.path.basename(page), confirmed=confirmed, model=model)
        out.write_text(page, html)
        entries.append(IndexEntry(os.path.basename(page), name, tr))
    index = os.path.join(os.path.dirname(trace_path("x")), "index.html")
    out.write_text(index, render_index(title, entries))
    return index
