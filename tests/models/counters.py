"""Counters that move up and down, and an alarm raised at the top corner: a state graph of top+1 to the power k
states with up to 2k edges each, two leads_to properties that can be violated only in the alarm states (one state),
and a recoverable property judged over the whole graph. Acknowledged's goal holds almost everywhere; Rearmed's
almost nowhere, so judging it on the whole graph looks at almost every edge. Alarmed is violated (the counters may
wander forever) and its restricted graph is every state but the alarm's.
For tests/test_judging_memory.py: judging the whole graph in memory needs far more than the budgeted search or the
restricted graph of `checker/vector/live.py`, and unlike a Kafka config the sizes do not move with the Kafka spec."""
from txncheck.spec.domains import BOOL, IdSet, IntRange
from txncheck.spec.expr import And, Config, ForAll, Not, Param, Var
from txncheck.spec.fairness import WeakFair
from txncheck.spec.model import ConfigParam, LeadsTo, NamedConfig, Recoverable, Row, Spec, Table

Counter = IdSet("Counter", size="k", prefix="c")
x = Var("x", IntRange("Val", 0, "top"), index=(Counter,), init=0, doc="a counter")
alarm = Var("alarm", BOOL, init=False, doc="every counter reached the top")
c = Param("c", Counter)
TOP = Config("top")

SPEC = Spec(
    name="counters", doc="counters and an alarm at the top corner",
    vars=(x, alarm),
    tables=(
        Table("Counters", rows=(
            Row("U-1", "Counters", "count up", params=(c,), guard=(Not(alarm), x[c] < TOP),
                updates=(x[c].set(x[c] + 1),)),
            Row("U-2", "Counters", "count down", params=(c,), guard=(Not(alarm), x[c] > 0), updates=(x[c].set(x[c] - 1),)),
        )),
        Table("Alarm", rows=(
            Row("A-1", "Alarm", "raise", guard=(Not(alarm), ForAll(Counter, lambda d: x[d] == TOP)),
                updates=(alarm.set(True),)),
            Row("A-2", "Alarm", "acknowledge", guard=(alarm,), updates=(alarm.set(False),)),
        )),
    ),
    properties=(LeadsTo("Acknowledged", alarm, Not(alarm), "A raised alarm is acknowledged."),
                LeadsTo("Rearmed", alarm, And(Not(alarm), ForAll(Counter, lambda d: x[d] == TOP)),
                        "A raised alarm is acknowledged with every counter still at the top."),
                Recoverable("CanReset", ForAll(Counter, lambda d: x[d] == 0), "Every counter can go back to 0."),
                LeadsTo("Alarmed", ForAll(Counter, lambda d: x[d] == 0), alarm,
                        "From every counter at 0 the alarm is raised (it need not be: the counters need not climb).")),
    params=(ConfigParam("k", 4, "counters", lo=1, hi=6), ConfigParam("top", 39, "largest counter value", lo=1, hi=99)),
    configs=(NamedConfig("big", (("k", 4), ("top", 39)), "4 counters of 0..39: 2,560,000 states."),
             NamedConfig("wide", (("k", 6), ("top", 11)),
                         "6 counters of 0..11: 2,985,984 states with up to 12 edges each."),),
    fairness=(WeakFair("Alarm"),),
)
