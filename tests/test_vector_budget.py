"""The vector engine under a memory budget: a level expanded in chunks of frontier states and the chunks'
new states merged, the frontier, the next level, the visited set, the edges and the property masks
spilled to disk. With a budget so small that everything spills and chunk sizes forced small, so that
every level is many chunks, the outcome is the in-memory search's exactly (states, parent links,
levels, findings, masks, edges in their order) and so are the traces, the graph properties judged over the
out-of-core reverse graph (`vector/reverse.py`); likewise for a checkpointed run
resumed under a budget, and for random chunk sizes (hypothesis)."""
from __future__ import annotations

import os
import shutil
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker.checkpoint import Checkpointing
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.resources import split_budget, visited_budget
from txncheck.checker.run import check
from txncheck.checker.vector.explore import explore, run
from txncheck.checker.vector.kernel import VectorKernel
from txncheck.spec.request import ModelRequest

HERE = os.path.dirname(__file__)
NO_COMPLETE = os.path.join(HERE, "models", "kafka_no_complete.py")  # recoverable and leads_to, some violated
MUTEX = os.path.join(HERE, "models", "fair_mutex.py")                 # a lasso
TINY = 64  # bytes: every share of the budget is exceeded, so every part spills


@pytest.fixture
def restricted_fits(monkeypatch):
    """Budgets this small are below any graph judging holds: the eventually and leads_to properties' restricted
    graph (`vector/live.py`) is judged regardless rather than refused (the refusal: test_live_disk.py)."""
    from txncheck.checker.vector import live
    monkeypatch.setattr(live, "EDGE_BYTES", 0)
    monkeypatch.setattr(live, "STATE_BYTES", 0)
    monkeypatch.setattr(live, "PAIR_BYTES", 0)
    monkeypatch.setattr(live, "FIXED_BYTES", 0)


def _budgeted(options: ExploreOptions, tmp_path, chunk: int) -> ExploreOptions:
    return replace(options, memory_budget=TINY, chunk_states=chunk, workdir=str(tmp_path / "spill"))


def same(a, b) -> None:
    """Two outcomes of one search: equal in everything but run figures."""
    assert a.level_sizes == b.level_sizes and a.distinct == b.distinct
    for x, y in ((a.fps, b.fps), (a.parent, b.parent), (a.action, b.action)):
        assert np.array_equal(x, y)
    assert a.generated == b.generated and np.array_equal(a.fired, b.fired)
    assert (a.violations, a.witnesses, a.deadlock) == (b.violations, b.witnesses, b.deadlock)
    assert (a.complete, a.stop_reason) == (b.complete, b.stop_reason)
    assert a.goal_masks.keys() == b.goal_masks.keys() and a.when_masks.keys() == b.when_masks.keys()
    for k in a.goal_masks:
        assert np.array_equal(a.goal_masks[k], b.goal_masks[k]) and np.array_equal(a.when_masks[k], b.when_masks[k])
    assert (a.edges is None) == (b.edges is None)
    if a.edges is not None:
        for x, y in zip(by_source(a.edges), by_source(b.edges)):
            assert x.dtype == y.dtype and np.array_equal(x, y)


def by_source(edges):
    """The edges grouped by source, each source's in the order given: what an outcome promises of its edges. A
    level of the search without a budget is materialised in its parents' order (`step.py`), so its edges come
    in another order than a chunked level's, each source's still in action order."""
    src, dst, act = edges
    order = np.argsort(src, kind="stable")
    return src[order], dst[order], act[order]


CASES = [
    ("twophase", {"rm": 4}, None, ExploreOptions(), 5),
    ("twophase", {"rm": 5}, None, ExploreOptions(), 33),
    ("twophase", {"rm": 5}, None, ExploreOptions(symmetry=True), 9),
    ("paxoscommit", {}, None, ExploreOptions(), 17),
    ("kafka", {}, None, ExploreOptions(), 1500),
    ("twophase", {"rm": 4}, "commit-without-all-prepared", ExploreOptions(), 7),   # stops on the violation
    ("twophase", {"rm": 4}, "commit-without-all-prepared", ExploreOptions(stop_on_violation=False), 7),
    ("kafka", {"protocol": "kip98"}, None, ExploreOptions(stop_on_violation=False), 1500),
    ("twophase", {"rm": 5}, None, ExploreOptions(max_depth=6), 11),
    ("kafka", {}, None, ExploreOptions(max_depth=20), 700),                        # the depth limit: no edges
    (NO_COMPLETE, {}, "no-complete", ExploreOptions(check_deadlock=True, stop_on_violation=False, max_depth=30),
     150),  # the depth limit at the last level: complete, its edges into stored states kept
    ("twophase", {"rm": 5}, None, ExploreOptions(max_states=3000), 11),
    (NO_COMPLETE, {}, "no-complete", ExploreOptions(check_deadlock=True), 3),      # stops on the deadlock
    (NO_COMPLETE, {}, "no-complete", ExploreOptions(check_deadlock=True, stop_on_violation=False), 150),
]


