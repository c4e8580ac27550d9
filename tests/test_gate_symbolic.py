"""`txncheck gate`: symbolic entries (`tables --verify`, `bmc`), the time budget that stops an entry, and
the per-entry memory bound; every report (JUnit against the Jenkins schema, SARIF, summary, annotations)."""
import json
import os
import signal
import subprocess
import time

import pytest
from junitparser import JUnitXml

from test_gate import ENV, EXE, gate, validate_junit, validate_sarif
from txncheck.reports import gatefile
from txncheck.reports.gatefile import GateFileError

SYMBOLIC = """
[[entry]]
name = "tables"
spec = "twophase"
kind = "tables"
expect = "pass"
note = "50% of: the tables, checked"

[[entry]]
name = "tables-d4"
spec = "kafka"
config = "tiny"
variant = "D4-no-sequence-check"
kind = "tables"
checks = ["determinism"]
expect = "violation"

[[entry]]
name = "induction"
spec = "twophase"
kind = "bmc"
induction = 1
expect = "pass"

[[entry]]
name = "bug-bmc"
spec = "twophase"
variant = "commit-without-all-prepared"
kind = "bmc"
depth = 5
expect = "violation"
properties = ["TCConsistent"]

[[entry]]
name = "bug-must-be-proved"
spec = "twophase"
variant = "commit-without-all-prepared"
kind = "bmc"
induction = 2
expect = "pass"
note = "a known bug: cannot be proved"
"""


# ---- the gate file --------------------------------------------------------------------------------

BAD = [
    ('kind = "tables"\nexpect = "pass"\ndistinct = 3', "key 'distinct' does not apply to a tables entry (it is for "
     "kind = 'check')"),
    ('kind = "tables"\nexpect = "pass"\nengine = "scalar"', "key 'engine' does not apply to a tables entry"),
    ('kind = "bmc"\nexpect = "pass"\nchecks = ["type"]\ndepth = 2', "key 'checks' does not apply to a bmc entry"),
    ('kind = "bmc"\nexpect = "pass"', "exactly one of depth = K"),
    ('kind = "bmc"\ndepth = 3\ninduction = 2\nexpect = "pass"', "exactly one of depth = K"),
    ('kind = "bmc"\ninduction = "2"\nexpect = "pass"', "induction must be the largest k of k-induction"),
    ('kind = "bmc"\ninduction = 0\nexpect = "pass"', "induction must be 1 or more"),
    ('kind = "bmc"\ndepth = 3\nsolver = "cvc5"\nexpect = "pass"', "unknown solver 'cvc5'"),
    ('kind = "bmc"\ndepth = 3\nexpect = "violation"\nproperties = ["SomeCommit"]', "not an always property"),
    ('kind = "smt"\nexpect = "pass"', "unknown kind 'smt'"),
    ('kind = 3\nexpect = "pass"', "kind must be one of check, tables, bmc"),
    ('kind = "tables"\nchecks = ["determinsm"]\nexpect = "pass"', "unknown table check 'determinsm'"),
    ('kind = "tables"\nchecks = []\nexpect = "pass"', "checks is empty"),
    ('kind = "tables"\ntables = ["XX"]\nexpect = "pass"', "spec twophase has no table 'XX'; its tables are: RM, TM"),
    ('kind = "tables"\nassume_invariants = "yes"\nexpect = "pass"', "assume_invariants must be true or false"),
    ('expect = "pass"\nmax_memory = 0', "max_memory must be a positive number of MiB"),
    ('expect = "pass"\nmax_memory = 1.5', "max_memory must be a whole number of MiB"),
    ('expect = "pass"\nnote = 3', "note must be a string"),
]


@pytest.mark.parametrize("body,named", BAD)
def test_a_bad_symbolic_entry_is_one_message_naming_line_and_key(tmp_path, body, named):
    path = tmp_path / "txncheck.toml"
    path.write_text(f'# comment\n[[entry]]\nname = "a"\nspec = "twophase"\n{body}\n')
    with pytest.raises(GateFileError) as err:
        gatefile.load(str(path))
    assert named in str(err.value)
    assert str(err.value).startswith(f"{path}:2: entry 'a': ")


