"""The tiled transposes between the kernel's columns and a spilled level's rows (`checker/vector/layout.py`) are
numpy's: any shape (tiles that do not divide it, fewer states or cells than a tile, none), any cell dtype the
kernel uses, views that are not contiguous."""
from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from txncheck.checker.vector import layout

DTYPES = st.sampled_from([np.int8, np.uint8, np.int16, np.int32, np.int64])


@st.composite
def blocks(draw):
    shape = (draw(st.integers(0, 70)), draw(st.integers(0, 70)))
    a = draw(arrays(draw(DTYPES), shape))
    if draw(st.booleans()) and shape[1] > 1:  # a view every other column, as a slice of a level
        a = a[:, ::2]
    return a


@settings(max_examples=300, deadline=None)
@given(a=blocks(), states_tile=st.integers(1, 40), tile_states=st.integers(1, 40), tile_cells=st.integers(1, 40))
def test_the_tiled_transposes_are_numpys(a, states_tile, tile_states, tile_cells):
    with patch.multiple(layout, STATES_TILE=states_tile, TILE_STATES=tile_states, TILE_CELLS=tile_cells):
        for got in (layout.cols_of(a), layout.rows_of(a)):
            assert got.dtype == a.dtype and got.flags.c_contiguous
            assert np.array_equal(got, np.ascontiguousarray(a.T))
