"""The soundness check of a declared symmetry (checker/symmetry_check.py): every shipped spec that
declares one passes, a wrong declaration is refused before the search (exit 2, naming the row or
property and the permutation), and `Symmetry.first` permutes only the members it names."""
from dataclasses import replace

import pytest
from models.lamps import SPEC as LAMPS, lit

from txncheck.checker import symmetry, symmetry_check
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.spec import catalog
from txncheck.spec.errors import SpecError
from txncheck.spec.expr import Not, Param
from txncheck.spec.model import Recoverable, Row, Sometimes, Symmetry

Lamp = LAMPS.symmetry.domains[0]
on = next(v for v in LAMPS.vars if v.name == "on")
l = Param("l", Lamp)


def _with_rows(spec, *rows):
    return replace(spec, tables=(replace(spec.tables[0], rows=spec.tables[0].rows + rows),))


# sizes at which each shipped symmetry permutes something (Kafka's shipped configs have one data partition)
PERMUTING = {"kafka": {"parts": 2, "ctp": 0}}


# Kafka's 27 variants take about a minute on a fast machine (B2's alone 10 s), several on CI's: make test-heavy
# checks each; make test the base spec here, test-long two variants' verdicts under symmetry below
VARIANTS_HEAVY = ("kafka",)


def _shipped():
    out = []
    for name in catalog.names():
        spec = catalog.load(name)
        if spec.symmetry is None:
            continue
        for variant in [None] + [v.name for v in spec.variants]:
            out.append(pytest.param(name, variant, id=f"{name}-{variant or 'base'}",
                                    marks=[pytest.mark.heavy] if variant and name in VARIANTS_HEAVY else []))
    return out


@pytest.mark.parametrize("name,variant", _shipped())
def test_shipped_symmetries_are_sound(name, variant):
    m = build_model(name, None, PERMUTING.get(name, {}), variant)
    assert symmetry.permutations(m), "the config permutes something"
    assert symmetry_check.find_breach(m, deadlock=True) is None


@pytest.mark.parametrize("overrides", [{}, {"ctp": 1}, {"ctp": 0}])
def test_kafka_partitions_alike_only_with_two_data_partitions(overrides):
    m = build_model("kafka", "tiny", overrides)  # parts=1: with ctp=1 partition 2 is __consumer_offsets
    assert symmetry.permutations(m) == () and "Part has 1 alike member(s) (its first parts)" in symmetry.idle(m)


def test_kafka_refuses_symmetry_with_one_data_partition(txncheck_main, tmp_path):
    code, _, err = txncheck_main("check", "kafka", "--config", "tiny", "--symmetry", "--out", str(tmp_path / "o"))
    assert code == 2 and "permutes nothing" in err and "Traceback" not in err, err


@pytest.mark.parametrize("overrides", [{"rm": 4}, {"rm": 5}])  # every permutation; the transpositions
def test_twophase_sound_at_other_sizes(overrides):
    assert symmetry_check.find_breach(build_model("twophase", "tiny", overrides), deadlock=True) is None


def test_lamps_sound():
    assert symmetry_check.find_breach(build_model(LAMPS, "tiny"), deadlock=True) is None


def test_a_row_that_favours_one_member_is_named():
    spec = _with_rows(LAMPS, Row("S-4", "Switch", "turn the first lamp on", guard=(Not(on[0]),),
                                 updates=(on[0].set(True),)))
    b = symmetry_check.find_breach(build_model(spec, "tiny"))
    assert (b.kind, b.name) == ("row", "S-4")
    assert b.permutation.startswith("Lamp (l1 ")
    with pytest.raises(SpecError, match=r"not sound.*under the permutation Lamp \(l1 l\d\)") as err:
        check_spec(spec, "tiny", options=ExploreOptions(symmetry=True))
    assert err.value.row == "S-4"
    check_spec(spec, "tiny")  # without --symmetry the spec is fine


def test_an_asymmetric_property_is_named():
    spec = replace(LAMPS, properties=LAMPS.properties + (Sometimes("FirstLit", on[0]),))
    b = symmetry_check.find_breach(build_model(spec, "tiny"))
    assert (b.kind, b.name) == ("property", "FirstLit")
    # only the properties checked count: choosing the others leaves the symmetry sound for this run
    r = check_spec(spec, "tiny", options=ExploreOptions(symmetry=True, properties=("AtMostOne",)))
    assert r.verdict == "pass"


def test_initial_states_not_closed():
    spec = replace(LAMPS, init=LAMPS.init + (Not(on[0]),))
    b = symmetry_check.find_breach(build_model(spec, "tiny"))
    assert b.kind == "init" and "initial state" in b.message


def test_steps_a_recoverable_property_uses_must_commute():
    # every lamp can be switched off (S-5, tagged), so the whole step relation is symmetric; the untagged
    # steps a recoverable property excluding the tag may use switch off the first lamp only (S-4)
    rows = tuple(r for r in LAMPS.tables[0].rows if r.id != "S-2") + (
        Row("S-4", "Switch", "switch the first lamp off", guard=(on[0],), updates=(on[0].set(False),)),
        Row("S-5", "Switch", "switch a lamp off by hand", params=(l,), guard=(on[l],), updates=(on[l].set(False),),
            tags=("manual",)))
    spec = replace(LAMPS, tables=(replace(LAMPS.tables[0], rows=rows),),
                   properties=LAMPS.properties + (Recoverable("Dark", lit == 0, exclude_tags=("manual",)),))
    m = build_model(spec, "tiny")
    assert symmetry_check.find_breach(m, [q for q in m.properties if q.name != "Dark"]) is None
    b = symmetry_check.find_breach(m)
    assert (b.kind, b.name) == ("row", "S-4") and "without tags manual" in b.message


