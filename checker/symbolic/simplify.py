"""Cells no action writes, and the ground model with them replaced by their initial values.

A fixed-size layout holds cells a config never uses (a second tid's coordinator state under
tids=1, a second partition's producer state under parts=1). No action writes them, so every
reachable state has them at their initial value. Replacing them by constants folds the guards
and computed indices that read them (`pc_add[i][pc_rqp[i]]` becomes one cell), which narrows the
computed writes and disables actions, which can leave more cells unwritten. A write of a cell's own
initial value (a reset) leaves it frozen.

The simplified model has the same layout, action ids, labels and properties, and the same
behaviour on every state whose frozen cells hold their initial values (every reachable state, and
every state `unroll.Transition.state_constraints` admits), so z3 paths through it replay on the
original model unchanged.
"""
from __future__ import annotations

from dataclasses import replace

from txncheck.spec.evaluate import dyn_cells, fold
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GExpr, GOp, GroundModel, GTable
from .encode import may_fail


class Substitution:
    """Ground expressions with the frozen cells replaced by constants, folded; memoised by identity
    (ground models share subterms)."""

    def __init__(self, init, frozen: frozenset):
        self.init = init
        self.frozen = frozen
        self._memo: dict = {}

    def __call__(self, e: GExpr | None) -> GExpr | None:
        if e is None:
            return None
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self._sub(e)
        self._memo[id(e)] = (e, out)   # e kept alive, so its id stays its own
        return out

    def _sub(self, e: GExpr) -> GExpr:
        if isinstance(e, GConst):
            return e
        if isinstance(e, GCell):
            return GConst(self.init[e.pos]) if e.pos in self.frozen else e
        if isinstance(e, GDyn):
            return self.target(e)
        if isinstance(e, GTable):
            i = self(e.index)
            if isinstance(i, GConst) and 0 <= i.value < len(e.values):
                return GConst(e.values[i.value])
            return GTable(e.values, i)
        assert isinstance(e, GOp), e
        args = tuple(self(a) for a in e.args)
        if all(a is b for a, b in zip(args, e.args)):
            return e
        if (e.op == "ite" and isinstance(args[1], GConst) and args[1] == args[2]
                and not may_fail(args[0])):
            return args[1]   # both branches the same constant (a condition that cannot fail is not needed)
        return fold(e.op, args)

    def target(self, e: GDyn) -> GExpr:
        """A computed read with its index terms substituted: one cell (or its constant) when they
        all fold to in-range constants."""
        t = self.update_target(e)
        return GConst(self.init[t.pos]) if isinstance(t, GCell) and t.pos in self.frozen else t

    def update_target(self, e: GExpr) -> GExpr:
        """A write target: one cell when its index terms all fold to in-range constants (an
        out-of-range constant stays computed: evaluating it is an error)."""
        if isinstance(e, GCell):
            return e
        terms = tuple((self(x), st, sz) for x, st, sz in e.terms)
        if all(isinstance(x, GConst) and 0 <= x.value < sz for x, _st, sz in terms):
            return GCell(e.base + sum(x.value * st for x, st, _sz in terms))
        if all(a[0] is b[0] for a, b in zip(terms, e.terms)):
            return e
        return GDyn(e.var, e.base, terms)


def written_cells(m: GroundModel) -> set[int]:
    """Cells some action that is not statically disabled may change: writing a cell's initial value
    as a constant (a reset of every partition's sequence number, say) does not count."""
    out: set[int] = set()
    for a in m.actions:
        if isinstance(a.guard, GConst) and not a.guard.value:
            continue
        for t, v in a.updates:
            cells = [t.pos] if isinstance(t, GCell) else dyn_cells(t)
            out.update(c for c in cells if not (isinstance(v, GConst) and v.value == m.init[c]))
    return out


def freeze(m: GroundModel) -> tuple[GroundModel, Substitution]:
    """(the simplified model, the substitution that made it; its `frozen` are the frozen cells).

    The greatest fixpoint: start from every cell frozen and unfreeze the cells some action of the
    model simplified under the current set may change, until none is left. Sound by induction on
    the path: a state with the frozen cells at their initial values enables only actions whose
    simplified guard is not false, and those write the frozen cells only with their initial
    values."""
    inits = m.initial_states  # a cell that starts in several values is never frozen
    frozen = frozenset(c for c in range(m.layout.width) if all(s[c] == m.init[c] for s in inits))
    while True:
        sub = Substitution(m.init, frozen)
        actions = tuple(replace(a, guard=sub(a.guard),
                                updates=tuple((sub.update_target(t), sub(v)) for t, v in a.updates))
                        for a in m.actions)
        cur = replace(m, actions=actions)
        changed = frozen & written_cells(cur)
        if not changed:
            break
        frozen = frozen - changed
    return replace(cur, properties=tuple(replace(p, expr=sub(p.expr), when=sub(p.when)) for p in m.properties),
                   strengthening=tuple(replace(p, expr=sub(p.expr), when=sub(p.when)) for p in m.strengthening),
                   terminal=sub(m.terminal)), sub
