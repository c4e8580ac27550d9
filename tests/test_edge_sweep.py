"""Backward reachability by sweeps over the stored edges (`recoverable.EdgeSweep`) against the definition, a
fixpoint over the edges one at a time: on random graphs (hypothesis) with every edge filter, in blocks down to
one edge, in stored orders the sweeps suit and orders they do not, with the search by destination that
finishes a slow sweep forced and left out; and on a chain every sweep order takes one step of, where that
search must take over."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker import recoverable
from txncheck.checker.recoverable import EdgeSweep


def reference(n, src, dst, act, goal, actions, states):
    """The states from which a goal state is reachable through the kept edges: the least set that holds the
    goal states and the source of every kept edge into it."""
    reach = [bool(g) for g in goal]
    changed = True
    while changed:
        changed = False
        for s, d, a in zip(src.tolist(), dst.tolist(), act.tolist()):
            if actions is not None and not actions[a]:
                continue
            if states is not None and not (states[s] and states[d]):
                continue
            if reach[d] and not reach[s]:
                reach[s] = changed = True
    return np.array(reach, dtype=bool)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 50))
    e = draw(st.integers(0, 250))
    ints = st.lists(st.integers(0, n - 1), min_size=e, max_size=e)
    src, dst = np.array(draw(ints), dtype=np.int64), np.array(draw(ints), dtype=np.int64)
    if draw(st.booleans()):  # a search's order: the edges by source
        order = np.argsort(src, kind="stable")
        src, dst = src[order], dst[order]
    act = np.array(draw(st.lists(st.integers(0, 3), min_size=e, max_size=e)), dtype=np.int32)
    goal = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    states = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    actions = np.array(draw(st.lists(st.booleans(), min_size=4, max_size=4)), dtype=bool)
    return n, src, dst, act, goal, states, actions


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs(), block=st.sampled_from([1, 2, 3, 7, 64, 1 << 16]), slow=st.sampled_from([0.0, 0.75, 1.0]),
       work=st.sampled_from([0, 1, 3, 10**6]))
def test_the_sweeps_mark_exactly_the_states_that_reach_a_goal(g, block, slow, work, monkeypatch):
    n, src, dst, act, goal, states, actions = g
    # slow 0: the search by destination after the first sweep that marks a state; 1 and a large work: never
    monkeypatch.setattr(recoverable, "SLOW_SWEEP", slow)
    monkeypatch.setattr(recoverable, "SWEEP_WORK", work)
    sweep = EdgeSweep(n, src, dst, act, block=block)
    for a in (None, actions):
        for s in (None, states):
            before = goal.copy()
            got = sweep.reach(goal, a, s)
            assert np.array_equal(got, reference(n, src, dst, act, goal, a, s))
            assert np.array_equal(goal, before)  # the caller's mask is not marked


@pytest.mark.parametrize("block", [1, 4])
def test_a_chain_against_every_sweep_order_is_searched_by_destination(block, monkeypatch):
    """The chain 0 <- 1 <- ... <- k to a goal at 0, stored so that each sweep, in either direction, takes at most two
    steps of it (its edges in pairs, the later step first): without the search by destination that would be
    k / 2 sweeps over what is left of the chain. The sweeps give up after looking at `SWEEP_WORK` times the edges, and the search
    finishes exactly."""
    k = 64
    steps = [(i + 1, i) for i in range(k)]  # (source, destination): i + 1 reaches i
    order = [steps[i + 1 - j] for i in range(0, k, 2) for j in range(2)]
    src = np.array([s for s, _ in order], dtype=np.int64)
    dst = np.array([d for _, d in order], dtype=np.int64)
    goal = np.zeros(k + 1, dtype=bool)
    goal[0] = True
    calls = []
    plain = recoverable._by_destination
    monkeypatch.setattr(recoverable, "_by_destination", lambda *a: calls.append(len(a[1])) or plain(*a))
    got = EdgeSweep(k + 1, src, dst, block=block).reach(goal)
    assert got.all()
    assert calls == [k]  # it took over from the first sweep, on every edge
    calls.clear()
    monkeypatch.setattr(recoverable, "SLOW_SWEEP", 1.0)
    assert EdgeSweep(k + 1, src, dst, block=block).reach(goal).all()
    assert len(calls) == 1 and 0 < calls[0] < k
    calls.clear()
    monkeypatch.setattr(recoverable, "SWEEP_WORK", 10**6)
    assert EdgeSweep(k + 1, src, dst, block=block).reach(goal).all() and calls == []  # k / 2 sweeps
