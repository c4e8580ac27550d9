"""`lookup.directory`, the bucket directory behind every sorted-fingerprint lookup, built a block of the sorted
values at a time: the same directory as counting every bucket at once, whatever the block size, with buckets
that span blocks, empty runs of buckets between blocks, repeated values and values crowded into a few buckets."""
from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from txncheck.checker import lookup


def _counted(u: np.ndarray, dtype) -> tuple[np.ndarray, np.uint64]:
    """The directory by one count over every bucket (what `directory` computed before it went by blocks)."""
    B = min(int(np.ceil(np.log2(len(u)))) + 1, 40)
    shift = np.uint64(64 - B)
    counts = np.bincount((u >> shift).view(np.int64), minlength=1 << B)
    D = np.zeros(len(counts) + 1, dtype=dtype)
    np.cumsum(counts, out=D[1:])
    return D, shift


_values = st.one_of(st.integers(0, 2**64 - 1),                # spread over every bucket
                    st.integers(2**63, 2**63 + 2**58),         # crowded into a few
                    st.integers(0, 7), st.just(2**64 - 1))     # the ends


@settings(max_examples=300, deadline=None)
@given(st.lists(_values, min_size=2, max_size=200), st.integers(1, 9), st.sampled_from([np.int32, np.int64]))
@example([5, 5], 1, np.int32)
@example([0, 2**64 - 1], 1, np.int64)
def test_the_directory_by_blocks_is_the_one_counted_at_once(values, block, dtype):
    u = np.sort(np.array(values, dtype=np.uint64))
    want, want_shift = _counted(u, dtype)
    saved = lookup.DIRECTORY_BLOCK
    lookup.DIRECTORY_BLOCK = block
    try:
        got, shift = lookup.directory(u, dtype)
    finally:
        lookup.DIRECTORY_BLOCK = saved
    assert shift == want_shift and got.dtype == dtype
    assert np.array_equal(got, want)
    # and the lookups it serves find every value, and no value that is not there
    q = np.concatenate([u, u + np.uint64(1), u - np.uint64(1)])
    pos, found = lookup.find_sorted(u, q, (got, shift))
    assert np.array_equal(found, np.isin(q, u))
    assert np.array_equal(u[pos[found]], q[found])
