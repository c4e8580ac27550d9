"""The leader's check order (kafka-protocol §3.5 "Order"): only the epoch check runs before verification, so a
late copy of a batch starts verification and moves the pid's lowest sequence (spec/FINDINGS.md F10)."""
import dataclasses

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.expr import Exists
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import Inc, Part, PResp
from txncheck.spec.kafka.state import n_pres
from txncheck.spec.model import Sometimes

# F10's state: the second transaction's batch is refused with OUT_OF_ORDER_SEQUENCE_NUMBER
REFUSED = Sometimes("NextTxnRefused", Exists(Inc, lambda i: Exists(Part, lambda p: n_pres[i][p][2][1] == PResp.OOS)),
                    "the second transaction's batch to some partition is refused as out of order")


def _search(protocol):
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (REFUSED,))
    r = check_spec(spec, config="tiny", overrides={"protocol": protocol, "duplicates": 1}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("NextTxnRefused",)))
    assert r.complete
    (p,) = r.properties
    return r, p


def test_a_late_copy_lowers_the_lowest_sequence_and_the_next_transaction_fails_under_verify():
    r, p = _search("verify")
    assert (p.outcome, p.depth) == ("witnessed", 31)
    steps = [s.label for s in r.traces["NextTxnRefused"].steps]
    # the next transaction's batch starts verification, then the late copy of the first one, and the append of the
    # next one is refused after verification
    assert steps[-4:] == ["PL-04(i=inc1, p=p1, k=2, b=1)", "PL-04(i=inc1, p=p1, k=1, b=1)",
                          "TC-62(i=inc1, p=p1, k=2, b=1)", "PL-07(i=inc1, p=p1, k=2, b=1)"]
    assert "PC-13(i=inc1, p=p1, b=1)" in steps  # the re-sent request that leaves a copy behind


def test_under_tv2_the_next_transaction_is_not_refused_so():
    """Under TV2 every transaction has its own epoch, so a late copy of an earlier one cannot lower its entry."""
    _, p = _search("tv2")
    assert p.outcome == "unwitnessed"
