"""Runs sorted by fingerprint, and their merge in blocks of bounded size.

A run is a sequence of entries sorted by their `fps` column (uint64, distinct within the run) with
other columns beside it (1-D, 2-D rows, or `cols`: the kernel's columns, one row per cell), held in
memory or in files (one per column, laid out as in memory, so reading a run forward is one sequential read
per column, or per cell of `cols`). The expansion of a level in chunks leaves one run per chunk (its new
states: fingerprint, the states in the kernel's columns, property masks), read back in the runs' order as
the next frontier; the visited store's spilled blocks are runs of fingerprints alone, merged.

`merge_runs` reads every run forward, a buffer of fingerprints at a time, and gives blocks in
fingerprint order: each block holds, from every run, the entries up to the least "last fingerprint
loaded" among the runs not loaded to their end. A run's entries beyond its buffer are greater than that
bound, so equal fingerprints always meet in one block; among them the entry of the earliest run comes
first (a stable sort of the runs concatenated in order), and only that one is kept.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ..lookup import group_starts
from .spill import SpillDir, read_cols, read_rows

_U64 = np.uint64
READ_AHEAD = 1 << 20       # entries read ahead from each run merged, at most (and without a budget)
MIN_READ_AHEAD = 4096      # however small the budget: below this, numpy's per-call costs dominate


def read_ahead(share: int | None, runs: int, entry: int, copies: int) -> int:
    """Entries to read ahead from each of `runs` runs merged (`entry` bytes each) so that the `copies` of
    them a merge step holds fit in `share` bytes."""
    if share is None:
        return READ_AHEAD
    return max(MIN_READ_AHEAD, min(READ_AHEAD, share // (copies * max(runs, 1) * entry)))


class Run:
    def __init__(self, n: int, columns: dict[str, np.ndarray] | None = None,
                 files: dict[str, tuple[str, np.dtype, int]] | None = None):
        self.n = int(n)
        self.columns = columns  # in memory: name -> array
        self.files = files      # on disk: name -> (path, dtype, row width or 0)

    @staticmethod
    def write(spill: SpillDir, stem: str, columns: dict[str, np.ndarray]) -> "Run":
        """A run whose columns are written to files of their own (a 2-D column as it is laid out: rows
        row-major, `cols` one row per cell)."""
        files = {}
        n = len(columns["fps"])
        for i, (name, arr) in enumerate(columns.items()):
            path = spill.new(f"{stem}-{i}")
            spill.append(path, arr)
            files[name] = (path, arr.dtype, arr.shape[0] if name == "cols" else arr.shape[1] if arr.ndim == 2 else 0)
        return Run(n, files=files)

    @property
    def on_disk(self) -> bool:
        return self.files is not None

    def names(self) -> list[str]:
        return list(self.columns if self.columns is not None else self.files)

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        if self.columns is not None:
            return self.columns[name][start:stop]
        path, dtype, width = self.files[name]
        return read_rows(path, dtype, start, stop, width)

    def read_cols(self, name: str, start: int, stop: int) -> np.ndarray:
        """Entries [start, stop) of a column held one row per cell (w × n), as w × (stop - start)."""
        if self.columns is not None:
            return self.columns[name][:, start:stop]
        path, dtype, width = self.files[name]
        return read_cols(path, dtype, self.n, width, start, stop)

    def nbytes(self) -> int:
        return 0 if self.columns is None else int(sum(a.nbytes for a in self.columns.values()))

    def remove(self, spill: SpillDir) -> None:
        if self.files is not None:
            for path, _, _ in self.files.values():
                spill.remove(path)
        self.columns = self.files = None


def merge_runs(runs: Sequence[Run], buffer: int, names: Sequence[str] | None = None) -> Iterator[dict[str, np.ndarray]]:
    """The runs' entries in ascending fingerprint order, one entry per fingerprint (the earliest run's), in
    blocks; the columns `names` (default: all). `buffer`: fingerprints read ahead from each run."""
    if names is None:
        names = [k for k in (runs[0].columns or runs[0].files)] if runs else []
    names = ["fps"] + [k for k in names if k != "fps"]
    pos = [0] * len(runs)
    ahead = max(int(buffer), 1)
    while True:
        live = [i for i, r in enumerate(runs) if pos[i] < r.n]
        if not live:
            return
        heads = {i: runs[i].read("fps", pos[i], min(pos[i] + ahead, runs[i].n)) for i in live}
        tails = [heads[i][-1] for i in live if pos[i] + len(heads[i]) < runs[i].n]
        bound = min(tails) if tails else None
        parts: dict[str, list[np.ndarray]] = {k: [] for k in names}
        for i in live:
            head = heads[i]
            take = len(head) if bound is None else int(np.searchsorted(head, bound, side="right"))
            if not take:
                continue
            for k in names:
                parts[k].append(head[:take] if k == "fps" else runs[i].read(k, pos[i], pos[i] + take))
            pos[i] += take
        fps = np.concatenate(parts["fps"])
        if len(parts["fps"]) == 1:  # one run: already sorted and distinct
            yield {k: parts[k][0] for k in names}
            continue
        order = np.argsort(fps, kind="stable")
        fps = fps[order]
        first = group_starts(fps)
        keep = order[first]
        block = {"fps": fps[first]}
        for k in names:
            if k != "fps":
                block[k] = np.concatenate(parts[k])[keep]
        yield block
