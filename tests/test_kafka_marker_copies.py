"""Stale WriteTxnMarkers copies (config `marker_dups`, kafka-protocol §3.8 "marker re-send", spec/FINDINGS.md
F7): a marker request that timed out at the coordinator is re-sent while its first copy may still be executed
by the partition leader, later, with its own fields. Off by default, so the shipped configs are unchanged."""
import dataclasses
import json
from pathlib import Path

import pytest
from test_engine_agreement import assert_agree

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.spec.expr import And, Config, Exists, Not
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.domains import Part, Tid, tid_used, writes_to
from txncheck.spec.kafka.params import c, p, t
from txncheck.spec.kafka.partition import me, stale, stale_c, stale_e
from txncheck.spec.kafka.state import log_k, n_mk, n_mkd, n_mkd_c, n_mkd_e, n_pres, pl_ce, pl_e, pl_end, \
    pl_first, pl_open
from txncheck.spec.model import ReplaceGuard, Sometimes, Variant
from txncheck.traces.replay import replay

NEW_ROWS = ("NET-10", "PL-24", "PL-25", "PL-26", "PL-27")
ONE_COPY = {"marker_dups": 1}
# tiny without the produce delay and the timeout abort: B1 is out of the way and the state space small
SMALL = {"marker_dups": 1, "delays": 0, "timeouts": 0}


def test_only_the_heavy_copies_config_has_stale_marker_copies():
    assert {c.name: dict(c.values).get("marker_dups", 0) for c in SPEC.configs if dict(c.values).get("marker_dups", 0)} \
        == {"copies": 1}
    assert next(c for c in SPEC.configs if c.name == "copies").heavy
    assert SPEC.resolve_config("tiny", {}).env["marker_dups"] == 0


def test_default_counts_unchanged_and_the_new_rows_never_fire():
    r = check_spec(SPEC, "tiny", {}, engine="vector")
    golden = json.loads((Path(__file__).parent / "golden" / "state_counts.json").read_text())["kafka/tiny/tv2"]
    assert (r.stats["distinct"], r.stats["depth"], r.verdict) == (golden["distinct"], golden["depth"], "pass")
    # marker_dups = 0 switches them off: not applicable, so not listed as never fired either
    assert set(NEW_ROWS) <= set(r.inapplicable_rows) and set(NEW_ROWS).isdisjoint(r.fired_rows + r.unfired_rows)


def test_the_stale_copy_is_never_answered():
    """Its request's connection is closed: no row that takes the stale copy tells the coordinator."""
    from txncheck.spec.kafka.state import tc_mk
    for rid in ("PL-24", "PL-25", "PL-26", "PL-27"):
        assert not any(u.target.var is tc_mk or u.target.var is n_pres for u in SPEC.row(rid).updates), rid


