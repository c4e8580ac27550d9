"""State variables, grouped by actor, and `call_offset`, the offset a TxnOffsetCommit carries. Ghost vars
(`ghost=True`) serve properties only and never appear in a protocol row's guard (tests/test_kafka_spec.py
checks this)."""
from txncheck.spec.domains import BOOL
from txncheck.spec.expr import Config, If, Var

from .domains import (MULTI, lagged, BatchSt, CEpoch, Copies, CResp, Epoch, Inc, InOffset, InRecord, Kind, LastSeq, Offset,
                      OffsetCalls, Outcome, Part, PcState, Pend, PendBy, PendingOffset, Position, PResp, Result, Rq, Seq, Slot, StoredCEpoch, Tid, Pid,
                      Txn, TxnCount, TxnState, Ver, IntRange, IncSlot, TxnSlot, Bat, BatSlot, NO_PART, PartOrNone, LeaderEpoch)

# ---- producer client (TransactionManager), per incarnation ----------------------------------
pc_st = Var("pc_st", PcState, index=(Inc,), init=PcState.IDLE, doc="TransactionManager.State (IDLE: not started)")
pc_e = Var("pc_e", Epoch, index=(Inc,), init=-1, doc="the epoch the client holds")
pc_k = Var("pc_k", TxnCount, index=(Inc,), init=0, doc="transactions begun (the client's finite script)")
pc_seq = Var("pc_seq", Seq, index=(Inc, Part), init=0, doc="next sequence number per partition")
pc_add = Var("pc_add", BOOL, index=(Inc, Part), init=False, doc="partition registered in this transaction")
pc_b = Var("pc_b", BatchSt, index=(Inc, Part, BatSlot), init=BatchSt.NONE, doc="where this transaction's batch b to p stands")
pc_rq = Var("pc_rq", Rq, index=(Inc,), init=Rq.NONE, doc="the outstanding coordinator request")
pc_rqp = Var("pc_rqp", PartOrNone, index=(Inc,), init=NO_PART, doc="partition of an outstanding AddPartitionsToTxn")
pc_bump = Var("pc_bump", BOOL, index=(Inc,), init=False, doc="epochBumpRequired (KIP-360)")
b_e = Var("b_e", Epoch, index=(Inc, Part, Txn), init=-1,
          doc="producer epoch of transaction k's batches to p (the client's epoch does not change within a transaction)")
b_s = Var("b_s", Seq, index=(Inc, Part, Txn, Bat), init=0, doc="base sequence batch (i, p, k, b) carries: fixed when it is drained, lowered when an earlier batch fails (re-sequencing, §2.3)")

# ---- consumer of the consume-transform-produce application, per incarnation --------------------
cs_pos = Var("cs_pos", Position, index=(Inc,), init=-1,
             doc="position in the input partition (-1: fetch the committed offset first)")
b_src = Var("b_src", InRecord, index=(Inc, Txn), init=0,
            doc="input offset transaction (i, k) consumed; its outputs carry it, its TxnOffsetCommit commits +1")
pc_oc = Var("pc_oc", OffsetCalls, index=(Inc,), init=0,
            doc="sendOffsetsToTransaction calls made in this transaction (counted only when offset_commits >= 2)")

# ---- group coordinator (__consumer_offsets), one group, one input partition ------------------
gc_off = Var("gc_off", InOffset, init=0, doc="committed[g][tp]: the group's committed input offset")
gc_pend = Var("gc_pend", PendingOffset, index=(Pid,), init=-1,
              doc="pending[g][pid][tp]: transactional offset awaiting its marker (-1: none)")

# ---- network (bag of in-flight messages) ------------------------------------------------------
n_creq = Var("n_creq", BOOL, index=(Inc,), init=False, doc="the client's coordinator request is in flight")
n_creq_rq = Var("n_creq_rq", Rq, index=(Inc,), init=Rq.NONE, doc="kind of that request (NONE: none in flight)")
n_creq_e = Var("n_creq_e", Epoch, index=(Inc,), init=-1, doc="producer epoch that request carries")
n_creq_p = Var("n_creq_p", PartOrNone, index=(Inc,), init=NO_PART, doc="partition an AddPartitionsToTxn / AddOffsetsToTxn adds")
n_late = Var("n_late", BOOL, index=(Inc,), init=False,
             doc="a copy of a coordinator request the client abandoned on a request timeout (it closed the connection "
                 "and re-sent), still to be handled by the coordinator; nobody hears its answer")
