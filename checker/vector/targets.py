"""The edges' targets mapped to store indices level by level, beside the search, in a thread of its own.

An edge found expanding level d leads to a state of level d+1 or earlier, so once level d+1 is stored every
target of level d's edges has its index: the position of its fingerprint in its level (each level is stored
sorted by fingerprint) plus the level's first index. On Kafka nightly 85% of the edges lead to the next level,
7% to their own and 8% back one level or more, so each target is looked for in level d+1 first, then d, d-1,
and so on: a lookup in one level's few megabytes (held in the caches) rather than in every stored state.

The search itself runs on one core: here the second core maps each level's targets while the next level is
expanded, and the fingerprints of the mapped targets are let go (8 bytes an edge, for 4). On nightly that was
the 5 s (10 on a slow day) between the search's end and judging (benchmarks/RESULTS.md, "Targets mapped beside
the search"). numpy releases the interpreter's lock inside its loops, which is where the time goes.

The result does not depend on timing: it is the stored order's index of each target, computed the same
way whichever thread runs first. An error in the thread (out of memory) is raised in the search's thread at
the next level or at the end (`wait`), where the search handles it as its own.
"""
from __future__ import annotations

import queue
import threading

import numpy as np

from ..lookup import directory, find_sorted, search_sorted
from .spill import join

_U64 = np.uint64
BLOCK = 1 << 20  # targets looked up at a time: about 40 MiB of temporaries beside the search's
WINDOW = 4       # levels whose directories are kept: d+1, d, d-1, d-2 while level d's targets are mapped


class LevelTargets:
    """Maps the targets of each expansion's edges as soon as the level after it is stored (`add`), in a
    daemon thread (a Ctrl-C ends the process without it)."""

    def __init__(self, block: int = BLOCK):
        self.block = block
        self.levels: list[np.ndarray] = []  # each level's fingerprints, sorted (the store's own arrays)
        self.starts: list[int] = [0]        # each level's first store index
        self.parts: list[np.ndarray] = []   # the mapped targets, in the edges' order
        self._dirs: dict[int, tuple] = {}   # a level's directory, for the window of recent levels
        self._jobs: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def level(self, fps: np.ndarray) -> None:
        """Level len(levels) is stored: its fingerprints, ascending (kept, not copied)."""
        self.levels.append(fps)
        self.starts.append(self.starts[-1] + len(fps))

    def add(self, source_level: int, targets: list[np.ndarray]) -> None:
        """Map `targets` (fingerprints, in the edges' order) of the edges expanded from `source_level`, every
        one of them stored by now; raises what the thread raised for an earlier expansion."""
        self._raise()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="txncheck-edge-targets", daemon=True)
            self._thread.start()
        # the levels a target can be in, as they stand now: the thread reads no list the search appends to
        self._jobs.put((source_level, list(self.levels), list(self.starts), targets))

    def wait(self) -> None:
        """Until every target given so far is mapped; raises what the thread raised."""
        self._jobs.join()
        self._raise()

    def result(self, dtype) -> np.ndarray:
        """Every target's store index, in the edges' order, as `dtype` (after `wait`)."""
        self.wait()
        parts, self.parts = self.parts, []
        return join(parts, dtype)

    def close(self) -> None:
        """Let the targets go and stop the thread, without waiting for it: it leaves the job it is on at its
        next block (a Ctrl-C or an error does not wait for a mapping nobody reads)."""
        self._closed = True
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None
        self.parts, self.levels = [], []

    def _raise(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._error is None and not self._closed:  # after an error the search stops on it
                    self._map(*job)
            except BaseException as err:  # noqa: BLE001 - handed to the search's thread, which raises it
                self._error = err
            finally:
                self._jobs.task_done()

    def _map(self, d: int, levels: list[np.ndarray], starts: list[int], targets: list[np.ndarray]) -> None:
        idx = np.int32 if starts[-1] < 2**31 else np.int64
        order = range(min(d + 1, len(levels) - 1), -1, -1)  # the next level, its own, then further back
        for old in [k for k in self._dirs if k < d - WINDOW + 2]:
            del self._dirs[old]
        for part in targets:
            for a in range(0, len(part), self.block):
                if self._closed:
                    return
                q = np.asarray(part[a:a + self.block], dtype=_U64)
                out = np.empty(len(q), dtype=idx)
                rest = np.arange(len(q), dtype=np.int64)
                for t in order:
                    pos, ok = self._find(t, levels[t], q if len(rest) == len(q) else q[rest])
                    out[rest[ok]] = pos[ok] + starts[t]
                    rest = rest[~ok]
                    if not len(rest):
                        break
                if len(rest):
                    raise RuntimeError(f"internal error: {len(rest):,} edge targets of level {d} are not stored")
                self.parts.append(out)

    def _find(self, t: int, u: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position, found) of each of `q` in level `t`'s fingerprints `u`: by a directory for a level of the
        window (most queries), by binary search for the few that go further back."""
        if len(u) > 1 and (t in self._dirs or 8 * len(q) >= len(u)):
            if t not in self._dirs:
                self._dirs[t] = directory(u, np.int32 if len(u) < 2**31 else np.int64)
            return find_sorted(u, q, self._dirs[t])
        return search_sorted(u, q)
