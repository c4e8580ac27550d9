"""Several initial states (TLA+'s `x \\in S` in Init): `OneOf`, `ANY` and `Spec.init` constraints, on every
explicit engine, with and without symmetry; traces that start from the initial state they need, replay that
checks step 0 is one; the symbolic engines' clear refusal; mistakes in the declaration."""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import replace

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec import loader
from txncheck.spec.domains import BOOL
from txncheck.spec.errors import ConfigError, SpecError
from txncheck.spec.expr import ANY, OneOf, Var
from txncheck.spec.request import ModelRequest
from txncheck.traces.replay import replay
from txncheck.traces.schema import Trace

HERE = os.path.dirname(__file__)
LAMPS = os.path.join(HERE, "models", "lamps.py")


def _brute_force(n: int):
    """(initial states, reachable states) of tests/models/lamps.py, enumerated by hand from its doc."""
    inits = {(on, mode) for on in itertools.product((0, 1), repeat=n) for mode in (0, 1) if sum(on) <= 1}
    seen, todo = set(inits), list(inits)
    while todo:
        on, mode = todo.pop()
        nxt = []
        for i in range(n):
            if not on[i] and sum(on) == 0:
                nxt.append((on[:i] + (1,) + on[i + 1:], mode))
            if on[i]:
                nxt.append((on[:i] + (0,) + on[i + 1:], mode))
        if mode == 1:
            nxt.append((on, 2))
        for t in nxt:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return inits, seen


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_initial_states_are_every_allowed_combination(n):
    m = ModelRequest.of(LAMPS, "tiny", {"n": n}, None).ground()
    inits, _ = _brute_force(n)
    assert set(m.initial_states) == {on + (mode,) for on, mode in inits}
    assert list(m.initial_states) == sorted(m.initial_states) and m.init == m.initial_states[0]


@pytest.mark.parametrize("engine", ["vector", "scalar"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_engines_explore_every_initial_state(engine, n):
    inits, reach = _brute_force(n)
    r = check_spec(LAMPS, "tiny", {"n": n}, engine=engine)
    assert r.verdict == "pass"
    assert r.stats["levels"][0] == len(inits) and r.stats["distinct"] == len(reach)
    sym = check_spec(LAMPS, "tiny", {"n": n}, engine=engine, options=ExploreOptions(symmetry=True))
    assert sym.verdict == "pass" and sym.stats["distinct"] < len(reach) or n == 1


@pytest.mark.parametrize("symmetry", [False, True])
def test_a_trace_starts_from_the_initial_state_it_needs_and_replays(symmetry):
    traces = {}
    for engine in ("vector", "scalar"):
        r = check_spec(LAMPS, "tiny", variant="no-check", engine=engine, options=ExploreOptions(symmetry=symmetry))
        assert r.outcome_of("AtMostOne").outcome == "violated"
        tr = r.traces["AtMostOne"]
        assert tr.length == 1  # one lamp starts lit, another is turned on: not possible from the first initial state
        assert sum(tr.steps[0].state["on"].values()) == 1
        assert replay(tr).confirmed
        d = tr.to_json()
        d.pop("engine")
        traces[engine] = d
    assert traces["vector"] == traces["scalar"]


def test_replay_refuses_a_step_0_that_is_no_initial_state():
    tr = check_spec(LAMPS, "tiny", variant="no-check").traces["AtMostOne"]
    d = tr.to_json()
    d["steps"][0]["state"]["mode"] = "boost"  # boost is reachable, but not initial
    report = replay(Trace.from_json(d))
    assert not report.confirmed and "not one of the spec's 8 initial states" in report.message


def test_bmc_and_k_induction_start_from_every_initial_state(tmp_path, txncheck_cli):
    # the shortest violation starts from an initial state with one lamp lit: depth 1, as the explicit search says
    code, out, err = txncheck_cli("bmc", LAMPS, "--variant", "no-check", "--depth", "3", "--out", str(tmp_path / "b"))
    assert code == 1 and "AtMostOne: VIOLATED at depth 1" in out, out + err
    tr = Trace.from_json(json.loads((tmp_path / "b" / "traces" / "AtMostOne.json").read_text()))
    assert sum(tr.steps[0].state["on"].values()) == 1 and replay(tr).confirmed
    code, out, err = txncheck_cli("bmc", LAMPS, "--induction", "2", "--out", str(tmp_path / "k"))
    assert code == 0 and "AtMostOne: proved" in out, out + err
    code, out, err = txncheck_cli("tables", LAMPS, "--verify")
    assert code == 0, err


def test_the_encodings_that_take_one_initial_state_say_so(txncheck_cli):
    for extra in (["--pdr"], ["--induction", "1", "--lemmas"], ["--depth", "3", "--from-depth", "2", "--refute-below"]):
        code, out, err = txncheck_cli("bmc", LAMPS, *extra)
        assert code == 2 and "8 initial states" in err and "txncheck check" in err and "Traceback" not in err, extra


def _spec_with(**changes):
    base = loader.resolve(LAMPS).spec
    return replace(base, **changes)


def test_mistakes_in_initial_values_are_one_clear_error():
    with pytest.raises(SpecError, match="at least one value"):
        OneOf()
    base = loader.resolve(LAMPS).spec
    never = _spec_with(init=(base.properties[0].expr, base.vars[1] == base.vars[1].domain.boost))
    with pytest.raises(SpecError, match="no initial state"):
        check_spec(never, "tiny")
    with pytest.raises(SpecError, match="tuple of conditions"):
        check_spec(_spec_with(init=base.properties[0].expr), "tiny")
    wide = _spec_with(vars=base.vars + tuple(Var(f"b{k}", BOOL, index=(base.vars[0].index[0],), init=ANY)
                                              for k in range(7)))
    with pytest.raises(SpecError, match="more than 1,000,000"):
        check_spec(wide, "tiny")


def test_the_houdini_pass_needs_a_candidate_true_in_every_initial_state():
    from txncheck.checker.symbolic.lemmas import houdini
    from txncheck.spec.expr import Not
    from txncheck.spec.model import Always
    spec = loader.resolve(LAMPS).spec
    on = spec.vars[0]
    # "lamp l1 is dark" holds in the first initial state and is kept by every step, but not in every initial state
    dark = replace(spec, properties=spec.properties + (Always("Dark", Not(on[0])),))
    m = ModelRequest.of(dark, "tiny", {}, None).ground()
    props = {p.name: p for p in m.properties}
    _, kept, _, dropped = houdini(m, [], properties=[props["AtMostOne"], props["Dark"]])
    assert [p.name for p in kept] == ["AtMostOne"] and dropped == 1


def test_checkpoints_record_every_initial_state(tmp_path, txncheck_cli):
    code, out, err = txncheck_cli("check", LAMPS, "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "a"))
    assert code == 0, err
    code, out, err = txncheck_cli("check", LAMPS, "--resume", str(tmp_path / "ck"), "--out", str(tmp_path / "b"))
    assert code == 0, err
    a = json.loads((tmp_path / "a" / "result.json").read_text())
    b = json.loads((tmp_path / "b" / "result.json").read_text())
    assert a["stats"]["levels"] == b["stats"]["levels"] == [8, 4]
