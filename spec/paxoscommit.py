"""Gray and Lamport's Paxos Commit (TLA+ examples, `PaxosCommit.tla`), as tables.

Faithful to the TLA+ spec: `msgs` is the set of all messages ever sent, one boolean per message of
the finite alphabet (phase1a(ins, bal), phase1b(ins, acc, mbal, bal, val), phase2a(ins, bal, val),
phase2b(acc, ins, bal, val), Commit, Abort); `aState[ins][acc]` holds mbal, bal and val. Majorities
are all subsets of the acceptors with more than half of them. With 2 RMs, 3 acceptors and ballots
{0, 1} TLC reports 1,321,761 distinct states.
"""
from .domains import BOOL, EnumDomain, IdSet, IntRange, SubsetDomain
from .expr import And, Exists, ForAll, If, Implies, Member, Not, Param, Var
from .model import (AddRow, Always, ConfigParam, DropRow, NamedConfig, Row, Sometimes, Spec,
                    Table, Variant)
from .sequence import ALL, At, Channel, Field, Lane, Receive

RM = IdSet("RM", size="rm", prefix="r")
Acceptor = IdSet("Acceptor", size="acceptors", prefix="a")
Majority = SubsetDomain("Majority", base=Acceptor, majority=True)
Ballot = IntRange("Ballot", 0, "maxballot")
HigherBallot = IntRange("HigherBallot", 1, "maxballot")          # Ballot \\ {0}
BalOrNone = IntRange("BalOrNone", -1, "maxballot")               # Ballot ∪ {-1}
RMState = EnumDomain("RMState", ("working", "prepared", "committed", "aborted"))
Val = EnumDomain("Val", ("prepared", "aborted", "none"))
Decision = EnumDomain("Decision", ("prepared", "aborted"))       # values a phase2a/2b carries

rmState = Var("rmState", RMState, index=(RM,), init=RMState.working)
aMbal = Var("aMbal", Ballot, index=(RM, Acceptor), init=0, doc="aState[ins][acc].mbal")
aBal = Var("aBal", BalOrNone, index=(RM, Acceptor), init=-1, doc="aState[ins][acc].bal")
aVal = Var("aVal", Val, index=(RM, Acceptor), init=Val.none, doc="aState[ins][acc].val")
m1a = Var("msg1a", BOOL, index=(RM, HigherBallot), init=False, doc="phase1a(ins, bal) ∈ msgs")
m1b = Var("msg1b", BOOL, index=(RM, Acceptor, Ballot, BalOrNone, Val), init=False,
          doc="phase1b(ins, acc, mbal, bal, val) ∈ msgs")
m2a = Var("msg2a", BOOL, index=(RM, Ballot, Decision), init=False, doc="phase2a(ins, bal, val) ∈ msgs")
m2b = Var("msg2b", BOOL, index=(Acceptor, RM, Ballot, Decision), init=False, doc="phase2b(acc, ins, bal, val) ∈ msgs")
mCommit = Var("msgCommit", BOOL, init=False, doc="[type |-> Commit] ∈ msgs")
mAbort = Var("msgAbort", BOOL, init=False, doc="[type |-> Abort] ∈ msgs")

r = Param("r", RM)
acc = Param("acc", Acceptor)
bal = Param("bal", HigherBallot)
ms = Param("ms", Majority)
b = Param("b", Ballot)
v = Param("v", Decision)
mb = Param("mb", HigherBallot)
# a phase1b message's content (channel parameters)
m_mbal = Param("mbal", Ballot)
m_bal = Param("mbal_voted", BalOrNone)
m_val = Param("val", Val)

RMT = Table("RM", status="rmState", doc="Each resource manager.", at=At("RM", r), rows=(
    Row("RM-01", "RM", "RMPrepare", params=(r,), guard=(rmState[r] == RMState.working,),
        updates=(rmState[r].set(RMState.prepared), m2a[r, 0, Decision.prepared].set(True)),
        ref="PaxosCommit.tla RMPrepare"),
    Row("RM-02", "RM", "RMChooseToAbort", params=(r,), guard=(rmState[r] == RMState.working,),
        updates=(rmState[r].set(RMState.aborted), m2a[r, 0, Decision.aborted].set(True)),
        ref="PaxosCommit.tla RMChooseToAbort"),
    Row("RM-03", "RM", "RMRcvCommitMsg", params=(r,), guard=(mCommit,),
        updates=(rmState[r].set(RMState.committed),), ref="PaxosCommit.tla RMRcvCommitMsg",
        receives=(Receive("Commit"),)),
    Row("RM-04", "RM", "RMRcvAbortMsg", params=(r,), guard=(mAbort,),
        updates=(rmState[r].set(RMState.aborted),), ref="PaxosCommit.tla RMRcvAbortMsg",
        receives=(Receive("Abort"),)),
))


