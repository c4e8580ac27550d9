"""Symmetry reduction: the permutations of the declared interchangeable domains, as cell moves and
value maps, and canonicalisation to the least-fingerprint member of a state's orbit.

A permutation π of a symmetric domain D moves the cells of every var indexed by D and renames the
values of every var whose value domain is D. The group is the product over declared domains.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from txncheck.spec.domains import SubsetDomain
from txncheck.spec.errors import SpecError
from txncheck.spec.ground_ir import GroundModel


@dataclass(frozen=True)
class Permutation:
    """new_state[i] = value_map[i][old_state[src[i]] - lo[i]] (value_map None: unchanged). `label` names
    the permutation in messages, in cycle notation by member label: `RM (rm1 rm2)`."""

    src: tuple[int, ...]
    value_map: tuple[tuple[int, ...] | None, ...]
    label: str = field(default="", compare=False)


def _refuse_subsets(m: GroundModel) -> None:
    sym = m.spec.symmetry
    for v in m.spec.vars:
        for d in (v.domain,) + v.index:
            if isinstance(d, SubsetDomain) and d.base in sym.domains:
                raise SpecError(f"symmetry over {d.base.name} is not supported for this var: its domain {d.name} "
                                f"is built from {d.base.name}; drop {d.base.name} from the spec's Symmetry, or run "
                                "without --symmetry", var=v.name)


def _per_domain(m: GroundModel) -> list[list[dict[int, int]]]:
    """For each declared domain, every permutation of its interchangeable members (as value -> image
    maps; members outside `Symmetry.first`'s limit map to themselves)."""
    sym, env = m.spec.symmetry, m.env
    out = []
    for d in sym.domains:
        vals = list(sym.members(d, env))
        out.append([dict(zip(vals, p)) for p in itertools.permutations(vals)])
    return out


def permutations(m: GroundModel, enabled: bool = True) -> tuple[Permutation, ...]:
    """Every non-identity element of the symmetry group (empty when there is no symmetry)."""
    sym = m.spec.symmetry
    if not enabled or sym is None or not sym.domains:
        return ()
    _refuse_subsets(m)
    out = []
    for combo in itertools.product(*_per_domain(m)):
        if all(all(k == v for k, v in pm.items()) for pm in combo):
            continue
        out.append(build(m, {d.name: pm for d, pm in zip(sym.domains, combo)}))
    return tuple(out)


def group_size(m: GroundModel) -> int:
    """The order of the symmetry group under this configuration (1: nothing to permute)."""
    sym = m.spec.symmetry
    if sym is None:
        return 1
    return math.prod(math.factorial(len(sym.members(d, m.env))) for d in sym.domains)


def idle(m: GroundModel) -> str | None:
    """Why `--symmetry` would change nothing here, where a `Symmetry.first` limit leaves every declared
    domain a single member under this configuration (None: it permutes something, or has no limit)."""
    sym = m.spec.symmetry
    if sym is None or not sym.first or group_size(m) > 1:
        return None
    limits = ", ".join(f"{d.name} has {len(sym.members(d, m.env))} alike member(s) (its first {size})"
                       for d, size in sym.first)
    return (f"spec {m.spec.name}'s symmetry permutes nothing under this configuration: {limits}, so --symmetry "
            "would change nothing; raise the constant that limits it, or drop --symmetry")


def generators(m: GroundModel) -> tuple[Permutation, ...]:
    """A generating set of the group: for each domain, the transpositions of its first member with each
    other member (they generate every permutation of the domain)."""
    sym = m.spec.symmetry
    if sym is None:
        return ()
    _refuse_subsets(m)
    out = []
    for d in sym.domains:
        vals = list(sym.members(d, m.env))
        for v in vals[1:]:
            out.append(build(m, {d.name: {vals[0]: v, v: vals[0]}}))
    return tuple(out)


def build(m: GroundModel, maps: dict[str, dict[int, int]]) -> Permutation:
    """The permutation of states that renames each domain's members by `maps[domain name]` (value ->
    image; a missing member maps to itself): it moves the cells of every var indexed by the domain and
    renames the values of every var whose value domain it is."""
    env, layout = m.env, m.layout
    src = list(range(layout.width))
    vmaps: list = [None] * layout.width
    for vl in layout.vars:
        v = vl.var
        idx_ranges = [d.values(env) for d in v.index]
        for combo_idx in itertools.product(*idx_ranges):
            old_pos = vl.offset + sum((i - lo) * st for i, lo, st in zip(combo_idx, vl.index_lo, vl.strides))
            new_idx = [maps[d.name].get(i, i) if d.name in maps else i for d, i in zip(v.index, combo_idx)]
            new_pos = vl.offset + sum((i - lo) * st for i, lo, st in zip(new_idx, vl.index_lo, vl.strides))
            src[new_pos] = old_pos
            if v.domain.name in maps:
                pm = maps[v.domain.name]
                vmaps[new_pos] = tuple(pm.get(x, x) for x in range(vl.lo, vl.hi + 1))
    return Permutation(tuple(src), tuple(vmaps), _label(m, maps))


def _label(m: GroundModel, maps: dict[str, dict[int, int]]) -> str:
    parts = []
    for d in m.spec.symmetry.domains:
        pm = maps.get(d.name, {})
        seen, cycles = set(), []
        for start in sorted(pm):
            if start in seen or pm[start] == start:
                continue
            cycle, x = [], start
            while x not in seen:
                seen.add(x)
                cycle.append(str(d.label(x, m.env)))
                x = pm.get(x, x)
            cycles.append("(" + " ".join(cycle) + ")")
        if cycles:
            parts.append(f"{d.name} {''.join(cycles)}")
    return ", ".join(parts) or "the identity"


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
