"""The Spark engine agrees with the vector engine (local[2], one shared session)."""
from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile

import numpy as np
import pytest
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark]

skip_without_spark()

from txncheck.checker import recoverable  # noqa: E402
from txncheck.checker.outcome import ExploreOptions, selected_properties  # noqa: E402
from txncheck.spec.model import EVENTUALLY, LEADS_TO, RECOVERABLE  # noqa: E402
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore  # noqa: E402
from txncheck.checker.vector.explore import explore as vector_explore  # noqa: E402


def agree(ref: ModelRef, opts: ExploreOptions, tmp_path=None, **sk):
    model = ref.build()
    v = vector_explore(model, opts)
    temp = None
    if v.edges is not None and "store" not in sk:   # the stored edges are compared below
        temp = sk["store"] = tempfile.mkdtemp(prefix="txncheck-agree-")
    try:
        o = explore(ref, opts, SparkOptions(master="local[2]", partitions=4, **sk))
        _agree(model, opts, o, v, sk.get("store"))
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    return o


def _agree(model, opts, o, v, store):
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
    selected = selected_properties(model, opts)
    # the driver holds edges only for eventually / leads_to properties (their fair cycles), judged only
    # on a complete search, and only those out of the states where one of their goals fails
    live = tuple(p.name for p in selected if p.kind in (EVENTUALLY, LEADS_TO))
    assert (o.edges is not None) == (o.complete and bool(live))
    assert o.edges_for == (live if o.edges is not None else None)
    if v.edges is not None:  # the same edges, named by fingerprints: on the driver and in the store
        if o.edges is not None:
            goal_less = np.zeros(v.distinct, dtype=bool)
            for name in live:
                goal_less |= ~v.goal_masks[name]
            assert _edge_set(o) == _edge_set(v, goal_less)
        assert _stored_edge_set(store, len(o.level_sizes) + 1, o.fps) == _edge_set(v)
    # recoverable properties, judged on the executors whatever else is selected: the state the vector
    # engine's judgement chooses
    rec = {p.name for p in selected if p.kind == RECOVERABLE}
    assert set(o.unrecoverable) == (rec if o.complete else set())
    for name, i in o.unrecoverable.items():
        j = recoverable.check(model, v, name)
        assert (i is None) == (j is None), name
        if i is not None:
            assert o.fps[i] == v.fps[j] and o.path(i) == v.path(j), name


def _edge_set(out, sources=None):
    """The edges as (source fp, target fp, action) rows; only the moving ones out of `sources` (a mask) if given."""
    fps = np.asarray(out.fps)
    src, dst, act = out.edges
    if sources is not None:
        keep = sources[src] & (src != dst)
        src, dst, act = src[keep], dst[keep], act[keep]
    rows = np.stack([fps[src], fps[dst], act.astype(np.uint64)], axis=1)
    return np.unique(rows, axis=0).tobytes()


def _stored_edge_set(store, levels, fps):
    """The store's edges whose target is a stored state (an incomplete search's last expansion also
    finds others; outcomes list only these)."""
    from txncheck.checker.spark import storage
    rows = np.concatenate([np.stack([s, d, a.astype(np.uint64)], axis=1)
                           for _, (s, d, a) in storage.iter_edges(store, levels)])
    rows = rows[np.isin(rows[:, 1], np.asarray(fps))]
    return np.unique(rows, axis=0).tobytes()


def _same_judgement(ref, opts, o):
    """`check`'s judgement of both engines' outcomes: the same property outcomes and the same trace
    bytes (both labelled spark, the one field where they would differ)."""
    from txncheck.checker.run import judge
    model = ref.build()
    a, b = judge(model, o, opts, "spark"), judge(model, vector_explore(model, opts), opts, "spark")
    assert [(p.name, p.outcome, p.depth) for p in a.properties] == \
        [(p.name, p.outcome, p.depth) for p in b.properties]
    assert sorted(a.traces) == sorted(b.traces)
    for name in a.traces:
        assert json.dumps(a.traces[name].to_json(), indent=1) == json.dumps(b.traces[name].to_json(), indent=1), name
    return a


@pytest.mark.spark35  # test-long by its time (tests/tiers.toml); the engine's first check on pyspark 3.5 too
def test_twophase_tiny(spark):
    agree(ModelRef.named("twophase", "tiny"), ExploreOptions())


