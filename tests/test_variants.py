"""Every shipped variant is caught: a violation of a property it declares, with a shortest
counterexample that replays against the variant and not against the baseline spec."""
import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec import catalog
from txncheck.traces.replay import replay


def _variants():
    out = []
    for name in catalog.names():
        spec = catalog.load(name)
        out.extend((name, v.name) for v in spec.variants)
    return out


@pytest.mark.parametrize("spec_name,variant", _variants())
def test_variant_is_caught_and_replays(spec_name, variant):
    spec = catalog.load(spec_name)
    v = spec.variant_named(variant)
    r = check_spec(spec, variant=variant, engine="scalar", options=ExploreOptions(stop_on_violation=False))
    assert r.verdict == "violation"
    broken = [p for p in r.properties if p.name in v.breaks and p.outcome == "violated"]
    assert broken, f"{variant} should break one of {v.breaks}; outcomes: {[(p.name, p.outcome) for p in r.properties]}"
    for p in broken:
        tr = r.traces[p.name]
        assert tr.length == p.depth
        rep = replay(tr)
        assert rep.confirmed, rep.message
        assert not replay(tr, variant=None).confirmed, "the baseline spec must not reproduce the variant's trace"
