"""Coordinator requests as data (kafka-protocol §1.7 "requests as data").

An InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn or EndTxn request carries its own fields: its
kind (with EndTxn's result), the producer epoch and, for an add, the partition. The client writes them
into the message when it sends it (`sent`, `resent`), and the coordinator's handlers read them from
the message (`Copy`), never from the client's current state. A request that leaves the network (taken
by a handler, or dropped) clears its fields, so that a state is determined by what is in flight.
"""
from dataclasses import dataclass

from txncheck.spec.expr import If

from .domains import PendBy, Rq
from .params import i
from .state import n_creq, n_creq_e, n_creq_p, n_creq_rq, n_cresp, n_cresp_e, pc_e, pc_k, pc_rq, pc_rqp


def fields(kind, epoch, part):
    """The message's fields: `part` only for an add (AddPartitionsToTxn / AddOffsetsToTxn), else 0."""
    return (n_creq_rq[i].set(kind), n_creq_e[i].set(epoch), n_creq_p[i].set(If(kind == Rq.ADD, part, 0)))


def sent(kind, part=0):
    """Client i sends a new request of `kind` with the epoch it holds."""
    return (n_creq[i].set(True), *fields(kind, pc_e[i], part))


def resent():
    """Client i sends its outstanding request again (a retriable error, a timeout): the same content,
    since the client's own fields do not change while the request is outstanding."""
    return (n_creq[i].set(True), *fields(pc_rq[i], pc_e[i], pc_rqp[i]))


def sent_if(on, kind):
    """Client i sends a request of `kind` when `on` holds (an expression); else the network holds nothing."""
    return (n_creq[i].set(on), *fields(If(on, kind, Rq.NONE), If(on, pc_e[i], -1), 0))


def cleared():
    """The live request leaves the network."""
    return (n_creq[i].set(False), n_creq_rq[i].set(Rq.NONE), n_creq_e[i].set(-1), n_creq_p[i].set(0))


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
    clear: tuple
    answered: bool
    on: tuple = ()

    def req(self, *kinds):
        return (*self.on, self.present, self.rq.is_in(*kinds))

    def taken(self):
        """The copy leaves the network (handled)."""
        return self.clear

    def answer(self, code, epoch=-1):
        """Answer at once: to the client if it waits for this copy, else to nobody."""
        sent_back = (n_cresp[i].set(code), n_cresp_e[i].set(epoch)) if self.answered else ()
        return (*self.taken(), *sent_back)

    @property
    def waiter(self):
        """Who waits for the callback of a transition this copy prepares."""
        return PendBy.CLIENT if self.answered else PendBy.ABANDONED

    def event(self, name):
        return name + self.suffix

    def rid(self, n):
        return f"TC-{self.base + n:02d}"


LIVE = Copy("live", 0, "", n_creq[i], n_creq_rq[i], n_creq_e[i], n_creq_p[i], pc_k[i], cleared(), True)
