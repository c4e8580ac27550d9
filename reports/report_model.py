"""A design-review report as data (`report.json`, schema `txncheck.report/1`): every section is
built from the spec's IR and the runs' `result.json`, never written by hand. The HTML and the
Markdown (reports/report_render.py) are rendered from this alone, and `--compare` diffs two of
them (reports/report_compare.py).

No timestamps and no absolute paths: two reports of the same spec and runs are the same bytes
apart from the measured times.
"""
from __future__ import annotations

from importlib import resources

from txncheck.spec.expr import show
from txncheck.spec.listing import row_line
from txncheck.spec.model import Spec

from .report_runs import PROTOCOL, protocols_of

REPORT_SCHEMA = "txncheck.report/1"
HOLDS, VIOLATED, WITNESSED, UNWITNESSED, UNKNOWN, NA, PROVED = (
    "holds", "violated", "witnessed", "unwitnessed", "unknown", "n/a", "proved")


def run_label(run: dict) -> str:
    if run["variant"]:
        return run["variant"]
    protocol = run["result"]["config"]["values"].get(PROTOCOL)
    return run["config"] + (f" · {protocol}" if protocol else "")


def _protocol_of(run: dict) -> str | None:
    return run["result"]["config"]["values"].get(PROTOCOL)


def _run_summary(run: dict) -> dict:
    r, st = run["result"], run["result"]["stats"]
    return {"key": run["key"], "label": run_label(run), "config": run["config"], "protocol": _protocol_of(run),
            "variant": run["variant"], "verdict": r["verdict"], "complete": r["complete"],
            "stop_reason": r["stop_reason"], "engine": r["engine"], "distinct": st["distinct"],
            "generated": st["generated"], "depth": st["depth"], "seconds": round(st["seconds"], 2),
            "levels": st.get("levels") or [], "bytes_per_state": st.get("bytes_per_state"),
            "peak_memory_bytes": st.get("peak_memory_bytes"), "collision_probability": st.get("collision_probability"),
            "settings": run["settings"], "values": r["config"]["values"]}


def _cell(run: dict, name: str) -> dict:
    """One property under one run: its outcome, the depth of its trace and the trace's page."""
    r = run["result"]
    if name in r.get("not_applicable", []):
        return {"outcome": NA}
    p = next((p for p in r["properties"] if p["name"] == name), None)
    if p is None:
        return {"outcome": NA}
    out = {"outcome": p["outcome"]}
    if p.get("depth") is not None and p["outcome"] in (VIOLATED, WITNESSED):
        out["depth"] = p["depth"]
    if name in run["pages"]:
        out["page"] = run["pages"][name]
    if run.get("proof") and run["proof"].get(name) == PROVED and p["outcome"] == HOLDS:
        out["outcome"] = PROVED  # holds in the checked states, and k-induction proves it for every depth
    return out


def _fired(run: dict) -> dict[str, int]:
    return {c["row"]: c["fired"] for c in run["result"]["coverage"]}


def _tables(spec: Spec, runs: list[dict], figures: dict) -> list[dict]:
    fired = {run["key"]: _fired(run) for run in runs}
    # a result without inapplicable_rows (an older txncheck's) lists none: its rows count as applicable
    off = {run["key"]: set(run["result"].get("inapplicable_rows", ())) for run in runs}
    out = []
    for t in spec.tables:
        rows = []
        for r in t.rows:
            line = row_line(t, r)
            rows.append({"id": r.id, "trigger": r.trigger, "params": list(line.params),
                         "from": line.from_state, "to": line.to_state, "guard": [show(c) for c in r.guard],
                         "updates": [f"{show(u.target)} := {show(u.value)}" for u in r.updates],
                         "ref": r.ref, "tags": list(r.tags), "doc": r.doc,
                         "fired": {k: f.get(r.id, 0) for k, f in fired.items()},
                         "not_applicable": [k for k in fired if r.id in off[k]]})
        out.append({"actor": t.actor, "doc": t.doc, "status": t.status, "rows": rows,
                    "diagram": figures.get(f"status-{t.actor}")})
    return out


