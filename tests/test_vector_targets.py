"""The edges' targets mapped level by level beside the search (`vector/targets.py`): each target's store index
whatever level it lies in (the next, its own, any earlier one), in the edges' order, as the lookup over every
stored state gives it; an error in the thread is raised in the search's thread; a column handed over is
never read whole again. The engine's edges with and without it are compared in test_vector_budget (the
budgeted search maps after the search, out of core)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.lookup import StoredIndex
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.vector import explore as explore_mod
from txncheck.checker.vector.explore import explore
from txncheck.checker.vector.spill import Columns, SpillDir
from txncheck.checker.vector.targets import LevelTargets
from txncheck.spec.request import ModelRequest

HERE = os.path.dirname(__file__)
NO_COMPLETE = os.path.join(HERE, "models", "kafka_no_complete.py")


def _levels(rng, sizes):
    """Distinct random fingerprints split into levels, each sorted."""
    fps = rng.choice(np.iinfo(np.int64).max, size=sum(sizes), replace=False).astype(np.uint64)
    fps[::7] |= np.uint64(1) << np.uint64(63)  # the top bit set too: the directory reads the top bits
    cut = np.cumsum(sizes)[:-1]
    return [np.sort(p) for p in np.split(fps, cut)]


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 300), min_size=1, max_size=9), seed=st.integers(0, 2**32 - 1),
       block=st.sampled_from([1, 3, 64, 1 << 22]), parts=st.integers(1, 3))
def test_each_target_gets_its_store_index_whatever_level_it_is_in(sizes, seed, block, parts):
    rng = np.random.default_rng(seed)
    levels = _levels(rng, sizes)
    stored = np.concatenate(levels)
    t = LevelTargets(block)
    t.level(levels[0])
    want = []
    try:
        for d in range(len(levels)):
            if d + 1 < len(levels):
                t.level(levels[d + 1])
            reach = np.concatenate(levels[:d + 2])  # an edge of level d leads to level d + 1 or earlier
            # half to the next level, as in a search, the rest anywhere up to it
            k = int(rng.integers(0, 200))
            nxt = len(reach) - (len(levels[d + 1]) if d + 1 < len(levels) else 0)
            idx = np.concatenate([rng.integers(min(nxt, len(reach) - 1), len(reach), size=k // 2),
                                  rng.integers(0, len(reach), size=k - k // 2)])
            want.append(idx)
            q = reach[idx]
            t.add(d, [p for p in np.array_split(q, parts) if len(p)])
        got = t.result(np.int64)
    finally:
        t.close()
    want = np.concatenate(want) if want else np.zeros(0, np.int64)
    assert got.dtype == np.int64
    assert np.array_equal(got, want)
    assert np.array_equal(got, StoredIndex(stored, np.int64).every(stored[want]))  # the lookup after a search


def test_a_target_that_is_not_stored_is_an_error_raised_in_the_callers_thread():
    rng = np.random.default_rng(1)
    levels = _levels(rng, [5, 8])
    t = LevelTargets()
    t.level(levels[0])
    t.level(levels[1])
    t.add(0, [np.array([levels[1][2], np.uint64(12345)], dtype=np.uint64)])
    with pytest.raises(RuntimeError, match="1 edge targets of level 0 are not stored"):
        t.wait()
    t.close()


def test_an_error_in_the_thread_stops_the_search_at_the_next_level(monkeypatch):
    """Out of memory while mapping: the search ends as it does out of memory anywhere, incomplete, with its
    checked levels and no edges (none of the graph is judged)."""
    calls = []

    def fail(self, d, *rest):
        calls.append(d)
        raise MemoryError

    monkeypatch.setattr(LevelTargets, "_map", fail)
    model = ModelRequest.of(NO_COMPLETE, None, {}, "no-complete").ground()
    got = explore(model, ExploreOptions(stop_on_violation=False))
    assert calls == [0]  # nothing more is mapped after the error
    assert not got.complete and got.stop_reason == "memory" and got.edges is None
    assert got.level_sizes[:2] == explore(model, ExploreOptions(stop_on_violation=False)).level_sizes[:2]


@pytest.mark.parametrize("visited_budget", [None, 64])
def test_the_search_without_a_budget_maps_beside_it_and_gives_the_edges_of_the_lookup_after_it(
        visited_budget, monkeypatch, tmp_path):
    """The same search with the mapping beside it and with the lookup over every stored state after it (as under
    a budget) give the same edges, also where the visited set spills (the CLI always bounds it)."""
    model = ModelRequest.of(NO_COMPLETE, None, {}, "no-complete").ground()
    options = ExploreOptions(stop_on_violation=False, visited_budget=visited_budget, workdir=str(tmp_path))
    beside = explore(model, options)
    monkeypatch.setattr(explore_mod, "LevelTargets", lambda: None)
    after = explore(model, options)
    assert beside.complete and len(beside.edges[0]) > 1000
    for x, y in zip(beside.edges, after.edges):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    spills = beside.extra["vector_spills"]
    assert spills == after.extra["vector_spills"] and (spills > 0) == (visited_budget is not None)


def test_a_column_handed_over_is_read_from_where_it_was_handed_over_only(tmp_path):
    spill = SpillDir(str(tmp_path))
    c = Columns(spill, {"a": np.int64, "b": np.int64}, "t")
    c.append({"a": np.arange(3), "b": np.arange(3)})
    c.append({"a": np.arange(3, 5), "b": np.arange(3, 5)})
    parts = c.hand_over("a")
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4]] and c.hand_over("a") == []
    c.append({"a": np.arange(5, 9), "b": np.arange(5, 9)})
    got = c.slice(6, 9)
    assert got["a"].tolist() == [6, 7, 8] and got["b"].tolist() == [6, 7, 8]
    with pytest.raises(ValueError, match="handed over"):
        c.slice(4, 6)
    for read in (lambda: c.take("a"), lambda: c.arrays(), lambda: list(c.blocks("a", 2)), c.spill):
        with pytest.raises(ValueError, match="handed over"):
            read()
    assert c.take("b").tolist() == list(range(9))  # the other column is whole
    spill.close()
