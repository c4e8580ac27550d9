"""Inductive lemmas for bounded model checking and k-induction: mined candidates, proved by Houdini.

A *lemma* is a simple formula over the ground model's cells. Three templates (Daikon-style):

- `in`:  cell x takes only the values S, a strict subset of its type bounds;
- `pair`: cells x < y never take the values (a, b) together (a two-literal clause;
  `not (x == a and y == b)`), for x and y read or written by a common action;
- `le`:  x <= y for two integer cells read or written by a common action whose ranges overlap.

Candidates are what held on sample states (`mine`): the vector engine's reachable states (source
`explore`, optionally capped at `max_states`: a breadth-first prefix), or random walks run with the
vector kernel (source `simulate`, fixed seed). Sampled states only *suggest* candidates;
`houdini` then keeps the largest subset that z3 proves inductive together:

    init satisfies every kept lemma, and
    for every pre-state within the type bounds satisfying every kept lemma, every transition of
    the BMC relation (`unroll.Transition`) leads to a state satisfying every kept lemma.

Each satisfiable one-step query yields a (pre, post) pair; every candidate false in the post-state
is dropped, and the query is repeated to a fixpoint. What survives holds on every reachable state
(induction on the path length), so asserting it on BMC's unrolled states, or assuming it on the
states of k-induction's step case, excludes no reachable behaviour. A lemma is never used because
it held on samples: only the z3 proof counts.

Always properties may be added as candidates (`properties=`): those that survive are proved for
every depth (1-inductive together with the kept lemmas). Measured on Kafka tiny (2026-11-21): the
unary and `le` lemmas (~310 of ~530 candidates) prove no property that is not already 1-inductive
without them (DUR-2, ORD-1, ORD-3, CEPOCH-1, STRUCT-2); asserted in bmc of B4 (depth 23) they cut
solver time by 22% and 33% in two paired runs on a loaded machine (shallow depths slower, the deep
satisfiable queries faster), far from what the deep variants need; pair clauses (~5,000) do not
reach a Houdini fixpoint in 10 minutes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import z3

from txncheck.spec.ground_ir import GroundModel
from .encode import make_solver, value_of
from .unroll import Transition, footprint, require_one_initial_state


@dataclass(frozen=True, order=True)
class Lemma:
    kind: str                  # "in" | "pair" | "le"
    x: int                     # cell position
    y: int = -1                # second cell ("pair", "le")
    vals: tuple = ()           # "in": allowed values of x; "pair": (a, b), the forbidden pair

    def text(self, m: GroundModel) -> str:
        n = m.layout.cell_names
        if self.kind == "in":
            return f"{n[self.x]} in {{{', '.join(map(str, self.vals))}}}"
        if self.kind == "pair":
            a, b = self.vals
            return f"not ({n[self.x]} = {a} and {n[self.y]} = {b})"
        return f"{n[self.x]} <= {n[self.y]}"

    # -- evaluation on sample states (rows of an int matrix) ----------------------------------
    def holds_np(self, X: np.ndarray) -> np.ndarray:
        if self.kind == "in":
            return np.isin(X[:, self.x], self.vals)
        if self.kind == "pair":
            a, b = self.vals
            return ~((X[:, self.x] == a) & (X[:, self.y] == b))
        return X[:, self.x] <= X[:, self.y]

    # -- z3 ---------------------------------------------------------------------------------
    def z3(self, s: list):
        if self.kind == "in":
            return _member(s[self.x], self.vals)
        if self.kind == "pair":
            a, b = self.vals
            return z3.Not(z3.And(_eq(s[self.x], a), _eq(s[self.y], b)))
        return _int(s[self.x]) <= _int(s[self.y])


def _eq(x, v: int):
    if z3.is_bool(x):
        return x if v else z3.Not(x)
    return x == v


def _int(x):
    return z3.If(x, 1, 0) if z3.is_bool(x) else x


def _member(x, vals):
    vals = sorted(vals)
    if z3.is_bool(x):
        if len(vals) == 1:
            return _eq(x, vals[0])
        return z3.BoolVal(True)
    if vals == list(range(vals[0], vals[-1] + 1)):
        return z3.And(x >= vals[0], x <= vals[-1]) if len(vals) > 1 else x == vals[0]
    return z3.Or(*[x == v for v in vals])


# -- sample states: checker/vector/states.py ----------------------------------------------------

# -- candidates -----------------------------------------------------------------------------------
def related_pairs(m: GroundModel) -> set[tuple[int, int]]:
    """Cell pairs (x < y) that some action reads or writes both of (a computed read or write:
    every cell its position can denote)."""
    out: set[tuple[int, int]] = set()
    for a in m.actions:
        r, w = footprint(m, a)
        c = sorted(r | w)
        for i, x in enumerate(c):
            for y in c[i + 1:]:
                out.add((x, y))
    return out


def mine(m: GroundModel, X: np.ndarray, max_candidates: int = 20000, pairs: bool = True,
         order: bool = True) -> list[Lemma]:
    """Candidates true on every row of X, at most `max_candidates` (unary first, then `le`, then
    the pair clauses with the most evidence: expected co-occurrences under independence)."""
    lo, hi = m.layout.cell_lo, m.layout.cell_hi
    n, w = X.shape
    obs = [np.unique(X[:, c]) for c in range(w)]
    unary, les, pcs = [], [], []
    for c in range(w):
        if lo[c] == hi[c]:
            continue
        vals = tuple(int(v) for v in obs[c])
        if len(vals) < hi[c] - lo[c] + 1:
            unary.append(Lemma("in", c, vals=vals))
    var = [c for c in range(w) if len(obs[c]) >= 2]
    if (pairs or order) and var:
        # one-hot columns for (cell, value); co-occurrence counts C = O^T O in chunks
        index = {}
        for c in var:
            for v in obs[c]:
                index[(c, int(v))] = len(index)
        P = len(index)
        counts = np.zeros(P, dtype=np.float64)
        C = np.zeros((P, P), dtype=np.float32)
        chunk = max(1, (1 << 24) // P)
        for r0 in range(0, n, chunk):
            Xc = X[r0:r0 + chunk]
            O = np.zeros((len(Xc), P), dtype=np.float32)
            for c in var:
                for v in obs[c]:
                    O[:, index[(c, int(v))]] = Xc[:, c] == v
            C += O.T @ O
            counts += O.sum(axis=0)
        rel = sorted(p for p in related_pairs(m) if len(obs[p[0]]) >= 2 and len(obs[p[1]]) >= 2)
        bools = {c for c in var if lo[c] == 0 and hi[c] == 1}
        for x, y in rel:
            ix = [index[(x, int(a))] for a in obs[x]]
            iy = [index[(y, int(b))] for b in obs[y]]
            sub = C[np.ix_(ix, iy)] > 0
            if order and x not in bools and y not in bools:
                for (u, v, su) in ((x, y, sub), (y, x, sub.T)):
                    ou, ov = obs[u], obs[v]
                    ok = all(ou[i] <= ov[j] for i, j in zip(*np.nonzero(su)))
                    if ok and ou[-1] > ov[0]:  # not already implied by the value sets
                        les.append(Lemma("le", u, v))
            if pairs:
                for i, j in zip(*np.nonzero(~sub)):
                    a, b = int(obs[x][i]), int(obs[y][j])
                    score = counts[ix[i]] * counts[iy[j]] / n
                    pcs.append((-score, Lemma("pair", x, y, (a, b))))
    pcs.sort(key=lambda t: (t[0], t[1]))
    out = sorted(unary) + sorted(les)
    out += [lm for _s, lm in pcs[:max(0, max_candidates - len(out))]]
    return out[:max_candidates]


# -- Houdini ----------------------------------------------------------------------------------------
@dataclass
class LemmaSet:
    lemmas: list[Lemma]                      # proved inductive (together)
    candidates: int = 0
    source: str = ""
    samples: int = 0
    rounds: int = 0
    sample_s: float = 0.0
    mine_s: float = 0.0
    houdini_s: float = 0.0
    dropped_init: int = 0
    properties_proved: list[str] = field(default_factory=list)   # properties that were candidates and survived
    properties_dropped: list[str] = field(default_factory=list)
    transition: object = None                # the unroll.Transition the lemmas were proved against

    @property
    def total_s(self) -> float:
        return self.sample_s + self.mine_s + self.houdini_s

    def template(self, tr: Transition):
        """The conjunction of the proved lemmas over the template's pre-state."""
        return z3.And(*[lm.z3(tr.pre) for lm in self.lemmas]) if self.lemmas else z3.BoolVal(True)

    def to_json(self) -> dict:
        return {"source": self.source, "samples": self.samples, "candidates": self.candidates,
                "proved": len(self.lemmas), "houdini_rounds": self.rounds,
                "dropped_at_init": self.dropped_init,
                "sample_s": round(self.sample_s, 3), "mine_s": round(self.mine_s, 3),
                "houdini_s": round(self.houdini_s, 3),
                "properties_proved": self.properties_proved, "properties_dropped": self.properties_dropped}


