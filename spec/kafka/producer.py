"""Producer client table: `TransactionManager` (clients/.../producer/internals/TransactionManager.java).

Each incarnation runs a finite script: initTransactions, then `txns` transactions, each writing
`batches` batches (one by default; kafka-protocol §2.3) to every data partition in use, a TxnOffsetCommit with `ctp`, and committing (or aborting when the app chooses, with
`app_aborts`, or after an error). One coordinator request is outstanding at a time; the message carries its own content
(kind, epoch, partition: `requests.py`), copied from the client's fields, which do not change while
the request is outstanding. Responses are consumed from the network vars of `state.py`.
"""
from txncheck.spec.expr import And, Config, ForAll, If, Max, Not, Or
from txncheck.spec.model import Row, Table

from .chart import PRODUCER
from .domains import (ROTATION, CTP, JAVA, JAVA_CLIENT_BUMP, MAXB, MAXP, MULTI, MULTI_BATCH, SEQ_GIVEN_BACK, NO_PART, OP, BatchSt, CResp, Part, PcState, PResp, Rq, TV01,
                      TV2, is_op, writes_to)
from .params import b, i, k, p
from .requests import resent, sent, sent_if
from .state import (b_rot, n_cresp_rot, pc_rot, b_e, b_s, b_src, call_offset, cs_pos, env_dl, env_dup, g_ack, g_ackc, g_bound, n_cresp,
                    n_cresp_e, n_lost, n_oab, n_pres, n_prod, pc_ack, pc_add, pc_b, pc_bump, pc_e, pc_k, pc_oc, pc_rq, pc_rqp, pc_rs,
                    pc_seq, pc_st)

A = "producer"
TM = "TransactionManager"


def send(kind, part=None):
    """The client sends a request of `kind` (an add names its partition); pc_rqp holds the partition while the
    add is outstanding and none otherwise, so that no partition is special (docs/kafka-protocol.md §1.8)."""
    part = NO_PART if part is None else part
    return [pc_rq[i].set(kind), pc_rqp[i].set(part), *sent(kind, part), n_lost[i].set(False)]


def consume():
    return [n_cresp[i].set(CResp.NONE), n_cresp_e[i].set(-1), n_cresp_rot[i].set(False), pc_rq[i].set(Rq.NONE),
            pc_rqp[i].set(NO_PART)]


def reset_seqs(when=True):
    """A new (pid, epoch): every partition's sequences start again at 0 (resetSequenceNumbers)."""
    return [*[pc_seq[i][q].set(If(when, 0, pc_seq[i][q])) for q in range(MAXP)],
            *[pc_ack[i][q].set(If(when, -1, pc_ack[i][q])) for q in range(MAXP)]]


idle_rq = And(pc_rq[i] == Rq.NONE, n_cresp[i] == CResp.NONE)
resp = lambda kind, code: (pc_rq[i] == kind, n_cresp[i] == code)
END = (Rq.COMMIT, Rq.ABORT)
ready_after_end = PcState.READY
ALL_BATCHES = tuple((q, bb) for q in range(MAXP) for bb in range(1, MAXB + 1))
started = Or(*(pc_add[i][q] for q in range(MAXP)), *(pc_b[i][q][bb] != BatchSt.NONE for q, bb in ALL_BATCHES))


def in_script(q, bb):
    """Batch bb to q is in each transaction's script: `batches` of them to a data partition, one TxnOffsetCommit per
    sendOffsetsToTransaction call to op."""
    return And(writes_to(q), bb <= Config("batches"), Or(bb == 1, Not(is_op(q))))


def earlier_done(q, bb):
    """Every batch to q before batch bb of the transaction has completed (acknowledged or failed): the Java client
    re-sends or expires a batch only when it is the partition's first in flight (RecordAccumulator's drain, Sender's
    in-flight expiry, §2.3)."""
    return And(*(Or(bb <= e, pc_b[i][q][e] != BatchSt.SENT) for e in range(1, MAXB)))


def earlier_failed(q, bb):
    """A batch to q before batch bb failed in this transaction (so the partition may have an unresolved sequence)."""
    return Or(*(And(bb > e, pc_b[i][q][e] == BatchSt.FAILED) for e in range(1, MAXB)))


