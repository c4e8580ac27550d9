"""The vector kernel: a ground model compiled into numpy kernels over whole frontiers.

`VectorKernel(model, symmetry)` is deterministic and cheap to build from a `GroundModel` (no global
state), so a Spark executor can rebuild it from (spec, config overrides, variant).

States are integer matrices. The public methods take row-major matrices (one row per state, one
column per cell, `dtype` = the narrowest integer type for the cells' domains); internally the
kernel works on the transpose (`cols`, one contiguous row per cell), so every cell read is a
contiguous vector.

Expansion follows the architecture's performance notes: one ground action at a time, its guard
evaluated on every frontier state at once; successors are not built. A successor's fingerprint is
its parent's XOR the Zobrist deltas of the cells the action writes (with symmetry: for each
permutation of the group at once, from the parent's fingerprints under every permutation), so
only (fingerprint, parent row, action) triples leave the kernel, and full states are materialised
only for the candidates the caller selects (the new ones).
"""
from __future__ import annotations

import numpy as np

from txncheck.checker.fingerprint import Fingerprinter
from txncheck.checker.symmetry import permutations
from txncheck.spec.errors import EvaluationError
from txncheck.spec.evaluate import evaluate, successor
from txncheck.spec.ground_ir import GCell, GConst, GDyn, GroundModel
from txncheck.spec.model import ALWAYS, GRAPH_KINDS, SOMETIMES

from .compile import Emitter, Program, matrix_dtype, pinned_cells
from .layout import rows_of

_U64 = np.uint64

# Compiled code objects by generated source text: a pure cache (same text, same code), so that
# rebuilding a kernel for the same model in one process (tests, Spark tasks) skips `compile`.
_CODE_CACHE: dict[str, object] = {}
PROP_CHUNK = 1 << 18  # states per call of a property's function (`prop_cols`), the fastest of 2^16..2^18


class Expansion:
    """Successor candidates of one frontier matrix.

    `fps[i]` is the canonical fingerprint of the successor produced by ground action `actions[i]`
    from frontier row `parent_rows[i]`. Stuttering steps (a successor whose canonical fingerprint
    equals its parent's) are counted in `fired` and `generated` and set `has_successor`, but are
    not listed: their target is the parent, which is already visited. Candidates are ordered by
    frontier chunk, then action id, then parent row."""

    __slots__ = ("fps", "parent_rows", "actions", "fired", "has_successor", "generated", "_kernel", "_cols")

    def __init__(self, kernel, cols, fps, parent_rows, actions, fired, has_successor):
        self._kernel = kernel
        self._cols = cols
        self.fps = fps
        self.parent_rows = parent_rows
        self.actions = actions
        self.fired = fired
        self.has_successor = has_successor
        self.generated = int(fired.sum())

    def states(self, select: np.ndarray) -> np.ndarray:
        """Canonical successor states (row-major) of the selected candidates, in `select` order."""
        cols, _, _ = self._kernel.successors_cols(self._cols, self.parent_rows[select], self.actions[select])
        return rows_of(cols)