def houdini(m: GroundModel, candidates: list, tr: Transition | None = None, solver: str = "fd",
            properties=(), max_rounds: int = 100000, log=None,
            explore_cti: int = 64) -> tuple[list, list, int, int]:
    """The largest subset of `candidates` (Lemma objects) and `properties` (GroundProperty, e.g.
    always properties as extra candidates) that z3 proves inductive together. Returns
    (lemmas kept, properties kept, rounds, dropped at init)."""
    tr = tr or Transition(m)
    inits = [list(zip(tr.pre, [z3.BoolVal(bool(v)) if z3.is_bool(x) else z3.IntVal(v) for x, v in zip(tr.pre, s)]))
             for s in m.initial_states]
    post_pairs = list(zip(tr.pre, tr.post))
    items = [(c.z3(tr.pre), c) for c in candidates] + [(tr.holds(p), p) for p in properties]
    alive = []
    dropped_init = 0
    for i, (f, _c) in enumerate(items):  # a candidate must hold in every initial state
        if all(z3.is_true(z3.simplify(z3.substitute(f, *init))) for init in inits):
            alive.append(i)
        else:
            dropped_init += 1
    s = make_solver(solver)
    s.add(*tr.state_constraints(tr.pre))
    s.add(tr.relation)
    lits = [z3.Bool(f"lemma.{i}") for i in range(len(items))]
    posts = [z3.substitute(f, *post_pairs) for f, _c in items]
    for i in alive:
        s.add(z3.Implies(lits[i], items[i][0]))
    rounds = 0
    while alive and rounds < max_rounds:
        rounds += 1
        q = z3.Bool(f"houdini.{rounds}")
        s.add(z3.Implies(q, z3.Or(*[z3.Not(posts[i]) for i in alive])))
        t0 = time.perf_counter()
        r = s.check(q, *[lits[i] for i in alive])
        if log:
            log(f"houdini round {rounds}: {len(alive)} alive, {r}, {time.perf_counter() - t0:.2f} s")
        if r == z3.unsat:
            break
        if r != z3.sat:
            raise RuntimeError(f"houdini: z3 answered {r} ({s.reason_unknown()})")
        mdl = s.model()
        bad = {i for i in alive if z3.is_false(mdl.eval(posts[i], model_completion=True))}
        s.add(z3.Not(q))  # after reading the model: adding an assertion discards it
        assert bad, "houdini: z3's model breaks no candidate"
        alive = [i for i in alive if i not in bad]
        if explore_cti and alive:
            # the model's pre-state satisfies every surviving candidate: search explicitly from
            # it, through states that still satisfy them all, for more successors breaking some
            # (dropping is always sound, and only candidates such a pre-state breaks go)
            pre = tuple(value_of(mdl, x) for x in tr.pre)
            more = _explicit_drops(m, pre, [items[i][1] for i in alive if i < len(candidates)], explore_cti)
            if more:
                lem_alive = [i for i in alive if i < len(candidates)]
                gone = {lem_alive[j] for j in more}
                bad |= gone
                alive = [i for i in alive if i not in gone]
        if log:
            log("  dropped " + "; ".join(str(items[i][1].text(m) if i < len(candidates) else items[i][1].name)
                                         for i in sorted(bad))[:300])
    else:
        if alive:
            raise RuntimeError("houdini: no fixpoint within max_rounds")
    keep_l = [items[i][1] for i in alive if i < len(candidates)]
    keep_p = [items[i][1] for i in alive if i >= len(candidates)]
    return keep_l, keep_p, rounds, dropped_init


