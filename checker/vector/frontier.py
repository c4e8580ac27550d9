"""One level's states, in fingerprint order, in memory or on disk: the frontier a level is expanded from,
and the next level as it is built.

In memory a level is the kernel's matrix (`cols`, one row per cell, w × n) with its fingerprints (and,
with symmetry, its fingerprints under every permutation), exactly what the unbudgeted search keeps.
A level expanded in chunks is the runs the chunks left (`merge.py`: disjoint, each sorted, the states in
the kernel's columns, in memory or, beyond the next level's share of the budget, in files), read back run
after run in the order they were made, with each state's row in fingerprint order beside it (`rank`, 8
bytes a state): no transpose and no merge (the transposes and the merge of rows were a fifth of Kafka
nightly's search under a budget). A level rebuilt from a checkpoint beyond its share is one file of rows
in fingerprint order. Either way the files are written and read sequentially; fingerprints stay in
memory (8 bytes a state).

A level the search without a budget materialised is in its parents' order instead (`rank` set): its
columns in the order their parents were copied, which reads the frontier sequentially where fingerprint
order reads it at random (on Kafka nightly that copy was a third of the search), with each column's row
in fingerprint order beside it. Its `fps` and `P` are in the columns' order; the expansion reads `rank`
wherever it names a state (the least-key rule, the edges' sources, deadlocks). Such a level is only ever
expanded whole, in memory. A level of runs has `rank` too, its `fps` in fingerprint order, and each chunk's
fingerprints read from its runs.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..lookup import distinct
from .kernel import VectorKernel
from .layout import cols_of, rows_of
from .merge import Run
from .spill import SpillDir, join, read_rows

_U64 = np.uint64


class LevelStates:
    def __init__(self, kernel: VectorKernel, fps: np.ndarray, cols: np.ndarray | None = None,
                 P: np.ndarray | None = None, rows: np.ndarray | None = None, path: str | None = None,
                 spill: SpillDir | None = None, runs: list[Run] | None = None, rank: np.ndarray | None = None):
        self.kernel = kernel
        self.fps = fps
        self.rank = rank  # each column's row in fingerprint order; None: the columns are in that order
        self.cols, self.P = cols, P  # in memory, the kernel's layout
        self.rows = rows             # in memory, row-major
        self.path, self.spill = path, spill  # on disk, row-major
        self.runs = runs  # the runs of a chunked expansion, in their order (`rank` set)
    @staticmethod
    def empty(kernel: VectorKernel) -> "LevelStates":
        P = np.zeros((kernel.G, 0) if kernel.symmetric else 0, dtype=_U64)
        return LevelStates(kernel, np.zeros(0, dtype=_U64), cols=np.zeros((kernel.width, 0), dtype=kernel.dtype), P=P)

    @staticmethod
    def of(kernel: VectorKernel, cols: np.ndarray, fps: np.ndarray, P: np.ndarray, spill: SpillDir,
           share: int | None, rank: np.ndarray | None = None) -> "LevelStates":
        """A level materialised whole: kept as it is, or written to disk when it exceeds `share` bytes (only
        a level in fingerprint order, `rank` None, has a share)."""
        level = LevelStates(kernel, fps, cols=cols, P=P, rank=rank)
        if share is not None and level.nbytes() > share:
            if rank is not None:
                raise AssertionError("internal: a level in its parents' order has no share to spill to")
            path = spill.new("level")
            for a in range(0, len(fps), 1 << 16):
                spill.append(path, rows_of(cols[:, a:a + (1 << 16)]))
            return LevelStates(kernel, fps, path=path, spill=spill)
        return level

    @property
    def n(self) -> int:
        return len(self.fps)

    @property
    def on_disk(self) -> bool:
        return self.path is not None or any(r.on_disk for r in self.runs or ())

    def nbytes(self) -> int:
        """Bytes in memory."""
        return int(sum(a.nbytes for a in (self.fps, self.cols, self.P, self.rows, self.rank) if a is not None)
                   + sum(r.nbytes() for r in self.runs or ()))

    def _rows(self, start: int, stop: int) -> np.ndarray:
        if self.rows is not None:
            return self.rows[start:stop]
        return read_rows(self.path, self.kernel.dtype, start, stop, self.kernel.width)

    def _run_cols(self, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(columns, fingerprints) of the runs' states in the runs' order, `size` states at a time."""
        cols, fps, count = [], [], 0
        for run in self.runs:
            p = 0
            while p < run.n:
                q = min(run.n, p + size - count)
                cols.append(run.read_cols("cols", p, q))
                fps.append(run.read("fps", p, q))
                count += q - p
                p = q
                if count == size:
                    yield (cols[0] if len(cols) == 1 else np.concatenate(cols, axis=1)), join(fps)
                    cols, fps, count = [], [], 0
        if count:
            yield (cols[0] if len(cols) == 1 else np.concatenate(cols, axis=1)), join(fps)

    def _perm_fps(self, cols: np.ndarray, fps: np.ndarray) -> np.ndarray:
        if self.kernel.symmetric:
            return self.kernel.perm_fps_cols(cols)  # the same function that gave them when the states were made
        return fps

    def chunks(self, size: int) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """(first row, states as the kernel's columns, their fingerprints under the group (or plain), their
        canonical fingerprints) for each chunk of `size` states in order; the whole level at once when it is
        in memory and fits one chunk."""
        n = self.n
        if self.cols is not None and size >= n:
            yield 0, self.cols, self.P, self.fps
            return
        size = max(size, 1)
        if self.runs is not None:
            a = 0
            for cols, fps in self._run_cols(size):
                yield a, cols, self._perm_fps(cols, fps), fps
                a += len(fps)
            return
        if self.rank is not None:
            raise AssertionError("internal: a level in its parents' order is expanded whole")
        for a in range(0, n, size):
            b = min(a + size, n)
            if self.cols is not None:
                yield a, self.cols[:, a:b], self.P[..., a:b], self.fps[a:b]
            else:
                cols = cols_of(self._rows(a, b))
                yield a, cols, self._perm_fps(cols, self.fps[a:b]), self.fps[a:b]

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The states at the sorted distinct `rows`, as the kernel's columns."""
        if self.rank is not None:  # a search's level, never read by row (a replay reads rebuilt levels)
            raise AssertionError("internal: a level in its parents' or its runs' order is not read by row")
        if self.cols is not None:
            return self.cols[:, rows]
        if self.rows is not None:
            return cols_of(self.rows[rows])
        mm = np.memmap(self.path, dtype=self.kernel.dtype, mode="r", shape=(self.n, self.kernel.width))
        try:
            return cols_of(mm[rows])
        finally:
            del mm  # unmapped at once: its pages leave the resident set

    def close(self) -> None:
        if self.path is not None:
            self.spill.remove(self.path)
        for r in self.runs or ():
            r.remove(self.spill)
        self.cols = self.P = self.rows = self.path = self.runs = self.rank = None


