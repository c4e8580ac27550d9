"""Strengthening invariants for idempotence and zombie fencing: DUP-1, ORD-4 and FENCE-1 (see
__init__.py).
"""
from txncheck.spec.expr import And, Config, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import (EPOCH_KEPT_AFTER_FAILURE, BatchSt, CEpoch, CResp, Inc, Kind, Outcome, PResp, Part, PcState, Pend, PendBy, Result, Rq,
                       Slot, TV2, Tid, Txn, Ver, is_op, pid_of, tid_of, writes_to, TxnState as S)
from .pids import b_pid, b_x, cresp_x, durable_x, handed_pend_x, mk_x, owner, pc_x, pl_x, prepared_from_x, xe
from ..state import (b_e, b_rot, b_s, g_ack, log_e, log_kind, log_out, log_pid, log_ret, log_seq,
                     n_cresp, n_cresp_e, n_mk, n_mk_res, n_mk_rot, n_pres, n_prod, pc_b, pc_e, pc_k, pc_rq, pc_st,
                     pl_ce, pl_e, pl_open, pl_seq, pl_vb, pl_vst, tc_mk, tc_pend, tc_pend_by, tc_pend_cli,
                     tc_pend_e, tc_pend_p, tc_rot, tl_e, tl_st)
from .base import NO_DUPLICATES, NO_EXPIRY, PREPARE, batch_slot, each_batch, pending_for, slot_of


INVARIANTS = (
    Always("IND-60", each_batch(lambda i, p, k: ForAll(Slot, lambda s: Implies(batch_slot(p, s, i, k), And(
        log_pid[p][s] == b_pid(i, p, k), log_e[p][s] == b_e[i][p][k], log_seq[p][s] == b_s[i][p][k][1], k <= pc_k[i])))),
           "A data batch in the log carries the producer id, epoch and base sequence its client fixed when it "
           "created the batch (a retry resends the same batch)."),
    Always("IND-61", ForAll(Part, lambda p: ForAll(Slot, lambda s: ForAll(Tid, lambda t: Implies(
        And(NO_EXPIRY, log_kind[p][s] == Kind.DATA, log_pid[p][s] == t),
        Or(pl_e[p][t] > log_e[p][s], And(pl_e[p][t] == log_e[p][s], pl_seq[p][t] >= log_seq[p][s])))))),
           "Without producer-state expiry, the leader's ProducerStateEntry (epoch, last sequence) is at or above "
           "every batch of that pid in its log: epochs only grow and a marker at a new epoch forgets the sequence."),
    Always("IND-62", each_batch(lambda i, p, k: Implies(Or(k > pc_k[i], And(k == pc_k[i], pc_b[i][p][1] == BatchSt.NONE)), And(
        b_e[i][p][k] == -1, n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE, Not(g_ack[i][p][k][1]),
        pl_vb[p][i][k][1] == Ver.NONE,
        ForAll(Slot, lambda s: Not(batch_slot(p, s, i, k)))))),
           "A batch the client has not drained yet exists nowhere: not in flight, not held for verification, "
           "not in the log, never acknowledged."),
)


def retired_open(p, s, t):
    """Slot s of p is a data batch of pid t, appended while its epoch was retired, in t's open span."""
    return And(log_kind[p][s] == Kind.DATA, log_pid[p][s] == t, log_ret[p][s], log_out[p][s] == Outcome.NONE)


def committing(t):
    """Under TV2, t's coordinator has a commit prepared, durable or pending."""
    return And(TV2, Or(tl_st[t] == S.PrepareCommit, tc_pend[t] == Pend.PrepareCommit))


def commit_e(t):
    """The epoch of the transaction being committed (TV2 prepares at one above it)."""
    return If(tl_st[t] == S.PrepareCommit, tl_e[t] - 1, tl_e[t])


def older_than(i, x):
    """Every batch of incarnation i, and its in-flight AddPartitions/EndTxn request, carry an epoch below the
    extended epoch x (pids.py)."""
    return And(ForAll(Part, lambda p: ForAll(Txn, lambda k: b_x(i, p, k) < x)),
               Implies(pc_rq[i].is_in(Rq.ADD, Rq.COMMIT, Rq.ABORT), pc_x(i) < x))


def dominated(i, p, k):
    """Batch (i, p, k) is at or below p's ProducerStateEntry of its pid: a copy is a duplicate or fenced."""
    u = b_pid(i, p, k)
    return Or(pl_e[p][u] > b_e[i][p][k], And(pl_e[p][u] == b_e[i][p][k], pl_seq[p][u] >= b_s[i][p][k][1]))


