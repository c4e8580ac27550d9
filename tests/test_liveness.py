"""`eventually` and `leads_to` under fairness: TLC's verdicts, lassos that replay, refusals, and the fair-cycle
algorithm against a brute-force oracle on random graphs."""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from txncheck.checker import liveness
from txncheck.checker.lookup import contains_sorted, occurring
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec import catalog, loader
from txncheck.spec.errors import ConfigError, SpecError
from txncheck.spec.expr import Exists, ForAll
from txncheck.spec.fairness import WeakFair
from txncheck.spec.model import DropRow, Eventually, LeadsTo, Variant
from txncheck.traces.replay import replay
from txncheck.traces.schema import Trace, TraceError

HERE = os.path.dirname(__file__)
TLC = json.load(open(os.path.join(HERE, "tlc", "verdicts.json")))
MUTEX = os.path.join(HERE, "models", "fair_mutex.py")
# the TLA+ module's specifications, as variants of the tables' spec (the base spec is strongly fair per process)
MUTEX_FAIRNESS = {"Unfair": "unfair", "Weak": "weak", "Strong": None, "WeakNext": "weak-next"}


COMMIT = os.path.join(HERE, "models", "commit_liveness.py")
COMMIT_FAIRNESS = {"Unfair": "unfair", "WeakNext": None, "WeakRMOnly": "weak-rm-only"}


def _verdicts(result, names):
    return {n: result.outcome_of(n).outcome for n in names}


def _replays(result, names):
    for n in names:
        tr = result.traces.get(n)
        if tr is None:
            continue
        back = Trace.from_json(json.loads(json.dumps(tr.to_json())))
        report = replay(back)
        assert report.confirmed, (n, report.message)
        assert back.kind == "lasso" and back.loop is not None


# TLA+ module -> (the tables' spec, its variant per TLA+ specification, its safety property)
TLC_MODELS = {"FairMutex": (MUTEX, MUTEX_FAIRNESS, "Mutex"), "Commit": (COMMIT, COMMIT_FAIRNESS, "TCConsistent")}


@pytest.mark.parametrize("engine", ["vector", "scalar"])
@pytest.mark.parametrize("module, tla_spec", [(m, s) for m in TLC_MODELS for s in TLC[m]["verdicts"]])
def test_liveness_matches_tlc(engine, module, tla_spec):
    path, variants, safety = TLC_MODELS[module]
    expected = TLC[module]["verdicts"][tla_spec]
    r = check_spec(path, "tiny", variant=variants[tla_spec], engine=engine,
                   options=ExploreOptions(stop_on_violation=False))
    assert r.stats["distinct"] == TLC[module]["distinct"]
    assert _verdicts(r, expected) == expected
    assert r.outcome_of(safety).outcome == "holds"
    _replays(r, expected)


def test_starvation_is_a_real_cycle_and_no_fairness_is_stuttering():
    weak = check_spec(MUTEX, "tiny", variant="weak")
    tr = weak.traces["FirstEnters"]
    assert tr.loop < tr.length  # p2 cycles through its critical section while p1 waits
    assert tr.steps[tr.loop].state == tr.steps[-1].state
    assert {s.params.get("p") for s in tr.steps[tr.loop + 1:]} == {"p2"}
    unfair = check_spec(MUTEX, "tiny", variant="unfair")
    tr = unfair.traces["SomeoneEnters"]
    assert tr.loop == tr.length == 0
    assert "stuttering" in tr.explanation


def test_engines_write_the_same_lasso():
    a = check_spec(MUTEX, "tiny", variant="weak", engine="vector").traces["FirstEnters"].to_json()
    b = check_spec(MUTEX, "tiny", variant="weak", engine="scalar").traces["FirstEnters"].to_json()
    a.pop("engine"), b.pop("engine")
    assert a == b


def _tampered(edit):
    tr = check_spec(MUTEX, "tiny", variant="weak").traces["FirstEnters"]
    d = tr.to_json()
    edit(d)
    return Trace.from_json(d)


def test_replay_refuses_a_lasso_that_does_not_close():
    report = replay(_tampered(lambda d: d.update(loop=d["loop"] + 1)))
    assert not report.confirmed and "do not form a cycle" in report.message


def test_replay_refuses_an_unfair_lasso():
    # cut the cycle to its first step and claim it stutters there: a process stays enabled forever, never taken
    def cut(d):
        k = d["loop"] + 1
        d["steps"] = d["steps"][:k + 1]
        d["loop"] = k
    report = replay(_tampered(cut))
    assert not report.confirmed and "not fair" in report.message and "WF(Proc p=p" in report.message


