"""A leader change of a data partition, or of the group's __consumer_offsets partition (kafka-protocol §3.13): the
producer state the new leader holds, computed as a replay of the log.

A follower keeps a `ProducerStateManager` of its own: every batch it replicates goes through
`ProducerAppendInfo` with origin REPLICATION (`UnifiedLog.appendAsFollower`), and a restarted or truncated
replica rebuilds it from a snapshot plus a replay of the log after it (`UnifiedLog.rebuildProducerState`,
`loadProducersFromRecords`). Either way the state is a function of the log. With origin REPLICATION a
lower producer epoch or coordinator epoch is only logged, never refused (KAFKA-9144), so the replay takes
each record's fields as they are: the epoch of the pid's last record, the sequence of its last data batch
since the epoch last changed (`ProducerStateEntry.maybeUpdateProducerEpoch` clears the retained batches),
the coordinator epoch of its last marker, and the span opened by its first data batch after its last
marker. Expiry (§3.12 X2, PL-30) runs on every replica on its own clock: an entry the old leader had expired
comes back, and the new leader may expire it again later within the same budget. Verification guards
(`VerificationStateEntry`) live only in the old leader's memory and are gone.

Without `replication_lag` the log is fully replicated (appends are acks=all and HW = log end), so nothing is
truncated. With it the new leader is an ISR follower whose log ends anywhere from the HW to the old log end
(`Partition.makeLeader` keeps the new leader's own log, and the other replicas truncate to it,
`UnifiedLog.truncateTo`): the records above its end are gone, none of them acknowledged (acks=all answers only
once the HW covers a batch), and its producer state is the replay of the log it kept.

The group coordinator of a group is the leader of the group's __consumer_offsets partition and moves with it: the
new one loads the partition (`CoordinatorRuntime`), whose `OffsetMetadataManager.replay` puts every
transactional offset record into the pending offsets of its producer id (last record wins) and whose
`replayEndTransactionMarker` moves or drops them. The running coordinator builds its state by the same replay as
it writes, so the pending and committed offsets after the change are those before it (`gc_pend`, `gc_off` are
kept). A TxnOffsetCommit held for verification is answered retriable (NOT_COORDINATOR; the client looks the
coordinator up again and re-sends it). __consumer_offsets has no replication lag in the model.
"""
from txncheck.spec.expr import And, Config, If, Min, Not, Or, Param
from txncheck.spec.model import Row

from .chart import PARTITION
from .domains import BATCH_CELLS, MAXS, MAXT, Kind, Offset, Outcome, Ver, lagged, writes_to
from .params import p as P
from .state import (env_lf, g_lso_dec, log_ce, log_e, log_b, log_inc, log_k, log_kind, log_out, log_pid, log_ret, log_seq,
                    log_src, pl_ce, pl_e, pl_end, pl_first, pl_hw, pl_le, pl_lso, pl_low, pl_low_e, pl_open, pl_seq, pl_vb)

END = Param("end", Offset)  # the new leader's log end (FLT-05)


# a log slot's record fields; a cleared slot (truncated, or compacted away) holds each one's initial value
SLOT_FIELDS = (log_kind, log_pid, log_e, log_seq, log_ce, log_inc, log_k, log_b, log_ret, log_src)


def is_marker(p, s):
    """Slot s of p holds a control batch (COMMIT or ABORT marker)."""
    return log_kind[p][s].is_in(Kind.COMMIT, Kind.ABORT)


def replay(p, t, limit=None, skip=None):
    """The ProducerStateEntry of pid `t` at `p` that replaying the log of `p` from its start gives:
    (producerEpoch, last sequence, coordinatorEpoch, span open, first offset of the span). With `limit`, only the
    slots below it are replayed (a truncated log, or the log up to the HW); with `skip`, a replica's log that lacks
    that slot (variant B14)."""
    e, seq, ce, is_open, first = -1, -1, -1, False, 0
    for s in range(MAXS):
        mine = log_pid[p][s] == t  # a slot at or above the log end is EMPTY
        if limit is not None:
            mine = And(mine, s < limit)
        if skip is not None:
            mine = And(mine, skip != s)
        data = And(mine, log_kind[p][s] == Kind.DATA)
        marker = And(mine, is_marker(p, s))
        seq = If(data, log_seq[p][s], If(And(marker, log_e[p][s] != e), -1, seq))
        ce = If(marker, log_ce[p][s], ce)
        first = If(And(data, Not(is_open)), s, If(marker, 0, first))
        is_open = If(data, True, If(marker, False, is_open))
        e = If(Or(data, marker), log_e[p][s], e)
    return e, seq, ce, is_open, first


def stable_offset(p, hw_, limit=None, skip=None):
    """LSO(p) = min(first offset of every span open in the log below `hw_`, `hw_`): the spans still open at the
    log end and those whose marker is not yet below the HW (ProducerStateManager's ongoing and unreplicated
    transactions) are exactly the spans open in the replay of the log up to the HW (§1.4)."""
    spans = [replay(p, t, hw_ if limit is None else Min(hw_, limit), skip) for t in range(MAXT)]
    return Min(*[If(is_open, first, hw_) for _, _, _, is_open, first in spans])


def truncate(p, end):
    """The log of `p` cut at offset `end` (UnifiedLog.truncateTo): every slot from `end` on is cleared, and a kept
    record whose closing marker is cut loses its outcome (its span is open again until the marker is re-sent)."""
    ups = []
    for s in range(MAXS):
        cut = s >= end
        reopened = And(log_kind[p][s] == Kind.DATA, Not(Or(*[
            And(s2 < end, is_marker(p, s2), log_pid[p][s2] == log_pid[p][s]) for s2 in range(s + 1, MAXS)])))
        ups += [v[p][s].set(If(cut, v.init, v[p][s])) for v in SLOT_FIELDS]
        ups.append(log_out[p][s].set(If(Or(cut, reopened), Outcome.NONE, log_out[p][s])))
    return ups


