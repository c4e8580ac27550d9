"""The files a vector search spills to under `--memory-budget`: where they go, and columns appended in pieces.

`SpillDir` names the files (in the run's workdir, or a temporary directory) and removes every one it
named when closed, so a search that fails or finishes leaves nothing behind; it counts the bytes written
(the progress line's "spilled"). `Columns` holds named 1-D columns appended together, piece after piece
(the graph's edges, the property masks judged on it): in memory until `spill`, then one file per column,
appended to sequentially and read back memory-mapped.

Files are read with `np.fromfile` at an offset (a sequential read into an array the caller owns), not
through long-lived memory maps: pages of a map count as the process's resident memory for as long as it
is mapped, which is what a budget must bound.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np


class SpillDir:
    def __init__(self, workdir: str | None = None):
        self.workdir = workdir
        self._tmp = None
        self._count = 0
        self.files: set[str] = set()
        self.written = 0  # bytes written, over the search

    def directory(self) -> str:
        if self.workdir:
            os.makedirs(self.workdir, exist_ok=True)
            return self.workdir
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="txncheck-vector-")
        return self._tmp.name

    def new(self, stem: str) -> str:
        """The path of a new, empty file."""
        self._count += 1
        path = os.path.join(self.directory(), f"{stem}-{os.getpid()}-{self._count}.bin")
        open(path, "wb").close()
        self.files.add(path)
        return path

    def append(self, path: str, arr: np.ndarray) -> None:
        with open(path, "ab") as f:
            np.ascontiguousarray(arr).tofile(f)
        self.written += int(arr.nbytes)

    def remove(self, path: str) -> None:
        self.files.discard(path)
        try:
            os.unlink(path)
        except OSError:
            pass

    def close(self) -> None:
        for path in sorted(self.files):
            self.remove(path)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def read_rows(path: str, dtype, start: int, stop: int, width: int = 0) -> np.ndarray:
    """Entries [start, stop) of a file of `dtype` values (rows of `width` values when width > 0)."""
    dtype = np.dtype(dtype)
    per = max(width, 1)
    count = max(stop - start, 0) * per
    if count == 0:
        return np.zeros((0, width) if width else 0, dtype=dtype)
    out = np.fromfile(path, dtype=dtype, count=count, offset=start * per * dtype.itemsize)
    return out.reshape(-1, width) if width else out


def join(parts: list[np.ndarray], dtype=None) -> np.ndarray:
    """The parts end to end: a single part as it is (no copy), an empty array of `dtype` for none."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def mapped(path: str, dtype, length: int) -> np.ndarray:
    """The first `length` entries of a file, memory-mapped read-only (an empty array when there are none)."""
    if length == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(length,))


class Columns:
    """Named 1-D columns of equal length, appended to together."""

    def __init__(self, spill: SpillDir, dtypes: dict[str, np.dtype], stem: str):
        self.spill_dir = spill
        self.dtypes = {k: np.dtype(v) for k, v in dtypes.items()}
        self.stem = stem
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.dtypes}
        self.files: dict[str, str] | None = None
        self.length = 0

    def append(self, arrays: dict[str, np.ndarray]) -> None:
        n = {len(arrays[k]) for k in self.dtypes}
        if len(n) != 1:
            raise ValueError(f"columns of unequal length appended: {sorted(n)}")
        n = n.pop()
        if n == 0:
            return
        for k, dt in self.dtypes.items():
            a = np.asarray(arrays[k], dtype=dt)
            if self.files is not None:
                self.spill_dir.append(self.files[k], a)
            else:
                self.parts[k].append(a)
        self.length += n

    def memory_bytes(self) -> int:
        return int(sum(a.nbytes for parts in self.parts.values() for a in parts))

    @property
    def spilled(self) -> bool:
        return self.files is not None

    def spill(self) -> None:
        """Write what is in memory to the files; every later piece goes there directly."""
        if self.files is None:
            self.files = {k: self.spill_dir.new(f"{self.stem}-{i}") for i, k in enumerate(self.dtypes)}
        for k, parts in self.parts.items():
            for a in parts:
                self.spill_dir.append(self.files[k], a)
            self.parts[k] = []

    def slice(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Entries [start, stop) of every column (arrays never written to again)."""
        if self.files is not None:  # everything is in the files once spilled
            return {k: read_rows(self.files[k], dt, start, stop) for k, dt in self.dtypes.items()}
        out = {}
        for k, dt in self.dtypes.items():
            got, at = [], 0
            for a in self.parts[k]:
                lo, hi = max(start - at, 0), min(stop - at, len(a))
                if lo < hi:
                    got.append(a[lo:hi])
                at += len(a)
            out[k] = join(got, dt)
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """Every column whole: concatenated in memory, or (once spilled) its file memory-mapped."""
        if self.files is None:
            return {k: join(p, self.dtypes[k]) for k, p in self.parts.items()}
        self.spill()
        return {k: mapped(self.files[k], dt, self.length) for k, dt in self.dtypes.items()}

    def clear(self) -> None:
        self.parts = {k: [] for k in self.dtypes}
        if self.files is not None:
            for path in self.files.values():
                self.spill_dir.remove(path)
        self.files = None
        self.length = 0
