"""The vector kernel's contract (used by the explorer and the Spark engine) and the explorer's
store: narrow dtypes, exact fingerprints, successors, properties, deadlocks, spilling."""
from __future__ import annotations

import os
import re
from dataclasses import replace
from unittest.mock import patch

import numpy as np
import pytest

from txncheck.checker import symmetry
from txncheck.checker.compile_py import CompiledModel
from txncheck.checker.fingerprint import Fingerprinter
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model
from txncheck.checker.scalar.explore import explore as scalar_explore
from txncheck.checker.vector.explore import explore as vector_explore
from hypothesis import given, settings, strategies as st

from txncheck.checker import lookup
from txncheck.checker.lookup import find_sorted, group_index
from txncheck.checker.vector.kernel import VectorKernel
from txncheck.checker.vector.store import VisitedStore, merge_sorted
from txncheck.spec import catalog, twophase
from txncheck.spec.domains import IntRange
from txncheck.spec.errors import EvaluationError
from txncheck.spec.expr import Config, Var
from txncheck.spec.evaluate import evaluate
from txncheck.spec.ground import ground
from txncheck.spec.model import Always, ConfigParam, Row, Sometimes, Spec, Table


def _twophase(rm=3):
    return ground(twophase.SPEC, twophase.SPEC.resolve_config("tiny", {"rm": rm}))


def _reachable(model, limit=400):
    """Some reachable states (BFS with the scalar compiled model), as a matrix."""
    cm = CompiledModel(model)
    seen = {tuple(model.init)}
    frontier = [tuple(model.init)]
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for _, t, _ in cm.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return sorted(seen)[:limit]


def test_narrowest_dtype():
    assert VectorKernel(_twophase(), False).dtype == np.uint8
    pax = build_model(catalog.load("paxoscommit"), "tiny")
    assert VectorKernel(pax, False).dtype == np.int8  # ballots include -1


@pytest.mark.parametrize("sym", [False, True])
def test_fingerprints_match_the_contract(sym):
    m = _twophase(4)
    k = VectorKernel(m, sym)
    states = _reachable(m)
    fpr = Fingerprinter(m.layout)
    perms = symmetry.permutations(m, sym)
    want = [symmetry.canonical(perms, fpr, s, fpr.of(s), m.layout.cell_lo)[1] if perms else fpr.of(s)
            for s in states]
    got = k.fingerprints(np.asarray(states, dtype=k.dtype))
    assert [int(x) for x in got] == want


@pytest.mark.parametrize("sym", [False, True])
@pytest.mark.parametrize("spec_name,config", [("twophase", "tiny"), ("paxoscommit", "tiny")])
def test_expand_matches_the_scalar_successors(spec_name, config, sym):
    m = build_model(catalog.load(spec_name), config)
    k = VectorKernel(m, sym, chunk=37)  # several chunks
    cm = CompiledModel(m)
    fpr = Fingerprinter(m.layout)
    perms = symmetry.permutations(m, sym)
    lo = m.layout.cell_lo
    states = _reachable(m, 300)
    M = np.asarray(states, dtype=k.dtype)
    exp = k.expand(M)
    assert exp.fps.dtype == np.uint64 and exp.parent_rows.dtype == np.int64 and exp.actions.dtype == np.int32
    want, fired = set(), np.zeros(len(m.actions), dtype=np.int64)
    has = []
    for i, s in enumerate(states):
        out = cm.successors(s)
        has.append(bool(out))
        pf = symmetry.canonical(perms, fpr, s, fpr.of(s), lo)[1] if perms else fpr.of(s)
        for aid, t, f in out:
            fired[aid] += 1
            cf = symmetry.canonical(perms, fpr, t, f, lo)[1] if perms else f
            if cf != pf:
                want.add((i, aid, cf))
    got = {(int(r), int(a), int(f)) for r, a, f in zip(exp.parent_rows, exp.actions, exp.fps)}
    assert got == want
    assert (exp.fired == fired).all() and exp.generated == int(fired.sum())
    assert exp.has_successor.tolist() == has
    # materialised successors are canonical and have the listed fingerprints
    sel = np.arange(0, len(exp.fps), 7)
    children = exp.states(sel)
    assert children.shape == (len(sel), m.width) and children.dtype == k.dtype
    for row, f in zip(children, exp.fps[sel]):
        t = tuple(int(x) for x in row)
        canon = symmetry.canonical(perms, fpr, t, fpr.of(t), lo) if perms else (t, fpr.of(t))
        assert canon[0] == t and canon[1] == int(f)


