"""What an executor's task reports instead of raising (checker/spark/failures.py): a full store, a user's spec
that leaves its domain, an executor out of memory; each one message and the vector engine's exit code, never
a Java stack trace. The full disk is a real filesystem that fills (a small tmpfs); the kept store then
resumes, once there is room, to the vector engine's counts."""
from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys

import pytest
from small_fs import small_filesystem
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark]

skip_without_spark()

from txncheck.checker.outcome import ExploreOptions  # noqa: E402
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore  # noqa: E402
from txncheck.checker.spark.failures import (ExecutorOutOfMemory, NoRoom, SparkJobFailed, StoreFull,  # noqa: E402
                                             job_failure, raise_any, task_result)  # noqa: E402
from txncheck.checker.spark.session import SparkEngineError  # noqa: E402
from txncheck.checker.vector.explore import explore as vector_explore  # noqa: E402
from txncheck.spec.errors import ConfigError, EvaluationError, ResourceError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = ModelRef.named("twophase", "tiny")   # a store of about 300 KiB on tmpfs, 11 levels


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG])
def test_a_want_of_room_is_a_tasks_result(code):
    got = task_result(OSError(code, os.strerror(code)), 3)
    assert got["task"] == 3 and got["failed"]["errno"] == code
    other = task_result(OSError(code, "x"), 5)
    with pytest.raises(NoRoom, match=r"task 3 of the job 'j'"):
        raise_any([other, {"task": 1}, got], "j")   # the least task that failed


@pytest.mark.parametrize("err", [ValueError("x"), KeyError("k"), RuntimeError("r")])
def test_other_errors_stay_errors(err):
    assert task_result(err, 0) is None
    raise_any([{"task": 0}], "j")


def test_errors_a_user_can_act_on_come_back_as_they_were_raised():
    ev = EvaluationError("assigns 3 to tpos, outside its domain 0..2", "ND-2", {"tpos": 2})
    with pytest.raises(EvaluationError) as info:
        raise_any([task_result(ev, 1)], "j")
    assert (str(info.value), info.value.row, info.value.state) == (str(ev), "ND-2", {"tpos": 2})
    with pytest.raises(ExecutorOutOfMemory, match=r"^task 2 of the job 'j', on an executor ran out of memory .*"
                                                  r"--executor-memory"):
        raise_any([task_result(MemoryError(), 2)], "j")
    with pytest.raises(SparkEngineError, match=r"^task 0 of the job 'j', on an executor: no spec named x"):
        raise_any([task_result(ConfigError("no spec named x"), 0)], "j")
    with pytest.raises(SparkEngineError, match=r"^task 4 of the job 'j', on an executor could not use the store: "
                                               r"\[Errno 13\] Permission denied: '/s/x'; check that every executor"):
        raise_any([task_result(PermissionError(errno.EACCES, "Permission denied", "/s/x"), 4)], "j")
    with pytest.raises(ResourceError, match=r"^task 0 of the job 'j', on an executor: out of y"):
        raise_any([task_result(ResourceError("out of y"), 0)], "j")


class Py4JJavaError(Exception):
    """Stands for py4j's, which `job_failure` knows by name (pyspark is not imported to classify it)."""


# the shape of pyspark 4.3's texts, shortened (the frames are hundreds of lines)
CRASHED = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 4.0 failed 8 times, most recent \
failure: Lost task 1.7 in stage 4.0 (TID 41) (10.0.0.7 executor 3): org.apache.spark.SparkException: Python worker \
exited unexpectedly (crashed). Consider setting 'spark.python.worker.faulthandler.enabled' configuration to 'true'
\tat org.apache.spark.api.python.BasePythonRunner.run(PythonRunner.scala:1)
"""
RESET = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 15.0 failed 1 times, most \
recent failure: Lost task 1.0 in stage 15.0 (TID 31) (localhost executor driver): java.net.SocketException: \
Connection reset
\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:1)
"""
RAISED = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 0.0 (TID 0) (localhost executor driver): org.apache.spark.api.python.PythonException: \
Traceback (most recent call last):
  File "worker.py", line 64, in run_task
    k = ctx.ref.kernel()
