"""Confirming a lasso: a fair behaviour that never meets an eventually or leads_to property's goal.

Independent of the checker's graph algorithm: replay re-executes the steps, then this module checks
what the lasso claims on its own states. The behaviour is the steps, then the steps after `loop`
repeated forever (the last state must be the state after `loop` steps again), or, when `loop` is
the last step, that state forever (stuttering). It violates the property when
- its condition holds at some step from which the goal never holds again (for `eventually`, the
  goal holds at no step), the repeated part included; and
- it is fair: for every weak fairness group, the cycle takes one of the group's actions or passes a
  state where none of them is enabled; for every strong one, it takes one or none is enabled at any
  state of the cycle. Enabled means the action leads to another state (TLA+'s `ENABLED <<A>>_vars`).
"""
from __future__ import annotations

from txncheck.spec.errors import EvaluationError
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.fairness import ground_groups
from txncheck.spec.ground_ir import GroundModel

from .build import holds_in


def lasso_start(prop, states, loop: int) -> int | None:
    """The first step where the condition holds and the goal never holds again (cycle included), or None."""
    n = len(states) - 1
    goal_after = [False] * (n + 2)  # goal_after[i]: the goal holds at some step >= i, or on the cycle
    cycle_goal = any(holds_in(prop.expr, s) for s in states[loop:])
    goal_after[n + 1] = cycle_goal
    for i in range(n, -1, -1):
        goal_after[i] = goal_after[i + 1] or holds_in(prop.expr, states[i])
    if prop.kind == "eventually":
        return 0 if not goal_after[0] else None
    for i in range(n + 1):
        if not goal_after[i] and holds_in(prop.when, states[i]):
            return i
    return None


def _enabled(model: GroundModel, actions, s) -> bool:
    for aid in actions:
        a = model.actions[aid]
        try:
            if evaluate(a.guard, s) and successor(model, a, s) != s:
                return True
        except EvaluationError:
            continue
    return False


def check_lasso(model: GroundModel, prop, ids, states, loop: int) -> tuple[bool, str]:
    """(confirmed, message) for the lasso of `ids` (action ids) through `states` returning to step `loop`."""
    n = len(states) - 1
    name = prop.name
    if loop < n and states[n] != states[loop]:
        return False, (f"{name}: the last state (step {n}) is not the state of step {loop}, so the steps after "
                       f"step {loop} do not form a cycle")
    start = lasso_start(prop, states, loop)
    if start is None:
        if prop.kind == "eventually":
            return False, f"{name}: the goal holds at some step of this behaviour"
        return False, f"{name}: no step has the condition true and the goal false at it and ever after"
    groups = ground_groups(model.spec, model.actions, model.env)
    members = [[aid for aid in range(len(model.actions)) if g in groups.of_action[aid]] for g in range(groups.count)]
    cycle_states = states[loop:n] if loop < n else [states[n]]
    taken = set()
    for k in range(loop, n):
        if states[k] != states[k + 1]:
            taken.update(groups.of_action[ids[k]])
    for g, label in enumerate(groups.labels):
        if g in taken:
            continue
        enabled = [_enabled(model, members[g], s) for s in cycle_states]
        if groups.strong[g] and any(enabled):
            where = loop + enabled.index(True)
            return False, (f"{name}: the cycle is not fair: {label} is enabled at step {where} but never taken "
                           "on the cycle")
        if not groups.strong[g] and all(enabled):
            where = (f"at every state of the cycle (steps {loop}-{n - 1})" if loop < n else
                     f"at step {n}, where the behaviour stutters forever,")
            return False, f"{name}: the cycle is not fair: {label} is enabled {where} and never taken"
    cycle = (f"the steps after step {loop} repeat forever" if loop < n else
             f"it stutters at step {n} forever")
    return True, (f"{name}: a fair behaviour (fairness: {', '.join(groups.labels) or 'none'}) whose goal never holds "
                  f"after step {start}: {cycle}")
