"""Transaction coordinator: the handlers of client requests (§3.1 InitProducerId, §3.2 AddPartitionsToTxn, §3.6 and
§3.7 EndTxn), built by `handlers(copy)` for one copy of the request (`requests.py`: the live request, TC-01..TC-37,
or a late copy the client abandoned, TC-101..TC-137), and Kafka's assertions and the epoch bound on them
(`assertions(copy)`: TC-90..TC-96, TC-190..TC-196). A handler reads the copy's own fields (kind, epoch, partition),
never the client's, and either answers it or prepares a transition (`prepareTransitionTo`) that a transaction-log row
of `coordinator.py` makes durable. Kafka code: `TransactionCoordinator.handleInitProducerId`,
`handleAddPartitionsToTransaction`, `handleEndTransaction`, `TransactionMetadata.prepare*`.
"""
from txncheck.spec.expr import And, Config, If, Not, Or
from txncheck.spec.model import Row

from .domains import NO_PART, ROTATION, CResp, Pend, PendBy, Rq, TxnState as S, TV01, TV2, exhausted
from .params import i, p, T
from .requests import LIVE
from .state import (g_bound, g_ci, g_ck, g_f2, g_illegal, g_pk, tc_e, tc_ff, tc_last, tc_parts, tc_pend, tc_pend_by,
                    tc_pend_cli, tc_pend_e, tc_pend_last, tc_pend_p, tc_pend_rot, tc_rot, tc_st, tl_e, w_fence)

A = "coordinator"
TC = "TransactionCoordinator.handle"

EMPTY_OR_COMPLETE = (S.Empty, S.CompleteCommit, S.CompleteAbort)
PREPARE = (S.PrepareCommit, S.PrepareAbort)
NEVER_CACHED_LABELS = ("Dead", "PrepareEpochFence")  # §2.1 mechanics 3: the model never caches them
NEVER_CACHED = tuple(S.lit(x) for x in NEVER_CACHED_LABELS)  # §3.1 I12: a handler that finds them asserts
no_pend = tc_pend[T] == Pend.NONE
# CONCURRENT_TRANSACTIONS for an add: a transition is pending, or Prepare* is durable and its CompleteX is Kafka's
# pending transition (prepareComplete is called once Prepare* is durable)
busy = Or(Not(no_pend), tc_st[T].is_in(*PREPARE))


def illegal_state():
    """Kafka's assertion fails (IllegalStateException): nothing changes; STRUCT-1 proves it unreachable."""
    return (g_illegal.set(True),)


def beyond_bound():
    """The answer needs an epoch beyond `maxe`: nothing changes; BOUNDS flags a config that gets here."""
    return (g_bound.set(True),)


MAXE = Config("maxe")
EPOCH_BOUND_REF = ("model bound (config maxe: the model issues no epoch beyond it; Kafka rotates the producer id once "
                   "the epoch is exhausted, §3.14, which the model does once with pids=2); BOUNDS flags a config that "
                   "reaches it")
ISE = "IllegalStateException"


def pending(target, epoch, last, by, part, rot=False):
    """prepareTransitionTo: the single in-flight transition (pendingState) and who waits for its append; `rot`: it
    rotates the producer id (§3.14)."""
    return (tc_pend[T].set(target), tc_pend_e[T].set(epoch), tc_pend_last[T].set(last), tc_pend_by[T].set(by),
            tc_pend_cli[T].set(i), tc_pend_p[T].set(part), tc_pend_rot[T].set(rot))


def prepare_for(cp, target, epoch, last, part=NO_PART, rot=False):
    """Copy `cp` of client i's request prepares a transition: it is pending for i (answered once the append is
    durable, TL-01..TL-04, to the client if it waits for this copy), and the copy is taken off the network."""
    return (*pending(target, epoch, last, cp.waiter, part, rot), *cp.taken())


def can_rotate(tid):
    """The coordinator can hand `tid` a new producer id (config `pids` = 2, not yet rotated: §3.14)."""
    return And(ROTATION, Not(tc_rot[tid]))


def rotates(tid):
    """A bump of `tid`'s epoch now rotates its producer id: the epoch is exhausted and a new pid is available."""
    return And(can_rotate(tid), exhausted(tc_e[tid]))


