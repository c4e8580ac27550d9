"""Variant B14 (kafka-protocol §6 B14, spec/FINDINGS.md F11): a replica that missed an ABORT marker the leader's
cleaner removed becomes leader (FLT-06). Its log has an offset without a record, its producer state is the replay of
that log, and the records the marker had closed wait for the pid's next marker."""
import dataclasses

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.expr import And, If, Implies, Not, Or
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import MAXP, MAXS, Kind, Outcome, in_use
from txncheck.spec.kafka.state import log_kind, log_out, log_pid
from txncheck.spec.model import Always
from txncheck.traces.replay import replay

from test_kafka_leader_failover import _state_is_the_replay

B14 = "B14-compaction-drops-markers"


def _outcome_is_the_next_marker(p, s):
    """A data slot's outcome is that of its pid's first marker after it (NONE while there is none): what a
    read_committed reader of this log gets, offset gaps included."""
    out = Outcome.NONE
    for s2 in reversed(range(s + 1, MAXS)):
        marker = And(log_pid[p][s2] == log_pid[p][s], log_kind[p][s2].is_in(Kind.COMMIT, Kind.ABORT))
        out = If(marker, If(log_kind[p][s2] == Kind.COMMIT, Outcome.COMMIT, Outcome.ABORT), out)
    return Implies(And(in_use(p), log_kind[p][s] == Kind.DATA), log_out[p][s] == out)


OUTCOMES = Always("OutcomeIsNextMarker",
                  And(*[_outcome_is_the_next_marker(p, s) for p in range(MAXP) for s in range(MAXS)]),
                  "every record's outcome is its pid's next marker's")
HOLE = Always("NoHole", And(*[Not(And(in_use(p), log_kind[p][s] == Kind.EMPTY,
                                       Or(*[log_kind[p][s2] != Kind.EMPTY for s2 in range(s + 1, MAXS)])))
                              for p in range(MAXP) for s in range(MAXS)]),
              "no offset without a record below the log end")


def test_after_the_election_the_state_is_the_replay_of_the_log_with_the_gap():
    """On every reachable state of the variant, FLT-06 included: the leader's producer state and LSO are the
    replay of its log, and every record's outcome is its pid's next marker's. A state with a gap is reached,
    so the check covers the rows after FLT-06 too."""
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_state_is_the_replay(), OUTCOMES, HOLE))
    r = check_spec(spec, variant=B14, engine="vector",
                   options=ExploreOptions(stop_on_violation=False,
                                          properties=("StateIsReplay", "OutcomeIsNextMarker", "NoHole")))
    assert r.complete
    outcome = {p.name: p.outcome for p in r.properties}
    assert outcome == {"StateIsReplay": "holds", "OutcomeIsNextMarker": "holds", "NoHole": "violated"}
    assert "FLT-06" in r.fired_rows


def test_the_baseline_has_no_gap_and_the_same_outcomes():
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (OUTCOMES, HOLE))
    r = check_spec(spec, "tiny", {"leader_failovers": 1}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("OutcomeIsNextMarker", "NoHole")))
    assert r.complete and r.verdict == "pass"
    assert "FLT-06" not in r.fired_rows


def test_on_eos_an_input_record_is_processed_twice():
    """The crashed incarnation's aborted output and the restarted one's committed output of the same input record
    are both committed once the leader has moved to the replica without the ABORT marker (F11, 39 steps)."""
    r = check_spec(SPEC, "eos", {}, B14, "vector", ExploreOptions(stop_on_violation=True, properties=("EOS-1",)))
    (prop,) = r.properties
    assert prop.outcome == "violated"
    trace = r.traces["EOS-1"]
    rows = [s.row for s in trace.steps[1:]]
    assert len(rows) == 39 and "FLT-06" in rows and "FLT-01" in rows
    assert replay(trace).confirmed