def test_properties_and_deadlocks():
    m = _twophase(3)
    k = VectorKernel(m, False)
    states = _reachable(m)
    M = np.asarray(states, dtype=k.dtype)
    props = k.properties(M)
    for p in m.properties:
        truth = np.array([bool(evaluate(p.expr, s)) for s in states])
        assert (props[p.name] == (~truth if p.kind == "always" else truth)).all()
    has = k.expand(M).has_successor
    dead = k.deadlocks(M, has)
    term = np.array([bool(evaluate(m.terminal, s)) for s in states])
    assert (dead == (~has & ~term)).all()


def test_initial_and_rebuild_is_deterministic():
    m = _twophase(3)
    a, b = VectorKernel(m, True), VectorKernel(m, True)
    assert a.source == b.source
    assert a.initial().shape == (1, m.width)
    assert tuple(int(x) for x in a.initial()[0]) == tuple(m.init)


def test_property_evaluation_error_names_the_state():
    Idx = IntRange("Idx", 0, 1)
    Small = IntRange("Small", 0, 3)
    x = Var("x", Small, init=0)
    a = Var("a", Small, index=(Idx,), init=0)
    spec = Spec("perr", "", vars=(x, a), tables=(Table("A", (Row("A-01", "A", "s", guard=(x < 3,),
                                                                   updates=(x.set(x + 1),)),)),),
                properties=(Always("Reads", a[x] == 0),))
    m = ground(spec, spec.resolve_config())
    for engine in (scalar_explore, vector_explore):
        with pytest.raises(EvaluationError) as info:
            engine(m, ExploreOptions())
        assert "computed index 2" in str(info.value)


@pytest.mark.parametrize("spec_name", ["kafka", "paxoscommit"])
def test_properties_in_pieces_are_the_whole_levels(spec_name):
    """Properties are evaluated `prop_chunk` states at a time: any piece size gives the whole evaluation's
    masks, for every property and `when` condition."""
    m = build_model(catalog.load(spec_name), "tiny")
    whole, pieces = VectorKernel(m, prop_chunk=1 << 30), VectorKernel(m, prop_chunk=7)
    cols = np.ascontiguousarray(np.asarray(_reachable(m, 300), dtype=whole.dtype).T)
    assert cols.shape[1] == 300
    a, b = whole.properties_cols(cols), pieces.properties_cols(cols)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert any(0 < v.sum() < len(v) for v in a.values())  # some mask is not constant: the pieces matter


def test_a_property_error_in_a_later_piece_names_the_first_state_that_fails():
    Idx = IntRange("Idx", 0, 1)
    Small = IntRange("Small", 0, 3)
    a = Var("a", Small, index=(Idx,), init=0)
    rows = tuple(Row(f"A-0{i + 1}", "A", "s", guard=(a[i] < 3,), updates=(a[i].set(a[i] + 1),)) for i in range(2))
    spec = Spec("perr2", "", vars=(a,), tables=(Table("A", rows),), properties=(Always("Reads", a[a[1] + a[1] - a[0]] < 9),))
    m = ground(spec, spec.resolve_config())
    messages = set()
    # level 1 holds (1, 0) and (0, 1), whose indices -1 and 2 both fail: each piece size must report the first
    # of them in the level's order
    for size in (1, 2, 1 << 30):
        with pytest.raises(EvaluationError) as info:
            vector_explore(m, ExploreOptions(), VectorKernel(m, prop_chunk=size))
        messages.add((str(info.value), repr(info.value.state)))
    assert len(messages) == 1
    (text, state), = messages
    assert re.search(r"computed index (-1|2) ", text) and "(evaluating the property Reads)" in text


