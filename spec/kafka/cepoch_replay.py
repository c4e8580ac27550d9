"""Variant B2 (kafka-protocol §6 B2, KAFKA-9144): followers that enforce the coordinator-epoch check (W2) on the
records they replicate.

Producer-state expiry (X2, PL-30) may drop a pid's entry right after a marker: before KAFKA-9144 it aged an entry
from its last data record only, and the model's expiry has no clock, so it may fire at any time without an open
span. The entry held the coordinator epoch of the pid's last marker; once it is gone, a WriteTxnMarkers request of a
deposed coordinator (a lower coordinator epoch, still in flight) passes W2 at the leader and is appended, and the
pid's coordinator epoch in the log moves back. Kafka since the fix (PR #7687) checks W2 only when the leader appends;
a follower replicating the log and a broker recovering it only log the regression. Before it, both refused it
(`ProducerAppendInfo` with origin REPLICATION threw), so a follower stopped fetching at that marker: the HW, which
only the followers' fetches move, stays below it, every later append waits in DelayedProduce for good, and no
follower is in sync to take over. (Followers expire entries on their own clocks, and one whose entry had expired
too would take the marker; the variant is the case where none had. A broker recovering its log, which replays
without expiry, always refused it.)

The variant: the followers catch up (PL-40) only to the first such marker, so the HW stops below it, and no leader
change (FLT-05) happens once there is one (no follower is in the ISR any more). Everything appended from the
regressing marker on stays above the HW. It needs `replication_lag` (the HW) and `leader_failovers` >= 1 (the log
keeps a marker's coordinator epoch only then, `log_ce`).
"""
from txncheck.spec.expr import And, If, Not, Or
from txncheck.spec.model import AddRow, DropRow, ReplaceGuard, Row

from .domains import MAXS, lagged
from .leader import is_marker, leader_change, stable_offset
from .params import p
from .replication import ROWS as REPLICATION_ROWS
from .state import g_lso_dec, log_ce, log_pid, pl_end, pl_hw, pl_lso


def _regresses(q, s2):
    """The marker at slot s2 of q carries a lower coordinator epoch than an earlier marker of the same pid."""
    return Or(*[And(is_marker(q, s1), is_marker(q, s2), log_pid[q][s1] == log_pid[q][s2], log_ce[q][s2] < log_ce[q][s1])
                for s1 in range(s2)])


def regressed(q=p):
    """Some pid's marker at q carries a lower coordinator epoch than an earlier marker of the same pid."""
    return Or(*[_regresses(q, s) for s in range(1, MAXS)])


def _fetchable():
    """Where the followers stop: the first regressing marker's offset, else the log end."""
    end = pl_end[p]
    for s in reversed(range(1, MAXS)):
        end = If(_regresses(p, s), s, end)
    return end


_PL40 = next(r for r in REPLICATION_ROWS if r.id == "PL-40")
_TOP = _fetchable()
_LSO = stable_offset(p, _TOP)
_CATCH_UP = Row(
    "PL-40", _PL40.actor, _PL40.trigger, params=_PL40.params, guard=(lagged(p), pl_hw[p] < _TOP),
    updates=(pl_hw[p].set(_TOP), pl_lso[p].set(_LSO), g_lso_dec.set(Or(g_lso_dec, _LSO < pl_lso[p]))),
    ref="variant B2: " + _PL40.ref + "; before KAFKA-9144 ProducerAppendInfo.checkCoordinatorEpoch also refused a "
        "replicated marker (origin REPLICATION), so the followers' fetch stops at the first regressing marker",
    doc="The followers fetch up to the first marker whose coordinator epoch is below the pid's previous one in the "
        "log, or to the log end; the LSO is that of the log up to the new HW.")
_FLT05 = leader_change()
EDITS = (DropRow("PL-40"), AddRow("partition", _CATCH_UP),
         ReplaceGuard("FLT-05", (*_FLT05.guard, Not(regressed()))))
