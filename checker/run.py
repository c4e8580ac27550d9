"""Run a check: build the model, run an engine, judge properties, rebuild traces.

Nothing here writes files: `txncheck.reports` writes a result and its traces as one unit.

`check_spec(spec, config=..., overrides=..., variant=..., engine=..., options=...)` is the one
entry point shared by the CLI, the tests and the benchmarks.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, replace

from txncheck.spec.errors import ConfigError, ResourceError
from txncheck.spec.ground import GroundModel, ground
from txncheck.spec.model import ALWAYS, RECOVERABLE, SOMETIMES, Spec
from txncheck.traces.build import build_trace

from . import recoverable
from .fingerprint import collision_probability
from .outcome import ExploreOptions, SearchOutcome, selected_properties
from .paths import concrete_path
from .resources import memory_limit, out_of_memory_message
from .result import CheckResult, PropertyOutcome

ENGINES = ("vector", "scalar", "spark")
DEFAULT_ENGINE = "vector"


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    partitions: int | None = None
    resume: str | None = None
    out: str | None = None
    driver_memory: str | None = None
    executor_memory: str | None = None


def build_model(spec: Spec, config: str | None = None, overrides=(), variant: str | None = None) -> GroundModel:
    s = spec.with_variant(variant)
    cfg = s.resolve_config(config or default_config(s, variant), dict(overrides))
    return ground(s, cfg)


def default_config(spec: Spec, variant: str | None) -> str | None:
    """A variant's own config, else the spec's first."""
    if variant:
        return spec.variant_named(variant).config
    return spec.configs[0].name if spec.configs else None


def variant_overrides(spec: Spec, variant: str | None) -> dict:
    return dict(spec.variant_named(variant).settings) if variant else {}


def explore(model: GroundModel, engine: str, options: ExploreOptions, spark: SparkSettings | None = None,
            model_ref=None) -> SearchOutcome:
    try:
        return _explore(model, engine, options, spark, model_ref)
    except MemoryError:
        # the vector engine keeps its checked levels itself; an engine that could not is left with nothing
        raise ResourceError(out_of_memory_message(memory_limit())) from None


def _explore(model, engine, options, spark, model_ref) -> SearchOutcome:
    if engine == "scalar":
        from .scalar import explore as run
        return run(model, options)
    if engine == "vector":
        try:
            from .vector.explore import explore as run
        except ImportError as err:  # pragma: no cover - the vector engine ships with the package
            raise ConfigError(f"the vector engine is unavailable ({err}); use --engine scalar") from None
        return run(model, options)
    if engine == "spark":
        from .spark.engine import explore as spark_explore
        from .spark.ref import ModelRef, SparkOptions
        spark = spark or SparkSettings()
        name, cfg, overrides, variant, invariants = model_ref
        ref = ModelRef(name, cfg, tuple((k, str(v)) for k, v in overrides), variant, options.symmetry, invariants)
        store = os.path.join(spark.out, "spark") if spark.out else None
        return spark_explore(ref, options, SparkOptions(master=spark.master, partitions=spark.partitions,
                                                        store=store, resume=spark.resume,
                                                        driver_memory=spark.driver_memory,
                                                        executor_memory=spark.executor_memory))
    raise ConfigError(f"unknown engine '{engine}'; choose one of {', '.join(ENGINES)}")


def check_spec(spec: Spec, config: str | None = None, overrides=(), variant: str | None = None,
               engine: str = DEFAULT_ENGINE, options: ExploreOptions = ExploreOptions(),
               spark: SparkSettings | None = None, invariants: bool = False) -> CheckResult:
    """Check `spec` (optionally a variant of it) under a named config with overrides; `invariants`
    also checks its strengthening invariants (`Spec.with_invariants_checked`)."""
    if invariants:
        spec = spec.with_invariants_checked()
    overrides = dict(overrides)
    vo = variant_overrides(spec, variant)
    merged = {**vo, **overrides}
    model = build_model(spec, config, merged, variant)
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
    model_ref = (spec.name, cfg.name, tuple(sorted(merged.items())), variant, invariants)
    outcome = explore(model, engine, opts, spark, model_ref)
    return judge(model, outcome, opts, engine)


def judge(model: GroundModel, outcome: SearchOutcome, options: ExploreOptions, engine: str) -> CheckResult:
    """Decide every property's outcome and the verdict, and rebuild the traces (in memory)."""
    t0 = time.perf_counter()
    selected = selected_properties(model, options)
    variant = model.spec.variant
    expected = set(model.spec.variant_named(variant).breaks) if variant else set()
    outcomes, traces = [], {}

    def trace_for(name, index, kind, explanation=""):
        acts = concrete_path(model, outcome, index, options.symmetry)
        tr = build_trace(model, acts, name, kind, engine, explanation, options.symmetry)
        traces[name] = tr
        return tr

    for p in selected:
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
            if outcome.complete and outcome.edges is not None:
                bad = recoverable.check(model, outcome, p.name)
                if bad is None:
                    po = PropertyOutcome(p.name, p.kind, "holds", doc)
                else:
                    excl = f" without {', '.join(p.prop.exclude_tags)} actions" if p.prop.exclude_tags else ""
                    tr = trace_for(p.name, bad, "unrecoverable",
                                   f"from the last state no state satisfying {p.name}'s goal is reachable{excl}")
                    po = PropertyOutcome(p.name, p.kind, "violated", doc, tr.length, trace_path(p.name))
            else:
                po = PropertyOutcome(p.name, p.kind, "unknown", doc)
        else:  # pragma: no cover
            continue
        outcomes.append(replace(po, expected_to_break=p.name in expected))
    deadlock = None
    if outcome.deadlock is not None:
        tr = trace_for("deadlock", outcome.deadlock, "deadlock", "no action is enabled and the state is not terminal")
        deadlock = {"depth": tr.length, "trace": trace_path("deadlock")}
    violated = any(o.outcome in ("violated", "unwitnessed") for o in outcomes) or deadlock is not None
    verdict = "violation" if violated else "pass" if outcome.complete else "incomplete"
    n = outcome.distinct
    fired_by_row: dict[str, int] = {}
    actions_by_row: dict[str, int] = {}
    for a in model.actions:
        fired_by_row[a.row_id] = fired_by_row.get(a.row_id, 0) + int(outcome.fired[a.id])
        actions_by_row[a.row_id] = actions_by_row.get(a.row_id, 0) + 1
    coverage = tuple({"row": r.id, "actor": r.actor, "trigger": r.trigger, "ground_actions": actions_by_row.get(r.id, 0),
                      "fired": fired_by_row.get(r.id, 0)} for r in model.spec.rows)
    unfired = tuple(c["row"] for c in coverage if c["fired"] == 0)
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
    result = CheckResult(
        spec=model.spec.name, variant=variant, config=model.config.to_json(), engine=engine, verdict=verdict,
        complete=outcome.complete, stop_reason=outcome.stop_reason, stats=stats, properties=tuple(outcomes),
        coverage=coverage, unfired_rows=unfired, deadlock=deadlock, not_applicable=model.not_applicable,
        options={k: v for k, v in asdict(options).items() if k not in ("progress", "progress_interval", "workdir")},
        traces=traces)
    return result


def trace_path(name: str) -> str:
    return f"traces/{name}.json"
