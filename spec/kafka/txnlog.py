"""Transaction log (`__transaction_state`): "persist, then apply" (§1.3, §2.1 mechanics 2).

A TL row appends the pending record (durable: acks=all) and applies it to the coordinator's cache
in one step, then answers whoever waits (client, or a partition leader's TV2 implicit add) and,
for PrepareX, enqueues WriteTxnMarkers with the current coordinator epoch (§3.8). A failover can
strike before or after the append (FLT-03's `durable` parameter), so the window between the
durable write and the callback is covered without a separate step. These rows belong to the
coordinator table: they are where `TransactionState` changes (`completeTransitionTo`).
"""
from txncheck.spec.expr import And, Config, ForAll, If, Max, Not, Or, Param
from txncheck.spec.model import Conformance, Row, Table

from .coordinator import ABANDONED, ROWS as HANDLER_ROWS, TIMEOUT, VERIFY_ROWS
from .domains import (tid_used, MAXP, CEpoch, CResp, Inc, Outcome, Part, Pend, PendBy, Protocol, Result, Tid, TxnState as S,
                      TV2, Ver, tid_of)
from .state import (g_illegal, g_pk, g_ci, g_ck, g_dec, g_torn, n_cresp, n_cresp_e, n_mk, n_mk_e, n_mk_res, pc_k, pl_ver,
                    pl_vi, pl_vk, tc_ce, tc_e, tc_last, tc_mk, tc_parts, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e,
                    tc_pend_last, tc_pend_p, tc_st, tc_ff, tl_e, tl_parts, tl_st)

t = Param("t", Tid)
i = Param("i", Inc)
p = Param("p", Part)
c = Param("c", CEpoch)
A = "coordinator"
TSM = "TransactionStateManager.appendTransactionToLog"


def clear_pend():
    return (tc_pend[t].set(Pend.NONE), tc_pend_e[t].set(-1), tc_pend_last[t].set(-1),
            tc_pend_by[t].set(PendBy.INTERNAL), tc_pend_cli[t].set(0), tc_pend_p[t].set(0), g_pk[t].set(0))


def decide(tid, res_out, was_ongoing):
    """Ghost: decided[cur_γ] := result on entering PrepareX from Ongoing; torn if it differs."""
    cell = g_dec[g_ci[tid]][Max(g_ck[tid], 1)]
    live = And(was_ongoing, g_ck[tid] >= 1)
    return (cell.set(If(And(live, cell == Outcome.NONE), res_out, cell)),
            g_torn.set(Or(g_torn, And(live, cell != Outcome.NONE, cell != res_out))))


def markers(tid, ce, result, epoch, parts):
    """Enqueue WriteTxnMarkers(pid, epoch, result, ce) to every partition in `parts(q)`."""
    ups = []
    for q in range(MAXP):
        on = parts(q)
        ups += [n_mk[tid][q][ce].set(Or(on, n_mk[tid][q][ce])),
                n_mk_res[tid][q][ce].set(If(on, result, n_mk_res[tid][q][ce])),
                n_mk_e[tid][q][ce].set(If(on, epoch, n_mk_e[tid][q][ce])),
                tc_mk[tid][q].set(on)]
    return tuple(ups)


is_pc = tc_pend[t] == Pend.PrepareCommit
prep_state = If(is_pc, S.PrepareCommit, S.PrepareAbort)


def apply_prepare():
    return (tl_st[t].set(prep_state), tl_e[t].set(tc_pend_e[t]),
            tc_st[t].set(prep_state), tc_e[t].set(tc_pend_e[t]), tc_last[t].set(tc_pend_last[t]),
            *markers(t, c, If(is_pc, Result.COMMIT, Result.ABORT), tc_pend_e[t], lambda q: tc_parts[t][q]),
            *decide(t, If(is_pc, Outcome.COMMIT, Outcome.ABORT), tc_st[t] == S.Ongoing),
            *clear_pend())


def apply_ongoing():
    return (tl_st[t].set(S.Ongoing), tl_e[t].set(tc_pend_e[t]), tc_st[t].set(S.Ongoing),
            *[tl_parts[t][q].set(Or(tc_parts[t][q], tc_pend_p[t] == q)) for q in range(MAXP)],
            *[tc_parts[t][q].set(Or(tc_parts[t][q], tc_pend_p[t] == q)) for q in range(MAXP)],
            *clear_pend())


