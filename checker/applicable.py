"""Rows a configuration switches off: they cannot fire in any state, whatever the search.

A row is not applicable to a configuration when none of its ground actions can ever be enabled, by
construction: its groundings fold to false (the grounder drops them), or its guard is false for every
state whose cells hold values they may hold. What a cell may hold is computed statically, once per
model, starting from every value of its declared domain (a budget `env_x < Config("x")` with x = 0 is
false: env_x ranges over 0..0) and narrowed until nothing changes: a cell may hold its initial values,
the values the rows whose guard may still hold can write to it, and the values no row of the spec
writes at all. So a value only switched-off rows write is excluded, and a row waiting for it (the
stale marker copy NET-10 sends when marker_dups > 0) is switched off too.

A value no row writes stays possible on purpose: a row waiting for it (a state no row enters, an
answer no row gives) is a question about the model, not about the configuration, so it stays
applicable and coverage reports it as "never fired". So does a row only a combination of values would
enable: the analysis looks at each cell on its own.

Sound: at the fixpoint the values contain every initial state and every write of an action enabled
on them, so by induction every reachable state has its cells within them (the engines refuse a value
outside a cell's domain), and an action whose guard is false on them is never enabled.
"""
from __future__ import annotations

from txncheck.spec.evaluate import apply_op
from txncheck.spec.expr import Lit, Op
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GExpr, GroundModel, GTable

_CAP = 256  # values an expression may take before the analysis stops tracking them (None: any value)
_TRUE, _FALSE, _BOTH = frozenset((1,)), frozenset((0,)), frozenset((0, 1))
_ASSOCIATIVE = ("+", "*", "min", "max")
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")


def inapplicable_rows(model: GroundModel) -> tuple[str, ...]:
    """The ids of `model`'s rows that cannot fire in any reachable state, in table order."""
    lay = model.layout
    domain = [frozenset(range(lo, hi + 1)) for lo, hi in zip(lay.cell_lo, lay.cell_hi)]
    unwritten = _unwritten(model)
    keep = [frozenset(s[c] for s in model.initial_states) | unwritten[lay.vars[lay.cell_var[c]].var.name] & domain[c]
            for c in range(model.width)]
    values = list(domain)
    # each step only narrows the values (the step is monotone), so this many steps reach the fixpoint
    for _ in range(sum(len(d) for d in domain) + 2):
        enabled = [a for a in model.actions if 1 in _truth(_eval(a.guard, values))]
        grown = list(keep)
        for a in enabled:
            for target, value in a.updates:
                written = _eval(value, values)
                cells = (target.pos,) if isinstance(target, GCell) else _dyn_cells(target, values)
                for c in cells:
                    # a value outside the domain is an error of the engines, never a state
                    grown[c] = grown[c] | (domain[c] if written is None else written & domain[c])
        if grown == values:
            live = {a.row_id for a in enabled}
            return tuple(r.id for r in model.spec.rows if r.id not in live)
        values = grown
    live = {a.row_id for a in model.actions}  # pragma: no cover - only if a step were not monotone
    return tuple(r.id for r in model.spec.rows if r.id not in live)


def _unwritten(model: GroundModel) -> dict[str, frozenset]:
    """Per var, the values no row of the spec can write, whatever the configuration: an update whose
    value is a literal (or an If choosing among literals) writes those; any other may write anything."""
    written: dict[str, set | None] = {}
    for r in model.spec.rows:
        for u in r.updates:
            name = u.target.var.name
            if written.get(name, set()) is None:
                continue
            lits = _literals(u.value)
            written[name] = None if lits is None else written.get(name, set()) | lits
    out = {}
    for vl in model.layout.vars:
        w = written.get(vl.var.name, set())
        out[vl.var.name] = frozenset() if w is None else frozenset(range(vl.lo, vl.hi + 1)) - frozenset(w)
    return out


def _literals(e) -> set | None:
    if isinstance(e, Lit):
        return {int(e.value)}
    if isinstance(e, Op) and e.op == "ite":
        a, b = _literals(e.args[1]), _literals(e.args[2])
        return None if a is None or b is None else a | b
    return None