def test_symbolic_entries_read_as_their_commands(tmp_path):
    path = tmp_path / "txncheck.toml"
    path.write_text(SYMBOLIC)
    entries = {e.name: e for e in gatefile.load(str(path)).entries}
    assert entries["tables"].command == "tables --verify" and entries["tables"].note == "50% of: the tables, checked"
    assert entries["tables-d4"].checks == ("determinism",)
    assert entries["induction"].command == "bmc --induction 1" and entries["induction"].depth is None
    bug = entries["bug-bmc"]
    assert bug.command == "bmc --depth 5" and bug.bound == 5 and bug.depth is None  # depth is bmc's bound here


# ---- end to end -----------------------------------------------------------------------------------

def test_symbolic_entries_feed_every_report(tmp_path):
    (tmp_path / "txncheck.toml").write_text(SYMBOLIC)
    p = gate(["--junit", "junit.xml", "--sarif", "gate.sarif", "--summary", "summary.md", "--jobs", "2"], tmp_path,
             {"GITHUB_ACTIONS": "true"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    results = {line.split()[0]: line for line in p.stdout.splitlines() if line.startswith("  ") and line[2] != " "}
    assert "ok" in results["tables"] and "tables --verify: expect pass" in results["tables"]
    assert "got findings" in results["tables-d4"] and "319 obligations" in results["tables-d4"]
    assert "1 of 1 proved" in results["induction"]
    assert "got violation" in results["bug-bmc"]
    assert "FAILED" in results["bug-must-be-proved"] and "got incomplete" in results["bug-must-be-proved"]
    assert "expected pass, got incomplete: TCConsistent cti at depth 2" in p.stdout
    assert "(a known bug: cannot be proved)" in p.stdout  # the note of a failed entry

    validate_junit(tmp_path / "junit.xml")
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "junit.xml"))}
    assert {c.name for c in suites["tables"]} == {"expect pass", "determinism", "completeness", "type", "conformance"}
    assert {c.name for c in suites["tables-d4"]} == {"expect violation", "determinism"}
    failed = {c.name: c.result[0].message for c in suites["bug-must-be-proved"] if c.result}
    assert set(failed) == {"expect pass", "TCConsistent"}
    assert failed["TCConsistent"].startswith("TCConsistent (always) not proved: counterexample to 2-induction")
    assert sum(s.failures for s in suites.values()) == 2

    validate_sarif(tmp_path / "gate.sarif")
    sarif = json.load(open(tmp_path / "gate.sarif"))["runs"][0]["results"]
    by_rule = {(r["ruleId"], r["properties"]["entry"]): r for r in sarif}
    d4 = by_rule[("kafka/determinism", "tables-d4")]  # a finding is located at its row
    assert d4["level"] == "note" and d4["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "partition.py")
    assert by_rule[("twophase/TCConsistent", "bug-bmc")]["level"] == "note"
    bug = by_rule[("twophase/TCConsistent", "bug-bmc")]
    assert bug["codeFlows"][0]["threadFlows"][0]["locations"]  # the bmc counterexample, step by step
    assert by_rule[("twophase/TCConsistent", "bug-must-be-proved")]["level"] == "error"

    summary = (tmp_path / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| entry")]
    assert len(rows) == 5 and all(line.count(" | ") == 8 for line in rows)
    assert "| tables --verify: pass | pass | ok |" in rows[0] and "50% of: the tables, checked |" in rows[0]
    assert "bmc --induction 2: pass | incomplete | **failed**" in rows[4]

    errors = [line for line in p.stdout.splitlines() if line.startswith("::error")]
    assert errors and all("bug-must-be-proved" in line for line in errors)
    assert any("%0Anote: a known bug: cannot be proved" in line for line in errors)

    out = tmp_path / "out" / "gate"
    tables = json.load(open(out / "tables-d4" / "result.json"))
    assert tables["schema"] == "txncheck.tables/1" and not tables["verify"]["ok"]
    assert (out / "bug-bmc" / "traces" / "TCConsistent.json").exists()
    assert (out / "bug-bmc" / "traces" / "index.html").exists()
    # a bmc entry is judged in check's words, by the verdict its result.json carries
    entries = {e["name"]: e for e in json.load(open(out / "gate.json"))["entries"]}
    for name, verdict, outcome in (("induction", "pass", "holds"), ("bug-bmc", "violation", "violated"),
                                   ("bug-must-be-proved", "incomplete", "unknown")):
        assert json.load(open(out / name / "result.json"))["verdict"] == entries[name]["verdict"] == verdict
        assert [p["outcome"] for p in entries[name]["properties"]] == [outcome]


def test_symbolic_entries_are_cached_and_checked_for_drift(tmp_path):
    text = SYMBOLIC[:SYMBOLIC.index('[[entry]]\nname = "bug-must-be-proved"')]
    (tmp_path / "txncheck.toml").write_text(text)
    p = gate(["--update-baseline", "--jobs", "2"], tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    base = json.load(open(tmp_path / "txncheck-baseline.json"))["entries"]
    assert base["tables-d4"] == {"kind": "tables", "obligations": {"determinism": 319}, "violated": ["determinism"]}
    assert base["induction"] == {"kind": "bmc", "proved": ["TCConsistent"]}
    assert base["bug-bmc"] == {"kind": "bmc", "proved": [], "violated": ["TCConsistent"]}
    p = gate(["--jobs", "2"], tmp_path)
    assert p.returncode == 0 and p.stdout.count(" cached") == 4, p.stdout + p.stderr
    base["tables-d4"]["obligations"]["determinism"] = 280
    base["induction"]["proved"] = ["TCConsistent", "Gone"]
    (tmp_path / "txncheck-baseline.json").write_text(json.dumps({"schema": "txncheck.gate-baseline/1",
                                                                 "entries": base}))
    p = gate(["--jobs", "2", "--junit", "junit.xml"], tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert ("baseline drift: determinism obligations 280 -> 319: the tables changed what the checks cover"
            in p.stdout)
    assert "baseline drift: Gone was proved in the baseline and no longer is" in p.stdout
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "junit.xml"))}
    assert [c.name for c in suites["tables-d4"] if c.result] == ["drift obligations"]
    assert [c.name for c in suites["induction"] if c.result] == ["drift proved"]


# ---- the time budget stops an entry ------------------------------------------------------------------

BUDGET = """
[[entry]]
name = "slow-search"
spec = "twophase"
set = { rm = 9 }
expect = "pass"
budget = 0.5

[[entry]]
name = "slow-solver"
spec = "kafka"
config = "tiny"
kind = "bmc"
induction = 1
expect = "pass"
budget = 0.5

[[entry]]
name = "fast"
spec = "twophase"
expect = "pass"
budget = 60
"""


def test_an_entry_over_its_budget_is_stopped_and_fails_in_every_report(tmp_path):
    (tmp_path / "txncheck.toml").write_text(BUDGET)
    p = gate(["--junit", "junit.xml", "--sarif", "gate.sarif", "--summary", "summary.md", "--jobs", "2"], tmp_path,
             {"GITHUB_ACTIONS": "true"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    for name in ("slow-search", "slow-solver"):
        line = next(x for x in p.stdout.splitlines() if x.startswith(f"  {name} "))
        assert "FAILED" in line and "got over-budget" in line
        assert f"{name}: FAILED (over-budget, " in p.stderr
    results = "\n".join(x for x in p.stdout.splitlines() if not x.startswith("::"))
    assert results.count("over budget after ") == 2
    assert "no verdict (budget = 0.5 s; its check was stopped)" in results
    assert "no verdict (budget = 0.5 s; its bmc --induction 1 was stopped)" in results
    gate_json = {e["name"]: e for e in json.load(open(tmp_path / "out" / "gate" / "gate.json"))["entries"]}
    for name in ("slow-search", "slow-solver"):
        e = gate_json[name]
        assert e["verdict"] == "over-budget" and not e["ok"] and e["seconds"] < 5  # stopped, not run to the end
        assert e["properties"] == [] and e["distinct"] is None
    assert gate_json["fast"]["ok"]

    validate_junit(tmp_path / "junit.xml")
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "junit.xml"))}
    cases = list(suites["slow-solver"])
    assert [c.name for c in cases] == ["time budget"] and cases[0].result[0].message.startswith("over budget after")
    assert suites["fast"].failures == 0

    validate_sarif(tmp_path / "gate.sarif")
    sarif = json.load(open(tmp_path / "gate.sarif"))["runs"][0]["results"]
    assert sorted(r["properties"]["entry"] for r in sarif) == ["slow-search", "slow-solver"]
    assert all(r["level"] == "error" and "over budget after" in r["message"]["text"] for r in sarif)
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "txncheck.toml" for r in sarif)

    rows = [x for x in (tmp_path / "summary.md").read_text().splitlines() if x.startswith("| slow")]
    assert len(rows) == 2 and all("| over-budget | **failed** |" in x for x in rows)
    errors = [x for x in p.stdout.splitlines() if x.startswith("::error")]
    assert len(errors) == 2 and all("over budget after" in x for x in errors)
    assert errors[0].startswith("::error file=txncheck.toml,line=2,")

    # the stopped entries left nothing behind: no staging directory, no output, no cache record
    out = tmp_path / "out" / "gate"
    assert sorted(os.listdir(out)) == [".cache", "fast", "gate.json"]
    assert os.listdir(out / ".cache") == ["fast.json"]