def rebuild(p, keep_open=True, end=None, skip=None):
    """Updates of a leader change at `p`: with `replication_lag`, the log cut at the new leader's end `end`
    (truncate), the leader epoch bumped; every pid's entry replayed from the (kept) log, the LSO recomputed
    (stable_offset: the new leader keeps the HW), and a batch held for verification whose answer has come (its guard current
    or stale, or the coordinator's retriable answer) answered retriable by PL-09 (NOT_LEADER_OR_FOLLOWER: the old leader is no
    longer the leader when its verification callback runs). `keep_open` False is variant B13: a pid whose span
    is open is missing from the rebuilt state. Without `end` the new leader has the whole log, less the slot `skip`
    (variant B14)."""
    cut = end is not None
    hw_ = If(lagged(p), pl_hw[p], end if cut else pl_end[p])
    states = [replay(p, t, end if cut else None, skip) for t in range(MAXT)]
    if keep_open:
        lso = stable_offset(p, hw_, end if cut else None, skip)
    else:
        states = [tuple(If(st[3], empty, x) for x, empty in zip(st, (-1, -1, -1, False, 0))) for st in states]
        lso = Min(*[If(is_open, first, hw_) for _, _, _, is_open, first in states])
    ups = []
    for t, (e, seq, ce, is_open, first) in enumerate(states):
        ups += [pl_low[p][t].set(-1), pl_low_e[p][t].set(-1)]  # the new leader has no VerificationStateEntry
        ups += [pl_e[p][t].set(e), pl_seq[p][t].set(seq), pl_ce[p][t].set(ce), pl_open[p][t].set(is_open),
                pl_first[p][t].set(first)]
    ups += [pl_vb[p][j][kk][bb].set(If(pl_vb[p][j][kk][bb] == Ver.OK, Ver.RETRY, pl_vb[p][j][kk][bb]))
            for j, kk, bb in BATCH_CELLS]
    if cut:
        ups += [*truncate(p, end), pl_end[p].set(end)]
    ups.append(pl_le[p].set(If(lagged(p), pl_le[p] + 1, pl_le[p])))
    return (*ups, pl_lso[p].set(lso), g_lso_dec.set(Or(g_lso_dec, lso < pl_lso[p])), env_lf.set(env_lf + 1))


def may_change_leader(p):
    """A data partition's leader, or that of the group's __consumer_offsets partition (the group coordinator moves
    with it), may change (budget `leader_failovers`) while no verification request of a pid is outstanding at the
    transaction coordinator (timing restriction, §3.13): the old leader answers the held batch only once the
    coordinator has answered, so the client's retry reaches the new leader after that answer either way."""
    return (writes_to(p), env_lf < Config("leader_failovers"),
            *[Not(pl_vb[p][j][kk][bb].is_in(Ver.PENDING, Ver.ADDING)) for j, kk, bb in BATCH_CELLS])


def new_end_ok(p, end):
    """The new leader's log end: an ISR follower has fetched at least up to the HW, at most the old log end; without
    `replication_lag` every follower has the whole log."""
    return If(lagged(p), And(pl_hw[p] <= end, end <= pl_end[p]), end == pl_end[p])


def leader_change(keep_open=True):
    """FLT-05; `keep_open` False is variant B13's rebuild."""
    return Row(
        "FLT-05", "env", "partition leader change (producer state replayed from the log)", params=(P, END),
        at=PARTITION, guard=(*may_change_leader(P), new_end_ok(P, END)), updates=rebuild(P, keep_open, END),
        tags=("crash",),
        ref="kafka-protocol §3.13 leader change; Partition.makeLeader (the follower's log and ProducerStateManager, "
            "kept by UnifiedLog.appendAsFollower with origin REPLICATION, or rebuilt by "
            "UnifiedLog.rebuildProducerState / loadProducersFromRecords), ProducerAppendInfo.checkProducerEpoch / "
            "checkCoordinatorEpoch (REPLICATION: logged, not refused, KAFKA-9144); ReplicaManager.appendRecords (a "
            "verification callback on a replica that is no longer the leader: NOT_LEADER_OR_FOLLOWER); with "
            "replication lag: UnifiedLog.truncateTo on the other replicas (producer state reloaded up to the "
            "truncation point), ReplicaManager.makeFollowers (delayed produce requests completed: PL-43, PL-44); at "
            "__consumer_offsets: CoordinatorRuntime load, OffsetMetadataManager.replay / replayEndTransactionMarker",
        doc="Requests still in flight to the partition (Produce, WriteTxnMarkers and their copies) carry all their "
            "fields and are handled by the new leader: that is the old leader's NOT_LEADER_OR_FOLLOWER followed by "
            "the sender's retry of the same request (Sender reenqueueBatch, same sequence; the coordinator's marker "
            "re-send). A batch held for verification is answered retriable (PL-09) and the client resends it. With "
            "`replication_lag` the new leader's log ends at `end` (any offset from the HW to the old end): the "
            "records above it are gone, its producer state is the replay of what it kept, the HW stays, and the "
            "requests waiting for the HW at the old leader are answered NOT_LEADER_OR_FOLLOWER (PL-43, PL-44). At "
            "__consumer_offsets it is a group coordinator change: the pending and committed offsets are what the new "
            "coordinator's replay of the partition gives, the ones the old one held.")