class VectorKernel:
    def __init__(self, model: GroundModel, symmetry: bool = False, chunk: int | None = None,
                 prop_chunk: int = PROP_CHUNK):
        self.model = model
        lay = model.layout
        self.layout = lay
        self.width = lay.width
        self.n_actions = len(model.actions)
        lo = min(lay.cell_lo, default=0)
        hi = max(lay.cell_hi, default=0)
        self.dtype = matrix_dtype(min(lo, 0), max(hi, 0))
        self.byte = self.dtype.itemsize == 1
        self.fpr = Fingerprinter(lay)
        self.perms = permutations(model, symmetry)
        self.symmetric = bool(self.perms)
        self.G = len(self.perms) + 1
        if chunk is None:
            chunk = 1 << 16 if not self.symmetric else max(512, (1 << 21) // self.G)
        self.chunk = chunk
        self.prop_chunk = prop_chunk
        self._build_tables()
        self._generate()

    # -- tables -------------------------------------------------------------------------------
    def _idx_of_value(self, pos: int, v: int) -> int:
        """Index of value v of cell pos into the Zobrist tables."""
        if self.byte:
            return int(v) & 0xFF
        return int(v) - self.layout.cell_lo[pos]

    def _build_tables(self):
        lay = self.layout
        w = self.width
        if self.byte:
            S = 256
        else:
            S = max((h - l + 1 for l, h in zip(lay.cell_lo, lay.cell_hi)), default=1)
        self.S = S
        Z = self.fpr.array  # [pos, value - lo]
        ZT = np.zeros((w, S), dtype=_U64)
        for p in range(w):
            for v in range(lay.cell_lo[p], lay.cell_hi[p] + 1):
                ZT[p, self._idx_of_value(p, v)] = Z[p, v - lay.cell_lo[p]]
        self.ZT = ZT
        # per-permutation tables: ZP[g, j, idx(v)] = Z[i, vm_i(v) - lo_i] where src_i = j
        if self.symmetric:
            ZP = np.zeros((self.G, w, S), dtype=_U64)
            ZP[0] = ZT
            self.perm_src = []
            self.perm_vmaps = []  # per perm: list of (i, table idx(v) -> new value) for remapped cells
            for g, perm in enumerate(self.perms, start=1):
                vm_list = []
                for i, j in enumerate(perm.src):
                    vm = perm.value_map[i]
                    lo_i = lay.cell_lo[i]
                    for v in range(lay.cell_lo[j], lay.cell_hi[j] + 1):
                        nv = v if vm is None else vm[v - lo_i]
                        ZP[g, j, self._idx_of_value(j, v)] = Z[i, nv - lo_i]
                    if vm is not None:
                        tab = np.zeros(S, dtype=self.dtype)
                        for v in range(lo_i, lay.cell_hi[i] + 1):
                            tab[self._idx_of_value(i, v)] = vm[v - lo_i]
                        vm_list.append((i, tab))
                self.perm_src.append(np.asarray(perm.src, dtype=np.int64))
                self.perm_vmaps.append(vm_list)
            self.ZP = ZP
            self.ZPT = np.ascontiguousarray(ZP.transpose(1, 0, 2))  # [j, g, idx]

    def _index_code(self, code: str, pos_lo: int, already_matrix: bool) -> str:
        """Code turning an int array (of the matrix dtype when `already_matrix`) into table indices."""
        if self.byte:
            if already_matrix:
                return f"{code}.view(_dt_uint8)"
            return f"{code}.astype(_MDT).view(_dt_uint8)"
        return f"({code}.astype(_dt_int64) - {pos_lo})"

    def _value_index_code(self, val, pos_lo: int) -> str:
        """Code turning a computed (not constant) value `val` of a cell into table indices."""
        if val.kind == "bool" and self.byte:
            return f"{val.code}.view(_dt_uint8)"
        vcode = val.code if val.kind == "int" else f"{val.code}.view(_dt_uint8)"
        return self._index_code(vcode, pos_lo, val.kind == "int" and np.dtype(val.dtype) == self.dtype)

    # -- code generation ----------------------------------------------------------------------
    def _generate(self):
        m = self.model
        lay = self.layout
        prog = Program(lay, self.dtype)
        self.prog = prog
        src: list[str] = []
        # guards: one generator over a chunk, CSE across actions
        self.movers = [self._mover(a) for a in m.actions]
        em = Emitter(prog, "full")
        never: set[int] = set()  # actions whose guard is false in every state the layout holds
        for a in m.actions:
            em.lines.append(f"    # {a.label}")
            v = em.as_bool(em.expr(a.guard))
            if v.err:
                em.emit(f"if {v.err}.any(): _fail_guard({a.id}, C, None, {v.err})")
            if v.const:
                if v.lo:
                    em.emit(f"yield {a.id}, True")
                else:
                    never.add(a.id)
            else:
                em.emit(f"yield {a.id}, {v.code}")
        head = ["def guards(C):", "    if False:", "        yield None  # always a generator, even with no enabled action"]
        if em.uses_index:
            head.append("    _AR = _np.arange(C.shape[1])")
        src += head + em.lines + ["    return", ""]

        self.may_stutter: list[bool] = []
        for a in m.actions:
            if a.id in never:
                # never enabled (a row the config switches off whose guard reads a cell of one value, such as
                # FLT-05 with leader_failovers 0): no code. On Kafka ci that is a quarter of the kernel's source
                self.may_stutter.append(False)
                continue
            src += self._gen_delta(prog, a)
            src += self._gen_apply(prog, a)

        # properties (full mode), one function each
        self.prop_funcs: dict[str, str] = {}
        for k, p in enumerate(m.properties):
            for part, expr in (("expr", p.expr), ("when", p.when)):
                if expr is None:
                    continue
                em = Emitter(prog, "full")
                v = em.as_bool(em.expr(expr))
                if v.err:
                    em.emit(f"if {v.err}.any(): _fail_prop({k}, {part!r}, C, {v.err})")
                fn = f"prop_{k}_{part}"
                body = ([f"def {fn}(C):"] + (["    _AR = _np.arange(C.shape[1])"] if em.uses_index else [])
                        + em.lines)
                if v.const:
                    body.append(f"    return _np.full(C.shape[1], {bool(v.lo)}, dtype=_bool)")
                else:
                    body.append(f"    return {v.code}")
                src += body + [""]
                self.prop_funcs[f"{p.name}:{part}"] = fn
        em = Emitter(prog, "full")
        body = ["def terminal(C):"]
        if m.terminal is None:
            body.append("    return _np.zeros(C.shape[1], dtype=_bool)")
        else:
            v = em.as_bool(em.expr(m.terminal))
            if v.err:
                em.emit(f"if {v.err}.any(): _fail_prop(-1, 'terminal', C, {v.err})")
            if em.uses_index:
                body.append("    _AR = _np.arange(C.shape[1])")
            body += em.lines
            body.append(f"    return _np.full(C.shape[1], {bool(v.lo)}, dtype=_bool)" if v.const
                        else f"    return {v.code}")
        src += body + [""]
        self.source = "\n".join(src) + "\n"
        ns = {"_np": np, "_bool": np.bool_, "_MDT": self.dtype, "_U64": _U64,
              "_fail_guard": self._fail_guard, "_fail_update": self._fail_update, "_fail_prop": self._fail_prop,
              "_ZT": self.ZT, "_ZTF": self.ZT.reshape(-1)}
        for t in ("int8", "int16", "int32", "int64", "uint8"):
            ns[f"_dt_{t}"] = np.dtype(t)
        if self.symmetric:
            ns["_ZPT"] = self.ZPT
            ns["_ZPF"] = self.ZP.reshape(self.G, -1)
        ns.update(prog.consts)
        code = _CODE_CACHE.get(self.source)
        if code is None:
            code = compile(self.source, f"<txncheck-vector:{m.spec.name}>", "exec")
            if len(_CODE_CACHE) >= 32:
                _CODE_CACHE.clear()
            _CODE_CACHE[self.source] = code
        exec(code, ns)
        self._ns = ns
        self._guards = ns["guards"]
        self._delta = [ns.get(f"delta_{a.id}", _never_enabled) for a in m.actions]
        self._apply = [ns.get(f"apply_{a.id}", _never_enabled) for a in m.actions]
        self._terminal = ns["terminal"]
        self._props = {k: ns[v] for k, v in self.prop_funcs.items()}

    def _mover(self, a) -> tuple[int, int] | None:
        """(cell, value) when the action's only effect is writing the constant `value` to one fixed
        cell that its guard does not pin: then its successor equals its parent exactly where the cell
        already holds the value, so the expansion masks those states out before the delta instead of
        comparing fingerprints after the delta (a stuttering step still counts as fired)."""
        lay = self.layout
        pins = pinned_cells(a.guard, lay)
        writes = [(t, v) for t, v in a.updates
                  if not (isinstance(t, GCell) and isinstance(v, GConst) and pins.get(t.pos) == v.value)]
        if len(writes) != 1:
            return None
        t, v = writes[0]
        if not (isinstance(t, GCell) and isinstance(v, GConst)) or t.pos in pins:
            return None
        lo, hi = lay.cell_lo[t.pos], lay.cell_hi[t.pos]
        if not lo <= v.value <= hi:
            return None  # the update fails wherever the action is enabled: the delta reports it
        # fingerprint stutter must be exactly state stutter: distinct Zobrist values for the cell
        z = self.ZT[t.pos, [self._idx_of_value(t.pos, x) for x in range(lo, hi + 1)]]
        return (t.pos, v.value) if len(np.unique(z)) == len(z) else None

    def _updates_code(self, prog, a, em: Emitter, check: bool):
        """Emit values and targets of an action's updates (rows mode). Returns [(pos|None, pcode|None, Val)], the
        Val None for an update that writes its cell back (`_keeps`), whose value needs no code."""
        lay = self.layout
        out = []
        errs = []
        for t, v in a.updates:
            if _keeps((t, v)):  # its value is in its cell's domain, and a computed one errs where its target does
                if isinstance(t, GCell):
                    out.append((t.pos, None, None))
                elif check:
                    p, perr = em.position(t)
                    out.append((None, p, None))
                    errs += [perr] if perr else []
                else:
                    out.append((None, None, None))
                continue
            val = em.expr(v)  # a bool array is written as 0/1
            if isinstance(t, GCell):
                out.append((t.pos, None, val))
                if val.err:
                    errs.append(val.err)
            else:
                p, perr = em.position(t)
                out.append((None, p, val))
                errs += [e for e in (val.err, perr) if e]
        if not check:
            return out
        err = em.or_err(*errs)
        if err:
            em.emit(f"if {err}.any(): _fail_update({a.id}, C, R, {err})")
        for k, (pos, pcode, val) in enumerate(out):
            if val is None:
                continue
            base = pos if pos is not None else a.updates[k][0].base
            lo, hi = lay.cell_lo[base], lay.cell_hi[base]
            if val.lo < lo or val.hi > hi:
                if val.const:
                    em.emit(f"_fail_update({a.id}, C, R, _np.ones(len(R), dtype=_bool))")
                else:
                    code = val.code if val.kind == "int" else f"{val.code}.view(_dt_uint8)"
                    b = em.tmp("e")
                    em.emit(f"{b} = ({code} < {lo}) | ({code} > {hi})")
                    em.emit(f"if {b}.any(): _fail_update({a.id}, C, R, {b})")
        dyn = [k for k, (pos, _, _) in enumerate(out) if pos is None]
        if dyn and len(out) > 1:
            for i in range(len(out)):
                for j in range(i + 1, len(out)):
                    if out[i][0] is not None and out[j][0] is not None:
                        continue
                    ci = out[i][1] if out[i][0] is None else str(out[i][0])
                    cj = out[j][1] if out[j][0] is None else str(out[j][0])
                    b = em.tmp("e")
                    em.emit(f"{b} = _np.asarray({ci} == {cj})")
                    em.emit(f"if {b}.any(): _fail_update({a.id}, C, R, _np.broadcast_to({b}, (len(R),)))")
        return out

    def _gen_delta(self, prog, a) -> list[str]:
        lay = self.layout
        em = Emitter(prog, "rows")
        ups = self._updates_code(prog, a, em, check=True)
        pins = pinned_cells(a.guard, lay)
        never = any(val is not None and pos is not None and pos in pins and val.const and val.lo != pins[pos]
                    for pos, _, val in ups)
        self.may_stutter.append(not never)
        const_fp = 0  # XOR of constant parts (no symmetry)
        const_cols = []  # constant (G,) vectors (symmetry)
        parts = []
        for k, (pos, pcode, val) in enumerate(ups):
            if val is None:
                continue  # written back (`_keeps`): old and new value are one, their terms cancel (checked above)
            if pos is not None:
                # old value
                if pos in pins:
                    old_const = pins[pos]
                    if val.const and val.lo == old_const:
                        continue  # writes the value the guard requires: no change
                    self._z_const(pos, old_const, parts, const_cols)
                    if not self.symmetric:
                        const_fp ^= int(self.ZT[pos, self._idx_of_value(pos, old_const)])
                else:
                    old = em.cell(pos)
                    ix = self._index_code(old, lay.cell_lo[pos], True)
                    parts.append(self._z_gather(pos, ix))
                if val.const:
                    if not self.symmetric:
                        const_fp ^= int(self.ZT[pos, self._idx_of_value(pos, val.lo)])
                    else:
                        self._z_const(pos, val.lo, parts, const_cols)
                else:
                    parts.append(self._z_gather(pos, self._value_index_code(val, lay.cell_lo[pos])))
            else:
                base = a.updates[k][0].base
                lo = lay.cell_lo[base]
                old = em.tmp("o")
                em.emit(f"{old} = C[{pcode}, R]")
                ixo = self._index_code(old, lo, True)
                parts.append(self._z_dyn(pcode, ixo))
                if val.const:
                    ixn = f"{self._idx_of_value(base, val.lo)}"
                else:
                    ixn = self._value_index_code(val, lo)
                parts.append(self._z_dyn(pcode, ixn))
        lines = [f"def delta_{a.id}(C, R):", f"    # {a.label}"] + em.lines
        if not self.symmetric:
            terms = [p for p in parts]
            if const_fp:
                terms.append(f"_U64({const_fp})")
            if not terms:
                lines.append("    return _U64(0)")
            else:
                lines.append("    return " + " ^ ".join(terms))
        else:
            terms = list(parts)
            if const_cols:
                acc = np.zeros((self.G, 1), dtype=_U64)
                for c in const_cols:
                    acc ^= c
                terms.append(prog.constant(acc))
            if not terms:
                lines.append(f"    return _np.zeros(({self.G}, 1), dtype=_U64)")
            else:
                lines.append("    return " + " ^ ".join(terms))
        return lines + [""]

    def _z_const(self, pos, value, parts, const_cols):
        if self.symmetric:
            const_cols.append(self.ZPT[pos][:, self._idx_of_value(pos, value)][:, None].copy())

    def _z_gather(self, pos, ix) -> str:
        if self.symmetric:
            return f"_ZPT[{pos}][:, {ix}]"
        return f"_ZT[{pos}][{ix}]"

    def _z_dyn(self, pcode, ix) -> str:
        if self.symmetric:
            return f"_ZPF[:, {pcode} * {self.S} + {ix}]"
        return f"_ZTF[{pcode} * {self.S} + {ix}]"

    def _gen_apply(self, prog, a) -> list[str]:
        em = Emitter(prog, "rows")
        ups = self._updates_code(prog, a, em, check=False)
        lines = [f"def apply_{a.id}(C, R, out, S):"] + em.lines
        for pos, pcode, val in ups:
            if val is None:
                continue  # written back (`_keeps`): `out` starts as the parent's copy
            code = val.code if val.kind != "bool" else f"{val.code}.view(_dt_uint8)"
            if pos is not None:
                lines.append(f"    out[{pos}, S] = {code}")
            else:
                lines.append(f"    out[{pcode}, S] = {code}")
        lines.append("    return out")
        return lines + [""]

    # -- errors -------------------------------------------------------------------------------
    def _state(self, C, col) -> tuple:
        return tuple(int(x) for x in C[:, col])

    def _raise(self, s, err: EvaluationError, label: str | None):
        msg = err.args[0].split(": ", 1)[-1]
        if label:
            msg = f"{msg} (action {label})"
        raise EvaluationError(msg, err.row, self.model.render_state(s)) from None

    def _fail_guard(self, aid, C, R, mask):
        col = int(np.flatnonzero(mask)[0])
        col = col if R is None else int(R[col])
        a = self.model.actions[aid]
        s = self._state(C, col)
        try:
            evaluate(a.guard, s, a.row_id)
        except EvaluationError as err:
            self._raise(s, err, a.label)
        raise EvaluationError(f"internal: vector guard of {a.label} failed where the reference does not",
                              a.row_id, self.model.render_state(s))

    def _fail_update(self, aid, C, R, mask):
        col = int(R[int(np.flatnonzero(mask)[0])])
        a = self.model.actions[aid]
        s = self._state(C, col)
        try:
            successor(self.model, a, s)
        except EvaluationError as err:
            self._raise(s, err, a.label)
        raise EvaluationError(f"internal: vector update of {a.label} failed where the reference does not",
                              a.row_id, self.model.render_state(s))

    def _fail_prop(self, k, part, C, mask):
        col = int(np.flatnonzero(mask)[0])
        s = self._state(C, col)
        if k < 0:
            expr, what = self.model.terminal, "terminal condition"
        else:
            p = self.model.properties[k]
            expr, what = (p.expr if part == "expr" else p.when), f"property {p.name}"
        try:
            evaluate(expr, s, None)
        except EvaluationError as err:
            raise EvaluationError(f"{err.args[0]} (evaluating the {what})", None,
                                  self.model.render_state(s)) from None
        raise EvaluationError(f"internal: vector evaluation of the {what} failed", None, self.model.render_state(s))

    # -- fingerprints and symmetry ------------------------------------------------------------
    def _index(self, col: np.ndarray, pos: int) -> np.ndarray:
        if self.byte:
            return col.view(np.uint8)
        return col.astype(np.int64) - self.layout.cell_lo[pos]

    def fps_cols(self, cols: np.ndarray) -> np.ndarray:
        """Plain (non-canonical) fingerprints of column-major states."""
        n = cols.shape[1]
        fp = np.zeros(n, dtype=_U64)
        for p in range(self.width):
            fp ^= self.ZT[p][self._index(cols[p], p)]
        return fp

    def perm_fps_cols(self, cols: np.ndarray) -> np.ndarray:
        """Fingerprints under every element of the symmetry group: shape (G, n), row 0 identity."""
        n = cols.shape[1]
        P = np.zeros((self.G, n), dtype=_U64)
        for p in range(self.width):
            P ^= self.ZPT[p][:, self._index(cols[p], p)]
        return P

    def canonicalise_cols(self, cols: np.ndarray):
        """(canonical cols, canonical fps, perm fps of the canonical states or the fps)."""
        if not self.symmetric:
            f = self.fps_cols(cols)
            return cols, f, f
        P = self.perm_fps_cols(cols)
        g = P.argmin(axis=0)
        out = cols.copy()
        for gi in np.unique(g):
            if gi == 0:
                continue
            sel = np.flatnonzero(g == gi)
            sub = cols[:, sel]
            moved = sub[self.perm_src[gi - 1]]
            for i, tab in self.perm_vmaps[gi - 1]:
                moved[i] = tab[self._index(moved[i], i)]
            out[:, sel] = moved
        P2 = self.perm_fps_cols(out)
        return out, P2.min(axis=0), P2

    # -- public contract ----------------------------------------------------------------------
    def initial_cols(self):
        """(cols, fps, perm fps) of the distinct canonical initial states, by increasing fingerprint."""
        cols = np.ascontiguousarray(np.asarray(self.model.initial_states, dtype=self.dtype).T)
        cols, f, P = self.canonicalise_cols(cols)
        _, keep = np.unique(f, return_index=True)
        return np.ascontiguousarray(cols[:, keep]), f[keep], P[..., keep]

    def initial(self) -> np.ndarray:
        return np.ascontiguousarray(self.initial_cols()[0].T)

    def fingerprints(self, states: np.ndarray) -> np.ndarray:
        cols = np.ascontiguousarray(np.asarray(states, dtype=self.dtype).T)
        if not self.symmetric:
            return self.fps_cols(cols)
        return self.perm_fps_cols(cols).min(axis=0)

    def expand(self, states: np.ndarray) -> Expansion:
        cols = np.ascontiguousarray(np.asarray(states, dtype=self.dtype).T)
        P = self.perm_fps_cols(cols) if self.symmetric else self.fps_cols(cols)
        return self.expand_cols(cols, P)

    def properties(self, states: np.ndarray, names=None) -> dict[str, np.ndarray]:
        cols = np.ascontiguousarray(np.asarray(states, dtype=self.dtype).T)
        return self.properties_cols(cols, names)

    def deadlocks(self, states: np.ndarray, has_successor: np.ndarray) -> np.ndarray:
        cols = np.ascontiguousarray(np.asarray(states, dtype=self.dtype).T)
        return ~np.asarray(has_successor, dtype=bool) & ~self.terminal_cols(cols)

    # -- column-major internals (used by the explorer) ----------------------------------------
    def terminal_cols(self, cols) -> np.ndarray:
        return np.asarray(self._terminal(cols), dtype=bool)

    def properties_cols(self, cols, names=None) -> dict[str, np.ndarray]:
        out = {}
        for p in self.model.properties:
            if names is not None and p.name not in names:
                continue
            v = self.prop_cols(p.name, "expr", cols)
            if p.kind == ALWAYS:
                out[p.name] = ~v
            elif p.kind == SOMETIMES:
                out[p.name] = v
            elif p.kind in GRAPH_KINDS:
                out[p.name] = v
                out[p.name + ":when"] = self.prop_cols(p.name, "when", cols)
        return out

    def prop_cols(self, name: str, part: str, cols) -> np.ndarray:
        """The property's expression (`part` "expr") or its `when` condition on every state of `cols`, a
        piece of `prop_chunk` states at a time: a property's function keeps every temporary until it returns
        (on Kafka up to 600 of them), so over a whole level of 10^6 states they left the caches and held
        hundreds of MiB; pieces make Kafka nightly's properties a fifth cheaper (benchmarks/RESULTS.md)."""
        fn = self._props.get(f"{name}:{part}")
        n = cols.shape[1]
        if fn is None:
            return np.ones(n, dtype=bool)
        size = self.prop_chunk
        if n <= size:
            return np.asarray(fn(cols), dtype=bool)
        out = np.empty(n, dtype=bool)
        for a in range(0, n, size):
            out[a:a + size] = fn(cols[:, a:a + size])
        return out

    def expand_cols(self, cols: np.ndarray, P: np.ndarray, need_has: bool = True) -> Expansion:
        """Expand column-major states `cols` (w × n) given their fingerprints `P` (n, or (G, n)
        under every permutation with symmetry)."""
        n = cols.shape[1]
        A = self.n_actions
        fired = np.zeros(A, dtype=np.int64)
        has = np.zeros(n, dtype=bool)
        fps = P.min(axis=0) if self.symmetric else P
        out_fp, out_rows, out_act, out_len = [], [], [], []
        delta = self._delta
        stutter = self.may_stutter
        movers = self.movers
        sym = self.symmetric
        chunk = self.chunk
        with np.errstate(all="ignore"):
            for a0 in range(0, n, chunk):
                C = cols[:, a0:a0 + chunk]
                k = C.shape[1]
                hs = has[a0:a0 + k]
                allrows = None
                for aid, mask in self._guards(C):
                    mover = movers[aid]
                    if mask is True:
                        if allrows is None:
                            allrows = np.arange(k)
                        rows = allrows
                        if need_has:
                            hs[:] = True
                        fired[aid] += k
                    else:
                        if mover is None:
                            rows = np.flatnonzero(mask)
                            enabled = len(rows)
                        else:
                            enabled = np.count_nonzero(mask)
                        if not enabled:
                            continue
                        fired[aid] += enabled
                        if need_has:
                            hs |= mask
                    if mover is not None:  # only the states it changes
                        cell = C[mover[0]]
                        if mask is True:
                            rows = np.flatnonzero(cell != mover[1])
                        elif enabled * 8 >= k:  # dense: compare whole columns
                            rows = np.flatnonzero(mask & (cell != mover[1]))
                        else:
                            rows = np.flatnonzero(mask)
                            rows = rows[cell[rows] != mover[1]]
                        if not len(rows):
                            continue
                    d = delta[aid](C, rows)
                    R = rows + a0 if a0 else rows
                    check = stutter[aid] and (sym or mover is None)
                    pf = fps[R]
                    if sym:
                        cf = (P[:, R] ^ d).min(axis=0)
                    elif check:
                        cf = pf ^ d
                    else:
                        cf = pf
                        cf ^= d
                    if check:
                        keep = cf != pf
                        if not keep.all():
                            cf = cf[keep]
                            R = R[keep]
                    if len(cf):
                        out_fp.append(cf)
                        out_rows.append(R)
                        out_act.append(aid)
                        out_len.append(len(cf))
        if out_fp:
            cfps = np.concatenate(out_fp)
            prow = np.concatenate(out_rows).astype(np.int64, copy=False)
            acts = np.repeat(np.asarray(out_act, dtype=np.int32), out_len)
        else:
            cfps = np.zeros(0, dtype=_U64)
            prow = np.zeros(0, dtype=np.int64)
            acts = np.zeros(0, dtype=np.int32)
        if not need_has:
            has = None
        return Expansion(self, cols, cfps, prow, acts, fired, has)

    def successors_cols(self, cols: np.ndarray, parent_rows: np.ndarray, actions: np.ndarray, known_fps=None):
        """Canonical successors (w × k, in the given order) of (parent row, action) pairs, their
        canonical fingerprints, and their fingerprints under every permutation (symmetry) or
        plain fingerprints."""
        k = len(parent_rows)
        out = np.take(cols, parent_rows, axis=1)
        if k:
            order = np.argsort(actions.astype(np.int16) if self.n_actions < 32768 else actions, kind="stable")
            acts_sorted = actions[order]
            bounds = np.flatnonzero(np.diff(acts_sorted)) + 1
            starts = np.concatenate(([0], bounds))
            ends = np.concatenate((bounds, [k]))
            with np.errstate(all="ignore"):
                for s0, e0 in zip(starts, ends):
                    sel = order[s0:e0]
                    aid = int(acts_sorted[s0])
                    self._apply[aid](cols, parent_rows[sel], out, sel)
        if known_fps is not None and not self.symmetric:
            return out, known_fps, known_fps
        return self.canonicalise_cols(out)


def _never_enabled(*_args):
    raise AssertionError("internal: the vector kernel ran an action whose guard is false in every state")


def _keeps(update) -> bool:
    """Whether an update writes a cell's own value back (`x[t] := x[t]`): grounding folds conditional updates to
    that where one binding leaves a field as it is (on Kafka ci 328 of the enabled actions' 2,434). Its checks
    (two updates of one cell are an error) stay; its fingerprint terms, which cancel, and its write into the
    parent's copy go."""
    target, value = update
    return isinstance(target, (GCell, GDyn)) and target == value
