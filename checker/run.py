"""Run a check: ground the model request, run an engine, judge properties, rebuild traces.

Nothing here writes files: `txncheck.reports` writes a result and its traces as one unit.

`check(request, engine, options)` is the one entry point shared by the CLI, the tests and the
benchmarks; `check_spec` and `build_model` spell a request out of its parts.
"""
from __future__ import annotations

import time
from dataclasses import asdict, replace

from txncheck.spec.errors import ConfigError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.model import ALWAYS, EVENTUALLY, LEADS_TO, RECOVERABLE, SOMETIMES, Spec
from txncheck.spec.request import ModelRequest
from txncheck.traces.build import DEADLOCK_EXPLANATION, build_lasso_trace, build_trace, unrecoverable_explanation

from . import allocator, engines, liveness, recoverable, symmetry_check
from .applicable import inapplicable_rows
from .fingerprint import collision_probability
from .outcome import ExploreOptions, SearchOutcome, selected_properties
from .paths import InitialStates, concrete_path
from .progress import Progress
from .result import CheckResult, PropertyOutcome
from .resources import split_budget
from .vector import live
from .vector.reverse import JudgingGraph

DEFAULT_ENGINE = engines.DEFAULT_ENGINE


def build_model(spec: "Spec | str", config: str | None = None, overrides=(), variant: str | None = None) -> GroundModel:
    """The ground model of a request spelt out (the variant's settings merged under `overrides`)."""
    return ModelRequest.of(spec, config, dict(overrides), variant).ground()


def check(request: ModelRequest, engine: str = DEFAULT_ENGINE, options: ExploreOptions = ExploreOptions(),
          settings=None) -> CheckResult:
    """Ground `request`, search it with `engine` (its own `settings`, e.g. Spark's), judge the outcome."""
    chosen = engines.engine_named(engine)
    model = request.ground()
    cfg = model.config
    opts = options
    if opts.max_states is None and cfg.max_states is not None:
        opts = replace(opts, max_states=cfg.max_states)
    if opts.max_depth is None and cfg.max_depth is not None:
        opts = replace(opts, max_depth=cfg.max_depth)
    if opts.properties is not None:
        for n in opts.properties:
            model.spec.property(n)
            if n in model.not_applicable:
                raise ConfigError(f"property {n} does not apply to this configuration of {model.spec.name} "
                                  f"(see `txncheck specs {model.spec.name}`); choose a config that includes it")
    live = [p for p in selected_properties(model, opts) if p.kind in (EVENTUALLY, LEADS_TO)]
    if live:
        if opts.symmetry:
            raise ConfigError(f"{', '.join(p.name for p in live)}: eventually and leads_to properties are not checked "
                              "under --symmetry (a fair cycle of the reduced graph need not be one of the model); "
                              "run without --symmetry, or choose other properties with --property")
        liveness.fairness_groups(model)  # a misnamed row or parameter in the fairness is refused before the search
    if opts.symmetry:  # an unsound declaration would change verdicts silently: refused before the search
        breach = symmetry_check.find_breach(model, selected_properties(model, opts), opts.check_deadlock)
        if breach is not None:
            raise breach.error(model)
    with allocator.for_check(opts.memory_budget):
        outcome = engines.explore(chosen, request, model, opts, settings)
        if opts.memory_budget is not None:
            allocator.release()  # pages judging might not reuse would count against the budget (allocator.py)
        return judge(model, outcome, opts, engine)


def check_spec(spec: "Spec | str", config: str | None = None, overrides=(), variant: str | None = None,
               engine: str = DEFAULT_ENGINE, options: ExploreOptions = ExploreOptions(),
               settings=None, invariants: bool = False) -> CheckResult:
    """Check `spec` (optionally a variant of it) under a named config with overrides; `invariants`
    also checks its strengthening invariants (`Spec.with_invariants_checked`)."""
    return check(ModelRequest.of(spec, config, dict(overrides), variant, invariants), engine, options, settings)


