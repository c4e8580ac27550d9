"""The out-of-core reverse graph (`checker/vector/reverse.py`) against `recoverable.ReverseGraph`: on random
graphs (hypothesis), in blocks down to one edge's worth of share, the same sources in the same order, the
same row starts and the same reachable sets for every edge filter; its files removed when it closes; and
the judging graph chosen by the budget. And the counting sort both are built on (`grouped_by`) against a
stable argsort."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker.recoverable import ReverseGraph, grouped_by
from txncheck.checker.resources import split_budget
from txncheck.checker.vector import reverse
from txncheck.checker.vector.reverse import DiskReverseGraph, in_memory_bytes
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


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs(), block=st.sampled_from([1, 2, 3, 7, 64, 4096]))
def test_the_out_of_core_graph_is_the_in_memory_one(tmp_path_factory, monkeypatch, g, block):
    n, src, dst, act, goal, states, actions = g
    monkeypatch.setattr(reverse, "MIN_BLOCK", 1)  # blocks of a few edges: many buckets, many pieces
    work = tmp_path_factory.mktemp("rev")
    spill = SpillDir(str(work))
    mem = ReverseGraph(n, src, dst, act)
    disk = DiskReverseGraph(n, src, dst, act, spill, block * reverse.EDGE_BYTES)
    assert np.array_equal(np.asarray(disk.src), mem.src_sorted)
    assert np.array_equal(np.asarray(disk.act), act[mem.order])
    assert np.array_equal(np.asarray(disk.starts), mem.starts)
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

    need = in_memory_bytes(1000, 5000)
    assert not reverse.JudgingGraph(Outcome, None, None).out_of_core()
    assert reverse.JudgingGraph(Outcome, 64, None).out_of_core()
    big = 4 * need
    assert split_budget(big).judging >= need and not reverse.JudgingGraph(Outcome, big, None).out_of_core()