def _truth(vals) -> frozenset:
    """The truth values an expression taking `vals` may have."""
    if vals is None:
        return _BOTH
    return frozenset(int(bool(v)) for v in vals)


def _dyn_cells(x: GDyn, values) -> list[int]:
    """The cells a computed position may denote (an index outside its range is an evaluation error,
    never a read)."""
    offs = [0]
    for ix, stride, size in x.terms:
        iv = _eval(ix, values)
        idx = range(size) if iv is None else sorted(i for i in iv if 0 <= i < size)
        offs = [o + i * stride for o in offs for i in idx]
    return [x.base + o for o in offs]


def _eval(e: GExpr, values):
    """The values `e` may take in a state whose cells hold values in `values` (None: any value)."""
    if isinstance(e, GConst):
        return frozenset((e.value,))
    if isinstance(e, GCell):
        return values[e.pos]
    if isinstance(e, GDyn):
        return _union(values[c] for c in _dyn_cells(e, values))
    if isinstance(e, GTable):
        iv = _eval(e.index, values)
        idx = range(len(e.values)) if iv is None else [i for i in iv if 0 <= i < len(e.values)]
        return frozenset(e.values[i] for i in idx)
    op, args = e.op, e.args
    if op in ("and", "or"):
        decisive = 0 if op == "and" else 1
        truths = [_truth(_eval(a, values)) for a in args]
        if any(t == frozenset((decisive,)) for t in truths):
            return frozenset((decisive,))
        return frozenset((1 - decisive,)) if all(t == frozenset((1 - decisive,)) for t in truths) else _BOTH
    if op == "not":
        return frozenset(1 - t for t in _truth(_eval(args[0], values)))
    if op == "implies":
        a, b = (_truth(_eval(x, values)) for x in args)
        return frozenset((1,) if 0 in a else ()) | frozenset(b if 1 in a else ())
    if op == "ite":
        c = _truth(_eval(args[0], values))
        branches = ([args[1]] if 1 in c else []) + ([args[2]] if 0 in c else [])
        return _union(_eval(b, values) for b in branches)
    sets = [_eval(a, values) for a in args]
    if op in _COMPARE:
        return _compare(op, *sets)
    if any(s is None for s in sets):
        return None
    if op in _ASSOCIATIVE:
        out = sets[0]
        for s in sets[1:]:
            out = _combine(op, (out, s))
            if out is None:
                return None
        return out
    return _combine(op, tuple(sets))


def _compare(op: str, a, b) -> frozenset:
    """The truth values of `a op b`, from the two value sets alone (the hot path: every guard compares)."""
    if a is None or b is None:
        return _BOTH
    if not a or not b:
        return frozenset()
    if op in ("==", "!="):
        may_equal = not a.isdisjoint(b)
        may_differ = len(a) > 1 or len(b) > 1 or a != b
        same = frozenset(((1,) if may_equal else ()) + ((0,) if may_differ else ()))
        return same if op == "==" else frozenset(1 - t for t in same)
    if op in (">", ">="):
        a, b, op = b, a, "<" if op == ">" else "<="
    if op == "<":
        return frozenset(((1,) if min(a) < max(b) else ()) + ((0,) if max(a) >= min(b) else ()))
    return frozenset(((1,) if min(a) <= max(b) else ()) + ((0,) if max(a) > min(b) else ()))


def _combine(op: str, sets: tuple) -> frozenset | None:
    """`op` over every choice of one value per argument, or None when there are too many."""
    n = 1
    for s in sets:
        n *= len(s)
    if n > _CAP:
        return None
    combos = [()]
    for s in sets:
        combos = [c + (v,) for c in combos for v in sorted(s)]
    out = set()
    for c in combos:
        try:
            out.add(apply_op(op, list(c)))
        except ZeroDivisionError:
            continue  # an evaluation error, never a value
    return frozenset(out)


def _union(sets) -> frozenset | None:
    out: set = set()
    for s in sets:
        if s is None:
            return None
        out |= s
    return frozenset(out)
