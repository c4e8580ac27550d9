"""Trace format /2 (step 0's state, then changed cells only), the cells that decide a property
(`spec.evaluate.explain`, a trace's `values`), and the text trace: goldens and size bounds."""
from __future__ import annotations

import itertools
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.spec.errors import EvaluationError
from txncheck.spec.evaluate import cells_read, evaluate, explain
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GOp, GTable
from txncheck.traces.build import states_along
from txncheck.traces.render import render_trace_text
from txncheck.traces.replay import model_for, replay
from txncheck.traces.story import find_action
from txncheck.traces.schema import TRACE_SCHEMA, Trace, load
from txncheck.traces.text import trace_text, var_groups


@pytest.fixture(scope="module")
def runs(tmp_path_factory, txncheck_main):
    """{name: output directory} of the runs these tests read."""
    root = tmp_path_factory.mktemp("v2")
    argv = {
        "tp": ["check", "twophase", "--variant", "commit-without-all-prepared"],
        "atom": ["check", "kafka", "--config", "tiny", "--set", "protocol=verify", "--set", "client=reference"],  # B1 (b)
    }
    out = {}
    for name, a in argv.items():
        code, _, err = txncheck_main(*a, "--out", str(root / name))
        assert code == 1, err
        out[name] = root / name
    return out


def _traces(runs):
    for name, d in runs.items():
        for f in sorted(os.listdir(d / "traces")):
            if f.endswith(".json"):
                yield f"{name}/{f[:-5]}", str(d / "traces" / f)


# ---- the format --------------------------------------------------------------------------------
def test_a_written_trace_has_the_state_at_step_0_only(runs):
    for name, path in _traces(runs):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        assert d["schema"] == TRACE_SCHEMA == "txncheck.trace/2"
        assert "state" in d["steps"][0] and d["steps"][0]["changed"] == []
        assert all("state" not in s for s in d["steps"][1:]), name


def test_states_rebuilt_on_load_are_the_replayed_states(runs):
    for name, path in _traces(runs):
        t = load(path)
        m = model_for(t)
        ids = [find_action(m, s).id for s in t.steps[1:]]
        want = [m.render_state(s) for s in states_along(m, ids)]
        assert [s.state for s in t.steps] == want, name
        assert replay(t).confirmed, name
        assert Trace.from_json(t.to_json()) == t  # and written again, the same trace
        assert Trace.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_rebuilt_states_do_not_share_what_a_step_changed(runs):
    t = load(dict(_traces(runs))["tp/TCConsistent"])
    assert [s.state["rmState"]["r1"] for s in t.steps] == ["working", "working", "committed", "committed"]
    assert t.steps[0].state["tmState"] == "init" and t.steps[1].state["tmState"] == "done"
    assert t.steps[0].state["rmState"] is t.steps[1].state["rmState"]  # unchanged: shared, not copied


def test_an_edited_changed_list_is_caught_at_its_step(runs, tmp_path, txncheck_main):
    # ATOM-2: pc_st[inc1] changes at steps 1, 4, 5, 11, 12, 15, 16, 29; a lie at step 4 is step 4's
    with open(dict(_traces(runs))["atom/ATOM-2"], encoding="utf-8") as f:
        d = json.load(f)
    c = next(c for c in d["steps"][4]["changed"] if c["cell"] == "pc_st[inc1]")
    c["after"] = "IN_TRANSACTION"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    code, out, _ = txncheck_main("replay", str(p))
    assert code == 2 and "steps[4].changed[0] says pc_st[inc1]: INITIALIZING → IN_TRANSACTION, the spec gives " \
        "pc_st[inc1]: INITIALIZING → READY" in out and "(diverges at step 4)" in out, out


def test_a_v1_file_is_still_read_and_checked(runs, tmp_path, txncheck_main):
    from test_trace_fuzz import v1_document
    d = v1_document(dict(_traces(runs))["tp/TCConsistent"])
    assert set(d["values"]) == {f"rmState[r{i}]" for i in (1, 2, 3)}  # /1: every cell the property reads
    p = tmp_path / "v1.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    code, out, _ = txncheck_main("replay", "--show", str(p))
    assert code == 1 and "replay: confirmed" in out, out
    d["steps"][2]["state"]["msgCommit"] = 1
    p.write_text(json.dumps(d), encoding="utf-8")
    code, out, _ = txncheck_main("replay", str(p))
    assert code == 2 and "steps[2].state.msgCommit says 1, the spec gives TRUE" in out, out


# ---- the cells that decide a property ----------------------------------------------------------
N, HI = 4, 2  # cells 0..3, each 0..HI; cell 3 indexes a computed read of cells 0..2


