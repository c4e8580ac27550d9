"""The out-of-core reverse graph (`checker/vector/reverse.py`) on random graphs (hypothesis), in blocks down to
one edge's worth of share: the sources and actions in the order of a stable sort by destination, the
in-degrees' running sum as row starts, and `recoverable.EdgeSweep`'s reachable sets for every edge filter; its
files removed when it closes; and
the judging graph chosen by the budget. And the counting sort both are built on (`grouped_by`) against a
stable argsort, and the Spark engine's grouping of a partition's in-edges by target (`in_edges_by_target`)
against a loop over the edges."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker.recoverable import EdgeSweep, grouped_by, sweep_bytes
from txncheck.checker.resources import split_budget
from txncheck.checker.spark.reach import in_edges_by_target
from txncheck.checker.vector import reverse
from txncheck.checker.vector.reverse import DiskReverseGraph
from txncheck.checker.vector.spill import SpillDir


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 60))
    e = draw(st.integers(0, 300))
    src = np.array(draw(st.lists(st.integers(0, n - 1), min_size=e, max_size=e)), dtype=np.int64)
    dst = np.array(draw(st.lists(st.integers(0, n - 1), min_size=e, max_size=e)), dtype=np.int64)
    act = np.array(draw(st.lists(st.integers(0, 4), min_size=e, max_size=e)), dtype=np.int32)
    goal = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    states = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    actions = np.array(draw(st.lists(st.booleans(), min_size=5, max_size=5)), dtype=bool)
    return n, src, dst, act, goal, states, actions


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 40), data=st.data())
def test_grouped_by_is_a_stable_argsort(n, data):
    keys = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=300) if n else st.just([])), dtype=np.int64)
    order, starts = grouped_by(keys, n)
    expected = np.argsort(keys, kind="stable")
    assert np.array_equal(order, expected)
    assert np.array_equal(starts, np.searchsorted(keys[expected], np.arange(n + 1)))
    assert starts.dtype == np.int64


@settings(max_examples=200, deadline=None)
@given(states=st.sets(st.integers(0, 2**64 - 1), max_size=40), others=st.sets(st.integers(0, 2**64 - 1), max_size=3),
       data=st.data())
def test_in_edges_by_target_are_the_edges_into_each_state(states, others, data):
    """Each state's CSR row holds exactly the edges into it, in their order; edges into a fingerprint that is
    not a state are counted as missing and dropped."""
    f = np.array(sorted(states), dtype=np.uint64)
    pool = sorted(states | others)
    e = data.draw(st.integers(0, 200))
    d = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=e, max_size=e)) if pool and e else [], dtype=np.uint64)
    src = np.arange(len(d), dtype=np.uint64) * np.uint64(3)
    bits = (np.arange(len(d)) % 7 + 1).astype(np.uint8)
    starts, s, b, missing = in_edges_by_target(f, d, src, bits)
    assert starts.dtype == np.int64 and len(starts) == len(f) + 1 and starts[0] == 0
    for i, fp in enumerate(f):
        into = np.flatnonzero(d == fp)
        assert np.array_equal(s[starts[i]:starts[i + 1]], src[into])
        assert np.array_equal(b[starts[i]:starts[i + 1]], bits[into])
    assert missing == int((~np.isin(d, f)).sum()) and starts[-1] == len(d) - missing == len(s) == len(b)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs(), block=st.sampled_from([1, 2, 3, 7, 64, 4096]))
def test_the_out_of_core_graph_is_the_in_memory_one(tmp_path_factory, monkeypatch, g, block):
    n, src, dst, act, goal, states, actions = g
    monkeypatch.setattr(reverse, "MIN_BLOCK", 1)  # blocks of a few edges: many buckets, many pieces
    work = tmp_path_factory.mktemp("rev")
    spill = SpillDir(str(work))
    order = np.argsort(dst, kind="stable")
    mem = EdgeSweep(n, src, dst, act)
    disk = DiskReverseGraph(n, src, dst, act, spill, block * reverse.EDGE_BYTES)
    assert np.array_equal(np.asarray(disk.src), src[order])
    assert np.array_equal(np.asarray(disk.act), act[order])
    assert np.array_equal(np.asarray(disk.starts), np.r_[0, np.cumsum(np.bincount(dst, minlength=n))])
    for a in (None, actions):
        for s in (None, states):
            assert np.array_equal(disk.reach(goal, a, s), mem.reach(goal, a, s))
    disk.close()
    spill.close()
    assert os.listdir(work) == []


def test_a_budget_judges_out_of_core_only_where_the_in_memory_graph_outgrows_its_share():
    class Outcome:
        distinct = 1000
        edges = (np.zeros(5000, np.int64), np.zeros(5000, np.int64), np.zeros(5000, np.int32))

    need = sweep_bytes(1000, 5000)
    assert not reverse.JudgingGraph(Outcome, None, None).out_of_core()
    assert reverse.JudgingGraph(Outcome, 64, None).out_of_core()
    big = 4 * need
    assert split_budget(big).judging >= need and not reverse.JudgingGraph(Outcome, big, None).out_of_core()