starts_txn = tc_st[t] != S.Ongoing
is_prepare = tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort)

KAFKA_PREV = {"Empty": ("Empty", "CompleteCommit", "CompleteAbort"),
              "Ongoing": ("Ongoing", "Empty", "CompleteCommit", "CompleteAbort"),
              "PrepareCommit": ("Ongoing",), "PrepareAbort": ("Ongoing", "PrepareEpochFence"),
              "CompleteCommit": ("PrepareCommit",), "CompleteAbort": ("PrepareAbort",),
              "Dead": ("Empty", "CompleteAbort", "CompleteCommit"), "PrepareEpochFence": ("Ongoing",)}
TV2_PREV = dict(KAFKA_PREV, PrepareAbort=KAFKA_PREV["PrepareAbort"] + ("Empty", "CompleteCommit", "CompleteAbort"))
NEVER_CACHED = ("Dead", "PrepareEpochFence")  # §2.1 mechanics 3: the model never caches them


def completes_from(target):
    """tc_st is a valid previous state of `target` (Kafka's validPreviousStates for the configured protocol
    version), other than the states the model never caches: the cached state from which the pending
    transition to `target` may complete."""
    old = [getattr(S, x) for x in KAFKA_PREV[target] if x not in NEVER_CACHED]
    tv2 = [getattr(S, x) for x in TV2_PREV[target] if x not in KAFKA_PREV[target] and x not in NEVER_CACHED]
    return Or(tc_st[t].is_in(*old), And(TV2, tc_st[t].is_in(*tv2))) if tv2 else tc_st[t].is_in(*old)


prepare_from = Or(And(is_pc, completes_from("PrepareCommit")), And(Not(is_pc), completes_from("PrepareAbort")))
valid_completion = Or(And(tc_pend[t] == Pend.Empty, completes_from("Empty")),
                      And(tc_pend[t] == Pend.Ongoing, completes_from("Ongoing")),
                      And(is_prepare, prepare_from))

