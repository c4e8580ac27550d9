"""Strengthening invariants for producer id rotation (config `pids`, kafka-protocol §3.14): IND-230..IND-233.

With pids=1 no row sets a rotation flag, so every one of them stays False; saying so keeps the 1-induction of the
other invariants from considering pre-states with a second pid. With pids=2 the other invariants compare (pid, epoch)
pairs and name a batch's or marker's producer id by its rotation flag (pids.py), and hold on config rotation.
"""
from txncheck.spec.expr import And, Config, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import ROTATION, CEpoch, CResp, Inc, PendBy, IncSlot, Kind, Part, Pend, Slot, Tid, TxnSlot, Ver, TxnState as S
from ..state import (b_rot, log_kind, log_pid, n_creq_rot, n_cresp, n_cresp_rot, n_late_rot, n_mk_rot, n_mkd_rot, pc_rot,
                     pl_e, pl_vb, tc_e, tc_next, tc_pend, tc_pend_by, tc_pend_e, tc_pend_rot, tc_rot, tc_st, tl_e,
                     tl_st)
from .base import PREPARE, each_batch
from .pids import MAXE, b_x, cresp_x, pc_x

INVARIANTS = (
    Always("IND-230", Implies(Config("pids") == 1, And(
        ForAll(Tid, lambda t: And(Not(tc_rot[t]), Not(tc_next[t]), Not(tc_pend_rot[t]),
                                  ForAll(Part, lambda p: And(Not(n_mkd_rot[t][p]),
                                                             ForAll(CEpoch, lambda c: Not(n_mk_rot[t][p][c])))))),
        ForAll(Inc, lambda i: And(Not(pc_rot[i]), Not(n_creq_rot[i]), Not(n_late_rot[i]), Not(n_cresp_rot[i]))),
        ForAll(IncSlot, lambda i: ForAll(Part, lambda p: ForAll(TxnSlot, lambda k: Not(b_rot[i][p][k])))))),
           "Without rotation (pids=1) every producer id a message, batch, client or coordinator holds is its tid's "
           "first: the rotation flags stay False."),
    # with pids=2 (one tid, tid 1, whose pids are pid 1 and pid 2)
    Always("IND-231", Implies(ROTATION, And(
        Implies(tc_next[0], And(tl_st[0].is_in(S.PrepareCommit, S.PrepareAbort), Not(tc_rot[0]),
                                tl_e[0] == Config("maxe"), tc_e[0] == Config("maxe"))),
        Implies(tc_pend_rot[0], And(Not(tc_rot[0]), Not(tc_next[0]), tc_e[0] >= Config("maxe") - 1,
                                    tc_pend[0].is_in(Pend.Empty, Pend.PrepareCommit, Pend.PrepareAbort),
                                    tc_pend_e[0] == If(tc_pend[0] == Pend.Empty, 0, Config("maxe")))))),
           "A rotation happens once: nextProducerId is set only in a Prepare* record at the exhausted epoch maxe "
           "of the first pid, and a rotating transition is pending only before any rotation, from an exhausted "
           "epoch: an Empty at the second pid's 0, a Prepare* at maxe."),
    Always("IND-232", Implies(And(ROTATION, Not(tc_rot[0])), And(
        ForAll(Part, lambda p: And(pl_e[p][1] == -1, ForAll(Slot, lambda s: Or(log_kind[p][s] == Kind.EMPTY,
                                                                            log_pid[p][s] != 1)),
                                   ForAll(CEpoch, lambda c: Not(n_mk_rot[0][p][c])), Not(n_mkd_rot[0][p]))),
        Implies(Not(tc_next[0]), And(
            ForAll(Inc, lambda i: And(Not(pc_rot[i]), Not(n_creq_rot[i]), Not(n_late_rot[i]), Not(n_cresp_rot[i]))),
            ForAll(IncSlot, lambda i: ForAll(Part, lambda p: ForAll(TxnSlot, lambda k: Not(b_rot[i][p][k])))))),
        ForAll(IncSlot, lambda i: ForAll(Part, lambda p: ForAll(TxnSlot, lambda k: Implies(
            b_rot[i][p][k], Not(pl_vb[p][i][k][1].is_in(Ver.OK, Ver.ADDING)))))))),
           "Before the tid moves to its second pid nothing is written for that pid at a partition and no marker "
           "carries it; before the Prepare* with nextProducerId is durable (whose EndTxn answer hands it out) "
           "no client, request, answer or batch holds it either; and no batch of it passes verification at a "
           "partition (its coordinator still holds the first pid)."),
    Always("IND-233", Implies(ROTATION, And(
        ForAll(Inc, lambda i: And(pc_x(i) != MAXE, Implies(n_cresp[i] == CResp.OK, cresp_x(i) != MAXE))),
        each_batch(lambda i, p, k: b_x(i, p, k) != MAXE),
        Implies(And(tc_rot[0], tl_st[0].is_in(*PREPARE)), tl_e[0] >= 1),
        Implies(And(tc_rot[0], tc_st[0].is_in(*PREPARE)), tc_e[0] >= 1),
        Implies(Not(tc_rot[0]), And(
            Implies(tl_st[0].is_in(S.Empty, S.Ongoing), tl_e[0] < MAXE),
            Implies(And(Not(tc_pend_rot[0]), Or(tc_pend[0].is_in(Pend.Empty, Pend.Ongoing), And(
                tc_pend[0].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_pend_by[0] == PendBy.CLIENT))),
                tc_pend_e[0] < MAXE))))),
           "The exhausted epoch maxe of the first pid is only ever a Prepare record's and its markers': no client holds "
           "it, no answer hands it out and no batch carries it (the EndTxn that reaches it hands out the second pid's "
           "0, as an InitProducerId from an exhausted epoch does, and a transaction never starts at it). The second "
           "pid's 0 is never a Prepare record's: its EndTxn and fences bump it first."),
)
