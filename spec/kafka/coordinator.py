"""Transaction coordinator table: request handlers of §3.1-§3.3, §3.6, §3.7, §3.9 and §3.11 (TC-*), and
the transaction-log appends that make their transitions durable (TL-*).

A handler row either answers at once (no state change) or *prepares* a transition by setting the
pending target (`prepareTransitionTo`). A transaction-log row (`__transaction_state`, §1.3, §2.1
mechanics 2: "persist, then apply") appends the pending record (durable: acks=all) and applies it
to the coordinator's cache in one step, then answers whoever waits (client, or a partition leader's
TV2 implicit add) and, for PrepareX, enqueues WriteTxnMarkers with the current coordinator epoch
(§3.8). A failover can strike before or after the append (FLT-03's `durable` parameter), so the
window between the durable write and the callback is covered without a separate step. The TL rows
are where `TransactionState` changes (`completeTransitionTo`); what an append writes and enqueues
is in `txnlog.py`, shared with the failover's reload. Kafka code: `TransactionCoordinator.scala`
(≤ 3.9) / `TransactionCoordinator.java` (4.x), `TransactionMetadata`, `TransactionStateManager`.

The rows are in id order: the handlers section by section (TC-01..TC-67), the rows for Kafka's
assertions and the epoch bound of those handlers (TC-90..TC-97), the same client-request handlers for a
late copy of a request the client abandoned (TC-1xx for TC-xx, config `late_requests`), then the appends
(TL-01..TL-07). The client-request handlers and their assertions are built in `handlers.py`, once per copy
of the request; each reads the request's own fields (`requests.py`), never the client's. This module holds
the rest: the timeout, the verification and TV2 implicit-add handlers answered to a partition leader, and the
transaction-log appends.

Modelled simplifications (each a stated restriction, none hides a behaviour the model targets):
a tid rotates its producer id at most once (config `pids`, §3.14; with pids=1 an exhausted epoch is
the model's bound, BOUNDS); request timeouts are never out of range (I1); the
coordinator is always loaded when a request arrives (C1/C2: the load is atomic with failover).
"""
from txncheck.spec.expr import And, Config, ForAll, If, Not, Or
from txncheck.spec.model import Conformance, Row, Table
from txncheck.spec.sequence import At

from .chart import COORDINATOR, PARTITION, TXN_LOG
from .domains import (ROTATION, tid_used, MAXP, Inc, Outcome, Part, PcState, Pend, PendBy, Protocol, PResp, Result, CResp,
                      TxnState as S, TV2, VERIFY, Ver, invalid_epoch, tid_of)
from .handlers import (A, ISE, busy, NEVER_CACHED, NEVER_CACHED_LABELS, PREPARE, assertions, cur, fence_updates, handlers,
                       illegal_state, no_pend, pending)
from .params import b, c, i, k, p, T, t
from .requests import LATE, LIVE
from .state import (pc_st, b_e, env_to, g_ci, g_ck, n_cresp, n_cresp_e, n_cresp_rot, n_pres, pc_e, pl_vb, pl_vst, tc_ce,
                    tc_e, tc_last, tc_mk, tc_parts, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e, tc_pend_last,
                    tc_pend_p, tc_st, tc_ff, tl_e, tl_parts, tl_st, w_vrej, g_pk, g_illegal, b_rot, pc_rot, tc_next,
                    tc_pend_rot, tc_rot)
from .txnlog import clear_pend, decide, implicit_add_done, markers

# -- partition verification (§3.11) and TV2 implicit add, answered to a partition leader --------
e_b = b_e[i][p][k]
held = (pl_vb[p][i][k][b] == Ver.PENDING,)
pid_b = b_rot[i][p][k] == tc_rot[T]  # the batch's producer id is the coordinator's (else §3.14 mapping error)
# TV2's add checks `busy` first (CONCURRENT_TRANSACTIONS, KAFKA-18660), then the pid and the epoch