def test_twophase_variant_counterexample_and_resume_store(spark, tmp_path):
    ref = ModelRef.named("twophase", "ci", variant="commit-without-all-prepared")
    o = agree(ref, ExploreOptions(), store=str(tmp_path / "store"))
    assert o.stop_reason == "violation"
    # a finished store resumes to the same outcome without running a level
    r = explore(ref, ExploreOptions(), SparkOptions(master="local[2]", resume=str(tmp_path / "store")))
    assert r.violations.keys() == o.violations.keys()
    assert r.path(r.violations["TCConsistent"]) == o.path(o.violations["TCConsistent"])


def test_strengthening_invariants_checked_on_the_executors(spark):
    """`check --invariants`: the executors rebuild the model from the ModelRef, so the flag travels in it."""
    ref = ModelRef.named("twophase", "tiny", variant="commit-without-all-prepared", invariants=True)
    assert ModelRef.from_json(ref.to_json()) == ref
    assert "invariants" not in ModelRef.named("twophase", "tiny").to_json()  # older stores still resume
    o = agree(ref, ExploreOptions(stop_on_violation=False, properties=("TPInductive",)))
    assert set(o.violations) == {"TPInductive"}


def test_twophase_symmetry_and_limits(spark):
    agree(ModelRef.named("twophase", "tiny", symmetry=True), ExploreOptions(symmetry=True))
    agree(ModelRef.named("twophase", "tiny"), ExploreOptions(max_depth=3, check_deadlock=True))


def test_paxoscommit_tiny(spark):
    agree(ModelRef.named("paxoscommit", "tiny"), ExploreOptions())


@pytest.mark.spark35  # as test_twophase_tiny
def test_kafka_tiny(spark):
    agree(ModelRef.named("kafka", "tiny"), ExploreOptions())


@pytest.mark.heavy  # kip98 tiny's reverse search on Spark, about 25 s
def test_kafka_recoverable_violation(spark, tmp_path):
    """kip98 tiny breaks the recoverable LIVE-1 (a hanging transaction): found by the reverse search on
    the executors, with the vector engine's counterexample, trace bytes and all; a finished store
    resumed is judged again with the same result."""
    ref = ModelRef.named("kafka", "tiny", (("protocol", "kip98"),))
    opts = ExploreOptions(stop_on_violation=False, properties=("ATOM-2", "LIVE-1", "LIVE-2", "LIVE-3"))
    o = agree(ref, opts, store=str(tmp_path / "store"))
    assert o.unrecoverable["LIVE-1"] is not None
    assert o.unrecoverable["LIVE-2"] is None and o.unrecoverable["LIVE-3"] is None
    result = _same_judgement(ref, opts, o)
    assert {p.name: p.outcome for p in result.properties}["LIVE-1"] == "violated"
    r = explore(ref, opts, SparkOptions(master="local[2]", resume=str(tmp_path / "store")))
    assert {k: None if i is None else int(r.fps[i]) for k, i in r.unrecoverable.items()} == \
        {k: None if i is None else int(o.fps[i]) for k, i in o.unrecoverable.items()}
    assert not os.path.exists(tmp_path / "store" / "reach")    # the reverse search's scratch space is gone


@pytest.mark.heavy  # about 30 s
def test_kafka_recoverable_on_the_executors_beside_liveness_on_the_driver(spark):
    """With LIVE-4 (leads_to) selected the driver reads only the edges out of LIVE-4's goal-less states, fewer
    than the store holds; the recoverable properties are still judged on the executors, and every outcome
    and trace is the vector engine's."""
    ref = ModelRef.named("kafka", "tiny", (("protocol", "kip98"),))
    opts = ExploreOptions(stop_on_violation=False)
    o = agree(ref, opts)
    assert o.edges_for == ("LIVE-4",) and set(o.unrecoverable) == {"LIVE-1", "LIVE-2", "LIVE-3"}
    assert "reach" in o.extra and 0 < o.extra["driver_edges"] < o.extra["stored_edges"]
    outcomes = {p.name: p.outcome for p in _same_judgement(ref, opts, o).properties}
    assert outcomes["LIVE-1"] == "violated" and outcomes["LIVE-4"] == "holds"


