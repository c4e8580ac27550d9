"""`--memory-budget` bounds judging the `recoverable` properties too: under an operating-system cap on the
process's data that the budgeted search fits in, judging them over the in-memory reverse graph runs out of
memory (exit 3, no result), and the out-of-core reverse graph (`checker/vector/reverse.py`) completes with
the unbudgeted run's result and traces, leaving no file behind.

As in test_vector_memory.py (the harness: capped_cli.py), each run is the command line in a subprocess that caps its data segment
(RLIMIT_DATA, which counts numpy's arrays and not the read-only maps of spill files) at its size after the
imports plus a headroom. The in-memory judging is chosen in the child by switching the out-of-core choice
off, everything else equal.

Kafka ci with two timeouts (2,534,126 states, 7.8 M edges) and its three recoverable properties under
`--memory-budget 16`, measured on the development machine on 2026-11-27 (verification per batch, §3.11): with
the out-of-core graph the run completes from 320 MiB of headroom on (at 300 the budgeted search stops); with the
in-memory graph it needs 400 (it stops in judging at 350). 350 lies between: 50 MiB above the out-of-core path's
last failure, 50 below the in-memory path's first success, and both runs were measured at 350 itself.

Likewise for `leads_to` (LIVE-4 on the same model): under `--memory-budget 800` (judging's share, 400 MiB, holds
the restricted graph of `checker/vector/live.py`, 1.08 M states and 3.6 M edges, and not the whole graph's
judging) the restricted judging completes from 700 MiB of headroom on (at 650 the budgeted search itself
stops), and judging the whole graph in memory needs 800 (it stops in judging at 700 and 750). 750 lies between,
with 50 MiB to the whole graph's first success and 100 to the restricted path's last failure.

These margins follow the model: a change to the Kafka spec that widens the state or adds states moves them
(they were 280 and 550 under `--memory-budget 640` before), so re-measure them with the runs above when this
test fails after a model change.
"""
from __future__ import annotations

import os
import sys

import pytest
from capped_cli import run_capped, traces

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_DATA semantics are Linux's", allow_module_level=True)

MODEL = ("check", "kafka", "--config", "ci", "--set", "timeouts=2",
         "--property", "LIVE-1", "--property", "LIVE-2", "--property", "LIVE-3")
HEADROOM = 350 << 20
BUDGET = ("--memory-budget", "16")

IMPORT = "from txncheck.checker.vector import reverse"
# the in-memory judging: the out-of-core choice switched off, everything else equal
SETUP = {"default": IMPORT, "in-memory": IMPORT + "\nreverse.JudgingGraph.out_of_core = lambda self: False"}


def run(tmp_path, out: str, headroom: int, judging: str, *args) -> tuple[dict, str, dict | None]:
    return run_capped(tmp_path, MODEL, out, headroom, *args, setup=SETUP[judging], label=f"{judging} {' '.join(args)}",
                      timeout=900)


@pytest.mark.long  # three runs of ci timeouts=2, about a minute
def test_judging_out_of_core_completes_a_run_that_a_memory_cap_stops_in_judging(tmp_path):
    ref_figures, _, ref = run(tmp_path, "ref", 0, "default")
    assert ref_figures["code"] == 0 and ref["verdict"] == "pass" and ref["complete"]
    assert "judge_spilled_bytes" not in ref["stats"]  # without a budget the graph is built in memory

    # the cap bites on judging: the budgeted search fits, the in-memory reverse graph does not
    figures, err, capped = run(tmp_path, "capped", HEADROOM, "in-memory", *BUDGET)
    assert figures["code"] == 3 and capped is None, err
    assert "ran out of the memory bound" in err

    figures, err, got = run(tmp_path, "budget", HEADROOM, "default", *BUDGET)
    assert figures["code"] == 0, err
    assert figures["data_end"] <= figures["data_cap"]
    assert got["stats"]["judge_spilled_bytes"] > 0 and got["stats"]["vector_spilled_bytes"] > 0
    for key in ("verdict", "complete", "stop_reason", "properties", "coverage", "deadlock"):
        assert got[key] == ref[key], key
    for key in ("distinct", "generated", "depth", "levels"):
        assert got["stats"][key] == ref["stats"][key], key
    assert traces(tmp_path / "budget") == traces(tmp_path / "ref")
    assert sorted(e for e in os.listdir(tmp_path) if e.startswith(".txncheck-")) == []  # no spill file left


LIVE_MODEL = ("check", "kafka", "--config", "ci", "--set", "timeouts=2", "--property", "LIVE-4")
LIVE_HEADROOM = 750 << 20
LIVE_BUDGET = ("--memory-budget", "800")
LIVE_IMPORT = "from txncheck.checker.vector import live"
# the whole graph judged in memory: the restricted graph's choice switched off, everything else equal
LIVE_SETUP = {"default": LIVE_IMPORT, "in-memory": LIVE_IMPORT + "\nlive.out_of_core = lambda outcome, budget: False"}


@pytest.mark.long
def test_leads_to_on_the_restricted_graph_completes_a_run_that_a_memory_cap_stops_in_judging(tmp_path):
    def run_live(out, headroom, judging, *args):
        return run_capped(tmp_path, LIVE_MODEL, out, headroom, *args, setup=LIVE_SETUP[judging],
                          label=f"{judging} {' '.join(args)}", timeout=900)

    ref_figures, _, ref = run_live("ref", 0, "default")
    assert ref_figures["code"] == 0 and ref["verdict"] == "pass" and ref["complete"]

    figures, err, capped = run_live("capped", LIVE_HEADROOM, "in-memory", *LIVE_BUDGET)
    assert figures["code"] == 3 and capped is None, err  # no result: stopped in judging, not in the search
    assert "ran out of the memory bound" in err

    figures, err, got = run_live("budget", LIVE_HEADROOM, "default", *LIVE_BUDGET)
    assert figures["code"] == 0, err
    assert figures["data_end"] <= figures["data_cap"]
    assert got["stats"]["judge_spilled_bytes"] > 0  # the restricted graph's files
    for key in ("verdict", "complete", "stop_reason", "properties", "coverage", "deadlock"):
        assert got[key] == ref[key], key
    for key in ("distinct", "generated", "depth", "levels"):
        assert got["stats"][key] == ref["stats"][key], key
    assert traces(tmp_path / "budget") == traces(tmp_path / "ref")
    assert sorted(e for e in os.listdir(tmp_path) if e.startswith(".txncheck-")) == []