def held(p, i, k):
    """p's leader holds batch (i, p, k) for verification."""
    return pl_vb[p][i][k][1] != Ver.NONE


INVARIANTS += (
    Always("IND-63", ForAll(Tid, lambda t: ForAll(Part, lambda p: ForAll(CEpoch, lambda c: Implies(
        And(NO_EXPIRY, n_mk[t][p][c], c >= pl_ce[p][pid_of(t, n_mk_rot[t][p][c])]), And(
            tc_mk[t][p], tl_st[t].is_in(*PREPARE), mk_x(t, p, c) == xe(tc_rot[t], tl_e[t]),
            (n_mk_res[t][p][c] == Result.COMMIT) == (tl_st[t] == S.PrepareCommit)))))),
           "A WriteTxnMarkers in flight that p would not fence by coordinator epoch belongs to the durable "
           "Prepare* transaction whose marker p has not acknowledged: same result, same producer epoch."),
    Always("IND-64", ForAll(Part, lambda p: ForAll(Slot, lambda s: ForAll(Tid, lambda u: Implies(
        And(TV2, retired_open(p, s, u)), tl_st[owner(u)] == S.PrepareAbort)))),
           "Under TV2, a batch appended with a retired epoch that is still in an open span belongs to a "
           "transaction being aborted (it could only pass the epoch check under a verification guard that "
           "a fence or an abort outdated)."),
    Always("IND-65", ForAll(Part, lambda p: ForAll(Tid, lambda u: Implies(And(TV2, pl_open[p][u]), And(
        (pl_x(p, u) < durable_x(owner(u))) == tl_st[owner(u)].is_in(*PREPARE),
        Implies(pl_x(p, u) < durable_x(owner(u)), And(tc_mk[owner(u)][p], pl_x(p, u) == prepared_from_x(owner(u)))))))),
           "Under TV2, a span is open at the durable epoch while its transaction is Ongoing, and at an epoch "
           "one below it exactly while it awaits the marker of a Prepare* transaction (every EndTxn and fence bumps "
           "the epoch before its markers)."),
    Always("IND-66", each_batch(lambda i, p, k: Implies(
        And(TV2, pl_vb[p][i][k][1] == Ver.OK, Not(pl_vst[p][i][k][1])),
        Or(And(b_x(i, p, k) == durable_x(tid_of(i)), tl_st[tid_of(i)] == S.Ongoing),
           And(b_x(i, p, k) == prepared_from_x(tid_of(i)), tl_st[tid_of(i)] == S.PrepareAbort, tc_mk[tid_of(i)][p])))),
           "Under TV2, a verified batch held at the leader with a current guard carries the durable epoch of an "
           "Ongoing transaction, or the one below it of a transaction being aborted (a fence or abort), whose marker "
           "will clear its guard."),
    Always("IND-67", ForAll(Part, lambda p: ForAll(Tid, lambda u: pl_x(p, u) <= durable_x(owner(u)))),
           "No partition leader stores a producer epoch above the durable one (batches and markers carry only "
           "logged epochs)."),
    Always("IND-68", each_batch(lambda i, p, k: Implies(
        And(TV2, pl_vb[p][i][k][1] == Ver.ADDING), And(
            tc_pend[tid_of(i)] == Pend.Ongoing, tc_pend_by[tid_of(i)] == PendBy.LEADER, tc_pend_p[tid_of(i)] == p,
            b_x(i, p, k) == xe(tc_rot[tid_of(i)], tc_pend_e[tid_of(i)])))),
           "Under TV2, a batch held while its implicit add is being logged carries the epoch of the coordinator's "
           "pending Ongoing transition for that partition."),
    Always("IND-69", each_batch(lambda i, p, k: Implies(
        And(pl_vb[p][i][k][1].is_in(Ver.PENDING, Ver.OK, Ver.ADDING), k == pc_k[i]),
        Or(pc_b[i][p][1].is_in(BatchSt.SENT, BatchSt.FAILED), And(pc_b[i][p][1] == BatchSt.ACKED, slot_of(i, p, k))))),
           "A batch a leader holds for verification has not been acknowledged to its client yet, or it is a copy of "
           "one that was appended (a duplicate needing verification starts it like any batch, kafka-protocol §3.5 "
           "Order)."),
    Always("IND-221", each_batch(lambda i, p, k: Implies(
        And(Not(EPOCH_KEPT_AFTER_FAILURE), pl_vb[p][i][k][1].is_in(Ver.PENDING, Ver.OK, Ver.ADDING),
            Not(pl_vst[p][i][k][1])),
        Not(And(pl_open[p][tid_of(i)], pl_e[p][tid_of(i)] == b_e[i][p][k])))),
           "A batch held for verification whose guard is current finds no span of its pid open at its epoch: it "
           "needed verification when it joined, and a span at its epoch opens only by its own append or, under "
           "TV0/1, by the next transaction at the same epoch, which begins after a marker made its guard stale. "
           "A client that keeps its epoch after a failed batch is the exception: under verify a late batch of the "
           "failed transaction may open the span while the next transaction's batch is held (B1 b; Kafka clears "
           "the entry at that append, which the model leaves out, since a guard is not checked while a span is "
           "open)."),
    Always("IND-222", each_batch(lambda i, p, k: Implies(
        And(TV2, pl_vb[p][i][k][1].is_in(Ver.PENDING, Ver.OK, Ver.ADDING), pl_vst[p][i][k][1]),
        Or(b_e[i][p][k] < pl_e[p][b_pid(i, p, k)],
           And(b_e[i][p][k] == pl_e[p][b_pid(i, p, k)], Not(pl_open[p][b_pid(i, p, k)]))))),
           "Under TV2, a held batch whose guard went stale is below the epoch p stored for its pid, or at it with no "
           "span open: a marker (at the bumped epoch, which a batch of the next transaction sent once EndTxn was "
           "answered may carry) made it stale, so the epoch check refuses it if a span is open, and the guard check "
           "otherwise."),
    Always("IND-70", each_batch(lambda i, p, k: Implies(NO_DUPLICATES, And(
        n_prod[i][p][k][1] <= 1,
        Not(And(n_prod[i][p][k][1] > 0, n_pres[i][p][k][1] != PResp.NONE)),
        Implies(held(p, i, k), And(n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE)),
        Implies(And(k == pc_k[i], pc_b[i][p][1] == BatchSt.ACKED),
                And(n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE, Not(held(p, i, k))))))),
           "Without client resends of in-flight batches, a batch is in one place at a time: one Produce in flight, "
           "held by the leader for verification, or answered (the client resends only after a retriable answer); "
           "once acknowledged it is nowhere."),
    Always("IND-71", each_batch(lambda i, p, k: Implies(
        And(NO_EXPIRY, Not(is_op(p)), committing(tid_of(i)), b_e[i][p][k] == commit_e(tid_of(i)),
            b_rot[i][p][k] == tc_rot[tid_of(i)]), dominated(i, p, k))),
           "Under TV2, while a commit is prepared (or its PrepareCommit is being logged), every batch created with "
           "the committing epoch is at or below the leader's producer state (the client flushed before EndTxn), so "
           "a copy still in flight is answered as a duplicate or fenced, never appended."),
    Always("IND-72", ForAll(Inc, lambda i: Implies(pc_rq[i] == Rq.COMMIT, ForAll(Part, lambda p: Implies(
        writes_to(p), pc_b[i][p][1] == BatchSt.ACKED)))),
           "A client with EndTxn(COMMIT) outstanding had every batch of the transaction acknowledged (flush first)."),
    Always("IND-73", each_batch(lambda i, p, k: Implies(
        And(NO_EXPIRY, Not(is_op(p)), Or(g_ack[i][p][k][1], n_pres[i][p][k][1] == PResp.OK,
                                         And(k == pc_k[i], pc_b[i][p][1] == BatchSt.ACKED))),
        dominated(i, p, k))),
           "Without producer-state expiry, a batch answered NONE (appended or found duplicate) stays at or below the "
           "leader's producer state: a later copy is a duplicate or fenced."),
    Always("IND-74", each_batch(lambda i, p, k: And(
        b_x(i, p, k) <= pc_x(i),
        Implies(And(TV2, Or(k < pc_k[i], pc_st[i] == PcState.READY), b_e[i][p][k] != -1), b_x(i, p, k) < pc_x(i)))),
           "A client's batches carry epochs at most its own; under TV2 those of its earlier transactions carry "
           "lower ones, as do all of a READY client's (every EndTxn bumps the epoch)."),
    Always("IND-75", ForAll(Inc, lambda i: Implies(
        And(n_cresp[i] == CResp.OK, Or(pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP), And(TV2, pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT)))),
        cresp_x(i) > pc_x(i))),
           "An InitProducerId answer (and under TV2 an EndTxn answer) hands the client a higher epoch than it holds."),
    Always("IND-76", ForAll(Inc, lambda i: Implies(
        And(committing(tid_of(i)), Or(pc_e[i] == commit_e(tid_of(i)), n_cresp_e[i] == commit_e(tid_of(i)))),
        And(Not(pc_st[i].is_in(PcState.READY, PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR,
                               PcState.ABORTING_TRANSACTION)),
            Implies(n_cresp_e[i] == commit_e(tid_of(i)), Not(And(n_cresp[i] == CResp.OK, pc_st[i].is_in(
                PcState.INITIALIZING, PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION))))))),
           "Under TV2, while a commit is prepared (or being logged), no client holding the committing epoch can "
           "begin or write to a transaction: the committer waits for EndTxn's answer with the bumped epoch (and "
           "no answer in flight hands that epoch to a live client)."),
    Always("IND-77", ForAll(Inc, lambda i: ForAll(Inc, lambda j: Implies(
        And(Config("zombies") == 0, i < j, tid_of(i) == tid_of(j)), And(
            Implies(pc_e[j] != -1, older_than(i, pc_x(j))),
            Implies(n_cresp_e[j] != -1, older_than(i, cresp_x(j))),
            Implies(And(tc_pend[tid_of(j)] == Pend.Empty, tc_pend_cli[tid_of(j)] == j),
                    older_than(i, handed_pend_x(tid_of(j)))))))),
           "Without zombies, a later incarnation of a transactional id holds (or is being handed, or logging) an epoch above "
           "the ones an earlier (crashed) incarnation wrote batches with or still has a transactional request "
           "in flight with: its InitProducerId bumped past them."),
    Always("IND-78", ForAll(Inc, lambda i: Implies(pending_for(i), And(
        (tc_pend[tid_of(i)] == Pend.Empty) == pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP),
        (tc_pend[tid_of(i)] == Pend.Ongoing) == (pc_rq[i] == Rq.ADD),
        (tc_pend[tid_of(i)] == Pend.PrepareCommit) == (pc_rq[i] == Rq.COMMIT),
        (tc_pend[tid_of(i)] == Pend.PrepareAbort) == (pc_rq[i] == Rq.ABORT),
        Implies(Or(tc_pend[tid_of(i)] == Pend.Empty,
                   And(TV2, tc_pend[tid_of(i)].is_in(Pend.PrepareCommit, Pend.PrepareAbort))),
                tc_pend_e[tid_of(i)] > pc_e[i])))),
           "A transition pending for a client's request is the one that request asks for (InitProducerId: Empty, "
           "AddPartitions: Ongoing, EndTxn: Prepare*), and one that hands out an epoch bumps above the client's."),
    Always("IND-79", ForAll(Inc, lambda i: n_cresp[i] != CResp.ABORTABLE),
           "No coordinator row answers a client TRANSACTION_ABORTABLE: the model's coordinator never sends it."),
    Always("IND-80", ForAll(Inc, lambda i: Implies(
        Or(pc_rq[i].is_in(Rq.ADD, Rq.COMMIT, Rq.ABORT),
           pc_st[i].is_in(PcState.READY, PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION,
                          PcState.ABORTING_TRANSACTION, PcState.ABORTABLE_ERROR)),
        pc_e[i] >= 0)),
           "A client that is initialized, or has a transactional request outstanding, holds an epoch."),
    Always("IND-125", each_batch(lambda i, p, k: Implies(
        And(NO_DUPLICATES, Config("replication_lag") == 0,
            Or(n_prod[i][p][k][1] > 0, held(p, i, k), n_pres[i][p][k][1] == PResp.RETRY)),
        Not(slot_of(i, p, k)))),
           "Without client resends a batch is sent once and resent only after a retriable answer, which only a "
           "refused verification gives (nothing appended): a batch in flight, held for verification or answered "
           "retriable is not in p's log yet. On op, whose TxnOffsetCommit has no sequence number to be found a "
           "duplicate (IND-71, IND-73 do not apply), this is what keeps a second copy out. With replication lag a "
           "batch a leader change answers NOT_LEADER_OR_FOLLOWER (PL-43) may have been kept by the new leader."),
)
