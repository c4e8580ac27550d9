"""Specs txncheck does not ship: a spec file, MODULE:ATTRIBUTE, and a spec an installed package publishes
(entry-point group `txncheck.specs`), checked, replayed and viewed through the CLI as a user types it,
from a folder outside the repository that is not on the Python path; traces that record where their
spec came from and refuse a spec that changed since (docs/user-specs.md)."""
from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest

EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")

# A small spec with lanes and channels (so `view` draws arrows), a property a variant breaks in 3 steps,
# and a witness; NAME_ and ROUNDS_ are filled in per file.
DEMO = '''"""A demo spec: ping, pong, `rounds` times."""
from txncheck.spec.domains import BOOL, IntRange
from txncheck.spec.expr import And, Config, Not, Var
from txncheck.spec.model import Always, ConfigParam, DropConjunct, NamedConfig, Row, Sometimes, Spec, Table, Variant
from txncheck.spec.sequence import At, Channel, Lane

Count = IntRange("Count", 0, "rounds")
count = Var("count", Count, init=0, doc="pongs received")
ping = Var("ping", BOOL, init=False, doc="a Ping in flight")
pong = Var("pong", BOOL, init=False, doc="a Pong in flight")

SPEC = Spec(
    name="NAME_", doc="ping, pong, `rounds` times",
    vars=(count, ping, pong),
    tables=(
        Table("client", at=At("client"), rows=(
            Row("C-01", "client", "send Ping", guard=(Not(ping), Not(pong), count < Config("rounds")),
                updates=(ping.set(True),)),
            Row("C-02", "client", "receive Pong", guard=(pong, count < Config("rounds")),
                updates=(pong.set(False), count.set(count + 1))),
        )),
        Table("server", at=At("server"), rows=(
            Row("S-01", "server", "receive Ping, send Pong", guard=(ping,), updates=(ping.set(False), pong.set(True))),
        )),
    ),
    properties=(
        Always("OneInFlight", Not(And(ping, pong)), "at most one message is in flight"),
        Sometimes("Done", count == Config("rounds"), "every round was played"),
    ),
    params=(ConfigParam("rounds", ROUNDS_, "rounds", lo=1, hi=50),),
    configs=(NamedConfig("small", (("rounds", ROUNDS_),)),),
    variants=(Variant("eager-ping", "the client pings while a Pong is in flight", ("OneInFlight",),
                      (DropConjunct("C-01", 1),), config="small"),),
    lanes=(Lane("client"), Lane("server")),
    channels=(
        Channel("Ping", (), ping, sender=At("client"), receiver=At("server")),
        Channel("Pong", (), pong, sender=At("server"), receiver=At("client")),
    ),
)
'''
STATES = {2: 7, 3: 10}  # distinct states of the spec: 1 + 3 * rounds


def demo(name: str = "demo", rounds: int = 2) -> str:
    return DEMO.replace("NAME_", name).replace("ROUNDS_", str(rounds))


def run(*args, cwd, pythonpath=None):
    """`txncheck ARGS` in `cwd`, with nothing of ours on PYTHONPATH unless given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    p = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def trace_of(folder, out: str, prop: str) -> dict:
    return json.loads((folder / out / "traces" / f"{prop}.json").read_text())


@pytest.fixture
def proj(tmp_path):
    """A user's folder, outside the repository, holding demo.py."""
    d = tmp_path / "proj"
    d.mkdir()
    (d / "demo.py").write_text(demo())
    return d


