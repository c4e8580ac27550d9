"""A two-actor spec whose only behaviour is a long exchange: `rounds` pings and pongs, one message
in flight at a time. Its witness of `Done` is 2·rounds steps long (the viewer's long-trace test)."""
from txncheck.spec.domains import BOOL, IntRange
from txncheck.spec.expr import Config, Not, Var
from txncheck.spec.model import ConfigParam, NamedConfig, Row, Sometimes, Spec, Table
from txncheck.spec.sequence import At, Channel, Lane

Count = IntRange("Count", 0, "rounds")
count = Var("count", Count, init=0, doc="pongs received")
ping = Var("ping", BOOL, init=False, doc="a ping in flight")
pong = Var("pong", BOOL, init=False, doc="a pong in flight")

SPEC = Spec(
    name="pingpong", doc="ping, pong, `rounds` times",
    vars=(count, ping, pong),
    tables=(
        Table("client", at=At("client"), rows=(
            Row("C-01", "client", "send Ping", guard=(Not(ping), Not(pong), count < Config("rounds")),
                updates=(ping.set(True),)),
            Row("C-02", "client", "receive Pong", guard=(pong,), updates=(pong.set(False), count.set(count + 1))),
        )),
        Table("server", at=At("server"), rows=(
            Row("S-01", "server", "receive Ping, send Pong", guard=(ping,), updates=(ping.set(False), pong.set(True))),
        )),
    ),
    properties=(Sometimes("Done", count == Config("rounds"), "every round was played"),),
    params=(ConfigParam("rounds", 3, "rounds", lo=1, hi=5000),),
    configs=(NamedConfig("default", (("rounds", 3),)),),
    lanes=(Lane("client"), Lane("server")),
    channels=(
        Channel("Ping", (), ping, sender=At("client"), receiver=At("server"), fields=()),
        Channel("Pong", (), pong, sender=At("server"), receiver=At("client")),
    ),
)
