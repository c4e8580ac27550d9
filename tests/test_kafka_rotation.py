"""Producer id rotation on epoch exhaustion (config `pids`, docs/kafka-protocol.md §3.14): with pids=2 the
coordinator hands a tid a second producer id once its epoch reaches maxe - 1. Off by default (pids=1), where the
counts are those of tests/golden/state_counts.json."""
import dataclasses
import json
from pathlib import Path

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.applicable import inapplicable_rows
from txncheck.checker.run import build_model, check_spec
from txncheck.cli.main import main
from txncheck.spec.expr import And, Exists, Not
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import CResp, Part, Pend, PendBy, Rq, TxnState as S
from txncheck.spec.kafka.state import (n_creq, n_creq_e, n_creq_rot, n_creq_rq, n_cresp, n_cresp_e, n_cresp_rot, n_mk,
                                       n_mk_e, n_mk_rot, pc_rq, pc_rot, pl_e, pl_open, tc_pend, tc_pend_by, tc_pend_e,
                                       tc_pend_rot, tc_rot, tc_st)
from txncheck.spec.model import Sometimes
from txncheck.traces.replay import model_for, replay

from state_steps import successors_of

GOLDEN = json.loads((Path(__file__).parent / "golden" / "state_counts.json").read_text())
SMALL = {"pids": 2, "maxe": 2}  # tiny: the second transaction's EndTxn finds epoch 1 exhausted and rotates


def _with(*props):
    return dataclasses.replace(SPEC, properties=SPEC.properties + props)


def test_only_the_rotation_config_rotates():
    assert {c.name for c in SPEC.configs if dict(c.values).get("pids", 1) == 2} == {"rotation"}
    assert dict(next(c for c in SPEC.configs if c.name == "rotation").values)["maxe"] == 3


@pytest.mark.parametrize("protocol", ["tv2", "verify"])
def test_small_rotation_config_keeps_every_safety_property(protocol):
    r = check_spec(SPEC, "tiny", {**SMALL, "protocol": protocol}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
    assert r.stats["distinct"] > GOLDEN[f"kafka/tiny/{protocol}"]["distinct"] * 0.9


def test_end_txn_at_the_exhausted_epoch_answers_the_new_pid_while_markers_carry_the_old():
    """RT2: once PrepareCommit at maxe is durable the client is answered (new pid, 0), and the marker in flight
    carries the old pid at maxe; the partition then closes the old pid's span."""
    seen = Sometimes("EndTxnRotates", And(
        pc_rq[0] == Rq.COMMIT, n_cresp[0] == CResp.OK, n_cresp_rot[0], n_cresp_e[0] == 0,
        Not(tc_rot[0]), tc_st[0] == S.PrepareCommit,
        Exists(Part, lambda p: And(n_mk[0][p][0], Not(n_mk_rot[0][p][0]), n_mk_e[0][p][0] == 2,
                                   pl_open[p][0]))), "")
    r = check_spec(_with(seen), "tiny", SMALL, engine="vector", options=ExploreOptions(stop_on_violation=False))
    prop = next(p for p in r.properties if p.name == "EndTxnRotates")
    assert prop.outcome == "witnessed"
    rows = [st.row for st in r.traces["EndTxnRotates"].steps]
    assert rows[-2:] == ["TC-32", "TL-04"]  # EndTxn at the exhausted epoch, then its durable PrepareCommit


def test_the_new_pid_gets_an_entry_of_its_own_and_commits():
    """RT6: the old pid's entry keeps its last epoch while the new pid (index 1) writes from epoch 0."""
    seen = Sometimes("NewPidWrites", And(pc_rot[0], Exists(Part, lambda p: And(
        pl_open[p][1], pl_e[p][1] == 0, pl_e[p][0] >= 1, Not(pl_open[p][0])))), "")
    r = check_spec(_with(seen), "tiny", {"pids": 2, "maxe": 1}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("NewPidWrites", "RotatedPidCommits")))
    assert {p.name: p.outcome for p in r.properties} == {"NewPidWrites": "witnessed", "RotatedPidCommits": "witnessed"}
    assert replay(r.traces["RotatedPidCommits"]).confirmed


@pytest.mark.parametrize("protocol", ["tv2", "verify", "kip98"])
def test_without_rotation_the_pid_mapping_rows_cannot_fire(protocol):
    """With pids=1 (tiny's counts: tests/test_kafka_late_requests.py) no rotation cell moves, so the rows that
    answer a pid the coordinator no longer holds are not applicable."""
    off = set(inapplicable_rows(build_model("kafka", "tiny", {"protocol": protocol})))
    assert {"TC-08", "TC-14", "TC-26", "TC-38", "TC-68"} <= off
    on = set(inapplicable_rows(build_model("kafka", "tiny", {"protocol": protocol, **SMALL})))
    assert {"TC-38", "TC-68"} & on == {"tv2": set(), "verify": {"TC-38"}, "kip98": {"TC-38", "TC-68"}}[protocol]


