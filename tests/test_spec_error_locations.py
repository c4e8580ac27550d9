"""A mistake in a user's spec is one message at the file and line of the row, property, var, variant, config,
constant or domain at fault, saying what is wrong and how to fix it, exit 2 and never a traceback: for
`check` and for `tables --verify` (the linter the tutorial teaches). Each broken spec below is written to a
folder outside the repository and loaded by its path (docs/user-specs.md)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from txncheck.cli.main import main
from txncheck.spec.errors import ConfigError, SpecError, Subject
from txncheck.spec.source_location import find

EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")

TEMPLATE = '''"""A spec with one mistake."""
from txncheck.spec.domains import BOOL, EnumDomain, IdSet, IntRange
from txncheck.spec.expr import And, Config, ForAll, Not, Param, Var
from txncheck.spec.model import (Always, Assume, ConfigParam, DropConjunct, DropRow, NamedConfig, ReplaceUpdate,
                                 Row, Spec, Table, Variant)

RM = IdSet("RM", size="rm", prefix="r")
St = EnumDomain("St", ("working", "prepared", "committed"))
Other = EnumDomain("Other", ("a", "b"))
N = IntRange("N", 0, 3)

s = Var("s", St, index=(RM,), init=St.working)
n = Var("n", N, init={n_init})
{more_vars}
r = Param("r", RM)

RMS = Table("RM", status={status}, rows=(
    Row("R-1", "RM", "prepare", params=(r,),
        guard=(s[r] == St.working,),
        updates=(s[r].set(St.prepared),)),
    Row(
        "R-2", "RM", "commit", params=({params},),
        guard=({guard},),
        updates=({updates},)),
    {more_rows}
))

SPEC = Spec(
    name="broken", doc="a spec with one mistake",
    vars=(s, n{extra_vars}),
    tables=(RMS,),
    properties=(
        Always("Safe", ForAll(RM, lambda x: Not(And(s[x] == St.committed, n > 0)))),
        {more_props}
    ),
    params=(
        ConfigParam("rm", {rm_default}, "resource managers", lo=1, hi=4),
    ),
    configs=(
        NamedConfig("tiny", (("rm", {rm_tiny}),)),
    ),
    variants=(
        Variant("commit-early", "R-2 without its guard", ("Safe",), ({edit},)),
    ),
    assumptions=({assumptions}),{extra}
)
'''
SLOTS = dict(n_init="0", more_vars="", status='"s"', params="r", guard="s[r] == St.prepared",
             updates="s[r].set(St.committed)", more_rows="", extra_vars="", more_props="", rm_default="2",
             rm_tiny="2", edit='DropConjunct("R-2", 0)', assumptions="", extra="")

GHOST = 'ghost = Var("ghost", N, init=0)'
R2 = 'Row(\n        "R-2"'  # R-2 is written over two lines: its location is the line of `Row(`
# name: (slots changed, (text on the line at fault, which occurrence), what the message must say (the fix))
CASES = {
    "guard-reads-a-cell-outside-its-array": (
        dict(guard="s[5] == St.prepared"), (R2, 1), ["row R-2: index 5 of s is outside domain RM (0..1)",
                                                          "use an index within it"]),
    "guard-reads-an-undeclared-var": (
        dict(more_vars=GHOST, guard="ghost == 0"), (R2, 1), ["row R-2: unknown var 'ghost'",
                                                                  "add it to Spec(vars=...)"]),
    "assignment-out-of-domain": (
        dict(updates="n.set(7)"), (R2, 1), ["row R-2: assigns 7 to n, outside domain N (0..3)",
                                                 "add a guard or widen the domain"]),
    "comparison-across-enums": (
        dict(guard="s[r] == Other.a"), (R2, 1), ["row R-2: compares s[r] (enum St) with Other.a (enum Other)",
                                                      "use a value of s[r]'s domain St"]),
    "assignment-across-enums": (
        dict(updates="s[r].set(Other.b)"), (R2, 1), ["row R-2: assigns Other.b (enum Other) to s[r]",
                                                          "use a value of s[r]'s domain St"]),
    "an-integer-for-an-enum": (
        dict(guard="s[r] == 1"), (R2, 1), ["row R-2: compares s[r] (enum St) with 1", "write St.prepared"]),
    "duplicate-row-id": (
        dict(more_rows='Row("R-1", "RM", "again", updates=(n.set(1),)),'), ('Row("R-1"', 2),
        ["row R-1: another row has this id already", "rename one"]),
    "unknown-configuration-constant": (
        dict(guard="n < Config('slots')"), (R2, 1), ["row R-2: unknown configuration constant 'slots'",
                                                          "ConfigParam('slots', default, ...)"]),
    "two-updates-of-one-cell": (
        dict(updates="n.set(1), n.set(2)"), (R2, 1), ["row R-2: two updates of one cell (n)",
                                                           "write one update"]),
    "an-update-that-is-a-comparison": (
        dict(updates="s[r] == St.committed"), (R2, 1), ["row R-2: its updates must hold Update objects",
                                                             "e.g. updates=(x.set(1)"]),
    "a-domain-as-a-parameter": (
        dict(params="RM"), (R2, 1), ["row R-2: its params must hold ParamRef objects, but one is an IdSet",
                                          'params=(Param("r", RM),)']),
    "a-non-boolean-guard": (
        dict(guard="n + 1"), (R2, 1), ["row R-2: guard conjunct n + 1 is not boolean", "compare it"]),
    "property-over-an-undeclared-var": (
        dict(more_vars=GHOST, more_props='Always("NoGhost", ghost == 0),'), ('Always("NoGhost"', 1),
        ["property NoGhost: unknown var 'ghost'", "add it to Spec(vars=...)"]),
    "property-that-is-not-boolean": (
        dict(more_props='Always("Count", n + 1),'), ('Always("Count"', 1),
        ["property Count: its expression is not boolean: n + 1", "compare it with a value"]),
    "property-across-enums": (
        dict(more_props='Always("Odd", ForAll(RM, lambda x: s[x] != Other.b)),'), ('Always("Odd"', 1),
        ["property Odd: compares s[x] (enum St) with Other.b (enum Other)", "use a value of"]),
    "duplicate-property-name": (
        dict(more_props='Always("Safe", n <= 3),'), ('Always("Safe"', 2),
        ["property Safe: another property has this name already", "rename one"]),
    "variant-drops-a-row-that-is-not-there": (
        dict(edit='DropRow("R-9")'), ('Variant("commit-early"', 1),
        ["variant commit-early: edits row R-9, which the spec does not have", "fix the row id"]),
    "variant-drops-a-conjunct-that-is-not-there": (
        dict(edit='DropConjunct("R-2", 3)'), ('Variant("commit-early"', 1),
        ["variant commit-early: row R-2 has no guard conjunct 3", "numbered from 0"]),
    "variant-replaces-an-update-the-row-does-not-make": (
        dict(edit='ReplaceUpdate("R-2", "n", 1)'), ('Variant("commit-early"', 1),
        ["variant commit-early: row R-2 does not update n; it updates s"]),
    "variant-assigns-across-enums": (
        dict(edit='ReplaceUpdate("R-2", "s", Other.a)'), ('Variant("commit-early"', 1),
        ["variant commit-early: row R-2 as the variant makes it: assigns Other.a (enum Other) to s[r]"]),
    "named-config-value-out-of-range": (
        dict(rm_tiny="9"), ('NamedConfig("tiny"', 1), ["config tiny: sets rm=9, but rm must be in 1..4; got 9"]),
    "constant-default-out-of-its-range": (
        dict(rm_default="7"), ('ConfigParam("rm"', 1),
        ["constant rm: its default 7 is not one of its own values", "change the default or the bounds"]),
    "domain-sized-by-an-undeclared-constant": (
        dict(more_vars='Q = IdSet("Q", size="q")\nlog = Var("log", BOOL, index=(Q,), init=False)', extra_vars=", log"),
        ('IdSet("Q"', 1), ["domain Q: depends on configuration constant 'q', which the spec does not declare",
                           "add ConfigParam('q', default, ...)"]),
    "init-outside-its-domain": (
        dict(n_init="9"), ('Var("n"', 1), ["var n: its initial value 9 is outside its domain N (0..3)",
                                          "give a value within it"]),
    "init-of-another-enum": (
        dict(more_vars='t = Var("t", St, init=Other.a)', extra_vars=", t"), ('Var("t"', 1),
        ["var t: its initial value Other.a (enum Other) is not of its domain enum St"]),
    "var-declared-twice": (
        dict(more_vars='n2 = Var("n", BOOL, init=False)', extra_vars=", n2"), ('Var("n"', 2),
        ["var n: another var has this name already", "give each var its own name"]),
    "table-status-names-no-var": (
        dict(status='"state"'), ('Table("RM"', 1),
        ["table RM: status names var 'state', which the spec does not declare"]),
    "assumption-rejects-the-config": (
        dict(assumptions='Assume(Config("rm") >= 3, "rm must be at least 3: raise it"),'),
        ('"rm must be at least 3: raise it"', 1),
        ["configuration rejected: rm must be at least 3: raise it", "choose values it accepts"]),
    "terminal-condition-that-is-not-boolean": (
        dict(extra="\n    terminal=n + 1,"), ("terminal=", 1),
        ["the terminal condition is not boolean: n + 1", "compare it with a value"]),
}


def write(folder, name: str, **slots) -> str:
    text = TEMPLATE.format(**{**SLOTS, **slots})
    (folder / f"{name}.py").write_text(text)
    return text


def line_of(text: str, needle: str, nth: int) -> int:
    at = -1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


def run_in_process(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """The user's folder (outside the repository), the working directory, as a user runs txncheck."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TXNCHECK_DEBUG", raising=False)
    return tmp_path


