"""The flagship `kafka` spec: structure, generated docs, and the protocol-version verdicts of §4 on tiny."""
import dataclasses
import json
import os

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.errors import ConfigError
from txncheck.spec.expr import Exists, Member, Op, Quant, Read, Var
from txncheck.spec.ground import ground
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.doc import render_tables_markdown
from txncheck.spec.kafka.domains import Inc
from txncheck.spec.kafka.state import pc_bump
from txncheck.spec.model import Sometimes
from txncheck.traces.replay import replay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden", "state_counts.json")
SAFETY = ("ATOM-1", "ATOM-2", "DECIDE-1", "DUR-1", "DUR-2", "DUR-3", "ORD-1", "ORD-2", "ORD-3", "ORD-4", "DUP-1",
          "FENCE-1", "FENCE-2", "FENCE-3", "CEPOCH-1", "TRACK-1", "BOUNDS", "STRUCT-1", "STRUCT-2")
LIVENESS = ("LIVE-1", "LIVE-2", "LIVE-3")
EXPECTED = {  # kafka-protocol §4: defects expected per protocol version, with no variant applied (Java client)
    "tv2": set(),
    "verify": set(),  # the Java client bumps the epoch after the failed batch: verification fences it (F1)
    "kip98": {"TRACK-1", "LIVE-1", "ATOM-2", "FENCE-1"},  # B1 (a) hanging transaction and (b), epoch retired
}
EXPECTED_REFERENCE_CLIENT = {"verify": {"ATOM-2"},  # B1 (b): late produce joins the next transaction at (pid, e)
                             "kip98": {"TRACK-1", "LIVE-1", "ATOM-2"}}


def _reads(e, out):
    if isinstance(e, Var):
        out.add(e)
    elif isinstance(e, Read):
        out.add(e.var)
        for i in e.index:
            _reads(i, out)
    elif isinstance(e, Op):
        for a in e.args:
            _reads(a, out)
    elif isinstance(e, Quant):
        _reads(e.body, out)
    elif isinstance(e, Member):
        _reads(e.subset, out)
        _reads(e.elem, out)
    return out


@pytest.mark.long  # 19 s. make test-long (2026-11-28)
def test_spec_imports_and_grounds_every_config_and_protocol():
    assert SPEC.name == "kafka"
    for cfg in SPEC.configs:
        for proto in ("kip98", "verify", "tv2"):
            m = ground(SPEC, SPEC.resolve_config(cfg.name, {"protocol": proto}))
            assert m.actions


PREFIXES = {"producer": ("PC-",), "consumer": ("CS-",), "coordinator": ("TC-", "TL-"), "partition": ("PL-",),
            "network": ("NET-",), "faults": ("FLT-",)}


def test_row_ids_are_prefixed_per_actor_and_cite_a_source():
    for t in SPEC.tables:
        for r in t.rows:
            assert r.id.startswith(PREFIXES[t.actor]), r.id
            assert r.ref, f"{r.id} has no reference"


VARIANT_PREFIXES = {"partition": ("AD-",)}  # rows only variants add (B11's admin WriteTxnMarkers), after the spec's


@pytest.mark.parametrize("variant", [None] + [v.name for v in SPEC.variants])
def test_rows_are_in_id_order(variant):
    """A table lists its rows in id order (its prefixes in turn, then by number), the order ground
    action ids follow; a variant's edits keep it (a row it adds or replaces stands at its id's place)."""
    for t in SPEC.with_variant(variant).tables:
        ids = [r.id for r in t.rows]
        prefixes = PREFIXES[t.actor] + VARIANT_PREFIXES.get(t.actor, ())
        key = lambda rid: (next(n for n, x in enumerate(prefixes) if rid.startswith(x)), int(rid.rsplit("-", 1)[1]))
        assert ids == sorted(ids, key=key), f"{variant or 'the spec'}, {t.actor}: rows out of id order: {ids}"


def test_ghost_vars_never_guard_a_protocol_row():
    for r in SPEC.rows:
        for c in r.guard:
            ghosts = {v.name for v in _reads(c, set()) if v.ghost}
            assert not ghosts, f"{r.id} reads ghost vars {ghosts} in its guard"
    for v in SPEC.variants:
        for r in SPEC.with_variant(v.name).rows:
            for c in r.guard:
                assert not {x.name for x in _reads(c, set()) if x.ghost}, (v.name, r.id)


def test_coordinator_table_declares_kafka_transition_table():
    t = next(t for t in SPEC.tables if t.actor == "coordinator")
    assert t.status == "tc_st" and len(t.conformance) == 2
    tv2 = t.conformance[1]
    assert {("Empty", "PrepareAbort"), ("CompleteCommit", "PrepareAbort"),
            ("CompleteAbort", "PrepareAbort")} <= set(tv2.allowed)
    assert not {("Empty", "PrepareAbort")} & set(t.conformance[0].allowed)


