"""`--memory-budget` bounds the vector engine's search: under an operating-system cap on the process's
data that the search does not fit in, the run without a budget stops out of memory (exit 3) and the run
with a small budget completes with the uncapped run's result.

Each run is the command line in a subprocess. Once txncheck and numpy are imported (so that the cap does
not reach the interpreter or the libraries), the child caps its data segment with RLIMIT_DATA at its
size then (`VmData`) plus a headroom. RLIMIT_DATA counts the heap and private writable mappings (numpy
arrays included), not the read-only maps of spill files. The cap bites: the same run without a budget
reaches it.

TwoPhase rm=8 (1,745,408 states, the widest level 244,342): without a budget the search needs about
140 MiB above the imports (the run completes from 144 MiB of headroom on; it stops out of memory at 128
and below), with `--memory-budget 8` about 32 MiB (it completes from 32 MiB on; it stops at 24),
measured on the development machine on 2026-11-29 (before the search kept its freed memory in the process,
`checker/allocator.py`, the run without a budget completed from 128); 80 MiB lies between, with room on
both sides.
"""
from __future__ import annotations

import os
import sys

import pytest
from capped_cli import run_capped, traces

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_DATA semantics are Linux's", allow_module_level=True)

MODEL = ("check", "twophase", "--set", "rm=8")
HEADROOM = 80 << 20
BUDGET = "8"

def run(tmp_path, out: str, headroom: int, *args) -> tuple[dict, str, dict | None]:
    return run_capped(tmp_path, MODEL, out, headroom, *args, label=" ".join(args) or "no budget")


def test_a_budget_completes_a_search_that_a_memory_cap_stops(tmp_path):
    ref_figures, _, ref = run(tmp_path, "ref", 0)
    assert ref_figures["code"] == 0 and ref["verdict"] == "pass" and ref["complete"]

    # the cap bites: without a budget the search reaches it and stops out of memory (exit 3)
    figures, err, capped = run(tmp_path, "capped", HEADROOM)
    assert figures["code"] == 3, err
    assert "ran out of the memory bound" in err and "--memory-budget" in err
    assert capped["verdict"] == "incomplete" and capped["stop_reason"] == "memory"
    assert capped["stats"]["distinct"] < ref["stats"]["distinct"]

    # with a budget the same cap holds the whole run: search, judging, writing
    figures, err, got = run(tmp_path, "budget", HEADROOM, "--memory-budget", BUDGET)
    assert figures["code"] == 0, err
    assert figures["data_end"] <= figures["data_cap"]
    assert got["stats"]["vector_spilled_bytes"] > 0 and got["stats"]["vector_chunks"] > len(got["stats"]["levels"])
    for key in ("verdict", "complete", "stop_reason", "properties", "coverage", "deadlock"):
        assert got[key] == ref[key], key
    for key in ("distinct", "generated", "depth", "levels"):
        assert got["stats"][key] == ref["stats"][key], key
    assert traces(tmp_path / "budget") == traces(tmp_path / "ref")
    assert sorted(e for e in os.listdir(tmp_path) if e.startswith(".txncheck-")) == []
