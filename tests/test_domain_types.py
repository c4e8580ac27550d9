"""Static domain checking (issue 22, item 5): values of domains that may not meet are a SpecError
naming the row or property, both domains, the expression and the fix; deliberate uses stay legal.

Enum values, ids and integers are all ints once grounded, so without the check a value of one enum
stored in (or compared with) a var of another is silently read by position."""
import pytest

from txncheck.spec import catalog
from txncheck.spec.domains import BOOL, EnumDomain, IdSet, IntRange, SubsetDomain
from txncheck.spec.errors import SpecError
from txncheck.spec.expr import (Config, Count, Exists, ForAll, If, Max, MaxOver, Member, Min, Not, Param,
                                Sum, Var)
from txncheck.spec.ground import ground
from txncheck.spec.model import Always, ConfigParam, NamedConfig, Row, Spec, Table
from txncheck.spec.request import ModelRequest

# A PlusCal translation with one label enum per process: BTM's 4th label is Done, TM's 4th is TS.
PcTM = EnumDomain("PcTM", ("TInit", "TC", "F1", "TS", "TA", "Done"))
PcBTM = EnumDomain("PcBTM", ("BTInit", "BTC", "BTS", "Done"))
Part = IdSet("Part", size="n", prefix="p")
Tid = IdSet("Tid", size="n", prefix="t")
Small = IntRange("Small", 0, 3)
Signed = IntRange("Signed", -1, 3)
Maj = SubsetDomain("Maj", base=Part, majority=True)
Val = EnumDomain("Val", ("prepared", "aborted", "none"))
Decision = EnumDomain("Decision", ("prepared", "aborted"))  # a prefix of Val: positions mean the same labels

pcTM = Var("pcTM", PcTM, init=PcTM.TInit)
pcBTM = Var("pcBTM", PcBTM, init=PcBTM.BTInit)
owner = Var("owner", Tid, index=(Part,), init=0)
last = Var("last", Signed, index=(Part,), init=-1)
x = Var("x", Small, init=0)
flag = Var("flag", BOOL, init=False)
val = Var("val", Val, init=Val.none)
p = Param("p", Part)
t = Param("t", Tid)
ms = Param("ms", Maj)
d = Param("d", Decision)
VARS = (pcTM, pcBTM, owner, last, x, flag, val)


def mk(*rows, props=(), vars=VARS, params=()):
    spec = Spec("t", "test", vars=vars, tables=(Table("TM", tuple(rows)),), properties=props,
                params=(ConfigParam("n", 3, lo=1, hi=4), *params), configs=(NamedConfig("tiny"),))
    return ground(spec, spec.resolve_config("tiny"))


def row(*, guard=(), updates=None, params=()):
    return Row("TM-4", "TM", "t", params=params, guard=guard, updates=(x.set(1),) if updates is None else updates)


# ---- the PlusCal example: two label enums ----------------------------------------------------------
def test_assignment_of_another_enums_label_names_row_domains_and_fix():
    with pytest.raises(SpecError) as err:
        mk(row(updates=(pcTM.set(PcBTM.Done),)))
    msg = str(err.value)
    assert msg.startswith("row TM-4: assigns PcBTM.Done (enum PcBTM) to pcTM, whose domain is enum PcTM")
    assert "would be PcTM.TS" in msg  # what the trace would have shown
    assert "use PcTM.Done, a value of pcTM's domain PcTM" in msg


@pytest.mark.parametrize("cond", [pcTM == PcBTM.Done, PcBTM.Done == pcTM, pcTM != PcBTM.Done, pcTM < PcBTM.Done,
                                  Not(pcTM.is_in(PcTM.TA, PcBTM.Done))])
def test_comparison_with_another_enums_label(cond):
    with pytest.raises(SpecError, match=r"row TM-4: compares pcTM \(enum PcTM\) with PcBTM\.Done \(enum PcBTM\) "
                                        r"in .*use PcTM\.Done, a value of pcTM's domain PcTM"):
        mk(row(guard=(cond,)))


def test_comparison_of_two_vars_of_different_enums():
    with pytest.raises(SpecError, match=r"row TM-4: compares pcTM \(enum PcTM\) with pcBTM \(enum PcBTM\)"):
        mk(row(guard=(pcTM == pcBTM,)))


