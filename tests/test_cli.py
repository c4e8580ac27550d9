"""The CLI's exit codes, and one clear message (never a traceback) for every kind of bad input."""
import json
import re

import pytest


def _clean(err):
    assert "Traceback" not in err
    return err


def test_pass_exit_0(txncheck_cli, tmp_path):
    code, out, err = txncheck_cli("check", "twophase", "--set", "rm=3", "--engine", "scalar", "--out", str(tmp_path))
    assert code == 0, err
    assert "288 distinct states" in out and "verdict: PASS" in out
    result = json.load(open(tmp_path / "result.json"))
    assert result["schema"] == "txncheck.result/1" and result["verdict"] == "pass"


def test_violation_exit_1_and_trace_replays(txncheck_cli, tmp_path):
    code, out, err = txncheck_cli("check", "twophase", "--variant", "commit-without-all-prepared",
                                  "--engine", "scalar", "--out", str(tmp_path))
    assert code == 1, err
    trace = tmp_path / "traces" / "TCConsistent.json"
    assert trace.exists() and (tmp_path / "traces" / "TCConsistent.txt").exists()
    code, out, err = txncheck_cli("replay", str(trace))
    assert code == 1 and "confirmed" in out
    code, out, err = txncheck_cli("replay", "--baseline", str(trace))
    assert code == 2 and "NOT confirmed" in out and "step 1" in out


def test_invariants_checks_the_strengthening_invariants_on_every_reachable_state(txncheck_cli, tmp_path):
    code, out, err = txncheck_cli("check", "twophase", "--invariants", "--out", str(tmp_path / "ok"))
    assert code == 0, err
    assert re.search(r"TPInductive +always +holds", out), out
    code, out, err = txncheck_cli("check", "twophase", "--out", str(tmp_path / "plain"))
    assert code == 0 and "TPInductive" not in out
    # a variant that breaks an invariant: the violation is traced, and the trace replays
    code, out, err = txncheck_cli("check", "kafka", "--variant", "D4-no-sequence-check", "--invariants",
                                  "--property", "IND-64", "--out", str(tmp_path / "d4"))
    assert code == 1, err
    assert re.search(r"IND-64 +always +violated", out), out
    code, out, err = txncheck_cli("replay", str(tmp_path / "d4" / "traces" / "IND-64.json"))
    assert code == 1 and "confirmed" in out and "IND-64 is violated" in out, out + err


def test_incomplete_exit_3_only_when_required(txncheck_cli, tmp_path):
    args = ("check", "twophase", "--engine", "scalar", "--max-depth", "3", "--out", str(tmp_path))
    code, out, _ = txncheck_cli(*args)
    assert code == 0 and "INCOMPLETE" in out
    code, out, _ = txncheck_cli(*args, "--require-complete")
    assert code == 3


@pytest.mark.parametrize("args,needle", [
    (("check", "nosuchspec"), "unknown spec 'nosuchspec'"),
    (("check", "twophase", "--config", "huge"), "has no config 'huge'; choose one of tiny, ci, nightly"),
    (("check", "twophase", "--set", "rm"), "--set expects KEY=VALUE"),
    (("check", "twophase", "--set", "rm=abc"), "rm must be an integer; got 'abc'"),
    (("check", "twophase", "--set", "rm=99"), "rm must be in 1..12; got 99"),
    (("check", "twophase", "--set", "colour=3"), "no configuration constant 'colour'"),
    (("check", "twophase", "--variant", "nope"), "has no variant 'nope'"),
    (("check", "twophase", "--engine", "warp"), "invalid choice: 'warp'"),
    (("check", "twophase", "--max-states", "0"), "--max-states must be at least 1"),
    (("check",), "the following arguments are required: SPEC"),
    (("frobnicate",), "invalid choice: 'frobnicate'"),
    (("replay", "/nonexistent/trace.json"), "does not exist"),
    (("specs", "nosuchspec"), "unknown spec"),
    (("check", "kafka", "--set", "parts=2", "--set", "ctp=1"), "need parts + ctp <= 2: lower parts or set ctp=0"),
    (("check", "kafka", "--set", "ctp=0", "--property", "EOS-1"), "property EOS-1 does not apply"),
    (("check", "kafka", "--property", "NOPE-9"), "has no property NOPE-9"),
    (("check", "kafka", "--property", "IND-150"), "IND-150 is a strengthening invariant, not a property; add --invariants"),
])
def test_bad_input_one_clear_message_exit_2(txncheck_cli, tmp_path, args, needle):
    code, out, err = txncheck_cli(*args, cwd=tmp_path)
    assert code == 2
    assert needle in _clean(err)
    assert err.count("error:") == 1


@pytest.mark.parametrize("content,needle", [
    ("{not json", "is not valid JSON"),
    ('{"schema": "other/9"}', "unsupported trace schema"),
    ('{"schema": "txncheck.trace/1", "spec": "twophase"}', "malformed trace"),
    ('[1, 2]', "a trace is a JSON object"),
])
def test_bad_trace_files(txncheck_cli, tmp_path, content, needle):
    p = tmp_path / "t.json"
    p.write_text(content)
    code, out, err = txncheck_cli("replay", str(p))
    assert code == 2 and needle in _clean(err)


def test_no_half_written_results_on_bad_input(txncheck_cli, tmp_path):
    out = tmp_path / "o"
    code, _, _ = txncheck_cli("check", "twophase", "--set", "rm=99", "--out", str(out))
    assert code == 2 and not out.exists()


def test_specs_lists_configs_variants_properties(txncheck_cli):
    code, out, err = txncheck_cli("specs", "twophase")
    assert code == 0
    for needle in ("tiny", "nightly", "commit-without-all-prepared", "breaks TCConsistent", "TCConsistent", "rm="):
        assert needle in out
    assert "strengthening invariants (1, for `bmc`" in out and "    TPInductive" in out
    code, out, _ = txncheck_cli("specs", "paxoscommit", "--json")
    d = json.loads(out)
    assert d["name"] == "paxoscommit" and d["variants"][0]["breaks"]
    code, out, _ = txncheck_cli("specs", "kafka", "--json")
    invs = json.loads(out)["strengthening_invariants"]
    assert len(invs) == 159 and all(i["name"].startswith("IND-") and i["doc"] for i in invs)
