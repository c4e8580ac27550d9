"""`txncheck report`: the design-review document, as a user runs it, opened in a real headless
Chromium and printed to PDF; --from, --compare and bad input."""
import json
import os
import re
import subprocess
import sys

import pytest

from browser_env import Page, browser, chromium_path, require_browser

require_browser()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")


def txncheck(*args, cwd, env=None):
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests", "models"), **(env or {}))
    p = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, env=e, timeout=900)
    assert "Traceback" not in p.stderr, p.stderr
    return p


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("report")


@pytest.fixture(scope="module")
def twophase_report(work):
    p = txncheck("report", "twophase", "--out", "tp", "--prove", cwd=work)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("report: tp/report.html\nmarkdown: tp/report.md")
    return work / "tp"


@pytest.fixture(scope="module")
def kafka_report(work):
    """Kafka's tiny config under the three protocol versions and one variant: the report's shape at
    the scale of the shipped model, in CI time."""
    p = txncheck("report", "kafka", "--config", "tiny", "--variants", "B1-late-produce", "B10-no-marker-cepoch-check",
                 "--out", "kafka", cwd=work)
    assert p.returncode == 0, p.stderr
    return work / "kafka"


@pytest.fixture(scope="module")
def chromium():
    with browser() as b:
        yield b


def test_the_report_has_its_files_and_data(twophase_report):
    d = json.loads((twophase_report / "report.json").read_text())
    assert d["schema"] == "txncheck.report/1"
    assert [r["key"] for r in d["runs"]] == ["tiny", "ci", "nightly", "variant-commit-without-all-prepared"]
    tc = next(p for p in d["properties"] if p["name"] == "TCConsistent")
    assert {c["outcome"] for c in tc["cells"].values()} == {"proved"}  # holds, and k-induction proves it
    v = d["variants"][0]
    assert v["name"] == "commit-without-all-prepared" and v["matched"] and v["broke"]["TCConsistent"]["depth"] == 3
    assert d["never_fired"] == [] and d["look_first"] == []
    for name in ("status-TM", "status-RM", "levels-tiny"):
        assert (twophase_report / d["figures"][name]).read_bytes()[:4] == b"\x89PNG"


def test_every_trace_link_resolves_to_a_viewer_page(twophase_report, kafka_report):
    for folder in (twophase_report, kafka_report):
        html = (folder / "report.html").read_text()
        md = (folder / "report.md").read_text()
        links = set(re.findall(r'href="(runs/[^"#]+)"', html)) | set(re.findall(r"\]\((runs/[^)#]+)\)", md))
        assert links, folder
        for link in links:
            assert (folder / link).is_file(), link


def test_the_markdown_is_what_github_renders(kafka_report):
    md = (kafka_report / "report.md").read_text()
    assert not re.search(r"<[a-zA-Z/!]", md), "GitHub strips HTML: the Markdown must not carry any"
    for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert not img.startswith(("/", "http", "data:")) and (kafka_report / img).is_file(), img
    # every table row has as many cells as its header
    lines = md.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("|---") or line.startswith("|--"):
            width = lines[k - 1].count(" | ") + 1
            j = k + 1
            while j < len(lines) and lines[j].startswith("| "):
                cells = re.split(r"(?<!\\)\|", lines[j].strip())[1:-1]
                assert len(cells) == width, (lines[k - 1], lines[j])
                j += 1
    for heading in ("## 1. Summary", "## 2. The protocol", "## 3. Properties", "## 4. Known bugs",
                    "## 5. Coverage and state space", "## 6. Findings"):
        assert heading in md


def test_the_kafka_report_shows_the_protocol_versions(kafka_report):
    d = json.loads((kafka_report / "report.json").read_text())
    assert d["main_runs"] == ["tiny-protocol=kip98", "tiny-protocol=verify", "tiny"]  # the versions in history's order
    assert [r["label"] for r in d["runs"][:3]] == ["tiny · kip98", "tiny · verify", "tiny · tv2"]
    track = next(p for p in d["properties"] if p["name"] == "TRACK-1")["cells"]
    assert track["tiny"]["outcome"] == "holds" and track["tiny-protocol=kip98"]["outcome"] == "violated"
    atom2 = next(p for p in d["properties"] if p["name"] == "ATOM-2")["cells"]
    # the Java client (every shipped config's) closes B1 (b) under verify, not under kip98: spec/FINDINGS.md F1
    assert atom2["tiny-protocol=verify"]["outcome"] == "holds" and atom2["tiny-protocol=kip98"]["outcome"] == "violated"
    assert {v["name"]: v["matched"] for v in d["variants"]} == {"B1-late-produce": True,
                                                                  "B10-no-marker-cepoch-check": True}
    assert any(i["kind"] == "violation" and "kip98" in i["text"] for i in d["look_first"])
    assert "F1." in d["findings"]
    assert "status-coordinator" in d["figures"] and "status-producer" in d["figures"]


