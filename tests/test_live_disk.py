"""`eventually`/`leads_to` judged on the restricted graph (`checker/vector/live.py`) against the in-memory
`liveness.check`: on random graphs with random fairness groups (hypothesis), in blocks down to one edge, the
same verdict and the same lasso (actions, loop, start, initial state); its files removed; the restricted graph
that outgrows its share refused with the figures; and the choice made by the budget."""
from __future__ import annotations

import json
import os
import re
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker import liveness
from txncheck.checker.resources import split_budget
from txncheck.checker.vector import live, live_disk, reverse
from txncheck.checker.vector.spill import SpillDir
from txncheck.spec.errors import ResourceError
from txncheck.spec.model import EVENTUALLY, LEADS_TO


class Outcome(SimpleNamespace):
    def path(self, index):
        acts = []
        while self.parent[index] >= 0:
            acts.append(int(self.action[index]))
            index = int(self.parent[index])
        return acts[::-1]


class Inits:
    def start(self, outcome, index):
        while outcome.parent[index] >= 0:
            index = int(outcome.parent[index])
        return (int(index),)


@st.composite
def models(draw):
    """A breadth-first stored graph: levels, a parent edge per state, extra edges to at most the next level."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=6))
    n = sum(sizes)
    level = np.repeat(np.arange(len(sizes)), sizes)
    bounds = np.r_[0, np.cumsum(sizes)]
    n_actions = draw(st.integers(1, 5))
    parent = np.full(n, -1, dtype=np.int64)
    action = np.full(n, -1, dtype=np.int32)
    edges = []
    for i in range(bounds[1], n):
        lv = level[i]
        parent[i] = draw(st.integers(bounds[lv - 1], bounds[lv] - 1))
        action[i] = draw(st.integers(0, n_actions - 1))
        edges.append((int(parent[i]), i, int(action[i])))
    for _ in range(draw(st.integers(0, 3 * n))):
        s = draw(st.integers(0, n - 1))
        d = draw(st.integers(0, bounds[min(level[s] + 2, len(sizes))] - 1))
        edges.append((s, d, draw(st.integers(0, n_actions - 1))))
    order = draw(st.permutations(range(len(edges))))  # the stored order is the engine's, not by source
    arr = np.array([edges[k] for k in order], dtype=np.int64).reshape(-1, 3)
    n_groups = draw(st.integers(0, 3))
    groups_of = [sorted(draw(st.sets(st.integers(0, n_groups - 1), max_size=n_groups))) if n_groups else []
                 for _ in range(n_actions)]
    ptr = np.zeros(n_actions + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in groups_of])
    grp = np.array([x for m in groups_of for x in m], dtype=np.int64)
    strong = np.array([draw(st.booleans()) for _ in range(n_groups)], dtype=bool)
    groups = liveness.FairnessGroups(tuple(f"g{i}" for i in range(n_groups)), strong, ptr, grp)
    goal = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    when = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    fps = np.array(draw(st.permutations(range(1, n + 1))), dtype=np.uint64) * np.uint64(7919)
    kind = draw(st.sampled_from([LEADS_TO, EVENTUALLY]))
    outcome = Outcome(distinct=n, edges=(arr[:, 0], arr[:, 1], arr[:, 2].astype(np.int32)), fps=fps,
                      level_sizes=tuple(sizes), parent=parent, action=action, goal_masks={"P": goal},
                      when_masks={"P": when})
    model = SimpleNamespace(properties=[SimpleNamespace(name="P", kind=kind)])
    return model, outcome, groups


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=models(), block=st.sampled_from([1, 2, 3, 7, 4096]))
def test_the_restricted_graph_gives_the_in_memory_lasso(tmp_path_factory, monkeypatch, m, block):
    model, outcome, groups = m
    monkeypatch.setattr(reverse, "MIN_BLOCK", 1)  # blocks of a few edges
    monkeypatch.setattr(live, "EDGE_BYTES", 0)    # and no refusal at so small a share
    monkeypatch.setattr(live, "STATE_BYTES", 0)
    monkeypatch.setattr(live, "PAIR_BYTES", 0)
    monkeypatch.setattr(live, "FIXED_BYTES", 0)
    work = tmp_path_factory.mktemp("live")
    spill = SpillDir(str(work))
    want = liveness.check(model, outcome, "P", groups, None, Inits())
    got = live.check(model, outcome, "P", groups, Inits(), spill, block * reverse.EDGE_BYTES)
    assert got == want
    assert os.listdir(work) == []  # the restricted graph's files are gone once it is judged
    spill.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=models(), block=st.sampled_from([1, 2, 3, 7, 4096]))
def test_the_restricted_graph_in_files_gives_the_in_memory_lasso(tmp_path_factory, monkeypatch, m, block):
    """Judged with its edges in files (`live_disk.py`), in blocks down to one edge: the in-memory verdict and lasso."""
    model, outcome, groups = m
    monkeypatch.setattr(reverse, "MIN_BLOCK", 1)
    monkeypatch.setattr(live, "EDGE_BYTES", 1 << 40)  # never gathered into memory
    monkeypatch.setattr(live, "FIXED_BYTES", 0)
    monkeypatch.setattr(live_disk, "STATE_BYTES", 0)
    monkeypatch.setattr(live, "disk_bytes", lambda n, m: 0)
    work = tmp_path_factory.mktemp("live")
    spill = SpillDir(str(work))
    want = liveness.check(model, outcome, "P", groups, None, Inits())
    got = live.check(model, outcome, "P", groups, Inits(), spill, block * live_disk.BLOCK_EDGE_BYTES)
    assert got == want
    assert os.listdir(work) == []
    spill.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=models(), block=st.sampled_from([1, 2, 5, 4096]))
def test_the_fair_states_out_of_core_are_the_in_memory_ones(tmp_path_factory, monkeypatch, m, block):
    """Over every state of a random graph: the same fair states, and labels naming the same fair components."""
    model, outcome, groups = m
    monkeypatch.setattr(reverse, "MIN_BLOCK", 1)
    n = outcome.distinct
    gr = liveness.LiveGraph.of(outcome, groups)
    fair, comp = liveness.fair_states(gr, np.ones(n, dtype=bool))
    work = tmp_path_factory.mktemp("fair")
    spill = SpillDir(str(work))
    src, dst, act = outcome.edges
    disk = live_disk.DiskLiveGraph(np.arange(n), np.ones(n, dtype=bool), src, dst, act, outcome.fps, groups, spill,
                                   block * reverse.EDGE_BYTES)
    try:
        got_fair, got_comp = live_disk.fair_states(disk)
    finally:
        disk.close()
    assert np.array_equal(got_fair, fair)
    assert np.array_equal(comp < 0, ~fair) and np.array_equal(got_comp < 0, ~fair)
    # one fair component per label on each side: the pairs of labels are a bijection
    pairs = set(zip(comp[fair].tolist(), got_comp[fair].tolist()))
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
    assert os.listdir(work) == []
    spill.close()


def test_a_restricted_graph_that_outgrows_its_share_is_refused_with_the_figures(tmp_path):
    # a ring of not-Q states from the initial state: everything is in the restricted graph
    n = 50
    src = np.arange(n, dtype=np.int64)
    outcome = Outcome(distinct=n, edges=(src, (src + 1) % n, np.zeros(n, np.int32)),
                      fps=np.arange(1, n + 1, dtype=np.uint64),
                      level_sizes=(1,) * n, parent=src - 1, action=np.zeros(n, np.int32),
                      goal_masks={"P": np.zeros(n, bool)}, when_masks={"P": np.ones(n, bool)})
    model = SimpleNamespace(properties=[SimpleNamespace(name="P", kind=LEADS_TO)])
    groups = liveness.FairnessGroups((), np.zeros(0, bool), np.zeros(2, np.int64), np.zeros(0, np.int64))
    spill = SpillDir(str(tmp_path))
    with pytest.raises(ResourceError, match=r"judging P out of core: the part of the state graph it can be violated "
                                            r"in \(50 of 50 states, 50 of 50 edges\) needs about .* MiB in memory even "
                                            r"with its edges on disk, more than judging's share of --memory-budget"):
        live.check(model, outcome, "P", groups, Inits(), spill, 1000)
    spill.close()
    assert os.listdir(tmp_path) == []


def test_a_budget_judges_liveness_out_of_core_only_where_the_whole_graph_outgrows_its_share():
    outcome = SimpleNamespace(distinct=1000, edges=(np.zeros(5000, np.int64),) * 2 + (np.zeros(5000, np.int32),))
    need = live.in_memory_bytes(1000, 5000)
    assert not live.out_of_core(outcome, None)
    assert live.out_of_core(outcome, 64)
    big = 4 * need
    assert split_budget(big).judging >= need and not live.out_of_core(outcome, big)


HERE = os.path.dirname(__file__)
EXAMPLES = os.path.join(HERE, "..", "examples")
SPECS = [(os.path.join(HERE, "models", "fair_mutex.py"), v) for v in (None, "unfair", "weak", "weak-next")] + \
        [(os.path.join(HERE, "models", "commit_liveness.py"), v) for v in (None, "unfair", "weak-rm-only")] + \
        [(os.path.join(EXAMPLES, "ewd840.py"), v) for v in (None, "unfair")] + \
        [("kafka", None), (os.path.join(HERE, "models", "kafka_no_complete.py"), "no-complete")]


@pytest.mark.parametrize("where", ["gathered", "in files"])
@pytest.mark.parametrize("spec, variant", SPECS)
def test_the_liveness_specs_judge_the_same_out_of_core(tmp_path, monkeypatch, spec, variant, where):
    from dataclasses import replace

    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import check
    from txncheck.spec.request import ModelRequest
    # a budget of bytes: judged out of core (the restricted graph) and never refused however small the part; the
    # estimate at zero alone would also make the whole graph seem to fit, and judge it in memory. The restricted
    # graph is then gathered into memory, or (an edge too large for any share) left in files (`live_disk.py`)
    monkeypatch.setattr(live, "EDGE_BYTES", 0 if where == "gathered" else 1 << 40)
    monkeypatch.setattr(live, "STATE_BYTES", 0)
    monkeypatch.setattr(live, "PAIR_BYTES", 0)
    monkeypatch.setattr(live, "FIXED_BYTES", 0)
    monkeypatch.setattr(live, "disk_bytes", lambda n, m: 0)
    budget = 64  # bytes: blocks of reverse.MIN_BLOCK edges
    if where == "in files":  # blocks of 10,922 edges (a few on Kafka tiny); smaller ones are the hypothesis tests'
        monkeypatch.setattr(reverse, "MIN_BLOCK", 1)
        budget = 1 << 20
    in_files = []
    plain_fair = live_disk.fair_states
    monkeypatch.setattr(live_disk, "fair_states", lambda gr: in_files.append(gr.m) or plain_fair(gr))
    judged_out_of_core = []
    monkeypatch.setattr(live, "out_of_core", lambda outcome, budget: budget is not None and outcome.edges is not None)
    plain_check = live.check
    monkeypatch.setattr(live, "check", lambda *a, **k: judged_out_of_core.append(a[2]) or plain_check(*a, **k))
    request = ModelRequest.of(spec, "tiny", {}, variant)
    options = ExploreOptions(stop_on_violation=False)
    plain = check(request, "vector", options)
    spilled = check(request, "vector", replace(options, memory_budget=budget, workdir=str(tmp_path / "spill")))
    assert spilled.properties == plain.properties and spilled.verdict == plain.verdict
    assert {k: t.to_json() for k, t in spilled.traces.items()} == {k: t.to_json() for k, t in plain.traces.items()}
    assert spilled.stats["judge_spilled_bytes"] > 0 and os.listdir(tmp_path / "spill") == []
    model = request.ground()
    assert judged_out_of_core == [p.name for p in model.properties if p.kind in ("eventually", "leads_to")]
    assert bool(in_files) == (where == "in files")


def test_a_restricted_graph_beyond_the_budget_leaves_its_property_unknown_with_exit_3(tmp_path, txncheck_main):
    code, out, err = txncheck_main("check", "kafka", "--config", "tiny", "--property", "LIVE-4", "--property", "ATOM-1",
                                   "--memory-budget", "1", "--out", str(tmp_path / "out"))
    assert code == 3, err
    assert "judging LIVE-4 out of core: the part of the state graph it can be violated in (" in err
    assert "Traceback" not in err and "not judged within --memory-budget (unknown): LIVE-4" in out
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["verdict"] == "incomplete" and result["complete"] and result["stop_reason"] == "judging_memory"
    assert {p["name"]: p["outcome"] for p in result["properties"]} == {"LIVE-4": "unknown", "ATOM-1": "holds"}
    assert list(result["stats"]["unjudged"]) == ["LIVE-4"]
    advised = re.search(r"give --memory-budget (\d+) or more", err).group(1)  # the advice is enough
    code, out, err = txncheck_main("check", "kafka", "--config", "tiny", "--property", "LIVE-4", "--memory-budget",
                                   advised, "--out", str(tmp_path / "ok"))
    assert code == 0, err


def test_a_violation_stands_when_a_liveness_property_cannot_be_judged(tmp_path, txncheck_main):
    """Under client=reference verify violates ATOM-2 (B1 b): the verdict is that violation, LIVE-4 unknown."""
    code, out, err = txncheck_main("check", "kafka", "--config", "tiny", "--set", "protocol=verify", "--set",
                                   "client=reference", "--property", "ATOM-2", "--property", "LIVE-4", "--continue",
                                   "--memory-budget", "1", "--out", str(tmp_path / "out"))
    assert code == 1, err
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["verdict"] == "violation" and result["stop_reason"] == "judging_memory"
    assert {p["name"]: p["outcome"] for p in result["properties"]} == {"ATOM-2": "violated", "LIVE-4": "unknown"}
    assert (tmp_path / "out" / "traces" / "ATOM-2.json").exists()


def test_an_error_scipy_ignores_in_the_component_search_is_raised(monkeypatch):
    """scipy's compiled search reports a failed allocation as "Exception ignored" and returns unfinished labels."""
    import sys

    import scipy.sparse.csgraph as csgraph

    def failing(*args, **kwargs):
        sys.unraisablehook(SimpleNamespace(exc_type=MemoryError, exc_value=MemoryError("no room"), exc_traceback=None,
                                           err_msg=None, object=None))
        return 1, np.full(3, -7, dtype=np.int32)

    monkeypatch.setattr(csgraph, "connected_components", failing)
    with pytest.raises(MemoryError, match="no room"):
        liveness._components(3, np.array([0, 1]), np.array([1, 2]))
