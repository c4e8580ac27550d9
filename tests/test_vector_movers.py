"""The kernel's movers (an action whose only effect writes a constant to one cell its guard does not
pin) drop their stuttering states before the fingerprint delta; the expansion must equal the one that
compares fingerprints afterwards, field for field, with and without symmetry, in chunks."""
from __future__ import annotations

import numpy as np
import pytest

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model
from txncheck.checker.vector.explore import explore
from txncheck.checker.vector.kernel import VectorKernel
from txncheck.spec import catalog


def _states(model, kernel, limit):
    """A breadth-first prefix of reachable states (rows), rebuilt from the explorer's parent links."""
    o = explore(model, ExploreOptions(stop_on_violation=False, properties=(), max_states=limit), kernel)
    cols = np.asarray(model.init, dtype=kernel.dtype).reshape(kernel.width, 1)
    out, off = [cols], 0
    for d in range(1, len(o.level_sizes)):
        start, n = off + o.level_sizes[d - 1], o.level_sizes[d]
        cols, _, _ = kernel.successors_cols(cols, (o.parent[start:start + n] - off).astype(np.int64),
                                            o.action[start:start + n])
        out.append(cols)
        off = start
    return np.ascontiguousarray(np.concatenate(out, axis=1).T)


@pytest.mark.parametrize("spec, config, overrides, sym", [
    ("twophase", "tiny", {"rm": 4}, False),
    ("twophase", "tiny", {"rm": 4}, True),
    ("paxoscommit", "tiny", {}, False),
    ("kafka", "tiny", {}, False),
])
def test_movers_expand_as_the_fingerprint_comparison(spec, config, overrides, sym):
    model = build_model(catalog.load(spec), config, overrides)
    with_movers = VectorKernel(model, symmetry=sym, chunk=256)
    assert any(m is not None for m in with_movers.movers)
    without = VectorKernel(model, symmetry=sym, chunk=256)
    without.movers = [None] * without.n_actions
    states = _states(model, VectorKernel(model), 3000)
    a, b = with_movers.expand(states), without.expand(states)
    for field in ("fps", "parent_rows", "actions", "fired", "has_successor"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert a.generated == b.generated


def test_movers_of_twophase():
    """RMRcvCommitMsg / RMRcvAbortMsg (rmState[rm] := committed / aborted) and TMRcvPrepared
    (tmPrepared[rm] := TRUE) are movers; RMPrepare writes two cells and is not."""
    model = build_model(catalog.load("twophase"), "tiny", {"rm": 3})
    kernel = VectorKernel(model)
    movers = {a.label.split("(")[0] for a, m in zip(model.actions, kernel.movers) if m is not None}
    assert movers == {"TM-01", "RM-03", "RM-04"}