n_late_rq = Var("n_late_rq", Rq, index=(Inc,), init=Rq.NONE, doc="kind of the late copy (NONE: none)")
n_late_e = Var("n_late_e", Epoch, index=(Inc,), init=-1, doc="producer epoch the late copy carries")
n_late_p = Var("n_late_p", PartOrNone, index=(Inc,), init=NO_PART, doc="partition the late copy adds")
n_late_ce = Var("n_late_ce", CEpoch, index=(Inc,), init=0,
                doc="coordinator epoch of the broker that holds the late copy (the tid's coordinator when it was "
                    "sent): a later coordinator never sees it")
n_cresp = Var("n_cresp", CResp, index=(Inc,), init=CResp.NONE, doc="coordinator response in flight")
n_cresp_e = Var("n_cresp_e", Epoch, index=(Inc,), init=-1, doc="epoch carried by that response")
n_lost = Var("n_lost", BOOL, index=(Inc,), init=False, doc="request or response dropped: the client will time out")
n_prod = Var("n_prod", Copies, index=(Inc, Part, Txn, Bat), init=0, doc="copies of Produce(batch i, p, k, b) in flight")
n_pres = Var("n_pres", PResp, index=(Inc, Part, Txn, Bat), init=PResp.NONE, doc="Produce response in flight")
n_oab = Var("n_oab", PendingOffset, index=(Inc, Txn), init=-1,
            doc="a TxnOffsetCommit of transaction (i, k) abandoned on a request timeout, still in flight to the group "
                "coordinator: the offset it carries (-1: none); its connection is closed, so it is never answered")
n_mk = Var("n_mk", BOOL, index=(Tid, Part, CEpoch), init=False,
           doc="WriteTxnMarkers(pid, p) in flight from the coordinator of epoch c")
n_mk_res = Var("n_mk_res", Result, index=(Tid, Part, CEpoch), init=Result.COMMIT, doc="marker result")
n_mk_e = Var("n_mk_e", Epoch, index=(Tid, Part, CEpoch), init=-1, doc="marker producer epoch")
n_mkd = Var("n_mkd", BOOL, index=(Tid, Part), init=False,
            doc="a stale copy of WriteTxnMarkers(pid, p) in flight: a request the coordinator gave up on at its "
                "request timeout (connection closed, markers re-enqueued) that the leader of p may still execute; "
                "nobody hears its answer")
n_mkd_res = Var("n_mkd_res", Result, index=(Tid, Part), init=Result.COMMIT, doc="the stale copy's result")
n_mkd_e = Var("n_mkd_e", Epoch, index=(Tid, Part), init=-1, doc="the stale copy's producer epoch")
n_mkd_c = Var("n_mkd_c", CEpoch, index=(Tid, Part), init=0, doc="the stale copy's coordinator epoch")

# ---- transaction coordinator: in-memory TransactionMetadata, per tid ----------------------------
tc_st = Var("tc_st", TxnState, index=(Tid,), init=TxnState.Empty, doc="cached TransactionState")
tc_e = Var("tc_e", Epoch, index=(Tid,), init=-1, doc="producerEpoch")
tc_last = Var("tc_last", Epoch, index=(Tid,), init=-1, doc="lastProducerEpoch (not logged)")
tc_parts = Var("tc_parts", BOOL, index=(Tid, Part), init=False, doc="topicPartitions")
tc_pend = Var("tc_pend", Pend, index=(Tid,), init=Pend.NONE, doc="pendingState")
tc_pend_e = Var("tc_pend_e", Epoch, index=(Tid,), init=-1, doc="epoch of the pending transition")
tc_pend_last = Var("tc_pend_last", Epoch, index=(Tid,), init=-1, doc="lastProducerEpoch after it")
tc_pend_by = Var("tc_pend_by", PendBy, index=(Tid,), init=PendBy.INTERNAL, doc="who waits for its callback")
tc_pend_cli = Var("tc_pend_cli", Inc, index=(Tid,), init=0, doc="the waiting client")
tc_pend_p = Var("tc_pend_p", PartOrNone, index=(Tid,), init=NO_PART, doc="partition being added")
tc_mk = Var("tc_mk", BOOL, index=(Tid, Part), init=False, doc="markers not yet acknowledged")
tc_ff = Var("tc_ff", BOOL, index=(Tid,), init=False,
            doc="hasFailedEpochFence: a fence's PrepareAbort append failed; the next fence keeps the bumped epoch")