# ---- the three forms, checked and replayed -------------------------------------------------------
@pytest.mark.parametrize("engine", ["vector", "scalar"])
def test_a_spec_file_is_checked_replayed_and_viewed(proj, engine):
    code, out, err = run("check", "./demo.py", "--engine", engine, cwd=proj)
    assert code == 0, out + err
    assert f"{STATES[2]} distinct states" in out and "out/demo-small/result.json" in out
    code, out, err = run("check", "./demo.py", "--variant", "eager-ping", "--engine", engine, cwd=proj)
    assert code == 1, out + err
    t = trace_of(proj, "out/demo-small-eager-ping", "OneInFlight")
    assert t["spec"] == "demo" and t["spec_source"] == str(proj / "demo.py")
    assert t["spec_sha256"] == __import__("hashlib").sha256((proj / "demo.py").read_bytes()).hexdigest()
    trace = "out/demo-small-eager-ping/traces/OneInFlight.json"
    code, out, err = run("replay", trace, cwd=proj)
    assert code == 1 and "confirmed against demo variant eager-ping" in out, out + err
    code, out, err = run("replay", "--baseline", trace, cwd=proj)
    assert code == 2 and "NOT confirmed" in out, out + err
    code, out, err = run("view", trace, cwd=proj)
    assert code == 0, err
    page = (proj / trace).with_suffix(".html").read_text()
    assert "Ping" in page and "OneInFlight" in page
    # from another folder, the trace still finds its spec (the path it records is absolute)
    code, out, err = run("replay", proj / trace, cwd=proj.parent)
    assert code == 1 and "confirmed" in out, out + err


def test_a_spec_file_by_a_relative_path_from_elsewhere_and_by_its_absolute_path(proj):
    sub = proj / "protocols"
    sub.mkdir()
    shutil.move(proj / "demo.py", sub / "demo.py")
    code, out, err = run("check", "protocols/demo.py", "--out", "o1", cwd=proj)
    assert code == 0, out + err
    code, out, err = run("check", sub / "demo.py", "--out", "o2", cwd=proj.parent)
    assert code == 0, out + err
    assert trace_of(proj, "o1", "Done")["spec_source"] == trace_of(proj.parent, "o2", "Done")["spec_source"] \
        == str(sub / "demo.py")


def test_a_module_attribute_on_the_python_path(proj):
    (proj / "demo_mod.py").write_text(demo("demo_mod"))
    work = proj.parent / "work"
    work.mkdir()
    code, out, err = run("check", "demo_mod:SPEC", "--variant", "eager-ping", "--out", "m", cwd=work, pythonpath=proj)
    assert code == 1, out + err
    t = trace_of(work, "m", "OneInFlight")
    assert t["spec_source"] == "demo_mod:SPEC" and len(t["spec_sha256"]) == 64
    code, out, err = run("replay", "m/traces/OneInFlight.json", cwd=work, pythonpath=proj)
    assert code == 1 and "confirmed" in out, out + err
    code, out, err = run("view", "m/traces/OneInFlight.json", cwd=work, pythonpath=proj)
    assert code == 0, err
    # without the module on the path the trace cannot find its spec: one message, exit 2
    code, out, err = run("replay", "m/traces/OneInFlight.json", cwd=work)
    assert code == 2 and "no module named demo_mod" in err and err.count("error:") == 1
    # and a changed module is refused as a changed file is
    (proj / "demo_mod.py").write_text(demo("demo_mod") + "# an edit\n")
    code, out, err = run("replay", "m/traces/OneInFlight.json", cwd=work, pythonpath=proj)
    assert code == 2 and "the spec module demo_mod:SPEC changed since this trace was written" in err


def test_bmc_and_tables_take_a_spec_file(proj):
    code, out, err = run("bmc", "./demo.py", "--variant", "eager-ping", "--depth", "3", "--out", "b", cwd=proj)
    assert code == 1 and "OneInFlight: VIOLATED at depth 3" in out, out + err
    t = trace_of(proj, "b", "OneInFlight")
    assert t["engine"] == "bmc" and t["spec_source"] == str(proj / "demo.py")
    code, out, err = run("replay", "b/traces/OneInFlight.json", cwd=proj)
    assert code == 1 and "confirmed" in out, out + err
    code, out, err = run("bmc", "./demo.py", "--depth", "3", cwd=proj)
    assert code == 0, out + err
    code, out, err = run("tables", "./demo.py", "--json", cwd=proj)
    assert code == 0 and json.loads(out)["spec"] == "demo"
    code, out, err = run("specs", "./demo.py", "--json", cwd=proj)
    d = json.loads(out)
    assert code == 0 and d["name"] == "demo" and d["source"]["kind"] == "file"
    assert d["source"]["ref"] == str(proj / "demo.py")


