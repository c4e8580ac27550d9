"""GitHub Actions: workflow-command annotations on the pull request, and the Markdown job summary.

Annotations follow GitHub's workflow-command syntax: `::error file=F,line=L,title=T::MESSAGE`, where
the message escapes `%`, CR and LF, and property values also `:` and `,` (GitHub's own escaping, as in
@actions/core). GitHub shows at most 10 error annotations per step, so at most 10 are printed, the
first ones in gate-file order, and a last line says how many were left out. Each failed property gives
one annotation at the property's source line and one at the source line of the trace's last row; an
entry that failed without a trace (a golden count, a known bug no longer caught) points at its entry in
the gate file.
"""
from __future__ import annotations

import os

from .gate import TABLE_CHECK, GateReport, property_location
from .source_location import display_path, locate

MAX_ANNOTATIONS = 10


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, file: str | None = None, line: int | None = None, title: str | None = None) -> str:
    props = [(k, v) for k, v in (("file", file), ("line", line), ("title", title)) if v is not None]
    head = f"::{kind}" + (" " + ",".join(f"{k}={escape_property(str(v))}" for k, v in props) if props else "")
    return f"{head}::{escape_data(message)}"


def annotations(report: GateReport) -> list[str]:
    """The `::error` lines for every failed entry, in gate-file order, at most MAX_ANNOTATIONS."""
    found: list[str] = []
    gate_file = display_path(os.path.abspath(report.path))
    for o in report.outcomes:
        if o.ok:
            continue
        spec = o.entry.spec
        failed_props = [p for p in o.properties if not p.ok]
        for p in failed_props:
            title = f"txncheck {o.name}: {p.name} {p.outcome}"
            message = p.story + (f"\n{p.doc}" if p.doc else "") + (f"\nnote: {o.entry.note}" if o.entry.note else "")
            where = property_location(spec, p)
            found.append(command("error", message, *(where or (None, None)), title=title))
            if p.last_row and p.kind != TABLE_CHECK:  # a table check's annotation is at its row already
                row = locate(spec, p.last_row)
                if row:
                    found.append(command("error", f"last step of the {p.name} trace: {p.last_label}\n{p.story}",
                                         *row, title=f"txncheck {o.name}: row {p.last_row} fired last"))
        for msg in o.failures_without_trace:
            found.append(command("error", msg + (f"\nnote: {o.entry.note}" if o.entry.note else ""), gate_file,
                                 o.entry.line or None, title=f"txncheck gate: {o.name}"))
    if len(found) > MAX_ANNOTATIONS:
        left = len(found) - MAX_ANNOTATIONS + 1
        found = found[:MAX_ANNOTATIONS - 1] + [command(
            "error", f"{left} more errors not shown as annotations (GitHub shows 10 per step); see the job log "
            "and the JUnit report", gate_file, None, title="txncheck gate: more errors")]
    return found


def _cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, line breaks folded."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def summary_markdown(report: GateReport, artifacts_url: str | None = None) -> str:
    ok = sum(o.ok for o in report.outcomes)
    head = "passed" if report.ok else "FAILED"
    lines = [f"## txncheck gate: {head} ({ok}/{len(report.outcomes)} entries)", "",
             f"Gate file `{report.path}`.", "",
             "| entry | expectation | verdict | result | distinct states | depth | seconds | traces | note |",
             "|---|---|---|---|---:|---:|---:|---|---|"]
    for o in report.outcomes:
        e = o.entry
        expect = (f"{e.command}: " if e.kind != "check" else "") + e.expect \
            + (f" of {', '.join(e.properties)}" if e.properties else "")
        if e.distinct is not None:
            expect += f"; distinct {e.distinct:,}"
        if e.depth is not None:
            expect += f"; depth {e.depth}"
        traces = [p for p in o.properties if p.trace and (not p.ok or p.outcome == "violated")]
        links = ", ".join(f"[{_cell(p.name)}]({_link(p.trace, artifacts_url)})" for p in traces) or "-"
        lines.append("| " + " | ".join(_cell(x) for x in (
            e.name, expect, o.verdict, "ok" if o.ok else "**failed**",
            f"{o.distinct:,}" if o.distinct is not None else "-", o.depth if o.depth is not None else "-",
            f"{o.seconds:.2f}" if not o.cached else "cached")) + f" | {links} | {_cell(e.note) if e.note else '-'} |")
    failures = [(o.name, m) for o in report.outcomes for m in o.failures]
    if failures:
        lines += ["", "### Failures", ""] + [f"- **{_cell(n)}**: {_cell(m)}" for n, m in failures]
    return "\n".join(lines) + "\n"


def _link(path: str, base: str | None) -> str:
    target = path.replace(os.sep, "/")
    return f"{base.rstrip('/')}/{target}" if base else target.replace(" ", "%20")