def test_readme_is_current():
    with open(os.path.join(ROOT, "spec", "README.md"), encoding="utf-8") as f:
        assert f.read() == render_tables_markdown(SPEC), \
            "spec/README.md is stale: regenerate it with render_tables_markdown(SPEC)"


def test_readme_lists_every_row():
    text = render_tables_markdown(SPEC)
    for r in SPEC.rows:
        assert f"| {r.id} |" in text


@pytest.fixture(scope="module")
def tiny_results():
    # the vector engine: the scalar one agrees with it on tiny and on every variant, the kip98 and verify ones
    # among them (test_engine_agreement.py), and took 29 s here against 8 (make test, 2026-12-02)
    return {p: check_spec(SPEC, config="tiny", overrides={"protocol": p}, engine="vector",
                          options=ExploreOptions(stop_on_violation=False))
            for p in ("tv2", "verify", "kip98")}


def test_tiny_tv2_passes_with_every_sometimes_witnessed(tiny_results):
    r = tiny_results["tv2"]
    assert r.complete and r.verdict == "pass", r.violated
    assert all(p.outcome == "witnessed" for p in r.properties if p.kind == "sometimes")


@pytest.mark.parametrize("protocol", ["kip98", "verify", "tv2"])
def test_tiny_protocol_verdicts_match_the_reference(tiny_results, protocol):
    r = tiny_results[protocol]
    assert r.complete
    broken = {p.name for p in r.properties if p.outcome == "violated"}
    assert broken == EXPECTED[protocol]


@pytest.mark.parametrize("protocol", ["kip98", "verify", "tv2"])
def test_structural_properties_hold_on_tiny(tiny_results, protocol):
    # STRUCT-1: no IllegalStateException row (TL-07, TC-90, TC-93..TC-95, TC-97) ever fires, so the coordinator's
    # TransactionState moves only along Kafka's valid-previous-state table; STRUCT-2: the pc_k >= 1 index guards
    # of PC-06, PC-13 and PC-17 never disable them; BOUNDS: no model-bound row (PC-22, PL-13, PL-14, PL-23,
    # TC-91, TC-92, TC-96) fires
    r = tiny_results[protocol]
    outcome = {p.name: p.outcome for p in r.properties}
    assert all(outcome[n] == "holds" for n in ("STRUCT-1", "STRUCT-2", "BOUNDS")), outcome
    fired = {c["row"]: c["fired"] for c in r.coverage}
    assert not [x for x in ("TL-07", "TC-90", "TC-91", "TC-92", "TC-93", "TC-94", "TC-95", "TC-96", "TC-97",
                            "PC-22", "PL-13", "PL-14", "PL-23") if fired.get(x)]


def test_structural_properties_are_ghost_flags_set_only_by_assertion_rows():
    from txncheck.spec.kafka.state import g_bound, g_illegal
    assert g_illegal.ghost and g_bound.ghost
    writers = {v.name: sorted(r.id for r in SPEC.rows if any(u.target.var is v for u in r.updates))
               for v in (g_illegal, g_bound)}
    # TC-1xx: the same assertions for a late copy of the request (config late_requests)
    assert writers == {"g_illegal": sorted(["TC-90", "TC-93", "TC-94", "TC-95", "TC-97", "TL-07",
                                            "TC-190", "TC-193", "TC-194", "TC-195"]),
                       "g_bound": sorted(["PC-22", "PL-13", "PL-14", "PL-17", "PL-23", "PL-27", "TC-91", "TC-92", "TC-96",
                                          "TC-191", "TC-192", "TC-196"])}
    for rid in writers["g_illegal"] + writers["g_bound"]:
        assert len(SPEC.row(rid).updates) == 1, rid  # the assertion changes no protocol state


def test_counterexamples_replay(tiny_results):
    r = tiny_results["kip98"]
    for name in EXPECTED["kip98"]:
        rep = replay(r.traces[name])
        assert rep.confirmed, rep.message