KeyError: 'x'

\tat org.apache.spark.api.python.BasePythonRunner.run(PythonRunner.scala:1)
"""


def test_a_job_spark_gave_up_on_is_one_line():
    got = job_failure(Py4JJavaError(CRASHED), "txncheck level 9 step")
    assert isinstance(got, SparkJobFailed)
    assert str(got).startswith("the Spark job 'txncheck level 9 step' failed: task 1 failed 8 times (Python worker "
                               "exited unexpectedly (crashed)); a Python worker that dies on its own is most often "
                               "killed by the operating system for memory")
    reset = job_failure(Py4JJavaError(RESET), "j")
    assert "failed: task 1 failed 1 time (Connection reset); a Python worker that dies on its own" in str(reset)
    bug = job_failure(Py4JJavaError(RAISED), "j")
    assert type(bug) is RuntimeError and str(bug) == "a task of the job 'j' raised on an executor: KeyError: 'x'"
    assert job_failure(ValueError("x"), "j") is None
    other = job_failure(Py4JJavaError("An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: "
                                      "Job 3 cancelled because SparkContext was shut down\n\tat x"), "j")
    assert str(other) == "the Spark job 'j' failed: Job 3 cancelled because SparkContext was shut down"


def _runtime_error_spec(tmp_path) -> str:
    """examples/ewd840.py with an update that leaves its domain in some states only (node 2 holding the
    token), so that no static check sees it and only the search meets it."""
    with open(os.path.join(ROOT, "examples", "ewd840.py")) as f:
        text = f.read()
    old = "updates=(active[i].set(False),),"
    assert old in text
    path = tmp_path / "ewd840_broken.py"
    path.write_text(text.replace(old, "updates=(active[i].set(False), tpos.set(tpos + 1)),"))
    return str(path)


def test_a_spec_that_leaves_its_domain_on_an_executor_is_the_vector_engines_error(spark, tmp_path, txncheck_main):
    spec = _runtime_error_spec(tmp_path)
    v = txncheck_main("check", spec, "--out", str(tmp_path / "v"))
    s = txncheck_main("check", spec, "--engine", "spark", "--master", "local[2]", "--out", str(tmp_path / "s"))
    assert v[0] == 2 and "assigns 3 to tpos" in v[2] and "row ND-2" in v[2], v
    assert (s[0], s[2]) == (v[0], v[2])
    assert not (tmp_path / "s" / "result.json").exists()


MEMORY = """
import sys
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
from txncheck.checker.spark.failures import ExecutorOutOfMemory
try:
    explore(ModelRef.named("kafka", "tiny"), ExploreOptions(),
            SparkOptions(master="local[2]", partitions=4, conf=(("spark.executor.pyspark.memory", "300m"),)))
except ExecutorOutOfMemory as err:
    print(err)
    sys.exit(3)
"""


@pytest.mark.long   # a Spark session of its own: about 15 s
def test_an_executor_out_of_memory_is_a_resource_error(tmp_path):
    """Python workers capped at 300 MiB (spark.executor.pyspark.memory) cannot build Kafka's kernel and load Arrow:
    a MemoryError, or an ImportError of a library that could not be mapped under the cap (since the kernel got
    smaller, 2026-12-03, it is Arrow's), is the executor running out of memory."""
    p = subprocess.run([sys.executable, "-c", MEMORY], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    assert re.search(r"on an executor ran out of memory \((MemoryError|ImportError: .*failed to map segment)", p.stdout), \
        p.stdout
    assert "Traceback" not in p.stderr and "Py4JJavaError" not in p.stderr, p.stderr


def test_a_full_store_on_the_executors_stops_and_resumes_once_there_is_room(spark, tmp_path):
    v = vector_explore(TINY.build(), ExploreOptions())
    with small_filesystem(tmp_path / "fs", "100k") as fs:
        store = f"{fs.path}/ck"
        with pytest.raises(StoreFull) as info:
            explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, store=store))
        msg = str(info.value)
        assert msg.startswith(f"no room for the Spark engine's store at {store}: task ")
        assert "on an executor failed to write to it" in msg and "No space left on device" in msg
        assert "free on its filesystem" in msg and "the store holds" in msg
        assert "make room on that filesystem or give --out (or --checkpoint) on a filesystem with room" in msg
        assert f"--resume {store} goes on from there" in msg
        with open(f"{store}/manifest.json") as f:
            recorded = len(json.load(f)["records"])
        assert 1 <= recorded < len(v.level_sizes)       # it stopped part way
        fs.grow("8m")
        out = explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, resume=store))
    assert (out.distinct, out.generated, list(out.level_sizes)) == (v.distinct, v.generated, list(v.level_sizes))
    assert out.extra["resumed_levels"] == recorded - 1


