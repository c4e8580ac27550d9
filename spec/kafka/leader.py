"""A leader change of a data partition (kafka-protocol §3.13): the producer state the new leader holds,
computed as a replay of the log.

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

The log is fully replicated (appends are acks=all and HW = log end), so nothing is truncated.
"""
from txncheck.spec.expr import And, Config, If, Min, Not, Or
from txncheck.spec.model import Row

from .chart import PARTITION
from .domains import MAXS, MAXT, Kind, Ver, in_use
from .params import p as P
from .state import (env_lf, g_lso_dec, log_ce, log_e, log_kind, log_pid, log_seq, pl_ce, pl_e, pl_end, pl_first,
                    pl_lso, pl_open, pl_seq, pl_ver)


def replay(p, t):
    """The ProducerStateEntry of pid `t` at `p` that replaying the log of `p` from its start gives:
    (producerEpoch, last sequence, coordinatorEpoch, span open, first offset of the span)."""
    e, seq, ce, is_open, first = -1, -1, -1, False, 0
    for s in range(MAXS):
        mine = log_pid[p][s] == t  # a slot at or above the log end is EMPTY
        data = And(mine, log_kind[p][s] == Kind.DATA)
        marker = And(mine, log_kind[p][s].is_in(Kind.COMMIT, Kind.ABORT))
        seq = If(data, log_seq[p][s], If(And(marker, log_e[p][s] != e), -1, seq))
        ce = If(marker, log_ce[p][s], ce)
        first = If(And(data, Not(is_open)), s, If(marker, 0, first))
        is_open = If(data, True, If(marker, False, is_open))
        e = If(Or(data, marker), log_e[p][s], e)
    return e, seq, ce, is_open, first


def rebuild(p, keep_open=True):
    """Updates of a leader change at `p`: every pid's entry replayed from the log, the LSO recomputed from the
    replayed spans (HW = log end), and a batch held for verification (guard set or cleared, or the coordinator's
    retriable answer) answered retriable by PL-09 (NOT_LEADER_OR_FOLLOWER: the old leader is no longer the
    leader when its verification callback runs). `keep_open` False is variant B13: a pid whose span is open is
    missing from the rebuilt state."""
    states = [replay(p, t) for t in range(MAXT)]
    if not keep_open:
        states = [tuple(If(st[3], empty, x) for x, empty in zip(st, (-1, -1, -1, False, 0))) for st in states]
    lso = Min(*[If(is_open, first, pl_end[p]) for _, _, _, is_open, first in states])
    ups = []
    for t, (e, seq, ce, is_open, first) in enumerate(states):
        ups += [pl_e[p][t].set(e), pl_seq[p][t].set(seq), pl_ce[p][t].set(ce), pl_open[p][t].set(is_open),
                pl_first[p][t].set(first),
                pl_ver[p][t].set(If(pl_ver[p][t].is_in(Ver.OK, Ver.CLEARED), Ver.RETRY, pl_ver[p][t]))]
    return (*ups, pl_lso[p].set(lso), g_lso_dec.set(Or(g_lso_dec, lso < pl_lso[p])), env_lf.set(env_lf + 1))


def may_change_leader(p):
    """A data partition's leader may change (budget `leader_failovers`) while no verification request of a pid is
    outstanding at the coordinator (timing restriction, §3.13): the old leader answers the held batch only once
    the coordinator has answered, so the client's retry reaches the new leader after that answer either way."""
    return (in_use(p), env_lf < Config("leader_failovers"),
            *[Not(pl_ver[p][t].is_in(Ver.PENDING, Ver.ADDING)) for t in range(MAXT)])


def leader_change(keep_open=True):
    """FLT-05; `keep_open` False is variant B13's rebuild."""
    return Row(
        "FLT-05", "env", "partition leader change (producer state replayed from the log)", params=(P,), at=PARTITION,
        guard=may_change_leader(P), updates=rebuild(P, keep_open), tags=("crash",),
        ref="kafka-protocol §3.13 leader change; Partition.makeLeader (the follower's log and ProducerStateManager, "
            "kept by UnifiedLog.appendAsFollower with origin REPLICATION, or rebuilt by "
            "UnifiedLog.rebuildProducerState / loadProducersFromRecords), ProducerAppendInfo.checkProducerEpoch / "
            "checkCoordinatorEpoch (REPLICATION: logged, not refused, KAFKA-9144); ReplicaManager.appendRecords (a "
            "verification callback on a replica that is no longer the leader: NOT_LEADER_OR_FOLLOWER)",
        doc="Requests still in flight to the partition (Produce, WriteTxnMarkers and their copies) carry all their "
            "fields and are handled by the new leader: that is the old leader's NOT_LEADER_OR_FOLLOWER followed by "
            "the sender's retry of the same request (Sender reenqueueBatch, same sequence; the coordinator's marker "
            "re-send). A batch held for verification is answered retriable (PL-09) and the client resends it.")
