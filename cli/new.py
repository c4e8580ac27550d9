"""`txncheck new NAME`: a spec file to start from, which checks out of the box."""
from __future__ import annotations

import os
import re

from txncheck.spec.errors import ConfigError

SKELETON = '''"""{name}: a starting point written by `txncheck new`. Two clients take a lock from a server.

Check it:      txncheck check ./{name}.py
Break it:      txncheck check ./{name}.py --variant grant-when-locked     (exit 1: a counterexample)
Look at it:    txncheck check ./{name}.py --variant grant-when-locked --html
Lint it:       txncheck tables ./{name}.py --verify

Each Row is one transition: a guard over the current state and updates that all read it (TLA+'s
primed variables; a var a row does not update is unchanged). docs/tables.md is the language.
"""
from txncheck.spec.domains import BOOL, EnumDomain, IdSet
from txncheck.spec.expr import Count, Exists, Not, Param, Var
from txncheck.spec.model import (Always, ConfigParam, DropConjunct, NamedConfig, Row, Sometimes, Spec, Symmetry,
                                 Table, Variant)
from txncheck.spec.sequence import At, Channel, Lane

Client = IdSet("Client", size="clients", prefix="c")            # c1, c2, ... (config `clients`)
ClientState = EnumDomain("ClientState", ("idle", "waiting", "holding"))

state = Var("state", ClientState, index=(Client,), init=ClientState.idle, doc="each client's state")
locked = Var("locked", BOOL, init=False, doc="the server has granted the lock and not seen it released")
acquire = Var("acquire", BOOL, index=(Client,), init=False, doc="Acquire from the client in flight")
grant = Var("grant", BOOL, index=(Client,), init=False, doc="Grant to the client in flight")
release = Var("release", BOOL, index=(Client,), init=False, doc="Release from the client in flight")

c = Param("c", Client)

CLIENT = Table("client", status="state", at=At("client", c), doc="Each client.", rows=(
    Row("CL-01", "client", "request the lock", params=(c,),
        guard=(state[c] == ClientState.idle,),
        updates=(state[c].set(ClientState.waiting), acquire[c].set(True))),
    Row("CL-02", "client", "receive Grant", params=(c,),
        guard=(grant[c],),
        updates=(grant[c].set(False), state[c].set(ClientState.holding))),
    Row("CL-03", "client", "release the lock", params=(c,),
        guard=(state[c] == ClientState.holding,),
        updates=(state[c].set(ClientState.idle), release[c].set(True))),
))

SERVER = Table("server", at=At("server"), doc="The lock server.", rows=(
    Row("SV-01", "server", "receive Acquire: grant", params=(c,),
        guard=(acquire[c], Not(locked)),          # conjunct 1: only a free lock is granted
        updates=(acquire[c].set(False), locked.set(True), grant[c].set(True))),
    Row("SV-02", "server", "receive Release", params=(c,),
        guard=(release[c],),
        updates=(release[c].set(False), locked.set(False))),
))

SPEC = Spec(
    name="{name}",
    doc="A lock server and its clients (written by `txncheck new`).",
    vars=(state, locked, acquire, grant, release),
    tables=(CLIENT, SERVER),
    properties=(
        Always("MutualExclusion", Count(Client, lambda x: state[x] == ClientState.holding) <= 1,
               "At most one client holds the lock."),
        Sometimes("SomeoneHolds", Exists(Client, lambda x: state[x] == ClientState.holding),
                  "Some client gets the lock (MutualExclusion is not vacuous)."),
    ),
    params=(ConfigParam("clients", 2, "number of clients", lo=1, hi=8),),
    configs=(NamedConfig("tiny", (("clients", 2),), "2 clients."),
             NamedConfig("ci", (("clients", 4),), "4 clients.")),
    variants=(
        Variant("grant-when-locked", "The server grants without checking that the lock is free.",
                breaks=("MutualExclusion",), edits=(DropConjunct("SV-01", 1),)),
    ),
    symmetry=Symmetry((Client,)),
    # what the viewer draws: one lane per client and the server, and the messages between them
    lanes=(Lane("client", Client, "a client", param=c), Lane("server", doc="the lock server")),
    channels=(
        Channel("Acquire", (c,), acquire[c], sender=At("client", c), receiver=At("server")),
        Channel("Grant", (c,), grant[c], sender=At("server"), receiver=At("client", c)),
        Channel("Release", (c,), release[c], sender=At("client", c), receiver=At("server")),
    ),
)
'''

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def register(sub):
    p = sub.add_parser("new", help="write a spec file to start from (it checks out of the box)",
                       description="Write NAME.py: a small spec (two actors, messages, a property, a sometimes "
                                   "witness, two configs and a variant that breaks the property) to edit into "
                                   "your own protocol; `txncheck check ./NAME.py` checks it.")
    p.add_argument("name", metavar="NAME", help="the spec's name and file name (letters, digits, _)")
    p.add_argument("--dir", default=".", help="where to write NAME.py (default: here)")
    p.set_defaults(run=run)


def run(args) -> int:
    from txncheck.reports.atomic import write_atomic
    if not NAME.match(args.name):
        raise ConfigError(f"NAME {args.name!r}: use letters, digits and _, starting with a letter (e.g. fencing)")
    path = os.path.join(args.dir, f"{args.name}.py")
    if os.path.exists(path):
        raise ConfigError(f"{path} exists; give another NAME or --dir (txncheck new never overwrites a file)")
    write_atomic(path, SKELETON.format(name=args.name))
    shown = path if os.path.isabs(path) or path.startswith(".") else "./" + path
    print(f"wrote {path}\nnext: txncheck check {shown}")
    return 0
