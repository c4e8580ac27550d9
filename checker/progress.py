"""The progress line on long runs, the estimate of what remains, and process memory figures."""
from __future__ import annotations

import os
import resource
import sys
import time
from dataclasses import dataclass
from typing import Sequence

# A level that keeps this much of the one before it or more gives no useful bound: the tail of a
# geometric series with ratio r holds r / (1 - r) levels' worth of states (19 at 0.95).
SLOWEST_RATIO = 0.95

# mapped data files' pages worth naming in the progress line (spill files; the interpreter's own are under 1 MiB)
MANY_MAPPED = 64 << 20


def peak_rss() -> int:
    """Peak resident set size of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_memory() -> tuple[int, int]:
    """(resident set size, the part of it that is pages of mapped data files) now, in bytes; (the peak, 0) where
    /proc is not there. Under `--memory-budget` the spill files are read through memory maps, whose pages the
    kernel counts as resident while it caches them and takes back when memory runs short: the budget bounds the
    rest."""
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return peak_rss(), 0
    return rss, _mapped_data_files()


def _mapped_data_files() -> int:
    """Resident bytes of the mapped files other than shared libraries (/proc/self/smaps): the libraries a run
    has loaded (z3, scipy, numpy) hold tens of MiB of their own, which say nothing about its data."""
    total, counting = 0, False
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                if line[0] in "0123456789abcdef":  # a mapping's first line; its fields' names start in capitals
                    fields = line.split(None, 5)
                    path = fields[5].strip() if len(fields) == 6 else ""  # none for anonymous memory
                    counting = path.startswith("/") and ".so" not in os.path.basename(path)
                elif counting and line.startswith("Rss:"):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


@dataclass(frozen=True)
class Remaining:
    """What the level sizes so far say about the rest of a breadth-first search.

    `states` is an upper bound on the states still to find, valid on the stated condition: every
    further level is at most `ratio` times the one before it, as the last one was. Breadth-first level
    sizes of the shipped models rise, peak, and fall ever faster (Kafka tiny's last ratios: 0.83, 0.78,
    0.71, 0.62, 0.52, ...), so the bound holds once they fall, and is loose early in the fall. A model
    whose levels grow again (Kafka ci falls from 12,925 to 6,812 states a level, then rises to 97,258)
    breaks the condition: the estimate is withdrawn while they grow. None when there is no estimate;
    `reason` says why."""

    states: int | None
    ratio: float | None
    reason: str | None = None


def estimate_remaining(levels: Sequence[int]) -> Remaining:
    """The estimate for level sizes `levels` (level 0 first; the last is the frontier)."""
    if len(levels) < 2:
        return Remaining(None, None, "no estimate yet")
    prev, last = int(levels[-2]), int(levels[-1])
    if last >= prev:
        return Remaining(None, None, "no estimate while levels grow")
    r = last / prev
    if r > SLOWEST_RATIO:
        return Remaining(None, r, f"levels shrink too slowly (x{r:.2f}) to bound what remains")
    # each further level at most floor(r · the one before), in integers (no rounding error), until one is empty
    total, x = 0, last * last // prev
    while x >= 1:
        total += x
        x = x * last // prev
    return Remaining(total, r)


def describe_remaining(est: Remaining, rate: float | None) -> str:
    if est.states is None:
        return est.reason or ""
    when = f", {_seconds(est.states / rate)}" if rate else ""
    return (f"at most {est.states:,} more states{when} if every level shrinks by x{est.ratio:.2f} "
            "or more, as the last did")


def _seconds(s: float) -> str:
    if s < 1:
        return "<1 s"
    if s < 90:
        return f"~{s:.0f} s"
    if s < 5400:
        return f"~{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


class Progress:
    """Prints a progress line to stderr every `interval` seconds when enabled.

    `tick` is for engines that count states one at a time (the scalar engine), `level` for the
    level-synchronous ones: level, states, rate, memory, bytes spilled to disk, and the estimate of what
    remains."""

    def __init__(self, options, engine: str, stream=None):
        self.enabled = options.progress
        self.interval = options.progress_interval
        self.engine = engine
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.last = self.t0
        self._count = 0
        self.base_states = 0  # states this process did not search (loaded from a checkpoint)
        self._peak = 0

    def tick(self, states: int, depth: int, generated: int) -> None:
        if not self.enabled:
            return
        self._count += 1
        if self._count & 1023:
            return
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self.last = now
            self.line(states, depth, generated, now)

    def rate(self, states: int, now: float | None = None) -> float:
        now = now or time.perf_counter()
        return max(states - self.base_states, 0) / max(now - self.t0, 1e-9)

    def line(self, states, depth, generated, now=None):
        now = now or time.perf_counter()
        print(f"progress [{self.engine}]: {states:,} states, {generated:,} generated, depth {depth}, "
              f"{self.rate(states, now):,.0f} states/s, {peak_rss() / 2**20:,.0f} MiB peak",
              file=self.stream, flush=True)

    def level(self, levels: Sequence[int], generated: int, spilled: int = 0, checkpoint: int | None = None,
              force: bool = False, final: str | None = None) -> None:
        """After a level: the line, if `interval` has passed since the last one (or `force`). `final`: what
        ended the search, said instead of an estimate."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        self.stream.write(self.level_line(levels, generated, spilled, checkpoint, now, final) + "\n")
        self.stream.flush()

    def level_line(self, levels: Sequence[int], generated: int, spilled: int = 0, checkpoint: int | None = None,
                   now: float | None = None, final: str | None = None) -> str:
        states = int(sum(levels))
        rate = self.rate(states, now)
        mib = 2**20
        parts = [f"progress [{self.engine}]: level {len(levels) - 1}, {states:,} states (+{int(levels[-1]):,})",
                 f"{generated:,} generated", f"{rate:,.0f} states/s", self._memory(),
                 f"{spilled / mib:,.0f} MiB spilled"]
        if checkpoint is not None:
            parts.append(f"{checkpoint / mib:,.0f} MiB checkpointed")
        if final:
            return ", ".join(parts) + f"; {final}"
        told = describe_remaining(estimate_remaining(levels), rate if states > self.base_states else None)
        return ", ".join(parts) + f"; remaining: {told}"

    def step(self, what: str) -> None:
        """A line for a step after the search (mapping the edges, judging a graph property): `what` and memory.
        Printed whatever the interval: these steps are few, and on a large graph each takes long enough that a
        silent one looks like a hang."""
        if not self.enabled:
            return
        self.last = time.perf_counter()
        self.stream.write(f"progress [{self.engine}]: {what}; {self._memory()}\n")
        self.stream.flush()

    def _memory(self) -> str:
        """The resident memory, its peak and, where there are many, the mapped data files' pages in it
        (`current_memory`); the peak as getrusage last saw it can trail a resident figure read after it, so it
        is the most either has shown."""
        rss, mapped = current_memory()
        self._peak = max(self._peak, peak_rss(), rss)
        mib = 2**20
        told = f"{rss / mib:,.0f} MiB resident ({self._peak / mib:,.0f} peak)"
        return told + (f", {mapped / mib:,.0f} MiB of it mapped files" if mapped >= MANY_MAPPED else "")

    def done(self, states, depth, generated):
        if self.enabled:
            self.line(states, depth, generated)
