"""States as people read them: by named var, values and indices as labels (`render_state`), and
back (`parse_state`, its inverse, for traces that start in a given state).
"""
from __future__ import annotations

import itertools

from .domains import Domain
from .errors import SpecError
from .layout import Layout


def _unused(v, combo, env) -> bool:
    """The cell at index `combo` of `v` is beyond the configured size of one of its index domains."""
    return not all(d.in_use(i, env) for d, i in zip(v.index, combo))


def render_state(layout: Layout, env, state, init=None) -> dict:
    """The state by named var: scalars as labels, arrays as nested dicts keyed by index labels. Given the initial
    state `init`, a cell beyond the configured size of an index domain (Domain.in_use) is left out while it holds
    its initial value, as every such cell does: a reader sees the cells the configuration has."""
    return StateRenderer(layout, env, init).render(state)


class StateRenderer:
    """`render_state` for one layout, environment and initial state, with the labels of every value and index
    worked out once: a trace renders every one of its states, and a replay renders them again (Kafka: about
    2 ms a state the long way round, 0.13-0.26 ms worked out; benchmarks/RESULTS.md)."""

    def __init__(self, layout: Layout, env, init=None):
        self._vars = []
        for vl in layout.vars:
            v = vl.var
            labels = tuple(value_label(v.domain, x, env) for x in range(vl.lo, vl.hi + 1))
            if not v.index:
                self._vars.append((v.name, vl.offset, vl.lo, labels, v.domain, None))
                continue
            idx_vals = [d.values(env) for d in v.index]
            cells = []
            for k, combo in enumerate(itertools.product(*idx_vals)):
                # the initial value at which the cell is left out (None: always shown)
                hidden = init[vl.offset + k] if init is not None and _unused(v, combo, env) else None
                keys = tuple(str(d.label(i, env)) for d, i in zip(v.index, combo))
                cells.append((vl.offset + k, hidden, keys[:-1], keys[-1]))
            self._vars.append((v.name, vl.offset, vl.lo, labels, v.domain, tuple(cells)))
        self._env = env

    def _label(self, labels, lo: int, domain, value):
        i = int(value) - lo
        return labels[i] if 0 <= i < len(labels) else value_label(domain, value, self._env)

    def render(self, state) -> dict:
        out: dict = {}
        for name, offset, lo, labels, domain, cells in self._vars:
            if cells is None:
                out[name] = self._label(labels, lo, domain, state[offset])
                continue
            nested: dict = {}
            for at, hidden, path, last in cells:
                x = state[at]
                if hidden is not None and x == hidden:
                    continue
                node = nested
                for key in path:
                    node = node.setdefault(key, {})
                node[last] = self._label(labels, lo, domain, x)
            out[name] = nested
        return out


def parse_state(layout: Layout, env, rendered: dict, init=None) -> tuple[int, ...]:
    """The inverse of `render_state`: a state by named var back to cell values (given `init`, a cell beyond the
    configured size that the state leaves out holds its initial value). Raises SpecError naming the first var or
    label that does not fit the layout."""
    if not isinstance(rendered, dict):
        raise SpecError(f"a state is an object by var name, not {type(rendered).__name__}")
    cells: list[int] = []
    for vl in layout.vars:
        v = vl.var
        if v.name not in rendered:
            raise SpecError(f"the state has no var {v.name}")
        values = {str(value_label(v.domain, x, env)): x for x in range(vl.lo, vl.hi + 1)}

        def value(label, where: str) -> int:
            got = values.get(str(label))
            if got is None:
                raise SpecError(f"{where} = {label!r} is not a value of its domain {v.domain.name}")
            return got

        if not v.index:
            cells.append(value(rendered[v.name], v.name))
            continue
        idx_vals = [d.values(env) for d in v.index]
        for k, combo in enumerate(itertools.product(*idx_vals)):
            node, where = rendered[v.name], v.name
            for d, i in zip(v.index, combo):
                key = str(d.label(i, env))
                if not isinstance(node, dict) or key not in node:
                    if init is not None and _unused(v, combo, env):
                        node = None
                        break
                    raise SpecError(f"the state has no {where}[{key}]")
                node, where = node[key], f"{where}[{key}]"
            cells.append(init[vl.offset + k] if node is None else value(node, where))
    return tuple(cells)


def value_label(domain: Domain, value: int, env):
    value = int(value)
    if domain.is_bool:
        return bool(value)
    lab = domain.label(value, env)
    return lab
