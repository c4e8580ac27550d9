"""The counterexample viewer: one self-contained HTML page per trace, and an index per run.

The page is rendered from the trace and its spec with Jinja2 (reports/templates/); its CSS and
script are inline, it loads nothing, and it opens from a `file://` URL or a CI artifact. The
sequence chart is drawn here as SVG (reports/chart_svg.py) from the trace's story
(traces/story.py); the page's script only selects steps and fills the step panel from the JSON
embedded in the page: step 0's state and each later step's changed cells.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import jinja2

from txncheck.spec.expr import show
from txncheck.spec.errors import TxncheckError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import Spec
from txncheck.traces.render import OUTCOME, flat_state
from txncheck.traces.replay import model_for, replay
from txncheck.traces.schema import Trace, TraceError
from txncheck.traces.story import Story, build_story, step_lines, walk
from txncheck.traces.text import var_groups

from .chart_svg import LANE_W, LEFT, height, lane_key, render_chart, width

VIEWER_SCHEMA = "txncheck.viewer/1"
_VERB = OUTCOME


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("txncheck.reports", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def _row_info(spec: Spec, row_id: str) -> dict:
    r = spec.row(row_id)
    return {"id": r.id, "actor": r.actor, "trigger": r.trigger, "ref": r.ref, "doc": r.doc,
            "params": [p.name for p in r.params], "tags": list(r.tags),
            "guard": [show(c) for c in r.guard], "updates": [f"{show(u.target)} := {show(u.value)}" for u in r.updates]}


def key_steps(trace: Trace) -> set[int]:
    """The steps that matter for the verdict: the last one, and for each cell the property's
    values name, the step that last wrote it."""
    keys = {trace.length} if trace.length else set()
    cells = set(trace.values)
    for cell in cells:
        for s in reversed(trace.steps[1:]):
            if any(c["cell"] == cell for c in s.changed):
                keys.add(s.index)
                break
    return keys


@dataclass(frozen=True)
class Divergence:
    """Where the protocol without the trace's variant parts from the trace."""

    step: int | None
    message: str


def baseline_divergence(trace: Trace) -> Divergence | None:
    if not trace.variant:
        return None
    r = replay(trace, None)  # what `txncheck replay --baseline` does
    if r.confirmed:
        return Divergence(None, f"the protocol without {trace.variant} shows this trace too: {r.message}")
    return Divergence(r.diverged_at, r.message)


def catalog_spec_is(model: GroundModel, trace: Trace) -> bool:
    """Whether the catalogue's spec of `trace.spec` has the rows of `model` (a spec loaded as
    MODULE:ATTRIBUTE may share a shipped spec's name)."""
    from txncheck.spec import catalog
    try:
        shipped = catalog.load(trace.spec)
    except TxncheckError:
        return False
    shipped = shipped.with_variant(trace.variant) if trace.variant else shipped
    return [r.id for r in shipped.rows] == [r.id for r in model.spec.rows] and \
        [show(c) for r in shipped.rows for c in r.guard] == [show(c) for r in model.spec.rows for c in r.guard]


def page_data(trace: Trace, model: GroundModel, story: Story) -> dict:
    spec = model.spec
    groups = [(g.title, g.vars) for g in var_groups(spec)]  # as the text trace groups them
    state0 = trace.steps[0].state
    flat0 = flat_state(state0)
    cells = [c for c, _ in flat0]
    index = {c: k for k, c in enumerate(cells)}
    var_of = {c: c.split("[", 1)[0] for c in cells}
    lines = step_lines(story)
    rows = {s.row: _row_info(spec, s.row) for s in trace.steps[1:] if s.row}
    steps = [{"i": 0, "title": "initial state" if trace.kind != "cti" else trace.steps[0].label, "lane": None,
              "changed": []}]
    for s, st in zip(trace.steps[1:], story.steps):
        steps.append({"i": s.index, "row": s.row, "action": s.label, "lane": story.title(st.lane) or s.actor,
                      "params": s.params, "tags": list(s.tags), "story": lines.get(s.index, ""),
                      "changed": [[index[c["cell"]], c["before"], c["after"]] for c in s.changed]})
    prop = trace.property
    gp = next((p for p in model.properties + model.strengthening if p.name == prop.get("name")), None)
    return {"schema": VIEWER_SCHEMA, "cells": cells, "init": [v for _, v in flat0],
            "groups": [[g, [k for k, c in enumerate(cells) if var_of[c] in set(vs)]] for g, vs in groups],
            "docs": {v.name: v.doc for v in spec.vars if v.doc}, "rows": rows, "steps": steps,
            "values": trace.values, "property": {"name": prop.get("name"), "kind": prop.get("kind"),
                                                 "doc": prop.get("doc", ""),
                                                 "formula": show(gp.prop.expr) if gp is not None else ""}}


