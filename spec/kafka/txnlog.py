"""Transaction log (`__transaction_state`): what a durable record does (§1.3, §2.1 mechanics 2).

The coordinator table (`coordinator.py`, rows TL-*) appends a pending transition's record and
applies it ("persist, then apply"); a coordinator failover (FLT-03, `faults.py`) reloads the log and
re-drives a Prepare*. Both use the helpers here: clearing the pending transition, recording the
decision of the current transaction (a ghost), and enqueueing WriteTxnMarkers (§3.8).
"""
from txncheck.spec.expr import And, If, Max, Or

from .domains import ROTATION, BATCH_CELLS, MAXP, NO_PART, Outcome, Pend, PendBy, Ver, batch_used, tid_of
from .state import (g_ck, g_ci, g_dec, g_pk, g_torn, n_mk, n_mk_e, n_mk_res, n_mk_rot, pl_vb, tc_mk, tc_pend, tc_pend_by,
                    tc_pend_cli, tc_pend_e, tc_pend_last, tc_pend_p, tc_pend_rot)


def clear_pend(tid):
    """The pending transition of `tid` is gone (applied, failed or lost): pendingState := none."""
    return (tc_pend[tid].set(Pend.NONE), tc_pend_e[tid].set(-1), tc_pend_last[tid].set(-1),
            tc_pend_by[tid].set(PendBy.INTERNAL), tc_pend_cli[tid].set(0), tc_pend_p[tid].set(NO_PART), g_pk[tid].set(0),
            tc_pend_rot[tid].set(False))


def decide(tid, res_out, was_ongoing):
    """Ghost: decided[cur_γ] := result on entering PrepareX from Ongoing; torn if it differs."""
    cell = g_dec[g_ci[tid]][Max(g_ck[tid], 1)]
    live = And(was_ongoing, g_ck[tid] >= 1)
    return (cell.set(If(And(live, cell == Outcome.NONE), res_out, cell)),
            g_torn.set(Or(g_torn, And(live, cell != Outcome.NONE, cell != res_out))))


def markers(tid, ce, result, epoch, parts, rot):
    """Enqueue WriteTxnMarkers(pid, epoch, result, ce) to every partition in `parts(q)`; the pid is `tid`'s second
    one when `rot` holds (§3.14)."""
    ups = []
    for q in range(MAXP):
        on = parts(q)
        ups += [n_mk[tid][q][ce].set(Or(on, n_mk[tid][q][ce])),
                n_mk_res[tid][q][ce].set(If(on, result, n_mk_res[tid][q][ce])),
                n_mk_e[tid][q][ce].set(If(on, epoch, n_mk_e[tid][q][ce])),
                n_mk_rot[tid][q][ce].set(And(ROTATION, If(on, rot, n_mk_rot[tid][q][ce]))),
                tc_mk[tid][q].set(on)]
    return tuple(ups)



def implicit_add_done(tid, part, to):
    """The batch of `tid` whose TV2 implicit add of `part` was being logged (at most one: the coordinator has one
    pending transition per tid) moves to `to`: OK once the add is durable, RETRY when a failover fails it."""
    return tuple(pl_vb[part][j][kk][bb].set(If(And(batch_used(j, kk, bb), tid_of(j) == tid, pl_vb[part][j][kk][bb] == Ver.ADDING), to,
                                            pl_vb[part][j][kk][bb]))
                 for j, kk, bb in BATCH_CELLS)