def test_an_entry_over_its_max_memory_is_out_of_memory_with_no_verdict(tmp_path):
    # z3's k-induction of Kafka needs more than this: z3 fails to allocate, which the gate reports as out of
    # memory. Measured on 2026-11-29, once OpenBLAS started no threads (cli/__init__.py), which took about
    # 40 MiB of the worker's data memory: out of memory at 110 to 140 MiB (after 1.9 to 9.3 s), the whole
    # run completing from 145 on; 150 completed where it had run out before.
    (tmp_path / "txncheck.toml").write_text(
        '[[entry]]\nname = "small"\nspec = "kafka"\nconfig = "tiny"\nkind = "bmc"\ninduction = 1\nexpect = "pass"\n'
        'max_memory = 120\n\n[[entry]]\nname = "roomy"\nspec = "twophase"\nexpect = "pass"\nmax_memory = 2048\n')
    p = gate(["--junit", "junit.xml", "--jobs", "1"], tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("  small "))
    assert "got out-of-memory" in line
    assert "out of memory, no verdict (max_memory = 120 MiB" in p.stdout
    validate_junit(tmp_path / "junit.xml")
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "junit.xml"))}
    assert [c.name for c in suites["small"] if c.result] == ["max memory"]
    assert suites["roomy"].failures == 0