def test_a_spec_file_may_import_a_module_beside_it_and_its_hash_covers_it(proj):
    """As a script does: `from base import *` finds base.py beside the spec file."""
    (proj / "base.py").write_text(demo())
    (proj / "bigger.py").write_text("from dataclasses import replace\nfrom base import *  # noqa\n\n"
                                    "SPEC = replace(SPEC, doc='the demo, extended')\n")
    code, out, err = run("check", "./bigger.py", "--variant", "eager-ping", "--out", "o", cwd=proj)
    assert code == 1, out + err
    code, out, err = run("replay", "o/traces/OneInFlight.json", cwd=proj)
    assert code == 1, out + err
    (proj / "base.py").write_text(demo() + "# an edit of the module it imports\n")
    code, out, err = run("replay", "o/traces/OneInFlight.json", cwd=proj)
    assert code == 2 and "the spec file bigger.py changed since this trace was written" in err


# ---- provenance ----------------------------------------------------------------------------------
def test_a_trace_of_a_spec_file_edited_since_is_refused(proj):
    code, out, err = run("check", "./demo.py", "--variant", "eager-ping", cwd=proj)
    assert code == 1
    trace = "out/demo-small-eager-ping/traces/OneInFlight.json"
    with open(proj / "demo.py", "a") as f:
        f.write("# a comment is a change too: the trace no longer says what this file is\n")
    for cmd in (("replay", trace), ("replay", "--show", trace), ("view", trace)):
        code, out, err = run(*cmd, cwd=proj)
        assert code == 2, (cmd, out, err)
        assert "the spec file demo.py changed since this trace was written (hash " in err
        assert "rerun `txncheck check` to write a new trace" in err and err.count("error:") == 1
    assert not (proj / trace).with_suffix(".html").exists()
    code, out, err = run("check", "./demo.py", "--variant", "eager-ping", cwd=proj)  # as the message says
    code, out, err = run("replay", trace, cwd=proj)
    assert code == 1 and "confirmed" in out


def test_a_trace_whose_spec_file_is_gone_is_one_message(proj):
    run("check", "./demo.py", "--out", "o", cwd=proj)
    os.remove(proj / "demo.py")
    code, out, err = run("replay", "o/traces/Done.json", cwd=proj)
    assert code == 2 and "cannot be loaded from where it was written" in err and "demo.py does not exist" in err


def test_two_files_with_the_same_spec_name_are_not_confused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "demo.py").write_text(demo("demo", rounds=2))
    (b / "demo.py").write_text(demo("demo", rounds=3))
    outs = {}
    for d, rounds in ((a, 2), (b, 3)):
        code, out, err = run("check", d / "demo.py", "--out", d / "o", cwd=tmp_path)
        assert code == 0 and f"{STATES[rounds]} distinct states" in out, out + err
        outs[d] = out
    for d, rounds in ((a, 2), (b, 3)):
        code, out, err = run("replay", d / "o" / "traces" / "Done.json", cwd=tmp_path)
        assert code == 0 and f"Done is witnessed after {3 * rounds} steps" in out, out + err
    # in one process, as the ground-model cache sees them
    from txncheck.spec.request import ModelRequest
    ma, mb = (ModelRequest.of(str(d / "demo.py")).ground() for d in (a, b))
    assert ma.spec.name == mb.spec.name == "demo"
    assert dict(ma.config.values)["rounds"] == 2 and dict(mb.config.values)["rounds"] == 3
    assert ma.source.ref != mb.source.ref and ma.source.sha256 != mb.source.sha256
    # a file edited in the same process is loaded again
    (a / "demo.py").write_text(demo("demo", rounds=3))
    assert dict(ModelRequest.of(str(a / "demo.py")).ground().config.values)["rounds"] == 3


def test_a_spec_file_named_like_a_shipped_spec_is_replayed_against_the_file(proj):
    """Before traces recorded their source, this trace was replayed against the shipped twophase."""
    (proj / "mine.py").write_text(demo("twophase"))
    code, out, err = run("check", "./mine.py", "--variant", "eager-ping", "--out", "o", cwd=proj)
    assert code == 1, out + err
    code, out, err = run("replay", "o/traces/OneInFlight.json", cwd=proj)
    assert code == 1 and "confirmed against twophase variant eager-ping" in out, out + err
    code, out, err = run("view", "o/traces/OneInFlight.json", cwd=proj)
    assert code == 0, err


