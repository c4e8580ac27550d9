"""A chunked level's runs keep the kernel's columns (one row per cell), in memory or in files, and the frontier
reads them back in the runs' order: any cell dtype, any run sizes (empty ones too), any chunk size, each chunk
the runs' states end to end with their fingerprints beside them."""
from __future__ import annotations

import tempfile
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.vector.frontier import LevelStates
from txncheck.checker.vector.merge import Run
from txncheck.checker.vector.spill import SpillDir

DTYPES = st.sampled_from([np.int8, np.uint8, np.int16, np.int32])


@settings(max_examples=150, deadline=None)
@given(dtype=DTYPES, width=st.integers(1, 9), sizes=st.lists(st.integers(0, 40), min_size=1, max_size=5),
       on_disk=st.lists(st.booleans(), min_size=5, max_size=5), size=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_the_frontier_reads_its_runs_columns_in_order(dtype, width, sizes, on_disk, size, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    with tempfile.TemporaryDirectory() as work:
        spill = SpillDir(work)
        runs, cols, fps = [], [], []
        for i, n in enumerate(sizes):
            c = rng.integers(info.min, info.max, size=(width, n), endpoint=True).astype(dtype)
            f = np.sort(rng.choice(2**40, size=n, replace=False).astype(np.uint64))
            columns = {"fps": f, "cols": c, "mask:P": rng.random(n) < 0.5}
            runs.append(Run.write(spill, "run", columns) if on_disk[i] else Run(n, columns=columns))
            cols.append(c)
            fps.append(f)
        for run, c in zip(runs, cols):
            for a in range(0, run.n + 1, 7):
                for b in (a, a + 1, run.n):
                    if a <= b <= run.n:
                        assert np.array_equal(run.read_cols("cols", a, b), c[:, a:b])
        total = sum(sizes)
        level = LevelStates(SimpleNamespace(symmetric=False), np.zeros(total, dtype=np.uint64), spill=spill,
                            runs=runs, rank=np.arange(total))
        got = list(level.chunks(size))
        assert [a for a, *_ in got] == list(np.cumsum([0] + [len(f) for *_, f in got])[:-1])
        assert all(0 < len(f) <= size for *_, f in got)
        assert all(len(f) == size for *_, f in got[:-1])
        want_cols = np.concatenate(cols, axis=1)
        if got:
            assert np.array_equal(np.concatenate([c for _, c, _, _ in got], axis=1), want_cols)
            assert np.array_equal(np.concatenate([f for *_, f in got]), np.concatenate(fps))
            assert all(np.array_equal(P, f) for _, _, P, f in got)
        else:
            assert total == 0
        level.close()
        spill.close()
