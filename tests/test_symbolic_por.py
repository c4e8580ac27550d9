"""Partial-order reduction in bounded model checking (`unroll.Unroller(por=True)`) may drop paths
but no state: every state reachable in exactly k steps is still the end of some
k-step path the solver allows. bmc asserts each refuted property on every depth, so it needs the
exact-k sets, not just the shortest depths."""
import pytest
import z3

from txncheck.checker.symbolic.unroll import Unroller
from txncheck.spec import catalog
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground import ground

CASES = [("twophase", {"rm": 3}, 6), ("paxoscommit", {}, 6),
         pytest.param("kafka", {}, 5, marks=pytest.mark.heavy)]  # about 20 s on a fast machine


def _model(name, overrides):
    spec = catalog.load(name)
    return ground(spec, spec.resolve_config("tiny", overrides))


def _exactly(m, depth):
    """The sets of states reachable in exactly k steps, k = 0..depth (the reference interpreter)."""
    levels = [{tuple(m.init)}]
    for _ in range(depth):
        nxt = set()
        for s in levels[-1]:
            for a in m.actions:
                if evaluate(a.guard, s, a.row_id):
                    nxt.add(successor(m, a, s))
        levels.append(nxt)
    return levels


@pytest.mark.parametrize("name,overrides,depth", CASES, ids=["twophase", "paxoscommit", "kafka"])
def test_every_state_reachable_in_exactly_k_steps_stays_reachable(name, overrides, depth):
    m = _model(name, overrides)
    levels = _exactly(m, depth)
    solver = z3.SolverFor("QF_FD")
    u = Unroller(m, solver, por=True)
    u.add_state()
    u.constrain_init()
    for k, states in enumerate(levels):
        if k > 0:
            u.add_transition()
        # every state of small levels; an even spread of at most 40 of the larger ones
        for s in sorted(states)[::max(1, len(states) // 40)]:
            at = [(x == bool(v)) if z3.is_bool(x) else (x == v) for x, v in zip(u.states[k], s)]
            assert solver.check(*at) == z3.sat, f"{name}: a state reachable in {k} steps is lost under partial-order reduction"



def test_the_reduction_prunes_paths():
    """...and it does drop paths: fewer 3-step paths on TwoPhase than without it."""
    m = _model("twophase", {"rm": 3})
    counts = {}
    for por in (False, True):
        solver = z3.SolverFor("QF_FD")
        u = Unroller(m, solver, por=por)
        u.add_state()
        u.constrain_init()
        for _ in range(3):
            u.add_transition()
        n = 0
        while solver.check() == z3.sat:
            ids = u.action_ids(solver.model(), 3)
            n += 1
            solver.add(z3.Or(*[z3.Not(u.chose(i, a)) for i, a in enumerate(ids)]))
        counts[por] = n
    assert counts[True] < counts[False], counts
