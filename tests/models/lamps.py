"""Lamps that start on or off (several initial states: `init=ANY` and an init constraint), for
tests/test_initial_states.py. A switch turns a lamp on only while every lamp is off; the variant drops
that check. Symmetric in the lamps."""
from txncheck.spec.domains import BOOL, EnumDomain, IdSet
from txncheck.spec.expr import ANY, And, Count, Exists, Not, OneOf, Param, Var
from txncheck.spec.model import (Always, ConfigParam, DropConjunct, NamedConfig, Row, Sometimes, Spec, Symmetry,
                                 Table, Variant)

Lamp = IdSet("Lamp", size="n", prefix="l")
Mode = EnumDomain("Mode", ("eco", "normal", "boost"))
on = Var("on", BOOL, index=(Lamp,), init=ANY, doc="the lamp is lit")
mode = Var("mode", Mode, init=OneOf(Mode.eco, Mode.normal), doc="the switch's mode")
l = Param("l", Lamp)
lit = Count(Lamp, lambda m: on[m])

SPEC = Spec(
    name="lamps", doc="lamps that start on or off",
    vars=(on, mode),
    tables=(Table("Switch", rows=(
        Row("S-1", "Switch", "turn a lamp on", params=(l,), guard=(Not(on[l]), lit == 0), updates=(on[l].set(True),)),
        Row("S-2", "Switch", "turn a lamp off", params=(l,), guard=(on[l],), updates=(on[l].set(False),)),
        Row("S-3", "Switch", "boost", guard=(mode == Mode.normal,), updates=(mode.set(Mode.boost),)),
    )),),
    init=(lit <= 1,),  # at most one lamp starts lit
    properties=(
        Always("AtMostOne", lit <= 1, "At most one lamp is lit."),
        Sometimes("Boosted", And(mode == Mode.boost, Exists(Lamp, lambda m: on[m])), "A lit lamp in boost mode."),
    ),
    params=(ConfigParam("n", 3, "lamps", lo=1, hi=6),),
    configs=(NamedConfig("tiny", (("n", 3),), "3 lamps: 8 initial states, 12 states."),),
    variants=(Variant("no-check", "turning a lamp on ignores the others", ("AtMostOne",), (DropConjunct("S-1", 1),)),),
    symmetry=Symmetry((Lamp,)),
)