def test_a_full_store_on_the_driver_is_the_same_message(spark, tmp_path):
    with small_filesystem(tmp_path / "fs", "64k") as fs:
        fs.fill()    # full before the run starts
        with pytest.raises(StoreFull, match=r"^no room for the Spark engine's store at .*: the driver failed to "
                                            r"write to it \(.*No space left on device\)"):
            explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, store=f"{fs.path}/ck"))


@pytest.mark.long   # two runs of the command line, each starting Spark: about 30 s
def test_the_cli_says_the_store_is_full_in_one_line_then_resumes(tmp_path, txncheck_cli):
    """What a user types: exit 2 and one line on stderr (no Java stack trace, no executor's traceback), no
    verdict and no result.json; after making room the same command with --resume finishes the run."""
    with small_filesystem(tmp_path / "fs", "100k") as fs:
        ck = f"{fs.path}/ck"
        args = ["check", "twophase", "--config", "tiny", "--engine", "spark", "--master", "local[2]",
                "--partitions", "4", "--out", "out"]
        rc, out, err = txncheck_cli(*args, "--checkpoint", ck, cwd=tmp_path)
        assert rc == 2, out + err
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"txncheck: error: no room for the Spark engine's store at {ck}: ")
        assert "verdict" not in out.lower()
        assert not (tmp_path / "out" / "result.json").exists()
        fs.grow("8m")
        rc, out, err = txncheck_cli(*args, "--checkpoint", ck, "--resume", ck, cwd=tmp_path)
        assert rc == 0, out + err
        assert "verdict: PASS" in out
        with open(tmp_path / "out" / "result.json") as f:
            assert json.load(f)["stats"]["distinct"] == 288


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


@pytest.mark.long   # a Spark run killed part way: about 20 s
def test_python_workers_killed_under_a_job_is_one_line_and_exit_3(tmp_path):
    """As the operating system's out-of-memory killer does: the run's own Python workers (the pyspark daemon
    and its forks under this run's JVM, no other run's) SIGKILLed once the search is under way."""
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    p = subprocess.Popen([exe, "check", "kafka", "--config", "tiny", "--engine", "spark", "--master", "local[2]",
                          "--progress", "--out", "out"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    lines = []
    try:
        for line in p.stderr:
            lines.append(line)
            if line.startswith("progress [spark]: depth 5,"):
                break
        killed = [c for c in _descendants(p.pid) if "pyspark.daemon" in _cmdline(c) or "pyspark/daemon" in _cmdline(c)]
        assert killed, "".join(lines)
        for c in killed:
            try:
                os.kill(c, 9)
            except ProcessLookupError:
                pass
        out, err = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
    rest = [line for line in err.splitlines() if not line.startswith("progress [spark]")]
    assert p.returncode == 3, out + err
    assert len(rest) == 1, err
    assert rest[0].startswith("txncheck: the Spark job 'txncheck level ")
    # the cause as Spark words it: pyspark 4.3 says so; 3.5, by timing, may see only its socket to the worker go
    assert re.search(r" failed: task \d+ failed 1 time \((Python worker exited unexpectedly \(crashed\)|Connection "
                     r"reset|Broken pipe)\); a Python worker that dies on its own is most often killed by the operating "
                     r"system for memory", rest[0]), rest[0]
    assert "verdict" not in out.lower() and not (tmp_path / "out" / "result.json").exists()
