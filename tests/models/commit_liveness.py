"""The shipped twophase with tests/tlc/Commit.tla's liveness properties; its variants set the fairness of
that module's specifications (the base spec is WeakNext: weak fairness of the whole next-state relation)."""
from dataclasses import replace

from txncheck.spec.expr import Exists, ForAll
from txncheck.spec.fairness import SetFairness, WeakFair
from txncheck.spec.model import Eventually, LeadsTo, Variant
from txncheck.spec.twophase import RM, SPEC as TWOPHASE, RMState, TMState, rmState, tmState

SPEC = replace(
    TWOPHASE, name="commit_liveness",
    properties=TWOPHASE.properties + (
        Eventually("Termination", ForAll(RM, lambda r: rmState[r].is_in(RMState.committed, RMState.aborted)),
                   "Every RM ends committed or aborted."),
        Eventually("AllCommit", ForAll(RM, lambda r: rmState[r] == RMState.committed),
                   "Every RM commits (false: any RM may abort)."),
        LeadsTo("PreparedDecides", Exists(RM, lambda r: rmState[r] == RMState.prepared), tmState == TMState.done,
                "Once an RM is prepared, the TM decides."),
    ),
    fairness=(WeakFair(),),
    variants=TWOPHASE.variants + (
        Variant("unfair", "no fairness: the behaviour may stop anywhere", breaks=("Termination",),
                edits=(SetFairness(()),)),
        Variant("weak-rm-only", "\\A r: WF_vars(RMAct(r)): the TM may stop", breaks=("Termination",),
                edits=(SetFairness((WeakFair("RM", per="rm"),)),)),
    ),
)
