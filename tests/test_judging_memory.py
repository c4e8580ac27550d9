"""`--memory-budget` bounds judging the `recoverable` properties too: under an operating-system cap on the
process's data that the budgeted search fits in, judging them in memory (`recoverable.EdgeSweep`) runs out of
memory (exit 3, no result), and the out-of-core reverse graph (`checker/vector/reverse.py`) completes with
the unbudgeted run's result and traces, leaving no file behind.

As in test_vector_memory.py (the harness: capped_cli.py), each run is the command line in a subprocess that caps its data segment
(RLIMIT_DATA, which counts numpy's arrays and not the read-only maps of spill files) at its size after the
imports plus a headroom. The in-memory judging is chosen in the child by switching the out-of-core choice
off, everything else equal.

Both tests use tests/models/counters.py (the leads_to test its `big` config, 4 counters of 0..39: 2,560,001 states,
20 M edges; the recoverable test its `wide` config), whose sizes do not move with the Kafka spec: they ran on Kafka's ci with two timeouts until the Kafka changes of 2026-11-27 (producer
id rotation, CONCURRENT_TRANSACTIONS first) moved that model's sizes, and with them the margins, once more.
Measured on the development machine on 2026-11-27:

- `recoverable` (CanReset, judged over the reverse graph) under `--memory-budget 16`, on the `wide` config (6
  counters of 0..11, about 33 M edges): with the out-of-core graph the run completes from 275 MiB of headroom on (it
  runs out at 200 and 250); with the in-memory graph it needs 400 (it runs out at 250, 300 and 350). HEADROOM =
  325 lies between: 75 MiB above the out-of-core path's last failure, 75 below the in-memory path's first success.
  Measured on 2026-11-29, and the same on 2026-12-03 once the in-memory judging became `EdgeSweep` (its paths
  to the goal go back through every level, so the first sweep hands every edge to the search by destination,
  which holds what the reverse graph held: it runs out at 350 and completes at 400). The test used the `big`
  config until then; there, once the edges' targets came to be
  mapped without copies and held in 32 bits, the in-memory graph completed from 250 MiB as the out-of-core one did
  (both ran out at 200), so it no longer showed the difference.
- `leads_to` (Rearmed, judged on the restricted graph of `checker/vector/live.py`: the not-Q states reachable
  from P and not Q, one state here) under `--memory-budget 200`: the restricted judging completes from 250 MiB of
  headroom on (at 150 and 200 the budgeted search stops), and judging the whole graph in memory needs 1200 (it
  runs out at 300, 450 and 800). LIVE_HEADROOM = 450 lies between, 200 above the restricted path's last failure
  and 750 below the whole graph's first success. Measured on 2026-11-29, when judging in memory came to look only
  at the edges that leave a not-Q state: Acknowledged, which this test used before, has one not-Q state, so its
  whole-graph judging now fits wherever the restricted one does (from 250 on); Rearmed's not-Q states are
  almost all of them.
- `leads_to` (Alarmed, violated, its restricted graph every state but the alarm's: 2,560,000 states, about 20 M
  edges) under `--memory-budget 400`, the restricted graph judged in files (`checker/vector/live_disk.py`, the
  default there: gathered it would need about 1.2 GB) or gathered into memory (the estimates switched off):
  in files the run completes from 350 MiB of headroom on (it runs out at 300), gathered it needs 1000 (it runs out
  at 450, 600 and 800). FILES_HEADROOM = 550 lies between, 250 above the files' last failure and 450 below the
  gathered graph's first success. Measured on 2026-12-04.

Re-measure with the runs above if the engine's memory use changes (the margins are this machine's).
"""
from __future__ import annotations

import os
import sys

import pytest
from capped_cli import run_capped, traces

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_DATA semantics are Linux's", allow_module_level=True)

COUNTERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "counters.py")
MODEL = ("check", COUNTERS, "--config", "wide", "--property", "CanReset")
HEADROOM = 325 << 20
BUDGET = ("--memory-budget", "16")

IMPORT = "from txncheck.checker.vector import reverse"
# the in-memory judging: the out-of-core choice switched off, everything else equal
SETUP = {"default": IMPORT, "in-memory": IMPORT + "\nreverse.JudgingGraph.out_of_core = lambda self: False"}


def run(tmp_path, out: str, headroom: int, judging: str, *args) -> tuple[dict, str, dict | None]:
    return run_capped(tmp_path, MODEL, out, headroom, *args, setup=SETUP[judging], label=f"{judging} {' '.join(args)}",
                      timeout=900)


@pytest.mark.long  # three runs of counters wide, about a minute
def test_judging_out_of_core_completes_a_run_that_a_memory_cap_stops_in_judging(tmp_path):
    ref_figures, _, ref = run(tmp_path, "ref", 0, "default")
    assert ref_figures["code"] == 0 and ref["verdict"] == "pass" and ref["complete"]
    assert "judge_spilled_bytes" not in ref["stats"]  # without a budget the graph is built in memory

    # the cap bites on judging: the budgeted search fits, judging in memory does not
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


LIVE_MODEL = ("check", COUNTERS, "--config", "big", "--property", "Rearmed")
LIVE_HEADROOM = 450 << 20
LIVE_BUDGET = ("--memory-budget", "200")
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


FILES_MODEL = ("check", COUNTERS, "--config", "big", "--property", "Alarmed")
FILES_HEADROOM = 550 << 20
FILES_BUDGET = ("--memory-budget", "400")
# the restricted graph gathered into memory whatever its size: its estimate switched off
FILES_SETUP = {"default": LIVE_IMPORT,
               "gathered": LIVE_IMPORT + "\nlive.EDGE_BYTES = live.STATE_BYTES = live.PAIR_BYTES = live.FIXED_BYTES = 0"}


@pytest.mark.long
def test_a_restricted_graph_judged_in_files_completes_a_run_that_a_memory_cap_stops_when_it_is_gathered(tmp_path):
    """The restricted graph in files holds a few bytes a state (`live_disk.py`), where gathering it into memory
    holds tens of bytes an edge: under the cap only the files complete, with the unbudgeted run's lasso."""
    def run_files(out, headroom, judging, *args):
        return run_capped(tmp_path, FILES_MODEL, out, headroom, *args, setup=FILES_SETUP[judging],
                          label=f"{judging} {' '.join(args)}", timeout=900)

    ref_figures, _, ref = run_files("ref", 0, "default")
    assert ref_figures["code"] == 1 and ref["verdict"] == "violation" and ref["complete"]

    figures, err, capped = run_files("capped", FILES_HEADROOM, "gathered", *FILES_BUDGET)
    assert figures["code"] == 3 and capped is None, err
    assert "ran out of the memory bound" in err

    figures, err, got = run_files("budget", FILES_HEADROOM, "default", *FILES_BUDGET)
    assert figures["code"] == 1, err
    assert figures["data_end"] <= figures["data_cap"]
    assert got["stats"]["judge_spilled_bytes"] > 0
    for key in ("verdict", "complete", "stop_reason", "properties", "coverage", "deadlock"):
        assert got[key] == ref[key], key
    assert traces(tmp_path / "budget") == traces(tmp_path / "ref")
    assert sorted(e for e in os.listdir(tmp_path) if e.startswith(".txncheck-")) == []