def prev_is_old(tid):
    """prevProducerId is the pid before the rotation: nothing has been prepared since the transition that rotated
    (the InitProducerId's Empty, or the CompleteX of a rotating EndTxn or fence), which left epoch 0."""
    return And(tc_rot[tid], tc_e[tid] == 0, tc_st[tid].is_in(S.Empty, S.CompleteCommit, S.CompleteAbort))


def fenced_epoch(tid):
    """prepareFenceProducerEpoch's epoch: one more, unless an earlier fence's append failed
    (hasFailedEpochFence, KAFKA-9666): that bumped epoch was never returned to a client."""
    return If(tc_ff[tid], tc_e[tid], tc_e[tid] + 1)


def fence_updates(tid=T):
    """prepareFenceProducerEpoch + endTransaction(ABORT, isFromClient=false): the cached epoch is bumped at
    once; PrepareAbort with it is pending."""
    return (tc_e[tid].set(fenced_epoch(tid)), tc_pend[tid].set(Pend.PrepareAbort), tc_pend_e[tid].set(fenced_epoch(tid)),
            tc_pend_last[tid].set(-1), tc_pend_by[tid].set(PendBy.INTERNAL), tc_pend_cli[tid].set(0),
            tc_pend_p[tid].set(NO_PART), tc_pend_rot[tid].set(And(TV2, rotates(tid))))


INIT = (Rq.INIT, Rq.INITBUMP)
END = (Rq.COMMIT, Rq.ABORT)
cur = tc_e[T]


def end_target(cp):
    """EndTxn's pending target: PrepareCommit for COMMIT, PrepareAbort for ABORT."""
    return If(cp.rq == Rq.COMMIT, Pend.PrepareCommit, Pend.PrepareAbort)


def same_pid(cp):
    """The request carries the coordinator's current producer id."""
    return cp.rot == tc_rot[T]


def overflow_retry(cp):
    """EndTxn v5's retryOnOverflow (§3.14): a retry from the pid before the rotation with its last epoch."""
    return And(prev_is_old(T), Not(cp.rot), cp.e == MAXE - 1)


def epoch_terms(cp):
    """The request's (pid, epoch) against the coordinator's: a retry of the previous epoch (or of the last one
    before a rotation), the current one, and EndTxn v5's PRODUCER_FENCED condition (§3.7 F2)."""
    retry = Or(And(same_pid(cp), cp.e == cur - 1), overflow_retry(cp))
    current = And(same_pid(cp), cp.e == cur)
    bad_tv2_epoch = Or(And(tc_st[T].is_in(S.Ongoing, S.Empty), cp.e != cur),
                       And(tc_st[T].is_in(*PREPARE), Not(retry)),
                       And(tc_st[T].is_in(S.CompleteCommit, S.CompleteAbort), Not(retry), Not(current)))
    return retry, current, bad_tv2_epoch


# the live request's terms, for the variants that replace a handler
req, e_req, IS_COMMIT, END_TARGET = LIVE.req, LIVE.e, LIVE.rq == Rq.COMMIT, end_target(LIVE)


def prepare(target, epoch, last, part=NO_PART):
    return prepare_for(LIVE, target, epoch, last, part)

def adopt(cp):
    """γ: the request's transaction owns an Ongoing coordinator transaction no client transaction owns."""
    free = g_ck[T] == 0
    return (g_ci[T].set(If(And(free, cp.k >= 1), i, g_ci[T])), g_ck[T].set(If(free, cp.k, g_ck[T])))


