"""A real standalone cluster on 127.0.0.1 (master + two 1-core workers from the pyspark package):
a check through spark:// survives a killed worker, and a killed driver resumes with --resume,
both with the vector engine's exact result."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark, pytest.mark.slow]

skip_without_spark()

from txncheck.checker.outcome import ExploreOptions  # noqa: E402
from txncheck.checker.spark import cluster  # noqa: E402
from txncheck.checker.spark.ref import ModelRef  # noqa: E402
from txncheck.checker.vector.explore import explore as vector_explore  # noqa: E402

SPEC, CONFIG = "twophase", "tiny"


@pytest.fixture(scope="module")
def local_cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("cluster")
    c = cluster.start(str(d), workers=2)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def expected():
    v = vector_explore(ModelRef(SPEC, CONFIG).build(), ExploreOptions())
    return {"distinct": v.distinct, "level_sizes": list(v.level_sizes), "generated": v.generated,
            "complete": v.complete}


@pytest.fixture
def short_tmp():
    """A killed driver's temp files go here, not to /tmp at large. Short: Spark puts a Unix socket in
    it, and pytest's tmp_path (longer still under pytest-xdist) overflows AF_UNIX's 108 bytes."""
    d = tempfile.mkdtemp(prefix="txnc-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def driver(master, store, out, tmp, resume=False):
    cmd = [sys.executable, "-m", "txncheck.checker.spark", SPEC, "--config", CONFIG, "--master", master,
           "--executor-memory", "512m", "--partitions", "4", "--json", str(out)]
    cmd += ["--resume", str(store)] if resume else ["--store", str(store)]
    env = dict(os.environ, TMPDIR=tmp, _JAVA_OPTIONS=f"-Djava.io.tmpdir={tmp}")
    # stderr to a file, not a pipe nobody drains while waiting (a full pipe would stall the driver)
    err = open(f"{out}.err", "wb")
    p = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err, env=env)
    p.err_path = f"{out}.err"
    return p


def stderr_tail(proc, n=3000) -> str:
    with open(proc.err_path, "rb") as f:
        return f.read().decode(errors="replace")[-n:]


def records(store) -> int:
    try:
        with open(os.path.join(store, "manifest.json")) as f:
            return len(json.load(f)["records"])
    except (OSError, ValueError, KeyError):
        return 0


def wait_records(proc, store, n, timeout=300):
    t = time.time() + timeout
    while time.time() < t:
        if records(store) >= n:
            return
        if proc.poll() is not None:
            pytest.fail("the driver exited early: " + stderr_tail(proc))
        time.sleep(0.2)
    pytest.fail(f"no level {n} within {timeout} s; driver stderr: " + stderr_tail(proc))


def finish(proc, out, timeout=400):
    try:
        rc = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the driver did not finish")
    assert rc == 0, stderr_tail(proc)
    with open(out) as f:
        return json.load(f)


def same(got, expected):
    assert got["distinct"] == expected["distinct"]
    assert got["level_sizes"] == expected["level_sizes"]
    assert got["generated"] == expected["generated"]
    assert got["complete"] == expected["complete"]


def test_worker_killed_then_driver_killed_and_resumed(local_cluster, expected, tmp_path, short_tmp):
    # 1. a worker dies mid-run: Spark's task retry finishes the run with the same result
    store, out = tmp_path / "s1", tmp_path / "r1.json"
    p = driver(local_cluster.url, store, out, short_tmp)
    wait_records(p, store, 3)
    local_cluster.kill_worker(local_cluster.worker_pids[0])
    same(finish(p, out), expected)
    local_cluster.start_worker()
    # 2. the driver dies mid-run: --resume continues from the last complete level
    store, out = tmp_path / "s2", tmp_path / "r2.json"
    p = driver(local_cluster.url, store, out, short_tmp)
    wait_records(p, store, 4)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    done = records(store)
    assert done < len(expected["level_sizes"]) + 1
    p = driver(local_cluster.url, store, out, short_tmp, resume=True)
    got = finish(p, out)
    same(got, expected)
    assert got["extra"]["resumed_levels"] >= done - 1
