"""Strengthening invariant for producer id rotation (config `pids`, kafka-protocol §3.14): IND-230.

With pids=1 no row sets a rotation flag, so every one of them stays False; saying so keeps the 1-induction of the
other invariants, which name a tid's producer id by the tid itself, from considering pre-states with a second pid.
The invariants are not yet restated for pids=2 (where Houdini drops those that name the pid by its tid).
"""
from txncheck.spec.expr import And, Config, ForAll, Implies, Not
from txncheck.spec.model import Always

from ..domains import CEpoch, Inc, IncSlot, Part, Tid, TxnSlot
from ..state import (b_rot, n_creq_rot, n_cresp_rot, n_late_rot, n_mk_rot, n_mkd_rot, pc_rot, tc_next, tc_pend_rot,
                     tc_rot)

INVARIANTS = (
    Always("IND-230", Implies(Config("pids") == 1, And(
        ForAll(Tid, lambda t: And(Not(tc_rot[t]), Not(tc_next[t]), Not(tc_pend_rot[t]),
                                  ForAll(Part, lambda p: And(Not(n_mkd_rot[t][p]),
                                                             ForAll(CEpoch, lambda c: Not(n_mk_rot[t][p][c])))))),
        ForAll(Inc, lambda i: And(Not(pc_rot[i]), Not(n_creq_rot[i]), Not(n_late_rot[i]), Not(n_cresp_rot[i]))),
        ForAll(IncSlot, lambda i: ForAll(Part, lambda p: ForAll(TxnSlot, lambda k: Not(b_rot[i][p][k])))))),
           "Without rotation (pids=1) every producer id a message, batch, client or coordinator holds is its tid's "
           "first: the rotation flags stay False."),
)
