"""The IR's error messages name the row and the mistake."""
import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.scalar.explore import explore
from txncheck.spec.domains import BOOL, ConstPlus, EnumDomain, IdSet, IntRange
from txncheck.spec.errors import ConfigError, EvaluationError, SpecError, Subject
from txncheck.spec.expr import And, Config, Param, Var
from txncheck.spec.ground import ground
from txncheck.spec.model import Always, Assume, ConfigParam, NamedConfig, Row, Spec, Table

N = IdSet("N", size="n")
Small = IntRange("Small", 0, 3)
x = Var("x", Small, init=0)
arr = Var("arr", Small, index=(N,), init=0)
flag = Var("flag", BOOL, init=False)
i = Param("i", N)


def mk(*rows, vars=(x, arr, flag), props=()):
    spec = Spec("t", "test", vars=vars, tables=(Table("A", tuple(rows)),), properties=props,
                params=(ConfigParam("n", 2, lo=1, hi=4),), configs=(NamedConfig("tiny"),))
    return ground(spec, spec.resolve_config("tiny"))


def test_unknown_var():
    ghost = Var("ghost", Small, init=0)
    with pytest.raises(SpecError, match=r"row A-1: unknown var 'ghost'"):
        mk(Row("A-1", "A", "t", guard=(ghost == 0,), updates=(x.set(1),)))


def test_index_out_of_domain():
    with pytest.raises(SpecError, match=r"row A-2: index 5 of arr is outside domain N"):
        mk(Row("A-2", "A", "t", updates=(arr[5].set(1),)))


def test_assignment_out_of_domain():
    with pytest.raises(SpecError, match=r"row A-3: assigns 7 to x, outside domain Small \(0..3\)"):
        mk(Row("A-3", "A", "t", updates=(x.set(7),)))


def test_two_updates_of_one_cell():
    with pytest.raises(SpecError, match=r"row A-4: two updates of one cell \(arr\[n1\]\)"):
        mk(Row("A-4", "A", "t", updates=(arr[0].set(1), arr[0].set(2))))


def test_non_boolean_guard():
    with pytest.raises(SpecError, match=r"row A-5: guard conjunct x \+ 1 is not boolean"):
        mk(Row("A-5", "A", "t", guard=(x + 1,), updates=(x.set(1),)))


def test_python_and_is_refused():
    with pytest.raises(SpecError, match="use And"):
        (x == 1) and (x == 2)  # noqa: B015


def test_unbound_parameter():
    with pytest.raises(SpecError, match=r"row A-6: parameter 'i' is not bound"):
        mk(Row("A-6", "A", "t", updates=(arr[i].set(1),)))


def test_unknown_config_constant():
    with pytest.raises(SpecError, match="unknown configuration constant 'nope'"):
        mk(Row("A-7", "A", "t", guard=(x < Config("nope"),), updates=(x.set(1),)))


def test_boolean_connective_on_integer():
    with pytest.raises(SpecError, match=r"'and' needs boolean operands, but x is an integer"):
        mk(Row("A-8", "A", "t", guard=(And(x, flag),), updates=(x.set(1),)))


def test_duplicate_row_ids():
    with pytest.raises(SpecError, match="row A-9: another row has this id already; row ids must be unique") as err:
        mk(Row("A-9", "A", "t", updates=(x.set(1),)), Row("A-9", "A", "u", updates=(x.set(2),)))
    assert err.value.subject == Subject("row", "A-9", 2)  # the second definition is at fault


def test_computed_index_out_of_range_at_run_time_names_the_row():
    m = mk(Row("A-10", "A", "t", guard=(x < 3,), updates=(x.set(x + 1), arr[x].set(1))))
    with pytest.raises(EvaluationError, match=r"row A-10: computed index 2 of arr is outside 0..1"):
        explore(m, ExploreOptions())


def test_computed_assignment_out_of_domain_at_run_time():
    m = mk(Row("A-11", "A", "t", updates=(x.set(x + 1),)))
    with pytest.raises(EvaluationError, match=r"row A-11: assigns 4 to x, outside its domain 0..3"):
        explore(m, ExploreOptions())


def test_domain_bound_relative_to_a_config_constant():
    last = Var("last", IntRange("Last", 0, ConstPlus("n", -1)), init=0)
    ok = mk(Row("A-12", "A", "t", guard=(last == 0,), updates=(last.set(last + 1),)), vars=(x, arr, flag, last))
    assert explore(ok, ExploreOptions()).distinct == 2  # n=2: last in 0..1
    bad = mk(Row("A-12", "A", "t", updates=(last.set(last + 1),)), vars=(x, arr, flag, last))
    with pytest.raises(EvaluationError, match=r"row A-12: assigns 2 to last, outside its domain 0..1"):
        explore(bad, ExploreOptions())
    spec = Spec("t", "", vars=(last,), tables=(), params=(ConfigParam("n", 2, lo=0, hi=4),))
    with pytest.raises(ConfigError, match=r"domain Last: has no values under this configuration \(0..-1\); raise "
                       "its upper bound") as err:
        ground(spec, spec.resolve_config(None, {"n": 0}))
    assert err.value.subject == Subject("domain", "Last")


def test_config_value_checked():
    spec = Spec("t", "", vars=(x,), tables=(), params=(ConfigParam("n", 2, lo=1, hi=4),))
    with pytest.raises(ConfigError, match=r"n must be in 1..4; got 9"):
        spec.resolve_config(None, {"n": 9})
    with pytest.raises(ConfigError, match="no configuration constant 'm'"):
        spec.resolve_config(None, {"m": 1})


def test_assumption_rejects_a_config_with_its_message():
    spec = Spec("t", "", vars=(x,), tables=(), params=(ConfigParam("n", 2, lo=1, hi=4),),
                assumptions=(Assume(Config("n") <= 3, "n must be at most 3 here: lower n"),))
    ground(spec, spec.resolve_config(None, {"n": 3}))
    with pytest.raises(ConfigError, match="configuration rejected: n must be at most 3 here: lower n"):
        ground(spec, spec.resolve_config(None, {"n": 4}))


def test_assumption_may_not_read_state():
    spec = Spec("t", "", vars=(x,), tables=(), assumptions=(Assume(x == 0, "x"),))
    with pytest.raises(SpecError, match="configuration constants only"):
        ground(spec, spec.resolve_config(None))


def test_property_applies_only_where_its_config_condition_holds():
    prop = Always("Small", x <= 3, applies=Config("n") >= 2)
    spec = Spec("t", "", vars=(x,), tables=(), properties=(prop,), params=(ConfigParam("n", 2, lo=1, hi=4),))
    assert [p.name for p in ground(spec, spec.resolve_config(None)).properties] == ["Small"]
    m = ground(spec, spec.resolve_config(None, {"n": 1}))
    assert m.properties == () and m.not_applicable == ("Small",)
