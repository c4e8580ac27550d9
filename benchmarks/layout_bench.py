"""The transposes between the kernel's columns and a spilled level's rows, numpy's against the tiled ones of
`checker/vector/layout.py`: `python benchmarks/layout_bench.py [CELLS]`.

Blocks of random int8 states of CELLS cells (638: Kafka ci's width) and a few sizes, powers of two among them
(where numpy's copy is slowest: every write of a column lands in the same cache set); prints the best of five,
in nanoseconds a cell, as a Markdown table.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from txncheck.checker.vector.layout import cols_of, rows_of


def _best(f, x) -> float:
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        f(x)
        best = min(best, time.perf_counter() - t)
    return best


def main(width: int = 638) -> None:
    print("| states in the block | rows to columns: numpy | tiled | columns to rows: numpy | tiled |")
    print("|---:|---:|---:|---:|---:|")
    for n in (5000, 20000, 65536, 100000, 131072):
        rows = np.random.default_rng(0).integers(0, 100, (n, width)).astype(np.int8)
        cols = np.ascontiguousarray(rows.T)
        plain = lambda a: np.ascontiguousarray(a.T)  # noqa: E731
        ns = [_best(f, x) / (width * n) * 1e9 for f, x in ((plain, rows), (cols_of, rows), (plain, cols), (rows_of, cols))]
        print(f"| {n:,} | " + " | ".join(f"{v:.2f}" for v in ns) + " |")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