def test_group_index_and_merge():
    rng = np.random.default_rng(1)
    u = np.unique(rng.integers(0, 2**63, 5000, dtype=np.uint64) * np.uint64(2))
    c = u[rng.integers(0, len(u), 40000)]
    assert (u[group_index(u, c)] == c).all()
    q = np.concatenate([c, rng.integers(0, 2**63, 40000, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
                        np.array([0, 2**64 - 1], dtype=np.uint64)])  # odd: absent
    pos, found = find_sorted(u, q)
    assert (found == np.isin(q, u)).all() and (u[pos[found]] == q[found]).all()
    a, b = np.sort(u[::2]), np.sort(u[1::2])
    assert (merge_sorted(a, b) == u).all()


def _least_by_sorting(c, key):
    u = np.unique(c)
    least = np.full(len(u), np.iinfo(np.uint64).max, dtype=np.uint64)
    np.minimum.at(least, np.searchsorted(u, c), key)
    return u, least


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**63 - 1)), min_size=1, max_size=300),
       st.integers(1, 8), st.integers(0, 3))
def test_table_group_by_is_the_sorted_one(pairs, dup, crowd):
    """The direct-mapped table gives the sorted distinct fingerprints and each one's least key, as sorting does
    (fingerprints over the whole 64 bits, each repeated `dup` times with other keys, in shuffled order; with
    TABLE_MIN lowered so small arrays take the table, and `crowd` top bits cleared so slots collide)."""
    rng = np.random.default_rng(len(pairs) * 8 + dup)
    c = np.array([f for f, _ in pairs] * dup, dtype=np.uint64) >> np.uint64(crowd)
    key = np.array([k for _, k in pairs] * dup, dtype=np.uint64) + np.repeat(np.arange(dup, dtype=np.uint64),
                                                                              len(pairs))[::-1]
    perm = rng.permutation(len(c))
    c, key = c[perm], key[perm]
    want = _least_by_sorting(c, key)
    for table_min in (1, lookup.TABLE_MIN):
        with patch.object(lookup, "TABLE_MIN", table_min):
            got = lookup.distinct_least(c, key)
        assert got[0].dtype == np.uint64 and got[1].dtype == np.uint64
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("distinct", [2000, 20000, 200000])
def test_table_group_by_on_a_level_sized_array(distinct):
    """Level-sized arrays, from many repeats per fingerprint to almost none, take the table and its later
    rounds (losers); the answer is the sorted one."""
    rng = np.random.default_rng(distinct)
    u = rng.integers(0, 2**63, distinct, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    c = u[rng.integers(0, len(u), lookup.TABLE_MIN * 50)]
    key = rng.integers(0, 2**40, len(c)).astype(np.uint64)
    rounds = []
    real = lookup._by_table
    def counted(c, key, spare):
        rounds.append(spare)
        return real(c, key, spare)
    with patch.object(lookup, "_by_table", counted):
        got = lookup.distinct_least(c, key)
    want = _least_by_sorting(c, key)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(rounds) > 1  # some fingerprints lost their slot and went round again


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=400), st.integers(0, 64), st.integers(1, 4),
       st.sampled_from(["uint64", "int64", "int32", "uint8"]))
def test_sort_order_is_numpys_stable_argsort(values, varied, dup, dtype):
    """`sort_order` gives numpy's stable argsort and the sorted keys: keys of every width (only the low
    `varied` bits differ, so runs of equal high bits hold different keys), each repeated `dup` times,
    in shuffled order, of every integer dtype the engines sort."""
    info = np.iinfo(dtype)
    high = np.uint64(values[0] if values else 0) & ~np.uint64((1 << varied) - 1 if varied < 64 else 2**64 - 1)
    keys = (np.array(values * dup, dtype=np.uint64) & np.uint64((1 << varied) - 1 if varied < 64 else 2**64 - 1)) | high
    keys = (keys % np.uint64(info.max)).astype(dtype)
    keys = keys[np.random.default_rng(len(keys)).permutation(len(keys))]
    order, ordered = lookup.sort_order(keys)
    want = np.argsort(keys, kind="stable")
    assert order.dtype == np.int64 and np.array_equal(order, want)
    assert np.array_equal(ordered, keys[want].astype(np.uint64))


