"""`txncheck gate`: the gate file, its verdicts and exit codes, and every report CI systems read."""
import json
import os
import signal
import subprocess
import sys
import time

import jsonschema
import pytest
import xmlschema
from junitparser import JUnitXml

from txncheck.reports import gatefile
from txncheck.reports.atomic import write_atomic
from txncheck.reports.gate import EntryOutcome, Expectation, GateReport, PropertyReport
from txncheck.reports.gatefile import GateEntry, GateFileError
from txncheck.reports.github import annotations, command, escape_data, escape_property, summary_markdown
from txncheck.reports.sarif import schema
from txncheck.reports.source_location import locate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
ENV = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}

FAILING = """
[[entry]]
name = "two-golden"
spec = "twophase"
expect = "pass"
distinct = 289

[[entry]]
name = "two-variant-must-pass"
spec = "twophase"
variant = "commit-without-all-prepared"
expect = "pass"

[[entry]]
name = "two-ok"
spec = "twophase"
set = { rm = 2 }
expect = "pass"
"""


def gate(args, cwd, env=None):
    return subprocess.run([EXE, "gate", *args], capture_output=True, text=True, cwd=cwd,
                          env={**ENV, **(env or {})}, timeout=300)


def validate_sarif(path):
    jsonschema.Draft4Validator(schema()).validate(json.load(open(path)))


# the JUnit schema of Jenkins' xUnit plugin (MIT License; provenance in the file's header comment)
JUNIT_XSD = os.path.join(ROOT, "tests", "schemas", "junit-10.xsd")


def validate_junit(path):
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(path))


# ---- end to end: the project's own gate file, and a failing one ------------------------------------

