"""The vector engine's checkpoint (`check --checkpoint DIR`, `check --resume DIR`): a run killed with
SIGKILL at any moment and resumed gives the result of a run never interrupted, byte for byte (counts,
verdicts, traces); a checkpoint of another search, a damaged one, or a directory that is not one is
refused with one message (exit 2). Kafka tiny has 42 levels and recoverable properties, so edges and
goal/when masks cross the kill too.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest

from txncheck.checker import checkpoint as shared
from txncheck.checker.checkpoint import Checkpointing, CheckpointError
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.vector.explore import explore, run
from txncheck.spec.request import ModelRequest

from test_vector_budget import by_source

EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
KAFKA = ("check", "kafka", "--config", "tiny")
# stats that describe the run rather than the search: times, memory, how much was resumed
RUN_DEPENDENT = ("seconds", "states_per_second", "peak_memory_bytes", "judge_seconds", "vector_seconds",
                 "vector_resumed_levels", "vector_checkpoint_bytes", "vector_chunks", "vector_spilled_bytes",
                 "vector_search_peak_bytes")


def _run(*args, cwd):
    p = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def _result(out):
    """result.json without the run-dependent stats, and every trace file's bytes."""
    d = json.loads((out / "result.json").read_text())
    for k in RUN_DEPENDENT:
        d["stats"].pop(k, None)
    traces = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "traces").rglob("*")) if p.is_file()}
    return d, traces


