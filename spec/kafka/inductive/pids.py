"""A transactional id's producer ids in order (config `pids`, kafka-protocol §3.14), for the invariants that compare
epochs.

With pids=2 the coordinator moves a tid from its first producer id to its second once the epoch is exhausted, and
the second starts again at epoch 0. Every epoch of the second pid comes after every epoch of the first, so an
invariant that orders epochs orders (pid, epoch) pairs. `xe` writes such a pair as one number, the extended
epoch: e for the first pid and maxe + 1 + e for the second (-1, no epoch, stays -1). With pids=1 every rotation
flag is False (IND-230), so the extended epoch is the epoch and the invariants read as before.

A client never holds maxe (`domains.exhausted`): the EndTxn that exhausts the epoch prepares at maxe under the old
pid and hands the client (new pid, 0). So a bump seen by a client goes from maxe - 1 to maxe + 1 in extended
epochs (`handed_x`, `handed_pend_x`, `below_x`), not to the next number.
"""
from txncheck.spec.expr import And, Config, If, Or

from ..domains import ROTATION, pid_of, tid_of
from ..state import (b_e, b_rot, n_cresp_e, n_cresp_rot, n_mk_e, n_mk_rot, pc_e, pc_rot, pl_e, tc_e, tc_next,
                     tc_pend_e, tc_pend_rot, tc_rot, tl_e)

MAXE = Config("maxe")
FIRST_OF_SECOND = MAXE + 1  # the extended epoch of the second pid's epoch 0


def xe(rot, e):
    """The extended epoch of epoch e of the first (rot False) or second (rot True) producer id."""
    return If(And(rot, e >= 0), e + FIRST_OF_SECOND, e)


def owner(u):
    """The tid that holds producer id u: with pids=2 (one tid) both pids are tid 1's, else pid u is tid u's."""
    return If(ROTATION, 0, u)


def second(u):
    """Producer id u is its tid's second one."""
    return And(ROTATION, u == 1)


def pc_x(i):
    return xe(pc_rot[i], pc_e[i])


def cresp_x(i):
    return xe(n_cresp_rot[i], n_cresp_e[i])


def b_x(i, p, k):
    return xe(b_rot[i][p][k], b_e[i][p][k])


def b_pid(i, p, k):
    """The producer id batch (i, p, k) carries."""
    return pid_of(tid_of(i), b_rot[i][p][k])


def tc_x(t):
    """The coordinator's cached (pid, epoch)."""
    return xe(tc_rot[t], tc_e[t])


def handed_x(t):
    """The (pid, epoch) an EndTxn answer hands out: the cached one, or with nextProducerId the second pid's 0."""
    return If(tc_next[t], FIRST_OF_SECOND, tc_x(t))


def durable_x(t):
    """The newest (pid, epoch) the transaction log holds: a Prepare* record with nextProducerId already holds the
    second pid's epoch 0, which its EndTxn answer hands out before CompleteX moves the tid to it."""
    return If(tc_next[t], FIRST_OF_SECOND, xe(tc_rot[t], tl_e[t]))


def prepared_from_x(t):
    """The epoch below the durable Prepare* record's, whose EndTxn or fence wrote it: maxe - 1 when that EndTxn
    rotates the pid (the record is at maxe of the first pid, with nextProducerId)."""
    return If(tc_next[t], MAXE - 1, xe(tc_rot[t], tl_e[t]) - 1)


def pl_x(p, u):
    """The epoch p's producer state stores for pid u, extended."""
    return xe(second(u), pl_e[p][u])


def mk_x(t, p, c):
    return xe(n_mk_rot[t][p][c], n_mk_e[t][p][c])


def init_epoch(t):
    """The epoch a pending InitProducerId (Empty) logs: one above the cached one, or the second pid's 0 when it
    rotates."""
    return If(tc_pend_rot[t], 0, tc_e[t] + 1)


def handed_pend_x(t):
    """The epoch the coordinator's pending Empty or Prepare* hands its requester once durable: the pending epoch of
    the current pid, or the second pid's 0 when it rotates (at once for Empty, with CompleteX for Prepare*)."""
    return If(tc_pend_rot[t], FIRST_OF_SECOND, xe(tc_rot[t], tc_pend_e[t]))


def below_x(t):
    """The epoch whose EndTxn made the coordinator's Prepare*/Complete* record: the one below its epoch, or maxe - 1
    when that EndTxn rotated the pid (the record prepares at maxe; CompleteX moves to the second pid's 0)."""
    return If(Or(tc_next[t], And(tc_rot[t], tc_e[t] == 0)), MAXE - 1, tc_x(t) - 1)
