"""Kafka's strengthening invariants (spec/kafka/inductive/): true on every reachable state, and
with them 1-induction proves properties it cannot prove alone."""
import dataclasses

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.checker.symbolic.bmc import bmc
from txncheck.checker.symbolic.induction import k_induction
from txncheck.reports.symbolic_text import summary
from txncheck.spec.kafka import SPEC
from txncheck.spec.kafka.inductive import INVARIANTS

# 1-inductive together with the invariants on config tiny: every always property but BOUNDS; without
# them only DUR-2, ORD-1, ORD-3, ORD-5, CEPOCH-1 and STRUCT-2 are
PROVED = ("ATOM-1", "ATOM-2", "DECIDE-1", "DUR-1", "DUR-2", "DUR-3", "ORD-1", "ORD-2", "ORD-3", "ORD-4", "ORD-5", "DUP-1",
          "FENCE-1", "FENCE-2", "FENCE-3", "EPOCH-1", "CEPOCH-1", "TRACK-1", "STRUCT-1", "STRUCT-2")
NEED_INVARIANTS = ("ATOM-1", "ATOM-2", "DECIDE-1", "DUR-1", "DUR-3", "ORD-2", "ORD-4", "DUP-1", "FENCE-1",
                   "FENCE-2", "FENCE-3", "EPOCH-1", "TRACK-1", "STRUCT-1")
CASES = [("tiny", {}, None), ("tiny", {"protocol": "verify"}, None), ("tiny", {"protocol": "kip98"}, None),
         ("tiny", {"protocol": "kip98", "delays": 0}, None), ("tiny", {"protocol": "verify", "delays": 0}, None),
         ("tiny", {"tl_failures": 2}, None), ("eos", {}, None), ("ci", {}, None),
         ("tiny", {"leader_failovers": 1}, None), ("tiny", {"leader_failovers": 1, "protocol": "verify"}, None),
         ("tiny", {"leader_failovers": 1, "replication_lag": 1}, None), ("rotation", {}, None),
         ("tiny", {"ctp": 1, "incs": 1, "leader_failovers": 1}, None), ("inflight", {}, None),
         ("tiny", {"batches": 2, "maxseq": 4, "protocol": "verify", "client": "reference"}, None)] + \
    [(None, {}, v.name) for v in SPEC.variants]
# A variant changes the protocol, so it may break an invariant; these are the ones each breaks (the
# rest hold there too). bmc's induction pass drops them for that variant.
BROKEN_BY = {"B1d-produce-before-add": {"IND-109", "IND-191", "IND-192", "IND-194", "IND-203", "IND-207", "IND-208"},
             "B3-produce-after-marker": {"IND-116", "IND-191", "IND-192", "IND-193", "IND-195", "IND-207", "IND-208"},
             "B4-no-bump-on-timeout": {"IND-16", "IND-49", "IND-50", "IND-82", "IND-109",  # the fence keeps the epoch
                                       "IND-190", "IND-191", "IND-192", "IND-194", "IND-196", "IND-203", "IND-207",
                                       "IND-208"},
             "B9-bump-on-failed-fence": {"IND-16", "IND-65", "IND-66"},  # a second fence bumps twice
             "B10-no-marker-cepoch-check": {"IND-87"},
             "B15-empty-txn": {"IND-109", "IND-191", "IND-192", "IND-194", "IND-196", "IND-203", "IND-207", "IND-208"},
             "D1-no-epoch-bump-on-init": {"IND-76", "IND-93", "IND-104", "IND-170", "IND-171", "IND-173", "IND-174",
                                          "IND-177", "IND-178", "IND-180", "IND-187", "IND-195"},
             "D2-markers-before-prepare": {"IND-35", "IND-63", "IND-67", "IND-83", "IND-84", "IND-85"},
             "D3-offsets-outside-txn": {"IND-114",  # commitSync: offsets move outside any transaction
                                        "IND-151", "IND-155", "IND-156", "IND-157", "IND-158", "IND-161"},
             "B7-tid-per-worker": {"IND-152",  # two tids consume the same input offset
                                   "IND-156", "IND-157", "IND-158", "IND-159", "IND-160", "IND-164"},
             "D4-no-sequence-check": {"IND-64"},
             # the second batch appended ahead of the first, which is appended after it with a lower sequence
             "D7-reordered-in-flight": {"IND-61", "IND-87", "IND-191", "IND-194", "IND-207", "IND-208"},
             # the rebuilt state lacks the pid whose span is open, which the log and the other actors still have
             "B13-restart-drops-open-span": {"IND-22", "IND-61", "IND-63", "IND-64", "IND-71", "IND-73", "IND-85",
                                             "IND-210"},
             # the new leader's span is open again, which the coordinator (CompleteAbort) and the client have closed
             "B14-compaction-drops-markers": {"IND-32", "IND-63", "IND-64", "IND-65", "IND-81", "IND-85", "IND-87",
                                              "IND-94", "IND-107", "IND-108"},
             # an answer given at append: a leader change truncates the acknowledged batch, which the client and
             # the coordinator still count as written
             "D6-ack-before-hw": {"IND-71", "IND-73", "IND-121", "IND-151"},
             # the committed offset is the consumed record's own, one behind what the invariants relate it to
             "M1-offset-not-plus-one": {"IND-153", "IND-154", "IND-156", "IND-157", "IND-158", "IND-159", "IND-160",
                                        "IND-164"},
             # after an abort the position runs ahead of the committed offset
             "M2-no-rewind-after-abort": {"IND-155", "IND-156", "IND-157", "IND-158", "IND-159", "IND-160"}}