def test_deadlock_needs_a_symmetric_terminal():
    spec = replace(LAMPS, terminal=on[0])
    m = build_model(spec, "tiny")
    assert symmetry_check.find_breach(m, deadlock=False) is None
    b = symmetry_check.find_breach(m, deadlock=True)
    assert b.kind == "terminal"


def test_cli_refuses_an_unsound_declaration(txncheck_main, tmp_path):
    (tmp_path / "lopsided.py").write_text(
        "from dataclasses import replace\n"
        "from models.lamps import SPEC as LAMPS, on\n"
        "from txncheck.spec.expr import Not\n"
        "from txncheck.spec.model import Row\n"
        "SPEC = replace(LAMPS, name='lopsided', tables=(replace(LAMPS.tables[0], rows=LAMPS.tables[0].rows + (\n"
        "    Row('S-4', 'Switch', 'turn the first lamp on', guard=(Not(on[0]),), updates=(on[0].set(True),)),)),))\n")
    code, _, err = txncheck_main("check", str(tmp_path / "lopsided.py"), "--symmetry", "--out", str(tmp_path / "o"))
    assert code == 2, err
    assert "row S-4: the declared symmetry is not sound" in err and "Lamp (l1 l" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    code, _, err = txncheck_main("check", str(tmp_path / "lopsided.py"), "--out", str(tmp_path / "o"))
    assert code in (0, 1), err


# ---- Symmetry.first: only the first members are alike -------------------------------------------------
FIRST = replace(LAMPS, name="lamps_first", symmetry=Symmetry((Lamp,), first=((Lamp, "n"),)))


def test_first_limits_the_group():
    spec = replace(LAMPS, symmetry=Symmetry((Lamp,), first=((Lamp, 2),)))
    m = build_model(spec, "tiny", {"n": 3})
    assert [p.label for p in symmetry.permutations(m)] == ["Lamp (l1 l2)"]
    assert symmetry.group_size(m) == 2 and symmetry.idle(m) is None
    assert symmetry_check.find_breach(m, deadlock=True) is None
    assert spec.symmetry.describe() == ["Lamp (its first 2)"]


def test_first_by_a_constant_and_refused_when_idle(txncheck_main, tmp_path):
    assert symmetry.group_size(build_model(FIRST, "tiny", {"n": 3})) == 6
    m1 = build_model(FIRST, "tiny", {"n": 1})
    assert symmetry.permutations(m1) == () and "permutes nothing" in symmetry.idle(m1)
    (tmp_path / "firsts.py").write_text(
        "from dataclasses import replace\n"
        "from models.lamps import SPEC as LAMPS, Lamp\n"
        "from txncheck.spec.model import Symmetry\n"
        "SPEC = replace(LAMPS, name='firsts', symmetry=Symmetry((Lamp,), first=((Lamp, 'n'),)))\n")
    code, _, err = txncheck_main("check", str(tmp_path / "firsts.py"), "--symmetry", "--set", "n=1",
                                 "--out", str(tmp_path / "o"))
    assert code == 2 and "permutes nothing" in err and "first n" in err, err
    code, out, err = txncheck_main("check", str(tmp_path / "firsts.py"), "--symmetry", "--out", str(tmp_path / "o"))
    assert code == 0, err


def test_first_must_name_a_declared_domain():
    with pytest.raises(SpecError, match=r"Symmetry\(first=...\)"):
        build_model(replace(LAMPS, symmetry=Symmetry((Lamp,), first=(("Lamp", 2),))), "tiny")


def test_symmetry_keeps_counts_with_first():
    a = check_spec(FIRST, "tiny", {"n": 3}, engine="scalar", options=ExploreOptions(symmetry=True))
    b = check_spec(LAMPS, "tiny", {"n": 3}, engine="scalar", options=ExploreOptions(symmetry=True))
    assert a.stats["distinct"] == b.stats["distinct"]


# ---- Kafka with two alike data partitions --------------------------------------------------------------
@pytest.mark.parametrize("variant", ["B12-lso-ahead", "B10-no-marker-cepoch-check"])
def test_kafka_two_partitions_engines_agree_and_verdicts_keep(variant):
    from test_engine_agreement import assert_agree
    m = build_model("kafka", None, {"parts": 2, "ctp": 0}, variant)
    assert symmetry.group_size(m) == 2
    assert_agree(m, ExploreOptions(symmetry=True, stop_on_violation=True))
    props = tuple(p.name for p in m.properties if p.kind not in ("eventually", "leads_to"))
    runs = [check_spec("kafka", None, {"parts": 2, "ctp": 0}, variant, engine="vector",
                       options=ExploreOptions(symmetry=sym, properties=props)) for sym in (False, True)]
    plain, reduced = ([(p.name, p.outcome, p.depth) for p in r.properties] for r in runs)
    assert plain == reduced and any(o == "violated" for _, o, _ in plain)
    assert runs[1].stats["distinct"] < runs[0].stats["distinct"]
