"""Symmetry reduction counts orbits exactly and keeps verdicts."""
import itertools

from txncheck.checker import symmetry
from txncheck.checker.fingerprint import Fingerprinter
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.checker.scalar.explore import explore
from txncheck.spec import catalog
from txncheck.spec.evaluate import evaluate, successor


def _all_states(model):
    seen = {model.init}
    stack = [model.init]
    while stack:
        s = stack.pop()
        for a in model.actions:
            if evaluate(a.guard, s):
                t = successor(model, a, s)
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
    return seen


def test_orbit_count_equals_brute_force_quotient():
    spec = catalog.load("twophase")
    model = build_model(spec, "tiny", {"rm": 4})
    states = _all_states(model)
    perms = symmetry.permutations(model, True)
    assert len(perms) == len(list(itertools.permutations(range(4)))) - 1
    fpr = Fingerprinter(model.layout)
    orbits = {symmetry.canonical(perms, fpr, s, fpr.of(s), model.layout.cell_lo)[1] for s in states}
    out = explore(model, ExploreOptions(symmetry=True))
    assert out.distinct == len(orbits)
    assert explore(model, ExploreOptions()).distinct == len(states) == 1568


def test_symmetry_keeps_verdicts_and_counterexample_length():
    spec = catalog.load("twophase")
    for variant in (None, "commit-without-all-prepared"):
        a = check_spec(spec, "tiny", {"rm": 4}, variant, engine="scalar")
        b = check_spec(spec, "tiny", {"rm": 4}, variant, engine="scalar", options=ExploreOptions(symmetry=True))
        assert a.verdict == b.verdict
        for pa in a.properties:
            pb = b.outcome_of(pa.name)
            assert (pa.outcome, pa.depth) == (pb.outcome, pb.depth)
