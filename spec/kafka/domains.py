"""Finite domains of the Kafka model and the configuration-derived helpers shared by every table.

Sizes that rows must update "for every element" (partitions, log slots) are fixed maxima
(`MAXP`, `MAXS`); the configuration constants `parts` and `slots` say how many are in use, and the
unused cells keep their initial value, so they add no states. Other index domains (incarnations,
transactional ids, transactions, coordinator epochs) are sized by configuration constants.
"""
from txncheck.spec.domains import BOOL, ConstPlus, EnumDomain, IdSet, IntRange
from txncheck.spec.expr import And, Config, If, MaxOver, Min, Not, Or

MAXP = 2  # data partitions the tables are written for (config `parts` <= MAXP)
MAXT = 2  # transactional ids the tables are written for (config `tids` <= MAXT)
MAXS = 10  # log slots per partition the tables are written for (config `slots` <= MAXS)
MAXI = 3  # incarnations the tables are written for where a row updates every batch (config `incs` <= MAXI)
MAXK = 3  # transactions per incarnation, likewise (config `txns` <= MAXK)
MAXB = 2  # batches per partition per transaction, likewise (config `batches` <= MAXB)

Protocol = EnumDomain("Protocol", ("kip98", "verify", "tv2"))
# Client profiles (config `client`, docs/kafka-protocol.md §2.2 "Client profiles"): which client behaviours
# the producer rows follow.
Client = EnumDomain("Client", ("java", "reference"))  # the order of config `client`'s choices

# Kafka's TransactionState, ids as in TransactionMetadata.scala / TransactionState.java.
TxnState = EnumDomain("TxnState", ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                                   "CompleteAbort", "Dead", "PrepareEpochFence"))
# TransactionManager.State, plus IDLE (incarnation not started yet) and CRASHED (process gone).
PcState = EnumDomain("PcState", ("IDLE", "UNINITIALIZED", "INITIALIZING", "READY", "IN_TRANSACTION",
                                 "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION", "ABORTABLE_ERROR",
                                 "FATAL_ERROR", "CRASHED"))
# The coordinator request a client has outstanding (one at a time, §1.1 obligation 3).
Rq = EnumDomain("Rq", ("NONE", "INIT", "INITBUMP", "ADD", "COMMIT", "ABORT"))
# Coordinator responses as the client classifies them (§2.2 error classes).
CResp = EnumDomain("CResp", ("NONE", "OK", "RETRY", "FENCED", "ABORTABLE", "FATAL"))
# Produce responses: OK, RETRY (NOT_ENOUGH_REPLICAS...), ABORTABLE (INVALID_PRODUCER_EPOCH,
# TRANSACTION_ABORTABLE, INVALID_TXN_STATE), OOS (OUT_OF_ORDER_SEQUENCE_NUMBER: abortable, bump),
# FENCED (INVALID_PRODUCER_EPOCH for a TxnOffsetCommit: fatal).
PResp = EnumDomain("PResp", ("NONE", "OK", "RETRY", "ABORTABLE", "OOS", "FENCED"))
BatchSt = EnumDomain("BatchSt", ("NONE", "SENT", "ACKED", "FAILED"))
Kind = EnumDomain("Kind", ("EMPTY", "DATA", "COMMIT", "ABORT"))
Outcome = EnumDomain("Outcome", ("NONE", "COMMIT", "ABORT"))
Result = EnumDomain("Result", ("COMMIT", "ABORT"))
# Target of the coordinator's single in-flight transition (pendingState); CompleteX is appended
# in one step (TL-04), so it never waits here.
Pend = EnumDomain("Pend", ("NONE", "Empty", "Ongoing", "PrepareCommit", "PrepareAbort"))
# Who waits for a pending transition's callback: nobody (a fence or timeout), the client, a partition
# leader (TV2 implicit add), or a closed connection (a late copy of a request the client abandoned).
PendBy = EnumDomain("PendBy", ("INTERNAL", "CLIENT", "LEADER", "ABANDONED"))
# Where a Produce batch stands in a leader's verification (§3.11): not held, its verification request (v4
# VerifyOnly, or the TV2 implicit add) out at the coordinator, answered NONE, answered retriable (the coordinator
# moved, or this broker is no longer the leader), or its TV2 implicit add being logged.
Ver = EnumDomain("Ver", ("NONE", "PENDING", "OK", "RETRY", "ADDING"))

