"""What a live producer hears after the coordinator aborts its transaction on a timeout (catalogue B6, KIP-588;
docs/kafka-protocol.md §6 B6): one incarnation only, so no other producer holds the tid. Checked against Kafka's
trunk: under TV0/1 its EndTxn gets PRODUCER_FENCED (fatal), since the fence bumped the epoch; under TV2 its
EndTxn(ABORT) is taken for a retry of an EndTxn that bumped the epoch (retryOnEpochBump) and answered NONE with the
new epoch, while its EndTxn(COMMIT) gets INVALID_TXN_STATE (fatal)."""
import dataclasses

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.expr import And
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import CResp, Rq, TxnState as S
from txncheck.spec.kafka.state import env_to, n_cresp, n_cresp_e, pc_e, pc_rq, tc_e, tc_st
from txncheck.spec.model import Sometimes

ONE_PRODUCER = {"incs": 1, "failovers": 0, "delays": 0}


def _witness(protocol, rq, answer, *more):
    seen = Sometimes("Heard", And(env_to == 1, pc_rq[0] == rq, n_cresp[0] == answer, pc_e[0] < tc_e[0], *more), "")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (seen,))
    r = check_spec(spec, "tiny", {**ONE_PRODUCER, "protocol": protocol}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("Heard",)))
    assert r.outcome_of("Heard").outcome == "witnessed"
    rows = [st.row for st in r.traces["Heard"].steps]
    assert "TC-40" in rows
    return rows[-1]


def test_tv2_an_abort_after_the_timeout_abort_is_answered_with_the_bumped_epoch():
    assert _witness("tv2", Rq.ABORT, CResp.OK, n_cresp_e[0] == tc_e[0], tc_st[0] == S.CompleteAbort) == "TC-34"


def test_tv2_a_commit_after_the_timeout_abort_is_invalid_txn_state():
    assert _witness("tv2", Rq.COMMIT, CResp.FATAL) in ("TC-35", "TC-37")


@pytest.mark.parametrize("rq", [Rq.COMMIT, Rq.ABORT])
def test_tv01_any_end_txn_after_the_timeout_abort_is_producer_fenced(rq):
    assert _witness("verify", rq, CResp.FENCED) == "TC-20"