def _successors(m: GroundModel, s: tuple) -> list[tuple]:
    """Successors by the reference interpreter; an action whose evaluation fails is not taken
    (as in the z3 relation, whose picks require every evaluated expression to be defined)."""
    from txncheck.spec.errors import EvaluationError
    from txncheck.spec.evaluate import evaluate, successor
    out = []
    for a in m.actions:
        try:
            if evaluate(a.guard, s, a.row_id):
                out.append(successor(m, a, s))
        except EvaluationError:
            continue
    return out


def _explicit_drops(m: GroundModel, start: tuple, lemmas: list, budget: int) -> set[int]:
    """Indices of `lemmas` broken by a successor of a state that satisfies every lemma not yet
    broken, searching breadth-first from `start` (which satisfies them all) through at most
    `budget` such states."""
    broken: set[int] = set()
    frontier, seen, n = [start], {start}, 0
    while frontier and n < budget:
        nxt = []
        for s in frontier:
            if n >= budget:
                break
            n += 1
            succ = _successors(m, s)
            if not succ:
                continue
            Y = np.asarray(succ, dtype=np.int64)
            for j, lm in enumerate(lemmas):
                if j not in broken and not lm.holds_np(Y).all():
                    broken.add(j)
            for t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        # continue only through states that satisfy every lemma still standing
        live = [j for j in range(len(lemmas)) if j not in broken]
        if nxt and live:
            Y = np.asarray(nxt, dtype=np.int64)
            ok = np.ones(len(nxt), dtype=bool)
            for j in live:
                ok &= lemmas[j].holds_np(Y)
            frontier = [t for t, k in zip(nxt, ok) if k]
        else:
            frontier = []
    return broken


