"""The breadth-first search's rules, owned once for every explicit engine.

An engine expands and deduplicates one level at a time and reports what it found; `LevelRules`
decides, from those facts alone, whether the search goes on and, when it stops, whether it was
complete and why (`checker/outcome.py` states the rules). The scalar, vector and Spark engines
all advance the same object, the vector and Spark engines also when they replay a resumed run's
records, so the three cannot disagree about when a search stops, nor a resumed search with the
one it continues.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .outcome import ExploreOptions


@dataclass
class LevelRules:
    options: ExploreOptions
    levels: list[int] = field(default_factory=list)  # states per depth
    complete: bool = True
    stop_reason: str | None = None
    finished: bool = False

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def total(self) -> int:
        return int(sum(self.levels))

    def at_limit(self) -> bool:
        """The next expansion is of level max_depth: it only tells whether unvisited successors exist."""
        return self.options.max_depth is not None and self.depth >= self.options.max_depth

    def _stop(self, reason: str) -> None:
        self.complete, self.stop_reason, self.finished = False, reason, True

    def initial(self, size: int, violated: bool) -> None:
        """Level 0 is stored and checked; `violated`: an always property fails in it."""
        self.levels = [int(size)]
        if violated and self.options.stop_on_violation:
            self._stop("violation")

    def advance(self, new: int, violated: bool, limit: bool = False) -> None:
        """One expansion of the last level. `new`: states stored at the next depth (at the depth limit:
        successors not yet visited, none stored); `violated`: a new always-violation among them, or a
        deadlock among the expanded states."""
        if limit:
            if new:
                self._stop("max_depth")
            self.finished = True
            return
        if new:
            self.levels.append(int(new))
        else:
            self.finished = True  # an empty frontier: every reachable state is visited
        if violated and self.options.stop_on_violation:
            self._stop("violation")
            return
        ms = self.options.max_states
        if not self.finished and ms is not None and self.total >= ms:
            self._stop("max_states")

    def out_of_memory(self, checked_levels: int) -> None:
        """The process reached its memory bound mid-level: keep the levels checked so far."""
        del self.levels[checked_levels:]
        self._stop("memory")