def test_the_template_is_a_valid_spec(user_dir, capsys):
    write(user_dir, "valid")
    code, err = run_in_process(capsys, "check", "./valid.py")
    assert code == 0, err
    code, err = run_in_process(capsys, "tables", "./valid.py", "--verify")
    assert code in (0, 1) and not err, err  # findings (exit 1) are the linter's verdict, not an error


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", [("check",), ("tables", "--verify")])
def test_a_mistake_is_named_at_its_file_and_line(user_dir, capsys, case, command):
    slots, (needle, nth), says = CASES[case]
    name = case.replace("-", "_")
    text = write(user_dir, name, **slots)
    code, err = run_in_process(capsys, command[0], f"./{name}.py", *command[1:])
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err, err
    assert err.startswith(f"txncheck: error: {name}.py:{line_of(text, needle, nth)}: "), err
    for phrase in says:
        assert phrase in err, err


def test_a_mistake_a_variant_makes_is_the_variants_when_it_is_run(user_dir, capsys):
    text = write(user_dir, "badvariant", edit='ReplaceUpdate("R-2", "s", Other.a)')
    code, err = run_in_process(capsys, "check", "./badvariant.py", "--variant", "commit-early")
    assert code == 2, err
    assert err.startswith(f"txncheck: error: badvariant.py:{line_of(text, 'Variant(', 1)}: variant commit-early: "
                          "row R-2 as the variant makes it: assigns Other.a (enum Other) to s[r]"), err


