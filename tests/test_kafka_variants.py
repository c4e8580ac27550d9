"""Every §6 variant of the kafka spec is caught: a shortest counterexample violating one of the
properties it claims to break, which replays; and the baseline under the same settings does not
violate that property (so the variant, not the configuration, is what the checker found)."""
import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec.kafka import SPEC
from txncheck.traces.replay import replay

# Variants that are protocol versions or fault budgets of the baseline itself: their settings
# reproduce a defect of the real protocol, so the baseline under them is expected to fail too.
BASELINE_BEHAVIOURS = {"B1-late-produce", "B1b-late-produce-verify", "B5-unknown-producer"}


# a quarter of a minute or more each (with the baseline under the same settings): make test-long
LONG = ("D6-ack-before-hw", "D3-offsets-outside-txn", "D4-no-sequence-check", "R1-verify-ignores-pid",
        "R2-markers-to-next-pid", "B2-cepoch-check-on-replay")


@pytest.mark.parametrize("name", [pytest.param(v.name, marks=[pytest.mark.long] if v.name in LONG else [])
                                  for v in SPEC.variants])
def test_variant_is_caught_with_a_replayable_counterexample(name):
    v = SPEC.variant_named(name)
    r = check_spec(SPEC, variant=name, engine="vector", options=ExploreOptions(stop_on_violation=True))
    hits = [p for p in r.properties if p.outcome == "violated" and p.name in v.breaks]
    assert hits, f"{name}: none of {v.breaks} violated (violated: {r.violated})"
    for p in hits:
        assert p.expected_to_break
        rep = replay(r.traces[p.name])
        assert rep.confirmed, rep.message
    if name not in BASELINE_BEHAVIOURS:
        names = tuple(p.name for p in hits)
        base = check_spec(SPEC, config=v.config, overrides=dict(v.settings), engine="vector",
                          options=ExploreOptions(stop_on_violation=False, properties=names))
        assert base.complete
        assert not [p.name for p in base.properties if p.outcome == "violated"], \
            f"baseline under {v.settings} already violates {names}"


def test_every_variant_is_documented():
    for v in SPEC.variants:
        assert v.doc and v.ref and v.trigger and v.breaks, v.name
        for b in v.breaks:
            SPEC.property(b)
