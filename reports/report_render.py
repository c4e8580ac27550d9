"""`report.html` and `report.md` from a report's data (reports/report_model.py).

The HTML is one file: its figures are inlined as data URIs, so it opens from `file://` and prints
to PDF as it is (each section starts a page). The Markdown is what GitHub renders: pipe tables,
figures as relative `figures/*.png` links, and no HTML at all (GitHub strips most of it).
"""
from __future__ import annotations

import base64
import os
from functools import cache

import jinja2
from markdown_it import MarkdownIt

OUTCOME_TEXT = {"holds": "holds", "violated": "violated", "witnessed": "witnessed", "unwitnessed": "not witnessed",
                "unknown": "unknown", "n/a": "n/a", "proved": "proved"}


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("txncheck.reports", "templates"),
                             autoescape=jinja2.select_autoescape(["html"], default_for_string=False),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["md_cell"] = md_cell
    env.filters["num"] = lambda n: f"{n:,}" if isinstance(n, int) else ("" if n is None else str(n))
    env.filters["prob"] = _prob
    env.globals["outcome_text"] = OUTCOME_TEXT
    env.filters["findings_body"] = findings_body
    return env


def _prob(p) -> str:
    if p is None:
        return ""
    return "< 1e-15" if p < 1e-15 else f"{p:.1e}"


def md_cell(text) -> str:
    """Text safe inside a GitHub table cell: no pipe, no newline, no HTML."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return s.replace("<", "&lt;").replace(">", "&gt;")


def _data_uri(folder: str, rel: str | None) -> str | None:
    if not rel:
        return None
    with open(os.path.join(folder, rel), "rb") as f:
        kind = "image/svg+xml" if rel.endswith(".svg") else "image/png"
        return f"data:{kind};base64," + base64.b64encode(f.read()).decode("ascii")


def findings_body(markdown: str) -> str:
    """The findings file as a part of the report: without its own title, its headings one level
    down (its `## F1` sits under the report's `## 6. Findings`)."""
    body = markdown.split("\n", 1)[1] if markdown.startswith("# ") else markdown
    out, fenced = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(out)


def _findings_html(markdown: str) -> str:
    if not markdown:
        return ""
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(findings_body(markdown))


def render_html(report: dict, folder: str) -> str:
    """`folder`: where the figures were written (they are inlined)."""
    figures = {name: _data_uri(folder, rel) for name, rel in report["figures"].items()}
    return _env().get_template("report.html.j2").render(r=report, figures=figures,
                                                        findings=_findings_html(report["findings"]))


def render_markdown(report: dict) -> str:
    return _env().get_template("report.md.j2").render(r=report)
