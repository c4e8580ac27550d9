"""Strengthening invariant for leader changes (`leader_failovers` >= 1, kafka-protocol §3.13): IND-210.

FLT-05 sets every pid's producer state and the LSO from a replay of the log. From a state where the
leader's incremental state differs from that replay the step is not closed under the other invariants,
so the replay equation itself is stated: without expiry the state the leader keeps is the replay of its
log (an expiry removes an entry the log still has). Markers record their coordinator epoch only when the
budget is non-zero, hence the guard."""
from txncheck.spec.expr import And, Config, If, Implies, Min
from txncheck.spec.model import Always

from ..domains import MAXP, MAXT, in_use, lagged, tid_used
from ..leader import replay, stable_offset
from ..state import pl_ce, pl_e, pl_end, pl_first, pl_hw, pl_lso, pl_open, pl_seq


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
)