def test_traces_of_shipped_specs_record_their_name_and_old_traces_still_replay(tmp_path):
    code, out, err = run("check", "twophase", "--variant", "commit-without-all-prepared", "--out", "o", cwd=tmp_path)
    assert code == 1
    path = tmp_path / "o" / "traces" / "TCConsistent.json"
    t = json.loads(path.read_text())
    assert t["spec_source"] == "twophase" and "spec_sha256" not in t  # a shipped spec: no hash (docs)
    del t["spec_source"]  # as written before provenance was recorded
    path.write_text(json.dumps(t))
    code, out, err = run("replay", path, cwd=tmp_path)
    assert code == 1 and "confirmed" in out, out + err


# ---- a user's mistakes: one message naming the file and line, exit 2 ------------------------------
@pytest.mark.parametrize("text, needles", [
    ('from txncheck.spec.model import Spec\n\nSPEC = Spec(name="x",\n',
     ["cannot load spec ./bad.py: line 3: SyntaxError: '(' was never closed"]),
    ("import os\nimport txncheck_no_such_module\n",
     ["cannot load spec ./bad.py: line 2: ModuleNotFoundError: No module named 'txncheck_no_such_module'"]),
    ("X = 1\n\nraise RuntimeError('the spec cannot be built')\n",
     ["cannot load spec ./bad.py: line 3: RuntimeError: the spec cannot be built"]),
    ("from txncheck.spec.model import Spec\nspec = None\n", ["spec file ./bad.py defines no SPEC"]),
    ("SPEC = {'name': 'x'}\n", ["SPEC in ./bad.py is a dict, not a Spec"]),
    ("import sys\nsys.exit(3)\n", ["cannot load spec ./bad.py: line 2:", "sys.exit(3)"]),
])
@pytest.mark.parametrize("command", ["check", "specs", "tables", "bmc"])
def test_a_broken_spec_file_is_one_message_exit_2(tmp_path, text, needles, command):
    (tmp_path / "bad.py").write_text(text)
    extra = ("--depth", "1") if command == "bmc" else ()
    code, out, err = run(command, "./bad.py", *extra, cwd=tmp_path)
    assert code == 2, out + err
    for needle in needles:
        assert needle in err, err
    assert err.count("error:") == 1 and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("spec, files, needle", [
    ("./missing.py", {}, "spec file ./missing.py does not exist"),
    ("./folder.py", {"folder.py/x": ""}, "spec file ./folder.py is a directory"),
    ("usebad.py", {"usebad.py": "from helper import *\n", "helper.py": "x = (\n"},
     "cannot load spec usebad.py: helper.py, line 1: SyntaxError"),
    ("badmod:SPEC", {"badmod.py": "X = 1\nY = 1 / 0\n"}, "cannot load spec badmod:SPEC: badmod.py, line 2: "
                                                          "ZeroDivisionError: division by zero"),
    ("synmod:SPEC", {"synmod.py": "def f(:\n"}, "cannot load spec synmod:SPEC: synmod.py, line 1: SyntaxError"),
    ("okmod:NOPE", {"okmod.py": "X = 1\n"}, "module okmod has no attribute NOPE"),
    ("okmod:X", {"okmod.py": "X = 1\n"}, "spec okmod:X is an int, not a Spec"),
    ("txncheck_nosuch:SPEC", {}, "no module named txncheck_nosuch on the Python path"),
    ("nosuchspec", {}, "unknown spec 'nosuchspec'"),
])
def test_other_mistakes_are_one_message_exit_2(tmp_path, spec, files, needle):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    code, out, err = run("check", spec, cwd=tmp_path, pythonpath=tmp_path)
    assert code == 2, out + err
    assert needle in err and err.count("error:") == 1, err


# ---- specs installed packages publish -------------------------------------------------------------
@pytest.fixture
def site(tmp_path):
    """A folder on PYTHONPATH holding an installed distribution that publishes two specs (one broken)."""
    s = tmp_path / "site"
    (s / "fencepkg").mkdir(parents=True)
    (s / "fencepkg" / "__init__.py").write_text(demo("fencing"))
    info = s / "fencepkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fencepkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[txncheck.specs]\nfencing = fencepkg:SPEC\nbroken = fencepkg:NOPE\n")
    return s


