"""Stepping a model from a state as a trace renders it: for tests that take a searched trace's last state and
look at what one action does there."""
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.state_text import parse_state


def successors_of(model, rendered):
    """[(ground action, rendered successor)] of the actions enabled in the rendered state `rendered`."""
    s = parse_state(model.layout, model.env, rendered)
    return [(a, model.render_state(successor(model, a, s))) for a in model.actions if evaluate(a.guard, s, a.row_id)]