def test_property_names_the_property():
    with pytest.raises(SpecError, match=r"^property Done: compares pcBTM \(enum PcBTM\) with PcTM\.Done "
                                        r"\(enum PcTM\).*outside PcBTM; use PcBTM\.Done"):
        mk(row(), props=(Always("Done", ForAll(Part, lambda q: pcBTM != PcTM.Done)),))


def test_if_branches_of_different_enums():
    with pytest.raises(SpecError, match=r"row TM-4: the branches of If mix PcTM\.TS \(enum PcTM\) and "
                                        r"PcBTM\.Done \(enum PcBTM\)"):
        mk(row(updates=(pcTM.set(If(flag, PcTM.TS, PcBTM.Done)),)))


def test_maxover_keeps_its_bodys_domain():
    with pytest.raises(SpecError, match=r"compares .*\(enum PcTM\) with PcBTM\.Done"):
        mk(row(guard=(MaxOver(Part, lambda q: pcTM, default=0) == PcBTM.Done,)))


# ---- the other suspicious meetings ------------------------------------------------------------------
def test_enum_and_bare_integer_literal():
    with pytest.raises(SpecError, match=r"row TM-4: compares pcTM \(enum PcTM\) with 3 \(a bare integer literal\) "
                                        r".*only by its position \(3 is PcTM\.TS\).*write PcTM\.TS"):
        mk(row(guard=(pcTM == 3,)))
    with pytest.raises(SpecError, match=r"assigns 3 \(a bare integer literal\) to pcTM.*write PcTM\.TS"):
        mk(row(updates=(pcTM.set(3),)))
    with pytest.raises(SpecError, match=r"9 is not a position of PcTM"):
        mk(row(guard=(pcTM != 9,)))
    with pytest.raises(SpecError, match=r"the branches of If mix PcTM\.TS .* and 0 \(a bare integer literal\)"):
        mk(row(updates=(pcTM.set(If(flag, PcTM.TS, 0)),)))


def test_bool_and_bare_integer_literal():
    with pytest.raises(SpecError, match=r"compares flag \(Bool\) with 1 .*not a truth value; write True"):
        mk(row(guard=(flag == 1,)))
    with pytest.raises(SpecError, match=r"assigns 1 \(a bare integer literal\) to flag, whose domain is Bool"):
        mk(row(updates=(flag.set(1),)))


def test_enum_initial_value_given_as_a_position():
    bad = Var("pc", PcTM, init=0)
    with pytest.raises(SpecError, match=r"^var pc: its initial value 0 .*write PcTM\.TInit"):
        mk(row(), vars=VARS + (bad,))


def test_enum_and_id():
    with pytest.raises(SpecError, match=r"compares pcTM \(enum PcTM\) with p \(id set Part\)"):
        mk(row(params=(p,), guard=(pcTM == p,)))
    with pytest.raises(SpecError, match=r"assigns PcTM\.TS \(enum PcTM\) to owner\[p\], whose domain is id set Tid"):
        mk(row(params=(p,), updates=(owner[p].set(PcTM.TS),)))


def test_enum_and_integer_range_var():
    with pytest.raises(SpecError, match=r"compares pcTM \(enum PcTM\) with x \(integer range Small\)"):
        mk(row(guard=(pcTM == x,)))
    with pytest.raises(SpecError, match=r"assigns PcTM\.TS \(enum PcTM\) to x, whose domain is integer range Small"):
        mk(row(updates=(x.set(PcTM.TS),)))


def test_ids_of_different_id_sets():
    with pytest.raises(SpecError, match=r"row TM-4: assigns p \(id set Part\) to owner\[p\], whose domain is id set "
                                        r"Tid: ids of Part and of Tid are different things"):
        mk(row(params=(p,), updates=(owner[p].set(p),)))
    with pytest.raises(SpecError, match=r"compares owner\[p\] \(id set Tid\) with p \(id set Part\)"):
        mk(row(params=(p,), guard=(owner[p] == p,)))
    with pytest.raises(SpecError, match=r"indexes owner with t \(id set Tid\) in owner\[t\], "
                                        r"where index 1 is id set Part"):
        mk(row(params=(t,), guard=(owner[t] == t,)))


def test_member_element_of_another_id_set():
    with pytest.raises(SpecError, match=r"tests t \(id set Tid\) for membership in ms, a subset of id set Part"):
        mk(row(params=(ms, t), guard=(Member(ms, t),)))