def test_progress_names_the_steps_on_the_driver_after_the_search(spark, capsys):
    """Reading the records and the edges onto the driver, then each property judged there: a line each."""
    from txncheck.checker.run import judge
    from txncheck.spec.request import ModelRequest
    request = ModelRequest.of(os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "climb.py"), "small",
                              {}, None)
    ref = ModelRef.of(request, request.ground())
    opts = ExploreOptions(stop_on_violation=False, progress=True)
    o = explore(ref, opts, SparkOptions(master="local[2]", partitions=2))
    judge(ref.build(), o, opts, "spark")
    steps = [line.split(": ", 1)[1].split(";")[0] for line in capsys.readouterr().err.splitlines()
             if line.startswith("progress [spark]: ") and not line.startswith("progress [spark]: depth ")]
    assert steps[:2] == ["reading 4 states' records onto the driver",
                         "reading the edges out of BackToZero's goal-less states (of 6 stored) onto the driver "
                         "(eventually and leads_to properties are judged there)"]
    # TopReachable (recoverable) was judged on the executors, during the search's last job
    assert steps[2].rsplit(", ", 1)[0] == "judging BackToZero (leads_to) on the state graph, 1 of 1"
    assert steps[3].startswith("judged every property in ") and len(steps) == 4


@pytest.mark.heavy  # a Kafka variant on Spark and on the vector engine, about 20 s each
@pytest.mark.parametrize("variant", ["B1d-produce-before-add", "B3-produce-after-marker"])
def test_kafka_recoverable_only_variants(spark, variant):
    """Only the recoverable properties: no edge reaches the driver; each variant breaks LIVE-1."""
    ref = ModelRef.named("kafka", "tiny", variant=variant)
    opts = ExploreOptions(stop_on_violation=False, properties=("LIVE-1", "LIVE-2", "LIVE-3"))
    o = agree(ref, opts)
    assert o.edges is None and o.extra["driver_edges"] == 0 and o.extra["stored_edges"] > 0
    assert o.unrecoverable["LIVE-1"] is not None
    _same_judgement(ref, opts, o)


def test_recoverable_on_an_incomplete_search_is_unknown(spark):
    ref = ModelRef.named("kafka", "tiny", (("protocol", "kip98"),))
    opts = ExploreOptions(stop_on_violation=False, max_depth=6, properties=("LIVE-1",))
    o = agree(ref, opts)
    assert not o.complete and o.unrecoverable == {}
    assert _same_judgement(ref, opts, o).properties[0].outcome == "unknown"


def test_errors_are_clear(monkeypatch):
    from txncheck.checker.spark import session
    from txncheck.checker.spark.session import SparkEngineError
    with pytest.raises(SparkEngineError, match="cannot reach the Spark master"):
        session.check_master("spark://127.0.0.1:1")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(SparkEngineError, match="needs a Java runtime"):
        session.check_java("4.0.0")


# ---- a store the driver and the executors do not share is an error, never a verdict ----------
def _after_jobs(monkeypatch, hook):
    """Run `hook(ctx, root)` on the driver after every Spark job of the engine (before the
    driver's checks): it stands in for a filesystem that loses or hides what a job wrote."""
    from txncheck.checker.spark import engine
    real = engine._Runner.run

    def run(self, ctx):
        got = real(self, ctx)
        hook(ctx)
        return got
    monkeypatch.setattr(engine._Runner, "run", run)


def _remove_one(paths):
    paths = sorted(paths)
    assert paths, "the test expected a file to remove"
    os.remove(paths[0])


def test_a_level_the_driver_cannot_read_is_an_error(spark, tmp_path, monkeypatch):
    from txncheck.checker.spark.engine import StoreNotShared
    store = tmp_path / "store"

    def hook(ctx):
        if ctx.mode == "step" and ctx.level == 2:   # level 3 just written: one of its files disappears
            _remove_one(glob.glob(f"{store}/levels/00003/part=*/data.parquet"))
    _after_jobs(monkeypatch, hook)
    with pytest.raises(StoreNotShared, match=r"wrote level 3 of the store where the driver cannot read it .*"
                       r"shared by the driver and every executor"):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                             store=str(store)))
    # the level was never recorded: a resume starts from the last level the driver could read
    with open(store / "manifest.json") as f:
        assert len(json.load(f)["records"]) == 3


