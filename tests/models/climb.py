"""A counter that climbs to 3 and falls back, with a property of each kind the graph judges.

BelowTwo breaks at 2, before 3 is found: a search stopped at that violation would call TopReachable (3 can
be reached from everywhere) violated. Nothing is fair, so the counter may stop at 3 and BackToZero is violated.
"""
from txncheck.spec.domains import IntRange
from txncheck.spec.expr import Var
from txncheck.spec.model import Always, LeadsTo, NamedConfig, Recoverable, Row, Spec, Table

x = Var("x", IntRange("Val", 0, 3), init=0, doc="a counter")
SPEC = Spec(
    name="climb", doc="a counter that climbs and falls back",
    vars=(x,),
    tables=(Table("Counter", rows=(
        Row("C-1", "Counter", "up", guard=(x < 3,), updates=(x.set(x + 1),)),
        Row("C-2", "Counter", "down", guard=(x > 0,), updates=(x.set(x - 1),)),
    )),),
    properties=(Always("BelowTwo", x < 2, "the counter stays below 2"),
                Recoverable("TopReachable", x == 3, "the counter can always reach 3"),
                LeadsTo("BackToZero", x == 3, x == 0, "from the top the counter comes back to 0")),
    configs=(NamedConfig("small", (), "four values"),),
)
