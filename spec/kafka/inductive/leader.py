"""Strengthening invariants for leader changes (`leader_failovers` >= 1, kafka-protocol §3.13): IND-210, and for
replication lag (`replication_lag`, §3.13): IND-211..IND-213.

FLT-05 sets every pid's producer state and the LSO from a replay of the log. From a state where the
leader's incremental state differs from that replay the step is not closed under the other invariants,
so the replay equation itself is stated: without expiry the state the leader keeps is the replay of its
log (an expiry removes an entry the log still has). Markers record their coordinator epoch only when the
budget is non-zero, hence the guard."""
from txncheck.spec.expr import And, Config, Exists, ForAll, If, Implies, Min, Not
from txncheck.spec.model import Always

from ..domains import MAXP, MAXT, Kind, Part, Result, Slot, in_use, lagged, tid_used
from ..leader import replay, stable_offset
from ..state import (log_e, log_kind, log_pid, n_mk, n_mk_e, n_mk_res, n_mw, n_mwe, n_pw, n_pwe, pl_ce, pl_e, pl_end,
                     pl_first, pl_hw, pl_le, pl_lso, pl_open, pl_seq, tc_ce, tc_mk)
from .base import batch_slot, each_batch, each_marker


def _is_replay(p):
    states = [replay(p, t) for t in range(MAXT)]
    cells = [Implies(tid_used(t), And(pl_e[p][t] == e, pl_seq[p][t] == seq, pl_ce[p][t] == ce,
                                      pl_open[p][t] == is_open, pl_first[p][t] == first))
             for t, (e, seq, ce, is_open, first) in enumerate(states)]
    # with replication lag the LSO is also held by the spans whose marker is not yet below the HW (stable_offset)
    return And(*cells, pl_lso[p] == If(lagged(p), stable_offset(p, pl_hw[p]),
                                       Min(*[If(st[3], st[4], pl_end[p]) for st in states])))


INVARIANTS = (
    Always("IND-210", Implies(And(Config("leader_failovers") >= 1, Config("expiries") == 0),
                              And(*[Implies(in_use(p), _is_replay(p)) for p in range(MAXP)])),
           "With leader changes and without expiry, every data partition's producer state (epoch, last sequence, "
           "coordinator epoch, open span and its first offset) and its LSO are what a replay of its log gives."),
    Always("IND-211", ForAll(Part, lambda p: If(lagged(p), And(pl_hw[p] <= pl_end[p], pl_lso[p] <= pl_hw[p]),
                                                 And(pl_hw[p] == 0, pl_le[p] == 0))),
           "A lagging HW is at most the log end and at least the LSO; without replication lag the HW and leader "
           "epoch cells stay 0."),
    Always("IND-212", each_batch(lambda i, p, k: Implies(n_pw[i][p][k][1] != 0, And(
        lagged(p), n_pwe[i][p][k][1] <= pl_le[p],
        Implies(n_pwe[i][p][k][1] == pl_le[p], And(n_pw[i][p][k][1] <= pl_end[p], Exists(Slot, lambda s: And(
            s + 1 == n_pw[i][p][k][1], batch_slot(p, s, i, k)))))))),
           "A Produce waiting for the HW at the current leader is the batch at the offset it waits for; it waits "
           "only with replication lag, at a leader no newer than the current one."),
    Always("IND-213", each_marker(lambda t, p, c: Implies(n_mw[t][p][c] != 0, And(
        lagged(p), n_mwe[t][p][c] <= pl_le[p], Not(n_mk[t][p][c]), Implies(c == tc_ce[t], tc_mk[t][p]),
        Implies(n_mwe[t][p][c] == pl_le[p], And(n_mw[t][p][c] <= pl_end[p], Exists(Slot, lambda s: And(
            s + 1 == n_mw[t][p][c], log_pid[p][s] == t, log_e[p][s] == n_mk_e[t][p][c],
            log_kind[p][s] == If(n_mk_res[t][p][c] == Result.COMMIT, Kind.COMMIT, Kind.ABORT)))))))),
           "A WriteTxnMarkers answer waiting for the HW: the marker is not in flight again, its coordinator (if "
           "current) still counts the partition as pending, and at the current leader the marker sits at the offset "
           "it waits for, with its result and producer epoch."),
)