def judge(model: GroundModel, outcome: SearchOutcome, options: ExploreOptions, engine: str) -> CheckResult:
    """Decide every property's outcome and the verdict, and rebuild the traces (in memory)."""
    t0 = time.perf_counter()
    selected = selected_properties(model, options)
    variant = model.spec.variant
    expected = set(model.spec.variant_named(variant).breaks) if variant else set()
    traces = {}
    unjudged: dict[str, str] = {}  # property -> why it could not be judged within --memory-budget
    groups = starts = None  # built once, on the first property or trace that needs them
    graph = JudgingGraph(outcome, options.memory_budget, options.workdir)  # likewise; out of core under a budget
    progress = Progress(options, engine)
    # the fair-cycle properties first: their graph and the edges by destination (which the recoverable ones
    # read, and a fair-cycle property only where it has a fair cycle) are then not held at once
    order = sorted(selected, key=lambda p: p.kind not in (EVENTUALLY, LEADS_TO))
    on_graph = [p.name for p in order if _judged_on_graph(p, outcome)]
    done: dict[str, PropertyOutcome] = {}

    def initial_states() -> InitialStates:
        nonlocal starts
        if starts is None:
            starts = InitialStates.of(model, options.symmetry)
        return starts

    def trace_for(name, index, kind, explanation=""):
        start = initial_states().start(outcome, index)
        acts = concrete_path(model, outcome, index, options.symmetry, start)
        tr = build_trace(model, acts, name, kind, engine, explanation, options.symmetry, initial=start)
        traces[name] = tr
        return tr

    try:
        for p in order:
            doc = p.prop.doc
            if p.kind == ALWAYS:
                if p.name in outcome.violations:
                    tr = trace_for(p.name, outcome.violations[p.name], "violation")
                    po = PropertyOutcome(p.name, p.kind, "violated", doc, tr.length, trace_path(p.name))
                else:
                    po = PropertyOutcome(p.name, p.kind, "holds" if outcome.complete else "unknown", doc)
            elif p.kind == SOMETIMES:
                if p.name in outcome.witnesses:
                    tr = trace_for(p.name, outcome.witnesses[p.name], "witness")
                    po = PropertyOutcome(p.name, p.kind, "witnessed", doc, tr.length, trace_path(p.name))
                else:
                    po = PropertyOutcome(p.name, p.kind, "unwitnessed" if outcome.complete else "unknown", doc)
            elif p.kind == RECOVERABLE:
                if p.name in on_graph or (outcome.complete and p.name in outcome.unrecoverable):
                    if p.name in outcome.unrecoverable:     # judged by the engine, where its edges are
                        bad = outcome.unrecoverable[p.name]
                    else:
                        _judging(progress, p, on_graph, t0)
                        bad = recoverable.check(model, outcome, p.name, graph)
                    if bad is None:
                        po = PropertyOutcome(p.name, p.kind, "holds", doc)
                    else:
                        tr = trace_for(p.name, bad, "unrecoverable", unrecoverable_explanation(p.prop))
                        po = PropertyOutcome(p.name, p.kind, "violated", doc, tr.length, trace_path(p.name))
                else:
                    po = PropertyOutcome(p.name, p.kind, "unknown", doc)
            elif p.kind in (EVENTUALLY, LEADS_TO):
                if p.name in on_graph:
                    groups = groups or liveness.fairness_groups(model)
                    _judging(progress, p, on_graph, t0)
                    try:
                        lasso = _lasso(model, outcome, p.name, groups, graph, options, initial_states)
                    except live.GraphTooLarge as err:  # unknown, not a refusal: the others keep their outcomes
                        unjudged[p.name] = str(err)
                        done[p.name] = replace(PropertyOutcome(p.name, p.kind, "unknown", doc),
                                               expected_to_break=p.name in expected)
                        continue
                    if lasso is None:
                        po = PropertyOutcome(p.name, p.kind, "holds", doc)
                    else:
                        tr = build_lasso_trace(model, list(lasso.actions), lasso.loop, lasso.start, p.name, engine,
                                               initial=lasso.initial)
                        traces[p.name] = tr
                        po = PropertyOutcome(p.name, p.kind, "violated", doc, tr.length, trace_path(p.name))
                else:
                    po = PropertyOutcome(p.name, p.kind, "unknown", doc)
            else:  # pragma: no cover
                continue
            done[p.name] = replace(po, expected_to_break=p.name in expected)
    finally:
        graph.close()
    outcomes = [done[p.name] for p in selected if p.name in done]  # in the spec's order, as are the traces
    traces = {p.name: traces[p.name] for p in selected if p.name in traces}
    if on_graph:
        progress.step(f"judged every property in {time.perf_counter() - t0:,.1f} s ({len(on_graph)} on the state graph)")
    deadlock = None
    if outcome.deadlock is not None:
        tr = trace_for("deadlock", outcome.deadlock, "deadlock", DEADLOCK_EXPLANATION)
        deadlock = {"depth": tr.length, "trace": trace_path("deadlock")}
    violated = any(o.outcome in ("violated", "unwitnessed") for o in outcomes) or deadlock is not None
    verdict = "violation" if violated else "pass" if outcome.complete and not unjudged else "incomplete"
    # a complete search whose judging did not fit the budget: the search's own stop reason does not apply
    stop_reason = "judging_memory" if unjudged and outcome.complete else outcome.stop_reason
    n = outcome.distinct
    fired_by_row: dict[str, int] = {}
    actions_by_row: dict[str, int] = {}
    for a in model.actions:
        fired_by_row[a.row_id] = fired_by_row.get(a.row_id, 0) + int(outcome.fired[a.id])
        actions_by_row[a.row_id] = actions_by_row.get(a.row_id, 0) + 1
    coverage = tuple({"row": r.id, "actor": r.actor, "trigger": r.trigger, "ground_actions": actions_by_row.get(r.id, 0),
                      "fired": fired_by_row.get(r.id, 0)} for r in model.spec.rows)
    inapplicable = inapplicable_rows(model)
    unfired = tuple(c["row"] for c in coverage if c["fired"] == 0 and c["row"] not in inapplicable)
    secs = outcome.elapsed
    stats = {
        "distinct": n, "generated": int(outcome.generated), "depth": outcome.depth,
        "levels": list(outcome.level_sizes), "seconds": round(secs, 3),
        "states_per_second": round(n / secs) if secs > 0 else None,
        "peak_memory_bytes": int(outcome.peak_memory), "store_bytes": int(outcome.store_bytes),
        "bytes_per_state": round(outcome.store_bytes / n, 1) if n else None,
        "collision_probability": collision_probability(n, int(outcome.generated)),
        "ground_actions": len(model.actions), "cells": model.width, "rows": len(model.spec.rows),
        "judge_seconds": round(time.perf_counter() - t0, 3), **outcome.extra,
    }
    if graph.spilled_bytes is not None:
        stats["judge_spilled_bytes"] = int(graph.spilled_bytes)
    if unjudged:
        stats["unjudged"] = dict(sorted(unjudged.items()))
    result = CheckResult(
        spec=model.spec.name, variant=variant, config=model.config.to_json(), engine=engine, verdict=verdict,
        complete=outcome.complete, stop_reason=stop_reason, stats=stats, properties=tuple(outcomes),
        coverage=coverage, unfired_rows=unfired, inapplicable_rows=inapplicable, deadlock=deadlock,
        not_applicable=model.not_applicable,
        options={k: v for k, v in asdict(options).items()
                 if k not in ("progress", "progress_interval", "workdir", "chunk_states", "visited_budget")},
        traces=traces)
    return result


