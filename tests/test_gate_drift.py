"""`txncheck gate`: drift against the committed baseline (--update-baseline) and the cache of green runs.

Every run here is of twophase, whose searches take milliseconds, so the time is the process start-up.
"""
import json
import os
import sys

import pytest
from junitparser import JUnitXml

from test_gate import ROOT, gate

GATE = """
[[entry]]
name = "two"
spec = "twophase"
expect = "pass"

[[entry]]
name = "two-bug"
spec = "twophase"
variant = "commit-without-all-prepared"
expect = "violation"
"""


@pytest.fixture
def based(tmp_path):
    """A gate file with a fresh baseline beside it (and a warm cache)."""
    (tmp_path / "txncheck.toml").write_text(GATE)
    p = gate(["--update-baseline", "--jobs", "1"], tmp_path)
    assert p.returncode == 0 and "baseline written: txncheck-baseline.json (2 entries)" in p.stdout, p.stdout + p.stderr
    return tmp_path


def _edit(path, fn):
    data = json.loads(path.read_text())
    fn(data["entries"])
    path.write_text(json.dumps(data))


def test_the_baseline_is_deterministic_and_records_the_facts(based):
    path = based / "txncheck-baseline.json"
    first = path.read_bytes()
    data = json.loads(first)
    assert data["schema"] == "txncheck.gate-baseline/1"
    two, bug = data["entries"]["two"], data["entries"]["two-bug"]
    assert (two["distinct"], two["depth"]) == (288, 10) and "violated" not in two
    assert two["witnessed"] == ["SomeAbort", "SomeCommit"] and "TM-02" in two["fired_rows"]
    assert bug["violated"] == ["TCConsistent"] and two["fired_rows"] == sorted(two["fired_rows"])
    p = gate(["--update-baseline", "--no-cache", "--jobs", "1"], based)
    assert p.returncode == 0 and path.read_bytes() == first  # a fresh search writes the same bytes
    p = gate(["--jobs", "1"], based)
    assert p.returncode == 0 and "note:" not in p.stdout, p.stdout


