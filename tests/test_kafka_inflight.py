"""Several batches in flight to one partition (config `batches`, kafka-protocol §2.3): retries in sequence order,
OUT_OF_ORDER_SEQUENCE_NUMBER retried when the batch is not the next one, a failed batch re-sequencing the one behind
it, the leader's exact duplicate match and the verification entry's lowest sequence."""
import json
import os

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.kafka import SPEC
from txncheck.traces.replay import replay

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "golden", "state_counts.json")))
# one incarnation, one transaction, no coordinator faults: small enough for every engine
SMALL = {"batches": 2, "maxseq": 4, "incs": 1, "txns": 1, "timeouts": 0, "failovers": 0, "delays": 1}


@pytest.mark.parametrize("protocol", ["kip98", "verify", "tv2"])
def test_the_scalar_and_vector_engines_agree_with_two_batches_in_flight(protocol):
    overrides = {**SMALL, "protocol": protocol}
    opts = ExploreOptions(stop_on_violation=False)
    vec = check_spec(SPEC, "tiny", overrides, engine="vector", options=opts)
    sca = check_spec(SPEC, "tiny", overrides, engine="scalar", options=opts)
    assert vec.complete and sca.complete
    assert (vec.stats["distinct"], vec.stats["depth"]) == (sca.stats["distinct"], sca.stats["depth"])
    assert {p.name: p.outcome for p in vec.properties} == {p.name: p.outcome for p in sca.properties}
    # kip98 keeps B1's late batch (spec/FINDINGS.md F1) and nothing else; verify and tv2 pass
    assert set(vec.violated) <= ({"TRACK-1", "LIVE-1", "ATOM-2", "FENCE-1"} if protocol == "kip98" else set())
    # a later batch overtook an earlier one and was refused (at once under kip98, after verification under verify
    # and tv2: kafka-protocol §3.5 Order) and retried; a failed batch gave its sequence back
    assert {"PC-06", "PC-25", "PC-12"} <= set(vec.fired_rows)
    assert ("PL-03" if protocol == "kip98" else "PL-07") in vec.fired_rows


def test_one_batch_per_partition_keeps_the_model_as_it_was():
    """With batches=1 the new cells stay constant: tiny's golden count and depth are those from before the change."""
    r = check_spec(SPEC, "tiny", {}, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert (r.stats["distinct"], r.stats["depth"]) == (GOLDEN["kafka/tiny/tv2"]["distinct"],
                                                       GOLDEN["kafka/tiny/tv2"]["depth"])
    assert "PC-25" not in r.fired_rows


def test_the_reordered_append_variant_breaks_send_order_with_a_replayable_trace():
    r = check_spec(SPEC, variant="D7-reordered-in-flight", engine="vector",
                   options=ExploreOptions(stop_on_violation=True, properties=("ORD-5",)))
    (p,) = [p for p in r.properties if p.name == "ORD-5"]
    assert p.outcome == "violated"
    rows = [s.row for s in r.traces["ORD-5"].steps[1:]]
    # both batches drained before either reached the leader, the second appended first
    assert rows.count("PC-06") == 2 and rows.count("PL-05") == 2
    assert replay(r.traces["ORD-5"]).confirmed


@pytest.mark.heavy
def test_the_inflight_config_passes_tv2_with_every_sometimes_witnessed():
    r = check_spec(SPEC, "inflight", {}, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
    assert (r.stats["distinct"], r.stats["depth"]) == (GOLDEN["kafka/inflight/tv2"]["distinct"],
                                                       GOLDEN["kafka/inflight/tv2"]["depth"])
    assert not [p.name for p in r.properties if p.kind == "sometimes" and p.outcome != "witnessed"]
    assert {"PC-25", "PL-03"} <= set(r.fired_rows)


@pytest.mark.heavy
def test_the_inflight_config_passes_verify():
    r = check_spec(SPEC, "inflight", {"protocol": "verify"}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