def test_an_installed_package_publishes_specs_by_entry_point(tmp_path, site):
    code, out, err = run("specs", cwd=tmp_path, pythonpath=site)
    assert code == 0, err
    assert out.startswith("twophase:") and "fencing: ping, pong" in out and "[installed: fencepkg:SPEC]" in out
    assert "installed spec broken:" in err and "module fencepkg has no attribute NOPE" in err
    code, out, err = run("specs", "--json", cwd=tmp_path, pythonpath=site)
    listed = {d["listed_as"]: d for d in json.loads(out)}
    assert listed["fencing"]["source"] == {"kind": "entry-point", "ref": "fencepkg:SPEC",
                                           "sha256": listed["fencing"]["source"]["sha256"]}
    assert listed["twophase"]["source"]["kind"] == "shipped"
    code, out, err = run("check", "fencing", "--variant", "eager-ping", cwd=tmp_path, pythonpath=site)
    assert code == 1 and "out/fencing-small-eager-ping" in out, out + err
    t = trace_of(tmp_path, "out/fencing-small-eager-ping", "OneInFlight")
    assert t["spec_source"] == "fencepkg:SPEC"
    code, out, err = run("replay", "out/fencing-small-eager-ping/traces/OneInFlight.json", cwd=tmp_path,
                         pythonpath=site)
    assert code == 1 and "confirmed" in out
    code, out, err = run("check", "broken", cwd=tmp_path, pythonpath=site)
    assert code == 2 and "entry point broken (fencepkg:NOPE, from fencepkg)" in err
    code, out, err = run("check", "fencing", cwd=tmp_path)  # not installed here
    assert code == 2 and "unknown spec 'fencing'" in err