@pytest.mark.parametrize("spec,overrides,variant,options,chunk", CASES)
def test_everything_spilled_in_small_chunks_gives_the_in_memory_outcome(tmp_path, spec, overrides, variant, options,
                                                                        chunk):
    model = ModelRequest.of(spec, "tiny", overrides, variant).ground()
    plain = explore(model, options)
    got = explore(model, _budgeted(options, tmp_path, chunk))
    same(plain, got)
    assert got.extra["vector_chunks"] > len(got.level_sizes)  # levels were split
    assert got.extra["vector_spills"] > 0 and got.extra["vector_spilled_bytes"] > 0
    assert os.listdir(tmp_path / "spill") == []  # every spilled file removed


def test_the_findings_in_those_cases_are_there_to_be_compared():
    """The cases above cover a violation, a deadlock, a depth limit and graph properties, not just passes."""
    model = ModelRequest.of(NO_COMPLETE, "tiny", {}, "no-complete").ground()
    o = explore(model, ExploreOptions(check_deadlock=True, stop_on_violation=False))
    assert o.deadlock is not None and o.edges is not None and o.goal_masks
    o = explore(model, ExploreOptions(check_deadlock=True, stop_on_violation=False, max_depth=30))
    assert o.complete and o.depth == 30 and len(o.edges[0]) == 27993  # the last level expanded at the limit
    o = explore(ModelRequest.of("kafka", "tiny", {}).ground(), ExploreOptions(max_depth=20))
    assert o.stop_reason == "max_depth" and o.edges is None  # an incomplete search's graph is never judged
    o = explore(ModelRequest.of("twophase", "tiny", {"rm": 4}, "commit-without-all-prepared").ground(), ExploreOptions())
    assert o.violations and o.stop_reason == "violation"


def _judged(result) -> tuple[dict, dict]:
    d = result.to_json()
    d["stats"] = {k: v for k, v in d["stats"].items()
                  if k in ("distinct", "generated", "depth", "level_sizes", "fired")}
    d["options"] = {k: v for k, v in d.get("options", {}).items()
                    if k not in ("memory_budget", "chunk_states", "workdir")}
    return d, {name: tr.to_json() for name, tr in sorted(result.traces.items())}


@pytest.mark.parametrize("spec,overrides,variant,options,chunk", [
    ("kafka", {"protocol": "kip98"}, None, ExploreOptions(stop_on_violation=False), 1500),
    (NO_COMPLETE, {}, "no-complete", ExploreOptions(stop_on_violation=False), 150),  # unrecoverable and lasso traces
    (MUTEX, {}, "weak", ExploreOptions(), 1),
])
def test_the_traces_are_the_in_memory_ones(tmp_path, restricted_fits, spec, overrides, variant, options, chunk):
    request = ModelRequest.of(spec, "tiny", overrides, variant)
    plain = check(request, "vector", options)
    spilled = check(request, "vector", _budgeted(options, tmp_path, chunk))
    assert spilled.traces and _judged(spilled) == _judged(plain)
    # the graph properties were judged out of core (vector/reverse.py, vector/live.py); no file is left
    assert spilled.stats["judge_spilled_bytes"] > 0 and "judge_spilled_bytes" not in plain.stats
    assert os.listdir(tmp_path / "spill") == []


