"""More than one sendOffsetsToTransaction per transaction (config `offset_commits`, kafka-protocol §3.4 O6,
spec/FINDINGS.md F4): a TxnOffsetCommit abandoned on a request timeout lands after the next call and rolls
the pending offset back. Off by default, so the shipped configs are unchanged (tests/test_golden_counts.py)."""
import dataclasses

import pytest
from test_engine_agreement import assert_agree

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.spec.errors import ConfigError
from txncheck.spec.expr import And, Exists
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import OP, BatchSt, Inc, PcState, TxnState as S, tid_of
from txncheck.spec.kafka.state import b_src, gc_pend, n_pres, pc_b, pc_k, pc_oc, pc_st, tl_st
from txncheck.spec.model import Sometimes
from txncheck.traces.replay import replay

# the smallest setting that reaches it: tiny's producer with the consume-transform-produce loop, one transaction,
# one client retry and two calls per transaction; no failover or timeout abort (they only lengthen the search)
TWO_CALLS = {"ctp": 1, "txns": 1, "duplicates": 1, "offset_commits": 2, "delays": 0, "failovers": 0, "timeouts": 0}


def test_one_call_per_transaction_is_every_shipped_config():
    assert all(dict(c.values).get("offset_commits", 1) == 1 for c in SPEC.configs)
    assert SPEC.resolve_config("tiny", {}).env["offset_commits"] == 1


def test_two_calls_need_the_consume_transform_produce_loop():
    with pytest.raises(ConfigError, match="ctp=1"):
        build_model(SPEC, "tiny", {"offset_commits": 2})


def test_only_the_resend_is_answered():
    """Refinement 1: the abandoned copy's rows never write the client's answer (its connection is closed)."""
    for rid in ("PL-15", "PL-16", "PL-17"):
        assert not any(u.target.var is n_pres for u in SPEC.row(rid).updates), rid


def test_the_late_copy_rolls_the_pending_offset_back_inside_the_ongoing_transaction():
    """Refinement 2: the late copy lands before EndTxn (the transaction still Ongoing, no epoch retired): the
    second call was answered, yet pending[g][pid] holds the first call's offset."""
    def rolled_back(i):
        k = pc_k[i]
        return And(pc_st[i] == PcState.IN_TRANSACTION, pc_oc[i] == 2, pc_b[i][OP][1] == BatchSt.ACKED,
                   tl_st[tid_of(i)] == S.Ongoing, gc_pend[tid_of(i)] == b_src[i][k])
    prop = Sometimes("RolledBack", Exists(Inc, rolled_back), "the pending offset went back to the first call's "
                     "while the transaction is Ongoing")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (prop,))
    r = check_spec(spec, "tiny", TWO_CALLS, engine="vector", options=ExploreOptions(properties=("RolledBack",)))
    (p,) = r.properties
    assert p.outcome == "witnessed"
    rows = [s.row for s in r.traces["RolledBack"].steps]
    assert {"PC-24", "PC-23", "PL-15"} <= set(rows)
    assert "PC-14" not in rows  # before commitTransaction


@pytest.mark.parametrize("protocol,broken", [("tv2", {"EOS-1", "FENCE-1"}), ("verify", {"EOS-1"}),
                                             ("kip98", {"EOS-1", "TRACK-1", "LIVE-1"})])
def test_two_calls_break_exactly_once(protocol, broken):
    """F4: EOS-1 breaks under every protocol (ATOM-3 holds: the rolled-back offset is still the transaction's
    own); under tv2 a copy landing after PrepareCommit also breaks FENCE-1, and under kip98 a copy landing after
    the marker opens a span nobody tracks (B1 a)."""
    r = check_spec(SPEC, "tiny", dict(TWO_CALLS, protocol=protocol), engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    assert {p.name for p in r.properties if p.outcome == "violated"} == broken
    trace = r.traces["EOS-1"]
    assert {"PC-24", "PC-23", "PL-15"} <= {s.row for s in trace.steps}
    rep = replay(trace)
    assert rep.confirmed, rep.message
    if protocol == "tv2":
        assert r.outcome_of("EOS-1").depth == 29
        assert "PL-16" in r.fired_rows  # refinement 3: after the marker the epoch check refuses the copy


def test_engines_agree_with_two_calls():
    m = build_model(SPEC, "tiny", TWO_CALLS)
    out = assert_agree(m, ExploreOptions(stop_on_violation=False, check_deadlock=True))
    assert out["distinct"] == 58547

