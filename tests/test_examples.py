"""examples/ (specs written from the docs, docs/examples.md): each is loaded BY PATH from a copy in a
temporary folder outside the repository, as a user's spec file, and must give TLC's published
distinct-state count on both engines, keep its invariants, have its variants caught, and have its
traces confirmed by `txncheck replay`. docs/examples.md's code blocks run as written."""
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

import test_tutorial  # the doc-block parser of docs/tutorial.md, reused for docs/examples.md

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
EXAMPLES_DOC = os.path.join(ROOT, "docs", "examples.md")
EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")

# TLC's distinctStates in tlaplus/Examples specifications/ewd840/manifest.json; TLC 2.20's initial states and
# depth (which counts states: txncheck's depth in steps is one less), for EWD840.cfg (N = 3) and EWD840_json.cfg
EWD840_TLC = {"tiny": 302, "n4": 1566}
EWD840_TLC_INITIAL = {"tiny": 192, "n4": 1024}
EWD840_TLC_DEPTH = {"tiny": 9, "n4": 12}


def run(cwd, *args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the copy is found by path only
    p = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def result(cwd, out):
    with open(os.path.join(cwd, out, "result.json"), encoding="utf-8") as f:
        return json.load(f)


def outcomes(res):
    return {p["name"]: p["outcome"] for p in res["properties"]}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A user's folder outside the repository with a copy of every example."""
    d = tmp_path_factory.mktemp("examples")
    assert not os.path.realpath(d).startswith(os.path.realpath(ROOT) + os.sep)
    for name in os.listdir(EXAMPLES):
        if name.endswith(".py"):
            shutil.copy(os.path.join(EXAMPLES, name), d / name)
    return d


def test_the_example_names_its_source_and_count():
    text = open(os.path.join(EXAMPLES, "ewd840.py"), encoding="utf-8").read()
    head = text.split('"""')[1]
    for needed in ("EWD840.tla", "https://github.com/tlaplus/Examples", "MIT License", "302 distinct states"):
        assert needed in head, needed


@pytest.mark.parametrize("config", sorted(EWD840_TLC))
def test_ewd840_gives_tlc_count_on_both_engines(work, config):
    stats = {}
    for engine in ("vector", "scalar"):
        out = f"out/ewd840-{config}-{engine}"
        p = run(work, "check", "./ewd840.py", "--config", config, "--engine", engine, "--out", out)
        assert p.returncode == 0, p.stdout + p.stderr
        res = result(work, out)
        assert res["verdict"] == "pass" and res["complete"]
        assert res["stats"]["distinct"] == EWD840_TLC[config], (engine, res["stats"]["distinct"])
        assert res["stats"]["levels"][0] == EWD840_TLC_INITIAL[config]
        assert res["stats"]["depth"] + 1 == EWD840_TLC_DEPTH[config]
        assert outcomes(res) == {"TerminationDetection": "holds", "Inv": "holds", "Detected": "witnessed",
                                 "DetectionReachable": "holds", "Liveness": "holds"}
        stats[engine] = {k: res["stats"][k] for k in ("distinct", "generated", "depth", "levels")}
    assert stats["vector"] == stats["scalar"]


def test_ewd840_is_loaded_from_the_copy(work):
    p = run(work, "check", "./ewd840.py", "--out", "out/provenance")
    assert p.returncode == 0, p.stdout + p.stderr
    trace = json.loads((work / "out" / "provenance" / "traces" / "Detected.json").read_text(encoding="utf-8"))
    assert trace["spec_source"] == str(work / "ewd840.py")


@pytest.mark.parametrize("variant,broken", [
    ("send-up-stays-white", {"TerminationDetection", "Inv"}),
    ("token-not-stained", {"TerminationDetection", "Inv"}),
    ("probe-needs-black-token", {"DetectionReachable", "Liveness"}),
    ("unfair", {"Liveness"}),  # TLC: Liveness is violated under Init /\ [][Next]_vars
])
def test_ewd840_variant_is_caught_and_replayed(work, variant, broken):
    out = f"out/variant-{variant}"
    p = run(work, "check", "./ewd840.py", "--variant", variant, "--continue", "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    res = result(work, out)
    got = {n for n, o in outcomes(res).items() if o == "violated"}
    assert got == broken, got
    for name in sorted(broken):
        trace = os.path.join(out, "traces", f"{name}.json")
        p = run(work, "replay", trace)
        assert p.returncode == 1 and "confirmed" in p.stdout, p.stdout + p.stderr
        p = run(work, "replay", "--baseline", trace)
        assert p.returncode == 2, p.stdout + p.stderr  # the spec without the bug does not follow the trace


def test_ewd840_witness_replays(work):
    p = run(work, "check", "./ewd840.py", "--out", "out/witness")
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(work, "replay", "out/witness/traces/Detected.json")
    assert p.returncode == 0 and "confirmed" in p.stdout, p.stdout + p.stderr


def doc_steps(monkeypatch):
    monkeypatch.setattr(test_tutorial, "TUTORIAL", EXAMPLES_DOC)
    return test_tutorial.steps()


def test_the_examples_doc_has_commands(monkeypatch):
    runs = [s for s in doc_steps(monkeypatch) if s[0] == "run"]
    assert len(runs) >= 8
    assert any(cmd.startswith("txncheck replay") for _, cmd, _ in runs)


def test_the_examples_doc_runs(monkeypatch, tmp_path):
    for name in os.listdir(EXAMPLES):
        if name.endswith(".py"):
            shutil.copy(os.path.join(EXAMPLES, name), tmp_path / name)
    outputs = {}
    for kind, what, arg in doc_steps(monkeypatch):
        if kind == "file":
            (tmp_path / what).write_text(arg, encoding="utf-8")
            continue
        p = run(tmp_path, *shlex.split(what)[1:])
        assert p.returncode == arg, f"{what}: exit {p.returncode}, expected {arg}\n{p.stdout}\n{p.stderr}"
        outputs[what] = p.stdout
    # what the page says of the results
    assert "302 distinct states" in outputs["txncheck check ./ewd840.py"]
    assert "302 distinct states" in outputs["txncheck check ./ewd840.py --engine scalar --out out/ewd840-scalar"]
    assert "1,566 distinct states" in outputs["txncheck check ./ewd840.py --config n4"]
    assert "0 finding(s)" in outputs["txncheck tables ./ewd840.py --verify"]
    assert "TerminationDetection: proved" in outputs["txncheck bmc ./ewd840.py --induction 1"]
    assert "Liveness              leads_to    holds" in outputs["txncheck check ./ewd840.py"]
    assert "Liveness              leads_to    violated" in outputs["txncheck check ./ewd840.py --variant unfair"]