@pytest.mark.long  # a Kafka run resumed from every third level, about half a minute
def test_a_checkpointed_run_resumed_under_a_budget_gives_the_same_outcome(tmp_path):
    """Checkpointed in memory, resumed from every third level with everything spilling (the frontier rebuilt
    from the records onto disk), and checkpointed under the budget, resumed without one."""
    request = ModelRequest.of(NO_COMPLETE, "tiny", {}, "no-complete")
    model = request.ground()
    options = ExploreOptions(stop_on_violation=False)
    plain = explore(model, options)
    budget = _budgeted(options, tmp_path, 150)
    for writer, reader in ((options, budget), (budget, options)):
        ck = tmp_path / "ck"
        same(plain, run(request, model, writer, Checkpointing(str(ck))))
        n = len(os.listdir(ck)) - 1  # the level files beside the manifest
        for keep in range(1, n, 3):
            part = tmp_path / f"k{keep}"
            _partial(ck, part, keep)
            got = run(request, model, reader, Checkpointing(str(part), resume=True))
            same(plain, got)
            assert got.extra["vector_resumed_levels"] == keep
            shutil.rmtree(part)
        shutil.rmtree(ck)


def _partial(src, dst, keep: int) -> None:
    """A copy of checkpoint `src` as it stood after its first `keep` records."""
    import json
    os.makedirs(dst)
    data = json.loads((src / "manifest.json").read_text())
    data["records"] = data["records"][:keep]
    for rec in data["records"]:
        shutil.copy(src / rec["file"], dst / rec["file"])
    (dst / "manifest.json").write_text(json.dumps(data))


@pytest.mark.heavy  # 15 searches of minutes in all
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk=st.integers(1, 300), budget=st.sampled_from([TINY, 20_000, 200_000, None]),
       window=st.sampled_from([4, 64, None]))
def test_any_chunk_size_gives_the_same_outcome(tmp_path_factory, chunk, budget, window):
    """Chunks that start and end anywhere in the kernel's own chunks (`window`), any budget; with edges,
    masks and a deadlock (2,102 states in 16 levels)."""
    model = _small()
    kernel = VectorKernel(model, chunk=window)
    options = ExploreOptions(stop_on_violation=False, check_deadlock=True, max_depth=15)
    plain = explore(model, options, kernel)
    tmp = tmp_path_factory.mktemp("spill")
    same(plain, explore(model, replace(options, memory_budget=budget, chunk_states=chunk, workdir=str(tmp)), kernel))
    assert os.listdir(tmp) == []


_MODEL = []


def _small():
    if not _MODEL:
        _MODEL.append(ModelRequest.of(NO_COMPLETE, "tiny", {}, "no-complete").ground())
    return _MODEL[0]


def test_the_budget_is_split_among_the_parts_of_the_search():
    s = split_budget(8000 * 2**20)
    assert s.visited == s.frontier == s.next_level == 2000 * 2**20 and s.chunk == s.graph == 1000 * 2**20
    assert s.visited + s.frontier + s.next_level + s.chunk + s.graph == 8000 * 2**20
    assert visited_budget(16 * 2**30) == 4 * 2**30  # without --memory-budget only the visited set spills


def test_check_with_a_memory_budget_writes_the_same_result_and_traces(tmp_path, txncheck_main, restricted_fits):
    """`check --memory-budget 1` (MiB: Kafka tiny's larger levels are expanded in chunks, everything spills)
    against the run without it, which expands every level whole and spills nothing."""
    import json
    args = ("check", "kafka", "--config", "tiny", "--set", "protocol=kip98", "--continue")
    runs = {}
    for name, extra in (("plain", ()), ("budget", ("--memory-budget", "1"))):
        out = tmp_path / name
        code, _, err = txncheck_main(*args, *extra, "--out", str(out))
        assert code == 1, err  # kip98 breaks properties
        d = json.loads((out / "result.json").read_text())
        traces = {p.name: p.read_bytes() for p in sorted((out / "traces").iterdir())}
        runs[name] = (d, traces)
    plain, budget = runs["plain"][0], runs["budget"][0]
    assert plain["stats"]["vector_chunks"] == plain["stats"]["depth"] + 1 and plain["stats"]["vector_spilled_bytes"] == 0
    assert budget["stats"]["vector_chunks"] > budget["stats"]["depth"] + 1
    assert budget["stats"]["vector_spilled_bytes"] > 0 and budget["options"]["memory_budget"] == 2**20
    assert budget["stats"]["judge_spilled_bytes"] > 0  # the recoverable and leads_to properties judged out of core
    for d in (plain, budget):
        d["stats"] = {k: v for k, v in d["stats"].items() if k in ("distinct", "generated", "depth", "levels")}
        d["options"].pop("memory_budget")
    assert plain == budget and runs["plain"][1] == runs["budget"][1] and runs["plain"][1]