def handlers(cp):
    """The handlers of client requests (§3.1, §3.2, §3.6, §3.7) for one copy of the request (`requests.Copy`):
    each reads the copy's own fields (kind, epoch, partition), answers it or prepares a transition."""
    req, e_req, answer = cp.req, cp.e, cp.answer
    IS_COMMIT, IS_ABORT = cp.rq == Rq.COMMIT, cp.rq == Rq.ABORT
    END_TARGET = end_target(cp)
    retry, current, bad_tv2_epoch = epoch_terms(cp)
    pid = same_pid(cp)
    pid_ok = Or(pid, overflow_retry(cp))  # EndTxn v5: INVALID_PRODUCER_ID_MAPPING unless (§3.14)
    init_pid_ok = Or(pid, And(prev_is_old(T), Not(cp.rot)))  # InitProducerId(pid, e) accepts the pid before a rotation
    rot = rotates(T)
    mapping = "INVALID_PRODUCER_ID_MAPPING, fatal at the client (§3.14)"

    def prepare(target, epoch, last, part=NO_PART, rot=False):
        return prepare_for(cp, target, epoch, last, part, rot)

    return (
        # -- InitProducerId (§3.1) -----------------------------------------------------------------
        Row(cp.rid(1), A, cp.event("InitProducerId"), params=(i,), guard=(*req(*INIT), Not(no_pend)),
            updates=answer(CResp.RETRY), ref=f"kafka-protocol §3.1 I3 (CONCURRENT_TRANSACTIONS); {TC}InitProducerId"),
        Row(cp.rid(2), A, cp.event("InitProducerId"), params=(i,), guard=(*req(*INIT), no_pend, tc_st[T].is_in(*PREPARE)),
            updates=answer(CResp.RETRY), ref=f"kafka-protocol §3.1 I5; {TC}InitProducerId"),
        Row(cp.rid(3), A, cp.event("InitProducerId"), params=(i,),
            guard=(*req(Rq.INIT), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), Or(cur < MAXE, can_rotate(T))),
            updates=prepare(Pend.Empty, If(rot, 0, cur + 1), -1, rot=rot),
            ref="kafka-protocol §3.1 I7 (bump, last := -1), §3.14 (an exhausted epoch rotates the pid: epoch 0); "
                "TransactionMetadata.prepareIncrementProducerEpoch / prepareProducerIdRotation"),
        Row(cp.rid(4), A, cp.event("InitProducerId(pid, e)"), params=(i,),
            guard=(*req(Rq.INITBUMP), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), Or(current, cur == -1),
                   Or(cur < MAXE, can_rotate(T))),
            updates=prepare(Pend.Empty, If(rot, 0, cur + 1), cur, rot=rot),
            ref="kafka-protocol §3.1 I8 (KIP-360 bump, last := e), §3.14 (rotation when exhausted)"),
        Row(cp.rid(5), A, cp.event("InitProducerId(pid, e)"), params=(i,),
            guard=(*req(Rq.INITBUMP), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), init_pid_ok, Not(current),
                   cur != -1, e_req == tc_last[T], tc_last[T] != -1),
            updates=prepare(Pend.Empty, cur, tc_last[T]),
            ref="kafka-protocol §3.1 I9 (retry of a successful bump: same epoch, record rewritten; §3.14: also from "
                "the pid before a rotation)"),
        Row(cp.rid(6), A, cp.event("InitProducerId(pid, e)"), params=(i,),
            guard=(*req(Rq.INITBUMP), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), init_pid_ok, Not(current),
                   cur != -1, Or(e_req != tc_last[T], tc_last[T] == -1)),
            updates=answer(CResp.FENCED), ref="kafka-protocol §3.1 I10 (PRODUCER_FENCED)"),
        Row(cp.rid(7), A, cp.event("InitProducerId"), params=(i,),
            guard=(*req(*INIT), no_pend, tc_st[T] == S.Ongoing, cur < Config("maxe")),
            updates=(*fence_updates(), *answer(CResp.RETRY), w_fence.set(True)),
            ref="kafka-protocol §3.1 I11, §2.1 mechanics 3 (fence = one step: pending PrepareAbort at e+1); "
                "TransactionCoordinator.handleInitProducerId (Ongoing -> prepareFenceProducerEpoch, "
                "endTransaction(ABORT))",
            doc="The client is answered CONCURRENT_TRANSACTIONS and retries; the retry bumps again once "
                "CompleteAbort is durable."),
        Row(cp.rid(8), A, cp.event("InitProducerId(pid, e)"), params=(i,),
            guard=(*req(Rq.INITBUMP), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), Not(init_pid_ok), cur != -1),
            updates=answer(CResp.FATAL), ref=f"kafka-protocol §3.14 ({mapping}); {TC}InitProducerId"),
        # -- AddPartitionsToTxn (§3.2, TV0/1) -------------------------------------------------------
        Row(cp.rid(10), A, cp.event("AddPartitionsToTxn"), params=(i,), guard=(TV01, *req(Rq.ADD), pid, e_req != cur),
            updates=answer(CResp.FENCED), ref=f"kafka-protocol §3.2 A2 (PRODUCER_FENCED); {TC}AddPartitionsToTransaction"),
        Row(cp.rid(11), A, cp.event("AddPartitionsToTxn"), params=(i,),
            guard=(TV01, *req(Rq.ADD), current, busy),
            updates=answer(CResp.RETRY), ref="kafka-protocol §3.2 A3 (CONCURRENT_TRANSACTIONS)"),
        Row(cp.rid(12), A, cp.event("AddPartitionsToTxn"), params=(i, p),
            guard=(TV01, *req(Rq.ADD), cp.p == p, current, no_pend, tc_st[T] == S.Ongoing, tc_parts[T][p]),
            updates=(*answer(CResp.OK), *adopt(cp)), ref="kafka-protocol §3.2 A4 (already added: NONE, no write)",
            doc="γ: an Ongoing transaction no client transaction owns (opened by a late add) is adopted by this one."),
        Row(cp.rid(13), A, cp.event("AddPartitionsToTxn"), params=(i, p),
            guard=(TV01, *req(Rq.ADD), cp.p == p, current, no_pend,
                   tc_st[T].is_in(S.Empty, S.Ongoing, S.CompleteCommit, S.CompleteAbort),
                   Not(And(tc_st[T] == S.Ongoing, tc_parts[T][p]))),
            updates=(*prepare(Pend.Ongoing, cur, tc_last[T], part=p), g_pk[T].set(cp.k)),
            ref="kafka-protocol §3.2 A5 (prepareAddPartitions; TL)"),
        Row(cp.rid(14), A, cp.event("AddPartitionsToTxn"), params=(i,), guard=(TV01, *req(Rq.ADD), Not(pid)),
            updates=answer(CResp.FATAL), ref=f"kafka-protocol §3.2, §3.14 ({mapping}); {TC}AddPartitionsToTransaction"),
        # -- EndTxn TV0/1 (§3.6) ----------------------------------------------------------------------
        Row(cp.rid(20), A, cp.event("EndTxn"), params=(i,), guard=(TV01, *req(*END), pid, e_req != cur),
            updates=answer(CResp.FENCED), ref=f"kafka-protocol §3.6 E2 (PRODUCER_FENCED); {TC}EndTransaction"),
        Row(cp.rid(21), A, cp.event("EndTxn"), params=(i,), guard=(TV01, *req(*END), current, Not(no_pend)),
            updates=answer(CResp.RETRY), ref="kafka-protocol §3.6 E3 (CONCURRENT_TRANSACTIONS)"),
        Row(cp.rid(22), A, cp.event("EndTxn"), params=(i,), guard=(TV01, *req(*END), current, no_pend, tc_st[T] == S.Ongoing),
            updates=(*prepare(END_TARGET, cur, tc_last[T]), g_f2.set(Or(g_f2, e_req < tl_e[T]))),
            ref="kafka-protocol §3.6 E4 (prepareAbortOrCommit, same epoch; answered once PrepareX is durable)",
            doc="The pending target is PrepareCommit for COMMIT and PrepareAbort for ABORT."),
        Row(cp.rid(23), A, cp.event("EndTxn"), params=(i,),
            guard=(TV01, *req(*END), current, no_pend,
                   Or(And(tc_st[T] == S.CompleteCommit, IS_COMMIT), And(tc_st[T] == S.CompleteAbort, IS_ABORT))),
            updates=answer(CResp.OK), ref="kafka-protocol §3.6 E5 (retry of a completed EndTxn: NONE)"),
        Row(cp.rid(24), A, cp.event("EndTxn"), params=(i,),
            guard=(TV01, *req(*END), current, no_pend,
                   Or(And(tc_st[T] == S.PrepareCommit, IS_COMMIT), And(tc_st[T] == S.PrepareAbort, IS_ABORT))),
            updates=answer(CResp.RETRY), ref="kafka-protocol §3.6 E6 (CONCURRENT_TRANSACTIONS)"),
        Row(cp.rid(25), A, cp.event("EndTxn"), params=(i,),
            guard=(TV01, *req(*END), current, no_pend, tc_st[T] != S.Ongoing,
                   Not(Or(And(tc_st[T].is_in(S.CompleteCommit, S.PrepareCommit), IS_COMMIT),
                          And(tc_st[T].is_in(S.CompleteAbort, S.PrepareAbort), IS_ABORT))),
                   Not(tc_st[T].is_in(*NEVER_CACHED))),
            updates=answer(CResp.FATAL), ref="kafka-protocol §3.6 E7 (INVALID_TXN_STATE)"),
        Row(cp.rid(26), A, cp.event("EndTxn"), params=(i,), guard=(TV01, *req(*END), Not(pid)),
            updates=answer(CResp.FATAL), ref=f"kafka-protocol §3.6, §3.14 ({mapping}); {TC}EndTransaction"),
        # -- EndTxn TV2 (§3.7) -------------------------------------------------------------------------
        Row(cp.rid(30), A, cp.event("EndTxn v5"), params=(i,), guard=(TV2, *req(*END), no_pend, pid_ok, bad_tv2_epoch),
            updates=answer(CResp.FENCED), ref="kafka-protocol §3.7 F2 (PRODUCER_FENCED)"),
        Row(cp.rid(31), A, cp.event("EndTxn v5"), params=(i,), guard=(TV2, *req(*END), Not(no_pend)),
            updates=answer(CResp.RETRY),
            ref="kafka-protocol §3.7 F3 (CONCURRENT_TRANSACTIONS, checked before the pid and the epoch since "
                "KAFKA-18660)"),
        Row(cp.rid(32), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, tc_st[T] == S.Ongoing, current, cur < MAXE),
            updates=(*prepare(END_TARGET, cur + 1, cur, rot=rot), g_f2.set(Or(g_f2, e_req < tl_e[T]))),
            ref="kafka-protocol §3.7 F4 (PrepareX at cur+1, last := cur), §3.14 (exhausted: the record carries "
                "nextProducerId, the answer the new (pid, 0))",
            doc="The pending target is PrepareCommit for COMMIT and PrepareAbort for ABORT."),
        Row(cp.rid(33), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(Rq.ABORT), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), current, cur < MAXE),
            updates=prepare(Pend.PrepareAbort, cur + 1, cur, rot=rot),
            ref="kafka-protocol §3.7 F5/F8 (empty abort with epoch bump; KAFKA-14563)"),
        Row(cp.rid(34), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, retry,
                   Or(And(tc_st[T] == S.CompleteAbort, IS_ABORT), And(tc_st[T] == S.CompleteCommit, IS_COMMIT))),
            updates=answer(CResp.OK, cur, tc_rot[T]),
            ref="kafka-protocol §3.7 F7 (retry: NONE + current (pid, e)), §3.14 (retryOnOverflow)"),
        Row(cp.rid(35), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, pid_ok, Not(bad_tv2_epoch),
                   Or(And(tc_st[T] == S.Empty, IS_COMMIT), And(tc_st[T] == S.CompleteAbort, IS_COMMIT),
                      And(tc_st[T] == S.CompleteCommit, IS_COMMIT, current),
                      And(tc_st[T] == S.CompleteCommit, IS_ABORT, retry))),
            updates=answer(CResp.FATAL), ref="kafka-protocol §3.7 F6/F9 (INVALID_TXN_STATE)"),
        Row(cp.rid(36), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, retry,
                   Or(And(tc_st[T] == S.PrepareCommit, IS_COMMIT), And(tc_st[T] == S.PrepareAbort, IS_ABORT))),
            updates=answer(CResp.RETRY), ref="kafka-protocol §3.7 F10 (CONCURRENT_TRANSACTIONS)"),
        Row(cp.rid(37), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, retry,
                   Or(And(tc_st[T] == S.PrepareCommit, IS_ABORT), And(tc_st[T] == S.PrepareAbort, IS_COMMIT))),
            updates=answer(CResp.FATAL), ref="kafka-protocol §3.7 F11 (INVALID_TXN_STATE)"),
        Row(cp.rid(38), A, cp.event("EndTxn v5"), params=(i,), guard=(TV2, *req(*END), no_pend, Not(pid_ok)),
            updates=answer(CResp.FATAL), ref=f"kafka-protocol §3.7, §3.14 ({mapping}); {TC}EndTransaction"),
    )


