"""Replication lag at data partitions (config `replication_lag`, kafka-protocol §3.13): appends land above the
HW, Produce and WriteTxnMarkers are answered once the HW covers them (PL-40..PL-42), and a leader change
truncates to the new leader's end and answers the waiting requests NOT_LEADER_OR_FOLLOWER (FLT-05, PL-43,
PL-44). Off by default, so the shipped configs are unchanged."""
import dataclasses
import json
from pathlib import Path

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.expr import And, Implies
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import MAXP, MAXT, in_use, tid_used
from txncheck.spec.kafka.leader import replay, stable_offset
from txncheck.spec.kafka.state import (env_lf, g_ack, hw, n_pw, pl_ce, pl_e, pl_end, pl_first, pl_le, pl_lso,
                                       pl_open, pl_seq)
from txncheck.spec.model import Always, Sometimes
from txncheck.traces.replay import replay as replay_trace

LAG = {"replication_lag": 1}
LAG_LF = {"replication_lag": 1, "leader_failovers": 1}
SMALL = dict(LAG_LF, delays=0, timeouts=0)  # tiny without the produce delay and the timeout abort


def test_no_shipped_config_lags():
    assert all(dict(cfg.values).get("replication_lag", 0) == 0 for cfg in SPEC.configs)
    assert SPEC.resolve_config("tiny", {}).env["replication_lag"] == 0


def test_default_counts_unchanged_and_the_rows_are_not_applicable():
    r = check_spec(SPEC, "tiny", {}, engine="vector")
    golden = json.loads((Path(__file__).parent / "golden" / "state_counts.json").read_text())["kafka/tiny/tv2"]
    assert (r.stats["distinct"], r.stats["depth"], r.verdict) == (golden["distinct"], golden["depth"], "pass")
    assert {"PL-40", "PL-41", "PL-42", "PL-43", "PL-44"} <= set(r.inapplicable_rows)


def test_lag_without_leader_change_passes_and_waits_for_the_hw():
    r = check_spec(SPEC, "tiny", LAG, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass"
    assert {"PL-40", "PL-41", "PL-42"} <= set(r.fired_rows)
    assert r.outcome_of("DUR-4").outcome == "holds"


def _truncated_first_batch():
    """The leader change cut the first batch (log end 0) while its Produce waited for the HW at the old leader."""
    return Sometimes("FirstBatchTruncated", And(env_lf == 1, pl_end[0] == 0, n_pw[0][0][1][1] != 0, pl_le[0] == 1),
                     "a leader change truncated an unacknowledged batch waiting for the HW")


def _acked_after_truncation():
    return Sometimes("AckedAfterTruncation", And(env_lf == 1, g_ack[0][0][1][1], pl_end[0] >= 1),
                     "the batch is acknowledged after the leader change")


def test_truncation_happens_the_client_resends_and_acked_records_survive():
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_truncated_first_batch(), _acked_after_truncation()))
    r = check_spec(spec, "tiny", SMALL, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass"
    assert r.outcome_of("DUR-4").outcome == "holds"  # no acknowledged batch is ever truncated
    assert r.outcome_of("FirstBatchTruncated").outcome == "witnessed"
    rows = [s.row for s in r.traces["FirstBatchTruncated"].steps]
    assert rows[-1] == "FLT-05" and {"PL-05", "PL-06"} & set(rows) and "PL-40" not in rows
    assert r.outcome_of("AckedAfterTruncation").outcome == "witnessed"


def _state_is_the_replay():
    """Without expiry the producer state is the replay of the whole log and the LSO the HW-capped one."""
    cells = []
    for p in range(MAXP):
        for t in range(MAXT):
            e, seq, ce, is_open, first = replay(p, t)
            cells.append(Implies(And(in_use(p), tid_used(t)), And(
                pl_e[p][t] == e, pl_seq[p][t] == seq, pl_ce[p][t] == ce, pl_open[p][t] == is_open,
                pl_first[p][t] == first)))
        cells.append(Implies(in_use(p), And(pl_lso[p] == stable_offset(p, hw(p)), hw(p) <= pl_end[p])))
    return Always("StateIsReplay", And(*cells), "the leader's producer state is the replay of its (kept) log")


@pytest.mark.parametrize("protocol", ["tv2", "verify"])
def test_the_replay_invariant_holds_with_truncation(protocol):
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_state_is_the_replay(),))
    r = check_spec(spec, "tiny", dict(SMALL, protocol=protocol), engine="vector",
                   options=ExploreOptions(properties=("StateIsReplay",)))
    assert r.complete and r.outcome_of("StateIsReplay").outcome == "holds", protocol


def test_d6_ack_before_hw_is_caught():
    """D6: a batch answered NONE while above the HW breaks DUR-4 as soon as it is answered."""
    r = check_spec(SPEC, variant="D6-ack-before-hw", engine="vector", options=ExploreOptions(stop_on_violation=True))
    assert "DUR-4" in r.violated
    rows = [s.row for s in r.traces["DUR-4"].steps]
    assert rows[-1] in ("PL-05", "PL-06")
    rep = replay_trace(r.traces["DUR-4"])
    assert rep.confirmed, rep.message