def _look_first(spec: Spec, main: list[dict], variants: list[dict], tables: list[dict]) -> list[dict]:
    items = []
    for run in main:
        for p in run["result"]["properties"]:
            if p["outcome"] == VIOLATED:
                items.append({"kind": "violation", "text": f"{p['name']} ({p['kind']}) is violated under "
                              f"{run_label(run)} after {p['depth']} steps", "page": run["pages"].get(p["name"])})
    for run in main:
        for p in run["result"]["properties"]:
            if p["outcome"] == UNWITNESSED:
                items.append({"kind": "unwitnessed", "text": f"sometimes {p['name']} is never witnessed under "
                              f"{run_label(run)}: what it witnesses may be unreachable, and invariants about it vacuous"})
    for v in variants:
        if not v["matched"]:
            items.append({"kind": "variant", "text": f"variant {v['name']} breaks none of {', '.join(v['breaks'])}: "
                          "the bug it plants is not caught"})
    never, off = never_fired(tables), not_applicable_rows(tables)
    if never:
        rows = f"{len(never)} rows never fire" if len(never) != 1 else "1 row never fires"
        left = f"{len(off)} rows" if len(off) != 1 else "1 row"
        items.append({"kind": "unfired", "text": f"{rows} in any checked configuration that lets them fire: "
                      + ", ".join(never)
                      + (f" ({left} not applicable to any checked configuration left out)" if off else "")})
    incomplete = [run_label(r) for r in main + [v["run"] for v in variants] if not r["result"]["complete"]
                  and r["result"]["stop_reason"] != "violation"]
    if incomplete:
        items.append({"kind": "incomplete", "text": "searches cut short (bounds or memory): " + ", ".join(incomplete)})
    unjudged = [f"{run_label(r)} ({', '.join(r['result']['stats']['unjudged'])})"
                for r in main + [v["run"] for v in variants] if r["result"]["stats"].get("unjudged")]
    if unjudged:
        items.append({"kind": "incomplete", "text": "properties not judged within --memory-budget (unknown): "
                      + ", ".join(unjudged)})
    return items


def never_fired(tables: list[dict]) -> list[str]:
    """Rows that fired in no run although some checked configuration lets them fire."""
    off = set(not_applicable_rows(tables))
    return [r["id"] for t in tables for r in t["rows"] if not any(r["fired"].values()) and r["id"] not in off]


def not_applicable_rows(tables: list[dict]) -> list[str]:
    """Rows no checked configuration lets fire (checker/applicable.py): switched off in every run."""
    return [r["id"] for t in tables for r in t["rows"] if r["fired"] and len(r["not_applicable"]) == len(r["fired"])]


def _variants(spec: Spec, runs: list[dict]) -> list[dict]:
    out = []
    by_name = {r["variant"]: r for r in runs if r["variant"]}
    for v in spec.variants:
        run = by_name.get(v.name)
        if run is None:
            continue
        broke = {}
        for p in run["result"]["properties"]:
            if p["outcome"] in (VIOLATED, UNWITNESSED):
                broke[p["name"]] = {"outcome": p["outcome"], "depth": p.get("depth"), "page": run["pages"].get(p["name"])}
        out.append({"name": v.name, "doc": v.doc, "ref": v.ref, "breaks": list(v.breaks), "config": v.config,
                    "settings": dict(v.settings), "trigger": v.trigger, "broke": broke,
                    "matched": any(b in broke for b in v.breaks), "run": run})
    return out


def findings_text(spec: Spec) -> str:
    if not spec.findings:
        return ""
    return resources.files("txncheck.spec").joinpath(spec.findings).read_text(encoding="utf-8")


def build_report(spec: Spec, runs: list[dict], figures: dict, engine: str) -> dict:
    """`figures`: name -> path relative to the report folder (status-ACTOR, levels)."""
    main = [r for r in runs if not r["variant"]]
    variants = _variants(spec, runs)
    tables = _tables(spec, runs, figures)
    keys = [r["key"] for r in main]
    properties = [{"name": p.name, "kind": p.kind, "doc": p.doc, "formula": show(p.expr), "ref": p.ref,
                   "cells": {r["key"]: _cell(r, p.name) for r in main}} for p in spec.properties]
    used = {r["config"] for r in runs}
    return {
        "schema": REPORT_SCHEMA,
        "spec": {"name": spec.name, "doc": spec.doc, "ref": spec.ref},
        "engine": engine,
        "configs": [{"name": c.name, "values": dict(c.values), "doc": c.doc, "heavy": c.heavy, "in_report": c.name in used}
                    for c in spec.configs],
        "protocols": list(protocols_of(spec)),
        "runs": [_run_summary(r) for r in runs],
        "main_runs": keys,
        "look_first": _look_first(spec, main, variants, tables),
        "tables": tables,
        "properties": properties,
        "variants": [{k: v for k, v in var.items() if k != "run"} | {"run": var["run"]["key"]} for var in variants],
        "never_fired": never_fired(tables),
        "not_applicable_rows": not_applicable_rows(tables),
        "figures": figures,
        "findings": findings_text(spec),
    }