Inc = IdSet("Inc", size="incs", prefix="inc")          # producer incarnations (processes)
Tid = IdSet("Tid", size=MAXT, prefix="tid")            # transactional ids
# producer ids: the same indexes as Tid (a tid's first pid is its own index; with `pids` = 2 the rotated pid takes
# the index of the absent second tid, pid_of), labelled pid1, pid2 where a var holds or is indexed by a pid
Pid = IdSet("Tid", size=MAXT, prefix="pid")
Part = IdSet("Part", size=MAXP, prefix="p")            # data partitions
# A partition a var holds only some of the time (the partition of an add in flight); NO_PART otherwise, not p1,
# so that the data partitions stay alike (the symmetry over Part, §symmetry in docs/kafka-protocol.md)
PartOrNone = IdSet("Part", size=MAXP, prefix="p", none="none")
NO_PART = -1
Slot = IdSet("Slot", size=MAXS, prefix="o")            # log offsets
Txn = IntRange("Txn", 1, "txns")                       # transaction counter k of an incarnation
# the same, at their fixed maxima: the index domains of a per-batch var that a row updates for every batch of a pid
# (the cells beyond `incs` / `txns` keep their initial value, so they add no states)
IncSlot = IdSet("Inc", size=MAXI, prefix="inc", widest=True, used="incs")
TxnSlot = IntRange("Txn", 1, MAXK, used_hi="txns")
Bat = IntRange("Bat", 1, "batches")                    # batch b of a transaction at a data partition (§2.3)
BatSlot = IntRange("Bat", 1, MAXB, used_hi="batches")
TxnCount = IntRange("TxnCount", 0, "txns")
Epoch = IntRange("Epoch", -1, "maxe")
Seq = IntRange("Seq", 0, "maxseq")
LastSeq = IntRange("LastSeq", -1, "maxseq")
Offset = IntRange("Offset", 0, MAXS)
CEpoch = IntRange("CEpoch", 0, "failovers")
LeaderEpoch = IntRange("LeaderEpoch", 0, "leader_failovers")  # leader changes of a partition (FLT-05)
StoredCEpoch = IntRange("StoredCEpoch", -1, "failovers")
Copies = IntRange("Copies", 0, 2)
InOffset = IntRange("InOffset", 0, "inputs")            # an offset of the input partition (= inputs: its end)
InRecord = IntRange("InRecord", 0, ConstPlus("inputs", -1))  # the offset of an input record
Position = IntRange("Position", -1, "inputs")           # consumer position; -1: fetch the committed offset
PendingOffset = IntRange("PendingOffset", -1, "inputs")  # a pid's pending transactional offset; -1: none
OffsetCalls = IntRange("OffsetCalls", 0, "offset_commits")  # sendOffsetsToTransaction calls made in a transaction

__all__ = [n for n in dir() if not n.startswith("_")] + ["BOOL"]

TV2 = Config("protocol") == Protocol.tv2
VERIFY = Config("protocol") == Protocol.verify
KIP98 = Config("protocol") == Protocol.kip98
TV01 = Config("protocol") != Protocol.tv2
JAVA = Config("client") == Client.java
# The Java client (2.5+) sets epochBumpRequired on every failed batch of a transactional producer when it
# must bump from the client: KIP-360 coordinators (all three protocol versions) and not TV2, where EndTxn
# bumps (TransactionManager.needToTriggerEpochBumpFromClient; canBumpEpoch in 2.5-3.9).
JAVA_CLIENT_BUMP = And(JAVA, TV01)


def tid_of(i):
    """The transactional id an incarnation uses: every restart reuses tid 1, unless the config has
    one tid per worker (`tids` = 2, variant B7), where incarnation 2 is another worker's tid."""
    return Min(i, Config("tids") - 1)


def batch_used(j, kk, bb):
    """Batch cell (incarnation j, transaction kk, batch bb) of a per-batch var exists in this configuration (the
    vars are indexed up to MAXI, MAXK, MAXB)."""
    return And(j < Config("incs"), kk <= Config("txns"), bb <= Config("batches"))


# every (incarnation, transaction, batch) cell of a per-batch var, for a row that updates or reads them all
BATCH_CELLS = tuple((j, kk, bb) for j in range(MAXI) for kk in range(1, MAXK + 1) for bb in range(1, MAXB + 1))


