"""Coordinator requests as data, and late copies of abandoned requests (config `late_requests`, kafka-protocol
§1.7, spec/FINDINGS.md F8): a request the client times out is re-sent while the coordinator broker still holds
the first copy, which it handles later with the same handlers (TC-1xx for TC-xx), answered to nobody. Off by
default, so the shipped configs are unchanged (tests/test_golden_counts.py)."""
import json
from pathlib import Path

import pytest
from test_engine_agreement import assert_agree
from test_kafka_spec import _reads

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.state import pc_e, pc_rq, pc_rqp
from txncheck.traces.replay import replay

GOLDEN = json.loads((Path(__file__).parent / "golden" / "state_counts.json").read_text())
HANDLERS = [r for r in SPEC.rows if r.id.startswith("TC-") and int(r.id[3:]) <= 38 or r.id in
            {f"TC-{n}" for n in range(90, 97)}]
# the smallest setting where the late rows matter: tiny without failover, timeout or delay
SMALL = {"late_requests": 1, "failovers": 0, "timeouts": 0, "delays": 0}


def test_only_the_heavy_copies_config_has_late_requests():
    assert {c.name: dict(c.values).get("late_requests", 0) for c in SPEC.configs if dict(c.values).get("late_requests", 0)} \
        == {"copies": 1}
    assert next(c for c in SPEC.configs if c.name == "copies").heavy
    m = build_model(SPEC, "tiny")
    assert not [a.label for a in m.actions if a.row.id == "NET-20" or a.row.id.startswith("TC-1")]


def test_handlers_read_the_message_not_the_client():
    """Every client-request handler reads kind, epoch and partition from the message it handles."""
    client_fields = {v.name for v in (pc_e, pc_rq, pc_rqp)}
    assert len(HANDLERS) == 36
    for r in HANDLERS:
        for late in (False, True):
            row = SPEC.row(f"TC-{int(r.id[3:]) + 100}") if late else r
            found = set()
            for g in row.guard:
                _reads(g, found)
            for u in row.updates:
                _reads(u.value, found)
            read = {v.name for v in found}
            assert not read & client_fields, (row.id, read & client_fields)
            assert ("n_late" in read) == late and ("n_creq" in read) != late, row.id


def test_a_late_copy_is_answered_to_nobody():
    for r in SPEC.rows:
        if r.id.startswith("TC-1") and len(r.id) == 6:
            assert not {u.target.var.name for u in r.updates} & {"n_cresp", "n_cresp_e"}, r.id
            assert r.trigger.endswith("(late copy)")


@pytest.mark.parametrize("protocol", ["tv2", "verify", "kip98"])
def test_counts_unchanged_by_default(protocol):
    r = check_spec(SPEC, "tiny", {"protocol": protocol}, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert {"distinct": r.stats["distinct"], "depth": r.stats["depth"]} == GOLDEN[f"kafka/tiny/{protocol}"]


@pytest.mark.parametrize("protocol,fired", [
    ("tv2", {"NET-20", "TC-101", "TC-103", "TC-130"}),
    ("verify", {"NET-20", "TC-101", "TC-103", "TC-110", "TC-113", "TC-120", "TC-122", "TC-123"}),
])
def test_late_rows_fire(protocol, fired):
    r = check_spec(SPEC, "tiny", dict(SMALL, protocol=protocol), engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", [p.name for p in r.properties if p.outcome == "violated"]
    assert fired <= set(r.fired_rows)


@pytest.mark.parametrize("protocol", ["tv2", "verify"])
def test_engines_agree_with_late_requests(protocol):
    m = build_model(SPEC, "tiny", dict(SMALL, protocol=protocol))
    assert_agree(m, ExploreOptions(stop_on_violation=False, check_deadlock=True))


def test_f8_late_end_txn_commits_the_next_transaction_under_verify():
    """F8: under TV1 (protocol verify) a late EndTxn(COMMIT) copy of transaction 1, at the same epoch, commits
    transaction 2's output before its offsets: EOS-1 and ATOM-3 at depth 46 on ci; the rest of transaction 2
    is then aborted by its timeout (DECIDE-1 at 47, ATOM-2 at 53, DUR-3 at 55)."""
    r = check_spec(SPEC, "ci", {"protocol": "verify", "late_requests": 1, "failovers": 0}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    assert {p.name for p in r.properties if p.outcome == "violated"} == {"ATOM-2", "ATOM-3", "EOS-1", "DECIDE-1",
                                                                          "DUR-3"}
    assert (r.outcome_of("EOS-1").depth, r.outcome_of("DECIDE-1").depth) == (46, 47)
    trace = r.traces["EOS-1"]
    rows = [s.row for s in trace.steps]
    assert {"NET-20", "TC-122"} <= set(rows) and rows.index("TC-122") > rows.index("PC-17")
    rep = replay(trace)
    assert rep.confirmed, rep.message


def test_tv2_fences_the_late_copy():
    """Under TV2 the same setting passes: EndTxn bumps the epoch, so the late copy is PRODUCER_FENCED (TC-130)."""
    r = check_spec(SPEC, "ci", {"protocol": "tv2", "late_requests": 1, "failovers": 0}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete and not [p.name for p in r.properties if p.outcome == "violated"]
    assert "TC-130" in r.fired_rows