tc_ce = Var("tc_ce", CEpoch, index=(Tid,), init=0,
            doc="coordinator epoch of the tid's __transaction_state partition (bumped by failover)")

# ---- transaction log (__transaction_state), durable record per tid ----------------------------
tl_st = Var("tl_st", TxnState, index=(Tid,), init=TxnState.Empty, doc="logged TransactionStatus")
tl_e = Var("tl_e", Epoch, index=(Tid,), init=-1, doc="logged ProducerEpoch")
tl_parts = Var("tl_parts", BOOL, index=(Tid, Part), init=False, doc="logged TransactionPartitions")

# ---- partition leaders ---------------------------------------------------------------------------
log_kind = Var("log_kind", Kind, index=(Part, Slot), init=Kind.EMPTY, doc="batch at offset: data or control")
log_pid = Var("log_pid", Pid, index=(Part, Slot), init=0, doc="producer id of the batch")
log_e = Var("log_e", Epoch, index=(Part, Slot), init=-1,
            doc="producer epoch of the batch or marker (read by the producer-state replay of a leader change, FLT-05)")
log_seq = Var("log_seq", Seq, index=(Part, Slot), init=0,
              doc="base sequence of the data batch (read by the producer-state replay of a leader change, FLT-05)")
log_ce = Var("log_ce", StoredCEpoch, index=(Part, Slot), init=-1,
             doc="coordinator epoch of the marker (recorded only when `leader_failovers` >= 1: only the replay of a "
                 "leader change reads it)")
pl_end = Var("pl_end", Offset, index=(Part,), init=0,
             doc="log end offset (= HW unless `replication_lag` is 1: then pl_hw)")
pl_lso = Var("pl_lso", Offset, index=(Part,), init=0, doc="last stable offset")
pl_e = Var("pl_e", Epoch, index=(Part, Pid), init=-1, doc="ProducerStateEntry.producerEpoch (-1: no state)")
pl_seq = Var("pl_seq", LastSeq, index=(Part, Pid), init=-1, doc="last sequence appended")
pl_ce = Var("pl_ce", StoredCEpoch, index=(Part, Pid), init=-1, doc="coordinatorEpoch of the last marker")
pl_open = Var("pl_open", BOOL, index=(Part, Pid), init=False, doc="open span (currentTxnFirstOffset set)")
pl_first = Var("pl_first", Slot, index=(Part, Pid), init=0, doc="first offset of the open span")
pl_vb = Var("pl_vb", Ver, index=(Part, IncSlot, TxnSlot, BatSlot), init=Ver.NONE,
            doc="batch (i, k) held by p's leader for verification (§3.11): its request out at the coordinator, "
                "answered, or its TV2 implicit add being logged; every batch of a pid shares the pid's "
                "VerificationStateEntry (ProducerStateManager.maybeCreateVerificationStateEntry)")
pl_vst = Var("pl_vst", BOOL, index=(Part, IncSlot, TxnSlot, BatSlot), init=False,
             doc="the guard batch (i, k) holds is stale: a transactional batch or marker of its pid was appended at p "
                 "since it joined the entry, which cleared it (UnifiedLog.updateProducers); checked at the append "
                 "only when the pid has no ongoing transaction there")

