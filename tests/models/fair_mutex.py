"""Processes sharing one semaphore (tests/tlc/FairMutex.tla as tables): liveness under no, weak and
strong fairness. The base spec is strongly fair per process (TLA+'s `\\A p: SF_vars(Proc_(p))`); the
variants weaken only the fairness, as the TLA+ module's specifications Unfair, Weak and WeakNext do."""
from txncheck.spec.domains import BOOL, EnumDomain, IdSet
from txncheck.spec.expr import And, Exists, ForAll, Not, Param, Var
from txncheck.spec.fairness import SetFairness, StrongFair, WeakFair
from txncheck.spec.model import (Always, ConfigParam, Eventually, LeadsTo, NamedConfig, Row, Spec, Table,
                                 Variant)

Proc = IdSet("Proc", size="n", prefix="p")
PC = EnumDomain("PC", ("idle", "waiting", "critical"))
pc = Var("pc", PC, index=(Proc,), init=PC.idle)
free = Var("free", BOOL, init=True)
p = Param("p", Proc)

PROCS = Table("Proc", status="pc", rows=(
    Row("P-1", "Proc", "Request", params=(p,), guard=(pc[p] == PC.idle,), updates=(pc[p].set(PC.waiting),)),
    Row("P-2", "Proc", "Enter", params=(p,), guard=(pc[p] == PC.waiting, free),
        updates=(pc[p].set(PC.critical), free.set(False))),
    Row("P-3", "Proc", "Exit", params=(p,), guard=(pc[p] == PC.critical,),
        updates=(pc[p].set(PC.idle), free.set(True))),
))

SPEC = Spec(
    name="fair_mutex",
    doc="A semaphore shared by processes, with liveness under fairness.",
    vars=(pc, free),
    tables=(PROCS,),
    properties=(
        Always("Mutex", ForAll(Proc, lambda a: ForAll(Proc, lambda b: Not(And(
            a != b, pc[a] == PC.critical, pc[b] == PC.critical))))),
        Eventually("SomeoneEnters", Exists(Proc, lambda a: pc[a] == PC.critical)),
        LeadsTo("NoStarvation", Exists(Proc, lambda a: pc[a] == PC.waiting),
                Exists(Proc, lambda a: pc[a] == PC.critical)),
        LeadsTo("FirstEnters", pc[0] == PC.waiting, pc[0] == PC.critical,
                "The first process, once waiting, enters: needs strong fairness."),
    ),
    params=(ConfigParam("n", 2, "processes", lo=1, hi=4),),
    configs=(NamedConfig("tiny", (("n", 2),), "2 processes: 8 states (TLC's count)."),),
    fairness=(StrongFair("Proc", per="p"),),
    variants=(
        Variant("unfair", "No fairness: a behaviour may stop anywhere.", breaks=("SomeoneEnters",),
                edits=(SetFairness(()),)),
        Variant("weak", "Weak fairness per process: the first process may starve.", breaks=("FirstEnters",),
                edits=(SetFairness((WeakFair("Proc", per="p"),)),)),
        Variant("weak-next", "Weak fairness of the whole next-state relation.", breaks=("FirstEnters",),
                edits=(SetFairness((WeakFair(),)),)),
    ),
)
