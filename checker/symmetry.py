"""Symmetry reduction: the permutations of the declared interchangeable domains, as cell moves and
value maps, and canonicalisation to the least-fingerprint member of a state's orbit.

A permutation π of a symmetric domain D moves the cells of every var indexed by D and renames the
values of every var whose value domain is D. The group is the product over declared domains.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from txncheck.spec.domains import SubsetDomain
from txncheck.spec.errors import SpecError
from txncheck.spec.ground_ir import GroundModel


@dataclass(frozen=True)
class Permutation:
    """new_state[i] = value_map[i][old_state[src[i]] - lo[i]] (value_map None: unchanged)."""

    src: tuple[int, ...]
    value_map: tuple[tuple[int, ...] | None, ...]


def permutations(m: GroundModel, enabled: bool = True) -> tuple[Permutation, ...]:
    """Every non-identity element of the symmetry group (empty when there is no symmetry)."""
    sym = m.spec.symmetry
    if not enabled or sym is None or not sym.domains:
        return ()
    env = m.env
    for v in m.spec.vars:
        for d in (v.domain,) + v.index:
            if isinstance(d, SubsetDomain) and d.base in sym.domains:
                raise SpecError(f"symmetry over {d.base.name} is not supported for this var: its domain {d.name} "
                                f"is built from {d.base.name}; drop {d.base.name} from the spec's Symmetry, or run "
                                "without --symmetry", var=v.name)
    per_domain = []
    for d in sym.domains:
        vals = list(d.values(env))
        per_domain.append([dict(zip(vals, p)) for p in itertools.permutations(vals)])
    out = []
    layout = m.layout
    for combo in itertools.product(*per_domain):
        maps = {d.name: pm for d, pm in zip(sym.domains, combo)}
        if all(all(k == v for k, v in pm.items()) for pm in combo):
            continue
        src = list(range(layout.width))
        vmaps: list = [None] * layout.width
        for vl in layout.vars:
            v = vl.var
            idx_ranges = [d.values(env) for d in v.index]
            for combo_idx in itertools.product(*idx_ranges):
                old_pos = vl.offset + sum((i - lo) * st for i, lo, st in zip(combo_idx, vl.index_lo, vl.strides))
                new_idx = [maps[d.name][i] if d.name in maps else i for d, i in zip(v.index, combo_idx)]
                new_pos = vl.offset + sum((i - lo) * st for i, lo, st in zip(new_idx, vl.index_lo, vl.strides))
                src[new_pos] = old_pos
                if v.domain.name in maps:
                    pm = maps[v.domain.name]
                    vmaps[new_pos] = tuple(pm.get(x, x) for x in range(vl.lo, vl.hi + 1))
        out.append(Permutation(tuple(src), tuple(vmaps)))
    return tuple(out)


def apply(p: Permutation, state, lo) -> tuple[int, ...]:
    out = []
    for i, j in enumerate(p.src):
        v = state[j]
        vm = p.value_map[i]
        out.append(v if vm is None else vm[v - lo[i]])
    return tuple(out)


def apply_matrix(p: Permutation, states: np.ndarray, lo) -> np.ndarray:
    out = states[:, list(p.src)]
    for i, vm in enumerate(p.value_map):
        if vm is not None:
            table = np.asarray(vm, dtype=states.dtype)
            out[:, i] = table[out[:, i].astype(np.int64) - lo[i]]
    return out


def canonical(perms, fingerprinter, state, fp: int, lo) -> tuple[tuple[int, ...], int]:
    """The orbit member with the least fingerprint, and that fingerprint."""
    best, best_fp = state, fp
    for p in perms:
        t = apply(p, state, lo)
        f = fingerprinter.of(t)
        if f < best_fp:
            best, best_fp = t, f
    return best, best_fp