def _int_expr(depth):
    leaf = st.one_of(st.integers(0, N - 1).map(GCell), st.integers(0, HI).map(GConst),
                     st.just(GDyn("v", 0, ((GCell(3), 1, 3),))),
                     st.integers(0, 2).map(lambda k: GTable((0, 1, 1), GCell(k))))
    if depth == 0:
        return leaf
    sub = _int_expr(depth - 1)
    return st.one_of(leaf, st.tuples(sub, sub).map(lambda ab: GOp("+", ab)),
                     st.tuples(_bool_expr(depth - 1), sub, sub).map(lambda x: GOp("ite", x)))


def _bool_expr(depth):
    cmp = st.tuples(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), _int_expr(min(depth, 1)),
                    _int_expr(min(depth, 1))).map(lambda x: GOp(x[0], (x[1], x[2])))
    if depth == 0:
        return st.one_of(cmp, st.integers(0, 1).map(GConst))
    sub = _bool_expr(depth - 1)
    return st.one_of(
        cmp,
        st.lists(sub, min_size=2, max_size=3).map(lambda xs: GOp("and", tuple(xs))),
        st.lists(sub, min_size=2, max_size=3).map(lambda xs: GOp("or", tuple(xs))),
        sub.map(lambda x: GOp("not", (x,))),
        st.tuples(sub, sub).map(lambda ab: GOp("implies", ab)),
        st.tuples(sub, sub, sub).map(lambda x: GOp("ite", x)))


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(e=_bool_expr(3), s=st.tuples(*[st.integers(0, HI)] * N))
def test_the_explained_cells_fix_the_value_whatever_the_others_hold(e, s):
    value = bool(evaluate(e, s))
    cells = explain(e, s)
    assert cells <= cells_read(e)
    free = [k for k in range(N) if k not in cells]
    for vals in itertools.product(range(HI + 1), repeat=len(free)):  # every state that agrees on `cells`
        t = list(s)
        for k, v in zip(free, vals):
            t[k] = v
        assert bool(evaluate(e, tuple(t))) == value, (e, s, cells, t)


def test_explain_descends_into_the_first_false_conjunct_and_every_false_disjunct():
    a, b, c = (GOp("==", (GCell(k), GConst(1))) for k in range(3))
    s = (0, 0, 1, 0)
    assert explain(GOp("and", (c, a, b)), s) == {0}      # c is true; a is the first false conjunct
    assert explain(GOp("or", (a, b)), s) == {0, 1}       # both false
    assert explain(GOp("or", (a, c, b)), s) == {2}       # the first true disjunct
    assert explain(GOp("not", (GOp("and", (a, b)),)), s) == {0}
    assert explain(GOp("implies", (c, a)), s) == {0, 2}  # antecedent true and consequent false
    assert explain(GOp("implies", (a, b)), s) == {0}     # a false antecedent
    dyn = GOp("==", (GDyn("v", 0, ((GCell(3), 1, 3),)), GConst(1)))
    assert explain(dyn, s) == {3, 0}                     # the index and the one cell it denotes
    out_of_range = GOp("==", (GDyn("v", 0, ((GOp("+", (GCell(3), GConst(3))), 1, 3),)), GConst(1)))
    assert explain(out_of_range, s) == {0, 1, 2, 3}  # cannot be evaluated: every cell it may read


def _decided(m, p, s):
    try:
        holds = (p.when is not None and not evaluate(p.when, s)) or bool(evaluate(p.expr, s))
    except EvaluationError:
        return None  # a made-up state the property cannot be evaluated in
    return holds


def test_a_traces_values_decide_its_property_whatever_the_other_cells_hold(runs):
    rnd = random.Random(7)
    for name, path in _traces(runs):
        t = load(path)
        m = model_for(t)
        p = next(q for q in m.properties if q.name == t.property["name"])
        last = m.parse_state(t.steps[-1].state)
        fixed = {m.layout.cell_names.index(c) for c in t.values}
        want = t.kind == "witness"
        assert t.values and _decided(m, p, last) is want
        assert len(t.values) <= 6, (name, t.values)  # not every cell the property reads
        for _ in range(300):
            s = tuple(v if k in fixed else rnd.randint(m.layout.cell_lo[k], m.layout.cell_hi[k])
                      for k, v in enumerate(last))
            assert _decided(m, p, s) in (want, None), (name, s)


def test_atom_2_is_violated_by_one_record_and_its_decision(runs):
    t = load(dict(_traces(runs))["atom/ATOM-2"])
    assert t.values == {"log_kind[p1][o2]": "DATA", "log_inc[p1][o2]": "inc1", "log_k[p1][o2]": 1,
                        "log_out[p1][o2]": "COMMIT", "g_dec[inc1][1]": "ABORT"}