def test_a_value_that_leaves_its_domain_at_run_time_is_named_at_its_row(user_dir, capsys):
    text = write(user_dir, "runaway", more_vars='k = Var("k", N, init=0)', extra_vars=", k",
                 more_rows='Row("R-3", "RM", "count", updates=(k.set(k + 1),)),')
    line = line_of(text, 'Row("R-3"', 1)
    for engine in ("vector", "scalar"):
        code, err = run_in_process(capsys, "check", "./runaway.py", "--engine", engine)
        assert code == 2, err
        assert err.startswith(f"txncheck: error: runaway.py:{line}: row R-3: assigns 4 to k, outside its domain 0..3; "
                              "add a guard that keeps the value in range"), err


@pytest.mark.parametrize("slots, line_needle, says", [
    (dict(more_vars="oops = undefined_name + 1"), "oops =", "NameError: name 'undefined_name' is not defined"),
    (dict(guard="s[r] == St.prepared and n == 0"), "guard=(s[r] == St.prepared and", "use And(...)"),
    (dict(more_vars='bad = Var("bad", BOOL, index=RM, init=False)'), 'Var("bad"',
     "var bad: index must be a tuple of domains, e.g. index=(RM,)"),
    (dict(guard="s[r] == St.done"), "St.done", "AttributeError: enum St has no label done; its labels are working, "
                                               "prepared, committed"),
    (dict(more_props='Always("Cmp", "n == 0"),'), 'Always("Cmp"', "cannot use string 'n == 0' in an expression"),
])
def test_an_error_while_the_module_runs_is_the_users_at_its_line(user_dir, capsys, slots, line_needle, says):
    text = write(user_dir, "crash", **slots)
    code, err = run_in_process(capsys, "tables", "./crash.py", "--verify")
    assert code == 2, err
    assert err.startswith(f"txncheck: error: cannot load spec ./crash.py: line {line_of(text, line_needle, 1)}: "), err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_no_traceback_and_exit_2_from_the_command_line(tmp_path):
    """The same messages from the installed command, in a folder outside the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TXNCHECK_DEBUG")}
    for case in ("comparison-across-enums", "variant-drops-a-row-that-is-not-there"):
        slots, (needle, nth), says = CASES[case]
        text = write(tmp_path, "bad", **slots)
        for command in (("check",), ("tables", "--verify"), ("bmc", "--depth", "2")):
            p = subprocess.run([EXE, command[0], "./bad.py", *command[1:]], capture_output=True, text=True,
                               cwd=tmp_path, env=env, timeout=600)
            assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
            assert p.stderr.startswith(f"txncheck: error: bad.py:{line_of(text, needle, nth)}: {says[0]}"), p.stderr


# ---- the pieces ------------------------------------------------------------------------------------
def test_an_error_carries_its_subject_and_a_located_copy_leaves_it_as_raised():
    err = SpecError("is wrong; fix it", prop="P")
    assert str(err) == "property P: is wrong; fix it" and err.subject == Subject("property", "P")
    at = err.located("spec.py", 12)
    assert str(at) == "spec.py:12: property P: is wrong; fix it" and isinstance(at, SpecError)
    assert str(err) == "property P: is wrong; fix it" and err.location is None
    assert SpecError("x", "A-1").row == "A-1" and str(SpecError("x", "A-1", nth=2).subject) == "row A-1"
    assert ConfigError("--set expects KEY=VALUE").subject is None
    with pytest.raises(TypeError):
        SpecError("two subjects", "A-1", prop="P")


def test_definitions_are_found_across_lines_keywords_quotes_and_files(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text('x = 1\nrows = (\n    Row(\n        "A-1", "A", "t"),\n    Row(id=\'A-2\', actor="A"),\n'
                 '    Row("A-1", "A", "u"),\n)\nhelper("P-9")\n')
    b.write_text('Always("A-1", x)\nTable(actor="A", rows=rows)\n')
    files = (str(a), str(b))
    assert find(files, "row", "A-1") == (str(a), 3)           # the id on the next line
    assert find(files, "row", "A-2") == (str(a), 5)           # by keyword, single quotes
    assert find(files, "row", "A-1", nth=2) == (str(a), 6)    # the second definition
    assert find(files, "property", "A-1") == (str(b), 1)      # a property of that name, in another file
    assert find(files, "table", "A") == (str(b), 2)
    assert find(files, "row", "P-9") == (str(a), 8)           # no definition: the first literal
    assert find(files, "row", "Z-0") is None