def test_a_level_the_executors_cannot_read_is_an_error(spark, tmp_path, monkeypatch):
    """The README's relative --out on a cluster: the driver wrote level 0 where the executors did
    not look, they expanded nothing, and the run 'completed' with one state."""
    from txncheck.checker.spark import engine
    from txncheck.checker.spark.engine import StoreNotShared
    real = engine._initial_level

    def initial_level(kernel, model, root, *args):
        rec = real(kernel, model, root, *args)
        monkeypatch.setattr(engine, "stored_rows", _hide_from_executors(root))
        return rec
    monkeypatch.setattr(engine, "_initial_level", initial_level)
    with pytest.raises(StoreNotShared, match=r"executors could not read level 0 .*\(1 state; the executors read 0"):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                             store=str(tmp_path / "s")))


def _hide_from_executors(root):
    """stored_rows for the driver's read-back of level 0, after which level 0 is moved away."""
    from txncheck.checker.spark.verify import stored_rows

    def rows(r, level, partitions):
        got = stored_rows(r, level, partitions)
        if level == 0:
            shutil.move(f"{root}/levels/00000", f"{root}/hidden-00000")
        return got
    return rows


def test_candidates_lost_between_executors_are_an_error(spark, tmp_path, monkeypatch):
    from txncheck.checker.spark.engine import StoreNotShared
    store = tmp_path / "store"

    def hook(ctx):
        if ctx.mode == "step" and ctx.level == 3:   # the candidates of level 5, in transit
            _remove_one(glob.glob(f"{store}/cand/00005/to=*/from-*.cand"))
    _after_jobs(monkeypatch, hook)
    with pytest.raises(StoreNotShared, match=r"lost candidates of level 5 between tasks"):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                             store=str(store)))


def test_edges_the_driver_cannot_read_are_an_error(spark, tmp_path, monkeypatch):
    """Recoverable properties are decided from the stored edges: missing ones would hide a hanging
    transaction."""
    from txncheck.checker.spark.engine import StoreNotShared
    store = tmp_path / "store"

    def hook(ctx):
        if ctx.mode == "step" and ctx.level == 4:
            _remove_one(glob.glob(f"{store}/edges/00005/task-*.parquet"))
    _after_jobs(monkeypatch, hook)
    with pytest.raises(StoreNotShared, match=r"edges out of level 5 where the driver cannot read them"):
        explore(ModelRef.named("kafka", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                          store=str(store)))


def test_resume_from_a_store_missing_a_level_file_is_an_error(spark, tmp_path):
    from txncheck.checker.spark.engine import StoreNotShared
    store = tmp_path / "store"
    explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                         store=str(store)))
    _remove_one(glob.glob(f"{store}/levels/00002/part=*/data.parquet"))
    with pytest.raises(StoreNotShared, match=r"--resume .*level 2 is not all there from the driver"):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", resume=str(store)))


def test_a_store_of_another_layout_version_is_refused_on_resume(spark, tmp_path):
    from txncheck.checker.spark import storage
    from txncheck.checker.spark.engine import SparkEngineError
    store = tmp_path / "store"
    explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", store=str(store)))
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["version"] = storage.SCHEMA_VERSION - 1
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SparkEngineError, match=rf"another version of txncheck's Spark store \(version "
                                               rf"{storage.SCHEMA_VERSION - 1}, this one reads "
                                               rf"{storage.SCHEMA_VERSION}\); run without --resume to start over"):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", resume=str(store)))


@pytest.mark.parametrize("counts", [[0, 0, 0], [5, 0, 3, 0], [0, 7], [1_100_000, 2, 0, 9]])
def test_an_edges_file_gives_each_target_partition_its_own_edges(tmp_path, counts):
    """Edges written by target partition come back one partition at a time, those of a partition larger than
    Parquet's default row group (2^20 rows) included; an empty partition gives none."""
    import pyarrow as pa
    from pyarrow import fs as pafs
    from txncheck.checker.spark import storage
    n = sum(counts)
    t = pa.table({"src": np.arange(n, dtype=np.int64), "dst": np.arange(n, dtype=np.int64) * 3,
                  "action": (np.arange(n) % 5).astype(np.int32)})
    fs, path = pafs.LocalFileSystem(), str(tmp_path / "edges" / "task-00000.parquet")
    storage.write_edges_atomic(t, np.array(counts), path, fs)
    assert os.listdir(tmp_path / "edges") == ["task-00000.parquet"]
    lo = 0
    for q, c in enumerate(counts):
        got = storage.read_edges_into(fs, path, q)
        assert (got is None) == (c == 0)
        if c:
            assert got.equals(t.slice(lo, c).replace_schema_metadata(got.schema.metadata))
        lo += c
    with pytest.raises(ValueError, match=f"lists {len(counts)} target partitions, not partition {len(counts)}"):
        storage.read_edges_into(fs, path, len(counts))


