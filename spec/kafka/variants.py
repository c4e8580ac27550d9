"""The §6 catalogue as variants. Each names what changed, the historical reference, the interleaving
the checker finds, and the properties it breaks. `settings` are config overrides of `tiny`; where
the variant needs kip98, `delays` is set to 0 so the baseline's own B1 cannot be what is found
(tests/test_kafka_variants.py checks the baseline passes those properties under the same settings).
"""
from txncheck.spec.expr import Config, ForAll, If, Max, Not, Or
from txncheck.spec.model import AddRow, DropConjunct, DropRow, ReplaceGuard, ReplaceUpdate, Row, SetParam, Variant

from .handlers import END_TARGET, IS_COMMIT, PREPARE, cur, e_req, no_pend, prepare, req
from .domains import CTP, OP, BatchSt, CResp, Part, PcState, PResp, Result, Rq, TxnState as S, TV2, in_use, tid_used, writes_to
from .params import c, i, k, p, T, t
from .leader import leader_change
from .compaction import ROW as FLT06
from .cepoch_replay import EDITS as B2_EDITS
from .partition import PB, at_op, marker_append, marker_rejected
from .coordinator import BY_ID as COORDINATOR_BY_ID
from .producer import BY_ID as PRODUCER_BY_ID, all_acked
from .state import (b_e, tc_pend_rot, tc_rot, b_src, call_offset, g_bound, gc_off, gc_pend, n_prod, pc_b, pc_k,
                    pc_st, pl_ce, pl_e, tc_e, g_lso_dec, pl_end, pl_lso, pl_open, tc_ce, tc_parts, tc_st)
from .txnlog import markers

KIP98_NO_B1 = (("protocol", "kip98"), ("delays", 0))

_lso_ahead = If(pl_open[p][T], pl_lso[p], pl_end[p] + 1)
_lso_hw_data = pl_end[p] + 1

_D2_ROW = Row("TC-32", "coordinator", "EndTxn v5", params=(i, c),
              guard=(TV2, *req(Rq.COMMIT, Rq.ABORT), no_pend, tc_st[T] == S.Ongoing, e_req == cur, tc_ce[T] == c),
              updates=(*prepare(END_TARGET, cur + 1, cur),
                       *[u for u in markers(T, c, If(IS_COMMIT, Result.COMMIT, Result.ABORT), cur + 1, lambda q: tc_parts[T][q], tc_rot[T])
                         if u.target.var.name != "tc_mk"]),
              ref="variant D2: markers sent when the EndTxn is received, before PrepareX is durable")

_PC06 = PRODUCER_BY_ID["PC-06"]
_D3_ROW = Row("PC-40", "producer", "consumer.commitSync(offsets)", params=(i,),
              guard=(CTP, pc_st[i] == PcState.IN_TRANSACTION, pc_b[i][OP][1] == BatchSt.NONE,
                     ForAll(Part, lambda q: Or(Not(in_use(q)), all_acked(q)))),
              updates=(gc_off.set(b_src[i][pc_k[i]] + 1), pc_b[i][OP][1].set(BatchSt.ACKED)),
              ref="variant D3: input offsets committed by a plain OffsetCommit before commitTransaction")
# the third-party variant B15 answers AddPartitionsToTxn NONE while the previous transaction is Prepare*
_B15_RESP = If(tc_st[T].is_in(*PREPARE), CResp.OK, CResp.RETRY)
# KIP-664: an operator aborts an open span found with DescribeProducers, at the epoch and coordinator epoch
# the leader reports; the coordinator is not told. Kafka's tooling documents it for hanging transactions
# only; the variant lets it hit a span the coordinator still tracks (no TRACK-1 guard).
_ADMIN = (tid_used(t), writes_to(p), pl_open[p][t], Not(marker_rejected(pl_e[p][t])))
_B11_ROWS = (
    Row("AD-01", "partition", "admin WriteTxnMarkers(ABORT)", params=(t, p),
        guard=(*_ADMIN, pl_end[p] < Config("slots")),
        updates=marker_append(False, pl_e[p][t], pl_ce[p][t]), tags=("admin",),
        ref="variant B11: Admin.abortTransaction (KIP-664) -> WriteTxnMarkers(ABORT, producerEpoch and "
            "coordinatorEpoch from DescribeProducers); W2/W3 apply as to the coordinator's markers"),
    Row("AD-02", "partition", "admin WriteTxnMarkers(ABORT)", params=(t, p),
        guard=(*_ADMIN, pl_end[p] >= Config("slots")), updates=(g_bound.set(True),), tags=("admin",),
        ref="model bound (config slots): AD-01 with no free log slot; BOUNDS flags a config that gets here"),
)
# a tid whose epoch is exhausted within the script (maxe 3), so that its producer id rotates (§3.14)
ROTATION_SETTINGS = (("pids", 2), ("maxe", 3), ("restart_txns", 1))
# API misuse M1: the application commits the offset of the record it processed, not the next one to consume
_M1_PENDING = If(at_op, call_offset(i, k) - 1, gc_pend[PB])
_M1_ABANDONED = If(n_prod[i][OP][pc_k[i]][1] == 1, call_offset(i, pc_k[i]) - 1, -1)
B7_SETTINGS = (("ctp", 1), ("tids", 2), ("zombies", 1), ("txns", 1), ("restart_txns", 1), ("delays", 0),
               ("timeouts", 0), ("failovers", 0))

