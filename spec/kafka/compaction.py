"""Variant B14 (kafka-protocol §6 B14): a replica that was out of the ISR misses an ABORT marker the leader's log
cleaner removed, and later leads the partition.

The cleaner runs on every replica on its own (`LogCleaner`, `Cleaner.cleanSegments`), up to the first uncleanable
offset, which is below the LSO and the HW. An aborted transaction's data batches are always discardable; its ABORT
marker is kept until none of them is left in the log, then until `delete.retention.ms` has passed since the first
clean that saw it (`CleanedTransactionMetadata.onControlBatchRead`, `Cleaner`: a control batch is discarded only
once its delete horizon has passed). The HW moves on without a replica that left the ISR. One that went down after
fetching an aborted transaction's data and came back after the leader removed the marker fetches the rest of the
log without it (`ReplicaFetcherThread`: the leader's log has nothing at that offset any more), rejoins the ISR, and
may be elected leader. Its producer state, built by `UnifiedLog.appendAsFollower` from the records it holds, has
the transaction open: the LSO stops there, and the pid's next marker at the partition, that of a later
transaction, closes the span from its first record, so the aborted records are read as that transaction's outcome.

FLT-06 is all of that as one leader change, because nothing between the replica's fall and its election is seen by
the clients, the coordinator or the readers of the leader (compaction keeps what read_committed returns). The new
leader's log is the old one without the marker at `m`; every pid's entry is the replay of that log (`rebuild`), and
the records the marker closed take the outcome of the pid's next marker after it, or none. Only ABORT markers: a
COMMIT marker goes once its records are superseded by later records with the same keys, and the model has no
keys. __consumer_offsets, which the group coordinator loads with its own replay, is left out.
"""
from txncheck.spec.expr import And, If, Not, Or, Param
from txncheck.spec.model import Row

from .chart import PARTITION
from .domains import MAXS, Kind, Outcome, Slot, in_use
from .leader import SLOT_FIELDS, is_marker, may_change_leader, rebuild
from .params import p as P
from .state import log_kind, log_out, log_pid, pl_lso

M = Param("m", Slot)  # the offset of the ABORT marker the replica missed


def _marker_of_pid(s, pid):
    return And(log_pid[P][s] == pid, is_marker(P, s))


def _closed_by_m(s):
    """Data slot `s` is in the span the marker at M closed: the marker's pid's, below M, no marker of it between."""
    pid = log_pid[P][M]
    return And(M > s, log_kind[P][s] == Kind.DATA, log_pid[P][s] == pid,
               Not(Or(*[And(M > s2, _marker_of_pid(s2, pid)) for s2 in range(s + 1, MAXS)])))


def _next_outcome():
    """The outcome of the pid's first marker after M, or NONE while there is none (the span stays open)."""
    pid = log_pid[P][M]
    out = Outcome.NONE
    for s in reversed(range(MAXS)):
        kind = log_kind[P][s]
        out = If(And(M < s, _marker_of_pid(s, pid)), If(kind == Kind.COMMIT, Outcome.COMMIT, Outcome.ABORT), out)
    return out


def _missed_records():
    """The new leader's log: no record at M, and the records M had closed take the pid's next marker's outcome."""
    nxt = _next_outcome()
    ups = [v[P][M].set(v.init) for v in SLOT_FIELDS]
    for s in range(MAXS):
        ups.append(log_out[P][s].set(If(M == s, Outcome.NONE, If(_closed_by_m(s), nxt, log_out[P][s]))))
    return ups


def _span_below():
    """The marker at `m` closed a span with at least one record (the replica had fetched it before it fell)."""
    return Or(*[_closed_by_m(s) for s in range(MAXS - 1)])


ROW = Row(
    "FLT-06", "env", "leader change to a replica that missed a compacted ABORT marker", params=(P, M),
    at=PARTITION,
    guard=(*may_change_leader(P), in_use(P), M < pl_lso[P], log_kind[P][M] == Kind.ABORT, _span_below()),
    updates=(*rebuild(P, skip=M), *_missed_records()),
    tags=("crash",),
    ref="variant B14: kafka-protocol §6 B14; Cleaner / CleanedTransactionMetadata.onControlBatchRead (the ABORT "
        "marker goes once its transaction's batches are cleaned and its delete horizon has passed), "
        "ReplicaFetcherThread (the returning replica fetches the cleaned log), UnifiedLog.appendAsFollower / "
        "ProducerAppendInfo (the follower's producer state from the records it holds), Partition.makeLeader",
    doc="One step for: a replica falls out of the ISR after fetching an aborted transaction's records but not "
        "its marker; the leader's cleaner removes the records and, after delete.retention.ms, the marker; the "
        "replica fetches the rest of the log, rejoins the ISR and is elected. Its log lacks the marker at m, its "
        "producer state has the transaction open, and the pid's next marker decides the records.")