def test_replay_refuses_a_lasso_that_stronger_fairness_rules_out():
    r = check_spec(MUTEX, "tiny")
    assert "FirstEnters" not in r.traces
    # the weak lasso replayed against strong fairness: p1 is enabled on the cycle and never taken
    tr = check_spec(MUTEX, "tiny", variant="weak").traces["FirstEnters"]
    report = replay(tr, variant=None)
    assert not report.confirmed and "not fair" in report.message


def test_loop_only_in_lasso_traces():
    with pytest.raises(TraceError, match="loop"):
        _tampered(lambda d: d.pop("loop"))
    w = check_spec(MUTEX, "tiny", variant="weak").traces.get("Mutex")
    assert w is None


def test_fairness_names_are_checked():
    spec = loader.resolve(MUTEX).spec
    bad = replace(spec, fairness=(WeakFair("Proces"),))
    with pytest.raises(SpecError, match="no row or actor named Proces"):
        check_spec(bad, "tiny")
    bad = replace(spec, fairness=(WeakFair("Proc", per="q"),))
    with pytest.raises(SpecError, match="has no parameter q"):
        check_spec(bad, "tiny")


def test_liveness_is_not_checked_under_symmetry():
    with pytest.raises(ConfigError, match="not checked under --symmetry"):
        check_spec(COMMIT, "tiny", options=ExploreOptions(symmetry=True))
    r = check_spec(COMMIT, "tiny", options=ExploreOptions(symmetry=True, properties=("TCConsistent",)))
    assert r.verdict == "pass"


def test_kafka_decisions_complete_and_a_broken_coordinator_is_caught():
    assert check_spec("kafka", "tiny").outcome_of("LIVE-4").outcome == "holds"
    r = check_spec(os.path.join(HERE, "models", "kafka_no_complete.py"), "tiny", variant="no-complete",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.outcome_of("LIVE-4").outcome == "violated"
    tr = r.traces["LIVE-4"]
    assert replay(tr).confirmed
    assert list(tr.values) == ["tl_st[tid1]"] and tr.values["tl_st[tid1]"] in ("PrepareCommit", "PrepareAbort")


@pytest.mark.skipif(not os.environ.get("TXNCHECK_TLA2TOOLS") or not shutil.which("java"),
                    reason="set TXNCHECK_TLA2TOOLS to tla2tools.jar (TLC 2.20) to rerun TLC")
def test_tlc_still_says_so(tmp_path):
    jar = os.environ["TXNCHECK_TLA2TOOLS"]
    for module in ("FairMutex", "Commit"):
        shutil.copy(os.path.join(HERE, "tlc", f"{module}.tla"), tmp_path)
        for spec, props in TLC[module]["verdicts"].items():
            for prop, verdict in props.items():
                cfg = tmp_path / f"{module}_{spec}_{prop}.cfg"
                consts = "".join(f"CONSTANT {c}\n" for c in TLC[module]["constants"])
                cfg.write_text(f"SPECIFICATION {spec}\n{consts}PROPERTY {prop}\n")
                out = subprocess.run(["java", "-cp", jar, "tlc2.TLC", "-config", str(cfg), "-workers", "1",
                                      "-deadlock", "-cleanup", module], cwd=tmp_path, capture_output=True, text=True)
                got = ("violated" if "Temporal properties were violated" in out.stdout else
                       "holds" if "No error has been found" in out.stdout else out.stdout[-500:])
                assert got == verdict, (module, spec, prop)


# ---- the fair-cycle algorithm against brute force ---------------------------------------------------
def _oracle_fair(n, edges, groups_of, strong, allowed):
    """States of `allowed` on some fair cycle: a set S of states, strongly connected by its own edges (one
    state alone may stutter), where the behaviour visiting all of S and taking all its edges is fair."""
    fair = np.zeros(n, dtype=bool)
    enabled = [set() for _ in range(n)]
    for s, d, a in edges:
        if s != d:
            enabled[s] |= set(groups_of[a])
    nodes = [i for i in range(n) if allowed[i]]
    for k in range(1, len(nodes) + 1):
        for S in itertools.combinations(nodes, k):
            inner = [(s, d, a) for s, d, a in edges if s in S and d in S and s != d]
            if k > 1:
                import networkx as nx
                g = nx.DiGraph()
                g.add_nodes_from(S)
                g.add_edges_from((s, d) for s, d, _ in inner)
                if not nx.is_strongly_connected(g):
                    continue
            taken = set().union(*(set(groups_of[a]) for _, _, a in inner)) if inner else set()
            ok = True
            for g_ in range(len(strong)):
                if g_ in taken:
                    continue
                en = [g_ in enabled[s] for s in S]
                if (strong[g_] and any(en)) or (not strong[g_] and all(en)):
                    ok = False
                    break
            if ok:
                fair[list(S)] = True
    return fair


@st.composite
def _graphs(draw):
    n = draw(st.integers(1, 6))
    n_actions = draw(st.integers(1, 4))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, n_actions - 1)),
                          max_size=12, unique_by=lambda e: (e[0], e[2])))
    n_groups = draw(st.integers(0, 3))
    groups_of = [tuple(sorted(draw(st.sets(st.integers(0, n_groups - 1), max_size=n_groups)))) if n_groups else ()
                 for _ in range(n_actions)]
    strong = [draw(st.booleans()) for _ in range(n_groups)]
    allowed = np.array([draw(st.booleans()) for _ in range(n)], dtype=bool)
    return n, edges, groups_of, strong, allowed