def test_the_project_gate_file_passes_with_every_report(tmp_path):
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    p = gate([os.path.join(ROOT, "txncheck.toml"), "--out", str(tmp_path / "out"), "--jobs", "2",
              "--junit", str(tmp_path / "r" / "junit.xml"), "--sarif", str(tmp_path / "r.sarif"),
              "--summary", str(tmp_path / "summary.md")], tmp_path,
             {"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "::error" not in p.stdout
    names = ["twophase-tiny", "twophase-commit-without-all-prepared", "kafka-tiny-verify", "kafka-tiny-tv2",
             "kafka-tiny-tables", "twophase-tiny-induction"]
    # results in gate-file order whatever the workers' order; one progress line per entry
    assert [line.split()[0] for line in p.stdout.splitlines()[1:7]] == names
    assert sum("txncheck gate: [" in line for line in p.stderr.splitlines()) == 6
    validate_junit(tmp_path / "r" / "junit.xml")
    xml = JUnitXml.fromfile(str(tmp_path / "r" / "junit.xml"))
    suites = list(xml)
    assert [s.name for s in suites] == names
    assert xml.failures == 0 and xml.errors == 0
    assert xml.tests == sum(s.tests for s in suites) == sum(len(list(s)) for s in suites)
    two = suites[0]
    assert {c.name for c in two} == {"expect pass", "golden distinct", "golden depth", "time budget",
                                     "TCConsistent", "SomeCommit", "SomeAbort",
                                     # the committed txncheck-baseline.json is checked too
                                     "drift distinct", "drift depth", "drift witnesses", "drift rows"}
    # the symbolic entries: a test case per table check, per property proved, and their drift checks
    assert {c.name for c in suites[4]} == {"expect pass", "time budget", "determinism", "completeness", "type",
                                           "conformance", "drift obligations"}
    assert {c.name for c in suites[5]} == {"expect pass", "time budget", "TCConsistent", "drift proved"}
    assert "note:" not in p.stdout  # every entry is in the baseline, nothing new
    validate_sarif(tmp_path / "r.sarif")
    sarif = json.load(open(tmp_path / "r.sarif"))
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"twophase/TCConsistent", "kafka/ATOM-2"}
    assert all(r["level"] == "note" for r in results)  # known bugs still caught: notes, not errors
    summary = (tmp_path / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| entry")]
    assert len(rows) == 6 and all(line.count(" | ") == 8 for line in rows)
    assert "KIP-890 part 1 leaves the delayed produce" in rows[2]  # the entry's note
    assert "tables --verify: pass" in rows[4] and "bmc --induction 1: pass" in rows[5]
    assert step_summary.read_text() == "earlier step\n" + summary
    for n in names:
        assert (tmp_path / "out" / n / "result.json").exists()
        if n != "kafka-tiny-tables":  # table checks have no traces
            assert (tmp_path / "out" / n / "traces" / "index.html").exists()  # the artifact a reviewer opens
    assert (tmp_path / "out" / "kafka-tiny-verify" / "traces" / "ATOM-2.html").exists()
    verify = json.load(open(tmp_path / "out" / "kafka-tiny-verify" / "result.json"))
    assert verify["schema"] == "txncheck.result/1" and verify["verdict"] == "violation"
    assert json.load(open(tmp_path / "out" / "gate.json"))["schema"] == "txncheck.gate/1"


def test_a_failing_gate_exits_1_with_failures_annotations_and_sarif(tmp_path):
    (tmp_path / "txncheck.toml").write_text(FAILING)
    p = gate(["--junit", "junit.xml", "--sarif", "gate.sarif", "--jobs", "1"], tmp_path,
             {"GITHUB_ACTIONS": "true"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert "distinct states: expected 289, got 288" in p.stdout
    xml = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    by_name = {s.name: s for s in xml}
    validate_junit(tmp_path / "junit.xml")
    assert by_name["two-golden"].failures == 1
    assert by_name["two-ok"].failures == 0
    failed = {c.name: c for c in by_name["two-variant-must-pass"] if c.result}
    assert set(failed) == {"expect pass", "TCConsistent"}
    message = failed["TCConsistent"].result[0].message
    assert message.startswith("TCConsistent (always) violated after 3 steps; last step 3: RM-02")
    assert "traces/TCConsistent.json" in message
    assert xml.failures == 3
    lines = [line for line in p.stdout.splitlines() if line.startswith("::error")]
    prop_line, row_line = locate("twophase", "TCConsistent"), locate("twophase", "RM-02")
    # the spec is outside the gate's working directory here, so its path is absolute
    assert any(f"file={os.path.abspath(prop_line[0])},line={prop_line[1]}," in line for line in lines)
    assert any(f"file={os.path.abspath(row_line[0])},line={row_line[1]}," in line for line in lines)
    assert any(line.startswith("::error file=txncheck.toml,line=2,") and "289" in line for line in lines)
    validate_sarif(tmp_path / "gate.sarif")
    results = json.load(open(tmp_path / "gate.sarif"))["runs"][0]["results"]
    assert sorted(r["level"] for r in results) == ["error", "error"]
    # the counterexample as a code flow: each step at the line of the row it took, in the story's words
    violated = next(r for r in results if r["ruleId"] == "twophase/TCConsistent")
    flow = violated["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [f["location"]["message"]["text"] for f in flow] == [
        "step 1: TM  → Commit to every RM", "step 2: RM r1  ← Commit from TM", "step 3: RM r3  RMChooseToAbort"]
    assert flow[2]["location"]["physicalLocation"]["region"]["startLine"] == row_line[1]


STARTUP_BOUND = 300  # seconds: a hang, not a speed; a loaded machine starts the entry well within it


def _hidden(root):
    """Every hidden file or directory below `root` (a staging directory, a `.NAME.*.tmp`), sorted."""
    return sorted(os.path.join(d, n) for d, dirs, files in os.walk(root) for n in dirs + files if n.startswith("."))


def test_a_killed_gate_leaves_no_partial_report(tmp_path):
    (tmp_path / "txncheck.toml").write_text(
        '[[entry]]\nname = "slow"\nspec = "twophase"\nset = { rm = 8 }\nexpect = "pass"\n')
    old = '<?xml version="1.0"?>\n<testsuites name="earlier run"></testsuites>\n'
    (tmp_path / "junit.xml").write_text(old)
    proc = subprocess.Popen([EXE, "gate", "--junit", "junit.xml", "--jobs", "1"], cwd=tmp_path, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # kill only once the entry is writing (its staging directory exists), so the kill always lands mid-run
    deadline = time.monotonic() + STARTUP_BOUND
    while not [e for e in _hidden(tmp_path / "out") if os.path.basename(e).startswith(".txncheck-stage-")]:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the gate ended (exit {proc.returncode}) before its entry started writing: {out}{err}")
        assert time.monotonic() < deadline, f"the entry did not start writing within {STARTUP_BOUND} s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, out + err
    assert "Traceback" not in err
    assert (tmp_path / "junit.xml").read_text() == old
    assert sorted(os.listdir(tmp_path)) == ["junit.xml", "out", "txncheck.toml"]
    assert _hidden(tmp_path / "out") == []  # no staging directory, no half-written file, anywhere under out


def test_write_atomic_interrupted_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "report.xml"
    target.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["report.xml"]


# ---- the gate file --------------------------------------------------------------------------------

BAD = [
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\nexpext = 1', "unknown key 'expext'"),
    ('name = "a"\nspec = "twophaze"\nexpect = "pass"', "unknown spec 'twophaze'"),
    ('name = "a"\nspec = "twophase"\nconfig = "huge"\nexpect = "pass"', "huge"),
    ('name = "a"\nspec = "twophase"\nvariant = "nope"\nexpect = "violation"', "nope"),
    ('name = "a"\nspec = "twophase"\nexpect = "violation"\nproperties = ["Nope"]', "unknown property 'Nope'"),
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\ndistinct = "288"', "distinct must be a whole number"),
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\nbudget = true', "budget must be seconds"),
    ('name = "a"\nspec = "twophase"', "missing key 'expect'"),
    ('name = "a"\nspec = "twophase"\nexpect = "passes"', 'expect must be "pass" or "violation"'),
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\nset = { rmm = 3 }', "rmm"),
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\nproperties = ["TCConsistent"]', 'needs expect = "violation"'),
    ('name = "a"\nspec = "twophase"\nexpect = "pass"\nengine = "spark"', "not supported in a gate entry"),
    ('name = "a b"\nspec = "twophase"\nexpect = "pass"', "name must be letters"),
    ('name = "a"\nspec = "kafka"\nexpect = "violation"\nproperties = ["ATOM-2", "TRACK-1"]', "add continue = true"),
]


@pytest.mark.parametrize("body,named", BAD)
def test_a_bad_entry_is_one_message_naming_line_and_key(tmp_path, body, named):
    path = tmp_path / "txncheck.toml"
    path.write_text(f"# comment\n[[entry]]\n{body}\n")
    with pytest.raises(GateFileError) as err:
        gatefile.load(str(path))
    assert named in str(err.value)
    assert str(err.value).startswith(f"{path}:2: entry ")


@pytest.mark.parametrize("text,named", [
    ("[[entry]\n", "not valid TOML"),
    ("", "no entries"),
    ('[gate]\nx = 1\n', "unknown top-level key 'gate'"),
    ('[[entry]]\nname = "a"\nspec = "twophase"\nexpect = "pass"\n[[entry]]\nname = "a"\nspec = "twophase"\n'
     'expect = "pass"\n', "named twice"),
])
def test_a_bad_gate_file_is_named(tmp_path, text, named):
    path = tmp_path / "txncheck.toml"
    path.write_text(text)
    with pytest.raises(GateFileError, match=named):
        gatefile.load(str(path))


def test_bad_gate_files_and_flags_exit_2_without_a_traceback(tmp_path):
    (tmp_path / "bad.toml").write_text('[[entry]]\nname = "a"\nspec = "twophase"\nexpect = "pass"\nrm = 3\n')
    p = gate(["bad.toml"], tmp_path)
    assert p.returncode == 2 and "bad.toml:1: entry 'a': unknown key 'rm'" in p.stderr and "Traceback" not in p.stderr
    p = gate(["missing.toml"], tmp_path)
    assert p.returncode == 2 and "does not exist" in p.stderr
    (tmp_path / "ok.toml").write_text('[[entry]]\nname = "a"\nspec = "twophase"\nexpect = "pass"\n')
    for args, said in ((["ok.toml", "--only", "b"], "no entry named 'b'"), (["ok.toml", "--jobs", "0"], "--jobs"),
                       (["ok.toml", "--junit", str(tmp_path)], "is a directory")):
        p = gate(args, tmp_path)
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)


def test_the_gate_table_of_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[[tool.txncheck.gate.entry]]\nname = "two"\nspec = "twophase"\nexpect = "pass"\n')
    monkeypatch.chdir(tmp_path)
    assert gatefile.default_path() == "pyproject.toml"
    g = gatefile.load("pyproject.toml")
    assert [(e.name, e.line) for e in g.entries] == [("two", 4)]


def test_a_variant_entry_knows_what_it_must_break(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[[entry]]\nname = "v"\nspec = "twophase"\nvariant = "commit-without-all-prepared"\n'
                    'expect = "violation"\n')
    (entry,) = gatefile.load(str(path)).entries
    assert entry.breaks == ("TCConsistent",) and entry.config is None


# ---- the reports, from outcomes built by hand ------------------------------------------------------

def _outcome(doc):
    entry = GateEntry(name="e", spec="twophase", expect="pass", line=3)
    story = "TCConsistent (always) violated after 3 steps; last step 3: RM-02(rm=r3) [RM: RMChooseToAbort]; trace t|x"
    prop = PropertyReport("TCConsistent", "always", "violated", doc, False, False, 3, "out/gate/e/traces/T.json",
                          "RM-02", "RM-02(rm=r3)", story)
    return EntryOutcome(entry, "out/gate/e", "violation", 110, 3, 0.5, (prop,),
                        (Expectation("expect pass", False, "expected pass, got violation: TCConsistent violated"),
                         Expectation("golden distinct", False, "distinct states: expected 111, got 110")))


def test_annotations_are_escaped():
    assert escape_data("100% a\r\nb") == "100%25 a%0D%0Ab"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert command("error", "m", "f.py", 3, "T: x, y") == "::error file=f.py,line=3,title=T%3A x%2C y::m"
    lines = annotations(GateReport("txncheck.toml", (_outcome("50% of: RMs\ncommit, then\rabort"),)))
    assert all("\n" not in line and "\r" not in line for line in lines)
    first = lines[0]
    head, _, message = first[len("::error "):].partition("::")
    assert head.startswith("file=") and ",line=" in head and "title=txncheck e%3A TCConsistent violated" in head
    assert message.endswith("50%25 of: RMs%0Acommit, then%0Dabort")
    assert "%25" not in message.replace("50%25", "")  # escaped once, not twice
    assert lines[1].startswith(f"::error file={locate('twophase', 'RM-02')[0]},line={locate('twophase', 'RM-02')[1]},")
    assert lines[2].startswith("::error file=txncheck.toml,line=3,") and lines[2].endswith("expected 111, got 110")
    assert len(lines) == 3  # "expected pass" would only repeat the property's own annotation


def test_at_most_ten_annotations():
    many = GateReport("txncheck.toml", tuple(_outcome("d") for _ in range(6)))
    lines = annotations(many)
    assert len(lines) == 10 and "more errors not shown" in lines[-1]


def test_summary_is_a_markdown_table_with_escaped_cells():
    text = summary_markdown(GateReport("txncheck.toml", (_outcome("doc"),)))
    lines = text.splitlines()
    assert lines[0] == "## txncheck gate: FAILED (0/1 entries)"
    header = next(i for i, line in enumerate(lines) if line.startswith("| entry"))
    assert lines[header + 1].count("|") == lines[header].count("|")
    assert "[TCConsistent](out/gate/e/traces/T.json)" in lines[header + 2]
    assert "t\\|x" in text  # a pipe in a story does not split the table