def test_the_new_rows_fire():
    r = check_spec(SPEC, "tiny", SMALL, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass"
    assert {"NET-10", "PL-24", "PL-25", "PL-26"} <= set(r.fired_rows)
    assert "PL-27" in r.unfired_rows  # the slots bound is never reached (BOUNDS holds)


def _next_span_at_the_copys_epoch():
    """A stale copy that passes W2 is in flight while p holds an open span of a later transaction at the copy's
    producer epoch: the copy came from an earlier transaction (its marker is in p's log before the span)."""
    def danger(t, p):
        return And(n_mkd[t][p], n_mkd_c[t][p] >= pl_ce[p][t], pl_open[p][t], n_mkd_e[t][p] == pl_e[p][t],
                   log_k[p][pl_first[p][t]] >= 2)
    return Sometimes("NextSpanAtCopysEpoch", Exists(Tid, lambda t: Exists(Part, lambda p: danger(t, p))),
                     "a stale marker copy meets the next transaction's open span at its own producer epoch")


def test_tv2_rejects_the_late_copy_that_meets_the_next_transaction():
    """Under tv2 the marker of transaction k carries the bumped epoch e+1 and transaction k+1 runs at e+1: the
    late copy meets its open span at an equal epoch, and the strict check (W3, KIP-1228) refuses it (PL-25)."""
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (_next_span_at_the_copys_epoch(),))
    r = check_spec(spec, "tiny", SMALL, engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.outcome_of("NextSpanAtCopysEpoch").outcome == "witnessed"
    assert r.verdict == "pass" and "PL-25" in r.fired_rows


@pytest.mark.parametrize("protocol,broken", [
    ("tv2", {}),
    ("verify", {"ATOM-2": 31, "FENCE-1": 33}),
    ("kip98", {"ATOM-2": 27, "FENCE-1": 29, "TRACK-1": 17, "LIVE-1": 17}),
])
def test_one_stale_copy_on_tiny(protocol, broken):
    """F7: under kip98 and verify the next transaction keeps the epoch, and the late COMMIT copy closes its open
    span (ATOM-2; FENCE-1 where that span holds a batch of an epoch a fence retired); TRACK-1 and LIVE-1 are
    kip98's B1 (a), at the same depth as without the copy. tv2 passes every property."""
    r = check_spec(SPEC, "tiny", dict(ONE_COPY, protocol=protocol), engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    violated = {q.name: q.depth for q in r.properties if q.outcome == "violated"}
    assert violated == broken
    if protocol == "tv2":
        assert not [q.name for q in r.properties if q.kind == "sometimes" and q.outcome != "witnessed"]
        return
    trace = r.traces["ATOM-2"]
    rows = [s.row for s in trace.steps]
    assert rows[-1] == "PL-26" and "NET-10" in rows and rows.index("NET-10") < rows.index("PL-22")
    rep = replay(trace)
    assert rep.confirmed, rep.message


def _lenient_tv2():
    """Kafka 4.0 and 4.1 under TV2 (before KIP-1228): a marker is refused only for a lower producer epoch."""
    slots = Config("slots")
    live_ok, stale_ok = Not(me < pl_e[p][t]), Not(stale_e < pl_e[p][t])
    base = (tid_used(t), writes_to(p))
    return Variant("tv2-before-kip-1228", "TV2 markers checked as TV0/1's: refused only below the stored epoch",
                   breaks=("ATOM-2",), settings=(("protocol", "tv2"),), edits=(
        ReplaceGuard("PL-21", (*base, n_mk[t][p][c], c >= pl_ce[p][t], me < pl_e[p][t])),
        ReplaceGuard("PL-22", (*base, c >= pl_ce[p][t], n_mk[t][p][c], live_ok, pl_end[p] < slots)),
        ReplaceGuard("PL-23", (*base, c >= pl_ce[p][t], n_mk[t][p][c], live_ok, pl_end[p] >= slots)),
        ReplaceGuard("PL-25", (*base, stale, stale_c >= pl_ce[p][t], stale_e < pl_e[p][t])),
        ReplaceGuard("PL-26", (*base, stale, stale_c >= pl_ce[p][t], stale_ok, pl_end[p] < slots)),
        ReplaceGuard("PL-27", (*base, stale, stale_c >= pl_ce[p][t], stale_ok, pl_end[p] >= slots))))


def test_tv2_without_the_strict_marker_check_is_broken_the_same_way():
    """The strict check is what keeps tv2 safe: with the check Kafka 4.0 and 4.1 apply to TV2 markers the late copy
    of transaction k's marker (epoch e+1) closes transaction k+1's span at e+1 (F7)."""
    v = _lenient_tv2()
    spec = dataclasses.replace(SPEC, variants=SPEC.variants + (v,))
    r = check_spec(spec, "tiny", SMALL, v.name, "vector", ExploreOptions(properties=("ATOM-2",)))
    (q,) = r.properties
    assert q.outcome == "violated"
    rows = [s.row for s in r.traces["ATOM-2"].steps]
    assert rows[-1] == "PL-26" and "NET-10" in rows


def test_without_a_copy_the_lenient_check_is_harmless():
    v = _lenient_tv2()
    spec = dataclasses.replace(SPEC, variants=SPEC.variants + (v,))
    r = check_spec(spec, "tiny", dict(SMALL, marker_dups=0), v.name, "vector", ExploreOptions(properties=("ATOM-2",)))
    assert r.verdict == "pass"


def test_engines_agree_with_a_stale_copy():
    m = build_model(SPEC, "tiny", dict(SMALL, failovers=0, protocol="verify"))
    out = assert_agree(m, ExploreOptions(stop_on_violation=False, check_deadlock=True))
    assert out["distinct"] == 4286