def render_page(trace: Trace, model: GroundModel, divergence: Divergence | None = None,
                trace_name: str = "", story: Story | None = None) -> str:
    """The viewer page of `trace`, a trace of `model` (replayed: see `render_trace_page`)."""
    if story is None:
        actions, states = walk(model, trace)
        story = build_story(model, trace, actions, states)
    highlight = key_steps(trace)
    data = page_data(trace, model, story)
    variant = model.spec.variant_named(trace.variant) if trace.variant else None
    cfg = trace.config or {}
    overrides = cfg.get("overrides") or {}
    lanes = [{"title": story.title(ln), "key": lane_key(ln)} for ln in story.lanes]
    return _env().get_template("viewer.html.j2").render(
        trace=trace, name=trace_name or trace.property.get("name", "trace"), verb=_VERB.get(trace.kind, trace.kind),
        config=cfg.get("name", "?"), overrides=sorted(overrides.items()), variant=variant, divergence=divergence,
        lanes=lanes, lane_w=LANE_W, left=LEFT, chart=render_chart(story, highlight, trace.length,
                           "start: not known to be reachable" if trace.kind == "cti" else "initial state"),
        chart_w=width(story), chart_h=height(story), highlight=sorted(highlight),
        data=_script_json(data), messages=len(story.messages))


def _script_json(data: dict) -> str:
    """JSON safe inside a <script> element (no `</script>` or `<!--` can close or confuse it)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@dataclass(frozen=True)
class IndexEntry:
    page: str        # the viewer page, relative to the index
    name: str
    trace: Trace


def render_index(title: str, entries: list[IndexEntry]) -> str:
    return _env().get_template("index.html.j2").render(
        title=title, entries=sorted(entries, key=lambda e: e.page), verbs=_VERB)


class TraceNotConfirmed(TraceError):
    """A trace its spec does not confirm: a page would show what the spec does not do."""


def render_trace_page(trace: Trace, page_name: str = "", confirmed: bool = False,
                      model: GroundModel | None = None) -> tuple[str, Story]:
    """Replay `trace` (a page only shows what the spec confirms; `confirmed`: the checker has just
    built it from `model`, which a spec outside the catalogue must give), then render its page;
    returns the page and the story (for the PNG/SVG chart)."""
    report = None if confirmed else replay(trace)
    if report is not None and not report.confirmed:
        where = f" (at step {report.diverged_at})" if report.diverged_at is not None else ""
        raise TraceNotConfirmed(f"the trace does not replay against spec {trace.spec}{where}: {report.message}; "
                                "`txncheck replay TRACE` says more")
    if model is None:
        model = model_for(trace)
    try:  # the baseline is the trace's own spec without its variant: found by the trace's provenance, or
        # for an older trace by name in the catalogue, if that is the spec the model came from
        divergence = baseline_divergence(trace) if trace.spec_source or catalog_spec_is(model, trace) else None
    except TraceError:
        divergence = None
    actions, states = walk(model, trace)
    story = build_story(model, trace, actions, states)
    return render_page(trace, model, divergence, page_name, story), story