def prove_lemmas(m: GroundModel, source: str = "explore", max_states: int | None = None,
                 max_candidates: int = 20000, pairs: bool = False, order: bool = True,
                 walks: int = 2000, length: int = 80, seed: int = 0, solver: str = "smt",
                 tr: Transition | None = None, properties=(), log=None, explore_cti: int = 64) -> LemmaSet:
    """Sample, mine and prove: the proved lemmas of model m (see the module docstring).

    `pairs` is off by default: on Kafka tiny the ~5,000 pair clauses each need their own Houdini
    round or two (0.1-8 s a round), which did not reach a fixpoint in 10 minutes, while the
    unary and `le` candidates (~500) converge in ~100 rounds (20-80 s)."""
    require_one_initial_state(m, "txncheck bmc --lemmas")
    from txncheck.checker.vector.states import reachable_states, simulated_states
    t0 = time.perf_counter()
    tr = tr or Transition(m)
    if source == "explore":
        X = reachable_states(m, max_states)
    elif source == "simulate":
        X = simulated_states(m, walks, length, seed)
    else:
        raise ValueError(f"unknown lemma source {source!r}; choose explore or simulate")
    t1 = time.perf_counter()
    cands = mine(m, X, max_candidates, pairs=pairs, order=order)
    t2 = time.perf_counter()
    kept, kept_p, rounds, d0 = houdini(m, cands, tr, solver, properties, log=log, explore_cti=explore_cti)
    t3 = time.perf_counter()
    ls = LemmaSet(kept, len(cands), source, int(X.shape[0]), rounds, t1 - t0, t2 - t1, t3 - t2, d0,
                  transition=tr)
    names = {p.name for p in kept_p}
    ls.properties_proved = [p.name for p in properties if p.name in names]
    ls.properties_dropped = [p.name for p in properties if p.name not in names]
    return ls