@pytest.mark.parametrize("protocol", ["kip98", "verify"])
def test_the_reference_client_shows_the_reference_defects(protocol):
    """client=reference (kafka-protocol §2.2 client profiles): the abort after a failed batch keeps the
    epoch, so B1 (b) breaks ATOM-2 under verify too, and under kip98 the late batch's epoch is not retired."""
    r = check_spec(SPEC, config="tiny", overrides={"protocol": protocol, "client": "reference"}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    assert {p.name for p in r.properties if p.outcome == "violated"} == EXPECTED_REFERENCE_CLIENT[protocol]
    for name in EXPECTED_REFERENCE_CLIENT[protocol]:
        rep = replay(r.traces[name])
        assert rep.confirmed, rep.message


@pytest.mark.parametrize("client,protocol,depth", [("java", "kip98", 11), ("java", "verify", 11), ("java", "tv2", None),
                                                    ("reference", "verify", 27), ("reference", "tv2", None)])
def test_who_sets_epoch_bump_required(client, protocol, depth):
    """kafka-protocol §2.2 client profiles: java sets epochBumpRequired (pc_bump) after any failed batch under
    TV0/1 (the first delivery timeout, 11 steps) and never under tv2, where EndTxn bumps; reference only after
    OUT_OF_ORDER_SEQUENCE_NUMBER (a leader's PL-03 / PL-07 answer)."""
    bump = Sometimes("Bump", Exists(Inc, lambda i: pc_bump[i]), "some incarnation has epochBumpRequired set")
    spec = dataclasses.replace(SPEC, properties=SPEC.properties + (bump,))
    r = check_spec(spec, config="tiny", overrides={"protocol": protocol, "client": client}, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, properties=("Bump",)))
    (p,) = r.properties
    assert r.complete and p.depth == depth, (p.outcome, p.depth)
    if depth and client == "reference":
        assert {"PL-03", "PL-07"} & {s.row for s in r.traces["Bump"].steps}


def test_the_retired_client_bump_names_its_replacement():
    with pytest.raises(ConfigError, match="client=java"):
        SPEC.resolve_config("tiny", {"client_bump": 1})
    assert "client_bump" not in {p.name for p in SPEC.params}
    assert all(dict(c.values)["client"] == "java" for c in SPEC.configs)


@pytest.mark.parametrize("protocol", ["kip98", "verify", "tv2"])
def test_tiny_state_counts_are_golden(tiny_results, protocol):
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    r = tiny_results[protocol]
    assert golden[f"kafka/tiny/{protocol}"] == {"distinct": r.stats["distinct"], "depth": r.stats["depth"]}


def test_eos_config_passes_with_the_consumer_side_witnessed():
    r = check_spec(SPEC, config="eos", engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete and r.verdict == "pass", r.violated
    names = {p.name for p in r.properties}
    assert {"ATOM-3", "EOS-1", "OffsetsCommitted", "GenerationFenced"} <= names
    assert all(p.outcome == "witnessed" for p in r.properties if p.kind == "sometimes")
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    assert golden["kafka/eos/tv2"] == {"distinct": r.stats["distinct"], "depth": r.stats["depth"]}


def test_consumer_side_properties_do_not_apply_without_the_loop():
    m = ground(SPEC, SPEC.resolve_config("tiny"))
    assert {"ATOM-3", "EOS-1", "OffsetsCommitted"} <= set(m.not_applicable)
    assert "ConsecutiveCommits" in {p.name for p in m.properties}


@pytest.mark.heavy  # 8.7 million states: about 30 s of search, 1.5 minutes in all
def test_faults_config_spends_every_fault_and_shows_only_f4():
    """`faults`: one loss, one client retry, one produce past its delivery timeout, one timeout abort and one
    failover. Under tv2 with the Java client the only violation is FENCE-1 through a retried TxnOffsetCommit
    (spec/FINDINGS.md F4); every applicable sometimes is witnessed, the duplicate's absorption included."""
    r = check_spec(SPEC, config="faults", engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    assert {p.name: p.depth for p in r.properties if p.outcome == "violated"} == {"FENCE-1": 24}
    assert all(p.outcome == "witnessed" for p in r.properties if p.kind == "sometimes")
    fired = {c["row"] for c in r.coverage if c["fired"]}
    assert {"NET-01", "NET-02", "PC-12", "PC-13", "PC-21", "TC-40", "FLT-03"} <= fired
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    assert golden["kafka/faults/tv2"] == {"distinct": r.stats["distinct"], "depth": r.stats["depth"]}


@pytest.mark.heavy  # 8.5 million states: about 70 s and 3 GiB
def test_copies_config_passes_under_tv2_with_both_copies_spent():
    """`copies`: tiny with one late coordinator request (NET-20) and one stale WriteTxnMarkers copy (NET-10).
    tv2 passes with every applicable sometimes witnessed, and both copies are handled (TC-1xx, PL-24..PL-27)."""
    r = check_spec(SPEC, config="copies", engine="vector", options=ExploreOptions(stop_on_violation=False))
    assert r.complete
    assert [p.name for p in r.properties if p.outcome == "violated"] == []
    assert all(p.outcome == "witnessed" for p in r.properties if p.kind == "sometimes")
    fired = set(r.fired_rows)
    assert {"NET-10", "NET-20", "PL-24", "PL-25", "PL-26", "TC-103", "TC-132", "TC-134"} <= fired
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    assert golden["kafka/copies/tv2"] == {"distinct": r.stats["distinct"], "depth": r.stats["depth"]}