def oos_retriable(q, kk, bb):
    """TransactionManager.canRetry on OUT_OF_ORDER_SEQUENCE_NUMBER (with `batches` >= 2): the batch was re-sequenced
    since it was sent, or it is not the next sequence after the last acknowledged one (an earlier batch is still on
    its way)."""
    return And(MULTI_BATCH, Not(is_op(q)), Or(pc_rs[i][q][bb], b_s[i][q][kk][bb] != pc_ack[i][q] + 1))


def resend_ok(q, kk, bb):
    """A retry of batch bb leaves only as q's first batch in flight, and a re-sequenced batch only once no copy of it
    is in flight (its copies would carry different sequences; a timing restriction for the copy left behind by a
    closed connection). A re-sequenced batch follows the failed one, so its sequence is at least 1 (the conjunct keeps
    the decrement in range for the symbolic type check; LIVE-3 would flag a retry it ever held back)."""
    return (earlier_done(q, bb), Or(Not(pc_rs[i][q][bb]), And(n_prod[i][q][kk][bb] == 0, b_s[i][q][kk][bb] >= 1)))


def resend(q, kk, bb):
    """Batch bb to q is sent again, with its sequence one less if it was re-sequenced."""
    return (n_prod[i][q][kk][bb].set(n_prod[i][q][kk][bb] + 1),
            b_s[i][q][kk][bb].set(If(pc_rs[i][q][bb], b_s[i][q][kk][bb] - 1, b_s[i][q][kk][bb])),
            pc_rs[i][q][bb].set(False))


def resequence(q, kk, bb):
    """A failed batch bb to q gives its sequence back (TxnPartitionEntry.adjustSequencesDueToFailedBatch, with
    SEQ_GIVEN_BACK): the next sequence is one less, and every later batch still in flight is marked to carry one less
    when it is next sent. The failed batch took a sequence when it was drained, so the next one is at least 1 (Kafka
    throws IllegalStateException below 0; the conjunct keeps the decrement in range for the symbolic type check)."""
    adjust = And(SEQ_GIVEN_BACK, Not(is_op(q)), pc_seq[i][q] >= 1)
    return (pc_seq[i][q].set(If(adjust, pc_seq[i][q] - 1, pc_seq[i][q])),
            *[pc_rs[i][q][e].set(Or(pc_rs[i][q][e], And(adjust, bb < e, pc_b[i][q][e] == BatchSt.SENT)))
              for e in range(2, MAXB + 1)])


def drained_before(q, bb):
    """The batches to q before batch bb were drained: a partition's batches leave the accumulator in order."""
    return And(*(Or(bb != e + 1, pc_b[i][q][e] != BatchSt.NONE) for e in range(1, MAXB)))


def all_acked(q):
    """Every batch of the transaction's script to q was acknowledged (commitTransaction flushes first)."""
    return And(*(Or(Not(in_script(q, bb)), pc_b[i][q][bb] == BatchSt.ACKED)
                 for bb in range(1, MAXB + 1)))


def none_in_flight(q):
    """No batch to q is in flight (an EndTxn(ABORT) waits for them)."""
    return And(*(pc_b[i][q][bb] != BatchSt.SENT for bb in range(1, MAXB + 1)))
# the script's current transaction pc_k indexes its batches (b_e, b_s, n_prod) and g_ackc: a client in a
# transaction, or with a batch, has begun one (beginTransaction counts it; STRUCT-2 proves this guard never
# disables a row)
begun = pc_k[i] >= 1
# model bound (config maxseq): the next sequence number fits (Kafka wraps to 0 after Integer.MAX_VALUE); PC-22
seq_room = Or(is_op(p), pc_seq[i][p] < Config("maxseq"))