# Config rotation lets the restarted incarnation run a transaction without zombies: an InitProducerId the crashed
# incarnation sent before it crashed can still reach the coordinator after the restarted one's EndTxn was answered,
# and bump the epoch under that answer. IND-114 claims it cannot (its zombie twin IND-187 holds). Not about pids.
BROKEN_IN_CONFIG = {"rotation": {"IND-114"}}
# a variant of the rotation settings (pids=2, docs/kafka-protocol.md §3.14): the invariants compare (pid, epoch)
# pairs (spec/kafka/inductive/pids.py) and hold on config rotation; what each variant breaks
BROKEN_BY["R2-markers-to-next-pid"] = {  # the old pid's span stays open for good
    "IND-21", "IND-32", "IND-63", "IND-64", "IND-65", "IND-66", "IND-67", "IND-81", "IND-83", "IND-84", "IND-85",
    "IND-87", "IND-90", "IND-94", "IND-232"} | BROKEN_IN_CONFIG["rotation"]
BROKEN_BY["R1-verify-ignores-pid"] = {  # a late old-pid batch joins the new pid's transaction
    "IND-21", "IND-32", "IND-49", "IND-50", "IND-64", "IND-65", "IND-66", "IND-68", "IND-81", "IND-82", "IND-85",
    "IND-90", "IND-91", "IND-94", "IND-95", "IND-97", "IND-103", "IND-106", "IND-107", "IND-108", "IND-109", "IND-110",
    "IND-111", "IND-112", "IND-151", "IND-174", "IND-175", "IND-176", "IND-180", "IND-187", "IND-221"} | \
    BROKEN_IN_CONFIG["rotation"]


# half a minute or more each (the largest reachable sets), and the variants (case[2]) about two minutes together
# on a fast machine (B2 12 s, D4 10 s, B14 9 s): make test-heavy
HEAVY_CASES = (("ci", {}, None), ("tiny", {"leader_failovers": 1, "replication_lag": 1}, None), (None, {}, "D6-ack-before-hw"),
              ("rotation", {}, None), (None, {}, "R1-verify-ignores-pid"), (None, {}, "R2-markers-to-next-pid"),
              ("tiny", {"ctp": 1, "incs": 1, "leader_failovers": 1}, None),  # a group coordinator change
              ("inflight", {}, None), ("tiny", {"batches": 2, "maxseq": 4, "protocol": "verify", "client": "reference"}, None))


@pytest.mark.parametrize("config,overrides,variant", [
    pytest.param(*case, marks=[pytest.mark.heavy] if case in HEAVY_CASES or case[2] else [],
                 id=f"{case[0] or ''}{''.join(f'-{k}={v}' for k, v in case[1].items())}{case[2] or ''}")
    for case in CASES])