VARIANTS = (
    Variant("B1-late-produce",
            "The baseline under protocol (a) KIP-98: no partition verification, consecutive transactions share "
            "(pid, e). A Produce delayed past the client's delivery timeout lands after the abort marker "
            "(a: untracked span, hanging transaction) or inside the next transaction's span (b: committed "
            "with it). With the Java client the abort after the failed batch bumps the epoch, which does not "
            "help under (a): the late batch is still in epoch at p, and when it joins the next span its epoch "
            "is retired, so FENCE-1 breaks too (spec/FINDINGS.md F1).",
            breaks=("TRACK-1", "LIVE-1", "ATOM-2", "FENCE-1"), edits=(SetParam("protocol", "kip98"),),
            settings=(("protocol", "kip98"),),
            ref="KAFKA-14402; KIP-890 motivation (a), (b)",
            trigger="send batch; delivery timeout (PC-12); abort (same epoch); ABORT marker at p; the delayed "
                    "batch arrives with a valid sequence and opens a span the coordinator does not track"),
    Variant("B1b-late-produce-verify",
            "Protocol (b): verification rejects the late batch when its transaction has ended, but not once the "
            "next transaction (same (pid, e)) has registered p: the batch joins that span and commits with it. "
            "The variant sets client=reference, a client that aborts without bumping the epoch: the Java client "
            "(2.5+) bumps it after the failed batch, so its next transaction runs at e+1 and verification fences "
            "the late batch (spec/FINDINGS.md F1).",
            breaks=("ATOM-2",), edits=(SetParam("protocol", "verify"), SetParam("client", "reference")),
            settings=(("protocol", "verify"), ("client", "reference")), ref="KIP-890 part 1 limitation (b)",
            trigger="as B1, but the delayed batch arrives after transaction 2 added p; verification passes"),
    Variant("B1d-produce-before-add",
            "A buggy client sends a batch to p before AddPartitionsToTxn(p) succeeded (obligation 1 dropped).",
            breaks=("TRACK-1", "LIVE-1"), edits=(DropConjunct("PC-06", 3),), settings=KIP98_NO_B1,
            ref="KIP-890 motivation (d)",
            trigger="beginTransaction; Produce to p without AddPartitionsToTxn; appended (no verification in "
                    "(a)); the coordinator never lists p, so no marker ever closes the span"),
    Variant("B3-produce-after-marker",
            "The client sends EndTxn(ABORT) while a Produce is still in flight (it does not wait for the "
            "batch); the marker reaches p first and the batch then opens an untracked span.",
            breaks=("TRACK-1", "LIVE-1"), edits=(DropConjunct("PC-15", 2),),
            settings=KIP98_NO_B1 + (("app_aborts", 1),), ref="KAFKA-12671",
            trigger="Produce in flight; abortTransaction; EndTxn; ABORT marker at p; Produce appended"),
    Variant("B4-no-bump-on-timeout",
            "The coordinator's timeout abort keeps the producer epoch (no fence). The stalled producer's later "
            "batches, in the same epoch, open spans the coordinator no longer tracks, or its re-registration "
            "starts a fresh transaction under the same γ, which then commits.",
            breaks=("TRACK-1", "LIVE-1", "ATOM-2", "DECIDE-1", "DUR-3"),
            edits=(ReplaceUpdate("TC-40", "tc_e", tc_e[t]), ReplaceUpdate("TC-40", "tc_pend_e", tc_e[t])),
            settings=KIP98_NO_B1, ref="KAFKA-6119, PR #4137",
            trigger="Ongoing; timeout abort keeps e; ABORT marker at p; the producer's batch with e is accepted"),
    Variant("B5-unknown-producer",
            "Producer state at p is lost (expiry X2, retention, DeleteRecords). A fenced zombie's batch then "
            "finds no epoch to compare (P9) and, without verification, opens an untracked span.",
            breaks=("TRACK-1", "LIVE-1", "FENCE-1"),
            edits=(SetParam("expiries", 1), SetParam("zombies", 1)),
            settings=KIP98_NO_B1 + (("expiries", 1), ("zombies", 1)),
            ref="KIP-360; KAFKA-7190, KAFKA-8805",
            trigger="zombie Ongoing with p; new incarnation fences (ABORT marker e+1 at p); p's producer "
                    "state expires; the zombie's batch with e is accepted"),
    Variant("B10-no-marker-cepoch-check",
            "Leaders skip the coordinator-epoch check W2: a deposed coordinator's delayed marker is appended "
            "after the new coordinator's re-driven one and the stored coordinator epoch goes back.",
            breaks=("CEPOCH-1",), edits=(DropConjunct("PL-22", 2),),
            ref="ProducerAppendInfo.checkCoordinatorEpoch (TRANSACTION_COORDINATOR_FENCED)",
            trigger="PrepareX durable, markers in flight (ce 0); failover; re-drive with ce 1 appended; the old "
                    "marker with ce 0 is appended"),
    Variant("B12-lso-ahead",
            "The LSO is computed as next(last appended offset) when a span opens, ignoring that span: an open "
            "(later aborted) span becomes readable under read_committed.",
            breaks=("ATOM-1", "ORD-3"),
            edits=(ReplaceUpdate("PL-05", "pl_lso", _lso_ahead), ReplaceUpdate("PL-06", "pl_lso", _lso_ahead),
                   ReplaceUpdate("PL-05", "g_lso_dec", Or(g_lso_dec, _lso_ahead < pl_lso[p])),
                   ReplaceUpdate("PL-06", "g_lso_dec", Or(g_lso_dec, _lso_ahead < pl_lso[p]))),
            ref="Jepsen Redpanda 21.10.1 (#3036, #3039, #3003); redpanda #5090, PR #10671",
            trigger="first transactional batch appended; LSO moves past it; read_committed returns it open"),
    Variant("B13-restart-drops-open-span",
            "A replica rebuilds its producer state without the pids whose transaction is open (the producer-state "
            "checkpoint missed them). Once it leads, the open span no longer holds the LSO back, which Kafka "
            "computes from producer state: read_committed consumers read records of an undecided transaction.",
            breaks=("ATOM-1",),
            edits=(DropRow("FLT-05"), AddRow("faults", leader_change(keep_open=False)), SetParam("leader_failovers", 1)),
            settings=(("leader_failovers", 1),),
            ref="Redpanda PR #30003 (#8566, #8624); kafka-protocol §6 B13, §3.13",
            trigger="a transactional batch appended at p (span open); the leader changes and the rebuilt producer "
                    "state lacks the pid; the LSO moves to the log end, past the open span"),
    Variant("B2-cepoch-check-on-replay",
            "Followers refuse, as Kafka did before KAFKA-9144's fix, a marker whose coordinator epoch is below the "
            "pid's last one in the log. Producer-state expiry can drop the pid's entry right after a marker, so the "
            "leader appends a deposed coordinator's late marker; every follower stops fetching there, the HW never "
            "passes it, and what is appended after it is never acknowledged.",
            breaks=("LIVE-2", "LIVE-3", "LIVE-4"),
            edits=B2_EDITS,
            settings=(("replication_lag", 1), ("leader_failovers", 1), ("expiries", 1), ("delays", 0)),
            ref="KAFKA-9144 (apache/kafka#7687): expiry from data timestamps only, and W2 enforced on replication and "
                "recovery; kafka-protocol §6 B2, §3.12 X2, §3.13",
            trigger="a coordinator failover leaves the deposed coordinator's marker in flight; the new coordinator's "
                    "marker is appended at p, the pid's entry expires, the late marker is appended with the lower "
                    "coordinator epoch; the followers stop there"),
    Variant("B14-compaction-drops-markers",
            "Kafka as it is, with a behaviour the baseline leaves out: log compaction with a replica that was out of "
            "the ISR. The leader's cleaner removes an aborted transaction's records and then its ABORT marker; a "
            "replica that had fetched the records but not the marker comes back without it and is elected. Its "
            "producer state has the transaction open: the LSO goes back and stays there, and the pid's next marker "
            "at the partition decides the aborted records.",
            breaks=("ORD-3", "DUR-2", "ORD-1", "TRACK-1", "LIVE-1", "ATOM-2", "FENCE-1"),
            edits=(AddRow("faults", FLT06), SetParam("leader_failovers", 1)),
            settings=(("leader_failovers", 1),),
            ref="Redpanda's report of the Kafka log-compaction bug (reproduced on Kafka 3.9 to 4.2, open in Kafka); "
                "kafka-protocol §6 B14; Cleaner, CleanedTransactionMetadata.onControlBatchRead, "
                "UnifiedLog.appendAsFollower",
            trigger="a transaction at p aborts (its ABORT marker below the LSO); the leader changes to a replica that "
                    "had its records but missed the compacted marker: the span is open again on the new leader"),
    Variant("B7-tid-per-worker",
            "Two workers with their own transactional ids share the input partition of a consume-transform-"
            "produce loop, and TxnOffsetCommit carries no group metadata nor does OffsetFetch wait for pending "
            "offsets (pre-KIP-447 clients): no epoch relates the two tids, so nothing fences the paused worker.",
            breaks=("EOS-1",), edits=(SetParam("kip447", 0),), settings=B7_SETTINGS,
            ref="KAFKA-8587, KIP-447",
            trigger="worker A (tid 0) polls input 0 and pauses; a rebalance assigns the input to worker B (tid 1), "
                    "which reads committed offset 0, processes input 0 and commits; A resumes and commits its "
                    "output for input 0 with offset 1: input 0 has two committed outputs"),
    Variant("D3-offsets-outside-txn",
            "The application commits its input offsets with a plain OffsetCommit (commitSync) before "
            "commitTransaction instead of sendOffsetsToTransaction: the offset is durable whatever the "
            "transaction's fate.",
            breaks=("EOS-1",), edits=(ReplaceGuard("PC-06", (in_use(p),) + _PC06.guard[1:]), AddRow("producer", _D3_ROW)),
            settings=(("ctp", 1), ("txns", 1), ("restart_txns", 1), ("delays", 0)),
            ref="KIP-98 / KIP-447 design: offsets share the transaction's markers",
            trigger="poll input 0; output sent and acknowledged; commitSync(offset 1); crash before "
                    "commitTransaction; the new incarnation fences and aborts the output and starts from offset 1: "
                    "input 0 has no output"),
    Variant("B15-empty-txn",
            "AddPartitionsToTxn answered NONE while the previous transaction is still PrepareCommit/PrepareAbort "
            "(instead of CONCURRENT_TRANSACTIONS, A3): the client writes to p for a transaction the coordinator "
            "never registered p for.",
            breaks=("TRACK-1", "ATOM-2"), edits=(ReplaceUpdate("TC-11", "n_cresp", _B15_RESP),), settings=KIP98_NO_B1,
            ref="kafka-protocol §6 B15 (4); Kafka-compatible reimplementations, ydb-platform/ydb PRs #51053, #52731",
            trigger="commit transaction 1 (PrepareCommit durable, markers pending); transaction 2 adds p: answered "
                    "NONE; its batch is appended into p before or after transaction 1's marker"),
    Variant("B9-bump-on-failed-fence",
            "A fence's PrepareAbort append fails (NOT_ENOUGH_REPLICAS) and the coordinator does not remember it "
            "(no hasFailedEpochFence): the producer's retried InitProducerId, or the next timeout, fences again "
            "and bumps the cached epoch a second time, though neither bumped epoch was ever written or returned.",
            breaks=("EPOCH-1",),
            edits=tuple(ReplaceUpdate(r, v, tc_e[tid] + 1) for r, tid in (("TC-07", T), ("TC-40", t), ("TC-41", t))
                        for v in ("tc_e", "tc_pend_e")),
            settings=(("tl_failures", 2),), ref="KAFKA-9666, PR #8239",
            trigger="transaction Ongoing at epoch e; the timeout fences (e+1, PrepareAbort pending); the append "
                    "fails; the timer fires again for the abandoned transaction and fences with e+2 (an "
                    "InitProducerId retry does the same)"),
    Variant("B11-admin-abort",
            "An operator aborts a transaction with the KIP-664 admin API (DescribeProducers, then "
            "WriteTxnMarkers(ABORT) at p) while the coordinator still tracks it as Ongoing. The coordinator is "
            "not told: the producer commits, and p's records, already aborted, are not part of the commit.",
            breaks=("ATOM-2", "DUR-1", "DUR-3"), edits=tuple(AddRow("partition", r) for r in _B11_ROWS),
            settings=(("protocol", "verify"), ("delays", 0)),
            ref="KAFKA-10442 (KIP-664); kafka-protocol §6 B11",
            trigger="batch appended at p (span open, p registered); EndTxn(COMMIT), PrepareCommit durable; admin "
                    "ABORT marker at p closes the span; the client's commit succeeds (DUR-1), the COMMIT marker "
                    "finds no open span and the acknowledged record stays aborted (DUR-3). Shortest: the admin "
                    "aborts an undecided span (ATOM-2, 14 steps)"),
    Variant("D1-no-epoch-bump-on-init",
            "InitProducerId keeps the epoch (I7 without +1): a paused old incarnation and its replacement share "
            "(pid, e).",
            breaks=("FENCE-3", "ATOM-2"), edits=(ReplaceUpdate("TC-03", "tc_pend_e", Max(cur, 0)),),
            settings=(("zombies", 1),), ref="KIP-98 design: bump on every InitProducerId",
            trigger="incarnation 1 READY with e; restart leaving it running; incarnation 2 InitProducerId returns e"),
    Variant("D2-markers-before-prepare",
            "EndTxn (TV2) sends the markers when the request arrives, before PrepareX is durable. A failover "
            "loses the pending Prepare; the reloaded Ongoing transaction times out and aborts, but p already "
            "holds a COMMIT marker.",
            breaks=("ATOM-2", "DUR-1"), edits=(DropRow("TC-32"), AddRow("coordinator", _D2_ROW)),
            ref="KIP-98 design: durable PrepareX, then markers, then CompleteX",
            trigger="EndTxn(COMMIT); COMMIT marker at p; failover (Prepare not durable); timeout abort"),
    Variant("D4-no-sequence-check",
            "The leader skips duplicate detection and sequence checks (P5, P7, P8): a batch resent by the "
            "client while the first copy is in flight is appended twice.",
            breaks=("DUP-1", "ORD-4"), edits=(DropRow("PL-01"), DropConjunct("PL-05", 2)),
            settings=(("duplicates", 1),), ref="KIP-98 idempotent producer design",
            trigger="Produce; client retry (duplicate); both copies appended"),
    Variant("D7-reordered-in-flight",
            "The leader skips the sequence checks (P5, P7, P8) while the client has two batches to p in flight: the "
            "second reaches the leader first and is appended, then the first: the partition holds the transaction's "
            "records out of the order they were sent.",
            breaks=("ORD-5",), edits=(DropRow("PL-01"), DropConjunct("PL-05", 2)),
            settings=(("protocol", "kip98"), ("batches", 2), ("maxseq", 4), ("duplicates", 0), ("delays", 0)),
            ref="KIP-98 idempotent producer design (max.in.flight.requests.per.connection <= 5 keeps order)",
            trigger="batches 1 and 2 in flight to p; batch 2 appended; batch 1 appended after it"),
    Variant("D5-lso-is-hw",
            "read_committed is bounded by the HW instead of the LSO: an open span's records are returned "
            "before its marker.",
            breaks=("ATOM-1", "ORD-3"),
            edits=(ReplaceUpdate("PL-05", "pl_lso", _lso_hw_data), ReplaceUpdate("PL-06", "pl_lso", _lso_hw_data),
                   ReplaceUpdate("PL-22", "pl_lso", pl_end[p] + 1)),
            ref="KIP-98 design: LSO = min(first offset of open or unreplicated spans, HW)",
            trigger="first transactional batch appended; read_committed returns it while open"),
    Variant("R1-verify-ignores-pid",
            "TV2's implicit add checks the batch's epoch but not its producer id (§3.14): after the tid's pid rotated, "
            "a late batch of the old pid whose epoch happens to equal the new pid's is added to the new pid's "
            "transaction and appended under the old pid, whose span no marker will ever close.",
            breaks=("TRACK-1", "LIVE-1"),
            edits=(DropConjunct("TC-66", 2), DropConjunct("TC-67", 2),
                   ReplaceGuard("TC-68", (*COORDINATOR_BY_ID["TC-68"].guard, b_e[i][p][k] != tc_e[T]))),
            settings=ROTATION_SETTINGS,
            ref="KIP-360 / KIP-890 producer id rotation; TransactionCoordinator.handleAddPartitionsToTransaction "
                "(INVALID_PRODUCER_ID_MAPPING before the epoch check)",
            trigger="a batch of (pid, 0) is delayed past its delivery timeout; a restart's InitProducerId finds the "
                    "epoch exhausted and rotates to (pid', 0); the delayed batch (pid, 0) is verified against "
                    "(pid', 0), added to the new pid's transaction and appended under pid (22 steps)"),
    Variant("R2-markers-to-next-pid",
            "The coordinator writes the markers of the transaction that exhausted the epoch with the next producer "
            "id instead of the one that wrote it (§3.14): the transaction's span at p stays open for good, and the "
            "marker for the new pid closes nothing.",
            breaks=("TRACK-1", "LIVE-1"),
            edits=(ReplaceUpdate("TL-04", "n_mk_rot", Or(tc_rot[t], tc_pend_rot[t])),),
            settings=ROTATION_SETTINGS,
            ref="KIP-890 part 2: the Prepare* record and its markers carry the old pid at the last epoch, "
                "nextProducerId only the new pid (TransactionMetadata.prepareAbortOrCommit, "
                "TransactionMarkerChannelManager.addTxnMarkersToSend)",
            trigger="EndTxn at the exhausted epoch; PrepareX durable with nextProducerId; the marker goes out under "
                    "the new pid; p keeps the old pid's span open"),
    Variant("D6-ack-before-hw",
            "With replication lag, the leader answers a Produce as soon as the batch is in its own log (as acks=1 "
            "would), not once the HW covers it: a leader change to a follower that had not fetched the batch "
            "truncates an acknowledged write.",
            breaks=("DUR-4", "DUR-3"),
            edits=(*[ReplaceUpdate(r, "n_pres", PResp.OK) for r in ("PL-05", "PL-06")],
                   *[ReplaceUpdate(r, v) for r in ("PL-05", "PL-06") for v in ("n_pw", "n_pwe")]),
            settings=(("replication_lag", 1), ("leader_failovers", 1)),
            ref="KIP-98 design (transactional producers need acks=all); kafka-protocol §3.13 LC1; DelayedProduce, "
                "Partition.checkEnoughReplicasReachOffset",
            trigger="transactional batch appended above the HW and answered NONE; the leader changes to a follower "
                    "whose log ends at the HW: the acknowledged batch is truncated"),
    Variant("M1-offset-not-plus-one",
            "API misuse: the consume-transform-produce loop passes sendOffsetsToTransaction the offset of the record "
            "it processed instead of the next one to consume (its Javadoc: the committed offset should be "
            "lastProcessedMessageOffset + 1). A consumer that starts from the committed offset reads that record "
            "again.",
            breaks=("EOS-1",),
            edits=(ReplaceUpdate("PL-05", "gc_pend", _M1_PENDING), ReplaceUpdate("PL-06", "gc_pend", _M1_PENDING),
                   ReplaceUpdate("PC-24", "n_oab", _M1_ABANDONED)),
            settings=(("ctp", 1), ("delays", 0), ("incs", 1)),
            ref="KafkaProducer.sendOffsetsToTransaction Javadoc (lastProcessedMessageOffset + 1); "
                "kafka-protocol §6 M1, §1.6",
            trigger="poll input 0; its output commits together with offset 0: the output is visible while the group "
                    "says input 0 is still to be processed, so a consumer that starts from the committed offset "
                    "processes it again"),
    Variant("M2-no-rewind-after-abort",
            "API misuse: after abortTransaction the consume-transform-produce loop keeps its consumer's position "
            "instead of seeking back to the committed offsets (Kafka's exactly-once example calls "
            "resetToLastCommittedPositions after every abort). The aborted transaction's input record is never "
            "processed again.",
            breaks=("EOS-1",),
            edits=(ReplaceUpdate("PC-16", "cs_pos"), ReplaceUpdate("PC-17", "cs_pos")),
            settings=(("ctp", 1), ("app_aborts", 1), ("delays", 0), ("incs", 1)),
            ref="Kafka examples ExactlyOnceMessageProcessor (abortTransaction, then resetToLastCommittedPositions); "
                "kafka-protocol §6 M2, §1.6",
            trigger="poll input 0; the application aborts the transaction; the loop polls input 1 from its own "
                    "position and commits it with offset 2: input 0 is below the committed offset with no output"),
)
