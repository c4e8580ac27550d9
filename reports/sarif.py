"""The gate as SARIF 2.1.0, for code-scanning tools (GitHub code scanning, SARIF viewers).

One rule per property (`SPEC/PROPERTY`, its doc as the description) and one for gate expectations.
One result per violated property (for a `tables` entry, per check with findings, located at the row of its
first finding): located at the property's definition in the spec's source, with
the row that fired last as a related location, the trace path in the message, and the whole
counterexample as a code flow (each step at the row it took, in the story's words). A violation the
entry expects (a known-bug variant still caught) is a `note`; one that fails the gate is an `error`.
An entry that failed without a violation (a golden count, a bug no longer caught) is one `error` at its
entry in the gate file. `reports/schemas/sarif-2.1.0.json` is the OASIS schema (errata 01) that the
tests validate this output against.
"""
from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from .atomic import write_atomic
from .gate import TABLE_CHECK, GateReport, property_location
from .source_location import display_path, locate

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
EXPECTATION_RULE = "txncheck/gate-expectation"


def schema() -> dict:
    """The bundled SARIF 2.1.0 JSON schema."""
    return json.loads(resources.files("txncheck.reports").joinpath("schemas/sarif-2.1.0.json").read_text("utf-8"))


def _location(where: tuple[str, int] | None, message: str | None = None, ident: int | None = None) -> dict | None:
    if where is None:
        return None
    # a path under the working directory stays relative (code scanning resolves it in the repository)
    uri = Path(where[0]).as_uri() if os.path.isabs(where[0]) else where[0].replace(os.sep, "/")
    loc: dict = {"physicalLocation": {"artifactLocation": {"uri": uri},
                                      "region": {"startLine": where[1]}}}
    if ident is not None:
        loc["id"] = ident
    if message:
        loc["message"] = {"text": message}
    return loc


def sarif_log(report: GateReport, version: str = "") -> dict:
    rules: dict[str, dict] = {EXPECTATION_RULE: {
        "id": EXPECTATION_RULE, "name": "GateExpectation",
        "shortDescription": {"text": "A gate entry did not show what its gate file says it must"}}}
    results = []
    gate_file = display_path(os.path.abspath(report.path))
    for o in report.outcomes:
        spec = o.entry.spec
        for p in o.properties:
            if p.outcome != "violated" and p.ok:
                continue
            rule_id = f"{spec}/{p.name}"
            rules.setdefault(rule_id, {"id": rule_id, "name": p.name,
                                       "shortDescription": {"text": p.doc or f"{p.kind} property {p.name}"},
                                       "properties": {"kind": p.kind}})
            loc = _location(property_location(spec, p))
            row = _location(locate(spec, p.last_row), f"row {p.last_row} fired last: {p.last_label}", 1) \
                if p.last_row and p.kind != TABLE_CHECK else None  # a table check is located at its row already
            result = {"ruleId": rule_id, "level": "error" if not p.ok else "note",
                      "message": {"text": f"{o.name}: {p.story}"},
                      "locations": [loc] if loc else [],
                      "properties": {"entry": o.name, "outcome": p.outcome, "expected": p.ok}}
            if row:
                result["relatedLocations"] = [row]
            flow = [{"location": loc} for loc in (_location(locate(spec, r), text) for r, text in p.steps) if loc]
            if flow:  # the counterexample, step by step, at the rows it took (a code scanner's "show paths")
                result["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
            if p.trace:
                result["properties"]["trace"] = p.trace
            results.append(result)
        for msg in o.failures_without_trace:
            loc = _location((gate_file, o.entry.line) if o.entry.line else None)
            results.append({"ruleId": EXPECTATION_RULE, "level": "error", "message": {"text": f"{o.name}: {msg}"},
                            "locations": [loc] if loc else [], "properties": {"entry": o.name}})
    driver = {"name": "txncheck",
              "rules": [rules[k] for k in sorted(rules)]}
    if version:
        driver["version"] = version
    index = {r["id"]: i for i, r in enumerate(driver["rules"])}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION,
            "runs": [{"tool": {"driver": driver}, "results": results,
                      "invocations": [{"executionSuccessful": True,
                                       "exitCode": 0 if report.ok else 1}]}]}


def write_sarif(report: GateReport, path: str, version: str = "") -> None:
    write_atomic(path, json.dumps(sarif_log(report, version), indent=1, sort_keys=True) + "\n")
