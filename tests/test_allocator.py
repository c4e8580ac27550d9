"""`checker/allocator.py`: inside `reused_memory()` an array freed and allocated again reuses pages the process
already has (no page faults), outside it every large array is mapped afresh; the allocator and numpy's
huge-page advice are as they were after the block, even when it raises; and a check gives the same result
in it as out of it."""
from __future__ import annotations

import resource

import numpy as np
import pytest

from txncheck.checker import allocator
from txncheck.checker.run import check_spec

MIB_64 = 64 << 20

needs_glibc = pytest.mark.skipif(allocator._LIBC is None, reason="the allocator controls are glibc's")


def faults_of_a_second_array() -> int:
    """Minor page faults taken to fill a 64 MiB array after one like it was filled and freed."""
    a = np.ones(MIB_64, dtype=np.uint8)
    del a
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    b = np.ones(MIB_64, dtype=np.uint8)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    del b
    return after - before


@needs_glibc
def test_freed_memory_is_reused_inside_the_block_and_given_back_outside():
    pages = MIB_64 // resource.getpagesize()
    with allocator.reused_memory():
        faults_of_a_second_array()  # the heap grows to hold one
        inside = faults_of_a_second_array()
    outside = faults_of_a_second_array()
    assert inside < pages // 100
    # a fresh mapping each time: at least one fault per huge page, usually one per page
    assert outside >= MIB_64 // (2 << 20)


def test_the_settings_are_restored_when_the_block_raises():
    toggle = allocator._hugepage_toggle()
    before = toggle(True) if toggle is not None else None
    with pytest.raises(RuntimeError):
        with allocator.reused_memory():
            if toggle is not None:
                assert toggle(False) is False  # the advice is off inside
            raise RuntimeError("inside")
    if toggle is not None:
        assert toggle(before) is True
    if allocator._LIBC is not None:
        assert faults_of_a_second_array() >= MIB_64 // (2 << 20)


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