def test_invariants_hold_on_every_reachable_state(config, overrides, variant):
    names = tuple(p.name for p in INVARIANTS)
    r = check_spec(SPEC, config, overrides, variant, "vector", ExploreOptions(stop_on_violation=False, properties=names),
                   invariants=True)
    assert r.complete
    broken = {p.name for p in r.properties if p.name in names and p.outcome != "holds"}
    assert broken == BROKEN_BY.get(variant, BROKEN_IN_CONFIG.get(config, set()))


@pytest.mark.long  # 21 s on tiny (2026-11-27); with a leader change longer: make test-heavy
@pytest.mark.parametrize("overrides", [{}, pytest.param({"leader_failovers": 1}, marks=pytest.mark.heavy)])
def test_one_induction_proves_properties_with_the_invariants(overrides):
    """tiny, and tiny with a leader change (IND-210 states that producer state is the replay of the log)."""
    m = build_model(SPEC, "tiny", overrides)
    res = k_induction(m, 1, list(PROVED), traces=False)
    assert [(p.name, p.status, p.depth) for p in res.properties] == [(n, "proved", 1) for n in PROVED], summary(res)


# 1-inductive on config rotation (pids=2) with the invariants restated for a second pid and IND-231..233; ATOM-2,
# DUR-1, DUR-3, FENCE-1 and TRACK-1 are not yet (benchmarks/RESULTS.md, producer id rotation)
ROTATION_PROVED = ("ATOM-1", "DECIDE-1", "DUR-2", "ORD-1", "ORD-2", "ORD-3", "ORD-4", "ORD-5", "DUP-1", "FENCE-2",
                   "FENCE-3", "EPOCH-1", "CEPOCH-1", "STRUCT-1", "STRUCT-2")


@pytest.mark.heavy  # about 90 s on a fast machine (2026-11-28), 234 s on CI's
def test_one_induction_proves_properties_after_a_rotation():
    res = k_induction(build_model(SPEC, "rotation"), 1, list(ROTATION_PROVED), traces=False)
    assert [(p.name, p.status) for p in res.properties] == [(n, "proved") for n in ROTATION_PROVED], summary(res)


# One transaction per incarnation reaches the same states with 4 log slots and epochs below 4 as with 8 (BOUNDS
# holds: 108,219 states on ci, 16,491 with a zombie and no failover), and its proof is a few times cheaper than
# ci's or eos's (2-4 minutes each, make test-heavy), so CI proves ATOM-3 and EOS-1 on these two.
ONE_TXN = {"txns": 1, "slots": 4, "maxe": 4}
ONE_TXN_ZOMBIE = {**ONE_TXN, "zombies": 1, "failovers": 0}
EOS_PROVED = PROVED + ("ATOM-3", "EOS-1")


def _without(module):
    """The spec with every strengthening invariant but `module`'s (a spec/kafka/inductive/ module)."""
    names = {p.name for p in module.INVARIANTS}
    return dataclasses.replace(SPEC, invariants_for_induction=tuple(p for p in INVARIANTS if p.name not in names))


@pytest.mark.long  # the one-txn ones 60-75 s on a slow machine; ci and eos 2-4 minutes each: make test-heavy
@pytest.mark.parametrize("config,overrides", [
    pytest.param("ci", {}, id="ci", marks=pytest.mark.heavy), pytest.param("eos", {}, id="eos", marks=pytest.mark.heavy),
    pytest.param("ci", ONE_TXN, id="ci-one-txn"),
    pytest.param("ci", ONE_TXN_ZOMBIE, id="ci-one-txn-zombie")])
def test_one_induction_proves_exactly_once_with_consume_transform_produce(config, overrides):
    """Consume-transform-produce (ci; eos adds a zombie): the same properties and ATOM-3, EOS-1 too,
    with the ctp and zombie invariants; without those, neither ATOM-3 nor EOS-1 is inductive."""
    res = k_induction(build_model(SPEC, config, overrides), 1, list(EOS_PROVED), traces=False)
    assert {p.name: p.status for p in res.properties} == {n: "proved" for n in EOS_PROVED}, summary(res)
    from txncheck.spec.kafka.inductive import ctp
    res = k_induction(build_model(_without(ctp), config, overrides), 1, list(EOS_PROVED), traces=False)
    assert {p.name for p in res.properties if p.status != "proved"} >= {"ATOM-3", "EOS-1"}, summary(res)