def _records(ck) -> int:
    try:
        with open(os.path.join(ck, shared.MANIFEST)) as f:
            return len(json.load(f)["records"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run without a checkpoint (the result to reach), and how long a checkpointed run takes
    as a whole process (only to spread the kill moments over it)."""
    d = tmp_path_factory.mktemp("ref")
    code, _, err = _run(*KAFKA, "--out", "plain", cwd=d)
    assert code == 0, err
    t0 = time.monotonic()
    code, _, err = _run(*KAFKA, "--out", "ck-out", "--checkpoint", "ck", cwd=d)
    wall = time.monotonic() - t0
    assert code == 0, err
    assert _result(d / "ck-out") == _result(d / "plain")  # checkpointing changes nothing in the result
    return {"dir": d, "result": _result(d / "plain"), "wall": wall, "records": _records(d / "ck")}


def _kill_at(p, delay: float) -> None:
    try:
        p.wait(timeout=delay)  # the process may finish first: then the checkpoint is complete
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _kill_after(p, ck, levels: int) -> None:
    """SIGKILL as soon as the checkpoint records `levels` levels (mid-search)."""
    while p.poll() is None and _records(ck) < levels:
        time.sleep(0.002)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()


def _start(args, cwd):
    return subprocess.Popen([EXE, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _continue_flag(ck):
    # killed before the engine created its checkpoint: nothing was written, so the run starts over
    return ["--resume", str(ck)] if os.path.isdir(ck) else ["--checkpoint", str(ck)]


@pytest.mark.parametrize("seed", [1, 2, 3, pytest.param(4, marks=pytest.mark.long),
                                  *[pytest.param(s, marks=pytest.mark.heavy) for s in (5, 6)]])
def test_killed_at_random_moments_then_resumed_gives_the_same_result(reference, tmp_path, seed):
    rng = random.Random(seed)
    ck = tmp_path / "ck"
    args = [*KAFKA, "--out", "o"]
    for _ in range(rng.choice((1, 2, 3))):  # a resumed run is killed in turn
        p = _start(args + _continue_flag(ck), tmp_path)
        if seed % 2:
            _kill_at(p, rng.uniform(0.0, reference["wall"] * 1.1))
        else:
            _kill_after(p, ck, rng.randrange(1, reference["records"] + 1))
    code, _, err = _run(*args, *_continue_flag(ck), cwd=tmp_path)
    assert code == 0, err
    assert _result(tmp_path / "o") == reference["result"]
    assert sorted(e for e in os.listdir(ck) if e.startswith(shared.TMP_PREFIX)) == []


def test_a_spilling_run_killed_mid_search_resumes_with_the_same_result(tmp_path):
    """With a 1 MiB budget the visited set spills to disk at level 27 (43,700 states of 24 bytes), before
    the kill; the resumed run spills again as it restores the levels. A budget this small leaves LIVE-4
    unjudged (its restricted graph needs more: exit 3, the search itself complete), in both runs alike."""
    spill = ("--memory-budget", "1", "--json")
    code, out, err = _run(*KAFKA, *spill, "--out", "ref", cwd=tmp_path)
    ref = json.loads(out)
    assert code == 3 and ref["complete"] and list(ref["stats"]["unjudged"]) == ["LIVE-4"], err
    assert ref["stats"]["vector_spills"] >= 1
    ck = tmp_path / "ck"
    p = _start([*KAFKA, *spill, "--out", "o", "--checkpoint", str(ck)], tmp_path)
    _kill_after(p, ck, 36)
    assert 0 < _records(ck) < 43
    code, _, err = _run(*KAFKA, *spill, "--out", "o", "--resume", str(ck), cwd=tmp_path)
    assert code == 3, err
    assert _result(tmp_path / "o") == _result(tmp_path / "ref")


def test_a_finished_checkpoint_resumes_without_searching(reference, tmp_path):
    shutil.copytree(reference["dir"] / "ck", tmp_path / "ck")
    code, out, err = _run(*KAFKA, "--out", "o", "--resume", "ck", "--json", cwd=tmp_path)
    assert code == 0, err
    stats = json.loads(out)["stats"]
    assert stats["vector_resumed_levels"] == reference["records"]
    assert stats["vector_seconds"]["expand"] == 0
    assert _result(tmp_path / "o") == reference["result"]


def test_a_checkpoint_of_another_search_is_refused(reference, tmp_path):
    shutil.copytree(reference["dir"] / "ck", tmp_path / "ck")
    for extra, needle in ((("--config", "eos"), 'model.config "tiny" there, "eos" now'),
                          (("--set", "delays=0"), "model.overrides"),
                          (("--continue",), "stop_on_violation true there, false now"),
                          (("--max-depth", "9"), "max_depth null there, 9 now")):
        args = list(KAFKA) + list(extra)
        code, out, err = _run(*args, "--out", "o", "--resume", "ck", cwd=tmp_path)
        assert code == 2 and needle in err and "another search" in err, err
        assert not (tmp_path / "o").exists()
    # and a checkpoint is never overwritten by a new run, nor written among someone else's files
    code, _, err = _run(*KAFKA, "--out", "o", "--checkpoint", "ck", cwd=tmp_path)
    assert code == 2 and "holds the checkpoint of an earlier run" in err and "--resume ck" in err, err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    code, _, err = _run(*KAFKA, "--out", "o", "--checkpoint", "mine", cwd=tmp_path)
    assert code == 2 and "holds files txncheck did not write (notes.txt)" in err, err


@pytest.mark.parametrize("args,needle", [
    (("--engine", "scalar", "--checkpoint", "ck"), "--checkpoint applies to the vector and spark engines only"),
    (("--engine", "scalar", "--resume", "ck"), "--resume applies to the vector and spark engines only"),
    (("--checkpoint", "a", "--resume", "b"), "drop --checkpoint or give both the same DIR"),
    (("--checkpoint", "o/ck", "--out", "o"), "overlap"),
    (("--resume", "nowhere"), "--resume nowhere: no such directory"),
])
def test_checkpoint_flags_that_cannot_work_are_refused(tmp_path, args, needle):
    code, _, err = _run("check", "twophase", *args, cwd=tmp_path)
    assert code == 2 and needle in err, err


def _partial(src, dst, keep: int) -> dict:
    """A copy of checkpoint `src` as a run killed after `keep` records leaves it (the later files too)."""
    shutil.copytree(src, dst)
    man = json.loads((dst / shared.MANIFEST).read_text())
    man["records"] = man["records"][:keep]
    (dst / shared.MANIFEST).write_text(json.dumps(man))
    return man


def test_a_damaged_level_file_is_refused_and_an_unrecorded_one_ignored(reference, tmp_path):
    src = reference["dir"] / "ck"
    # a level file that differs from its record (a bit flipped, a truncation): refused, never read as states
    for name, damage in (("flip", lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:]), ("cut", lambda b: b[:-8])):
        ck = tmp_path / name
        _partial(src, ck, 20)
        f = ck / "level-00010.bin"
        f.write_bytes(damage(f.read_bytes()))
        code, _, err = _run(*KAFKA, "--out", "o", "--resume", str(ck), cwd=tmp_path)
        assert code == 2 and "level-00010.bin (level 10) is damaged" in err, err
    # the files of levels the manifest does not name (a killed level, a temporary file) are removed
    ck = tmp_path / "unrecorded"
    _partial(src, ck, 20)
    (ck / f"{shared.TMP_PREFIX}level-00020.bin").write_bytes(b"half a level")
    code, _, err = _run(*KAFKA, "--out", "o", "--resume", str(ck), cwd=tmp_path)
    assert code == 0, err
    assert _result(tmp_path / "o") == reference["result"]
    assert not (ck / f"{shared.TMP_PREFIX}level-00020.bin").exists()


def test_a_checkpoint_whose_states_do_not_match_the_model_is_refused(reference, tmp_path):
    """A level file intact but of other states (its record's checksum made to match): the rebuilt frontier's
    fingerprints differ, so the resume stops before searching on."""
    ck = tmp_path / "ck"
    man = _partial(reference["dir"] / "ck", ck, 20)
    rec = man["records"][10]
    f = ck / rec["file"]
    data = bytearray(f.read_bytes())
    name, _, n, offset = next(a for a in rec["arrays"] if a[0] == "fps")
    fps = np.frombuffer(data, np.uint64, n, offset).copy()
    fps[0] ^= np.uint64(1)
    data[offset:offset + 8 * n] = fps.tobytes()
    f.write_bytes(bytes(data))
    rec["crc32"] = zlib.crc32(data)
    (ck / shared.MANIFEST).write_text(json.dumps(man))
    code, _, err = _run(*KAFKA, "--out", "o", "--resume", str(ck), cwd=tmp_path)
    assert code == 2 and "level 10 does not match this model" in err, err


def test_other_engines_checkpoints_and_directories_are_named(tmp_path):
    (tmp_path / "spark").mkdir()
    (tmp_path / "spark" / shared.MANIFEST).write_text(json.dumps({"version": 2, "engine": "spark"}))
    code, _, err = _run("check", "twophase", "--resume", "spark", cwd=tmp_path)
    assert code == 2 and "resume it with --engine spark" in err, err
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "result.json").write_text("{}")
    code, _, err = _run("check", "twophase", "--resume", "results", cwd=tmp_path)
    assert code == 2 and "no vector checkpoint there" in err, err


# -- in process: every way a search ends, resumed from every point ---------------------------------------

def _same(a, b):
    assert a.level_sizes == b.level_sizes
    assert (a.generated, a.complete, a.stop_reason, a.deadlock) == (b.generated, b.complete, b.stop_reason, b.deadlock)
    assert np.array_equal(a.fired, b.fired)
    for x, y in ((a.fps, b.fps), (a.parent, b.parent), (a.action, b.action)):
        assert np.array_equal(x, y)
    assert a.violations == b.violations and a.witnesses == b.witnesses
    assert a.goal_masks.keys() == b.goal_masks.keys()
    for k in a.goal_masks:
        assert np.array_equal(a.goal_masks[k], b.goal_masks[k]) and np.array_equal(a.when_masks[k], b.when_masks[k])
    assert (a.edges is None) == (b.edges is None)
    if a.edges is not None:  # a resumed search rebuilds its frontier in fingerprint order: its edges' order differs
        assert all(np.array_equal(x, y) for x, y in zip(by_source(a.edges), by_source(b.edges)))


@pytest.mark.parametrize("spec,config,overrides,variant,options", [
    ("twophase", "tiny", {"rm": 5}, None, ExploreOptions(symmetry=True)),
    ("twophase", "tiny", {"rm": 4}, "commit-without-all-prepared",
     ExploreOptions(stop_on_violation=False, check_deadlock=True)),
    ("kafka", "tiny", {"protocol": "kip98"}, None, ExploreOptions()),                   # stops on a violation
    pytest.param("kafka", "tiny", {}, None, ExploreOptions(max_depth=20, memory_budget=10_000),  # depth limit; 7 spills
                 marks=pytest.mark.heavy),  # 28 s in make test (2026-11-27)
    ("twophase", "tiny", {"rm": 5}, None, ExploreOptions(max_states=3000)),
])
def test_resumed_from_every_level_the_outcome_is_the_same(tmp_path, spec, config, overrides, variant, options):
    request = ModelRequest.of(spec, config, overrides, variant)
    model = request.ground()
    plain = explore(model, options)
    full = run(request, model, options, Checkpointing(str(tmp_path / "ck")))
    _same(plain, full)
    n = _records(tmp_path / "ck")
    for keep in range(n + 1):
        ck = tmp_path / f"k{keep}"
        _partial(tmp_path / "ck", ck, keep)
        got = run(request, model, options, Checkpointing(str(ck), resume=True))
        _same(plain, got)
        assert got.extra["vector_resumed_levels"] == keep
        shutil.rmtree(ck)


def test_another_txncheck_version_is_refused(tmp_path, monkeypatch):
    request = ModelRequest.of("twophase", "tiny")
    model = request.ground()
    run(request, model, ExploreOptions(), Checkpointing(str(tmp_path / "ck")))
    monkeypatch.setattr(shared, "txncheck_version", lambda: "99.0")
    import txncheck.checker.vector.explore as vexplore
    monkeypatch.setattr(vexplore, "txncheck_version", lambda: "99.0")
    with pytest.raises(CheckpointError, match=r'txncheck "[^"]*" there, "99.0" now'):
        run(request, model, ExploreOptions(), Checkpointing(str(tmp_path / "ck"), resume=True))


def test_a_checkpoint_that_cannot_be_written_stops_the_run_clearly_and_resumes(tmp_path, monkeypatch, capsys):
    """Out of disk at level 6: exit 2 naming the directory, the level's size and the way on; no verdict, no
    result; the levels written before it resume to the full result once there is room."""
    import errno

    from txncheck.checker.vector import checkpoint as vcheckpoint
    from txncheck.cli.main import main
    real = vcheckpoint.fsync_dir
    calls = []

    def full(path):
        calls.append(path)
        if len(calls) == 7:  # one per level file: level 6's
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        real(path)
    monkeypatch.setattr(vcheckpoint, "fsync_dir", full)
    ck, out = tmp_path / "ck", tmp_path / "o"
    rc = main(["check", "twophase", "--set", "rm=4", "--checkpoint", str(ck), "--out", str(out)])
    got = capsys.readouterr()
    assert rc == 2, got
    assert f"--checkpoint {ck}: cannot write level 6 (No space left on device; the level takes" in got.err
    assert f"continue with --resume {ck}" in got.err and "verdict" not in got.out.lower()
    assert not (out / "result.json").exists()
    assert _records(ck) == 6 and not [e for e in os.listdir(ck) if e.startswith(shared.TMP_PREFIX)]
    monkeypatch.setattr(vcheckpoint, "fsync_dir", real)
    assert main(["check", "twophase", "--set", "rm=4", "--resume", str(ck), "--out", str(out)]) == 0
    resumed = json.loads((out / "result.json").read_text())
    assert main(["check", "twophase", "--set", "rm=4", "--out", str(tmp_path / "plain")]) == 0
    plain = json.loads((tmp_path / "plain" / "result.json").read_text())
    for d in (resumed, plain):
        for k in RUN_DEPENDENT:
            d["stats"].pop(k, None)
    assert resumed == plain