# ---- environment budgets --------------------------------------------------------------------------
env_to = Var("env_to", IntRange("Timeouts", 0, "timeouts"), init=0, doc="coordinator timeout aborts used")
env_dl = Var("env_dl", IntRange("Delays", 0, "delays"), init=0, doc="produce expiries while in flight used")
env_dup = Var("env_dup", IntRange("Dups", 0, "duplicates"), init=0, doc="client produce retries used")
env_loss = Var("env_loss", IntRange("Losses", 0, "losses"), init=0, doc="lost coordinator messages used")
env_exp = Var("env_exp", IntRange("Expiries", 0, "expiries"), init=0, doc="producer-state expiries used")
env_tlf = Var("env_tlf", IntRange("TlFailures", 0, "tl_failures"), init=0, doc="failed transaction-log appends used")
env_mkd = Var("env_mkd", IntRange("MarkerDups", 0, "marker_dups"), init=0, doc="stale WriteTxnMarkers copies used")
env_late = Var("env_late", IntRange("LateRequests", 0, "late_requests"), init=0,
               doc="coordinator requests abandoned on a request timeout with a late copy used")
env_lf = Var("env_lf", IntRange("LeaderFailovers", 0, "leader_failovers"), init=0,
             doc="leader changes of data partitions used (FLT-05)")

# ---- ghost (history) vars -------------------------------------------------------------------------
log_inc = Var("log_inc", Inc, index=(Part, Slot), init=0, ghost=True, doc="γ: incarnation of the data batch")
log_k = Var("log_k", TxnCount, index=(Part, Slot), init=0, ghost=True, doc="γ: transaction of the data batch")
log_out = Var("log_out", Outcome, index=(Part, Slot), init=Outcome.NONE, ghost=True,
              doc="outcome(r): the marker that closed the record's span")
log_ret = Var("log_ret", BOOL, index=(Part, Slot), init=False, ghost=True,
              doc="appended while Retired(pid, e) held (durable epoch > batch epoch)")
g_dec = Var("g_dec", Outcome, index=(Inc, Txn), init=Outcome.NONE, ghost=True, doc="decided[γ]")
g_ci = Var("g_ci", Inc, index=(Tid,), init=0, ghost=True, doc="cur_γ at the coordinator: incarnation")
g_pk = Var("g_pk", TxnCount, index=(Tid,), init=0, ghost=True, doc="γ transaction of a pending TV2 implicit add")
g_ck = Var("g_ck", TxnCount, index=(Tid,), init=0, ghost=True, doc="cur_γ: transaction (0: none)")
g_ack = Var("g_ack", BOOL, index=(Inc, Part, Txn, Bat), init=False, ghost=True, doc="batch acknowledged")
g_ackc = Var("g_ackc", BOOL, index=(Inc, Txn), init=False, ghost=True, doc="EndTxn(COMMIT) answered NONE")
g_torn = Var("g_torn", BOOL, init=False, ghost=True, doc="some γ decided both ways")
g_f2 = Var("g_f2", BOOL, init=False, ghost=True, doc="a retired EndTxn changed the coordinator state")
g_cereg = Var("g_cereg", BOOL, init=False, ghost=True, doc="a marker with a lower coordinator epoch was appended")
g_lso_dec = Var("g_lso_dec", BOOL, init=False, ghost=True, doc="an LSO update lowered the LSO (ORD-3)")
g_vislost = Var("g_vislost", BOOL, init=False, ghost=True, doc="a visible record was later aborted (DUR-2)")
w_fence = Var("w_fence", BOOL, init=False, ghost=True, doc="witness: an Ongoing transaction was fenced")
w_redrive = Var("w_redrive", BOOL, init=False, ghost=True, doc="witness: a failover re-drove Prepare*")
w_vrej = Var("w_vrej", BOOL, init=False, ghost=True, doc="witness: verification / implicit add rejected a batch")
w_dup = Var("w_dup", BOOL, init=False, ghost=True, doc="witness: a duplicate batch was absorbed (P5)")
w_gen = Var("w_gen", BOOL, init=False, ghost=True, doc="witness: a TxnOffsetCommit was fenced by generation (O2)")
log_src = Var("log_src", InRecord, index=(Part, Slot), init=0, ghost=True,
              doc="src(o): the input offset an output record was derived from")
