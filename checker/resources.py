"""The process's memory bound (`check --max-memory`) and the advice given when a search reaches it.

The bound is RLIMIT_DATA: Linux counts every private writable mapping against it (numpy arrays
included), so an allocation past it fails with MemoryError, which the engines turn into an
incomplete search instead of the kernel's OOM killer ending the process with no word.
"""
from __future__ import annotations

import os
import resource
from dataclasses import dataclass

from txncheck.spec.errors import ConfigError

DEFAULT_SHARE = 0.8  # of the machine's (or the cgroup's) memory, leaving room for the OS and the page cache

ADVICE = ("give a smaller configuration or --max-states, --symmetry where the spec declares symmetry, "
          "--memory-budget MB so the vector engine spills its visited set, levels and edges to disk, a larger "
          "--max-memory, "
          "or the Spark engine (--engine spark) for models that outgrow one machine")


def machine_memory() -> int:
    """Bytes of memory this process may use: physical memory, or the cgroup's limit when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def default_max_memory() -> int:
    return int(machine_memory() * DEFAULT_SHARE)


def visited_budget(limit: int) -> int:
    """Where the vector engine's visited set spills to disk under a memory bound when no --memory-budget is
    given: a quarter of it (nothing else spills then, and the search runs as fast as in memory)."""
    return limit // 4


@dataclass(frozen=True)
class BudgetSplit:
    """How the vector engine shares its memory budget (bytes). Each part, once it outgrows its share, goes
    to files in the run's workdir and is read back sequentially."""

    visited: int     # the visited set: sorted fingerprints and per-state records
    frontier: int    # the level being expanded (its states' cells and fingerprints)
    next_level: int  # the level being built: each chunk's new states, then the merged level
    chunk: int       # one chunk's working set: its successor candidates, their sort and deduplication
    graph: int       # the edges and property masks kept for recoverable, eventually and leads_to properties

    @property
    def judging(self) -> int:
        """What judging the graph properties may hold after the search: the shares of the frontier and the
        next level, which the search no longer holds then."""
        return self.frontier + self.next_level


def split_budget(budget: int) -> BudgetSplit:
    """--memory-budget M, shared: a quarter each for the visited set, the frontier and the next level; an eighth each for a chunk's
    candidates and for the graph."""
    return BudgetSplit(visited=budget // 4, frontier=budget // 4, next_level=budget // 4, chunk=budget // 8,
                       graph=budget // 8)


def parse_megabytes(option: str, value: str | int | None) -> int | None:
    """`--max-memory`/`--memory-budget` in MiB (a positive integer) as bytes."""
    if value is None:
        return None
    try:
        mb = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{option} takes a size in MiB, a positive integer; got {value!r}") from None
    if mb < 1:
        raise ConfigError(f"{option} takes a size in MiB, a positive integer; got {mb}")
    return mb * 2**20


class memory_bound:
    """`with memory_bound(limit):` bounds this process's data memory to `limit` bytes (never above a
    limit already in force) and restores the previous bound afterwards (the CLI may run in-process)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.previous = None

    def __enter__(self) -> "memory_bound":
        self.previous = resource.getrlimit(resource.RLIMIT_DATA)
        soft, hard = self.previous
        limit = self.limit
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        return self

    def __exit__(self, *exc) -> None:
        resource.setrlimit(resource.RLIMIT_DATA, self.previous)


def out_of_memory_message(limit: int | None) -> str:
    bound = f"the memory bound ({limit / 2**20:,.0f} MiB)" if limit else "the available memory"
    return f"the check (its search or its judging) ran out of {bound}; {ADVICE}"


def memory_limit() -> int | None:
    """The memory bound in force (data or address space, `ulimit -d`/`-v`), if any."""
    limits = [resource.getrlimit(r)[0] for r in (resource.RLIMIT_DATA, resource.RLIMIT_AS)]
    finite = [int(x) for x in limits if x != resource.RLIM_INFINITY]
    return min(finite) if finite else None
