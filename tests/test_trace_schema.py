"""The trace format as a JSON Schema, malformed trace files, and replay checking every field a reader
sees (issue 15, items 5 and 6)."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import replace

import pytest
from jsonschema import Draft202012Validator

from txncheck.traces import schema as trace_schema
from txncheck.traces.replay import replay
from txncheck.traces.schema import MAX_TRACE_BYTES, Trace, TraceError, load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def traces(tmp_path_factory, txncheck_main):
    """Trace files written by the command line: {name: path}."""
    root = tmp_path_factory.mktemp("schema-traces")
    out = {}
    runs = {
        "tp": ["check", "twophase", "--variant", "commit-without-all-prepared"],
        "sym": ["check", "twophase", "--variant", "commit-without-all-prepared", "--symmetry", "--engine", "scalar"],
        "rm2": ["check", "twophase", "--set", "rm=2"],
        "inv": ["check", "kafka", "--variant", "D4-no-sequence-check", "--invariants", "--property", "IND-64"],
    }
    for name, argv in runs.items():
        code, _, err = txncheck_main(*argv, "--out", str(root / name))
        assert code in (0, 1), err
        for f in sorted(os.listdir(root / name / "traces")):
            if f.endswith(".json"):
                out[f"{name}/{f[:-5]}"] = str(root / name / "traces" / f)
    code, _, err = txncheck_main("bmc", "twophase", "--variant", "commit-without-all-prepared", "--depth", "5",
                                 "--out", str(root / "bmc"))
    assert code == 1, err
    with open(root / "bmc" / "result.json", encoding="utf-8") as f:
        (prop,) = json.load(f)["properties"]
    out["bmc/TCConsistent"] = os.path.join(root / "bmc", prop["trace"])  # where bmc wrote it
    return out


def _write(tmp_path, doc=None, text=None, name="t.json") -> str:
    p = tmp_path / name
    if text is None:
        text = json.dumps(doc, indent=1)
    p.write_text(text, encoding="utf-8")
    return str(p)


def _doc(traces, name="tp/TCConsistent"):
    with open(traces[name], encoding="utf-8") as f:
        return json.load(f)


# ---- A: the schema ---------------------------------------------------------------------------
def test_the_schema_is_draft_2020_12_and_shipped_in_the_package():
    doc = trace_schema.schema_document()
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["properties"]["schema"]["const"] == trace_schema.TRACE_SCHEMA
    assert doc["properties"]["kind"]["enum"] == list(trace_schema.KINDS)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert "trace.schema.json" in project["tool"]["setuptools"]["package-data"]["txncheck.traces"]
    # txncheck.trace/1 is still read, against its own schema
    v1 = trace_schema.schema_document("txncheck.trace/1")
    Draft202012Validator.check_schema(v1)
    assert v1["properties"]["schema"]["const"] == "txncheck.trace/1"
    assert "trace-1.schema.json" in project["tool"]["setuptools"]["package-data"]["txncheck.traces"]
    assert any(d.startswith("jsonschema") for d in project["project"]["dependencies"])


def test_every_written_trace_fits_the_schema_with_a_plain_validator(traces):
    # the schema as shipped, read by any draft 2020-12 validator, accepts what txncheck writes
    v = Draft202012Validator(trace_schema.schema_document())
    for name, path in traces.items():
        with open(path, encoding="utf-8") as f:
            errors = list(v.iter_errors(json.load(f)))
        assert not errors, (name, errors[0].message)


def test_written_traces_replay_confirmed(traces, txncheck_main):
    for name, path in traces.items():
        code, out, err = txncheck_main("replay", "--show", path)
        # the verdict line, not the trace text above it (a step may answer NOT_COORDINATOR)
        assert "\nreplay: confirmed against" in out and "replay: NOT confirmed" not in out, (name, out, err)
        assert code == (0 if "/Some" in name else 1), (name, out)


def test_a_trace_in_memory_round_trips_through_the_schema(traces):
    t = load(traces["tp/TCConsistent"])
    assert Trace.from_json(t.to_json()) == t  # to_json keeps tuples: still valid
    assert Trace.from_json(json.loads(json.dumps(t.to_json()))) == t


# ---- B: malformed files: exit 2, the field named, never exit 4 ---------------------------------
MALFORMED = [
    (lambda d: d["config"].__setitem__("name", ["tiny"]), "config.name: expected a string"),
    (lambda d: d["config"].__setitem__("values", [3]), "config.values: expected an object"),
    (lambda d: d["config"].__setitem__("values", "rm=3"), "config.values: expected an object"),
    (lambda d: d["steps"][1]["changed"][0].pop("cell"), "steps[1].changed[0].cell is missing"),
    (lambda d: d["steps"][2].__setitem__("params", 5), "steps[2].params: expected an object"),
    (lambda d: d["steps"][2].__setitem__("tags", 5), "steps[2].tags: expected an array"),
    (lambda d: d["steps"].__setitem__(2, 7), "steps[2]: expected an object"),
    (lambda d: d.__setitem__("steps", []), "steps: must not be empty"),
    (lambda d: d.__setitem__("kind", "proof"), "kind: expected one of"),
    (lambda d: d["property"].__setitem__("kind", 3), "property.kind: expected one of"),
    (lambda d: d["steps"][0]["state"]["rmState"].__setitem__("r1", 1.0), "steps[0].state.rmState.r1: expected"),
    (lambda d: d["steps"][2]["changed"][0].__setitem__("after", 1.0), "steps[2].changed[0].after: expected"),
    # /2: only step 0 has a state; every later step's is rebuilt from the cells it changed
    (lambda d: d["steps"][2].__setitem__("state", d["steps"][0]["state"]),
     "steps[2].state is not a field of txncheck.trace/2"),
    (lambda d: d["steps"][2]["changed"][0].__setitem__("cell", "rmState[r9]"),
     'steps[2].changed[0].cell: the state (steps[0].state) has no "rmState[r9]"'),
    (lambda d: d["steps"][2]["changed"][0].__setitem__("cell", "rmState"),
     'steps[2].changed[0].cell: "rmState" is an array, not one cell'),
    (lambda d: d["steps"][1]["changed"][0].__setitem__("cell", "tmState[r1]"),
     'steps[1].changed[0].cell: "tmState" is one cell, with no index "r1"'),
    (lambda d: d["steps"][1]["changed"][0].__setitem__("cell", "tmState]["),
     'steps[1].changed[0].cell: expected a cell name such as rmState[r1], got "tmState]["'),
    (lambda d: d["steps"][0]["state"].pop("rmState"), 'steps[2].changed[0].cell: the state (steps[0].state) has '
     'no "rmState"'),
    # a /1 file has every step's state
    (lambda d: d.__setitem__("schema", "txncheck.trace/1"), "steps[3].state is missing"),
    (lambda d: d["values"].__setitem__("rmState[r1]", {"a": 1}), 'values["rmState[r1]"]: expected'),
    (lambda d: d["steps"][2].__setitem__("extra", 1), "steps[2].extra is not a field"),
    (lambda d: d["steps"][2].__setitem__("index", 5), "steps[2].index: expected 2, got 5"),
    (lambda d: d["steps"][0].__setitem__("row", "TM-02"), "steps[0].row: expected null"),
    (lambda d: d.pop("values"), "values is missing"),
    (lambda d: d.__setitem__("symmetry", "no"), "symmetry: expected true or false"),
]


@pytest.mark.parametrize("edit,needle", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_trace_names_the_field(traces, tmp_path, edit, needle, txncheck_main):
    d = _doc(traces)
    edit(d)
    for show in ((), ("--show",)):
        code, out, err = txncheck_main("replay", *show, _write(tmp_path, d))
        assert code == 2, out + err
        assert needle in err and "malformed trace" in err and "Traceback" not in err, err
        assert "write the trace again" in err or "keep one" in err


@pytest.mark.parametrize("old,new,needle", [
    ('"index": 2', '"index": ' + "7" * 5000, "steps[2].index: expected an integer"),
    ('"index": 2', '"index": ' + "7" * 5000, "5,000-digit integer"),
    ('"rm": 3', '"rm": 1e999', "config.values.rm: expected an integer or a string"),
    ('"rm": 3', '"rm": NaN', "not a finite number"),
    ('"tags": []', '"tags": ' + "[" * 100000 + "]" * 100000, "nest more than 32 levels deep at line"),
    ('"tags": []', '"tags": ' + "[" * 40 + "]" * 40, "steps[0].tags[0][0]"),
    ('"tmState": "init"', '"tmState": "bogus", "tmState": "init"', "steps[0].state.tmState appears twice"),
])
def test_unreadable_values_are_exit_2_naming_the_field(traces, tmp_path, old, new, needle, txncheck_main):
    text = json.dumps(_doc(traces))
    assert old in text
    code, out, err = txncheck_main("replay", "--show", _write(tmp_path, text=text.replace(old, new, 1)))
    assert code == 2 and needle in err and "Traceback" not in err, err


def test_files_that_are_not_traces(tmp_path, txncheck_main):
    code, _, err = txncheck_main("replay", "/dev/zero")
    assert code == 2 and "is not a regular file" in err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = txncheck_main("replay", str(fifo))  # must not wait for a writer
    assert code == 2 and "is not a regular file" in err
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_TRACE_BYTES + 1)  # sparse: nothing is written
    code, _, err = txncheck_main("replay", str(big))
    assert code == 2 and "more than a trace can have" in err
    code, _, err = txncheck_main("replay", str(tmp_path))
    assert code == 2 and "is a directory" in err
    (tmp_path / "bin.json").write_bytes(b'{"schema": "\xff"}')
    code, _, err = txncheck_main("replay", str(tmp_path / "bin.json"))
    assert code == 2 and "is not UTF-8 text" in err


def test_show_under_an_ascii_terminal_is_not_a_crash(traces):
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    p = subprocess.run([exe, "replay", "--show", traces["tp/TCConsistent"]], capture_output=True, env=env,
                       timeout=300)
    assert p.returncode == 1 and b"Traceback" not in p.stderr, p.stderr
    assert b"tmState: init \\u2192 done" in p.stdout


def test_control_characters_from_a_file_are_printed_escaped(traces, tmp_path, txncheck_main):
    d = _doc(traces)
    d["steps"][1]["label"] = "TM-02\x1b[2J"
    code, out, _ = txncheck_main("replay", "--show", _write(tmp_path, d))
    assert code == 2 and "\x1b" not in out and "\\x1b[2J" in out


# ---- C: replay checks every field a reader sees ---------------------------------------------------
FORGED = [
    (lambda d: d["steps"][1]["changed"][0].__setitem__("after", "bogus"),
     "step 1: steps[1].changed[0] says tmState: init → bogus, the spec gives tmState: init → done"),
    (lambda d: d["values"].__setitem__("rmState[r1]", "bogus"),
     'values["rmState[r1]"] says bogus, the spec gives committed'),
    (lambda d: d["steps"][1].__setitem__("actor", "RM"), "steps[1].actor says RM, the spec gives TM"),
    (lambda d: d["steps"][2].__setitem__("trigger", "RMPrepare"), "steps[2].trigger says RMPrepare"),
    (lambda d: d["steps"][2].__setitem__("label", "RM-03(rm=r2)"), "steps[2].label says RM-03(rm=r2)"),
    (lambda d: d["steps"][2].__setitem__("tags", ["fault"]), "steps[2].tags says"),
    (lambda d: d["steps"][1]["changed"].pop(), "steps[1].changed lists tmState: init → done, the spec changes"),
    (lambda d: d["steps"][1]["changed"].reverse(), "steps[1].changed[0] says msgCommit"),
    (lambda d: d["property"].__setitem__("kind", "sometimes"), "property.kind says sometimes, the spec gives always"),
    (lambda d: d["property"].__setitem__("doc", "Nothing to see."), "property.doc says"),
    (lambda d: d["property"].__setitem__("name", "Nope"), "the spec has no property"),
    (lambda d: d.__setitem__("kind", "witness"), "kind says witness, but TCConsistent is an always property"),
    (lambda d: d.__setitem__("explanation", "All fine."), "explanation says"),
    (lambda d: d["values"].pop("rmState[r3]"), 'values["rmState[r3]"] is missing'),
    (lambda d: d["values"].__setitem__("msgCommit", True), 'values.msgCommit is not one of the cells that decide '
     '"TCConsistent" in the last state (rmState[r1], rmState[r3])'),
    (lambda d: d["config"]["values"].__setitem__("rm", "3"), 'config.values.rm says "3", the spec gives 3'),
    (lambda d: d["config"]["values"].__setitem__("rm", 4), "the initial state differs from the trace's step 0: "
     "steps[0].state.rmState.r4 is missing"),
    (lambda d: d["steps"][0]["state"].__setitem__("msgCommit", 1),
     "the initial state differs from the trace's step 0: steps[0].state.msgCommit says 1, the spec gives FALSE"),
    (lambda d: d["steps"][1]["changed"][1].__setitem__("after", 1),
     "steps[1].changed[1] says msgCommit: FALSE → 1, the spec gives msgCommit: FALSE → TRUE"),
    (lambda d: d["steps"][1]["changed"][0].__setitem__("before", "done"),
     "steps[1].changed[0] says tmState: done → done, the spec gives tmState: init → done"),
    (lambda d: d["steps"][2]["params"].__setitem__("rm", "r9"), "row RM-03 has no action with parameters rm=\"r9\""),
    (lambda d: d["steps"][2].__setitem__("row", "RM-99"), 'steps[2].row says "RM-99", which is not a row'),
]


@pytest.mark.parametrize("edit,needle", FORGED, ids=[f[1][:50] for f in FORGED])
def test_replay_refuses_a_trace_whose_descriptive_fields_are_false(traces, tmp_path, edit, needle, txncheck_main):
    d = _doc(traces)
    edit(d)
    code, out, err = txncheck_main("replay", _write(tmp_path, d))
    assert code == 2 and "NOT confirmed" in out, out + err
    assert needle in out, out


def test_the_issue_example_is_not_confirmed(traces, tmp_path, txncheck_main):
    d = _doc(traces)
    d["steps"][1]["changed"][0]["after"] = "bogus"    # tmState: init → bogus
    d["values"]["rmState[r1]"] = "bogus"              # violated by: rmState[r1] = bogus
    code, out, _ = txncheck_main("replay", "--show", _write(tmp_path, d))
    assert "tmState: init → bogus" in out and "violated by: rmState[r1] = bogus" in out
    assert code == 2 and "NOT confirmed" in out and "(diverges at step 1)" in out


def test_provenance_and_key_order_do_not_change_the_verdict(traces, tmp_path, txncheck_main):
    d = _doc(traces)
    d["engine"], d["symmetry"] = "scalar", True
    d = dict(reversed(list(d.items())))
    d["steps"][2] = dict(reversed(list(d["steps"][2].items())))
    code, out, _ = txncheck_main("replay", _write(tmp_path, d))
    assert code == 1 and "confirmed" in out


def test_config_overrides_must_be_what_differs_from_the_named_config(traces, tmp_path, txncheck_main):
    d = _doc(traces, "rm2/SomeAbort")
    assert d["config"]["values"]["rm"] == 2 and d["config"]["overrides"] == {"rm": 2}
    d["config"]["overrides"] = {"rm": 3}
    code, out, _ = txncheck_main("replay", _write(tmp_path, d))
    assert code == 2 and "config.overrides.rm says 3, the spec gives 2" in out
    del d["config"]["overrides"]  # the text would say "config tiny" of a run with rm=2
    code, out, _ = txncheck_main("replay", _write(tmp_path, d))
    assert code == 2 and "config.overrides.rm is missing (the spec gives 2)" in out
    d = _doc(traces, "tp/TCConsistent")
    d["config"]["name"] = "nightly"  # nightly has 8 RMs; the trace's values and states have 3
    code, out, _ = txncheck_main("replay", _write(tmp_path, d))
    assert code == 2 and "config.overrides.rm is missing (the spec gives 3)" in out
    d["config"]["overrides"] = {"rm": 3}  # true: nightly with rm=3 is this model
    code, out, _ = txncheck_main("replay", _write(tmp_path, d))
    assert code == 1 and "confirmed" in out


def test_a_cti_explanation_may_only_name_candidates_the_last_state_violates():
    from txncheck.checker.symbolic.induction import k_induction
    from txncheck.spec import catalog
    from txncheck.spec.ground import ground
    spec = replace(catalog.load("twophase"), invariants_for_induction=())
    (p,) = k_induction(ground(spec, spec.resolve_config("tiny")), 2).properties
    t = Trace.from_json(json.loads(json.dumps(p.trace.to_json())))
    assert replay(t).confirmed
    r = replay(replace(t, explanation=t.explanation + " The last state also violates SomeCommit."))
    assert not r.confirmed and r.field == "explanation"
    r = replay(replace(t, explanation="Trust me."))
    assert not r.confirmed and r.field == "explanation"


def test_a_deadlock_trace_replays_and_its_fields_are_checked(monkeypatch):
    # TwoPhase whose RMs never hear the decision, and without a terminal condition, deadlocks
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import check_spec
    from txncheck.spec import catalog
    from txncheck.traces import replay as replay_mod
    base = catalog.load("twophase")
    tables = tuple(replace(t, rows=tuple(r for r in t.rows if r.id not in ("RM-03", "RM-04"))) for t in base.tables)
    spec = replace(base, tables=tables, terminal=None)
    r = check_spec(spec, options=ExploreOptions(check_deadlock=True), engine="scalar")
    t = r.traces["deadlock"]
    monkeypatch.setattr(replay_mod.catalog, "load", lambda name: spec)
    t = Trace.from_json(json.loads(json.dumps(t.to_json())))
    rep = replay(t)
    assert rep.confirmed and rep.message == "deadlock confirmed"
    assert not replay(replace(t, explanation="")).confirmed
    assert not replay(replace(t, property={**t.property, "doc": "x"})).confirmed


def test_a_trace_with_a_step_index_out_of_order_is_refused(traces):
    d = _doc(traces)
    d["steps"][1], d["steps"][2] = d["steps"][2], d["steps"][1]
    with pytest.raises(TraceError, match=r"steps\[1\]\.index: expected 1, got 2"):
        Trace.from_json(d)


def test_validation_does_not_mutate_the_document(traces):
    d = _doc(traces)
    before = copy.deepcopy(d)
    Trace.from_json(d)
    assert d == before