ROWS = (
    Row("TL-01", A, "TL append durable: Empty", params=(t, i),
        guard=(tid_used(t), tc_pend[t] == Pend.Empty, tc_pend_by[t] == PendBy.CLIENT, tc_pend_cli[t] == i, tid_of(i) == t,
               completes_from("Empty")),
        updates=(tl_st[t].set(S.Empty), tl_e[t].set(tc_pend_e[t]), tc_st[t].set(S.Empty), tc_e[t].set(tc_pend_e[t]),
                 tc_last[t].set(tc_pend_last[t]),
                 *[tl_parts[t][q].set(False) for q in range(MAXP)], *[tc_parts[t][q].set(False) for q in range(MAXP)],
                 n_cresp[i].set(CResp.OK), n_cresp_e[i].set(tc_pend_e[t]), g_ci[t].set(0), g_ck[t].set(0),
                 *clear_pend()),
        ref=f"kafka-protocol §3.1 I7-I9, §2.1 mechanics 2 (Empty: valid bump, no partitions); {TSM}, "
            "TransactionMetadata.completeTransitionTo"),
    Row("TL-02", A, "TL append durable: Ongoing (client add)", params=(t, i),
        guard=(tid_used(t), tc_pend[t] == Pend.Ongoing, tc_pend_by[t] == PendBy.CLIENT, tc_pend_cli[t] == i, tid_of(i) == t,
               completes_from("Ongoing")),
        updates=(*apply_ongoing(), n_cresp[i].set(CResp.OK), n_cresp_e[i].set(-1),
                 g_ci[t].set(If(starts_txn, i, g_ci[t])), g_ck[t].set(If(starts_txn, g_pk[t], g_ck[t]))),
        ref=f"kafka-protocol §3.2 A5 (Ongoing: partitions only grow; start := now from Empty/Complete*); {TSM}"),
    Row("TL-03", A, "TL append durable: Ongoing (TV2 implicit add)", params=(t, p),
        guard=(tid_used(t), tc_pend[t] == Pend.Ongoing, tc_pend_by[t] == PendBy.LEADER, tc_pend_p[t] == p,
               completes_from("Ongoing")),
        updates=(*apply_ongoing(), pl_ver[p][t].set(If(pl_ver[p][t] == Ver.ADDING, Ver.OK, pl_ver[p][t])),
                 g_ci[t].set(If(starts_txn, tc_pend_cli[t], g_ci[t])), g_ck[t].set(If(starts_txn, g_pk[t], g_ck[t]))),
        ref="kafka-protocol §3.11 TV2 implicit add (answered to the leader once durable); KIP-890 part 2"),
    Row("TL-04", A, "TL append durable: PrepareX (EndTxn)", params=(t, i, c),
        guard=(tid_used(t), is_prepare, tc_pend_by[t] == PendBy.CLIENT, tc_pend_cli[t] == i, tid_of(i) == t, tc_ce[t] == c,
               prepare_from),
        updates=(*apply_prepare(), n_cresp[i].set(CResp.OK), n_cresp_e[i].set(tc_pend_e[t])),
        ref="kafka-protocol §3.6 E4 / §3.7 F4-F8 (answer NONE once PrepareX is durable, before any marker), "
            "§3.8 (markers with the current coordinator epoch); TransactionCoordinator.endTransaction "
            "sendTxnMarkersCallback"),
    Row("TL-05", A, "TL append durable: PrepareAbort (fence or timeout)", params=(t, c),
        guard=(tid_used(t), is_prepare, tc_pend_by[t] == PendBy.INTERNAL, tc_ce[t] == c, prepare_from),
        updates=apply_prepare(),
        ref="kafka-protocol §3.1 I11, §3.9 T1, §2.1 mechanics 3 (PrepareEpochFence never written: the fence "
            "completes as PrepareAbort with the bumped epoch)"),
    Row("TL-06", A, "all markers acknowledged: TL append CompleteX", params=(t,),
        guard=(tid_used(t), tc_st[t].is_in(S.PrepareCommit, S.PrepareAbort), tc_pend[t] == Pend.NONE,
               ForAll(Part, lambda q: Not(tc_mk[t][q]))),
        updates=(tl_st[t].set(If(tc_st[t] == S.PrepareCommit, S.CompleteCommit, S.CompleteAbort)),
                 tc_st[t].set(If(tc_st[t] == S.PrepareCommit, S.CompleteCommit, S.CompleteAbort)),
                 *[tl_parts[t][q].set(False) for q in range(MAXP)], *[tc_parts[t][q].set(False) for q in range(MAXP)],
                 g_ci[t].set(0), g_ck[t].set(0), tc_ff[t].set(False)),
        ref="kafka-protocol §3.8 (all NONE: append CompleteX, no partitions), §2.1 mechanics 2; "
            "TransactionMarkerChannelManager.tryAppendToLog, TransactionMetadata.prepareComplete (which also "
            "clears hasFailedEpochFence)"),
    Row("TL-07", A, "TL append durable: illegal transition", params=(t,),
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



def _pairs(prev):
    return tuple((a, b) for b, srcs in prev.items() for a in srcs)


_UNUSED = tuple((a, b) for b, srcs in KAFKA_PREV.items() for a in srcs
                if b in ("Dead", "PrepareEpochFence") or a in ("Dead", "PrepareEpochFence"))
_UNUSED_DOC = ("Dead: transactional-id expiry (X1, transactional.id.expiration.ms = 7 days) is out of scope: "
               "it only removes an idle Empty/Complete* entry and is not among the modelled faults. "
               "PrepareEpochFence: exists only as pendingState (never written, never completed); the fence is "
               "modelled as one step Ongoing -> (pending) PrepareAbort at the bumped epoch (§2.1 mechanics 3), "
               "so Ongoing -> PrepareEpochFence -> PrepareAbort is taken as Ongoing -> PrepareAbort.")

TABLE = Table(
    "coordinator", HANDLER_ROWS + (TIMEOUT, ABANDONED) + VERIFY_ROWS + ROWS, status="tc_st",
    doc="Transaction coordinator: request handlers (TC-*) and transaction-log appends (TL-*), per tid.",
    conformance=(
        Conformance(allowed=_pairs(KAFKA_PREV), unused=_UNUSED, when=Config("protocol") != Protocol.tv2,
                    ref="TransactionMetadata.scala validPreviousStates (Kafka <= 3.9)", doc=_UNUSED_DOC),
        Conformance(allowed=_pairs(TV2_PREV), unused=_UNUSED, when=Config("protocol") == Protocol.tv2,
                    ref="TransactionState.java PREPARE_ABORT valid previous states (KAFKA-14563, KIP-890 part 2)",
                    doc=_UNUSED_DOC),
    ),
    nondeterministic=("transaction timeout (abortTimedOutTransactions)", "transaction timeout of an abandoned transaction"),
)
