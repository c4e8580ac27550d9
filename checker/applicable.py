"""Rows a configuration switches off: they cannot fire in any state, whatever the search.

A row is not applicable to a configuration when none of its ground actions can ever be enabled, by
construction: its groundings fold to false (the grounder drops them), or its guard is false for every
state within bounds that hold in every reachable state. The bounds are computed statically, once per
model: each cell ranges over its declared domain (a budget `env_x < Config("x")` with x = 0 is false:
env_x ranges over 0..0), except a cell that no action whose guard may hold can change (each value it
may write lies within the cell's initial values), which keeps its initial values; repeated until
nothing changes. So a row waiting on a cell only switched-off rows set (a stale marker copy when
marker_dups = 0) is switched off too.

A cell that does change keeps its whole domain, even when no row ever writes some of its values: a
row waiting for such a value (a state no row enters) is a question about the model, not about the
configuration, so it stays applicable and coverage reports it as "never fired". So does a row only
a combination of values would enable (the bounds are per cell, blind to how cells relate).

Sound: the bounds at the fixpoint contain every initial state and every write of an action enabled
within them, so by induction every reachable state lies within them (the engines refuse a value outside
a cell's domain), and an action whose guard is false on them is never enabled.
"""
from __future__ import annotations

from txncheck.spec.ground_ir import GCell, GConst, GDyn, GExpr, GroundModel, GTable

_BOOL = (0, 1)


def inapplicable_rows(model: GroundModel) -> tuple[str, ...]:
    """The ids of `model`'s rows that cannot fire in any reachable state, in table order."""
    lay = model.layout
    inits = model.initial_states
    init = tuple((min(s[c] for s in inits), max(s[c] for s in inits)) for c in range(model.width))
    domain = tuple(zip(lay.cell_lo, lay.cell_hi))
    bounds = domain
    # each step only freezes cells (the step is monotone), so this many steps always reach the fixpoint
    for _ in range(model.width + 2):
        enabled = [a for a in model.actions if _may_hold(a.guard, bounds)]
        grown = list(init)
        for a in enabled:
            for target, value in a.updates:
                iv = _eval(value, bounds)
                cells = (target.pos,) if isinstance(target, GCell) else _dyn_cells(target, bounds)
                for c in cells:
                    if iv is None or iv[0] < init[c][0] or iv[1] > init[c][1]:
                        grown[c] = domain[c]  # the row may change the cell: any value of its domain
        if tuple(grown) == bounds:
            live = {a.row_id for a in enabled}
            return tuple(r.id for r in model.spec.rows if r.id not in live)
        bounds = tuple(grown)
    live = {a.row_id for a in model.actions}  # pragma: no cover - only if a step were not monotone
    return tuple(r.id for r in model.spec.rows if r.id not in live)


def _may_hold(guard: GExpr, bounds) -> bool:
    iv = _eval(guard, bounds)
    return iv is None or iv != (0, 0)


def _dyn_cells(x: GDyn, bounds) -> list[int]:
    """The cells a computed position may denote, given its indices' bounds."""
    offs = [0]
    for ix, stride, size in x.terms:
        lo, hi = _index_range(_eval(ix, bounds), size)
        offs = [o + i * stride for o in offs for i in range(lo, hi + 1)]
    return [x.base + o for o in offs]


def _index_range(iv, size: int) -> tuple[int, int]:
    """The positions an index within `iv` may reach among 0..size-1. An index outside is an evaluation
    error, never a read; bounds wholly outside are drawn to the nearest position so that narrower
    bounds never give more positions (the fixpoint needs each step monotone)."""
    if iv is None:
        return 0, size - 1
    return min(max(iv[0], 0), size - 1), max(min(iv[1], size - 1), 0)


def _eval(e: GExpr, bounds):
    """Bounds of `e` over every state whose cells lie within `bounds` (None: no bound known)."""
    if isinstance(e, GConst):
        return (e.value, e.value)
    if isinstance(e, GCell):
        return bounds[e.pos]
    if isinstance(e, GDyn):
        return _hull(bounds[c] for c in _dyn_cells(e, bounds))
    if isinstance(e, GTable):
        lo, hi = _index_range(_eval(e.index, bounds), len(e.values))
        vals = e.values[lo:hi + 1]
        return (min(vals), max(vals))
    op, args = e.op, e.args
    if op in ("and", "or"):
        ivs = [_truth(_eval(a, bounds)) for a in args]
        decisive, other = (0, 1) if op == "and" else (1, 0)
        if any(t == decisive for t in ivs):
            return (decisive, decisive)
        return (other, other) if all(t == other for t in ivs) else _BOOL
    if op == "not":
        t = _truth(_eval(args[0], bounds))
        return _BOOL if t is None else (1 - t, 1 - t)
    if op == "implies":
        a, b = (_truth(_eval(x, bounds)) for x in args)
        if a == 0 or b == 1:
            return (1, 1)
        return (0, 0) if a == 1 and b == 0 else _BOOL
    if op == "ite":
        t = _truth(_eval(args[0], bounds))
        if t is not None:
            return _eval(args[1] if t else args[2], bounds)
        return _hull((_eval(args[1], bounds), _eval(args[2], bounds)))
    ivs = [_eval(a, bounds) for a in args]
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return _compare(op, ivs[0], ivs[1])
    if any(iv is None for iv in ivs):
        return None
    if op == "+":
        return (sum(iv[0] for iv in ivs), sum(iv[1] for iv in ivs))
    if op == "-":
        return (ivs[0][0] - ivs[1][1], ivs[0][1] - ivs[1][0])
    if op == "*":
        out = ivs[0]
        for iv in ivs[1:]:
            corners = [x * y for x in out for y in iv]
            out = (min(corners), max(corners))
        return out
    if op == "min":
        return (min(iv[0] for iv in ivs), min(iv[1] for iv in ivs))
    if op == "max":
        return (max(iv[0] for iv in ivs), max(iv[1] for iv in ivs))
    return None  # `//`, `%`: no bound is needed to decide a guard so far


def _truth(iv) -> int | None:
    """1 or 0 when the value is surely non-zero or surely zero, None when it may be either."""
    if iv == (0, 0):
        return 0
    if iv is not None and (iv[0] > 0 or iv[1] < 0):
        return 1
    return None


def _compare(op: str, a, b):
    if a is None or b is None:
        return _BOOL
    (alo, ahi), (blo, bhi) = a, b
    if op in ("==", "!="):
        if alo == ahi == blo == bhi:
            same = 1
        elif ahi < blo or bhi < alo:
            same = 0
        else:
            return _BOOL
        v = same if op == "==" else 1 - same
        return (v, v)
    if op in (">", ">="):
        (alo, ahi), (blo, bhi) = b, a
        op = "<" if op == ">" else "<="
    if op == "<":
        return (1, 1) if ahi < blo else (0, 0) if alo >= bhi else _BOOL
    return (1, 1) if ahi <= blo else (0, 0) if alo > bhi else _BOOL


def _hull(ivs):
    lo = hi = None
    for iv in ivs:
        if iv is None:
            return None
        lo = iv[0] if lo is None else min(lo, iv[0])
        hi = iv[1] if hi is None else max(hi, iv[1])
    return None if lo is None else (lo, hi)
