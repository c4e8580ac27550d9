"""Stepping a model from a state as a trace renders it: for tests that take a searched trace's last state and
look at what one action does there."""
from txncheck.spec.evaluate import evaluate, successor


def successors_of(model, rendered):
    """[(ground action, rendered successor)] of the actions enabled in the rendered state `rendered`."""
    s = model.parse_state(rendered)
    return [(a, model.render_state(successor(model, a, s))) for a in model.actions if evaluate(a.guard, s, a.row_id)]
