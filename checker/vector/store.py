"""The vector engine's visited set: sorted uint64 fingerprint blocks, and per-state records.

Membership: one in-memory sorted array (merged with each new level in O(n), no re-sort) plus any
number of sorted blocks spilled to disk (memory-mapped, read by binary search with sorted
queries). Records, in BFS order: fingerprint (8 bytes), parent index (int32, or int64 beyond
2^31 states) and action id (int32): 16 bytes, plus 8 for the sorted copy, so 24 bytes per visited
state. Nothing here holds Python objects per state.

When a memory budget is set and the in-memory arrays exceed it, the sorted block is written to
`workdir` and memory-mapped, and records are appended to files from then on, instead of failing.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np

_U64 = np.uint64


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


def contains_sorted(block: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Membership of the (sorted) queries q in a sorted block."""
    if len(block) == 0 or len(q) == 0:
        return np.zeros(len(q), dtype=bool)
    i = np.searchsorted(block, q)
    i[i == len(block)] = len(block) - 1
    return block[i] == q


class VisitedStore:
    def __init__(self, budget: int | None = None, workdir: str | None = None):
        self.budget = budget
        self.workdir = workdir
        self._tmp = None
        self.mem = np.zeros(0, dtype=_U64)
        self.disk: list[np.ndarray] = []  # memory-mapped sorted blocks
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
            rest = ~hit
            if rest.any():
                hit[rest] = contains_sorted(blk, q_sorted[rest])
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
            for f, arr, dt in zip(self._files, rec, (_U64, np.int64, np.int32)):
                with open(f, "ab") as fh:
                    fh.write(arr.astype(dt).tobytes())
                self.spilled_bytes += arr.nbytes
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
    def _dir(self) -> str:
        if self.workdir:
            os.makedirs(self.workdir, exist_ok=True)
            return self.workdir
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="txncheck-vector-")
        return self._tmp.name

    def spill(self) -> None:
        """Write the in-memory sorted block (and the records) to disk and memory-map them."""
        d = self._dir()
        if len(self.mem):
            path = os.path.join(d, f"visited-{os.getpid()}-{self.spills}.u64")
            self.mem.tofile(path)
            self.spilled_bytes += self.mem.nbytes
            self.disk.append(np.memmap(path, dtype=_U64, mode="r"))
            self.mem = np.zeros(0, dtype=_U64)
        if self._files is None:
            self._files = tuple(os.path.join(d, f"records-{os.getpid()}-{k}.bin") for k in ("fps", "parent", "action"))
            for f in self._files:
                open(f, "wb").close()
        for f, parts, dt in zip(self._files, (self._fps, self._parent, self._action), (_U64, np.int64, np.int32)):
            with open(f, "ab") as fh:
                for arr in parts:
                    fh.write(arr.astype(dt).tobytes())
                    self.spilled_bytes += arr.nbytes
        self._fps, self._parent, self._action = [], [], []
        self.spills += 1
        if len(self.disk) > 4:  # keep membership tests cheap: merge spilled blocks
            merged = self.disk[0]
            for blk in self.disk[1:]:
                merged = merge_sorted(np.asarray(merged), np.asarray(blk))
            path = os.path.join(d, f"visited-{os.getpid()}-m{self.spills}.u64")
            merged.tofile(path)
            old = self.disk
            self.disk = [np.memmap(path, dtype=_U64, mode="r")]
            for blk in old:
                fn = blk.filename
                del blk
                try:
                    os.unlink(fn)
                except OSError:
                    pass

    # -- results ------------------------------------------------------------------------------
    def records(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fps uint64, parent int64, action int32) in BFS order."""
        if self._files is not None:
            f = np.fromfile(self._files[0], dtype=_U64)
            p = np.fromfile(self._files[1], dtype=np.int64)
            a = np.fromfile(self._files[2], dtype=np.int32)
            parts = (f, p, a)
            tail = (self._fps, self._parent, self._action)
            return tuple(np.concatenate([x] + [t.astype(x.dtype) for t in ts]) for x, ts in zip(parts, tail))
        if not self._fps:
            return np.zeros(0, _U64), np.zeros(0, np.int64), np.zeros(0, np.int32)
        return (np.concatenate(self._fps), np.concatenate(self._parent).astype(np.int64),
                np.concatenate(self._action))

    def close(self) -> None:
        names = [blk.filename for blk in self.disk]
        self.disk = []
        for f in names:
            try:
                os.unlink(f)
            except OSError:
                pass
        if self._files is not None:
            for f in self._files:
                try:
                    os.unlink(f)
                except OSError:
                    pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
