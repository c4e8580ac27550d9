"""`vector/spill.Columns`, the edges' and masks' store: read back in blocks, taken whole as a narrower type,
dropped, in memory and spilled (hypothesis), against the columns as they were appended."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.checker.vector.spill import Columns, SpillDir


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 40), max_size=6), block=st.integers(1, 50), spill_at=st.integers(0, 6),
       seed=st.integers(0, 2**32 - 1))
def test_blocks_and_take_give_the_columns_as_appended(tmp_path_factory, sizes, block, spill_at, seed):
    rng = np.random.default_rng(seed)
    spill = SpillDir(str(tmp_path_factory.mktemp("cols")))
    try:
        cols = Columns(spill, {"src": np.int64, "dst": np.uint64}, "edges")
        src = [rng.integers(0, 2**31 - 1, n, dtype=np.int64) for n in sizes]
        dst = [rng.integers(0, 2**63, n, dtype=np.uint64) for n in sizes]
        for i, (s, d) in enumerate(zip(src, dst)):
            if i == spill_at:
                cols.spill()
            cols.append({"src": s, "dst": d})
        want_src = np.concatenate(src) if src else np.zeros(0, np.int64)
        want_dst = np.concatenate(dst) if dst else np.zeros(0, np.uint64)
        got = list(cols.blocks("dst", block))
        assert all(0 < len(b) <= block for b in got)
        assert np.array_equal(np.concatenate(got) if got else np.zeros(0, np.uint64), want_dst)
        if cols.spilled:
            with pytest.raises(ValueError, match="in a file"):
                cols.take("src")
            assert np.array_equal(cols.arrays()["src"], want_src)
        else:
            cols.drop("dst")
            assert cols.memory_bytes() == want_src.nbytes
            taken = cols.take("src", np.int32)
            assert taken.dtype == np.int32 and np.array_equal(taken, want_src)
            assert cols.memory_bytes() == 0  # not held twice
    finally:
        spill.close()
