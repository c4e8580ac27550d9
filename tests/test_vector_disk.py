"""The vector engine's spill files: a disk that cannot take them stops the run with one message and no
result (exit 2), and they are removed however the run ends (a pass, a violation, out of memory, a full
disk, Ctrl-C, SIGTERM); those of a SIGKILLed run are never read by another and go with the next run."""
from __future__ import annotations

import errno
import glob
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.vector import spill as spill_module
from txncheck.checker.vector.explore import explore
from txncheck.checker.vector.kernel import VectorKernel
from txncheck.checker.vector.spill import SpillError
from txncheck.spec.request import ModelRequest

EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
TINY = 64  # bytes: every part of the search spills


def _options(tmp_path, **kw) -> ExploreOptions:
    return replace(ExploreOptions(**kw), memory_budget=TINY, chunk_states=7, workdir=str(tmp_path / "spill"))


def _full_disk_after(monkeypatch, appends: int):
    """Spill writes fail with ENOSPC once `appends` of them succeeded (as a disk that fills up)."""
    real_open = open
    done = [0]

    def fake_open(path, mode="r", *args, **kw):
        if "a" in mode:
            done[0] += 1
            if done[0] > appends:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real_open(path, mode, *args, **kw)
    monkeypatch.setattr(spill_module, "open", fake_open, raising=False)
    return done


def _leftovers(parent) -> list[str]:
    return sorted(e for e in os.listdir(parent) if e.startswith(".txncheck-"))


# -- a disk that cannot take the spill files ---------------------------------------------------------

def test_a_full_disk_stops_the_search_naming_the_file_and_the_size(tmp_path, monkeypatch):
    model = ModelRequest.of("twophase", None, {"rm": "5"}).ground()
    done = _full_disk_after(monkeypatch, 40)
    with pytest.raises(SpillError) as caught:
        explore(model, _options(tmp_path))
    assert done[0] > 40  # the failure came mid-search, after files were written
    msg = str(caught.value)
    assert str(tmp_path / "spill") in msg and ".bin" in msg and "No space left on device" in msg
    assert "MiB" in msg and "spilled" in msg and "make room" in msg and "--memory-budget" in msg
    assert os.listdir(tmp_path / "spill") == []  # what was written before goes too


def test_a_spill_directory_that_cannot_be_created_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    model = ModelRequest.of("twophase", None, {"rm": "4"}).ground()
    options = replace(_options(tmp_path), workdir=str(tmp_path / "afile" / "spill"))
    with pytest.raises(SpillError, match=r"creating .*afile/spill/visited-.*\.bin for the visited set failed \(Not a directory\)"):
        explore(model, options)


def test_a_full_disk_is_exit_2_with_one_message_and_the_previous_run_kept(tmp_path, monkeypatch, txncheck_main):
    out = tmp_path / "run"
    code, _, _ = txncheck_main("check", "twophase", "--variant", "commit-without-all-prepared", "--out", str(out))
    assert code == 1
    before = {p: (out / p).read_bytes() for p in ("result.json", "traces/TCConsistent.json")}
    _full_disk_after(monkeypatch, 20)
    code, stdout, err = txncheck_main("check", "twophase", "--set", "rm=6", "--memory-budget", "1",
                                      "--out", str(out))
    assert code == 2, err
    assert stdout == "" and len(err.strip().splitlines()) == 1, err  # no verdict, one line
    assert err.startswith("txncheck: error: the search cannot spill to disk") and "No space left" in err
    assert {p: (out / p).read_bytes() for p in before} == before  # no result of the failed run
    assert _leftovers(tmp_path) == []