def test_sort_order_puts_runs_of_equal_high_bits_in_order():
    """Wide keys that share their high bits with others of different low bits take the repair of those runs
    (lexsort), and still come out as numpy's stable argsort."""
    rng = np.random.default_rng(7)
    low = rng.integers(0, 1 << 16, 5000).astype(np.uint64)
    # the second set's last run has every high bit set
    for keys in ((rng.integers(1, 4, 5000).astype(np.uint64) << np.uint64(61)) | low, np.uint64(2**64 - 1) - low):
        calls = []
        real = np.lexsort
        with patch.object(np, "lexsort", lambda k: calls.append(len(k[0])) or real(k)):
            order, ordered = lookup.sort_order(keys)
        assert calls and np.array_equal(order, np.argsort(keys, kind="stable"))
        assert np.array_equal(ordered, np.sort(keys))


def test_spilling_to_disk_gives_the_same_outcome(tmp_path):
    m = _twophase(5)
    plain = vector_explore(m, ExploreOptions())
    spilled = vector_explore(m, ExploreOptions(memory_budget=2000, workdir=str(tmp_path)))
    assert spilled.extra["vector_spills"] > 0
    assert (plain.fps == spilled.fps).all()
    assert (plain.parent == spilled.parent).all() and (plain.action == spilled.action).all()
    assert plain.level_sizes == spilled.level_sizes
    assert os.listdir(tmp_path) == []  # spill files removed


def test_store_membership_across_blocks(tmp_path):
    st = VisitedStore(budget=64, workdir=str(tmp_path))
    st.add_level(np.array([5, 9], dtype=np.uint64), np.array([-1, -1]), np.array([-1, -1]))
    st.add_level(np.array([1, 7], dtype=np.uint64), np.array([0, 1]), np.array([2, 3]))
    assert st.spills >= 1
    q = np.array([1, 2, 5, 7, 9, 10], dtype=np.uint64)
    assert st.contains(q).tolist() == [True, False, True, True, True, False]
    f, p, a = st.records()
    assert f.tolist() == [5, 9, 1, 7] and p.tolist() == [-1, -1, 0, 1] and a.tolist() == [-1, -1, 2, 3]
    st.close()


def test_memory_per_state_is_small():
    out = vector_explore(_twophase(6), ExploreOptions())
    assert out.extra["vector_store_bytes_per_state"] <= 32
    assert out.peak_memory > 0 and out.engine == "vector"


# -- the progress line and its estimate of what remains (checker/progress.py) ---------------------------
KAFKA_TINY_LEVELS = [1, 2, 3, 7, 10, 16, 21, 26, 30, 36, 52, 90, 175, 325, 584, 979, 1503, 2081, 2593, 2965, 3157,
                     3289, 3448, 3781, 4392, 5376, 6789, 8613, 10805, 13213, 15470, 16880, 16697, 14946, 12431,
                     9637, 6831, 4256, 2218, 880, 236, 42]


def test_no_estimate_while_levels_grow_or_shrink_slowly():
    from txncheck.checker.progress import estimate_remaining
    assert estimate_remaining([1]).states is None and "yet" in estimate_remaining([1]).reason
    grow = estimate_remaining(KAFKA_TINY_LEVELS[:32])
    assert grow.states is None and grow.reason == "no estimate while levels grow"
    slow = estimate_remaining(KAFKA_TINY_LEVELS[:33])  # 16,880 then 16,697: x0.99
    assert slow.states is None and "too slowly (x0.99)" in slow.reason


def test_the_estimate_is_the_geometric_tail_of_the_last_ratio():
    from txncheck.checker.progress import estimate_remaining
    e = estimate_remaining([100, 1000, 500])  # 250 + 125 + 62 + 31 + 15 + 7 + 3 + 1: whole states
    assert e.ratio == 0.5 and e.states == 494
    assert estimate_remaining([10, 3]).states == 0   # at most 0.9 of a state: none
    assert estimate_remaining([100, 29]).states == 8 + 2  # 29 · 0.29 = 8.41 exactly, not 8.4099...