def test_subset_and_integer():
    with pytest.raises(SpecError, match=r"compares ms \(subset domain Maj\) with 0"):
        mk(row(params=(ms,), guard=(ms == 0,)))


def test_arithmetic_on_enums():
    with pytest.raises(SpecError, match=r"row TM-4: arithmetic on pcTM \(enum PcTM\) in pcTM \+ 1"):
        mk(row(guard=(pcTM + 1 == PcTM.TS,)))
    with pytest.raises(SpecError, match=r"arithmetic on flag \(Bool\).*If\(flag, 1, 0\)"):
        mk(row(updates=(x.set(Sum(Part, lambda q: flag)),)))


def test_choice_constant_compared_with_an_enum_of_other_labels():
    choice = ConfigParam("protocol", "kip98", choices=("kip98", "verify", "tv2"))
    Same = EnumDomain("Protocol", ("kip98", "verify", "tv2"))
    mk(row(guard=(Config("protocol") == Same.tv2,)), params=(choice,))
    Other = EnumDomain("Proto", ("verify", "kip98", "tv2"))
    with pytest.raises(SpecError, match=r"compares protocol \(the choices of constant protocol "
                                        r"\(kip98, verify, tv2\)\) with Proto\.kip98"):
        mk(row(guard=(Config("protocol") == Other.kip98,)), params=(choice,))
    with pytest.raises(SpecError, match=r"compares protocol .* with 1 \(a bare integer literal\)"):
        mk(row(guard=(Config("protocol") == 1,)), params=(choice,))


# ---- legitimate uses stay accepted ---------------------------------------------------------------------
def test_same_domain_and_integer_uses_are_accepted():
    m = mk(
        # If with same-domain branches, is_in over one enum, ordering within one enum
        row(guard=(pcTM.is_in(PcTM.TS, PcTM.TA), pcTM < PcTM.Done),
            updates=(pcTM.set(If(flag, PcTM.TS, PcTM.TA)), pcBTM.set(PcBTM.Done), flag.set(x > 1))),
        # IdSet index used as a number: comparisons, arithmetic, Min with a constant, literals
        Row("TM-5", "TM", "u", params=(p,), guard=(p >= 1, last[p - 1] == p - 1, owner[p] == 0, owner[p] != p + 0),
            updates=(owner[p].set(Min(p, Config("n") - 1)), last[p].set(Max(p, -1)), x.set(p))),
        # integer ranges with integer literals; Count and Sum of integers; MaxOver of ids with a literal default
        Row("TM-6", "TM", "v", guard=(x < 3, last[0] == -1, Count(Part, lambda q: owner[q] == 0) >= 1),
            updates=(x.set(x + 1), last[0].set(MaxOver(Part, lambda q: If(owner[q] == 0, q, 0), default=0)))),
        # a computed integer has no domain to disagree with (the run-time range check guards it)
        Row("TM-7", "TM", "w", guard=(Exists(Part, lambda q: owner[q] == q - 0),), updates=(flag.set(x > 0),)),
        props=(Always("Ok", ForAll(Part, lambda q: Sum(Part, lambda r: If(owner[r] == 0, 1, 0)) >= 0)),),
    )
    assert len(m.actions) > 0


def test_enum_whose_labels_begin_anothers_may_meet_it():
    # Paxos Commit's Decision = (prepared, aborted) within Val = (prepared, aborted, none): position i
    # names the same label in both, so storing or comparing one as the other keeps its meaning
    m = mk(row(params=(d,), guard=(val != Val.none, val == d), updates=(val.set(d),)))
    assert len(m.actions) == 2


def test_an_enum_recreated_with_the_same_name_and_labels_is_the_same_domain():
    again = EnumDomain("PcTM", PcTM.labels)
    mk(row(guard=(pcTM == again.TS,), updates=(pcTM.set(again.Done),)))


# kafka's every config and variant: 28 s (2026-11-27), make test-long
@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.long] if n == "kafka" else []) for n in catalog.names()])
def test_every_shipped_spec_config_and_variant_passes_the_check(name):
    """The check does not depend on the configuration; every config and every variant (under its own
    config and settings) is grounded anyway, as `txncheck check` would."""
    spec = catalog.load(name)
    for config in spec.configs:
        ModelRequest.of(name, config.name).ground()
    for v in spec.variants:
        ModelRequest.of(name, None, None, v.name).ground()
    ModelRequest.of(name, invariants=True).ground()