def test_an_edges_file_reads_a_partition_of_several_row_groups(tmp_path):
    """A partition's edges may span row groups (a writer's cap on their size): all of them are read, and a
    row group that mixes two partitions is refused."""
    import json as _json
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs
    from txncheck.checker.spark import storage
    counts = [5, 0, 3]
    t = pa.table({"src": np.arange(8, dtype=np.int64), "dst": np.arange(8, dtype=np.int64), "action": np.zeros(8, np.int32)})
    t = t.replace_schema_metadata({storage.EDGE_PARTS: _json.dumps(counts).encode()})
    for name, cuts in (("split", [(0, 2), (2, 3), (5, 3)]), ("mixed", [(0, 4), (4, 4)])):
        path = str(tmp_path / f"{name}.parquet")
        with pq.ParquetWriter(path, t.schema) as w:
            for lo, n in cuts:
                w.write_table(t.slice(lo, n), row_group_size=n)
        assert pq.read_metadata(path).num_row_groups == len(cuts)
        if name == "split":
            assert storage.read_edges_into(pafs.LocalFileSystem(), path, 0).column("src").to_pylist() == [0, 1, 2, 3, 4]
            assert storage.read_edges_into(pafs.LocalFileSystem(), path, 2).column("src").to_pylist() == [5, 6, 7]
        else:
            with pytest.raises(ValueError, match="row group 1 mixes the edges of target partition 0 with others"):
                storage.read_edges_into(pafs.LocalFileSystem(), path, 0)


def test_an_edges_file_without_its_partitions_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs
    from txncheck.checker.spark import storage
    path = str(tmp_path / "task-00000.parquet")
    pq.write_table(pa.table({"src": [1], "dst": [2], "action": [0]}), path)
    with pytest.raises(ValueError, match="its footer lists no target partitions"):
        storage.read_edges_into(pafs.LocalFileSystem(), path, 0)


def test_a_relative_store_is_made_absolute_on_the_driver(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    o = explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", partitions=4,
                                                                             store="out/rel"))
    assert o.extra["store"] == str(tmp_path / "out" / "rel")
    assert (tmp_path / "out" / "rel" / "manifest.json").exists()
    r = explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[2]", resume="out/rel"))
    assert r.distinct == o.distinct == 288


def test_the_cli_gives_no_verdict_when_the_store_loses_a_level(spark, tmp_path, monkeypatch, capsys):
    """Through `txncheck check`: exit 2, the error and its fix on stderr, no verdict, no result.json."""
    from txncheck.cli.main import main
    out = tmp_path / "out"

    def hook(ctx):
        if ctx.mode == "step" and ctx.level == 2:
            _remove_one(glob.glob(f"{out}/spark/levels/00003/part=*/data.parquet"))
    _after_jobs(monkeypatch, hook)
    rc = main(["check", "twophase", "--config", "tiny", "--engine", "spark", "--master", "local[2]",
               "--out", str(out)])
    got = capsys.readouterr()
    assert rc == 2, got
    assert "where the driver cannot read it" in got.err and "shared by the driver and every executor" in got.err
    assert "verdict" not in got.out.lower()
    assert not (out / "result.json").exists()


def test_messages_lost_in_the_reverse_search_are_an_error(spark, tmp_path, monkeypatch):
    """A message of the reverse search lost between tasks would make a state look unrecoverable."""
    from txncheck.checker.spark import engine
    from txncheck.checker.spark.engine import StoreNotShared
    store = tmp_path / "store"
    real = engine._Runner.call

    def call(self, fn, ctx, description):
        got = real(self, fn, ctx, description)
        if getattr(ctx, "mode", None) == "round" and ctx.round == 1:
            _remove_one(glob.glob(f"{store}/reach/msg/00002/to=*/from-*.npy"))
        return got
    monkeypatch.setattr(engine._Runner, "call", call)
    with pytest.raises(StoreNotShared, match=r"lost messages of round 2 of the reverse search"):
        explore(ModelRef.named("kafka", "tiny"), ExploreOptions(properties=("LIVE-1",)),
                SparkOptions(master="local[2]", partitions=4, store=str(store)))
