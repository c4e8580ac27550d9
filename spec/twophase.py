"""Lamport's TwoPhase commit (TLA+ examples, `TwoPhase.tla`), as tables.

State and actions match the TLA+ original one for one: `msgs` is the set of messages ever sent
(never removed), as a boolean per message of the finite alphabet {Prepared(rm), Commit, Abort}.
A stuttering step (e.g. RMRcvCommitMsg by an RM already committed) adds no state, so distinct
state counts equal TLC's: 288 for three RMs.
"""
from .domains import BOOL, EnumDomain, IdSet
from .expr import And, Exists, ForAll, Implies, Not, Or, Param, Var
from .sequence import ALL, At, Channel, Lane, Receive
from .model import (Always, ConfigParam, DropConjunct, NamedConfig, Row, Sometimes, Spec, Symmetry,
                    Table, Variant)

RM = IdSet("RM", size="rm", prefix="r")
RMState = EnumDomain("RMState", ("working", "prepared", "committed", "aborted"))
TMState = EnumDomain("TMState", ("init", "done"))

rmState = Var("rmState", RMState, index=(RM,), init=RMState.working)
tmState = Var("tmState", TMState, init=TMState.init)
tmPrepared = Var("tmPrepared", BOOL, index=(RM,), init=False, doc="the set of RMs the TM knows prepared")
msgPrepared = Var("msgPrepared", BOOL, index=(RM,), init=False, doc="[type |-> Prepared, rm |-> rm] ∈ msgs")
msgCommit = Var("msgCommit", BOOL, init=False, doc="[type |-> Commit] ∈ msgs")
msgAbort = Var("msgAbort", BOOL, init=False, doc="[type |-> Abort] ∈ msgs")

rm = Param("rm", RM)
r = Param("r", RM)

TM = Table("TM", status="tmState", doc="The transaction manager.", at=At("TM"), rows=(
    Row("TM-01", "TM", "TMRcvPrepared", params=(rm,),
        guard=(tmState == TMState.init, msgPrepared[rm]),
        updates=(tmPrepared[rm].set(True),), ref="TwoPhase.tla TMRcvPrepared", receives=(Receive("Prepared", (rm,)),)),
    Row("TM-02", "TM", "TMCommit",
        guard=(tmState == TMState.init, ForAll(RM, lambda r: tmPrepared[r])),
        updates=(tmState.set(TMState.done), msgCommit.set(True)), ref="TwoPhase.tla TMCommit"),
    Row("TM-03", "TM", "TMAbort",
        guard=(tmState == TMState.init,),
        updates=(tmState.set(TMState.done), msgAbort.set(True)), ref="TwoPhase.tla TMAbort"),
))

RMT = Table("RM", status="rmState", doc="Each resource manager.", at=At("RM", rm), rows=(
    Row("RM-01", "RM", "RMPrepare", params=(rm,),
        guard=(rmState[rm] == RMState.working,),
        updates=(rmState[rm].set(RMState.prepared), msgPrepared[rm].set(True)), ref="TwoPhase.tla RMPrepare"),
    Row("RM-02", "RM", "RMChooseToAbort", params=(rm,),
        guard=(rmState[rm] == RMState.working,),
        updates=(rmState[rm].set(RMState.aborted),), ref="TwoPhase.tla RMChooseToAbort"),
    Row("RM-03", "RM", "RMRcvCommitMsg", params=(rm,),
        guard=(msgCommit,),
        updates=(rmState[rm].set(RMState.committed),), ref="TwoPhase.tla RMRcvCommitMsg",
        receives=(Receive("Commit"),)),
    Row("RM-04", "RM", "RMRcvAbortMsg", params=(rm,),
        guard=(msgAbort,),
        updates=(rmState[rm].set(RMState.aborted),), ref="TwoPhase.tla RMRcvAbortMsg",
        receives=(Receive("Abort"),)),
))

consistent = ForAll(RM, lambda r1: ForAll(RM, lambda r2: Not(And(
    rmState[r1] == RMState.aborted, rmState[r2] == RMState.committed))))

SPEC = Spec(
    name="twophase",
    doc="Lamport's TwoPhase commit protocol (TLA+ examples), with `rm` resource managers.",
    ref="https://github.com/tlaplus/Examples/blob/master/specifications/transaction_commit/TwoPhase.tla",
    vars=(rmState, tmState, tmPrepared, msgPrepared, msgCommit, msgAbort),
    tables=(TM, RMT),
    properties=(
        Always("TCConsistent", consistent, "No RM has committed while another has aborted."),
        Sometimes("SomeCommit", Exists(RM, lambda r: rmState[r] == RMState.committed),
                  "Some RM commits (the invariant is not vacuous)."),
        Sometimes("SomeAbort", Exists(RM, lambda r: rmState[r] == RMState.aborted), "Some RM aborts."),
    ),
    params=(ConfigParam("rm", 3, "number of resource managers", lo=1, hi=12),),
    configs=(
        NamedConfig("tiny", (("rm", 3),), "3 RMs: 288 distinct states (TLC's count)."),
        NamedConfig("ci", (("rm", 5),), "5 RMs: 8,832 distinct states."),
        NamedConfig("nightly", (("rm", 8),), "8 RMs: 1,745,408 distinct states."),
    ),
    variants=(
        Variant("commit-without-all-prepared",
                "TMCommit no longer waits for every RM's Prepared message: the TM may commit while an "
                "RM is still working, which then chooses to abort.",
                breaks=("TCConsistent",), edits=(DropConjunct("TM-02", 1),),
                ref="the defining condition of two-phase commit",
                trigger="RMChooseToAbort(r1); TMCommit; RMRcvCommitMsg(r2)"),
    ),
    symmetry=Symmetry((RM,)),
    lanes=(Lane("TM", doc="the transaction manager"), Lane("RM", RM, "a resource manager")),
    # msgs is the set of messages ever sent: a message stays after it is read
    channels=(
        Channel("Prepared", (r,), msgPrepared[r], sender=At("RM", r), receiver=At("TM"), persistent=True),
        Channel("Commit", (), msgCommit, sender=At("TM"), receiver=At("RM", ALL), persistent=True),
        Channel("Abort", (), msgAbort, sender=At("TM"), receiver=At("RM", ALL), persistent=True),
    ),
    invariants_for_induction=(
        Always("TPInductive", And(
            Implies(msgCommit, And(tmState == TMState.done, ForAll(RM, lambda r: tmPrepared[r]))),
            Implies(msgAbort, tmState == TMState.done),
            Not(And(msgCommit, msgAbort)),
            ForAll(RM, lambda r: And(
                Implies(tmPrepared[r], msgPrepared[r]),
                Implies(msgPrepared[r], rmState[r] != RMState.working),
                Implies(rmState[r] == RMState.committed, msgCommit),
                Implies(rmState[r] == RMState.aborted, Or(msgAbort, Not(msgPrepared[r])))))),
               "Strengthening invariant (after TwoPhase.tla's TPInv): with TCConsistent it is inductive."),
    ),
    terminal=ForAll(RM, lambda r: rmState[r].is_in(RMState.committed, RMState.aborted)),
)
