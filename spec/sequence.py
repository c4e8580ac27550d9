"""What a sequence chart of a trace is drawn from: lanes (actor instances) and channels (messages).

A spec declares its `lanes`, in the left-to-right order a reader of the protocol expects, and
says where each row happens with an `At` (on its table, overridable per row). It declares its
`channels`: the state cells that hold messages in flight. Which step sends, delivers, drops or
duplicates a message is then read off the trace itself (a channel cell's copy count rising or
falling), so the rows need no per-row send/receive lists and cannot contradict the state. A
channel whose messages stay after delivery (a TLA+ `msgs` set) is `persistent`; the rows that read
such a message name it in `Row.receives`.

All of it is data over the spec's own expressions: `txncheck view` (reports/viewer) and the text
trace's story (traces/story.py) evaluate it on the states of a trace.
"""
from __future__ import annotations

from dataclasses import dataclass

from .domains import Domain
from .expr import Expr, ParamRef, lift


@dataclass(frozen=True)
class Lane:
    """A kind of actor instance drawn as one lane per index value: `Lane("partition", Part)` gives
    lanes `partition p1`, `partition p2`. `index=None`: a single lane (the transaction manager)."""

    name: str
    index: Domain | None = None
    doc: str = ""
    param: ParamRef | None = None  # names the index in `titles` and `stale`
    titles: tuple[tuple[Expr, str], ...] = ()  # (condition on `param` and the config, title) overrides
    stale: Expr | None = None  # in a state where it holds, the instance has been replaced: a zombie

    def __post_init__(self):
        object.__setattr__(self, "titles", tuple((lift(c), t) for c, t in self.titles))
        if self.stale is not None:
            object.__setattr__(self, "stale", lift(self.stale))


@dataclass(frozen=True, eq=False)
class At:
    """A place on the chart: lane `lane` at the index `index` evaluates to (an expression over the
    row's or channel's parameters and the state). `index=None` for an unindexed lane; `ALL` for
    every lane of that kind (a broadcast's receivers)."""

    lane: str
    index: Expr | None = None

    def __post_init__(self):
        if self.index is not None and not isinstance(self.index, str):
            object.__setattr__(self, "index", lift(self.index))


ALL = "*"  # At(lane, ALL): a message to every instance of the lane


@dataclass(frozen=True, eq=False)
class Receive:
    """A row receives message `key` (its channel's params, as expressions over the row's) of
    `channel`: of a persistent channel, it reads the message without consuming it; of any other, a
    copy it consumes is delivered on the channel's receiver (not dropped) even where the row happens
    elsewhere (a failover that finds an append durable). `when`: only where this holds."""

    channel: str
    key: tuple[Expr, ...] = ()
    when: Expr | None = None

    def __post_init__(self):
        object.__setattr__(self, "key", tuple(lift(k) for k in self.key))
        if self.when is not None:
            object.__setattr__(self, "when", lift(self.when))


@dataclass(frozen=True, eq=False)
class Field:
    """A field a message carries, shown in its label: `Field("epoch", b_e[i][p][k])` shows
    `epoch 0`; a field named "" shows its value alone (`EndTxn(COMMIT, epoch 0)`). The value is
    shown with the label of `domain`, by default the domain of `value` (an enum name, an id like
    `p1`, or a number); `when` hides the field where it does not apply."""

    name: str
    value: Expr
    when: Expr | None = None
    domain: Domain | None = None

    def __post_init__(self):
        object.__setattr__(self, "value", lift(self.value))
        if self.when is not None:
            object.__setattr__(self, "when", lift(self.when))


@dataclass(frozen=True, eq=False)
class Channel:
    """Messages in flight, one cell per message identity: `copies` (an expression over `params`,
    the cell's index) is how many copies of message `params` are in flight; a step that raises it
    sends (a second copy is a duplicate), a step that lowers it delivers, or, where the step's
    place is not `receiver`, drops. The message's name is the first of `names` whose condition
    holds (else `name`); `fields` label it. Both are evaluated in the state the message is sent in.

    `persistent`: a delivered message stays (a set of messages ever sent); a row that reads one
    lists it in `Row.receives` as the channel's `copies` expression for that message."""

    name: str
    params: tuple[ParamRef, ...]
    copies: Expr
    sender: At
    receiver: At
    names: tuple[tuple[Expr, str], ...] = ()
    fields: tuple[Field, ...] = ()
    persistent: bool = False
    doc: str = ""

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "copies", lift(self.copies))
        object.__setattr__(self, "names", tuple((lift(c), n) for c, n in self.names))
        object.__setattr__(self, "fields", tuple(self.fields))