def test_the_estimate_bounds_what_remains_on_the_shipped_models_once_they_shrink():
    """Level sizes of Kafka tiny and TwoPhase rm=7 (their ratios fall as the levels fall): from the first
    level where an estimate is given, it is never below the states the search still found."""
    from txncheck.checker.progress import estimate_remaining
    twophase7 = [1, 15, 105, 462, 1456, 3570, 7259, 12861, 20449, 29372, 37772, 42924, 42651, 36785, 27371,
                 17447, 9436, 4277, 1603, 490, 119, 21, 2]
    for levels in (KAFKA_TINY_LEVELS, twophase7):
        given = 0
        for d in range(1, len(levels)):
            e = estimate_remaining(levels[:d + 1])
            if e.states is not None:
                given += 1
                assert e.states >= sum(levels[d + 1:]), (d, e)
        assert given >= 8


def test_the_progress_line_names_level_states_rate_memory_spill_and_the_estimate():
    import io

    from txncheck.checker.progress import Progress
    out = io.StringIO()
    p = Progress(ExploreOptions(progress=True), "vector", stream=out)
    p.level([1, 4, 2], 9, spilled=3 * 2**20, checkpoint=2**20, force=True)
    line = out.getvalue()
    assert line.startswith("progress [vector]: level 2, 7 states (+2), 9 generated, ")
    assert "states/s" in line and "MiB resident" in line and "3 MiB spilled, 1 MiB checkpointed" in line
    assert "; remaining: at most 1 more states" in line and "x0.50 or more, as the last did" in line
    p.level([1, 4, 2], 9, force=True, final="search complete")
    assert out.getvalue().splitlines()[1].endswith("0 MiB spilled; search complete")
    quiet = io.StringIO()
    Progress(ExploreOptions(), "vector", stream=quiet).level([1, 2], 2, force=True)
    assert quiet.getvalue() == ""


def test_the_progress_line_names_the_mapped_files_pages_in_the_resident_memory(tmp_path, monkeypatch):
    """Spill files read through memory maps count as resident while the kernel caches them: a budgeted run's
    line says how much of its resident memory that is, so it is not read as the budget broken. The shared
    libraries' pages are not counted: z3's, scipy's and numpy's alone pass 64 MiB in a test process."""
    import io

    from txncheck.checker import progress
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("the figures come from /proc")
    size = 96 << 20
    path = tmp_path / "spilled"
    path.write_bytes(b"\1" * size)
    import scipy.sparse.csgraph  # noqa: F401 - libraries loaded, as in a run that judges a graph
    import z3  # noqa: F401
    before = progress.current_memory()[1]
    assert before < progress.MANY_MAPPED
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    assert int(mapped.sum()) == size  # every page read, so resident
    assert progress.current_memory()[1] - before >= size * 9 // 10
    out = io.StringIO()
    p = progress.Progress(ExploreOptions(progress=True), "vector", stream=out)
    # a terabyte: above any peak the test process itself has reached
    monkeypatch.setattr(progress, "current_memory", lambda: (1 << 40, 700 << 20))
    p.step("judging")
    monkeypatch.setattr(progress, "current_memory", lambda: (1 << 40, 20 << 20))
    p.step("judging")
    first, second = out.getvalue().splitlines()
    assert first.endswith("; 1,048,576 MiB resident (1,048,576 peak), 700 MiB of it mapped files")
    assert second.endswith("; 1,048,576 MiB resident (1,048,576 peak)")  # a few pages are not worth naming
    del mapped


CLIMB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "climb.py")


@pytest.mark.parametrize("engine", ["vector", "scalar"])
def test_progress_names_each_step_after_the_search(tmp_path, capsys, engine):
    from txncheck.cli.main import main
    args = ["check", CLIMB, "--config", "small", "--engine", engine, "--out", str(tmp_path / "o")]
    assert main(args + ["--continue", "--progress"]) == 1  # BelowTwo is violated, and BackToZero (nothing is fair)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(f"progress [{engine}]: ")]
    steps = [line.split(": ", 1)[1].split(";")[0] for line in err]
    judging = [s for s in steps if s.startswith("judg")]
    assert [s.rsplit(", ", 1)[0] for s in judging[:2]] == [  # the fair-cycle properties first (`run.judge`)
        "judging BackToZero (leads_to) on the state graph, 1 of 2",
        "judging TopReachable (recoverable) on the state graph, 2 of 2"]
    assert all(re.fullmatch(r"[0-9.,]+ s into judging", s.rsplit(", ", 1)[1]) for s in judging[:2])
    assert re.fullmatch(r"judged every property in [0-9.,]+ s \(2 on the state graph\)", judging[2])
    assert len(judging) == 3
    assert all(re.search(r"; [0-9,]+ MiB resident \([0-9,]+ peak\)$", line) for line in err if "judg" in line)
    if engine == "vector":  # the vector engine stores targets as fingerprints and maps them after its levels
        at = steps.index("mapping 6 edges' targets to state indices")
        assert at == steps.index(judging[0]) - 1
    # the search stops at the violation: its edges are neither mapped nor judged, and nothing is said about them
    assert main(args + ["--progress"]) == 1
    err = capsys.readouterr().err
    assert "judg" not in err and "mapping" not in err
    assert main(args + ["--continue"]) == 1  # without --progress, no line at all
    assert "progress [" not in capsys.readouterr().err


COUNTERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "counters.py")


@pytest.mark.parametrize("spec, config, overrides, properties, builds", [
    (COUNTERS, None, {"k": 2, "top": 3}, ("Acknowledged",), 0),  # a leads_to property without a fair cycle
    (COUNTERS, None, {"k": 2, "top": 3}, ("Rearmed",), 1),       # one with fair cycles (none reached: it holds)
    (COUNTERS, None, {"k": 2, "top": 3}, None, 1),               # both and a recoverable property
    (CLIMB, "small", {}, None, 1),                                         # a fair cycle, shared with it
])
def test_the_edges_by_destination_are_built_once_and_only_for_what_reads_them(spec, config, overrides, properties,
                                                                             builds, monkeypatch):
    """`judge` takes the fair-cycle properties first and, where its backward searches go through the edges by
    destination (out of core under a budget), builds them on the first search: never where no recoverable
    property is selected and no fair cycle exists, and otherwise once the fair-cycle properties' graphs are let
    go, unless one has a fair cycle. Outcomes and traces stay in the spec's order."""
    from txncheck.checker.run import check
    from txncheck.checker.vector import reverse
    from txncheck.spec.request import ModelRequest

    built = []
    plain = reverse.DiskReverseGraph.__init__
    monkeypatch.setattr(reverse.DiskReverseGraph, "__init__", lambda self, *a: built.append(a) or plain(self, *a))
    monkeypatch.setattr(reverse.JudgingGraph, "out_of_core", lambda self: True)
    req = ModelRequest.of(spec, config, overrides, None)
    got = check(req, "vector", ExploreOptions(stop_on_violation=False, properties=properties, memory_budget=1 << 30))
    assert len(built) == builds
    names = [p.name for p in req.ground().properties if properties is None or p.name in properties]
    assert [p.name for p in got.properties] == names
    assert list(got.traces) == [n for n in names if n in got.traces]
    if spec == CLIMB:
        assert [(p.name, p.outcome) for p in got.properties] == [
            ("BelowTwo", "violated"), ("TopReachable", "holds"), ("BackToZero", "violated")]
        assert list(got.traces) == ["BelowTwo", "BackToZero"]


def test_a_property_is_never_judged_on_edges_kept_for_others():
    """An outcome whose edges are a part (`edges_for`: Spark's driver keeps those its eventually / leads_to
    properties read) judges those properties on them and no other: a recoverable property it did not judge
    elsewhere is unknown, not decided on a part of the graph."""
    from dataclasses import replace
    from txncheck.checker.run import judge
    from txncheck.spec.request import ModelRequest
    model = ModelRequest.of(CLIMB, "small", {}, None).ground()
    opts = ExploreOptions(stop_on_violation=False)
    whole = vector_explore(model, opts)
    got = {p.name: p.outcome for p in judge(model, whole, opts, "vector").properties}
    assert got == {"BelowTwo": "violated", "TopReachable": "holds", "BackToZero": "violated"}
    part = replace(whole, edges_for=("BackToZero",))
    got = {p.name: p.outcome for p in judge(model, part, opts, "vector").properties}
    assert got == {"BelowTwo": "violated", "TopReachable": "unknown", "BackToZero": "violated"}


