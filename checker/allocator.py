"""Keep the memory numpy frees inside the process while a check runs, instead of handing it back to the OS.

A search and its judging allocate and free arrays of tens to hundreds of megabytes many times a level.
glibc serves each one above its mmap threshold (at most 32 MiB) with a fresh mapping and unmaps it when it is
freed, so every array's pages are faulted in and zeroed by the kernel again; numpy also asks for transparent
huge pages on each one (madvise), which makes the kernel compact memory to find them. On Kafka nightly that
was 75 s of system time in a 186 s run (benchmarks/RESULTS.md, "The time after the search", 2026-11-29).

Inside `reused_memory()`, malloc serves every size from its heap and keeps what is freed for the next
array (M_MMAP_MAX 0, and no trimming of the heap's top: a threshold of 2 GiB, the most mallopt's int takes,
gave Kafka nightly's freed search arrays back as the search ended, and judging faulted 3 GiB in afresh),
every thread allocates from that one heap (M_ARENA_MAX 1: a thread's own arena would keep what it frees
from the others, and the vector engine maps edge targets in a thread of its own, `vector/targets.py`), and
numpy stops the huge-page advice. On the way out the defaults are restored and `malloc_trim` gives the free
memory back. So judging reuses the pages the search freed: on nightly it took 11.2-11.5 s against
20.3-20.7 with them given back, with the same peak (benchmarks/RESULTS.md, "Judging on the search's
pages"). Elsewhere than glibc (or numpy without the toggle) each part is a no-op: only speed depends on it.

Under a memory budget a check runs with malloc's defaults instead (`for_check`): a heap that keeps what is
freed is as large as its high-water mark, holes included, and all of it stays resident. Kafka nightly with
one produce delay under `--memory-budget 8000` held 11.7 GiB of heap resident, 5.7 GiB of it free
(benchmarks/RESULTS.md, "The memory budget bounds the resident memory again"). With the defaults every large
array is a mapping of its own, unmapped when it is freed, so the resident memory is what is in use; `release()`
gives back what the heap holds free between the search and judging.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from contextlib import contextmanager, nullcontext

# mallopt parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8
DEFAULT_MMAP_MAX = 65536
DEFAULT_ARENA_MAX = 0  # glibc's default: up to eight arenas a core, made as threads contend
DEFAULT_TRIM_THRESHOLD = 128 * 1024
NEVER_TRIM = -1  # mallopt's M_TRIM_THRESHOLD: -1 turns trimming off


def _glibc():
    """glibc's malloc controls, or None where the C library is another one."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both exist only in glibc
        libc.gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return None
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.malloc_trim.argtypes = (ctypes.c_size_t,)
    return libc


def _hugepage_toggle():
    """numpy's switch for its huge-page advice (`NUMPY_MADVISE_HUGEPAGE` at import time), or None."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return getattr(__import__(module, fromlist=["_set_madvise_hugepage"]), "_set_madvise_hugepage")
        except (ImportError, AttributeError):
            continue
    return None


_LIBC = _glibc()


def release() -> None:
    """Give the heap's free memory back to the OS (its pages are faulted in again when reused)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


@contextmanager
def reused_memory():
    """Freed arrays' memory stays in the heap for the next ones until the block ends (see the module)."""
    toggle = _hugepage_toggle()
    hugepage = toggle(False) if toggle is not None else None
    if _LIBC is not None:
        _LIBC.mallopt(M_MMAP_MAX, 0)
        _LIBC.mallopt(M_TRIM_THRESHOLD, NEVER_TRIM)
        _LIBC.mallopt(M_ARENA_MAX, 1)
    try:
        yield
    finally:
        if _LIBC is not None:
            _LIBC.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
            _LIBC.mallopt(M_ARENA_MAX, DEFAULT_ARENA_MAX)
            _LIBC.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
            _LIBC.malloc_trim(0)
        if toggle is not None:
            toggle(hugepage)


def for_check(memory_budget: int | None):
    """The allocator's settings a check runs under: `reused_memory()` without a memory budget, malloc's defaults
    under one (see the module)."""
    return reused_memory() if memory_budget is None else nullcontext()
