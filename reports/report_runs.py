"""The checks a design-review report stands on: which runs, running them, or reading them back.

A report covers a spec's configurations × protocol versions (the spec's `protocol` constant, where
it has one) and its variants. Each run is an ordinary `txncheck check --continue` (so every
property's outcome is known, not only the first violation's), written as `check` writes it under
`runs/KEY/` of the report's folder, with a viewer page per trace; `--prove` adds k-induction's
verdict per property. `--from DIR` reads the `result.json` files a previous report or `check`
wrote instead, and renders the viewer pages of their traces into the report's folder.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check
from txncheck.spec.errors import ConfigError
from txncheck.spec.model import Spec
from txncheck.spec.request import ModelRequest
from txncheck.traces.schema import TraceError, load

from .run_output import RunOutput
from .writer import write_check, write_views

PROTOCOL = "protocol"  # the configuration constant whose choices are the protocol versions


@dataclass(frozen=True)
class RunPlan:
    key: str                                   # its folder under runs/
    config: str
    settings: tuple[tuple[str, object], ...]   # what differs from the named config (the protocol)
    variant: str | None = None

    @property
    def protocol(self) -> str | None:
        return dict(self.settings).get(PROTOCOL)


def protocols_of(spec: Spec) -> tuple[str, ...]:
    p = next((p for p in spec.params if p.name == PROTOCOL and p.choices), None)
    return tuple(p.choices) if p is not None else ()


def plan_runs(spec: Spec, configs=None, protocols=None, variants="all") -> list[RunPlan]:
    """Configs (default: every one not marked heavy) × protocols (default: every version), then
    the variants (`"all"`, `"none"` or names), each under its own config and settings."""
    names = [c.name for c in spec.configs]
    chosen = list(configs) if configs else [c.name for c in spec.configs if not c.heavy]
    for c in chosen:
        if c not in names:
            raise ConfigError(f"--config {c}: spec {spec.name} has no config {c}; its configs are {', '.join(names)}")
    versions = protocols_of(spec)
    if protocols:
        if not versions:
            raise ConfigError(f"--protocol: spec {spec.name} has no protocol versions (no `{PROTOCOL}` constant)")
        for p in protocols:
            if p not in versions:
                raise ConfigError(f"--protocol {p}: spec {spec.name}'s protocol versions are {', '.join(versions)}")
    plans = []
    for c in chosen:
        own = dict(spec.config(c).values).get(PROTOCOL, next((p.default for p in spec.params if p.name == PROTOCOL), None))
        for p in (protocols or versions or (None,)):
            settings = () if p is None or p == own else ((PROTOCOL, p),)
            plans.append(RunPlan(c + (f"-{PROTOCOL}={p}" if settings else ""), c, settings))
    known = [v.name for v in spec.variants]
    if variants in (None, "none") or variants == ["none"]:
        wanted = []
    elif variants == "all" or variants == ["all"]:
        wanted = known
    else:
        wanted = list(variants)
        for v in wanted:
            if v not in known:
                raise ConfigError(f"--variants {v}: spec {spec.name} has no variant {v}; its variants are "
                                  f"{', '.join(known) or 'none'}")
    for v in spec.variants:
        if v.name in wanted:
            plans.append(RunPlan(f"variant-{v.name}", v.config, tuple(v.settings), v.name))
    return plans


class _Under:
    """A RunOutput seen from one of its subfolders (a run's `runs/KEY/`)."""

    def __init__(self, out: RunOutput, prefix: str):
        self.out, self.prefix = out, prefix

    def write_json(self, rel: str, data) -> None:
        self.out.write_json(f"{self.prefix}/{rel}", data)

    def write_text(self, rel: str, text: str) -> None:
        self.out.write_text(f"{self.prefix}/{rel}", text)


def _pages(result_json: dict, key: str) -> dict[str, str]:
    """Each property's viewer page, relative to the report's folder."""
    out = {}
    for p in result_json["properties"]:
        if p.get("trace"):
            out[p["name"]] = f"runs/{key}/{p['trace'][:-len('.json')]}.html"
    return out


def run_plans(spec_name: str, plans: list[RunPlan], engine: str, out: RunOutput, prove: bool = False,
              say=None, timing: dict | None = None) -> list[dict]:
    """Run every plan with `engine`, writing each into `runs/KEY/` of `out`; returns the run records
    (`timing`, optional, receives the seconds spent on viewer pages)."""
    runs, pages = [], 0.0
    for plan in plans:
        if say:
            say(f"check {spec_name} {plan.key}")
        request = ModelRequest.of(spec_name, plan.config, dict(plan.settings), plan.variant)
        result = check(request, engine, ExploreOptions(stop_on_violation=False))
        sub = _Under(out, f"runs/{plan.key}")
        write_check(result, sub)
        t0 = time.perf_counter()
        write_views(result.traces, sub, f"{spec_name} · {plan.key}", model=request.ground())
        pages += time.perf_counter() - t0
        data = result.to_json()
        proof = _prove(request) if prove and plan.variant is None else None
        runs.append(_record(plan, data, proof))
    if timing is not None:
        timing["pages"] = pages
    return runs


def _prove(request: ModelRequest) -> dict:
    """k-induction (k = 1, the spec's strengthening invariants as lemmas) per always property:
    "proved" for every depth, or not."""
    from txncheck.checker.symbolic.induction import k_induction  # z3 only when proofs are asked for
    res = k_induction(request.ground(), 1, None, solver="smt")
    return {p.name: p.status for p in res.properties}


def _record(plan: RunPlan, data: dict, proof: dict | None) -> dict:
    return {"key": plan.key, "config": plan.config, "protocol": plan.protocol, "settings": dict(plan.settings),
            "variant": plan.variant, "result": data, "proof": proof, "pages": _pages(data, plan.key)}


def read_runs(spec: Spec, from_dir: str, out: RunOutput) -> list[dict]:
    """The runs a previous report (`runs/*/result.json`) or `txncheck check` (`*/result.json`,
    or `result.json` itself) wrote under `from_dir`, for `spec`; their traces' viewer pages are
    rendered into `runs/KEY/` of `out`."""
    if not os.path.isdir(from_dir):
        raise ConfigError(f"--from {from_dir}: no such directory; give the folder a report or `txncheck check` wrote")
    found = []
    for root, dirs, files in os.walk(from_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "traces")
        if root[len(from_dir):].count(os.sep) > 3:
            dirs[:] = []
        if "result.json" in files:
            found.append(os.path.join(root, "result.json"))
    runs = []
    for path in sorted(found):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as err:
            raise ConfigError(f"--from: {path} is not a readable result.json ({err}); rerun the check that wrote it")
        if not isinstance(data, dict) or data.get("schema") != "txncheck.result/1":
            raise ConfigError(f"--from: {path} is not a txncheck.result/1 file; give results written by "
                              "`txncheck check` or `txncheck report`")
        if data.get("spec") != spec.name:
            continue
        cfg = data["config"]
        own = dict(spec.config(cfg["name"]).values) if cfg["name"] in [c.name for c in spec.configs] else {}
        protocol = cfg["values"].get(PROTOCOL)
        settings = {PROTOCOL: protocol} if protocol is not None and own.get(PROTOCOL, protocol) != protocol else {}
        variant = data.get("variant")
        key = f"variant-{variant}" if variant else cfg["name"] + "".join(f"-{k}={v}" for k, v in settings.items())
        if any(r["key"] == key for r in runs):
            raise ConfigError(f"--from: two results for {key} under {from_dir} ({path}); keep one")
        plan = RunPlan(key, cfg["name"], tuple(settings.items()), variant)
        traces = {}
        for p in data["properties"]:
            if p.get("trace"):
                try:
                    traces[p["name"]] = load(os.path.join(os.path.dirname(path), p["trace"]))
                except TraceError as err:
                    raise ConfigError(f"--from: {err}") from None
        if traces:  # read from disk: replayed before a page shows them
            write_views(traces, _Under(out, f"runs/{key}"), f"{spec.name} · {key}", confirmed=False)
        runs.append(_record(plan, data, None))
    if not runs:
        raise ConfigError(f"--from {from_dir}: no result.json of spec {spec.name} under it")
    return sorted(runs, key=lambda r: _order(spec, r))


def _order(spec: Spec, run: dict) -> tuple:
    """The order `plan_runs` runs in: configs in the spec's order, each under its protocol versions
    in theirs, then the variants in the spec's order."""
    configs = [c.name for c in spec.configs]
    variants = [v.name for v in spec.variants]
    versions = list(protocols_of(spec))
    protocol = run["result"]["config"]["values"].get(PROTOCOL)
    if run["variant"]:
        return (1, variants.index(run["variant"]) if run["variant"] in variants else len(variants), 0, run["key"])
    return (0, configs.index(run["config"]) if run["config"] in configs else len(configs),
            versions.index(protocol) if protocol in versions else -1, run["key"])