def to_leader(code):
    """The leader passes the coordinator's error on as the batch's Produce response; the batch is no longer held."""
    return (n_pres[i][p][k][b].set(code), pl_vb[p][i][k][b].set(Ver.NONE), pl_vst[p][i][k][b].set(False))




# -- transaction-log appends (persist, then apply) ------------------------------------------------
TSM = "TransactionStateManager.appendTransactionToLog"
is_pc = tc_pend[t] == Pend.PrepareCommit
prep_state = If(is_pc, S.PrepareCommit, S.PrepareAbort)


def apply_prepare():
    """The pending PrepareX is durable: cache and log move to it, markers go out with coordinator epoch c."""
    return (tl_st[t].set(prep_state), tl_e[t].set(tc_pend_e[t]),
            tc_st[t].set(prep_state), tc_e[t].set(tc_pend_e[t]), tc_last[t].set(tc_pend_last[t]),
            tc_next[t].set(And(ROTATION, tc_pend_rot[t])),
            *markers(t, c, If(is_pc, Result.COMMIT, Result.ABORT), tc_pend_e[t], lambda q: tc_parts[t][q], tc_rot[t]),
            *decide(t, If(is_pc, Outcome.COMMIT, Outcome.ABORT), tc_st[t] == S.Ongoing),
            *clear_pend(t))


def apply_ongoing():
    """The pending Ongoing is durable: the transaction's partitions grow by the one being added."""
    return (tl_st[t].set(S.Ongoing), tl_e[t].set(tc_pend_e[t]), tc_st[t].set(S.Ongoing),
            *[tl_parts[t][q].set(Or(tc_parts[t][q], tc_pend_p[t] == q)) for q in range(MAXP)],
            *[tc_parts[t][q].set(Or(tc_parts[t][q], tc_pend_p[t] == q)) for q in range(MAXP)],
            *clear_pend(t))


starts_txn = tc_st[t] != S.Ongoing
# a client's request prepared the transition: the live copy (the client waits) or a late copy (nobody does)
by_request = tc_pend_by[t].is_in(PendBy.CLIENT, PendBy.ABANDONED)


# γ: the add's transaction owns the coordinator's transaction when it starts one, or when none owns it (one a late
# add opened, g_ck = 0)
owns = Or(starts_txn, g_ck[t] == 0)


def answer_waiting(epoch, rot=False):
    """The append's callback answers NONE (with (pid, `epoch`); `rot`: the second pid) to client i if it waits; a
    late copy's answer is written to a closed connection and lost."""
    waits = tc_pend_by[t] == PendBy.CLIENT
    return (n_cresp[i].set(If(waits, CResp.OK, n_cresp[i])), n_cresp_e[i].set(If(waits, epoch, n_cresp_e[i])),
            n_cresp_rot[i].set(And(ROTATION, If(waits, rot, n_cresp_rot[i]))))


# the pid the pending transition's answer returns (§3.14); ROTATION first, so that with pids=1 the rotation cells
# are constant to the applicability analysis too (checker/applicable.py)
rotated = And(ROTATION, Or(tc_rot[t], tc_pend_rot[t]))
is_prepare = tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort)

KAFKA_PREV = {"Empty": ("Empty", "CompleteCommit", "CompleteAbort"),
              "Ongoing": ("Ongoing", "Empty", "CompleteCommit", "CompleteAbort"),
              "PrepareCommit": ("Ongoing",), "PrepareAbort": ("Ongoing", "PrepareEpochFence"),
              "CompleteCommit": ("PrepareCommit",), "CompleteAbort": ("PrepareAbort",),
              "Dead": ("Empty", "CompleteAbort", "CompleteCommit"), "PrepareEpochFence": ("Ongoing",)}
TV2_PREV = dict(KAFKA_PREV, PrepareAbort=KAFKA_PREV["PrepareAbort"] + ("Empty", "CompleteCommit", "CompleteAbort"))