g_illegal = Var("g_illegal", BOOL, init=False, ghost=True,
                doc="the coordinator hit one of Kafka's IllegalStateException assertions (STRUCT-1)")
g_bound = Var("g_bound", BOOL, init=False, ghost=True,
              doc="a request needed more than the model's bounds: a log slot or an epoch beyond maxe (BOUNDS)")
n_late_k = Var("n_late_k", TxnCount, index=(Inc,), init=0, ghost=True,
               doc="γ: the transaction the client was in when it sent the late copy (0: none)")

VARS = (pc_st, pc_e, pc_k, pc_seq, pc_add, pc_b, pc_rq, pc_rqp, pc_bump, b_e, b_s, cs_pos, b_src, pc_oc, gc_off, gc_pend,
        n_creq, n_creq_rq, n_creq_e, n_creq_p, n_late, n_late_rq, n_late_e, n_late_p, n_late_ce, n_cresp, n_cresp_e, n_lost, n_prod,
        n_pres, n_oab, n_mk, n_mk_res, n_mk_e, n_mkd, n_mkd_res, n_mkd_e, n_mkd_c,
        tc_st, tc_e, tc_last, tc_parts, tc_pend, tc_pend_e, tc_pend_last, tc_pend_by, tc_pend_cli, tc_pend_p,
        tc_mk, tc_ff, tc_ce, tl_st, tl_e, tl_parts,
        log_kind, log_pid, pl_end, pl_lso, pl_e, pl_seq, pl_ce, pl_open, pl_first, pl_vb, pl_vst,
        env_to, env_dl, env_dup, env_loss, env_exp, env_tlf, env_mkd, env_late,
        log_inc, log_k, log_e, log_seq, log_out, log_ret, g_dec, g_ci, g_ck, g_pk, g_ack, g_ackc,
        g_torn, g_f2, g_cereg, g_lso_dec, g_vislost, w_fence, w_redrive, w_vrej, w_dup, w_gen, log_src,
        g_illegal, g_bound, n_late_k, log_ce, env_lf)

# ---- replication lag (config `replication_lag`, kafka-protocol §3.13); after every other var, so that with the
# switch off (cells constant) no other cell moves in the layout ------------------------------------------------
pl_hw = Var("pl_hw", Offset, index=(Part,), init=0,
            doc="high watermark of a data partition when `replication_lag` is 1 (0 otherwise, where HW = log end): "
                "the offset every ISR follower has fetched up to")
pl_le = Var("pl_le", LeaderEpoch, index=(Part,), init=0,
            doc="leader epoch of a data partition when `replication_lag` is 1 (FLT-05 bumps it): a request waiting for "
                "the HW at an older leader is answered NOT_LEADER_OR_FOLLOWER")
n_pw = Var("n_pw", Offset, index=(Inc, Part, Txn, Bat), init=0,
           doc="DelayedProduce: batch (i, p, k) is in p's log above the HW and its NONE answer waits until the HW "
               "reaches this offset (the batch's end; 0: nothing waits, acks=all)")
n_pwe = Var("n_pwe", LeaderEpoch, index=(Inc, Part, Txn, Bat), init=0, doc="leader epoch of the leader n_pw waits at")
n_mw = Var("n_mw", Offset, index=(Tid, Part, CEpoch), init=0,
           doc="the WriteTxnMarkers(pid, p) of the coordinator of epoch c is in p's log above the HW; its answer waits "
               "until the HW reaches this offset (the marker's end; 0: nothing waits)")
n_mwe = Var("n_mwe", LeaderEpoch, index=(Tid, Part, CEpoch), init=0, doc="leader epoch of the leader n_mw waits at")

VARS = VARS + (pl_hw, pl_le, n_pw, n_pwe, n_mw, n_mwe)