@pytest.mark.parametrize("entry,edit,message,case", [
    ("two", lambda e: e["two"].update(distinct=290), "baseline drift: distinct states 290 -> 288", "drift distinct"),
    ("two", lambda e: e["two"].update(depth=9), "baseline drift: depth 9 -> 10", "drift depth"),
    ("two", lambda e: e["two"]["witnessed"].append("SomeGhost"),
     "baseline drift: SomeGhost is no longer witnessed: an invariant may have become vacuous", "drift witnesses"),
    ("two", lambda e: e["two"]["fired_rows"].append("TM-99"),
     "baseline drift: row TM-99 fired in the baseline and no longer fires", "drift rows"),
    ("two-bug", lambda e: e["two-bug"]["violated"].append("SomeCommit"),
     "baseline drift: SomeCommit is no longer violated: the known bug is no longer caught", "drift violated"),
])
def test_each_kind_of_drift_fails_its_entry(based, entry, edit, message, case):
    _edit(based / "txncheck-baseline.json", edit)
    p = gate(["--jobs", "1", "--junit", "junit.xml", "--summary", "s.md"], based, {"GITHUB_ACTIONS": "true"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert message in p.stdout
    # drift on a cached result, and the progress line says so as the results do
    assert f"{entry}: FAILED ({'pass' if entry == 'two' else 'violation'}, cached)" in p.stderr
    suites = {s.name: s for s in JUnitXml.fromfile(str(based / "junit.xml"))}
    failed = [(s, c.name) for s in suites for c in suites[s] if c.result]
    assert failed == [(entry, case)]
    assert sum(c.name.startswith("drift ") for c in suites["two"]) == 4  # distinct, depth, witnesses, rows
    assert sum(c.name.startswith("drift ") for c in suites["two-bug"]) == 5  # and the violated properties
    assert message in (based / "s.md").read_text()
    assert any(line.startswith("::error file=txncheck.toml,") and message in line for line in p.stdout.splitlines())


def test_gains_and_a_missing_entry_are_notes(based):
    def edit(e):
        e["two"]["witnessed"].remove("SomeAbort")
        del e["two-bug"]
    _edit(based / "txncheck-baseline.json", edit)
    p = gate(["--jobs", "1"], based)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "note: SomeAbort is now witnessed (not in the baseline)" in p.stdout
    assert "note: no baseline for two-bug; run txncheck gate --update-baseline" in p.stdout


def test_update_baseline_refuses_a_failing_gate(tmp_path):
    (tmp_path / "txncheck.toml").write_text(GATE + '\n[[entry]]\nname = "gold"\nspec = "twophase"\nexpect = "pass"\n'
                                            'distinct = 289\n')
    p = gate(["--update-baseline", "--jobs", "1"], tmp_path)
    assert p.returncode == 1 and "baseline txncheck-baseline.json not written" in p.stderr and "gold" in p.stderr
    assert not (tmp_path / "txncheck-baseline.json").exists()


@pytest.mark.parametrize("text,said", [("{not json", "is not valid JSON"),
                                       ('{"schema": "txncheck.gate/1", "entries": {}}', "is not a txncheck.gate-baseline/1"),
                                       ('{"schema": "txncheck.gate-baseline/1", "entries": {"two": {"depth": 1}}}',
                                        "entry 'two' needs distinct")])
def test_a_bad_baseline_is_exit_2_naming_the_file_and_the_fix(tmp_path, text, said):
    (tmp_path / "txncheck.toml").write_text(GATE)
    (tmp_path / "b.json").write_text(text)
    p = gate(["--baseline", "b.json"], tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"baseline file b.json {said}" in p.stderr or f"baseline file b.json: {said}" in p.stderr, p.stderr
    assert "txncheck gate --update-baseline b.json" in p.stderr
    assert not (tmp_path / "out").exists()  # refused before any search
    p = gate(["--baseline", "missing.json"], tmp_path)
    assert p.returncode == 2 and "missing.json does not exist" in p.stderr


def test_the_cache_hits_and_misses(tmp_path):
    # an external spec: a copy of twophase whose source the test can change
    src = open(os.path.join(ROOT, "spec", "twophase.py")).read().replace("from .", "from txncheck.spec.")
    (tmp_path / "mytwo.py").write_text(src)
    env = {"PYTHONPATH": str(tmp_path)}
    toml = tmp_path / "txncheck.toml"
    toml.write_text('[[entry]]\nname = "mine"\nspec = "mytwo:SPEC"\nexpect = "pass"\n\n'
                    '[[entry]]\nname = "two"\nspec = "twophase"\nexpect = "pass"\n')

    def run(*args):
        p = gate(["--jobs", "1", *args], tmp_path, env)
        assert p.returncode == 0, p.stdout + p.stderr
        return {n: f"{n}: ok (pass, cached)" in p.stderr for n in ("mine", "two")}

    assert run() == {"mine": False, "two": False}
    assert run() == {"mine": True, "two": True}
    assert json.load(open(tmp_path / "out" / "gate" / "gate.json"))["entries"][0]["cached"] is True
    (tmp_path / "mytwo.py").write_text(src + "\n# an edit\n")
    assert run() == {"mine": False, "two": True}      # the spec's source changed
    toml.write_text(toml.read_text().replace('spec = "twophase"\n', 'spec = "twophase"\nset = { rm = 2 }\n'))
    assert run() == {"mine": True, "two": False}      # the entry changed
    assert run("--no-cache") == {"mine": False, "two": False}
    # a hit restores the entry's output when --out was cleaned
    import shutil
    shutil.rmtree(tmp_path / "out" / "gate" / "two")
    assert run() == {"mine": True, "two": True}
    assert json.load(open(tmp_path / "out" / "gate" / "two" / "result.json"))["stats"]["distinct"] < 288
    # a corrupt record is a miss, not an error
    (tmp_path / "out" / "gate" / ".cache" / "two.json").write_text("{")
    assert run() == {"mine": True, "two": False}


def test_the_spec_source_digest_covers_a_package_folder():
    from txncheck.reports import gate_cache
    files = gate_cache.spec_files("kafka")  # the package's __init__ first: its folder is the digest's root
    root = os.path.dirname(files[0])
    assert root.endswith(os.path.join("spec", "kafka"))
    assert os.path.join(root, "coordinator.py") in files and any(os.sep + "inductive" + os.sep in f for f in files)
    files = gate_cache.spec_files("twophase")
    assert [os.path.basename(f) for f in files] == ["twophase.py"]
    assert gate_cache.spec_digest("kafka") != gate_cache.spec_digest("twophase")
    assert sys.modules["txncheck.reports.gate_cache"].code_digest() == gate_cache.code_digest()
