"""Quantifier binders: a helper nested in itself must not capture the enclosing variable, although
grounding binds bound variables by name (spec/expr._binder renames the inner one)."""
import dataclasses

from txncheck.spec import catalog
from txncheck.spec.expr import ForAll, show
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground import ground
from txncheck.spec.model import Always
from txncheck.spec.twophase import RM, rmState


def each_rm(f):
    return ForAll(RM, lambda r: f(r))


def test_a_nested_helper_gets_a_fresh_name():
    e = each_rm(lambda a: each_rm(lambda b: each_rm(lambda c: rmState[a] == rmState[b])))
    assert show(e).startswith("∀r∈RM: ∀r'∈RM: ∀r''∈RM: ")
    plain = ForAll(RM, lambda r: ForAll(RM, lambda s: rmState[r] == rmState[s]))
    assert show(plain) == "∀r∈RM: ∀s∈RM: rmState[r] = rmState[s]"  # no capture, no renaming


def test_the_nested_quantifier_means_what_the_python_says():
    """"All resource managers are in the same state" is false once one has prepared; with capture it
    would read rmState[b] = rmState[b], true everywhere."""
    same = Always("SAME", each_rm(lambda a: each_rm(lambda b: rmState[a] == rmState[b])), "all RMs agree")
    base = catalog.load("twophase")
    spec = dataclasses.replace(base, properties=base.properties + (same,))
    m = ground(spec, spec.resolve_config("tiny", {}))
    prop = next(p for p in m.properties if p.name == "SAME")
    s = tuple(m.init)
    assert evaluate(prop.expr, s)
    prepare = next(a for a in m.actions if a.row_id == "RM-01")
    assert not evaluate(prop.expr, successor(m, prepare, s))