def test_a_terminated_gate_stops_its_workers_and_leaves_no_partial_report(tmp_path):
    (tmp_path / "txncheck.toml").write_text(
        '[[entry]]\nname = "a"\nspec = "twophase"\nset = { rm = 9 }\nexpect = "pass"\nbudget = 600\n\n'
        '[[entry]]\nname = "b"\nspec = "kafka"\nconfig = "tiny"\nkind = "bmc"\ninduction = 1\nexpect = "pass"\n'
        'budget = 600\n')
    old = '<?xml version="1.0"?>\n<testsuites name="earlier run"></testsuites>\n'
    (tmp_path / "junit.xml").write_text(old)
    proc = subprocess.Popen([EXE, "gate", "--junit", "junit.xml", "--jobs", "2"], cwd=tmp_path, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline:  # both entries are running in their workers
        time.sleep(0.2)
        workers = [pid for pid in _children(proc.pid) if "spawn_main" in _cmdline(pid)]
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, out + err
    assert "Traceback" not in err
    assert len(workers) == 2 and not any(_running(pid) for pid in workers)  # the gate ended its workers first
    assert (tmp_path / "junit.xml").read_text() == old
    # `out` exists once the gate staged an entry, which a loaded machine may not have reached yet
    assert sorted(set(os.listdir(tmp_path)) - {"out"}) == ["junit.xml", "txncheck.toml"]
    gate_dir = tmp_path / "out" / "gate"
    staged = os.listdir(gate_dir) if gate_dir.exists() else []
    assert [e for e in staged if e.startswith(".txncheck-")] == []


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _running(pid):
    """Alive and not a zombie waiting for init to reap it."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except OSError:
        return False


def _stubborn(out):
    """A worker inside a native call that ignores SIGTERM, with a staging directory of its entry open."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.makedirs(os.path.join(out, f".txncheck-stage-{os.getpid()}-e-x1"))
    time.sleep(60)


def test_a_worker_that_ignores_sigterm_is_killed_and_its_stage_removed(tmp_path, monkeypatch):
    import multiprocessing

    from txncheck.cli import gate as gate_cli
    monkeypatch.setattr(gate_cli, "GRACE", 0.5)
    proc = multiprocessing.get_context("fork").Process(target=_stubborn, args=(str(tmp_path),))
    proc.start()
    deadline = time.monotonic() + 10
    while not os.listdir(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    t0 = time.monotonic()
    gate_cli._stop(proc, str(tmp_path), "e")
    assert proc.exitcode == -signal.SIGKILL and time.monotonic() - t0 < 5
    assert os.listdir(tmp_path) == []
