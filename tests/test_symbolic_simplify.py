"""The symbolic engine's simplified model (checker/symbolic/simplify.py): frozen cells and statically
disabled actions, checked against the explicit engine's reachable states."""
import numpy as np
import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model
from txncheck.checker.vector.states import reachable_states
from txncheck.checker.symbolic.simplify import freeze
from txncheck.checker.vector.explore import explore
from txncheck.spec import catalog
from txncheck.spec.errors import EvaluationError
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GConst

# Kafka's cases take 10-19 s each on a fast machine (eos and B7 the longest): make test-heavy
CASES = [("twophase", None, None), ("paxoscommit", None, None)] + [
    pytest.param("kafka", config, variant, marks=pytest.mark.heavy)
    for config, variant in (("tiny", None), ("eos", None), (None, "B4-no-bump-on-timeout"), (None, "B7-tid-per-worker"))]


def _model(name, config, variant):
    spec = catalog.load(name)
    return build_model(spec, config, (), variant)  # the variant brings its own settings


def _outcome(guard_or_value, state):
    try:
        return evaluate(guard_or_value, state)
    except EvaluationError:
        return "error"


@pytest.mark.parametrize("name,config,variant", CASES)
def test_frozen_cells_keep_their_initial_value_and_disabled_actions_never_fire(name, config, variant):
    m = _model(name, config, variant)
    simple, sub = freeze(m)
    X = reachable_states(m)
    init = np.asarray(m.init)
    frozen = sorted(sub.frozen)
    moved = [m.layout.cell_names[c] for c in frozen if (X[:, c] != init[c]).any()]
    assert not moved, moved
    fired = explore(m, ExploreOptions(stop_on_violation=False, properties=())).fired
    disabled = [a.id for a in simple.actions if isinstance(a.guard, GConst) and not a.guard.value]
    assert not [m.actions[i].label for i in disabled if fired[i]], "a statically disabled action fired"
    if (name, config) == ("kafka", "tiny"):
        # the layout is sized for 2 tids, 2 partitions and 10 slots; tiny uses 1, 1 and 8 of them
        assert len(frozen) > 200 and len(disabled) > 50


@pytest.mark.parametrize("name,config,variant", CASES)
def test_simplified_model_behaves_like_the_original_on_reachable_states(name, config, variant):
    m = _model(name, config, variant)
    simple, _ = freeze(m)
    X = reachable_states(m)
    for row in X[:: max(1, len(X) // 400)]:
        s = tuple(int(v) for v in row)
        for a, b in zip(m.actions, simple.actions):
            g = _outcome(a.guard, s)
            assert _outcome(b.guard, s) == g, (a.label, s)
            if g not in (0, "error"):
                assert successor(simple, b, s) == successor(m, a, s), a.label
        for p, q in zip(m.properties, simple.properties):
            assert _outcome(q.expr, s) == _outcome(p.expr, s), p.name