# ---- Spark: a spec file travels with the model reference ----------------------------------------------
def test_the_spark_reference_carries_a_spec_file_to_a_machine_without_it(tmp_path):
    """An executor need not share the driver's filesystem: the reference holds the file (and the
    module beside it that it imports), and a process that has neither grounds the same model."""
    from txncheck.checker.spark.ref import ModelRef
    from txncheck.spec.request import ModelRequest
    src = tmp_path / "src"
    src.mkdir()
    (src / "base.py").write_text(demo())
    (src / "spec.py").write_text("from base import *  # noqa\n")
    request = ModelRequest.of(str(src / "spec.py"), None, {}, "eager-ping")
    model = request.ground()
    ref = ModelRef.of(request, model)
    assert ref.request.spec == str(src / "spec.py") and ref.spec_sha256 == model.source.sha256
    assert [rel for rel, _ in ref.files] == ["spec.py", "base.py"]
    assert ref.to_json()["spec_sha256"] == ref.spec_sha256  # a store resumes only the file it was written for
    blob = tmp_path / "ref.pickle"
    blob.write_bytes(pickle.dumps(ref))
    shutil.rmtree(src)
    code = ("import pickle, sys; ref = pickle.load(open(sys.argv[1], 'rb')); m = ref.build(); "
            "print(m.spec.name, m.spec.variant, len(m.actions), m.source.sha256)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-c", code, str(blob)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["demo", "eager-ping", str(len(model.actions)), model.source.sha256]


@pytest.mark.spark
def test_a_spec_file_on_the_spark_engine(proj):
    if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pyarrow") is None \
            or shutil.which("java") is None:
        pytest.skip("needs pyspark, pyarrow and Java")
    code, out, err = run("check", "./demo.py", "--variant", "eager-ping", "--engine", "spark", "--master",
                         "local[1]", "--out", "s", cwd=proj)
    assert code == 1 and "engine spark" in out, out + err
    code, out, err = run("replay", "s/traces/OneInFlight.json", cwd=proj)
    assert code == 1 and "confirmed" in out, out + err


_LOCK_SPEC = __import__("txncheck.cli.new", fromlist=["SKELETON"]).SKELETON.format(name="lock")


def test_a_gate_file_names_a_spec_file_relative_to_itself(tmp_path):
    """A gate file in a repository names its spec by a path relative to the gate file; the gate runs
    from anywhere, and its SARIF points at the spec file's rows."""
    import json as _json
    repo = tmp_path / "repo"
    (repo / "protocols").mkdir(parents=True)
    (repo / "protocols" / "lock.py").write_text(_LOCK_SPEC)
    (repo / "txncheck.toml").write_text('[[entry]]\nname = "lock"\nspec = "protocols/lock.py"\nexpect = "pass"\n\n'
                                        '[[entry]]\nname = "lock-broken"\nspec = "protocols/lock.py"\n'
                                        'variant = "grant-when-locked"\nexpect = "pass"\n')
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    p = subprocess.run([exe, "gate", str(repo / "txncheck.toml"), "--out", "gate-out", "--sarif", "g.sarif",
                        "--no-cache"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr  # the variant breaks MutualExclusion
    assert "Traceback" not in p.stderr
    assert (tmp_path / "gate-out" / "lock" / "result.json").exists()
    results = _json.loads((tmp_path / "g.sarif").read_text())["runs"][0]["results"]
    hit = next(r for r in results if r["ruleId"].endswith("/MutualExclusion"))
    uri = hit["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("protocols/lock.py")


def test_txncheck_new_writes_a_spec_that_checks_out_of_the_box(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")

    def run(*args):
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)

    p = run("new", "fencing")
    assert p.returncode == 0 and p.stdout.splitlines() == ["wrote ./fencing.py", "next: txncheck check ./fencing.py"]
    p = run("check", "./fencing.py")
    assert p.returncode == 0 and "MutualExclusion" in p.stdout, p.stdout + p.stderr
    p = run("check", "./fencing.py", "--variant", "grant-when-locked", "--html")
    assert p.returncode == 1, p.stdout + p.stderr
    assert (tmp_path / "out" / "fencing-tiny-grant-when-locked" / "traces" / "MutualExclusion.html").exists()
    p = run("tables", "./fencing.py")
    assert p.returncode == 0, p.stderr
    p = run("new", "fencing")  # never overwrites
    assert p.returncode == 2 and "exists" in p.stderr
    p = run("new", "9lives")
    assert p.returncode == 2 and "letters, digits and _" in p.stderr


# ---- docs/user-specs.md runs as written ------------------------------------------------------------
USER_SPECS_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "user-specs.md")


def test_the_user_specs_doc_runs(tmp_path):
    """Its spec files, commands and Python API example, in a folder outside the repository (the runner of
    tests/test_tutorial.py), and what its text says of their results."""
    import re

    import test_tutorial
    done = test_tutorial.run_doc(USER_SPECS_DOC, tmp_path)
    out = {what: p.stdout for what, p in done.items()}
    assert "14 distinct states" in out["txncheck check ./handoff.py --deadlock"]
    assert "44 distinct states" in out["txncheck check ./handoff.py --config lossy"]
    assert "not applicable to this config: NothingOverwritten" in out["txncheck check ./handoff.py --config lossy"]
    assert re.search(r"NothingOverwritten\s+always\s+violated\s+after 4 steps",
                     out["txncheck check ./handoff.py --variant put-into-a-full-box"])
    doc = open(USER_SPECS_DOC, encoding="utf-8").read()
    shown = re.search(r"```\n(txncheck: error: broken\.py:.*)\n```", doc).group(1)
    assert done["txncheck tables ./broken.py --verify"].stderr.strip() == shown  # the doc shows the real message
    api = out["python api.py"].splitlines()
    assert api[0] == "pass True 10 {'items': 2, 'lossy': 0, 'receivers': 2}"
    assert "violation ('NothingOverwritten',) True" in api and "incomplete" in api
    assert api[-1] == "error: items must be in 1..10; got 99"


def test_the_import_table_of_the_user_specs_doc_is_right():
    """Every name the doc lists under a module is importable from that module."""
    import importlib
    import re
    doc = open(USER_SPECS_DOC, encoding="utf-8").read()
    rows = re.findall(r"^\| `(txncheck\.spec\.\w+)` \| (.*) \|$", doc, re.M)
    assert {m for m, _ in rows} == {"txncheck.spec.domains", "txncheck.spec.expr", "txncheck.spec.model",
                                    "txncheck.spec.sequence"}
    for module, names in rows:
        mod = importlib.import_module(module)
        for name in re.findall(r"`(\w+)`", names):
            assert hasattr(mod, name), f"{module}.{name}"