ROWS = (
    # -- initTransactions ----------------------------------------------------------------------
    Row("PC-01", A, "initTransactions", params=(i,),
        guard=(Or(pc_st[i] == PcState.UNINITIALIZED, And(i == 0, pc_st[i] == PcState.IDLE)), idle_rq),
        updates=(pc_st[i].set(PcState.INITIALIZING), *send(Rq.INIT)),
        ref=f"kafka-protocol §2.2 initTransactions; {TM}.initializeTransactions"),
    Row("PC-02", A, "InitProducerId response NONE", params=(i,),
        guard=(pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP), n_cresp[i] == CResp.OK),
        updates=(pc_st[i].set(If(pc_st[i] == PcState.INITIALIZING, PcState.READY, pc_st[i])),
                 pc_e[i].set(n_cresp_e[i]), pc_rot[i].set(n_cresp_rot[i]), pc_bump[i].set(False), *reset_seqs(),
                 *consume()),
        ref=f"kafka-protocol §2.2; {TM}.InitProducerIdHandler.handleResponse (seq reset per new (pid, e))"),
    # -- beginTransaction -----------------------------------------------------------------------
    Row("PC-03", A, "beginTransaction", params=(i,),
        guard=(pc_st[i] == PcState.READY, pc_k[i] < If(i == 0, Config("txns"), Config("restart_txns")),
               Or(Not(CTP), And(cs_pos[i] >= 0, cs_pos[i] < Config("inputs")))),
        updates=(pc_st[i].set(PcState.IN_TRANSACTION), pc_k[i].set(pc_k[i] + 1),
                 b_src[i][pc_k[i] + 1].set(If(CTP, cs_pos[i], 0)), cs_pos[i].set(If(CTP, cs_pos[i] + 1, cs_pos[i])),
                 *[pc_add[i][q].set(False) for q in range(MAXP)], pc_oc[i].set(0),
                 *[pc_b[i][q][bb].set(BatchSt.NONE) for q, bb in ALL_BATCHES],
                 *[pc_rs[i][q][bb].set(False) for q, bb in ALL_BATCHES]),
        ref=f"kafka-protocol §2.2 beginTransaction (local), §1.6 EOS loop (poll one input record first); "
            f"{TM}.beginTransaction, KafkaConsumer.poll",
        doc="With `ctp`, the loop polls the record at its position (read_committed) and advances the position."),
    # -- send: AddPartitionsToTxn (TV0/1), then the batch ------------------------------------------
    Row("PC-04", A, "send to p: AddPartitionsToTxn", params=(i, p),
        guard=(TV01, writes_to(p), pc_st[i] == PcState.IN_TRANSACTION, Not(pc_add[i][p]), idle_rq),
        updates=tuple(send(Rq.ADD, p)),
        ref=f"kafka-protocol §1.1 obligation 1, §3.2, §3.3 (AddOffsetsToTxn registers op); "
            f"{TM}.maybeAddPartition / AddPartitionsToTxnHandler, sendOffsetsToTransaction / AddOffsetsToTxnHandler",
        doc="For p = op (the group's __consumer_offsets partition) this is AddOffsetsToTxn."),
    Row("PC-05", A, "AddPartitionsToTxn response NONE", params=(i,),
        guard=resp(Rq.ADD, CResp.OK),
        updates=(*[pc_add[i][q].set(Or(pc_add[i][q], pc_rqp[i] == q)) for q in range(MAXP)], *consume()),
        ref=f"kafka-protocol §3.2 A4/A5; {TM}.AddPartitionsToTxnHandler"),
    Row("PC-06", A, "Produce(batch) drained", params=(i, p, b),
        guard=(in_script(p, b), pc_st[i] == PcState.IN_TRANSACTION, pc_b[i][p][b] == BatchSt.NONE,
               Or(TV2, pc_add[i][p]), begun, seq_room, drained_before(p, b)),
        updates=(pc_b[i][p][b].set(BatchSt.SENT), pc_add[i][p].set(True),
                 b_e[i][p][pc_k[i]].set(pc_e[i]), b_rot[i][p][pc_k[i]].set(pc_rot[i]),
                 b_s[i][p][pc_k[i]][b].set(If(is_op(p), 0, pc_seq[i][p])),
                 pc_seq[i][p].set(If(is_op(p), pc_seq[i][p], pc_seq[i][p] + 1)), n_prod[i][p][pc_k[i]][b].set(1),
                 pc_oc[i].set(If(And(MULTI, is_op(p)), pc_oc[i] + 1, pc_oc[i]))),
        ref="kafka-protocol §1.1 (seq fixed at batch creation), §3.4 (TxnOffsetCommit: a transactional batch "
            f"on op without sequence); RecordAccumulator.drain, Sender.sendProduceRequest; {TM}.TxnOffsetCommitHandler",
        doc="For p = op this is sendOffsetsToTransaction's TxnOffsetCommit(offset b_src + 1, generation), sent "
            "to the group coordinator; TV0/1 after AddOffsetsToTxn, TV2 directly (implicit add). With "
            "`offset_commits` = 2 it is the first of two calls (PC-23), committing b_src."),
    Row("PC-07", A, "Produce response NONE", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b] == PResp.OK, pc_k[i] == k, pc_b[i][p][b] == BatchSt.SENT),
        updates=(n_pres[i][p][k][b].set(PResp.NONE), pc_b[i][p][b].set(BatchSt.ACKED), g_ack[i][p][k][b].set(True),
                 pc_ack[i][p].set(If(And(MULTI_BATCH, Not(is_op(p))), Max(pc_ack[i][p], b_s[i][p][k][b]), pc_ack[i][p]))),
        ref=f"Sender.handleProduceResponse -> completeBatch; {TM}.handleCompletedBatch (maybeUpdateLastAckedSequence)"),
    Row("PC-08", A, "Produce response retriable", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b] == PResp.RETRY, pc_k[i] == k, pc_b[i][p][b] == BatchSt.SENT, n_prod[i][p][k][b] < 2,
               pc_st[i] != PcState.CRASHED, *resend_ok(p, k, b)),
        updates=(n_pres[i][p][k][b].set(PResp.NONE), *resend(p, k, b)),
        ref="kafka-protocol §2.2 retriable (NOT_ENOUGH_REPLICAS), §2.3; Sender.canRetry -> reenqueueBatch (same seq, "
            "or one less once re-sequenced), RecordAccumulator.shouldStopDrainBatchesForPartition (a retry leaves only "
            "as the partition's first batch in flight)"),
    Row("PC-09", A, "Produce response abortable", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b].is_in(PResp.ABORTABLE, PResp.OOS), pc_k[i] == k, pc_b[i][p][b] == BatchSt.SENT,
               pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR),
               Or(n_pres[i][p][k][b] != PResp.OOS, Not(oos_retriable(p, k, b)), earlier_failed(p, b))),
        updates=(n_pres[i][p][k][b].set(PResp.NONE), pc_b[i][p][b].set(BatchSt.FAILED),
                 pc_st[i].set(PcState.ABORTABLE_ERROR), *resequence(p, k, b),
                 pc_bump[i].set(Or(pc_bump[i], If(JAVA, And(JAVA_CLIENT_BUMP, Not(is_op(p))),
                                                  n_pres[i][p][k][b] == PResp.OOS)))),
        ref="kafka-protocol §2.2 abortable (INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE, OOS sets "
            f"epochBumpRequired), §2.2 client profiles; {TM}.handleFailedBatch -> maybeTransitionToErrorState "
            "(java: every failed batch, when needToTriggerEpochBumpFromClient); TxnOffsetCommitHandler (abortableError: "
            "no bump)",
        doc="Client `reference` sets epochBumpRequired on OUT_OF_ORDER_SEQUENCE_NUMBER only; client `java` on every "
            "failed data batch under kip98 and verify, never under tv2, and not for a failed TxnOffsetCommit (p = op). "
            "With `batches` >= 2 an OUT_OF_ORDER_SEQUENCE_NUMBER fails the batch only when it is the next sequence "
            "(else PC-25 retries it) or an earlier batch failed (its sequence may be unresolved). The failure gives the "
            "sequence back and re-sequences the later batches in flight (adjustSequencesDueToFailedBatch), where that "
            "is observable: with `batches` >= 2, or a client that keeps its epoch under kip98 and verify (reference), "
            "whose next transaction reuses the sequence."),
    Row("PC-10", A, "Produce response fatal", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b] == PResp.FENCED, pc_k[i] == k, pc_b[i][p][b] == BatchSt.SENT,
               pc_st[i] != PcState.CRASHED),
        updates=(n_pres[i][p][k][b].set(PResp.NONE), pc_b[i][p][b].set(BatchSt.FAILED), pc_st[i].set(PcState.FATAL_ERROR)),
        ref=f"kafka-protocol §2.2 fatal (PRODUCER_FENCED); {TM}.transitionToFatalError"),
    Row("PC-11", A, "stale Produce response", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b] != PResp.NONE, Or(pc_k[i] != k, pc_b[i][p][b] != BatchSt.SENT,
                                                 pc_st[i].is_in(PcState.CRASHED, PcState.FATAL_ERROR))),
        updates=(n_pres[i][p][k][b].set(PResp.NONE),),
        ref="Sender: a response for a batch already failed or completed is ignored"),
    Row("PC-12", A, "delivery timeout expires an in-flight batch", params=(i, p, b),
        guard=(pc_b[i][p][b] == BatchSt.SENT, pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR),
               env_dl < Config("delays"), Not(is_op(p)), earlier_done(p, b)),
        updates=(pc_b[i][p][b].set(BatchSt.FAILED), pc_st[i].set(PcState.ABORTABLE_ERROR), env_dl.set(env_dl + 1),
                 pc_bump[i].set(Or(pc_bump[i], JAVA_CLIENT_BUMP))),
        tags=("network",),
        ref="kafka-protocol §6 B1 trigger (a), §2.2 client profiles; Sender.failExpiredBatches (delivery.timeout.ms): "
            f"the request stays in flight (delayed), the client fails the batch ({TM}.handleFailedBatch sets "
            "epochBumpRequired for client java under kip98 and verify)"),
    Row("PC-13", A, "request timeout: resend the same batch", params=(i, p, b),
        guard=(pc_b[i][p][b] == BatchSt.SENT, pc_st[i] != PcState.CRASHED, begun, n_prod[i][p][pc_k[i]][b] < 2,
               env_dup < Config("duplicates"), Or(Not(MULTI), Not(is_op(p))), earlier_done(p, b), Not(pc_rs[i][p][b])),
        updates=(n_prod[i][p][pc_k[i]][b].set(n_prod[i][p][pc_k[i]][b] + 1), env_dup.set(env_dup + 1)),
        tags=("network",),
        ref="kafka-protocol §1.7 duplicate by client retry; Sender (request.timeout.ms, retries, same seq)",
        doc="Either copy's answer may reach the client. With `offset_commits` = 2 a TxnOffsetCommit takes PC-24 "
            "instead, which keeps the abandoned copy apart."),
    # -- commitTransaction / abortTransaction ----------------------------------------------------
    Row("PC-14", A, "commitTransaction: EndTxn(COMMIT)", params=(i,),
        guard=(pc_st[i] == PcState.IN_TRANSACTION, idle_rq,
               ForAll(Part, all_acked),
               Or(Not(MULTI), pc_oc[i] == Config("offset_commits"))),
        updates=(pc_st[i].set(PcState.COMMITTING_TRANSACTION), *send(Rq.COMMIT)),
        ref=f"kafka-protocol §1.1 obligation 2 (flush first); {TM}.beginCommit, EndTxnHandler"),
    Row("PC-15", A, "abortTransaction: EndTxn(ABORT)", params=(i,),
        guard=(Or(pc_st[i] == PcState.ABORTABLE_ERROR,
                  And(pc_st[i] == PcState.IN_TRANSACTION, Config("app_aborts") == 1)),
               idle_rq, ForAll(Part, none_in_flight), started),
        updates=(pc_st[i].set(PcState.ABORTING_TRANSACTION), *send(Rq.ABORT)),
        ref=f"kafka-protocol §2.2 abortTransaction; {TM}.beginAbort; nextRequest: EndTxn waits until no "
            "batch is incomplete"),
    Row("PC-16", A, "abortTransaction, transaction not started", params=(i,),
        guard=(Or(pc_st[i] == PcState.ABORTABLE_ERROR,
                  And(pc_st[i] == PcState.IN_TRANSACTION, Config("app_aborts") == 1)),
               idle_rq, Not(started)),
        updates=(pc_st[i].set(PcState.READY), cs_pos[i].set(If(CTP, -1, cs_pos[i]))),
        ref=f"{TM}.nextRequest: EndTxn with !transactionStarted completes locally"),
    Row("PC-17", A, "EndTxn response NONE", params=(i,),
        guard=(pc_rq[i].is_in(*END), n_cresp[i] == CResp.OK,
               pc_st[i].is_in(PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION), begun),
        updates=(pc_st[i].set(If(And(pc_bump[i], TV01), PcState.INITIALIZING, PcState.READY)),
                 pc_rq[i].set(If(And(pc_bump[i], TV01), Rq.INITBUMP, Rq.NONE)), pc_rqp[i].set(NO_PART),
                 *sent_if(And(pc_bump[i], TV01), Rq.INITBUMP), n_lost[i].set(False),
                 n_cresp[i].set(CResp.NONE), n_cresp_e[i].set(-1), n_cresp_rot[i].set(False),
                 pc_e[i].set(If(TV2, n_cresp_e[i], pc_e[i])), pc_rot[i].set(And(ROTATION, If(TV2, n_cresp_rot[i], pc_rot[i]))),
                 pc_bump[i].set(And(pc_bump[i], TV01)),
                 *reset_seqs(TV2),
                 g_ackc[i][pc_k[i]].set(Or(g_ackc[i][pc_k[i]], pc_rq[i] == Rq.COMMIT)),
                 cs_pos[i].set(If(And(CTP, pc_rq[i] == Rq.ABORT), -1, cs_pos[i]))),
        ref=f"kafka-protocol §2.2 (abort via INITIALIZING when epochBumpRequired; TV2 adopts the returned "
            f"(pid, e) and resets seq); {TM}.EndTxnHandler.handleResponse, completeTransaction; after an abort "
            "the EOS loop rewinds to the committed offsets (KIP-447 example resetToLastCommittedPositions)"),
    # -- coordinator errors ----------------------------------------------------------------------
    Row("PC-18", A, "coordinator response retriable: resend", params=(i,),
        guard=(pc_rq[i] != Rq.NONE, n_cresp[i] == CResp.RETRY, pc_st[i] != PcState.CRASHED),
        updates=(n_cresp[i].set(CResp.NONE), *resent()),
        ref="kafka-protocol §2.2 retriable (NOT_COORDINATOR, CONCURRENT_TRANSACTIONS, ...); "
            f"{TM}.TxnRequestHandler.reenqueue"),
    Row("PC-19", A, "coordinator response abortable", params=(i,),
        guard=(pc_rq[i].is_in(Rq.ADD, Rq.COMMIT), n_cresp[i] == CResp.ABORTABLE,
               pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION)),
        updates=(pc_st[i].set(PcState.ABORTABLE_ERROR), *consume()),
        ref=f"kafka-protocol §2.2 abortable; {TM}.abortableError"),
    Row("PC-20", A, "coordinator response fatal", params=(i,),
        guard=(pc_rq[i] != Rq.NONE, n_cresp[i].is_in(CResp.FENCED, CResp.FATAL, CResp.ABORTABLE),
               pc_st[i] != PcState.CRASHED,
               Not(And(pc_rq[i].is_in(Rq.ADD, Rq.COMMIT), n_cresp[i] == CResp.ABORTABLE,
                       pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION)))),
        updates=(pc_st[i].set(PcState.FATAL_ERROR), *consume()),
        ref=f"kafka-protocol §2.2 fatal (PRODUCER_FENCED, INVALID_TXN_STATE); {TM}.fatalError"),
    Row("PC-21", A, "request timeout after a lost request or response: resend", params=(i,),
        guard=(n_lost[i], pc_rq[i] != Rq.NONE, pc_st[i] != PcState.CRASHED),
        updates=(n_lost[i].set(False), *resent()),
        ref="kafka-protocol §1.7 (lost request, indefinite outcome); NetworkClient request.timeout.ms -> retry"),
    Row("PC-22", A, "Produce(batch) drained", params=(i, p, b),
        guard=(in_script(p, b), pc_st[i] == PcState.IN_TRANSACTION, pc_b[i][p][b] == BatchSt.NONE,
               Or(TV2, pc_add[i][p]), begun, Not(seq_room), drained_before(p, b)),
        updates=(g_bound.set(True),),
        ref="model bound (config maxseq): PC-06 when the next sequence number would exceed maxseq (Kafka wraps "
            "to 0 after Integer.MAX_VALUE, DefaultRecordBatch.incrementSequence); BOUNDS flags a config that "
            "gets here",
        doc="No protocol state changes; the ghost flag is BOUNDS."),
    # -- sendOffsetsToTransaction more than once per transaction (§3.4 O6) ------------------------------
    Row("PC-23", A, "sendOffsetsToTransaction again: TxnOffsetCommit", params=(i,),
        guard=(MULTI, CTP, pc_st[i] == PcState.IN_TRANSACTION, pc_b[i][OP][1] == BatchSt.ACKED,
               pc_oc[i] < Config("offset_commits"), begun),
        updates=(pc_b[i][OP][1].set(BatchSt.SENT), pc_oc[i].set(pc_oc[i] + 1), n_prod[i][OP][pc_k[i]][1].set(1)),
        ref="kafka-protocol §3.4 O6, §1.6 EOS loop; KafkaProducer.sendOffsetsToTransaction (blocks until the "
            f"previous call's result), {TM}.sendOffsetsToTransaction / TxnOffsetCommitHandler",
        doc="The next call, once the previous one was answered: TxnOffsetCommit of the next offset (call_offset) with "
            "the same epoch and generation; the span on op is open, so it needs no verification."),
    Row("PC-24", A, "request timeout: close the connection, resend TxnOffsetCommit", params=(i,),
        guard=(MULTI, CTP, pc_b[i][OP][1] == BatchSt.SENT, pc_st[i] != PcState.CRASHED, begun,
               env_dup < Config("duplicates"), n_oab[i][pc_k[i]] == -1,
               Or(n_prod[i][OP][pc_k[i]][1] == 1, n_pres[i][OP][pc_k[i]][1] != PResp.NONE)),
        updates=(n_oab[i][pc_k[i]].set(If(n_prod[i][OP][pc_k[i]][1] == 1, call_offset(i, pc_k[i]), -1)),
                 n_pres[i][OP][pc_k[i]][1].set(PResp.NONE), n_prod[i][OP][pc_k[i]][1].set(1), env_dup.set(env_dup + 1)),
        tags=("network",),
        ref="kafka-protocol §3.4 O6, §1.7 duplicate by client retry; NetworkClient.handleTimedOutRequests (closes the "
            f"connection; the request completes as disconnected), {TM}.TxnRequestHandler.onComplete (wasDisconnected: "
            "reenqueue the same TxnOffsetCommit)",
        doc="The request is still in the network (it becomes the abandoned copy, n_oab) or already answered (the "
            "answer is lost with the connection); the resend is the copy whose answer the client waits for. A "
            "request the group coordinator holds for verification is not abandoned (a timing restriction)."),
    # -- several batches in flight to one partition (§2.3) --------------------------------------------
    Row("PC-25", A, "Produce response OUT_OF_ORDER_SEQUENCE_NUMBER, not the next sequence: retry", params=(i, p, k, b),
        guard=(n_pres[i][p][k][b] == PResp.OOS, pc_k[i] == k, pc_b[i][p][b] == BatchSt.SENT, n_prod[i][p][k][b] < 2,
               pc_st[i] != PcState.CRASHED, oos_retriable(p, k, b), *resend_ok(p, k, b)),
        updates=(n_pres[i][p][k][b].set(PResp.NONE), *resend(p, k, b)),
        ref=f"kafka-protocol §2.3; {TM}.canRetry (OUT_OF_ORDER_SEQUENCE_NUMBER: retried when the batch is not the next "
            "sequence or was re-sequenced, and the partition has no unresolved sequence), Sender.reenqueueBatch",
        doc="A later batch that reached the leader before an earlier one is retried once the earlier ones completed; "
            "a re-sequenced batch goes out with its new sequence."),
)


BY_ID = {r.id: r for r in ROWS}

TABLE = Table("producer", ROWS, status="pc_st", at=PRODUCER,
              doc="Producer client (TransactionManager) per incarnation; §1.1, §2.2.",
              nondeterministic=tuple(BY_ID[r].trigger for r in ("PC-04", "PC-06", "PC-15", "PC-14")))
