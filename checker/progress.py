"""The progress line on long runs, and process memory figures."""
from __future__ import annotations

import resource
import sys
import time


def peak_rss() -> int:
    """Peak resident set size of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Progress:
    """Prints `states, depth, states/s, memory` to stderr every `interval` seconds when enabled."""

    def __init__(self, options, engine: str, stream=None):
        self.enabled = options.progress
        self.interval = options.progress_interval
        self.engine = engine
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.last = self.t0
        self._count = 0

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

    def line(self, states, depth, generated, now=None):
        now = now or time.perf_counter()
        rate = states / max(now - self.t0, 1e-9)
        print(f"progress [{self.engine}]: {states:,} states, {generated:,} generated, depth {depth}, "
              f"{rate:,.0f} states/s, {peak_rss() / 2**20:,.0f} MiB peak", file=self.stream, flush=True)

    def done(self, states, depth, generated):
        if self.enabled:
            self.line(states, depth, generated)
