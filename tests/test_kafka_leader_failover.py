"""Leader changes of a data partition or of __consumer_offsets (config `leader_failovers`, kafka-protocol §3.13,
row FLT-05): the new leader's producer state is a replay of the log, its verification guards are gone. Off by
default, so the shipped configs are unchanged."""
import dataclasses
import json
from pathlib import Path

import pytest
from test_engine_agreement import assert_agree

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.spec.expr import And, If, Implies, Min
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import MAXP, MAXT, Ver, in_use, tid_used
from txncheck.spec.kafka.leader import replay
from txncheck.spec.kafka.state import (env_exp, env_lf, gc_pend, pl_ce, pl_e, pl_end, pl_first, pl_lso, pl_open, pl_seq,
                                       pl_vb, tc_ce)
from txncheck.spec.model import Always, Sometimes
from txncheck.traces.replay import model_for, replay as replay_trace

from state_steps import successors_of

ONE = {"leader_failovers": 1}


def test_no_shipped_config_changes_a_leader():
    assert all(dict(cfg.values).get("leader_failovers", 0) == 0 for cfg in SPEC.configs)
    assert SPEC.resolve_config("tiny", {}).env["leader_failovers"] == 0


def test_default_counts_unchanged_and_the_row_is_not_applicable():
    r = check_spec(SPEC, "tiny", {}, engine="vector")
    golden = json.loads((Path(__file__).parent / "golden" / "state_counts.json").read_text())["kafka/tiny/tv2"]
    assert (r.stats["distinct"], r.stats["depth"], r.verdict) == (golden["distinct"], golden["depth"], "pass")
    assert "FLT-05" in r.inapplicable_rows and "FLT-05" not in r.fired_rows


def _replayed(p, t):
    """The leader's producer state of pid t at p equals the replay of its log."""
    e, seq, ce, is_open, first = replay(p, t)
    return And(pl_e[p][t] == e, pl_seq[p][t] == seq, pl_ce[p][t] == ce, pl_open[p][t] == is_open,
               pl_first[p][t] == first)


def _lso_replayed(p):
    states = [replay(p, t) for t in range(MAXT)]
    return pl_lso[p] == Min(*[If(st[3], st[4], pl_end[p]) for st in states])


def _state_is_the_replay():
    cells = [Implies(And(in_use(p), tid_used(t)), _replayed(p, t)) for p in range(MAXP) for t in range(MAXT)]
    lso = [Implies(in_use(p), _lso_replayed(p)) for p in range(MAXP)]
    return Always("StateIsReplay", And(*cells, *lso), "without expiry the leader's producer state is the log's replay")


def test_without_expiry_the_leaders_state_is_the_replay_of_its_log():
    """Every append keeps ProducerStateManager equal to what a replay of the log gives, so a leader change
    without expiry changes no producer state: the replay is faithful to the incremental updates."""
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_state_is_the_replay(),))
    for protocol in ("tv2", "verify"):
        r = check_spec(spec, "tiny", dict(ONE, protocol=protocol), engine="vector",
                       options=ExploreOptions(properties=("StateIsReplay",)))
        assert r.complete and r.outcome_of("StateIsReplay").outcome == "holds", protocol


def test_an_expired_entry_comes_back_with_the_new_leader():
    """Expiry runs on each replica on its own: the old leader removed the entry (PL-30), the replay has it."""
    restored = Sometimes("ExpiredEntryBack", And(env_exp == 1, env_lf == 1, pl_e[0][0] != -1),
                         "after an expiry and a leader change the pid has an entry again")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_state_is_the_replay(), restored))
    r = check_spec(spec, "tiny", dict(ONE, expiries=1, delays=0, timeouts=0), engine="vector",
                   options=ExploreOptions(properties=("StateIsReplay", "ExpiredEntryBack"), stop_on_violation=False))
    assert r.outcome_of("StateIsReplay").outcome == "violated"  # PL-30 only: the expired entry is not the replay
    assert r.outcome_of("StateIsReplay").depth > 0
    assert r.outcome_of("ExpiredEntryBack").outcome == "witnessed"
    rows = [s.row for s in r.traces["ExpiredEntryBack"].steps]
    assert "PL-30" in rows and "FLT-05" in rows


