"""The two layouts of a block of states: the kernel's columns (one row per cell, w × n) and the rows a
spilled whole level or a checkpoint's rebuilt level keeps (one row per state, n × w), and the transposes
between them, a tile at a time. (A chunked expansion's runs keep the kernel's columns: no transpose.)

numpy copies a transposed view element by element in the source's order, so every write misses the cache
lines of the one before: on Kafka's 638 cells that took 3-4 ns an element either way. Copied in tiles whose
rows fit the cache, it takes 0.6-0.9 ns (benchmarks/RESULTS.md, "Transposes in tiles").
"""
from __future__ import annotations

import numpy as np

STATES_TILE = 1024  # states copied at a time from rows into columns (all their cells at once)
TILE_STATES, TILE_CELLS = 2048, 32  # a tile copied from columns into rows


def cols_of(rows: np.ndarray) -> np.ndarray:
    """`np.ascontiguousarray(rows.T)`: the states of `rows` (n × w) as the kernel's columns (w × n)."""
    n, w = rows.shape
    out = np.empty((w, n), dtype=rows.dtype)
    for a in range(0, n, STATES_TILE):
        out[:, a:a + STATES_TILE] = rows[a:a + STATES_TILE].T
    return out


def rows_of(cols: np.ndarray) -> np.ndarray:
    """`np.ascontiguousarray(cols.T)`: the kernel's columns (w × n) as one row per state (n × w)."""
    w, n = cols.shape
    out = np.empty((n, w), dtype=cols.dtype)
    for a in range(0, n, TILE_STATES):
        for b in range(0, w, TILE_CELLS):
            out[a:a + TILE_STATES, b:b + TILE_CELLS] = cols[b:b + TILE_CELLS, a:a + TILE_STATES].T
    return out
