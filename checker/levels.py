"""The breadth-first search's rules, owned once for every explicit engine.

An engine expands and deduplicates one level at a time and reports what it found; `LevelRules`
decides, from those facts alone, whether the search goes on and, when it stops, whether it was
complete and why (`checker/outcome.py` states the rules). The scalar, vector and Spark engines
all advance the same object, the vector and Spark engines also when they replay a resumed run's
records, so the three cannot disagree about when a search stops, nor a resumed search with the
one it continues.

`Findings` chooses among equals: which violating, witnessing or deadlocked state a property's trace
ends in. Engines offer each checked level's candidates (the Spark engine each task's least, since a
level is split over tasks); the first level with a candidate wins, and within it the least
fingerprint, so the choice does not depend on how a level was expanded or split.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .outcome import ExploreOptions

VIOLATION, WITNESS, DEADLOCK = "violation", "witness", "deadlock"


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


@dataclass
class Findings:
    """For each always property its violating state, for each sometimes property its witness, and the
    deadlocked state: the least fingerprint of the first level that has one. A state is named by `ref`,
    whatever the engine locates it by (a store index; Spark: (level, fingerprint))."""
    chosen: dict[tuple[str, str], tuple[int, int | None, object]] = field(default_factory=dict)

    def open(self, kind: str, name: str, level: int) -> bool:
        """Whether a candidate of `level` can still be chosen (nothing was at an earlier level)."""
        got = self.chosen.get((kind, name))
        return got is None or got[0] >= level

    def offer(self, kind: str, name: str, level: int, fp: int, ref) -> bool:
        """One candidate; True if it is the first chosen for (kind, name), which is what makes a level
        violating."""
        key = (kind, name)
        got = self.chosen.get(key)
        if got is not None and (got[0] < level or got[1] is None or (got[0] == level and got[1] <= fp)):
            return False
        self.chosen[key] = (level, int(fp), ref)
        return got is None

    def offer_least(self, kind: str, name: str, level: int, fps: np.ndarray, refs) -> bool:
        """The least-fingerprint candidate among `fps` (unsigned), named by the matching entry of `refs`."""
        if not len(fps):
            return False
        i = int(np.argmin(np.asarray(fps, dtype=np.uint64)))
        return self.offer(kind, name, level, int(fps[i]), refs[i])

    def restore(self, kind: str, name: str, level: int, ref) -> None:
        """A choice recorded by an earlier run of the same search (a checkpoint's record)."""
        self.chosen[(kind, name)] = (level, None, ref)

    def locate(self, level: int, where) -> None:
        """Name the states chosen at `level` by `where(fingerprint)`: for an engine that checks a level's
        states before it knows where it stores them (the vector engine's chunks offer fingerprints)."""
        for key, (lvl, fp, ref) in list(self.chosen.items()):
            if lvl == level and fp is not None:
                self.chosen[key] = (lvl, fp, where(fp))

    def refs(self, kind: str) -> dict[str, object]:
        return {name: got[2] for (k, name), got in sorted(self.chosen.items()) if k == kind}

    def deadlock(self):
        got = self.chosen.get((DEADLOCK, ""))
        return None if got is None else got[2]

    def keep(self, wanted) -> None:
        """Forget the choices whose ref fails `wanted` (states dropped when memory ran out)."""
        self.chosen = {k: v for k, v in self.chosen.items() if wanted(v[2])}
