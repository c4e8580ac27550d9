"""Hypothesis: a state rendered by named var parses back to the same cells (counterexamples to
induction are replayed from their rendered first state), for every shipped spec's layout."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.spec import catalog
from txncheck.spec.errors import SpecError
from txncheck.spec.ground import ground

MODELS = {}


def _model(name, config):
    if (name, config) not in MODELS:
        spec = catalog.load(name)
        MODELS[name, config] = ground(spec, spec.resolve_config(config))
    return MODELS[name, config]


def _states(m):
    return st.tuples(*[st.integers(lo, hi) for lo, hi in zip(m.layout.cell_lo, m.layout.cell_hi)])


@pytest.mark.parametrize("name,config", [("twophase", "tiny"), ("paxoscommit", "tiny"), ("kafka", "tiny"),
                                         ("kafka", "eos")])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_parse_state_inverts_render_state(name, config, data):
    m = _model(name, config)
    s = data.draw(_states(m))
    assert m.parse_state(m.render_state(s)) == s


def test_a_state_that_does_not_fit_is_named():
    m = _model("twophase", "tiny")
    rendered = m.render_state(m.init)
    with pytest.raises(SpecError, match="tmState = 'dancing' is not a value"):
        m.parse_state({**rendered, "tmState": "dancing"})
    with pytest.raises(SpecError, match="the state has no var msgCommit"):
        m.parse_state({k: v for k, v in rendered.items() if k != "msgCommit"})
    with pytest.raises(SpecError, match=r"the state has no rmState\[r1\]"):
        m.parse_state({**rendered, "rmState": {"r9": "working"}})
