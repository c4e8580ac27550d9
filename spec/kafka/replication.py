"""Replication lag at a data partition (config `replication_lag`, kafka-protocol §3.13, §1.4): the followers
catch up (PL-40) and the requests an append left waiting for the HW are answered (DelayedProduce): NONE once the HW
covers them (PL-41 for a Produce, PL-42 for a WriteTxnMarkers, whose answer clears the partition from the
coordinator's pending set), NOT_LEADER_OR_FOLLOWER once the leader they wait at has changed (PL-43, PL-44). The
appends that make them wait are the partition table's (`partition.acked`, `LIVE_MARKER`). Kafka:
`Partition.maybeIncrementLeaderHW`, `DelayedProduce`, `Partition.checkEnoughReplicasReachOffset`.
"""
from txncheck.spec.expr import And, If, MinOver, Or
from txncheck.spec.model import Row

from .domains import lagged, tid_used, PResp, Tid
from .params import b, c, i, k, p, t
from .state import (g_lso_dec, n_mk, n_mw, n_mwe, n_pres, n_pw, n_pwe, pl_end, pl_first, pl_hw, pl_le, pl_lso, pl_open,
                    tc_ce, tc_mk)

A = "partition"


def caught_up():
    """PL-40: HW := log end and the LSO recomputed from the open spans (the closed ones are all replicated)."""
    lso = MinOver(Tid, lambda u: If(pl_open[p][u], pl_first[p][u], pl_end[p]), default=0)
    return (pl_hw[p].set(pl_end[p]), pl_lso[p].set(lso), g_lso_dec.set(Or(g_lso_dec, lso < pl_lso[p])))


pw_here = And(n_pw[i][p][k][b] != 0, n_pwe[i][p][k][b] == pl_le[p])  # waits at the current leader
mw_here = And(n_mw[t][p][c] != 0, n_mwe[t][p][c] == pl_le[p])


ROWS = (
    # -- followers catch up (§3.13, config replication_lag) ------------------------------------------------
    Row("PL-40", A, "followers caught up: HW advances", params=(p,),
        guard=(lagged(p), pl_hw[p] < pl_end[p]), updates=caught_up(),
        ref="kafka-protocol §3.13, §1.4; Partition.maybeIncrementLeaderHW (every ISR follower fetched up to the log "
            "end), DelayedProduce.tryComplete / Partition.checkEnoughReplicasReachOffset (acks=-1: NONE once the HW "
            "covers the batch), UnifiedLog.fetchLastStableOffsetMetadata (LSO = min(first unstable offset, HW), "
            "ProducerStateManager.onHighWatermarkUpdated drops the replicated closed spans)",
        doc="The HW moves to the log end (every follower fetched everything: the smallest faithful step, since any "
            "partial catch-up is reached by catching up before the later appends); the LSO becomes min(first offset "
            "of the open spans, HW). The requests waiting in DelayedProduce are answered by PL-41 and PL-42."),
    Row("PL-41", A, "DelayedProduce completed", params=(i, p, k, b),
        guard=(lagged(p), pw_here, n_pw[i][p][k][b] <= pl_hw[p]),
        updates=(n_pres[i][p][k][b].set(PResp.OK), n_pw[i][p][k][b].set(0), n_pwe[i][p][k][b].set(0)),
        ref="kafka-protocol §3.5 P11, §3.13; DelayedProduce.tryComplete, Partition.checkEnoughReplicasReachOffset "
            "(HW >= the batch's required offset: NONE)"),
    Row("PL-42", A, "DelayedProduce completed (WriteTxnMarkers)", params=(t, p, c),
        guard=(tid_used(t), lagged(p), mw_here, n_mw[t][p][c] <= pl_hw[p]),
        updates=(tc_mk[t][p].set(If(c == tc_ce[t], False, tc_mk[t][p])), n_mw[t][p][c].set(0), n_mwe[t][p][c].set(0)),
        ref="kafka-protocol §3.8 W6, §3.13; KafkaApis.handleWriteTxnMarkersRequest (appendRecords with "
            "requiredAcks=-1), DelayedProduce.tryComplete; TransactionMarkerRequestCompletionHandler (NONE: the "
            "partition leaves the pending set of the coordinator of epoch c)",
        doc="The answer is delivered to the coordinator of epoch c (a deposed one ignores it), as PL-22's is "
            "without replication lag."),
    Row("PL-43", A, "DelayedProduce: no longer the leader", params=(i, p, k, b),
        guard=(lagged(p), n_pw[i][p][k][b] != 0, n_pwe[i][p][k][b] != pl_le[p]),
        updates=(n_pres[i][p][k][b].set(PResp.RETRY), n_pw[i][p][k][b].set(0), n_pwe[i][p][k][b].set(0)),
        ref="kafka-protocol §3.13 LC5; ReplicaManager.makeFollowers (the delayed produce requests are completed), "
            "Partition.checkEnoughReplicasReachOffset (no local leader log: NOT_LEADER_OR_FOLLOWER, retriable)",
        doc="The client re-sends the same batch with the same sequence (PC-08): a duplicate at the new leader if "
            "it kept the batch, a fresh append if it was truncated."),
    Row("PL-44", A, "DelayedProduce: no longer the leader (WriteTxnMarkers)", params=(t, p, c),
        guard=(tid_used(t), lagged(p), n_mw[t][p][c] != 0, n_mwe[t][p][c] != pl_le[p]),
        updates=(n_mk[t][p][c].set(And(c == tc_ce[t], tc_mk[t][p])), n_mw[t][p][c].set(0), n_mwe[t][p][c].set(0)),
        ref="kafka-protocol §3.8, §3.13 LC5; TransactionMarkerRequestCompletionHandler.onComplete "
            "(NOT_LEADER_OR_FOLLOWER: the marker is re-enqueued with its own result and epochs while the coordinator "
            "epoch is unchanged and the partition still pending, else dropped)",
        doc="The re-sent marker keeps its result and producer epoch (n_mk_res, n_mk_e): the new leader appends it "
            "again if it lost it in the truncation, or appends a second marker for a span already closed."),
)
