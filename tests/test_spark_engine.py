"""The Spark engine agrees with the vector engine (local[2], one shared session)."""
from __future__ import annotations

import shutil
import tempfile

import numpy as np
import pytest
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark]

skip_without_spark()

from txncheck.checker.outcome import ExploreOptions  # noqa: E402
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore  # noqa: E402
from txncheck.checker.vector.explore import explore as vector_explore  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from txncheck.checker.spark.session import start_session
    work = tempfile.mkdtemp(prefix="txncheck-spark-test-")
    s = start_session(SparkOptions(master="local[2]"), work)
    yield s
    s.stop()
    shutil.rmtree(work, ignore_errors=True)


def agree(ref: ModelRef, opts: ExploreOptions, tmp_path=None, **sk):
    o = explore(ref, opts, SparkOptions(master="local[2]", partitions=4, **sk))
    v = vector_explore(ref.build(), opts)
    assert o.distinct == v.distinct
    assert o.level_sizes == v.level_sizes
    assert o.generated == v.generated
    assert np.array_equal(o.fired, v.fired)
    assert (o.complete, o.stop_reason) == (v.complete, v.stop_reason)
    assert set(o.violations) == set(v.violations)
    assert set(o.witnesses) == set(v.witnesses)
    for k in o.violations:
        assert o.path(o.violations[k]) == v.path(v.violations[k])
        assert o.fps[o.violations[k]] == v.fps[v.violations[k]]
    for k in o.witnesses:
        assert o.fps[o.witnesses[k]] == v.fps[v.witnesses[k]]
    assert (o.deadlock is None) == (v.deadlock is None)
    assert np.array_equal(np.sort(np.asarray(o.fps)), np.sort(v.fps))
    for k in v.goal_masks:  # recoverable: same masks per fingerprint
        ov, vv = np.argsort(np.asarray(o.fps)), np.argsort(v.fps)
        assert np.array_equal(o.goal_masks[k][ov], v.goal_masks[k][vv])
        assert np.array_equal(o.when_masks[k][ov], v.when_masks[k][vv])
    assert (o.edges is None) == (v.edges is None)
    if v.edges is not None:  # the same edges, named by fingerprints
        assert _edge_set(o) == _edge_set(v)
    return o


def _edge_set(out):
    fps = np.asarray(out.fps)
    src, dst, act = out.edges
    rows = np.stack([fps[src], fps[dst], act.astype(np.uint64)], axis=1)
    return np.unique(rows, axis=0).tobytes()


def test_twophase_tiny(spark):
    agree(ModelRef("twophase", "tiny"), ExploreOptions())


def test_twophase_variant_counterexample_and_resume_store(spark, tmp_path):
    ref = ModelRef("twophase", "ci", variant="commit-without-all-prepared")
    o = agree(ref, ExploreOptions(), store=str(tmp_path / "store"))
    assert o.stop_reason == "violation"
    # a finished store resumes to the same outcome without running a level
    r = explore(ref, ExploreOptions(), SparkOptions(master="local[2]", resume=str(tmp_path / "store")))
    assert r.violations.keys() == o.violations.keys()
    assert r.path(r.violations["TCConsistent"]) == o.path(o.violations["TCConsistent"])


def test_strengthening_invariants_checked_on_the_executors(spark):
    """`check --invariants`: the executors rebuild the model from the ModelRef, so the flag travels in it."""
    ref = ModelRef("twophase", "tiny", variant="commit-without-all-prepared", invariants=True)
    assert ModelRef.from_json(ref.to_json()) == ref
    assert "invariants" not in ModelRef("twophase", "tiny").to_json()  # older stores still resume
    o = agree(ref, ExploreOptions(stop_on_violation=False, properties=("TPInductive",)))
    assert set(o.violations) == {"TPInductive"}


def test_twophase_symmetry_and_limits(spark):
    agree(ModelRef("twophase", "tiny", symmetry=True), ExploreOptions(symmetry=True))
    agree(ModelRef("twophase", "tiny"), ExploreOptions(max_depth=3, check_deadlock=True))


def test_paxoscommit_tiny(spark):
    agree(ModelRef("paxoscommit", "tiny"), ExploreOptions())


def test_kafka_tiny(spark):
    agree(ModelRef("kafka", "tiny"), ExploreOptions())


def test_kafka_recoverable_violation(spark):
    """kip98 tiny breaks the recoverable LIVE-1 (a hanging transaction): found from the stored
    edges, with the vector engine's shortest counterexample."""
    from txncheck.checker import recoverable
    ref = ModelRef("kafka", "tiny", (("protocol", "kip98"),))
    opts = ExploreOptions(stop_on_violation=False)
    o = agree(ref, opts)
    v = vector_explore(ref.build(), opts)
    model = ref.build()
    so, sv = recoverable.check(model, o, "LIVE-1"), recoverable.check(model, v, "LIVE-1")
    assert so is not None and sv is not None
    assert o.fps[so] == v.fps[sv] and len(o.path(so)) == len(v.path(sv))


def test_errors_are_clear(monkeypatch):
    from txncheck.checker.spark import session
    from txncheck.checker.spark.session import SparkEngineError
    with pytest.raises(SparkEngineError, match="cannot reach the Spark master"):
        session.check_master("spark://127.0.0.1:1")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(SparkEngineError, match="needs a Java runtime"):
        session.check_java("4.0.0")