def assertions(cp):
    """Kafka's assertions (IllegalStateException, STRUCT-1) and the epoch bound (BOUNDS) of the handlers, for one
    copy of the request. Each is the handler for a state the model never caches, or for an epoch beyond
    `maxe`."""
    req, e_req, IS_ABORT = cp.req, cp.e, cp.rq == Rq.ABORT
    current = epoch_terms(cp)[1]
    pid = same_pid(cp)
    return (
        Row(cp.rid(90), A, cp.event("InitProducerId"), params=(i,), guard=(*req(*INIT), no_pend, tc_st[T].is_in(*NEVER_CACHED)),
            updates=illegal_state(),
            ref=f"kafka-protocol §3.1 I12 (stored state Dead or PrepareEpochFence: unreachable, assert); "
                f"{TC}InitProducerId (case Dead | PrepareEpochFence: fatal, throw {ISE})",
            doc="Kafka's assertion: no protocol state changes; the ghost flag is STRUCT-1."),
        Row(cp.rid(91), A, cp.event("InitProducerId"), params=(i,),
            guard=(*req(*INIT), no_pend, cur >= MAXE,
                   Or(tc_st[T] == S.Ongoing,
                      And(cp.rq == Rq.INIT, tc_st[T].is_in(*EMPTY_OR_COMPLETE), Not(can_rotate(T))))),
            updates=beyond_bound(), ref=f"kafka-protocol §3.1 I7 / I11 at the {EPOCH_BOUND_REF}",
            doc="TC-03 and TC-07 at the epoch bound: no protocol state changes; the ghost flag is BOUNDS."),
        Row(cp.rid(92), A, cp.event("InitProducerId(pid, e)"), params=(i,),
            guard=(*req(Rq.INITBUMP), no_pend, tc_st[T].is_in(*EMPTY_OR_COMPLETE), Or(current, cur == -1),
                   cur >= MAXE, Not(can_rotate(T))),
            updates=beyond_bound(), ref=f"kafka-protocol §3.1 I8 at the {EPOCH_BOUND_REF}",
            doc="TC-04 at the epoch bound: no protocol state changes; the ghost flag is BOUNDS."),
        Row(cp.rid(93), A, cp.event("AddPartitionsToTxn"), params=(i,),
            guard=(TV01, *req(Rq.ADD), pid, e_req == cur, no_pend, tc_st[T].is_in(*NEVER_CACHED)),
            updates=illegal_state(),
            ref=f"kafka-protocol §2.1 (Ongoing's valid previous states); {TC}AddPartitionsToTransaction -> "
                f"TransactionMetadata.prepareAddPartitions -> prepareTransitionTo(Ongoing) throws {ISE}",
            doc="Kafka's assertion: no protocol state changes; the ghost flag is STRUCT-1."),
        Row(cp.rid(94), A, cp.event("EndTxn"), params=(i,),
            guard=(TV01, *req(*END), current, no_pend, tc_st[T].is_in(*NEVER_CACHED)),
            updates=illegal_state(),
            ref=f"{TC}EndTransaction (case Dead | PrepareEpochFence: fatal, throw {ISE})",
            doc="Kafka's assertion: no protocol state changes; the ghost flag is STRUCT-1."),
        Row(cp.rid(95), A, cp.event("EndTxn v5"), params=(i,), guard=(TV2, *req(*END), no_pend, Or(pid, overflow_retry(cp)), tc_st[T].is_in(*NEVER_CACHED)),
            updates=illegal_state(),
            ref=f"{TC}EndTransaction (case Dead | PrepareEpochFence: fatal, throw {ISE})",
            doc="Kafka's assertion: no protocol state changes; the ghost flag is STRUCT-1."),
        Row(cp.rid(96), A, cp.event("EndTxn v5"), params=(i,),
            guard=(TV2, *req(*END), no_pend, current, cur >= MAXE,
                   Or(tc_st[T] == S.Ongoing, And(IS_ABORT, tc_st[T].is_in(*EMPTY_OR_COMPLETE)))),
            updates=beyond_bound(), ref=f"kafka-protocol §3.7 F4 / F5 / F8 at the {EPOCH_BOUND_REF}",
            doc="TC-32 and TC-33 at the epoch bound: no protocol state changes; the ghost flag is BOUNDS."),
    )