def test_two_tids_with_rotation_is_refused_with_the_fix(tmp_path, capsys):
    code = main(["check", "kafka", "--config", "tiny", "--set", "pids=2", "--set", "tids=2",
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "set tids=1, or pids=1" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.heavy
def test_rotation_config_passes_tv2_with_every_sometimes_witnessed():
    r = check_spec(SPEC, "rotation", {}, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
    assert (r.stats["distinct"], r.stats["depth"]) == (GOLDEN["kafka/rotation/tv2"]["distinct"],
                                                       GOLDEN["kafka/rotation/tv2"]["depth"])
    assert "RotatedPidCommits" not in r.not_applicable
    assert not [p.name for p in r.properties if p.kind == "sometimes" and p.outcome != "witnessed"]


def test_a_tv2_timeout_fence_at_the_exhausted_epoch_rotates_at_its_complete_abort():
    """RT2 for the fence: the PrepareAbort at maxe carries nextProducerId, and CompleteAbort moves to (pid', 0)."""
    seen = Sometimes("FenceRotates", And(tc_pend[0] == Pend.PrepareAbort, tc_pend_by[0] == PendBy.INTERNAL,
                                         tc_pend_rot[0], tc_pend_e[0] == 2), "")
    r = check_spec(_with(seen), "tiny", SMALL, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("FenceRotates",)))
    assert r.outcome_of("FenceRotates").outcome == "witnessed"
    assert r.traces["FenceRotates"].steps[-1].row in ("TC-40", "TC-41", "TC-07")


def _steps_from(model, rendered):
    """{row id: rendered successor} of the enabled actions in the state `rendered` (one action per row here)."""
    return {a.row_id: after for a, after in successors_of(model, rendered)}


def test_an_end_txn_retry_from_the_old_pid_after_the_rotation_is_answered_with_the_new_pid():
    """RT3, retryOnOverflow: the answer to EndTxn(COMMIT) at the exhausted epoch is lost, the transaction completes
    (CompleteCommit moves the tid to pid 2), and the client's resend still carries (pid 1, maxe - 1). TC-34 answers
    NONE with (pid 2, 0), and the client takes the new pid; the same request at an older epoch of pid 1 is refused
    INVALID_PRODUCER_ID_MAPPING (TC-38)."""
    seen = Sometimes("OverflowRetryInFlight", And(
        n_creq[0], n_creq_rq[0] == Rq.COMMIT, Not(n_creq_rot[0]), n_creq_e[0] == 1,
        tc_rot[0], tc_st[0] == S.CompleteCommit, tc_pend[0] == Pend.NONE, n_cresp[0] == CResp.NONE), "")
    r = check_spec(_with(seen), "tiny", {**SMALL, "losses": 1}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("OverflowRetryInFlight",)))
    assert r.outcome_of("OverflowRetryInFlight").outcome == "witnessed"
    trace = r.traces["OverflowRetryInFlight"]
    rows = [st.row for st in trace.steps]
    # the EndTxn is handled (TC-32), its answer lost, and the client's resend (PC-18 / PC-21) is still in flight when
    # CompleteCommit (TL-06) moves the tid to pid 2: the witness holds in the last state, so the resend reaches the
    # coordinator after the rotation whichever of the two came first in this shortest trace
    resend = max(k for k, row in enumerate(rows) if row in ("PC-18", "PC-21"))
    assert rows.index("TC-32") < resend and rows.index("TC-32") < rows.index("TL-06")
    model = model_for(trace)
    last = trace.steps[-1].state
    answered = _steps_from(model, last)["TC-34"]
    assert (answered["n_cresp"]["inc1"], answered["n_cresp_e"]["inc1"], answered["n_cresp_rot"]["inc1"]) == \
        ("OK", 0, True)
    assert not answered["n_creq"]["inc1"]
    taken = [st for row, st in _steps_from(model, answered).items() if row.startswith("PC-")
             and not st["n_cresp"]["inc1"] == "OK"]
    assert taken and all(st["pc_rot"]["inc1"] and st["pc_e"]["inc1"] == 0 for st in taken)
    older = {**last, "n_creq_e": {**last["n_creq_e"], "inc1": 0}}
    refused = _steps_from(model, older)
    assert "TC-34" not in refused and refused["TC-38"]["n_cresp"]["inc1"] == "FATAL"