@settings(max_examples=300, deadline=None)
@given(_graphs())
# weak fairness: a group enabled at one state of a cycle only, by an edge leaving it, is not neglected
@example((3, [(0, 1, 0), (1, 0, 1), (0, 2, 2)], [(), (), (0,)], [False], np.array([True, True, False])))
def test_fair_states_match_brute_force(g):
    n, edges, groups_of, strong, allowed = g
    ptr = np.zeros(len(groups_of) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in groups_of])
    grp = np.array([x for m in groups_of for x in m], dtype=np.int64)
    groups = liveness.FairnessGroups(tuple(f"g{i}" for i in range(len(strong))), np.array(strong, dtype=bool), ptr, grp)
    arr = np.array(edges, dtype=np.int64).reshape(-1, 3)
    outcome = SimpleNamespace(edges=(arr[:, 0], arr[:, 1], arr[:, 2].astype(np.int32)), distinct=n,
                              fps=np.arange(n, dtype=np.uint64)[::-1].copy())
    expected = _oracle_fair(n, edges, groups_of, strong, allowed).tolist()
    # the whole graph, and (as `check` builds it) only the edges that leave an allowed state
    for gr in (liveness.LiveGraph.of(outcome, groups), liveness.LiveGraph.of(outcome, groups, allowed)):
        fair, comp = liveness.fair_states(gr, allowed)
        assert fair.tolist() == expected
        for f in np.flatnonzero(fair):  # every fair state has a fair cycle through it, in its own component
            cycle = liveness._fair_cycle(gr, comp, int(f))
            assert all(0 <= a < len(groups_of) for a in cycle)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4)), max_size=300), st.booleans())
def test_enabled_pairs_are_the_sorted_distinct_keys_whatever_the_sources_order(pairs, by_source):
    # sources in no order (the vector engine's levels in their parents' order) go through a counting sort first;
    # sources by state (every other engine) straight to timsort: the same keys either way
    if by_source:
        pairs = sorted(pairs, key=lambda p: p[0])
    src = np.array([p[0] for p in pairs], dtype=np.int32)
    grp = np.array([p[1] for p in pairs], dtype=np.int32)
    got = liveness._enabled_pairs(41, src, grp, 5)
    assert got.dtype == np.int64 and got.tolist() == sorted({s * 5 + g for s, g in pairs})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), unique=True), st.lists(st.integers(0, 30)))
def test_occurring_is_contains_sorted_searched_from_the_other_side(block, q):
    # fair_states asks which enabled keys are taken by searching the (fewer) taken keys among them
    b = np.array(sorted(block), dtype=np.int64)
    qs = np.array(sorted(q), dtype=np.int64)
    assert occurring(b, np.array(q, dtype=np.int64)).tolist() == contains_sorted(qs, b).tolist() \
        == [v in set(q) for v in sorted(block)]


def test_spark_writes_the_same_lasso(tmp_path, txncheck_cli):
    import importlib.util
    if importlib.util.find_spec("pyspark") is None or shutil.which("java") is None:
        pytest.skip("the Spark engine needs pyspark and Java (tests/spark_env.py says how)")
    code, out, err = txncheck_cli("check", MUTEX, "--variant", "weak", "--engine", "spark", "--out", str(tmp_path / "s"))
    assert code == 1, err
    spark = json.loads((tmp_path / "s" / "traces" / "FirstEnters.json").read_text())
    vector = json.loads(json.dumps(check_spec(MUTEX, "tiny", variant="weak").traces["FirstEnters"].to_json()))
    spark.pop("engine"), vector.pop("engine")
    assert spark == vector
