"""Stable 64-bit fingerprints: Zobrist hashing over (cell position, value).

fp(s) = XOR over cells c of Z[c][s[c] - lo_c], where Z is derived from blake2b of the cell
position and value, so fingerprints are identical across processes, machines, engines and
PYTHONHASHSEED. XOR makes them incremental: a successor's fingerprint is its parent's adjusted
for only the cells an action changed, and a numpy engine computes them with one gather per column.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from txncheck.spec.layout import Layout

_TAG = b"txncheck.zobrist.v1"


def zobrist_value(pos: int, value: int) -> int:
    h = hashlib.blake2b(_TAG + pos.to_bytes(4, "little") + value.to_bytes(4, "little", signed=True),
                        digest_size=8)
    return int.from_bytes(h.digest(), "little")


@lru_cache(maxsize=64)
def _tables(cell_lo: tuple[int, ...], cell_hi: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    py = tuple(tuple(zobrist_value(pos, v) for v in range(lo, hi + 1))
               for pos, (lo, hi) in enumerate(zip(cell_lo, cell_hi)))
    span = max((hi - lo + 1 for lo, hi in zip(cell_lo, cell_hi)), default=1)
    arr = np.zeros((len(cell_lo), span), dtype=np.uint64)
    for pos, row in enumerate(py):
        arr[pos, :len(row)] = np.array(row, dtype=np.uint64)
    return py, arr


class Fingerprinter:
    """Zobrist tables for one layout: `table[pos][value - lo]` as Python ints and as a numpy
    array (`array[pos, value - lo]`)."""

    def __init__(self, layout: Layout):
        self.lo = layout.cell_lo
        self.table, self.array = _tables(layout.cell_lo, layout.cell_hi)

    def of(self, state) -> int:
        fp = 0
        t, lo = self.table, self.lo
        for pos, v in enumerate(state):
            fp ^= t[pos][v - lo[pos]]
        return fp

    def of_matrix(self, states: np.ndarray) -> np.ndarray:
        """Fingerprints of every row of an int matrix (one column per cell)."""
        fp = np.zeros(states.shape[0], dtype=np.uint64)
        for pos in range(states.shape[1]):
            fp ^= self.array[pos][states[:, pos].astype(np.int64) - self.lo[pos]]
        return fp


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate: with n distinct states and m generated, about n·(m−n)/2^64."""
    if distinct <= 1:
        return 0.0
    return min(1.0, distinct * max(generated - distinct, 0) / 2.0 ** 64)


def format_probability(p: float) -> str:
    return "0" if p == 0 else f"{p:.1e}" if p < 0.01 else f"{p:.3f}"


__all__ = ["Fingerprinter", "collision_probability", "format_probability", "zobrist_value"]