# config `pids` (§3.14): 2 lets the tid's producer id rotate once, when its epoch is exhausted (the coordinator's
# nextProducerId); with `tids` = 1 the second pid takes the pid index a second tid would (pid indexes are Tid's)
ROTATION = Config("pids") == 2


def pid_of(tid, rotated):
    """The producer id (an index of the pid-indexed vars) that `tid` holds before (`rotated` False) or after its
    rotation: pid = tid before, tid + 1 after (config `pids` = 2 needs `tids` = 1, so that index is free)."""
    return If(rotated, tid + 1, tid)


def pid_used(u):
    """Producer id `u` exists in this configuration: one per tid, and the rotated one with `pids` = 2."""
    return u < Config("tids") + Config("pids") - 1


def exhausted(epoch):
    """TransactionMetadata.isEpochExhausted: the epoch is at least maxe - 1 (Short.MAX_VALUE - 1: a client never
    holds maxe, which only a Prepare record and its markers carry before the rotation)."""
    return epoch >= Config("maxe") - 1


def in_use(p):
    """Partition `p` exists in this configuration."""
    return p < Config("parts")


def tid_used(t):
    """Transactional id `t` exists in this configuration."""
    return t < Config("tids")


CTP = Config("ctp") == 1
OP = Config("parts")  # with `ctp`, the __consumer_offsets partition op(group) is the partition after the data ones


# config `offset_commits`: the loop calls sendOffsetsToTransaction more than once per transaction (§3.4 O6)
MULTI = Config("offset_commits") >= 2


# config `batches` >= 2 (§2.3): several batches per partition in flight; lastAckedSequence and the re-sequencing of
# later batches are kept only then
MULTI_BATCH = Config("batches") >= 2
# The client keeps its epoch after a failed batch (§2.2 client profiles): reference under TV0/1. The Java client under
# TV0/1 bumps it, and under TV2 EndTxn does, so their next transaction starts at a new epoch, sequence 0.
EPOCH_KEPT_AFTER_FAILURE = And(Not(JAVA), TV01)
# A failed batch gives its sequence back (§2.3) observably when a later batch of the transaction is in flight, or
# when the client keeps its epoch, so the next transaction reuses it.
SEQ_GIVEN_BACK = Or(MULTI_BATCH, EPOCH_KEPT_AFTER_FAILURE)
# The leader's VerificationStateEntry.lowestSequence (§2.3, §3.11) is observable when one epoch sends two sequences to
# a partition: several batches, or TV0/1, where an epoch spans transactions and a late copy of an earlier
# transaction's batch lowers it. Under TV2 with one batch every transaction has its own epoch and sequence 0.
LOWEST_SEQUENCE = Or(MULTI_BATCH, TV01)


# config `replication_lag` (§3.13): appends at a data partition land above its HW and are acknowledged once the
# followers caught up (PL-40); __consumer_offsets keeps HW = log end (its leader does not change in the model)
LAG = Config("replication_lag") == 1


def lagged(p):
    """Partition `p` is a data partition whose HW may lag its log end (config `replication_lag`)."""
    return And(LAG, in_use(p))


def is_op(p):
    """Partition `p` is the group's __consumer_offsets partition (consume-transform-produce configs)."""
    return And(CTP, p == OP)


def invalid_epoch(p):
    """INVALID_PRODUCER_EPOCH at `p` as the Java client classifies it: abortable for a Produce (2.7+), fatal for a
    TxnOffsetCommit (TxnOffsetCommitHandler). The leader's epoch check (P6, O4) answers it, and so does
    verification's PRODUCER_FENCED as AddPartitionsToTxnManager passes it on (V2)."""
    return If(is_op(p), PResp.FENCED, PResp.ABORTABLE)


def writes_to(p):
    """The producer writes to `p` in every transaction: a data partition, or op via TxnOffsetCommit."""
    return Or(in_use(p), is_op(p))


def generation(pc_st, idle):
    """The group's generation: every incarnation that starts joins the group (a rebalance) and is
    assigned the input partition, so the generation is the newest started incarnation's index."""
    return MaxOver(Inc, lambda j: If(pc_st[j] != idle, j, 0), default=0)