def _budget_spec():
    # S-02 spends a budget whose cell ranges over 0..n: with n = 0 its guard b < n is false in every state
    b = Var("b", IntRange("Budget", 0, "n"), init=0)
    x = Var("x", IntRange("X", 0, 3), init=0)
    rows = (Row("S-01", "S", "step", guard=(x < 3,), updates=(x.set(x + 1),)),
            Row("S-02", "S", "spend", guard=(b < Config("n"),), updates=(b.set(b + 1), x.set(0))))
    return Spec("budget", "", vars=(x, b), tables=(Table("S", rows),), params=(ConfigParam("n", 0),),
                properties=(Always("Low", x <= 3), Sometimes("Top", x == 3)))


@pytest.mark.parametrize("n", [0, 1])
def test_an_action_that_is_never_enabled_gets_no_code(n):
    """The kernel emits no delta or apply for an action whose guard is false wherever the layout allows (a row
    its config switches off by a budget of 0: a quarter of Kafka ci's kernel source), and its search is the
    reference's; with the budget raised the code is there."""
    spec = _budget_spec()
    m = ground(spec, spec.resolve_config(None, {"n": n}))
    spend = [a.id for a in m.actions if a.row_id == "S-02"]
    assert spend
    k = VectorKernel(m, False)
    assert all((f"def delta_{i}(" in k.source) == (n == 1) for i in spend)
    assert all((f"def apply_{i}(" in k.source) == (n == 1) for i in spend)
    a = scalar_explore(m, ExploreOptions(stop_on_violation=False))
    v = vector_explore(m, ExploreOptions(stop_on_violation=False), kernel=k)
    assert (v.distinct, v.level_sizes, list(v.fired)) == (a.distinct, a.level_sizes, list(a.fired))
    assert v.distinct == 4 * (n + 1)


@pytest.mark.parametrize("spec_name, config, sym", [("kafka", "tiny", False), ("kafka", "tiny", True),
                                                   ("paxoscommit", "tiny", False)])
def test_without_a_budget_a_level_is_copied_from_its_parents_in_order(spec_name, config, sym):
    """Without a budget the new states are materialised sorted by their parent's column (`step.py`), so the copy
    reads the frontier in order; with a forced chunk size (fingerprint order) it does not. The outcome is the
    same either way (tests/test_vector_budget.py compares them field for field)."""
    model = build_model(catalog.load(spec_name), config)
    opts = ExploreOptions(stop_on_violation=False, symmetry=sym)
    whole, copies = _copied_parents(model, opts)
    assert len(copies) == len(whole.level_sizes) - 1 and sum(map(len, copies)) == whole.distinct - whole.level_sizes[0]
    assert all((np.diff(rows) >= 0).all() for rows in copies)
    chunked, copies = _copied_parents(model, replace(opts, chunk_states=1 << 20))
    assert chunked.distinct == whole.distinct and np.array_equal(chunked.parent, whole.parent)
    assert any((np.diff(rows) < 0).any() for rows in copies)  # in fingerprint order the parents come at random


def test_narrow_states_are_copied_in_fingerprint_order():
    """TwoPhase's 27-byte states are materialised in fingerprint order: sorting their parents costs more than the
    random copy saves (step.PARENT_ORDER_BYTES)."""
    from txncheck.checker.vector import step
    model = build_model(catalog.load("twophase"), "tiny", {"rm": 5})
    kernel = VectorKernel(model)
    assert kernel.width * kernel.dtype.itemsize < step.PARENT_ORDER_BYTES
    wide = build_model(catalog.load("paxoscommit"), "tiny")
    assert VectorKernel(wide).width >= step.PARENT_ORDER_BYTES
    _, copies = _copied_parents(model, ExploreOptions(stop_on_violation=False))
    assert any((np.diff(rows) < 0).any() for rows in copies)


def _copied_parents(model, options):
    """A search's outcome, and the parent columns each of its materialisations copied, in the order copied."""
    copies = []

    class Recording(VectorKernel):
        def successors_cols(self, cols, parent_rows, actions, known_fps=None):
            copies.append(np.asarray(parent_rows).copy())
            return super().successors_cols(cols, parent_rows, actions, known_fps)

    return vector_explore(model, options, Recording(model, options.symmetry)), copies
