"""The state layout: every var flattened into one fixed-width vector of small ints (cells), with
each cell's bounds and name.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping

from .errors import SpecError
from .expr import Var
from .model import Spec


@dataclass(frozen=True)
class VarLayout:
    var: Var
    offset: int
    dims: tuple[int, ...]
    index_lo: tuple[int, ...]
    strides: tuple[int, ...]
    lo: int
    hi: int

    @property
    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass(frozen=True)
class Layout:
    vars: tuple[VarLayout, ...]
    width: int
    cell_lo: tuple[int, ...]
    cell_hi: tuple[int, ...]
    cell_names: tuple[str, ...]
    cell_var: tuple[int, ...]  # index into vars

    def var(self, name: str) -> VarLayout:
        for v in self.vars:
            if v.var.name == name:
                return v
        raise KeyError(name)


def build_layout(spec: Spec, env: Mapping[str, object]) -> Layout:
    out, offset = [], 0
    lo_list, hi_list, names, owner = [], [], [], []
    seen = set()
    for vi, v in enumerate(spec.vars):
        if v.name in seen:
            raise SpecError("another var has this name already; give each var its own name (and list it once in "
                            "Spec(vars=...))", var=v.name, nth=2)
        seen.add(v.name)
        dom_vals = v.domain.values(env)
        idx_vals = [d.values(env) for d in v.index]
        dims = tuple(len(r) for r in idx_vals)
        strides = []
        s = 1
        for d in reversed(dims):
            strides.append(s)
            s *= d
        strides = tuple(reversed(strides))
        vl = VarLayout(v, offset, dims, tuple(r.start for r in idx_vals), strides,
                       dom_vals.start, dom_vals.stop - 1)
        for combo in itertools.product(*idx_vals):
            label = v.name + "".join(f"[{d.label(i, env)}]" for d, i in zip(v.index, combo))
            names.append(label)
            lo_list.append(vl.lo)
            hi_list.append(vl.hi)
            owner.append(vi)
        offset += vl.size
        out.append(vl)
    return Layout(tuple(out), offset, tuple(lo_list), tuple(hi_list), tuple(names), tuple(owner))