def completes_from(target):
    """tc_st is a valid previous state of `target` (Kafka's validPreviousStates for the configured protocol
    version), other than the states the model never caches: the cached state from which the pending
    transition to `target` may complete."""
    old = [getattr(S, x) for x in KAFKA_PREV[target] if x not in NEVER_CACHED_LABELS]
    tv2 = [getattr(S, x) for x in TV2_PREV[target] if x not in KAFKA_PREV[target] and x not in NEVER_CACHED_LABELS]
    return Or(tc_st[t].is_in(*old), And(TV2, tc_st[t].is_in(*tv2))) if tv2 else tc_st[t].is_in(*old)


prepare_from = Or(And(is_pc, completes_from("PrepareCommit")), And(Not(is_pc), completes_from("PrepareAbort")))
valid_completion = Or(And(tc_pend[t] == Pend.Empty, completes_from("Empty")),
                      And(tc_pend[t] == Pend.Ongoing, completes_from("Ongoing")),
                      And(is_prepare, prepare_from))


ROWS = (
    *handlers(LIVE),
    # -- transaction timeout (§3.9) ------------------------------------------------------------------
    Row("TC-40", A, "transaction timeout (abortTimedOutTransactions)", params=(t,), at=At("coordinator", t),
        guard=(tid_used(t), tc_st[t] == S.Ongoing, tc_pend[t] == Pend.NONE, env_to < Config("timeouts"),
               tc_e[t] < Config("maxe")),
        updates=(*fence_updates(t), env_to.set(env_to + 1)),
        tags=("timeout",),
        ref="kafka-protocol §3.9 T1 (fence: epoch+1, then endTransaction(ABORT, isFromClient=false)); "
            "TransactionCoordinator.abortTimedOutTransactions; KAFKA-6119 fix"),
    Row("TC-41", A, "transaction timeout of an abandoned transaction", params=(t,), at=At("coordinator", t),
        guard=(tid_used(t), tc_st[t] == S.Ongoing, tc_pend[t] == Pend.NONE, tc_e[t] < Config("maxe"),
               ForAll(Inc, lambda j: Or(tid_of(j) != t, Not(And(
                   pc_st[j].is_in(PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION,
                                  PcState.ABORTABLE_ERROR), pc_e[j] == tc_e[t], pc_rot[j] == tc_rot[t]))))),
        updates=fence_updates(t),
        tags=("timeout",),
        ref="kafka-protocol §3.9 T1; TransactionCoordinator.abortTimedOutTransactions",
        doc="The same T1 as TC-40, free of the `timeouts` budget when no incarnation is inside a transaction with "
            "the current epoch: the timer fires eventually for a transaction nobody will end (recovery is free; "
            "the budget bounds only timeouts that hit a live producer)."),
    # -- partition verification (§3.11) and TV2 implicit add, answered to a partition leader --------
    # A rejection is passed on by the leader as its Produce response in the same step: the rows that
    # write it send it from the partition (sends_from).
    Row("TC-60", A, "AddPartitionsToTxn v4 VerifyOnly", params=(i, p, k, b), sends_from=PARTITION, guard=(VERIFY, *held, pid_b, e_b != tc_e[T]),
        updates=(*to_leader(invalid_epoch(p)), w_vrej.set(True)),
        ref="kafka-protocol §3.11 V2 (PRODUCER_FENCED, passed on as INVALID_PRODUCER_EPOCH); "
            "TransactionCoordinator.handleVerifyPartitionsInTransaction, AddPartitionsToTxnManager"),
    Row("TC-61", A, "AddPartitionsToTxn v4 VerifyOnly", params=(i, p, k, b), sends_from=PARTITION,
        guard=(VERIFY, *held, pid_b, e_b == tc_e[T], tc_st[T].is_in(*PREPARE)),
        updates=to_leader(PResp.RETRY),
        ref="kafka-protocol §3.11 V3, §3.5 P3 (CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS, retriable)"),
    Row("TC-62", A, "AddPartitionsToTxn v4 VerifyOnly", params=(i, p, k, b),
        guard=(VERIFY, *held, pid_b, e_b == tc_e[T], Not(tc_st[T].is_in(*PREPARE)), tc_parts[T][p]),
        updates=(pl_vb[p][i][k][b].set(Ver.OK),), ref="kafka-protocol §3.11 V4 (NONE: guard set, append may proceed)"),
    Row("TC-63", A, "AddPartitionsToTxn v4 VerifyOnly", params=(i, p, k, b), sends_from=PARTITION,
        guard=(VERIFY, *held, pid_b, e_b == tc_e[T], Not(tc_st[T].is_in(*PREPARE)), Not(tc_parts[T][p])),
        updates=(*to_leader(PResp.ABORTABLE), w_vrej.set(True)),
        ref="kafka-protocol §3.11 V5, §3.5 P3 (TRANSACTION_ABORTABLE)"),
    Row("TC-64", A, "AddPartitionsToTxn v5 (implicit add)", params=(i, p, k, b), sends_from=PARTITION, guard=(TV2, *held, Not(busy), pid_b, e_b != tc_e[T]),
        updates=(*to_leader(invalid_epoch(p)), w_vrej.set(True)),
        ref="kafka-protocol §3.11 TV2 implicit add handled as §3.2 A2 (PRODUCER_FENCED, passed on as "
            "INVALID_PRODUCER_EPOCH); AddPartitionsToTxnManager"),
    Row("TC-65", A, "AddPartitionsToTxn v5 (implicit add)", params=(i, p, k, b), sends_from=PARTITION,
        guard=(TV2, *held, busy),
        updates=to_leader(PResp.RETRY),
        ref="kafka-protocol §3.11 as §3.2 A3 (retriable at the client), checked before the pid and the epoch "
            "(KAFKA-18660: a client that took the new (pid, e) from EndTxn is not fenced while the markers of its "
            "previous transaction are written)"),
    Row("TC-66", A, "AddPartitionsToTxn v5 (implicit add)", params=(i, p, k, b),
        guard=(TV2, *held, pid_b, e_b == tc_e[T], no_pend, tc_st[T] == S.Ongoing, tc_parts[T][p]),
        updates=(pl_vb[p][i][k][b].set(Ver.OK),), ref="kafka-protocol §3.11 as §3.2 A4"),
    Row("TC-67", A, "AddPartitionsToTxn v5 (implicit add)", params=(i, p, k, b),
        guard=(TV2, *held, pid_b, e_b == tc_e[T], no_pend, tc_st[T].is_in(S.Empty, S.Ongoing, S.CompleteCommit, S.CompleteAbort),
               Not(And(tc_st[T] == S.Ongoing, tc_parts[T][p]))),
        updates=(*pending(Pend.Ongoing, cur, tc_last[T], PendBy.LEADER, p), pl_vb[p][i][k][b].set(Ver.ADDING),
                 g_pk[T].set(k)),
        ref="kafka-protocol §3.11 as §3.2 A5 (Empty/Complete* -> Ongoing, TL), KIP-890 part 2"),
    Row("TC-68", A, "AddPartitionsToTxn v4 VerifyOnly / v5 (implicit add)", params=(i, p, k, b), sends_from=PARTITION,
        guard=(Or(VERIFY, TV2), *held, Not(pid_b), Or(VERIFY, Not(busy))),
        updates=(*to_leader(PResp.FENCED), w_vrej.set(True)),
        ref="kafka-protocol §3.11, §3.14 (INVALID_PRODUCER_ID_MAPPING, passed on unchanged by "
            "AddPartitionsToTxnManager; fatal at the Java client: TransactionManager.canRetry / "
            "maybeTransitionToErrorState); TransactionCoordinator.handleVerifyPartitionsInTransaction / "
            "handleAddPartitionsToTransaction"),
    *assertions(LIVE),
    Row("TC-97", A, "AddPartitionsToTxn v5 (implicit add)", params=(i, p, k, b),
        guard=(TV2, *held, pid_b, e_b == tc_e[T], no_pend, tc_st[T].is_in(*NEVER_CACHED)),
        updates=illegal_state(),
        ref=f"kafka-protocol §3.11 as §3.2 A5: TransactionMetadata.prepareAddPartitions -> "
            f"prepareTransitionTo(Ongoing) throws {ISE} (§2.1: Dead and PrepareEpochFence are not valid previous "
            f"states of Ongoing)",
        doc="Kafka's assertion: no protocol state changes; the ghost flag is STRUCT-1."),
    # -- late copies of abandoned requests (NET-20): the same handlers, TC-1xx for TC-xx, answered to nobody --
    *handlers(LATE),
    *assertions(LATE),
    # -- transaction-log appends: persist, then apply (§1.3, §2.1 mechanics 2) -------------------
    Row("TL-01", A, "TL append durable: Empty", params=(t, i), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), tc_pend[t] == Pend.Empty, by_request, tc_pend_cli[t] == i, tid_of(i) == t,
               completes_from("Empty")),
        updates=(tl_st[t].set(S.Empty), tl_e[t].set(tc_pend_e[t]), tc_st[t].set(S.Empty), tc_e[t].set(tc_pend_e[t]),
                 tc_last[t].set(tc_pend_last[t]),
                 *[tl_parts[t][q].set(False) for q in range(MAXP)], *[tc_parts[t][q].set(False) for q in range(MAXP)],
                 *answer_waiting(tc_pend_e[t], rotated), tc_rot[t].set(rotated), g_ci[t].set(0), g_ck[t].set(0),
                 *clear_pend(t)),
        ref=f"kafka-protocol §3.1 I7-I9, §2.1 mechanics 2 (Empty: valid bump, no partitions); {TSM}, "
            "TransactionMetadata.completeTransitionTo"),
    Row("TL-02", A, "TL append durable: Ongoing (client add)", params=(t, i), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), tc_pend[t] == Pend.Ongoing, by_request, tc_pend_cli[t] == i, tid_of(i) == t,
               completes_from("Ongoing")),
        updates=(*apply_ongoing(), *answer_waiting(-1),
                 g_ci[t].set(If(owns, i, g_ci[t])), g_ck[t].set(If(owns, g_pk[t], g_ck[t]))),
        ref=f"kafka-protocol §3.2 A5 (Ongoing: partitions only grow; start := now from Empty/Complete*); {TSM}"),
    Row("TL-03", A, "TL append durable: Ongoing (TV2 implicit add)", params=(t, p), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), tc_pend[t] == Pend.Ongoing, tc_pend_by[t] == PendBy.LEADER, tc_pend_p[t] == p,
               completes_from("Ongoing")),
        updates=(*apply_ongoing(), *implicit_add_done(t, p, Ver.OK),
                 g_ci[t].set(If(starts_txn, tc_pend_cli[t], g_ci[t])), g_ck[t].set(If(starts_txn, g_pk[t], g_ck[t]))),
        ref="kafka-protocol §3.11 TV2 implicit add (answered to the leader once durable); KIP-890 part 2"),
    Row("TL-04", A, "TL append durable: PrepareX (EndTxn)", params=(t, i, c), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), is_prepare, by_request, tc_pend_cli[t] == i, tid_of(i) == t, tc_ce[t] == c,
               prepare_from),
        updates=(*apply_prepare(), *answer_waiting(If(tc_pend_rot[t], 0, tc_pend_e[t]), rotated)),
        ref="kafka-protocol §3.6 E4 / §3.7 F4-F8 (answer NONE once PrepareX is durable, before any marker), "
            "§3.8 (markers with the current coordinator epoch); TransactionCoordinator.endTransaction "
            "sendTxnMarkersCallback"),
    Row("TL-05", A, "TL append durable: PrepareAbort (fence or timeout)", params=(t, c), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), is_prepare, tc_pend_by[t] == PendBy.INTERNAL, tc_ce[t] == c, prepare_from),
        updates=apply_prepare(),
        ref="kafka-protocol §3.1 I11, §3.9 T1, §2.1 mechanics 3 (PrepareEpochFence never written: the fence "
            "completes as PrepareAbort with the bumped epoch)"),
    Row("TL-06", A, "all markers acknowledged: TL append CompleteX", params=(t,), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), tc_st[t].is_in(S.PrepareCommit, S.PrepareAbort), tc_pend[t] == Pend.NONE,
               ForAll(Part, lambda q: Not(tc_mk[t][q]))),
        updates=(tl_st[t].set(If(tc_st[t] == S.PrepareCommit, S.CompleteCommit, S.CompleteAbort)),
                 tc_st[t].set(If(tc_st[t] == S.PrepareCommit, S.CompleteCommit, S.CompleteAbort)),
                 *[tl_parts[t][q].set(False) for q in range(MAXP)], *[tc_parts[t][q].set(False) for q in range(MAXP)],
                 g_ci[t].set(0), g_ck[t].set(0), tc_ff[t].set(False),
                 tc_rot[t].set(And(ROTATION, Or(tc_rot[t], tc_next[t]))), tc_e[t].set(If(tc_next[t], 0, tc_e[t])),
                 tl_e[t].set(If(tc_next[t], 0, tl_e[t])), tc_next[t].set(False)),
        ref="kafka-protocol §3.8 (all NONE: append CompleteX, no partitions), §2.1 mechanics 2; "
            "TransactionMarkerChannelManager.tryAppendToLog, TransactionMetadata.prepareComplete (which also "
            "clears hasFailedEpochFence); §3.14: with nextProducerId the CompleteX record carries the new pid at "
            "epoch 0 (lastProducerEpoch stays)"),
    Row("TL-07", A, "TL append durable: illegal transition", params=(t,), at=TXN_LOG, sends_from=At("coordinator", t),
        guard=(tid_used(t), tc_pend[t] != Pend.NONE, Not(valid_completion)),
        updates=(g_illegal.set(True),),
        ref="kafka-protocol §2.1 (valid previous states; mechanics 1-2); TransactionMetadata.prepareTransitionTo "
            "(target not valid from the current state) / completeTransitionTo (throwStateTransitionFailure): "
            "IllegalStateException",
        doc="Kafka checks validPreviousStates when the transition is prepared; with one transition in flight "
            "(mechanics 1) the cached state is the same when it completes, so the model checks it at the append "
            "(TL-01..TL-05 require it). A pending transition from any other cached state is Kafka's assertion: "
            "no protocol state changes; the ghost flag is STRUCT-1."),
)