@pytest.mark.long  # about 60 s
def test_with_a_zombie_exactly_once_needs_the_zombie_invariants():
    """ci with one transaction and a zombie: without zombies.py's invariants (epoch ownership between
    incarnations) EOS-1, DUR-1 and FENCE-3 are not inductive, so the proof above leans on them."""
    from txncheck.spec.kafka.inductive import zombies
    res = k_induction(build_model(_without(zombies), "ci", ONE_TXN_ZOMBIE), 1, list(EOS_PROVED), traces=False)
    assert {p.name for p in res.properties if p.status != "proved"} == {"DUR-1", "EOS-1", "FENCE-3"}, summary(res)


# kip98 with delays 0 reaches the same 13,515 states with 6 log slots and epochs below 4 as with tiny's 8 (BOUNDS
# holds) and proves in about half the time, so CI runs that one
@pytest.mark.long  # the smaller one about 60 s on a slow core; tiny's about 2 minutes: make test-heavy
@pytest.mark.parametrize("overrides", [pytest.param({}, id="tiny", marks=pytest.mark.heavy),
                                       pytest.param({"slots": 6, "maxe": 4}, id="tiny-slots6")])
def test_one_induction_proves_the_same_under_kip98_without_late_produce(overrides):
    """Protocol kip98 with delays 0 (KIP98_NO_B1, where most B-variants start): the same 19, with the
    kip98 invariants (inductive/kip98.py); without them DECIDE-1, ATOM-2, DUR-1, DUR-3, FENCE-1 and
    TRACK-1 are not inductive."""
    overrides = {"protocol": "kip98", "delays": 0, **overrides}
    res = k_induction(build_model(SPEC, "tiny", overrides), 1, list(PROVED), traces=False)
    assert {p.name: p.status for p in res.properties} == {n: "proved" for n in PROVED}, summary(res)
    from txncheck.spec.kafka.inductive import kip98
    res = k_induction(build_model(_without(kip98), "tiny", overrides), 1, list(PROVED), traces=False)
    assert {p.name for p in res.properties if p.status != "proved"} == \
        {"DECIDE-1", "ATOM-2", "DUR-1", "DUR-3", "FENCE-1", "TRACK-1"}, summary(res)


# 10-13 s each on a fast machine (2026-11-28); make test-long keeps three of them, make test-heavy the rest
@pytest.mark.parametrize("prop", [pytest.param(p, marks=pytest.mark.long) if p in ("ATOM-2", "FENCE-1", "STRUCT-1")
                                  else pytest.param(p, marks=pytest.mark.heavy) for p in NEED_INVARIANTS])
def test_without_the_invariants_the_same_properties_are_not_inductive(prop):
    """Not even with every other always property as a candidate (Houdini)."""
    m = build_model(dataclasses.replace(SPEC, invariants_for_induction=()), "tiny")
    res = k_induction(m, 1, [prop], traces=False)
    assert res.properties[0].status == "cti", summary(res)


@pytest.mark.heavy  # about 20 s of solver on a fast machine
def test_bmc_reports_the_proved_properties_and_unrolls_the_rest():
    m = build_model(SPEC, "tiny")
    res = bmc(m, 3, traces=False)
    status = {p.name: p.status for p in res.properties}
    assert {n for n, s in status.items() if s == "proved"} == set(PROVED)
    assert {n for n, s in status.items() if s != "proved"} == {n for n in status if n not in PROVED}
    assert all(s in ("proved", "holds-to-depth") for s in status.values())
    assert res.queries[0][0].startswith("1-induction pass")


@pytest.mark.heavy  # about 1 minute on a quiet core
def test_a_false_strengthening_invariant_is_dropped_not_trusted():
    """bmc's induction pass keeps only what it proves: an invariant the variant breaks is dropped. This
    one ("no transaction-log append ever fails") excludes B9's counterexample; trusted, it would hide it."""
    from txncheck.spec.kafka.state import env_tlf
    from txncheck.spec.model import Always
    never = Always("IND-FALSE", env_tlf == 0, "false on purpose")
    spec = dataclasses.replace(SPEC, invariants_for_induction=INVARIANTS + (never,))
    m = build_model(spec, None, {"tl_failures": 2}, "B9-bump-on-failed-fence")
    res = bmc(m, 12, ["EPOCH-1"])
    assert [(p.name, p.status, p.depth) for p in res.properties] == [("EPOCH-1", "violated", 12)]