# ---- the text ------------------------------------------------------------------------------------
TCCONSISTENT = """\
twophase (config tiny, variant commit-without-all-prepared): always property TCConsistent is violated after 3 steps
  TCConsistent: No RM has committed while another has aborted.

   1  TM-02  TM  → Commit to every RM
   2  RM-03  RM r1  ← Commit from TM
   3  RM-02  RM r3  RMChooseToAbort

   0  Init: the cells that change later, by the actor whose rows write them
       RM: rmState
         rmState[r1] = working, rmState[r3] = working
         … 1 more cell at its initial value
       TM: tmState, tmPrepared
         tmState = init
         … 3 more cells at their initial value
       messages in flight: msgPrepared, msgCommit, msgAbort
         msgCommit = FALSE
         … 4 more cells at their initial value
   1  TM-02  [TM: TMCommit]
       tmState: init → done, msgCommit: FALSE → TRUE
   2  RM-03(rm=r1)  [RM: RMRcvCommitMsg]
       rmState[r1]: working → committed
   3  RM-02(rm=r3)  [RM: RMChooseToAbort]
       rmState[r3]: working → aborted

violated by: rmState[r1] = committed, rmState[r3] = aborted
"""


def test_the_twophase_counterexample_text(runs, txncheck_main):
    with open(runs["tp"] / "traces" / "TCConsistent.txt", encoding="utf-8") as f:
        assert f.read() == TCCONSISTENT
    code, out, _ = txncheck_main("replay", "--show", str(runs["tp"] / "traces" / "TCConsistent.json"))
    assert code == 1 and out.startswith(TCCONSISTENT), out


def test_the_text_without_a_model_names_each_steps_actor_and_trigger(runs):
    t = load(str(runs["tp"] / "traces" / "TCConsistent.json"))
    text = render_trace_text(t)
    assert "   2  RM-03  RM  RMRcvCommitMsg\n" in text
    assert "   0  Init: the cells that change later; the others keep their initial value\n" \
           "         rmState[r1] = working, rmState[r3] = working, tmState = init, msgCommit = FALSE\n" \
           "         … 8 more cells at their initial value\n" in text


def test_the_story_falls_back_to_the_actor_when_it_cannot_be_built(runs):
    t = load(str(runs["tp"] / "traces" / "TCConsistent.json"))
    m = model_for(t)
    from dataclasses import replace
    no_lanes = replace(m, spec=replace(m.spec, lanes=(), channels=(), tables=tuple(
        replace(tb, at=None, rows=tuple(replace(r, at=None, receives=()) for r in tb.rows)) for tb in m.spec.tables)))
    text = trace_text(t, no_lanes)
    assert "   2  RM-03  RM  RMRcvCommitMsg\n" in text, text
    broken = replace(t, steps=t.steps[:2] + (replace(t.steps[2], row="RM-99"),) + t.steps[3:])
    assert "   2  RM-99  RM  RMRcvCommitMsg\n" in trace_text(broken)  # not a step of the model: no story


def test_vars_are_grouped_by_the_actors_that_write_them():
    from txncheck.spec import catalog
    groups = {g.title: g for g in var_groups(catalog.load("kafka"))}
    # the log's history cells (log_out, log_inc, ...) are ghosts; log_e, log_seq and log_ce are read by the
    # leader change's replay, so they sit with the partition
    assert {"g_*", "w_*", "log_out", "log_inc"} <= set(groups["history (ghost)"].legend)
    assert "log_*" in groups["partition"].legend and "log_e" in groups["partition"].vars
    assert "pc_*" in groups["producer"].legend and "tc_*" in groups["coordinator"].legend
    # the fault-bumped epochs (a coordinator's, a data partition's leader epoch) sit with the fault budgets
    assert all(v.startswith("env_") or v in ("tc_ce", "pl_le") for v in groups[next(g for g in groups if
                                                                                g.startswith("environment"))].vars)
    seen = [v for g in groups.values() for v in g.vars]
    assert sorted(seen) == sorted(v.name for v in catalog.load("kafka").vars)  # each var in one group


def test_the_atom_2_trace_is_small(runs):
    json_bytes = os.path.getsize(runs["atom"] / "traces" / "ATOM-2.json")
    with open(runs["atom"] / "traces" / "ATOM-2.txt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    # measured when /2 came (2026-11-24): 33,545 bytes (/1: 378,811) and 275 lines (before: 595, 392
    # of them the initial state, and a 1,978-character "violated by" line)
    assert json_bytes < 45_000, json_bytes
    assert len(lines) < 200, len(lines)  # 175 since a step's changes share lines
    first = lines.index(next(ln for ln in lines if ln.startswith("   0  Init")))
    step1 = lines.index(next(ln for ln in lines if ln.startswith("   1  PC-01(")))
    assert step1 - first < 75, step1 - first  # the initial state, summarised (was 392 lines)
    assert max(len(ln) for ln in lines if not ln.startswith(("  ", " "))) < 130  # "violated by" and the header
