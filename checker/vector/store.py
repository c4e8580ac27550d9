"""The vector engine's visited set: sorted uint64 fingerprint blocks, and per-state records.

Membership: one in-memory sorted array (merged with each new level in O(n), no re-sort) plus any
number of sorted blocks spilled to disk. Records, in BFS order: fingerprint (8 bytes), parent index (int32, or int64 beyond
2^31 states) and action id (int32): 16 bytes, plus 8 for the sorted copy, so 24 bytes per visited
state. Nothing here holds Python objects per state.

When a memory budget is set and the in-memory arrays exceed it, the sorted block is written to
the spill directory and records are appended to files from then on, instead of failing. A spilled block is
searched a section at a time (sequential reads, only the sections some query falls in, found by a
fence of every section's first fingerprint kept in memory), so its pages are not part of the
process's resident memory; more than four blocks are merged into one as a stream, reading ahead
from each block no more than the budget allows.
"""
from __future__ import annotations

import numpy as np

from ..lookup import contains_sorted
from .merge import Run, merge_runs, read_ahead
from .spill import SpillDir, mapped, read_rows

_U64 = np.uint64
SECTION = 1 << 20  # fingerprints of a spilled block read at a time (8 MiB)
MERGE_AT = 5  # spilled blocks merged into one when there are this many


def merge_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Merge two sorted, disjoint uint64 arrays in O(len(a) + len(b))."""
    if len(a) == 0:
        return b.copy()
    if len(b) == 0:
        return a
    # numpy's stable sort is a timsort for 64-bit keys: on two sorted runs it is a linear merge
    out = np.concatenate((a, b))
    out.sort(kind="stable")
    return out


class _Block:
    """A sorted block of fingerprints in a file, and the first fingerprint of each of its sections."""

    def __init__(self, path: str, n: int):
        self.path, self.n = path, int(n)
        self.fence = np.concatenate([read_rows(path, _U64, i, i + 1) for i in range(0, self.n, SECTION)]) \
            if self.n else np.zeros(0, dtype=_U64)

    def contains(self, q: np.ndarray) -> np.ndarray:
        """Membership of the sorted queries q."""
        hit = np.zeros(len(q), dtype=bool)
        cut = np.append(np.searchsorted(q, self.fence, side="left"), len(q))
        for i in np.flatnonzero(cut[1:] > cut[:-1]):
            lo, hi = cut[i], cut[i + 1]
            section = read_rows(self.path, _U64, i * SECTION, min((i + 1) * SECTION, self.n))
            hit[lo:hi] = contains_sorted(section, q[lo:hi])
        return hit


class VisitedStore:
    def __init__(self, budget: int | None = None, workdir: str | None = None, spill: SpillDir | None = None):
        self.budget = budget
        self._own = spill is None
        self.dir = spill if spill is not None else SpillDir(workdir)
        self.mem = np.zeros(0, dtype=_U64)
        self.disk: list[_Block] = []  # spilled sorted blocks
        self.count = 0
        self._fps: list[np.ndarray] = []
        self._parent: list[np.ndarray] = []
        self._action: list[np.ndarray] = []
        self._files = None  # (fps, parent, action) record files once spilled
        self.spills = 0
        self.spilled_bytes = 0
        self.peak_bytes = 0

    # -- membership ---------------------------------------------------------------------------
    def contains(self, q_sorted: np.ndarray) -> np.ndarray:
        hit = contains_sorted(self.mem, q_sorted)
        for blk in self.disk:
            rest = np.flatnonzero(~hit)
            if not len(rest):
                break
            hit[rest] = blk.contains(q_sorted[rest])
        return hit

    # -- records ------------------------------------------------------------------------------
    def add_level(self, fps_sorted: np.ndarray, parent: np.ndarray, action: np.ndarray) -> None:
        n = len(fps_sorted)
        self.mem = merge_sorted(self.mem, fps_sorted)
        self.count += n
        pdt = np.int32 if self.count < 2**31 else np.int64
        parent = np.asarray(parent, dtype=np.int64)
        if pdt is np.int64 and self._parent and self._parent[0].dtype != np.int64:
            self._parent = [p.astype(np.int64) for p in self._parent]
        rec = (np.asarray(fps_sorted, dtype=_U64), parent.astype(pdt), np.asarray(action, dtype=np.int32))
        if self._files is not None:
            self._write_records([rec[0]], [rec[1]], [rec[2]])
        else:
            self._fps.append(rec[0])
            self._parent.append(rec[1])
            self._action.append(rec[2])
        self.peak_bytes = max(self.peak_bytes, self.memory_bytes())
        if self.budget is not None and self.memory_bytes() > self.budget:
            self.spill()

    def memory_bytes(self) -> int:
        return int(self.mem.nbytes + sum(a.nbytes for a in self._fps) + sum(a.nbytes for a in self._parent)
                   + sum(a.nbytes for a in self._action))

    def nbytes(self) -> int:
        """Bytes of the visited store, in memory and on disk."""
        return self.memory_bytes() + self.spilled_bytes

    # -- spilling -----------------------------------------------------------------------------
    def _write_records(self, fps, parent, action) -> None:
        for path, parts, dt in zip(self._files, (fps, parent, action), (_U64, np.int64, np.int32)):
            for arr in parts:
                self.dir.append(path, arr.astype(dt, copy=False))
                self.spilled_bytes += arr.nbytes

    def _flush_records(self) -> None:
        """Append the records held in memory to the record files."""
        self._write_records(self._fps, self._parent, self._action)
        self._fps, self._parent, self._action = [], [], []

    def spill(self) -> None:
        """Write the in-memory sorted block (and the records) to disk."""
        if len(self.mem):
            path = self.dir.new("visited")
            self.dir.append(path, self.mem)
            self.spilled_bytes += self.mem.nbytes
            self.disk.append(_Block(path, len(self.mem)))
            self.mem = np.zeros(0, dtype=_U64)
        if self._files is None:
            self._files = tuple(self.dir.new(f"records-{k}") for k in ("fps", "parent", "action"))
        self._flush_records()
        self.spills += 1
        if len(self.disk) >= MERGE_AT:  # keep membership tests cheap: merge spilled blocks
            path = self.dir.new("visited")
            runs = [Run(b.n, files={"fps": (b.path, np.dtype(_U64), 0)}) for b in self.disk]
            n = 0
            # a merge step holds about five copies of what it read (the reads, their concatenation, its
            # order, the merged block)
            for block in merge_runs(runs, read_ahead(self.budget, len(runs), 8, 5)):
                self.dir.append(path, block["fps"])
                n += len(block["fps"])
            for b in self.disk:
                self.dir.remove(b.path)
            self.disk = [_Block(path, n)]

    # -- results ------------------------------------------------------------------------------
    def records(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fps uint64, parent int64, action int32) in BFS order; memory-mapped once spilled."""
        if self._files is not None:
            self._flush_records()
            return tuple(mapped(path, dt, self.count)
                         for path, dt in zip(self._files, (_U64, np.int64, np.int32)))
        if not self._fps:
            return np.zeros(0, _U64), np.zeros(0, np.int64), np.zeros(0, np.int32)
        return (np.concatenate(self._fps), np.concatenate(self._parent).astype(np.int64),
                np.concatenate(self._action))

    def close(self) -> None:
        self.disk = []
        if self._own:
            self.dir.close()
        else:
            for path in self._files or ():
                self.dir.remove(path)
        self._files = None