BY_ID = {r.id: r for r in ROWS}


def _pairs(prev):
    return tuple((a, b) for b, srcs in prev.items() for a in srcs)


_UNUSED = tuple((a, b) for b, srcs in KAFKA_PREV.items() for a in srcs
                if b in NEVER_CACHED_LABELS or a in NEVER_CACHED_LABELS)
_UNUSED_DOC = ("Dead: transactional-id expiry (X1, transactional.id.expiration.ms = 7 days) is out of scope: "
               "it only removes an idle Empty/Complete* entry and is not among the modelled faults. "
               "PrepareEpochFence: exists only as pendingState (never written, never completed); the fence is "
               "modelled as one step Ongoing -> (pending) PrepareAbort at the bumped epoch (§2.1 mechanics 3), "
               "so Ongoing -> PrepareEpochFence -> PrepareAbort is taken as Ongoing -> PrepareAbort.")

TABLE = Table(
    "coordinator", ROWS, status="tc_st", pending="tc_pend", at=COORDINATOR,
    doc="Transaction coordinator: request handlers (TC-*) and transaction-log appends (TL-*), per tid.",
    conformance=(
        Conformance(allowed=_pairs(KAFKA_PREV), unused=_UNUSED, when=Config("protocol") != Protocol.tv2,
                    ref="TransactionMetadata.scala validPreviousStates (Kafka <= 3.9)", doc=_UNUSED_DOC),
        Conformance(allowed=_pairs(TV2_PREV), unused=_UNUSED, when=Config("protocol") == Protocol.tv2,
                    ref="TransactionState.java PREPARE_ABORT valid previous states (KAFKA-14563, KIP-890 part 2)",
                    doc=_UNUSED_DOC),
    ),
    nondeterministic=tuple(BY_ID[r].trigger for r in ("TC-40", "TC-41")),
)