def _mset_has(rr, mbal, a):
    """Acceptor `a` sent a phase1b for instance rr with mbal = `mbal` (any bal, val)."""
    return Exists(BalOrNone, lambda bb: Exists(Val, lambda vv: m1b[rr, a, mbal, bb, vv]))


def MaxOverAcc(rr, mbal, subset):
    from .expr import MaxOver
    return MaxOver(Acceptor, lambda a: If(Member(subset, a), MaxOver(
        BalOrNone, lambda bb: If(Exists(Val, lambda vv: m1b[rr, a, mbal, bb, vv]), bb, -1), -1), -1), -1)


def _val_prepared(rr, mbal, subset):
    """The phase1b messages of the majority with the highest bal carry `prepared`."""
    mx = MaxOverAcc(rr, mbal, subset)
    return Exists(Acceptor, lambda a: And(Member(subset, a), Exists(
        BalOrNone, lambda bb: And(bb == mx, bb >= 0, m1b[rr, a, mbal, bb, Val.prepared]))))


LEADER = Table("Leader", doc="Ballot leaders (any process may lead a ballot > 0).", at=At("leader"), rows=(
    Row("LD-01", "Leader", "Phase1a", params=(mb, r), guard=(),
        updates=(m1a[r, mb].set(True),), ref="PaxosCommit.tla Phase1a"),
    Row("LD-02", "Leader", "Phase2a", params=(mb, r, ms), sends_from=At("leader"),
        guard=(Not(Exists(Decision, lambda d: m2a[r, mb, d])),
               ForAll(Acceptor, lambda a: Implies(Member(ms, a), _mset_has(r, mb, a)))),
        updates=(m2a[r, mb, If(_val_prepared(r, mb, ms), Decision.prepared, Decision.aborted)].set(True),),
        ref="PaxosCommit.tla Phase2a"),
    Row("LD-03", "Leader", "DecideCommit", params=(),
        guard=(ForAll(RM, lambda rr: Exists(Ballot, lambda bb: Exists(Majority, lambda mm: ForAll(
            Acceptor, lambda a: Implies(Member(mm, a), m2b[a, rr, bb, Decision.prepared]))))),),
        updates=(mCommit.set(True),), ref="PaxosCommit.tla Decide (commit)"),
    Row("LD-04", "Leader", "DecideAbort", params=(),
        guard=(Exists(RM, lambda rr: Exists(Ballot, lambda bb: Exists(Majority, lambda mm: ForAll(
            Acceptor, lambda a: Implies(Member(mm, a), m2b[a, rr, bb, Decision.aborted]))))),),
        updates=(mAbort.set(True),), ref="PaxosCommit.tla Decide (abort)"),
))

ACC = Table("Acceptor", doc="Each acceptor, one Paxos instance per RM.", at=At("acceptor", acc), rows=(
    Row("AC-01", "Acceptor", "Phase1b", params=(acc, r, mb),
        guard=(m1a[r, mb], aMbal[r, acc] < mb),
        updates=(aMbal[r, acc].set(mb), m1b[r, acc, mb, aBal[r, acc], aVal[r, acc]].set(True)),
        ref="PaxosCommit.tla Phase1b", receives=(Receive("phase1a", (r, mb)),)),
    Row("AC-02", "Acceptor", "Phase2b", params=(acc, r, b, v),
        guard=(m2a[r, b, v], aMbal[r, acc] <= b),
        updates=(aMbal[r, acc].set(b), aBal[r, acc].set(b), aVal[r, acc].set(v),
                 m2b[acc, r, b, v].set(True)),
        ref="PaxosCommit.tla Phase2b", receives=(Receive("phase2a", (r, b, v)),)),
))

consistent = ForAll(RM, lambda r1: ForAll(RM, lambda r2: Not(And(
    rmState[r1] == RMState.aborted, rmState[r2] == RMState.committed))))

