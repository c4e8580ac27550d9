"""The vector and scalar engines agree exactly: same states per level, same parent links, same
generated and per-action fire counts, same chosen violations, witnesses and deadlocks, same
recoverable verdicts — on TwoPhase at several sizes, on every shipped spec, config and variant,
with and without symmetry, and on randomly generated small specs (hypothesis)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from txncheck.checker import recoverable
from txncheck.checker.symmetry import group_size
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.checker.scalar.explore import explore as scalar_explore
from txncheck.checker.vector.explore import explore as vector_explore
from txncheck.spec import catalog, twophase
from txncheck.spec.domains import IdSet, IntRange
from txncheck.spec.errors import EvaluationError, SpecError
from txncheck.spec.expr import If, Max, Min, Not, Or, Param, Var
from txncheck.spec.ground import ground
from txncheck.spec.model import (Always, ConfigParam, NamedConfig, Recoverable, Row, Sometimes, Spec,
                                 Symmetry, Table)


def normal(model, out) -> dict:
    """An outcome in a form independent of the order of states within a level."""
    fps = [int(x) for x in out.fps]

    def fp(i):
        return None if i is None else fps[i]

    levels, acc = [], 0
    for n in out.level_sizes:
        levels.append(frozenset(fps[acc:acc + n]))
        acc += n
    links = {fps[i]: (fp(int(out.parent[i])) if out.parent[i] >= 0 else None, int(out.action[i]))
             for i in range(len(fps))}
    rec = {}
    for name in out.goal_masks:
        rec[name] = ({fps[i]: bool(out.goal_masks[name][i]) for i in range(len(fps))},
                     {fps[i]: bool(out.when_masks[name][i]) for i in range(len(fps))},
                     fp(recoverable.check(model, out, name)) if out.complete else None)
    return {
        "distinct": len(fps), "levels": levels, "links": links, "generated": int(out.generated),
        "fired": [int(x) for x in out.fired],
        "violations": {k: fp(v) for k, v in out.violations.items()},
        "witnesses": {k: fp(v) for k, v in out.witnesses.items()},
        "deadlock": fp(out.deadlock), "complete": out.complete, "stop_reason": out.stop_reason,
        "recoverable": rec, "edges": out.edges is not None,
    }


def assert_agree(model, options: ExploreOptions) -> dict:
    a = normal(model, scalar_explore(model, options))
    b = normal(model, vector_explore(model, options))
    for key in a:
        assert a[key] == b[key], f"engines disagree on {key}"
    # edges only where they are judged: a complete search with graph properties (masks are kept for each)
    assert a["edges"] == (a["complete"] and bool(a["recoverable"]))
    return a


# -- TwoPhase ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rm", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("symmetry", [False, True])
def test_twophase_sizes(rm, symmetry):
    m = ground(twophase.SPEC, twophase.SPEC.resolve_config("tiny", {"rm": rm}))
    r = assert_agree(m, ExploreOptions(symmetry=symmetry, check_deadlock=True))
    if rm == 3 and not symmetry:
        assert r["distinct"] == 288
    if rm == 5 and not symmetry:
        assert r["distinct"] == 8832


@pytest.mark.parametrize("opts", [
    ExploreOptions(max_depth=0), ExploreOptions(max_depth=3), ExploreOptions(max_depth=3, symmetry=True),
    ExploreOptions(max_states=1), ExploreOptions(max_states=100), ExploreOptions(max_states=100, symmetry=True),
    ExploreOptions(properties=("SomeAbort",)), ExploreOptions(check_deadlock=True, stop_on_violation=False),
])
def test_twophase_bounds(opts):
    m = ground(twophase.SPEC, twophase.SPEC.resolve_config("tiny", {"rm": 4}))
    assert_agree(m, opts)


# -- every shipped spec, config and variant ---------------------------------------------------
# Specs whose tiny state space takes the scalar engine tens of seconds: their full (no-stop)
# searches run once, not for every variant and option.
LARGE = {"kafka"}


def _load_all():
    return [(name, catalog.load(name)) for name in catalog.names()]


def _cases():
    out = []
    for name, spec in _load_all():
        base = "tiny" if any(c.name == "tiny" for c in spec.configs) else None
        # with symmetry where it permutes something at the shipped sizes (Kafka's one data partition: nothing)
        syms = [False, True] if spec.symmetry is not None and group_size(build_model(spec, base)) > 1 else [False]
        for variant in [None] + [v.name for v in spec.variants]:
            for sym in syms:
                for stop in (True, False):
                    if name in LARGE and not stop and (variant is not None or sym):
                        continue
                    marks = [pytest.mark.slow] if name in LARGE and not stop else []
                    out.append(pytest.param(name, base if variant is None else None, variant, sym, stop, marks=marks,
                                            id=f"{name}-{variant or base}-sym{int(sym)}-stop{int(stop)}"))
    return out


@pytest.mark.parametrize("spec_name,config,variant,symmetry,stop", _cases())
def test_shipped_specs_agree(spec_name, config, variant, symmetry, stop):
    spec = catalog.load(spec_name)
    m = build_model(spec, config, (), variant)  # the variant brings its own settings
    assert_agree(m, ExploreOptions(symmetry=symmetry, stop_on_violation=stop, check_deadlock=True))


# a variant that breaks only `recoverable` properties is searched to the end (1.1 M states, 90 s, 139 s on CI's
# machine): make test-heavy; so are kafka's base (tiny, 15 s) and B7 (14 s), whose searches
# test_shipped_specs_agree compares in make test-long
VERDICT_HEAVY = (("kafka", "B2-cepoch-check-on-replay"), ("kafka", None), ("kafka", "B7-tid-per-worker"))


def _verdict_cases():
    out = []
    for name, spec in _load_all():
        for variant in [None] + [v.name for v in spec.variants]:
            stop = name in LARGE and variant is not None  # large variants: up to the first violation
            marks = [pytest.mark.heavy] if (name, variant) in VERDICT_HEAVY else []
            out.append(pytest.param(name, variant, stop, id=f"{name}-{variant or 'base'}", marks=marks))
    return out


@pytest.mark.parametrize("spec_name,variant,stop", _verdict_cases())
def test_shipped_verdicts_and_trace_lengths(spec_name, variant, stop):
    spec = catalog.load(spec_name)
    opts = ExploreOptions(stop_on_violation=stop)
    a = check_spec(spec, None, variant=variant, engine="scalar", options=opts)
    b = check_spec(spec, None, variant=variant, engine="vector", options=opts)
    assert a.verdict == b.verdict
    assert a.stats["distinct"] == b.stats["distinct"]
    assert [(p.name, p.outcome, p.depth) for p in a.properties] == [(p.name, p.outcome, p.depth) for p in b.properties]
    assert (a.deadlock or {}).get("depth") == (b.deadlock or {}).get("depth")


# -- run-time errors --------------------------------------------------------------------------
def _index_error_spec():
    Idx = IntRange("Idx", 0, 1)
    Small = IntRange("Small", 0, 3)
    x = Var("x", Small, init=0)
    a = Var("a", Small, index=(Idx,), init=0)
    rows = (Row("A-01", "A", "step", guard=(x < 3,), updates=(x.set(x + 1),)),
            Row("A-02", "A", "poke", guard=(x >= 1,), updates=(a[x].set(1),)))  # a[2] is out of range
    return Spec("idxerr", "computed index leaves its domain", vars=(x, a), tables=(Table("A", rows),),
                properties=(Always("Fine", x <= 3),))


def _assign_error_spec():
    Small = IntRange("Small", 0, 2)
    x = Var("x", Small, init=0)
    rows = (Row("B-01", "B", "inc", guard=(x >= 0,), updates=(x.set(x + 1),)),)  # 3 leaves 0..2
    return Spec("assignerr", "assignment leaves its domain", vars=(x,), tables=(Table("B", rows),))


def _kept_cell_conflict_spec():
    # a[0] written back as it is (the vector kernel emits no code for its value) beside the computed write a[x]:
    # once x is 0 they are two updates of one cell, an error in every engine
    Idx = IntRange("Idx", 0, 1)
    Small = IntRange("Small", 0, 3)
    x = Var("x", Idx, init=1)
    a = Var("a", Small, index=(Idx,), init=0)
    rows = (Row("K-01", "K", "down", guard=(x == 1,), updates=(x.set(0),)),
            Row("K-02", "K", "both", guard=(a[0] < 3,), updates=(a[0].set(a[0]), a[x].set(1))))
    return Spec("kepterr", "a cell written back beside a computed write of it", vars=(x, a),
                tables=(Table("K", rows),))


@pytest.mark.parametrize("make,row", [(_index_error_spec, "A-02"), (_assign_error_spec, "B-01"),
                                      (_kept_cell_conflict_spec, "K-02")])
@pytest.mark.parametrize("engine", [scalar_explore, vector_explore])
def test_evaluation_errors_name_the_row(make, row, engine):
    spec = make()
    m = ground(spec, spec.resolve_config())
    with pytest.raises(EvaluationError) as info:
        engine(m, ExploreOptions())
    assert info.value.row == row


def test_guarded_out_of_range_read_is_not_an_error():
    """`and` short-circuits as in the reference: a[x] is only read where x < 2."""
    Idx = IntRange("Idx", 0, 1)
    Small = IntRange("Small", 0, 3)
    x = Var("x", Small, init=0)
    a = Var("a", Small, index=(Idx,), init=0)
    rows = (Row("C-01", "C", "step", guard=(x < 3,), updates=(x.set(x + 1),)),
            Row("C-02", "C", "bump", guard=(x < 2, a[x] < 3), updates=(a[x].set(a[x] + 1),)))
    spec = Spec("guarded", "", vars=(x, a), tables=(Table("C", rows),), properties=(Sometimes("Top", a[0] == 3),))
    m = ground(spec, spec.resolve_config())
    assert_agree(m, ExploreOptions())


# -- random small specs -----------------------------------------------------------------------
K = 3          # values 0..K
N_SCALAR = 3   # x0..x2
M = 2          # array a[0..M-1]

atom = st.tuples(st.sampled_from(["x", "a", "ax"]), st.integers(0, N_SCALAR - 1),
                 st.sampled_from(["==", "!=", "<", ">=", "<="]), st.integers(-1, K + 1))
val_kind = st.sampled_from(["const", "inc", "dec", "copy", "ite", "min", "max", "mod", "div", "sum", "cnt", "arr",
                            "self"])
update = st.tuples(st.sampled_from(["x", "a_const", "a_dyn", "a_param"]), st.integers(0, N_SCALAR - 1), val_kind,
                   st.integers(0, K), st.integers(0, N_SCALAR - 1))
row_desc = st.tuples(st.lists(atom, max_size=3), st.lists(update, min_size=1, max_size=3), st.booleans(),
                     st.booleans())
spec_desc = st.tuples(st.lists(row_desc, min_size=1, max_size=5), st.lists(st.integers(0, K), min_size=N_SCALAR,
                                                                         max_size=N_SCALAR),
                      st.booleans(), atom, atom)


def _build(desc):
    rows_d, init, symmetric, prop_a, prop_b = desc
    Val_ = IntRange("Val", 0, K)
    Ix = IdSet("Ix", size=M) if symmetric else IntRange("Ix", 0, M - 1)
    xs = [Var(f"x{i}", Val_, init=init[i]) for i in range(N_SCALAR)]
    arr = Var("a", Val_, index=(Ix,), init=0)
    p = Param("p", Ix)

    def atom_expr(at, param):
        kind, i, op, c = at
        if kind == "x":
            lhs = xs[i]
        elif kind == "a":
            lhs = arr[p] if param else arr[i % M]
        else:
            lhs = arr[xs[i]]  # computed index, may leave 0..M-1
        return {"==": lhs == c, "!=": lhs != c, "<": lhs < c, ">=": lhs >= c, "<=": lhs <= c}[op]

    def value(kind, c, j, i, param, target):
        xj = xs[j]
        if kind == "self":  # the cell's own value written back, which the vector kernel skips
            return target
        if kind == "const":
            return c
        if kind == "inc":
            return Min(xj + 1, K)
        if kind == "dec":
            return Max(xj - 1, 0)
        if kind == "copy":
            return xs[(j + 1) % N_SCALAR]
        if kind == "ite":
            return If(xj < c, xj + 1, c)
        if kind == "min":
            return Min(xj, xs[(j + 1) % N_SCALAR], c)
        if kind == "max":
            return Max(xj, c)
        if kind == "mod":
            return xj % (c + 1)
        if kind == "div":
            return (xj + c) // 2
        if kind == "sum":
            return (xj + xs[(j + 1) % N_SCALAR] + c) % (K + 1)
        if kind == "cnt":
            return If(Or(xj == c, Not(xs[(j + 2) % N_SCALAR] == c)), 1, 0) + If(xj > 1, 1, 0)
        return arr[p] if param else arr[xj]  # "arr": a computed read

    rows = []
    for k, (guard, ups, param, guard_dyn) in enumerate(rows_d):
        g = [atom_expr(a, param) for a in guard]
        if guard_dyn:
            g.insert(0, xs[0] < M)  # protects a later computed read, as `and` short-circuits
        updates, targets = [], set()
        for tgt, i, kind, c, j in ups:
            if tgt == "x":
                if ("x", i) in targets:
                    continue
                targets.add(("x", i))
                updates.append(xs[i].set(value(kind, c, j, i, param, xs[i])))
            elif tgt == "a_const":
                if ("a", i % M) in targets or ("a", "*") in targets:
                    continue
                targets.add(("a", i % M))
                updates.append(arr[i % M].set(value(kind, c, j, i, param, arr[i % M])))
            elif tgt == "a_param" and param:
                if any(t[0] == "a" for t in targets):
                    continue
                targets.add(("a", "*"))
                updates.append(arr[p].set(value(kind, c, j, i, param, arr[p])))
            else:
                if any(t[0] == "a" for t in targets):
                    continue
                targets.add(("a", "*"))
                updates.append(arr[xs[i]].set(value(kind, c, j, i, param, arr[xs[i]])))  # computed target
        rows.append(Row(f"R-{k:02d}", "R", f"t{k}", guard=tuple(g), updates=tuple(updates),
                        params=(p,) if param else ()))
    props = (Always("P", Or(atom_expr(prop_a, False), atom_expr(prop_b, False))),
             Sometimes("S", atom_expr(prop_b, False)),
             Recoverable("Back", xs[0] == init[0]))
    return Spec("random", "", vars=tuple(xs) + (arr,), tables=(Table("R", tuple(rows)),), properties=props,
                params=(ConfigParam("unused", 0),), configs=(NamedConfig("tiny"),),
                symmetry=Symmetry((Ix,)) if symmetric else None)


def _outcome_or_error(fn, m, opts):
    try:
        return normal(m, fn(m, opts))
    except EvaluationError as err:
        return ("error", err.row)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_desc, st.booleans(), st.booleans())
def test_random_specs_agree(desc, symmetry, stop):
    spec = _build(desc)
    try:
        m = ground(spec, spec.resolve_config("tiny"))
    except SpecError:
        # statically malformed (e.g. a constant assignment out of its domain): not this test's concern.
        # Only the IR's own rejection is filtered out, and through hypothesis, which fails the test if
        # it has to discard too many examples; any other exception from ground() fails the test.
        reject()
    opts = ExploreOptions(symmetry=symmetry, stop_on_violation=stop, check_deadlock=True)
    a = _outcome_or_error(scalar_explore, m, opts)
    b = _outcome_or_error(vector_explore, m, opts)
    if isinstance(a, tuple) or isinstance(b, tuple):
        # both raise; the row may differ (the engines visit states in different orders)
        assert isinstance(a, tuple) and isinstance(b, tuple), (a if isinstance(a, tuple) else b)
        return
    for key in a:
        assert a[key] == b[key], f"engines disagree on {key}"