# ---- producer id rotation (config `pids`, kafka-protocol §3.14): each flag says a producer id is the tid's second
# one (`domains.pid_of`); all False, so constant, with pids=1 -----------------------------------------------------
# the cache and the log agree on both (a rotation is applied with the record that carries it, and a failover
# reloads them): one var each
tc_rot = Var("tc_rot", BOOL, index=(Tid,), init=False, doc="producerId (cached and logged): the tid's second pid")
tc_next = Var("tc_next", BOOL, index=(Tid,), init=False,
              doc="nextProducerId set (cached and logged, KAFKA-20310): the pid rotates when CompleteX is written")
tc_pend_rot = Var("tc_pend_rot", BOOL, index=(Tid,), init=False,
                  doc="the pending transition rotates the pid (Empty: at once; Prepare*: as its nextProducerId)")
pc_rot = Var("pc_rot", BOOL, index=(Inc,), init=False, doc="the client holds the tid's second pid")
b_rot = Var("b_rot", BOOL, index=(IncSlot, Part, TxnSlot), init=False,
            doc="producer id of transaction k's batches to p: the second")
n_creq_rot = Var("n_creq_rot", BOOL, index=(Inc,), init=False, doc="producer id the request carries: the second")
n_late_rot = Var("n_late_rot", BOOL, index=(Inc,), init=False, doc="producer id the late copy carries: the second")
n_cresp_rot = Var("n_cresp_rot", BOOL, index=(Inc,), init=False, doc="producer id the response carries: the second")
n_mk_rot = Var("n_mk_rot", BOOL, index=(Tid, Part, CEpoch), init=False, doc="marker producer id: the second")
n_mkd_rot = Var("n_mkd_rot", BOOL, index=(Tid, Part), init=False, doc="the stale copy's producer id: the second")

VARS = VARS + (tc_rot, tc_next, tc_pend_rot, pc_rot, b_rot, n_creq_rot, n_late_rot, n_cresp_rot,
               n_mk_rot, n_mkd_rot)

# ---- several batches per partition (config `batches`, kafka-protocol §2.3); 1 (constant) with batches=1 ----------
log_b = Var("log_b", Bat, index=(Part, Slot), init=1, ghost=True, doc="γ: which batch of its transaction at p the data "
            "batch is")
pc_ack = Var("pc_ack", LastSeq, index=(Inc, Part), init=-1,
             doc="lastAckedSequence of p under the client's (pid, epoch) (-1: none; kept only when `batches` >= 2, where "
                 "it decides whether an OUT_OF_ORDER_SEQUENCE_NUMBER is retried)")
pc_rs = Var("pc_rs", BOOL, index=(Inc, Part, BatSlot), init=False,
            doc="batch b to p was re-sequenced while in flight (an earlier batch failed): its next send carries its "
                "sequence minus one (ProducerBatch.sequenceHasBeenReset)")

pl_low = Var("pl_low", LastSeq, index=(Part, Pid), init=-1,
             doc="VerificationStateEntry.lowestSequence of the pid at p (-1: no entry; kept only when `batches` >= 2): "
                 "a batch with a higher sequence is refused while the entry lives")
pl_low_e = Var("pl_low_e", Epoch, index=(Part, Pid), init=-1, doc="VerificationStateEntry.epoch of the pid at p")

VARS = VARS + (log_b, pc_ack, pc_rs, pl_low, pl_low_e)


def hw(p):
    """HW(p): pl_hw with `replication_lag`, else the log end (appends are replicated in the same step)."""
    return If(lagged(p), pl_hw[p], pl_end[p])


def call_offset(inc, txn):
    """The offset the current sendOffsetsToTransaction call of transaction (inc, txn) commits (kafka-protocol
    §3.4 O6): the input record's next offset; with `offset_commits` = n, call j = pc_oc of n commits
    b_src + 1 - (n - j). A TxnOffsetCommit in flight is always the current call's: the client makes the next
    call only once it is answered, and a copy it abandons carries its offset in n_oab."""
    return If(MULTI, b_src[inc][txn] + 1 - (Config("offset_commits") - pc_oc[inc]), b_src[inc][txn] + 1)