def test_a_held_batch_is_answered_retriable():
    """A batch held for verification when the leader changes gets NOT_LEADER_OR_FOLLOWER (PL-09) and is resent."""
    # no coordinator failover (tc_ce 0): a failover also answers a pending implicit add RETRY (FLT-03), an
    # equally short witness that is not this story
    lost_guard = Sometimes("GuardLost", And(env_lf == 1, pl_vb[0][0][1][1] == Ver.RETRY, tc_ce[0] == 0),
                           "a verified batch lost its guard to a leader change")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (lost_guard,))
    r = check_spec(spec, "tiny", dict(ONE, delays=0, timeouts=0), engine="vector",
                   options=ExploreOptions(properties=("GuardLost",)))
    assert r.outcome_of("GuardLost").outcome == "witnessed"
    rows = [s.row for s in r.traces["GuardLost"].steps]
    assert rows[-1] == "FLT-05"


@pytest.mark.parametrize("protocol", ["tv2", "verify"])
def test_one_leader_change_on_tiny(protocol):
    """tv2 and verify pass every property with a leader change, every applicable sometimes witnessed."""
    r = check_spec(SPEC, "tiny", dict(ONE, protocol=protocol), engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass"
    assert "FLT-05" not in r.unfired_rows
    assert not [q.name for q in r.properties if q.kind == "sometimes" and q.outcome not in ("witnessed",)
                and q.outcome != "not applicable"]


def test_engines_agree_with_a_leader_change():
    m = build_model(SPEC, "tiny", dict(ONE, failovers=0, delays=0, protocol="verify", expiries=1))
    out = assert_agree(m, ExploreOptions(stop_on_violation=False, check_deadlock=True))
    assert out["distinct"] > 0


def test_b13_rebuild_without_open_spans_is_caught():
    """B13: the rebuilt state lacks the pid whose span is open, so the LSO passes the span (ATOM-1), in 11 steps:
    the first transaction's batch is appended under tv2 (implicit add) and the leader changes."""
    r = check_spec(SPEC, variant="B13-restart-drops-open-span", engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert {q.name: q.depth for q in r.properties if q.outcome == "violated"} == {"ATOM-1": 11}
    rows = [s.row for s in r.traces["ATOM-1"].steps]
    assert rows[-2:] == ["PL-06", "FLT-05"]
    rep = replay_trace(r.traces["ATOM-1"])
    assert rep.confirmed, rep.message


CTP_ONE = {"ctp": 1, "incs": 1, "leader_failovers": 1}


def test_the_group_coordinator_moves_with_consumer_offsets_and_keeps_pending_offsets():
    """A leader change of __consumer_offsets (op = p2 here) moves the group coordinator: the new one replays the
    partition (OffsetMetadataManager.replay, replayEndTransactionMarker), which gives the pending and committed
    offsets the old one held, and producer state replayed as on a data partition."""
    seen = Sometimes("OffsetsPending", And(env_lf == 0, gc_pend[0] != -1, pl_open[1][0]), "")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (seen,))
    r = check_spec(spec, "tiny", CTP_ONE, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("OffsetsPending",)))
    trace = r.traces["OffsetsPending"]
    model = model_for(trace)
    before = trace.steps[-1].state
    moved = [after for a, after in successors_of(model, before) if a.row_id == "FLT-05" and dict(a.params)["p"] == 1]
    assert len(moved) == 1
    after = moved[0]
    assert after["env_lf"] == 1
    kept = ("gc_pend", "gc_off", "pl_e", "pl_seq", "pl_ce", "pl_open", "pl_first", "pl_lso", "log_kind", "pc_st")
    assert {v: after[v] for v in kept} == {v: before[v] for v in kept}


@pytest.mark.heavy  # 18 s (tv2) and 27 s (verify) on a fast machine, 2026-11-28
@pytest.mark.parametrize("protocol", ["tv2", "verify"])
def test_a_group_coordinator_move_keeps_every_property(protocol):
    """tiny's consume-transform-produce loop with one leader change, of the output partition or of
    __consumer_offsets: every property holds and the producer state of both is the replay of its log."""
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (
        Always("StateIsReplay", And(_replayed(0, 0), _replayed(1, 0)), "p1's and op's producer state is the replay"),))
    r = check_spec(spec, "tiny", dict(CTP_ONE, protocol=protocol), engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
    assert "FLT-05" in r.fired_rows
