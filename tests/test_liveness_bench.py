"""The judging benchmark judges the whole graph: every graph property it prints has the outcome `check
--continue` gives. It once searched with the default options, which stop at the first violation, and timed
judging on the part of the graph found by then (on Kafka nightly: 259 K of 23.5 M states)."""
import os
import runpy
import sys

import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCHMARKS)
from liveness_bench import main  # noqa: E402  (a script of benchmarks/, not a package module)

CLIMB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "climb.py")  # its doc says why


def test_the_benchmark_judges_the_graph_check_continue_judges(capsys):
    result = check_spec(CLIMB, "small", options=ExploreOptions(stop_on_violation=False))
    outcomes = {p.name: p.outcome for p in result.properties}
    assert outcomes == {"BelowTwo": "violated", "TopReachable": "holds", "BackToZero": "violated"}
    main(CLIMB, "small")
    lines = capsys.readouterr().out.splitlines()
    assert "4 states" in lines[0] and "incomplete" not in lines[0]
    name, kind, verdict, *_ = lines[1].split()
    assert (name, kind, verdict) == ("TopReachable", "recoverable", "holds")
    assert lines[2].split()[:3] == ["BackToZero", "leads_to", "violated"] and len(lines) == 3


def test_a_misspelt_config_is_one_message_and_exit_2(capsys, monkeypatch):
    script = os.path.join(BENCHMARKS, "liveness_bench.py")
    monkeypatch.setattr(sys, "argv", [script, "kafka", "nope"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(script, run_name="__main__")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("liveness_bench: spec kafka has no config 'nope'; choose one of tiny, ") and "Traceback" not in err