class LevelWriter:
    """Builds a level from blocks of rows given in fingerprint order: in memory up to `share` bytes, then in
    a file."""

    def __init__(self, kernel: VectorKernel, spill: SpillDir, share: int | None):
        self.kernel, self.spill, self.share = kernel, spill, share
        self.blocks: list[np.ndarray] = []
        self.fps: list[np.ndarray] = []
        self.path = None
        self.held = 0

    def add(self, rows: np.ndarray, fps: np.ndarray) -> None:
        self.fps.append(fps)
        if self.path is not None:
            self.spill.append(self.path, rows)
            return
        self.blocks.append(rows)
        self.held += rows.nbytes + fps.nbytes
        if self.share is not None and self.held > self.share:
            self.path = self.spill.new("level")
            for block in self.blocks:
                self.spill.append(self.path, block)
            self.blocks = []

    def finish(self) -> LevelStates:
        fps = join(self.fps, _U64)
        if self.path is not None:
            return LevelStates(self.kernel, fps, path=self.path, spill=self.spill)
        if not self.blocks:
            return LevelStates.empty(self.kernel)
        return LevelStates(self.kernel, fps, rows=join(self.blocks))


def rebuild(kernel: VectorKernel, prev: LevelStates, parents: np.ndarray, actions: np.ndarray, spill: SpillDir,
            share: int | None, block: int) -> LevelStates:
    """The level whose states are the successors of `prev`'s rows `parents` by `actions` (a checkpoint's
    record), in that order; at once when `prev` is in memory and the level fits its share, else `block`
    states at a time, each reading the parents it needs in row order."""
    k = len(parents)
    if prev.rank is not None:  # a record names parents by fingerprint row; a replay rebuilds in that order only
        raise AssertionError("internal: a checkpoint's level rebuilt from a level in its parents' order")
    if prev.cols is not None and (share is None or k <= block):
        cols, fps, P = kernel.successors_cols(prev.cols, parents, actions)
        return LevelStates.of(kernel, cols, fps, P, spill, share)
    writer = LevelWriter(kernel, spill, share)
    for a in range(0, k, max(block, 1)):
        rows = parents[a:a + block]
        need = distinct(rows)  # numpy 2.4's unique hashes: 40x slower on a block of rows
        cols, fps, _ = kernel.successors_cols(prev.take(need), np.searchsorted(need, rows), actions[a:a + block])
        writer.add(rows_of(cols), fps)
    return writer.finish()