SPEC = Spec(
    name="paxoscommit",
    doc="Gray and Lamport's Paxos Commit (TLA+ examples): `rm` RMs, `acceptors` acceptors, ballots 0..maxballot.",
    ref="https://github.com/tlaplus/Examples/blob/master/specifications/transaction_commit/PaxosCommit.tla",
    vars=(rmState, aMbal, aBal, aVal, m1a, m1b, m2a, m2b, mCommit, mAbort),
    tables=(RMT, LEADER, ACC),
    properties=(
        Always("PCConsistent", consistent, "No RM has committed while another has aborted (TCConsistent)."),
        Always("DecisionUnique", Not(And(mCommit, mAbort)), "Commit and Abort are never both sent."),
        Sometimes("SomeCommit", Exists(RM, lambda rr: rmState[rr] == RMState.committed), "Some RM commits."),
        Sometimes("SomeAbort", Exists(RM, lambda rr: rmState[rr] == RMState.aborted), "Some RM aborts."),
        Sometimes("HigherBallotDecides", Exists(Acceptor, lambda a: Exists(RM, lambda rr: Exists(
            Decision, lambda d: m2b[a, rr, 1, d]))), "A ballot above 0 gets a phase2b vote (recovery runs)."),
    ),
    params=(ConfigParam("rm", 2, "number of resource managers", lo=1, hi=6),
            ConfigParam("acceptors", 3, "number of acceptors", lo=1, hi=5),
            ConfigParam("maxballot", 1, "ballots are 0..maxballot", lo=1, hi=3)),
    configs=(
        NamedConfig("tiny", (("rm", 1), ("acceptors", 3), ("maxballot", 1)), "1 RM, 3 acceptors, ballots {0,1}."),
        NamedConfig("ci", (("rm", 2), ("acceptors", 3), ("maxballot", 1)),
                    "2 RMs, 3 acceptors, ballots {0,1}: 1,321,761 distinct states (TLC)."),
    ),
    variants=(
        Variant("phase2a-ignores-phase1b",
                "Phase2a always proposes `prepared` for a higher ballot, ignoring the values reported by "
                "the majority's phase1b messages: a new leader overrides an abort that may already have "
                "been chosen, so one RM commits while another aborted.",
                breaks=("DecisionUnique", "PCConsistent"),
                edits=(DropRow("LD-02"), AddRow("Leader", Row(
                    "LD-02b", "Leader", "Phase2a", params=(mb, r, ms), sends_from=At("leader"),
                    guard=(Not(Exists(Decision, lambda d: m2a[r, mb, d])),
                           ForAll(Acceptor, lambda a: Implies(Member(ms, a), _mset_has(r, mb, a)))),
                    updates=(m2a[r, mb, Decision.prepared].set(True),),
                    ref="variant: Phase2a without the highest-vote rule"))),
                ref="Paxos phase 2a must pick the value of the highest-ballot vote",
                config="tiny"),
    ),
    lanes=(Lane("RM", RM, "a resource manager (it sends the phase2a of ballot 0 of its own instance)"),
           Lane("leader", doc="the leader of a ballot above 0 (any process may lead one) and the decision"),
           Lane("acceptor", Acceptor, "an acceptor (one Paxos instance per RM)")),
    # msgs is the set of messages ever sent: a message stays after it is read. The leader's Phase2a and
    # Decide read a majority's phase1b / phase2b messages, which a Receive (one message) cannot name.
    channels=(
        Channel("phase1a", (r, mb), m1a[r, mb], sender=At("leader"), receiver=At("acceptor", ALL), persistent=True,
                fields=(Field("ins", r), Field("bal", mb))),
        Channel("phase1b", (r, acc, m_mbal, m_bal, m_val), m1b[r, acc, m_mbal, m_bal, m_val], sender=At("acceptor", acc),
                receiver=At("leader"), persistent=True,
                fields=(Field("ins", r), Field("mbal", m_mbal), Field("bal", m_bal), Field("val", m_val))),
        Channel("phase2a", (r, b, v), m2a[r, b, v], sender=At("RM", r), receiver=At("acceptor", ALL), persistent=True,
                fields=(Field("ins", r), Field("bal", b), Field("val", v)),
                doc="ballot 0's is sent by the RM itself (RMPrepare, RMChooseToAbort), a higher ballot's by its "
                    "leader (Phase2a), which this sender does not tell apart"),
        Channel("phase2b", (acc, r, b, v), m2b[acc, r, b, v], sender=At("acceptor", acc), receiver=At("leader"),
                persistent=True, fields=(Field("ins", r), Field("bal", b), Field("val", v))),
        Channel("Commit", (), mCommit, sender=At("leader"), receiver=At("RM", ALL), persistent=True),
        Channel("Abort", (), mAbort, sender=At("leader"), receiver=At("RM", ALL), persistent=True),
    ),
)