def _judged_on_graph(p, outcome: SearchOutcome) -> bool:
    """Whether `judge` decides property `p` on the stored graph (the long part of judging a large one): the
    one place that says so, for the judging and for its progress lines."""
    if not (outcome.complete and outcome.edges is not None):
        return False
    if outcome.edges_for is not None and p.name not in outcome.edges_for:
        return False  # the edges are a part, enough for the properties named only
    return p.kind in (EVENTUALLY, LEADS_TO) or (p.kind == RECOVERABLE and p.name not in outcome.unrecoverable)


def _judging(progress: Progress, p, on_graph: list[str], since: float) -> None:
    progress.step(f"judging {p.name} ({p.kind}) on the state graph, {on_graph.index(p.name) + 1} of {len(on_graph)}, "
                  f"{time.perf_counter() - since:,.1f} s into judging")


def _lasso(model, outcome, name, groups, graph, options, initial_states):
    """`liveness.check`'s lasso for property `name`; under a budget the whole graph would outgrow, judged on
    the part a violation lies in (`vector/live.py`), which raises `live.GraphTooLarge` if even that does not fit."""
    if live.out_of_core(outcome, options.memory_budget):
        return live.check(model, outcome, name, groups, initial_states(), graph.spill_dir(),
                          split_budget(options.memory_budget).judging)
    return liveness.check(model, outcome, name, groups, graph, initial_states())


def trace_path(name: str) -> str:
    return f"traces/{name}.json"
