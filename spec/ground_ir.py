"""The ground IR: expressions over state cells and literals, ground actions and properties, and the
ground model every engine consumes (`spec/ground.py` builds it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

from .layout import Layout
from .model import Property, ResolvedConfig, Row, Spec


class GExpr:
    __slots__ = ()


@dataclass(frozen=True)
class GConst(GExpr):
    value: int


@dataclass(frozen=True)
class GCell(GExpr):
    pos: int


@dataclass(frozen=True)
class GDyn(GExpr):
    """A read (or write target) at a computed position: base + Σ index_k·stride_k, each index_k
    (already shifted to start at 0) range-checked against size_k."""

    var: str
    base: int
    terms: tuple[tuple[GExpr, int, int], ...]  # (index expr shifted to 0, stride, size)


@dataclass(frozen=True)
class GOp(GExpr):
    op: str
    args: tuple[GExpr, ...]


@dataclass(frozen=True)
class GTable(GExpr):
    """A constant table indexed by a computed expression (e.g. subset membership)."""

    values: tuple[int, ...]
    index: GExpr


BOOL_OPS = {"==", "!=", "<", "<=", ">", ">=", "and", "or", "not", "implies"}


@dataclass(frozen=True)
class GroundAction:
    id: int
    row: Row
    params: tuple[tuple[str, int], ...]
    label: str
    guard: GExpr
    updates: tuple[tuple[GExpr, GExpr], ...]  # (GCell or GDyn target, value)

    @property
    def row_id(self) -> str:
        return self.row.id


@dataclass(frozen=True)
class GroundProperty:
    prop: Property
    expr: GExpr
    when: GExpr | None

    @property
    def name(self) -> str:
        return self.prop.name

    @property
    def kind(self) -> str:
        return self.prop.kind


@dataclass(frozen=True)
class GroundModel:
    spec: Spec
    config: ResolvedConfig
    layout: Layout
    actions: tuple[GroundAction, ...]
    init: tuple[int, ...]
    properties: tuple[GroundProperty, ...]
    terminal: GExpr | None
    env: Mapping[str, object] = field(default_factory=dict)
    strengthening: tuple[GroundProperty, ...] = ()
    not_applicable: tuple[str, ...] = ()  # properties whose `applies` is false under this config
    # how the spec was loaded (spec.loader.SpecSource), set by ModelRequest.ground; traces record it
    source: object = field(default=None, compare=False)
    # every initial state, in increasing order (spec/initial.py); `init` is the first. Empty: `init` alone
    inits: tuple[tuple[int, ...], ...] = ()

    @property
    def initial_states(self) -> tuple[tuple[int, ...], ...]:
        return self.inits or (tuple(self.init),)

    @property
    def width(self) -> int:
        return self.layout.width

    def render_state(self, state) -> dict:
        return self._renderer.render(state)

    @cached_property
    def _renderer(self):
        from .state_text import StateRenderer  # states by name are built on the layout, not the IR
        return StateRenderer(self.layout, self.env, self.init)

    def parse_state(self, rendered) -> tuple[int, ...]:
        """The inverse of `render_state` (SpecError where the rendered state does not fit the layout)."""
        from .state_text import parse_state
        return parse_state(self.layout, self.env, rendered, self.init)