def test_the_page_renders_in_a_browser_with_every_figure(kafka_report, chromium):
    pg = Page(chromium, kafka_report / "report.html", width=1300)
    p = pg.page
    for sid in ("summary", "protocol", "properties", "variants", "coverage", "findings"):
        assert p.locator(f"section#{sid} h2").count() == 1
    imgs = p.locator("img")
    assert imgs.count() >= 3
    assert p.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
    assert pg.errors == [] and pg.network() == []
    # a trace link opens its viewer page
    link = p.locator("#matrix a").first
    href = link.get_attribute("href")
    viewer = Page(chromium, kafka_report / href)
    assert viewer.page.locator("#panel h2").count() == 1 and viewer.errors == []


def test_the_pdf_print_has_every_section(kafka_report, tmp_path):
    from pypdf import PdfReader
    pdf = tmp_path / "report.pdf"
    subprocess.run([chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", "file://" + str(kafka_report / "report.html")],
                   capture_output=True, timeout=120, check=True)
    reader = PdfReader(str(pdf))
    assert len(reader.pages) >= 6  # every section starts a page
    text = " ".join(page.extract_text() for page in reader.pages)
    for needle in ("1. Summary", "2. The protocol", "3. Properties", "4. Known bugs",
                   "5. Coverage and state space", "6. Findings", "B1-late-produce", "TRACK-1"):
        assert needle in text, needle


def test_a_second_report_into_the_same_folder_replaces_it(work):
    for _ in range(2):
        p = txncheck("report", "twophase", "--config", "tiny", "--variants", "none", "--out", "again", "--quiet",
                     cwd=work)
        assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(work / "again")) == ["figures", "report.html", "report.json", "report.md", "runs"]


def test_from_reads_the_results_a_report_wrote(twophase_report, work):
    p = txncheck("report", "twophase", "--from", "tp", "--out", "tp-again", cwd=work)
    assert p.returncode == 0, p.stderr
    a = json.loads((twophase_report / "report.json").read_text())
    b = json.loads((work / "tp-again" / "report.json").read_text())
    assert [r["key"] for r in a["runs"]] == [r["key"] for r in b["runs"]]
    strip = lambda ps: {p["name"]: {k: (c["outcome"] if c["outcome"] != "proved" else "holds", c.get("depth"))
                                    for k, c in p["cells"].items()} for p in ps}
    assert strip(a["properties"]) == strip(b["properties"])
    assert (work / "tp-again" / "runs" / "tiny" / "traces" / "SomeCommit.html").is_file()


def test_compare_shows_what_a_change_does(twophase_report, work):
    p = txncheck("report", "twophase_changed:SPEC", "--config", "tiny", "--compare", "tp", "--out", "changed",
                 cwd=work)
    assert p.returncode == 0, p.stderr
    d = json.loads((work / "changed" / "report.json").read_text())
    c = d["compare"]
    assert [r["id"] for r in c["rows_changed"]] == ["TM-02"]
    assert "-guard: ∀r∈RM: tmPrepared[r]" in c["rows_changed"][0]["diff"]
    o = next(o for o in c["outcomes"] if o["property"] == "TCConsistent")
    assert (o["before"]["outcome"], o["after"]["outcome"]) == ("proved", "violated")
    md = (work / "changed" / "report.md").read_text()
    assert md.index("## Change review") < md.index("## 1. Summary")


@pytest.mark.parametrize("args, needle", [
    (("report", "twophase", "--config", "huge"), "has no config huge"),
    (("report", "twophase", "--protocol", "tv2"), "has no protocol versions"),
    (("report", "kafka", "--variants", "B99"), "has no variant B99"),
    (("report", "twophase", "--from", "nowhere"), "--from nowhere: no such directory"),
    (("report", "twophase", "--compare", "nowhere", "--config", "tiny"), "--compare nowhere: no report.json"),
    (("report", "twophase", "--engine", "spark"), "use vector or scalar"),
])
def test_bad_input_is_one_message_and_no_report(work, args, needle):
    out = work / "bad"
    p = txncheck(*args, "--out", str(out), cwd=work)
    assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not out.exists()
