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
    v = vector_explore(ModelRef.named(SPEC, CONFIG).build(), ExploreOptions())
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


@pytest.mark.long  # 45 s: make test-long, on pyspark 4.x (2026-11-28)
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


# ---- the README's command as written: a relative --out against a standalone cluster ---------
# Executors run in their own working directories (the worker's work/app-*/N/): a relative --out
# once split the store between them and the driver, and the run "completed" with one state.
def readme_command(cluster_, cwd, model_args, out_rel, timeout=900):
    """`txncheck check ... --engine spark --master URL --out OUT` run from `cwd`; (rc, stdout, stderr)."""
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    cmd = [exe, "check", *model_args, "--engine", "spark", "--master", cluster_.url, "--out", out_rel]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def executors_cwd_outputs(cluster_) -> list:
    """Anything written under the executors' working directories by a relative path."""
    work = os.path.join(cluster_.dir, "work")
    return [os.path.join(d, f) for d, _, files in os.walk(work) for f in files
            if f.endswith((".parquet", ".cand", ".json")) and "out" in os.path.relpath(d, work).split(os.sep)]


@pytest.mark.long  # 57 s with the cluster's start (2026-12-02): make test-long, and test-spark35 on pyspark 3.5
@pytest.mark.spark35
def test_readme_command_with_a_relative_out(local_cluster, tmp_path):
    """The README's command form on kafka tiny (the exact command, on ci, is the heavy test below)."""
    rc, out, err = readme_command(local_cluster, tmp_path, ["kafka", "--config", "tiny"], "out/kafka-tiny-spark")
    assert rc == 0, out + err
    assert "verdict: PASS" in out
    with open(tmp_path / "out" / "kafka-tiny-spark" / "result.json") as f:
        res = json.load(f)
    v = vector_explore(ModelRef.named("kafka", "tiny").build(), ExploreOptions())
    assert (res["verdict"], res["stats"]["distinct"], res["stats"]["generated"]) == ("pass", v.distinct, v.generated)
    assert (tmp_path / "out" / "kafka-tiny-spark" / "spark" / "manifest.json").exists()
    assert executors_cwd_outputs(local_cluster) == []


@pytest.mark.heavy
def test_readme_command_as_written(local_cluster, tmp_path):
    """README: `txncheck check kafka --config ci --engine spark --master spark://... --out out/kafka-ci-spark`
    (about 30 s on the two 1-core workers of a quiet 2-core machine)."""
    rc, out, err = readme_command(local_cluster, tmp_path, ["kafka", "--config", "ci"], "out/kafka-ci-spark")
    assert rc == 0, out + err
    v = vector_explore(ModelRef.named("kafka", "ci").build(), ExploreOptions())   # 1,225,124 states when written
    assert f"{v.distinct:,} distinct states, {v.generated:,} generated, depth {len(v.level_sizes) - 1}" in out
    assert "verdict: PASS" in out
    with open(tmp_path / "out" / "kafka-ci-spark" / "result.json") as f:
        res = json.load(f)
    assert (res["verdict"], res["stats"]["distinct"]) == ("pass", v.distinct)
    assert executors_cwd_outputs(local_cluster) == []


SPLIT_STORE = """
import sys
from txncheck.checker.spark import __main__ as runner, engine
engine.absolute = lambda path: path    # the engine before the fix: the store's path as given
sys.exit(runner.main(sys.argv[1:]))
"""


@pytest.mark.long  # 11 s: as above
@pytest.mark.spark35
def test_a_store_split_between_driver_and_executors_is_an_error(local_cluster, tmp_path):
    """A store the driver and the executors see differently (here a relative path, which each
    resolves against its own working directory; on a multi-machine cluster, a path that is not
    on a shared filesystem) is an error naming the fix, with no outcome."""
    summary = tmp_path / "summary.json"
    p = subprocess.run([sys.executable, "-c", SPLIT_STORE, SPEC, "--config", CONFIG, "--master", local_cluster.url,
                        "--executor-memory", "512m", "--store", "rel/store", "--json", str(summary)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "the Spark executors could not read level 0 of the store at rel/store" in p.stderr
    assert "shared by the driver and every executor" in p.stderr
    assert not summary.exists()
