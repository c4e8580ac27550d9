"""The z3 encoding agrees with the reference interpreter (`ground.evaluate` / `successor`)."""
import random

import pytest

import z3  # noqa: E402  (a required dependency: its absence must fail)

from txncheck.checker.symbolic.encode import Encoder, as_bool, as_int  # noqa: E402
from txncheck.checker.symbolic.unroll import Unroller  # noqa: E402
from txncheck.spec import catalog  # noqa: E402
from txncheck.spec.errors import EvaluationError  # noqa: E402
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground import ground
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GOp, GTable  # noqa: E402


def _const_state(m, s):
    out = []
    for pos, v in enumerate(s):
        vl = m.layout.vars[m.layout.cell_var[pos]]
        out.append(z3.BoolVal(bool(v)) if vl.var.domain.is_bool else z3.IntVal(v))
    return out


def _value(x):
    x = z3.simplify(x)
    return int(z3.is_true(x)) if z3.is_bool(x) else x.as_long()


def _random_state(m, rng):
    return tuple(rng.randint(lo, hi) for lo, hi in zip(m.layout.cell_lo, m.layout.cell_hi))


@pytest.mark.parametrize("name", ["twophase", "paxoscommit"])
def test_guards_and_updates_agree_on_random_states(name):
    spec = catalog.load(name)
    m = ground(spec, spec.resolve_config("tiny"))
    rng = random.Random(7)
    for _ in range(40):
        s = _random_state(m, rng)
        enc = Encoder(_const_state(m, s))
        for a in m.actions:
            try:
                g = evaluate(a.guard, s)
            except EvaluationError:
                assert not z3.is_true(z3.simplify(enc.defined(a.guard)))
                continue
            assert z3.is_true(z3.simplify(enc.defined(a.guard)))
            assert _value(as_int(enc.enc(a.guard))) == int(bool(g)), a.label
            for _t, v in a.updates:
                assert _value(as_int(enc.enc(v))) == evaluate(v, s), a.label
        for p in m.properties:
            assert _value(as_int(enc.enc(p.expr))) == int(bool(evaluate(p.expr, s))), p.name


@pytest.mark.parametrize("name,samples", [("twophase", 30), ("paxoscommit", 6)])
def test_transition_relation_is_successor(name, samples):
    spec = catalog.load(name)
    m = ground(spec, spec.resolve_config("tiny"))
    rng = random.Random(3)
    solver = z3.Solver()
    u = Unroller(m, solver)
    s0 = u.add_state()
    u.add_transition()
    for _ in range(samples):
        # a state the relation starts from: the cells no action changes at their initial value
        s = tuple(m.init[i] if i in u.tr.sub.frozen else v for i, v in enumerate(_random_state(m, rng)))
        for a in m.actions:
            solver.push()
            solver.add(*[x == (bool(v) if z3.is_bool(x) else v) for x, v in zip(s0, s)])
            solver.add(u.chose(0, a.id))
            r = solver.check()
            if evaluate(a.guard, s):
                assert r == z3.sat
                assert u.state_values(solver.model(), 1) == successor(m, a, s)
            else:
                assert r == z3.unsat
            solver.pop()


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (5, 0)])
def test_floor_division_and_modulo_like_python(a, b):
    cells = [z3.IntVal(a), z3.IntVal(b)]
    enc = Encoder(cells)
    for op in ("//", "%"):
        e = GOp(op, (GCell(0), GCell(1)))
        if b == 0:
            assert z3.is_false(z3.simplify(enc.defined(e)))
            continue
        assert _value(enc.enc(e)) == evaluate(e, (a, b))


def test_computed_index_and_table_reads():
    # cells 0..2: an array; cell 3: the index
    dyn = GDyn("arr", 0, ((GCell(3), 1, 3),))
    tab = GTable((5, 6, 7), GCell(3))
    for idx in range(-1, 4):
        s = (10, 11, 12, idx)
        enc = Encoder([z3.IntVal(v) for v in s])
        ok = 0 <= idx < 3
        assert z3.is_true(z3.simplify(enc.defined(dyn))) == ok
        assert z3.is_true(z3.simplify(enc.defined(tab))) == ok
        if ok:
            assert _value(enc.enc(dyn)) == evaluate(dyn, s)
            assert _value(enc.enc(tab)) == evaluate(tab, s)
    # short-circuit: idx < 3 and arr[idx] == 12 is defined for every idx >= 0
    guard = GOp("and", (GOp("<", (GCell(3), GConst(3))), GOp("==", (dyn, GConst(12)))))
    enc = Encoder([z3.IntVal(v) for v in (10, 11, 12, 5)])
    assert z3.is_true(z3.simplify(enc.defined(guard)))
    assert as_bool(enc.enc(guard)) is not None
