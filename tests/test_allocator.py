"""`checker/allocator.py`: inside `reused_memory()` an array freed and allocated again reuses pages the process
already has (no page faults), even what is freed at the heap's top beyond the largest trim threshold mallopt
could set; outside it every large array is mapped afresh; a check runs inside it without a memory budget
and outside it under one; the allocator and numpy's
huge-page advice are as they were after the block, even when it raises; and a check gives the same result
in it as out of it.

The page-fault tests run in a fresh interpreter: in a process whose heap already holds large free chunks
(any earlier test's search in the same pytest worker), glibc serves a large array from them before it
considers a new mapping, inside the block or not."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from txncheck.checker import allocator
from txncheck.checker.run import check_spec

needs_glibc = pytest.mark.skipif(allocator._LIBC is None, reason="the allocator controls are glibc's")

CHILD = textwrap.dedent("""
    import json, resource, sys, threading
    import numpy as np
    from txncheck.checker import allocator

    MIB_64 = 64 << 20

    def faults_of_a_second_array():
        # minor page faults taken to fill a 64 MiB array after one like it was filled and freed
        a = np.ones(MIB_64, dtype=np.uint8)
        del a
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        b = np.ones(MIB_64, dtype=np.uint8)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        del b
        return after - before

    toggle = allocator._hugepage_toggle()
    out = {"pages": MIB_64 // resource.getpagesize(), "huge_pages": MIB_64 // (2 << 20)}
    if sys.argv[1] == "reuse":
        with allocator.reused_memory():
            faults_of_a_second_array()  # the heap grows to hold one
            out["inside"] = faults_of_a_second_array()
        out["outside"] = faults_of_a_second_array()
    elif sys.argv[1] == "top":
        # 2.25 GiB freed at the heap's top, never touched (np.empty: no page is faulted in), so only the data
        # segment's size shows whether malloc trimmed it
        def vm_data():
            return next(int(l.split()[1]) << 10 for l in open("/proc/self/status") if l.startswith("VmData:"))
        size = 9 << 28
        with allocator.reused_memory():
            a = np.empty(size, dtype=np.uint8)
            held = vm_data()
            del a
            out["inside"] = held - vm_data()
        out["after"] = held - vm_data()
        out["size"] = size
    elif sys.argv[1] == "thread":
        def fill_and_free():
            a = np.ones(MIB_64, dtype=np.uint8)
            del a
        with allocator.reused_memory():
            t = threading.Thread(target=fill_and_free)
            t.start()
            t.join()
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            b = np.ones(MIB_64, dtype=np.uint8)
            out["inside"] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
            del b
    elif sys.argv[1] == "check":
        # inside a check, right after its search: is a freed array's memory kept for the next one?
        from txncheck.checker import engines
        from txncheck.checker.outcome import ExploreOptions
        from txncheck.checker.run import check_spec
        explore = engines.explore
        def explore_then_measure(*args):
            outcome = explore(*args)
            faults_of_a_second_array()  # the heap grows to hold one, where it keeps what is freed
            out[str(budget)] = faults_of_a_second_array()
            return outcome
        engines.explore = explore_then_measure
        for budget in (None, 64):
            check_spec("twophase", "tiny", options=ExploreOptions(stop_on_violation=False, memory_budget=budget))
    else:
        before = toggle(True) if toggle is not None else None
        try:
            with allocator.reused_memory():
                out["advice_inside"] = toggle(False) if toggle is not None else None
                raise RuntimeError("inside")
        except RuntimeError:
            pass
        out["advice_after"] = toggle(before) if toggle is not None else None
        out["outside"] = faults_of_a_second_array()
    print(json.dumps(out))
""")


def child(mode: str) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@needs_glibc
def test_freed_memory_is_reused_inside_the_block_and_given_back_outside():
    got = child("reuse")
    assert got["inside"] < got["pages"] // 100
    # a fresh mapping each time: at least one fault per huge page, usually one per page
    assert got["outside"] >= got["huge_pages"]


@needs_glibc
def test_the_heap_keeps_what_is_freed_at_its_top_however_large_until_the_block_ends():
    """No trimming inside the block: Kafka nightly's search frees more than 2 GiB (the largest threshold
    mallopt's int could set) at the heap's top as it ends, which judging then reuses; on the way out it
    goes back to the OS."""
    got = child("top")
    assert got["inside"] < got["size"] // 100
    assert got["after"] >= got["size"] * 9 // 10


@needs_glibc
def test_a_check_keeps_freed_memory_without_a_memory_budget_and_gives_it_back_under_one():
    """Under a budget the heap must not keep what is freed: its holes would stay resident beside what is in
    use (Kafka nightly with one delay under --memory-budget 8000: 11.7 GiB resident, 5.7 GiB of it free)."""
    got = child("check")
    assert got["None"] < got["pages"] // 100
    assert got["64"] >= got["huge_pages"]


def test_the_search_gives_its_pages_back_before_judging_under_a_memory_budget_only(monkeypatch):
    """Without a budget judging reuses the pages the search freed; under one, pages kept but not reused would
    count against it, so they go back first."""
    from txncheck.checker import run
    from txncheck.checker.outcome import ExploreOptions

    calls = []
    monkeypatch.setattr(run.allocator, "release", lambda: calls.append(1))
    for budget, expected in ((None, []), (64, [1])):
        calls.clear()
        got = check_spec("twophase", "tiny", options=ExploreOptions(stop_on_violation=False, memory_budget=budget))
        assert got.verdict == "pass" and calls == expected


@needs_glibc
def test_memory_a_thread_freed_is_reused_by_the_main_thread_inside_the_block():
    """One heap for every thread (the vector engine maps edge targets in one of its own): in an arena of its
    own, what a thread frees would stay there while the search's thread faults in pages afresh."""
    got = child("thread")
    assert got["inside"] < got["pages"] // 100


def test_the_settings_are_restored_when_the_block_raises():
    got = child("raise")
    if allocator._hugepage_toggle() is not None:
        assert got["advice_inside"] is False  # the advice is off inside
        assert got["advice_after"] is True
    if allocator._LIBC is not None:
        assert got["outside"] >= got["huge_pages"]


def test_a_check_in_the_block_is_the_check_out_of_it():
    """`check` runs in the block: the same counts and verdict as a search run in a plain process state."""
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import build_model
    from txncheck.checker.vector.explore import explore

    result = check_spec("twophase", "tiny", {"rm": 4}.items(), variant="commit-without-all-prepared",
                        options=ExploreOptions(stop_on_violation=False))
    plain = explore(build_model("twophase", "tiny", {"rm": 4}.items(), "commit-without-all-prepared"),
                    ExploreOptions(stop_on_violation=False))
    assert result.verdict == "violation"
    assert result.stats["distinct"] == plain.distinct
    assert result.stats["levels"] == list(plain.level_sizes)
