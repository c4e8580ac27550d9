"""Change review: what a protocol change does, from the `report.json` of the base and of the change.

Rows added, removed or changed (guard or update text, with a line diff), properties whose outcome
changed in a run both reports have, state counts and depths before and after, and variants that
stopped (or started) being caught. This is what a reviewer of a protocol change reads first.
"""
from __future__ import annotations

import difflib
import json
import os

from txncheck.spec.errors import ConfigError

from .report_model import REPORT_SCHEMA


def load_base(path: str) -> dict:
    """`path`: a report folder (its report.json) or the report.json itself."""
    f = os.path.join(path, "report.json") if os.path.isdir(path) else path
    try:
        with open(f, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"--compare {path}: no report.json there; give the folder `txncheck report` wrote for "
                          "the base (run it on the base version of the spec first)") from None
    except (OSError, ValueError) as err:
        raise ConfigError(f"--compare {path}: {f} is not readable JSON ({err}); write it again with "
                          "`txncheck report`") from None
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        raise ConfigError(f"--compare {path}: {f} is not a {REPORT_SCHEMA} report; write it again with "
                          "`txncheck report`")
    return data


def _rows(report: dict) -> dict[str, dict]:
    return {row["id"]: dict(row, actor=t["actor"]) for t in report["tables"] for row in t["rows"]}


def _text(row: dict) -> list[str]:
    return [f"from {row['from']} to {row['to']}"] + [f"guard: {g}" for g in row["guard"]] + \
           [f"update: {u}" for u in row["updates"]]


def compare(base: dict, head: dict) -> dict:
    if base["spec"]["name"] != head["spec"]["name"]:
        raise ConfigError(f"--compare: the base report is of spec {base['spec']['name']}, this one of "
                          f"{head['spec']['name']}; compare reports of one spec")
    old, new = _rows(base), _rows(head)
    changed = []
    for rid in sorted(set(old) & set(new)):
        a, b = _text(old[rid]), _text(new[rid])
        if a != b:
            diff = [line for line in difflib.unified_diff(a, b, lineterm="", n=0) if not line.startswith(("---", "+++", "@@"))]
            changed.append({"id": rid, "actor": new[rid]["actor"], "diff": diff})
    runs_old = {r["key"]: r for r in base["runs"]}
    runs_new = {r["key"]: r for r in head["runs"]}
    both = [k for k in runs_new if k in runs_old]
    outcomes = []
    for p in head["properties"]:
        q = next((x for x in base["properties"] if x["name"] == p["name"]), None)
        if q is None:
            continue
        for key in both:
            a, b = q["cells"].get(key), p["cells"].get(key)
            if a and b and (a["outcome"], a.get("depth")) != (b["outcome"], b.get("depth")):
                outcomes.append({"property": p["name"], "run": runs_new[key]["label"], "before": a, "after": b})
    space = [{"run": runs_new[k]["label"], "distinct": (runs_old[k]["distinct"], runs_new[k]["distinct"]),
              "depth": (runs_old[k]["depth"], runs_new[k]["depth"]),
              "verdict": (runs_old[k]["verdict"], runs_new[k]["verdict"])} for k in both]
    v_old = {v["name"]: v for v in base["variants"]}
    variants = []
    for v in head["variants"]:
        was = v_old.get(v["name"])
        if was is not None and was["matched"] != v["matched"]:
            variants.append({"name": v["name"], "before": was["matched"], "after": v["matched"]})
    props_old = {p["name"] for p in base["properties"]}
    props_new = {p["name"] for p in head["properties"]}
    return {"base": base["spec"]["name"],
            "rows_added": sorted(set(new) - set(old)), "rows_removed": sorted(set(old) - set(new)),
            "rows_changed": changed, "properties_added": sorted(props_new - props_old),
            "properties_removed": sorted(props_old - props_new), "outcomes": outcomes, "space": space,
            "variants": variants, "runs_only_base": sorted(set(runs_old) - set(runs_new)),
            "runs_only_head": sorted(set(runs_new) - set(runs_old))}
