"""Coordinator requests as data (kafka-protocol §1.7 "requests as data").

An InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn or EndTxn request carries its own fields: its
kind (with EndTxn's result), the producer epoch and, for an add, the partition. The client writes them
into the message when it sends it (`sent`, `resent`), and the coordinator's handlers read them from
the message (`Copy`), never from the client's current state. A request that leaves the network (taken
by a handler, or dropped) clears its fields, so that a state is determined by what is in flight.
"""
from dataclasses import dataclass

from txncheck.spec.expr import And, Config, If, Max

from .domains import NO_PART, Outcome, PendBy, Rq
from .params import i, T
from .state import (g_dec, n_creq, n_creq_e, n_creq_p, n_creq_rq, n_cresp, n_cresp_e, n_late, n_late_ce, n_late_e,
                    n_late_k, n_late_p, n_late_rq, pc_e, pc_k, pc_rq, pc_rqp, tc_ce, n_creq_rot, n_cresp_rot, n_late_rot,
                    pc_rot)


def fields(kind, epoch, part, rot=pc_rot[i]):
    """The message's fields: `part` only for an add (AddPartitionsToTxn / AddOffsetsToTxn), else none; the producer
    id the client holds (`rot`: its second one)."""
    return (n_creq_rq[i].set(kind), n_creq_e[i].set(epoch), n_creq_p[i].set(If(kind == Rq.ADD, part, NO_PART)),
            n_creq_rot[i].set(rot))


def sent(kind, part=NO_PART):
    """Client i sends a new request of `kind` with the epoch it holds."""
    return (n_creq[i].set(True), *fields(kind, pc_e[i], part))


def resent():
    """Client i sends its outstanding request again (a retriable error, a timeout): the same content,
    since the client's own fields do not change while the request is outstanding."""
    return (n_creq[i].set(True), *fields(pc_rq[i], pc_e[i], pc_rqp[i]))


def sent_if(on, kind):
    """Client i sends a request of `kind` when `on` holds (an expression); else the network holds nothing."""
    return (n_creq[i].set(on), *fields(If(on, kind, Rq.NONE), If(on, pc_e[i], -1), NO_PART, And(on, pc_rot[i])))


def cleared():
    """The live request leaves the network."""
    return (n_creq[i].set(False), n_creq_rq[i].set(Rq.NONE), n_creq_e[i].set(-1), n_creq_p[i].set(NO_PART),
            n_creq_rot[i].set(False))


@dataclass(frozen=True)
class Copy:
    """One copy of client i's coordinator request as a coordinator handler finds it. `base` is added to a
    handler row's number to give the copy's row id; `suffix` is added to the row's event; `on` are guard
    conjuncts that switch the copy's rows on (configuration only, so that they fold when grounded);
    `answered` says whether the client hears the answer (a late copy's connection is closed)."""
    name: str
    base: int
    suffix: str
    present: object
    rq: object
    e: object
    p: object
    k: object
    rot: object
    clear: tuple
    answered: bool
    on: tuple = ()

    def req(self, *kinds):
        return (*self.on, self.present, self.rq.is_in(*kinds))

    def taken(self):
        """The copy leaves the network (handled)."""
        return self.clear

    def answer(self, code, epoch=-1, rot=False):
        """Answer at once: to the client if it waits for this copy, else to nobody; an answer that returns the
        (pid, epoch) carries the pid (`rot`: the second)."""
        sent_back = ((n_cresp[i].set(code), n_cresp_e[i].set(epoch), n_cresp_rot[i].set(rot)) if self.answered
                     else ())
        return (*self.taken(), *sent_back)

    @property
    def waiter(self):
        """Who waits for the callback of a transition this copy prepares."""
        return PendBy.CLIENT if self.answered else PendBy.ABANDONED

    def event(self, name):
        return name + self.suffix

    def rid(self, n):
        return f"TC-{self.base + n:02d}"


def abandoned():
    """The client times out its request in flight (request.timeout.ms): it closes the connection and will
    re-send; the first copy, which the coordinator broker may already have read, becomes the late copy."""
    return (n_late[i].set(True), n_late_rq[i].set(n_creq_rq[i]), n_late_e[i].set(n_creq_e[i]),
            n_late_p[i].set(n_creq_p[i]), n_late_k[i].set(pc_k[i]), n_late_ce[i].set(tc_ce[T]),
            n_late_rot[i].set(n_creq_rot[i]), *cleared())


def late_cleared():
    """The late copy leaves the network (handled, or answered NOT_COORDINATOR)."""
    return (n_late[i].set(False), n_late_rq[i].set(Rq.NONE), n_late_e[i].set(-1), n_late_p[i].set(NO_PART),
            n_late_k[i].set(0), n_late_ce[i].set(0), n_late_rot[i].set(False))


def late_txn():
    """γ: the client transaction a late AddPartitionsToTxn serves: the copy's own while it is undecided; once
    decided, none (0): the late add opens a coordinator transaction no client transaction owns, until one joins
    it (its own add finds the partition added, TC-12, or adds another, TL-02)."""
    k = n_late_k[i]
    return If(g_dec[i][Max(k, 1)] == Outcome.NONE, k, 0)


# the request the client waits for, answered to it
LIVE = Copy("live", 0, "", n_creq[i], n_creq_rq[i], n_creq_e[i], n_creq_p[i], pc_k[i], n_creq_rot[i], cleared(), True)
# a copy the client abandoned, handled by the same handlers (rows TC-1xx for TC-xx) and answered to nobody, as long
# as the broker that holds it is still the coordinator (a failover since: NET-21 answers NOT_COORDINATOR)
LATE = Copy("late", 100, " (late copy)", And(n_late[i], n_late_ce[i] == tc_ce[T]), n_late_rq[i], n_late_e[i],
            n_late_p[i], late_txn(), n_late_rot[i], late_cleared(), False, (Config("late_requests") >= 1,))