def _file_size_limit():
    # the limit on files a process writes: past it a write fails with EFBIG (SIGXFSZ ignored, not fatal)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, 256 << 10))


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="no file-size limit signal here")
@pytest.mark.parametrize("args,needles", [
    (("--memory-budget", "1"), ("the search cannot spill to disk", "/spill/", "MiB", "ulimit -f")),
    (("--checkpoint", "ck"), ("/ck: cannot write level", "the level takes", "MiB", "ulimit -f",
                              "continue with --resume ")),
], ids=["spill", "checkpoint"])
def test_a_file_size_limit_as_a_user_hits_it(tmp_path, args, needles):
    p = subprocess.run([EXE, "check", "twophase", "--set", "rm=7", *args, "--out", "run"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600, preexec_fn=_file_size_limit)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("txncheck: error: "), p.stderr
    assert "File too large" in lines[0] and all(n in lines[0] for n in needles), lines[0]
    assert not (tmp_path / "run").exists() and _leftovers(tmp_path) == []


def test_a_result_that_cannot_be_written_keeps_the_previous_run(tmp_path, monkeypatch, txncheck_main):
    from txncheck.reports import run_output
    out = tmp_path / "run"
    assert txncheck_main("check", "twophase", "--variant", "commit-without-all-prepared", "--out", str(out))[0] == 1
    before = (out / "result.json").read_bytes()
    real_open = open

    def full(path, mode="r", *args, **kw):
        if "w" in mode and str(path).endswith("result.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real_open(path, mode, *args, **kw)
    monkeypatch.setattr(run_output, "open", full, raising=False)
    code, stdout, err = txncheck_main("check", "twophase", "--out", str(out))
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1, err
    assert "cannot write result.json" in err and "No space left on device" in err and "bytes" in err
    assert (out / "result.json").read_bytes() == before and _leftovers(tmp_path) == []


# -- every way a search ends removes its spill files -------------------------------------------------

class _Stop(Exception):
    pass


def _raise_at(monkeypatch, tmp_path, call: int, error):
    """The kernel raises `error` at its `call`-th expansion, once spill files exist."""
    real = VectorKernel.expand_cols
    seen = {"calls": 0, "files": 0}

    def expand_cols(self, *a, **kw):
        seen["calls"] += 1
        if seen["calls"] == call:
            seen["files"] = len(os.listdir(tmp_path / "spill"))
            raise error
        return real(self, *a, **kw)
    monkeypatch.setattr(VectorKernel, "expand_cols", expand_cols)
    return seen


@pytest.mark.parametrize("end", ["pass", "violation", "memory", "disk", "interrupt", "error"])
def test_the_spill_files_are_removed_however_the_search_ends(tmp_path, monkeypatch, end):
    variant = "commit-without-all-prepared" if end == "violation" else None
    model = ModelRequest.of("twophase", None, {"rm": "5"}, variant).ground()
    seen = None
    if end in ("memory", "interrupt", "error"):
        seen = _raise_at(monkeypatch, tmp_path, 120, {"memory": MemoryError(), "interrupt": KeyboardInterrupt(),
                                                       "error": _Stop()}[end])
    if end == "disk":
        _full_disk_after(monkeypatch, 200)
    expected = {"pass": None, "violation": None, "memory": None, "disk": SpillError,
                "interrupt": KeyboardInterrupt, "error": _Stop}[end]
    if expected is None:
        got = explore(model, _options(tmp_path))
        assert got.stop_reason == {"pass": None, "violation": "violation", "memory": "memory"}[end]
        assert got.extra["vector_spilled_bytes"] > 0
    else:
        with pytest.raises(expected):
            explore(model, _options(tmp_path))
    if seen is not None:
        assert seen["files"] > 0  # files existed when the search was cut
    assert os.listdir(tmp_path / "spill") == []


def _spill_files(parent) -> list[str]:
    return glob.glob(os.path.join(str(parent), ".txncheck-stage-*", "spill", "*.bin"))


def _start_and_wait_for_spill(tmp_path):
    p = subprocess.Popen([EXE, "check", "twophase", "--set", "rm=8", "--memory-budget", "16", "--out", "run"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _spill_files(tmp_path) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert p.poll() is None and _spill_files(tmp_path), "the run ended before it spilled"
    return p


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_search_removes_the_spill_files(tmp_path, sig, code):
    p = _start_and_wait_for_spill(tmp_path)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == code, err
    assert "Traceback" not in err and "verdict" not in out
    assert _leftovers(tmp_path) == [] and not (tmp_path / "run").exists()


def test_the_spill_files_of_a_killed_run_go_with_the_next_run(tmp_path):
    p = _start_and_wait_for_spill(tmp_path)
    p.kill()
    p.wait(timeout=60)
    assert _spill_files(tmp_path)  # SIGKILL: nothing could clean up
    got = subprocess.run([EXE, "check", "twophase", "--set", "rm=8", "--memory-budget", "16", "--json",
                          "--out", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    assert _leftovers(tmp_path) == []
    result = json.loads(got.stdout)
    assert (result["verdict"], result["stats"]["distinct"]) == ("pass", 1_745_408)


def test_stale_spill_files_in_a_given_workdir_are_removed_and_never_read(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # reaped: its pid names no process
    work = tmp_path / "spill"
    work.mkdir()
    stale = [f"visited-{dead.pid}-1.bin", f"run-0-{dead.pid}-2.bin", f"level-{dead.pid}-3.bin"]
    for name in stale:
        (work / name).write_bytes(b"\xff" * 4096)
    live = f"visited-{os.getppid()}-1.bin"  # another live process's: not ours to remove
    (work / live).write_bytes(b"\xff" * 4096)
    (work / "notes.txt").write_text("the user's")
    model = ModelRequest.of("twophase", None, {"rm": "4"}).ground()
    got = explore(model, _options(tmp_path))
    plain = explore(model, ExploreOptions())
    assert got.level_sizes == plain.level_sizes and (got.fps == plain.fps).all()
    assert sorted(os.listdir(work)) == sorted([live, "notes.txt"])


def test_a_file_of_the_out_of_core_judging_that_cannot_be_written_names_judging(tmp_path):
    """The reverse graph's and the restricted graph's files (vector/reverse.py, live.py) are written after the
    search: the message says so."""
    (tmp_path / "afile").write_text("x")
    spill = spill_module.SpillDir(str(tmp_path / "afile" / "spill"))
    with pytest.raises(SpillError) as caught:
        spill.new("reverse-src")
    msg = str(caught.value)
    assert msg.startswith("judging the graph properties cannot spill to disk: creating ")
    assert "the edges sorted by target state" in msg and "a directory you can write to" in msg
    with pytest.raises(SpillError) as caught:
        spill.new("live-src")  # the restricted graph's edges (vector/live.py)
    msg = str(caught.value)
    assert msg.startswith("judging the graph properties cannot spill to disk: creating ")
    assert "the edges between goal-less states, for judging eventually and leads_to properties" in msg
    with pytest.raises(SpillError) as caught:
        spill.new("visited")
    assert str(caught.value).startswith("the search cannot spill to disk: creating ")
