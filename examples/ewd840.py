"""Dijkstra's termination detection on a ring (EWD 840), as txncheck tables.

Follows the TLA+ specification EWD840 by Stephan Merz in the TLA+ examples:
  https://github.com/tlaplus/Examples/blob/master/specifications/ewd840/EWD840.tla
  (read at commit 32a32c7b0b97562da2dd4b2e55b7f81cd6fea2b9; MIT License, copyright (c) 2016 the TLA+
  project and its contributors, https://github.com/tlaplus/Examples/blob/master/LICENSE.md)
The algorithm: E. W. Dijkstra, W. H. J. Feijen, A. J. M. van Gasteren, "Derivation of a termination
detection algorithm for distributed computations", Inf. Proc. Letters 16:217-219 (1983).

TLC's counts (specifications/ewd840/manifest.json; TLC 2.20 for the initial states and depths):
  EWD840.cfg,      N = 3: 192 initial states, 302 distinct states, depth 9   -> config `tiny`
  EWD840_json.cfg, N = 4: 1,024 initial states, 1,566 distinct states, depth 12  -> config `n4`
All reproduced exactly; TLC's depth counts states, txncheck's steps (8 and 11). TLC's "states generated"
(2,001 for N = 3) counts the initial states and, for a guard written as a disjunction, one successor per
true disjunct: 192 + 1,625 (txncheck's generated) + 184 such repeats = 2,001 (docs/examples.md).

The model, in my words: nodes 0..N-1 sit on a ring; each is active or passive and white or black. An
active node may wake any other node (a message) and may go passive. A token, white or black, travels
from node N-1 down to node 0. Node 0 starts a round by sending a white token to node N-1; a node
passes the token on once it is passive (or when the round is already spoiled), blackening the token
if the node itself is black, and turns white. A node that wakes a node with a higher number turns
black, since the token may already have passed that node. Node 0 concludes that every node is passive
when the token comes back white, node 0 is white and node 0 is passive.

As in the TLA+ spec, every node starts active or passive and white or black, and the token starts
black at any node (`init=ANY`: every value of the var's domain, TLA+'s `x \\in S` in Init). Liveness
is the TLA+ spec's: once every node is passive, termination is detected (`LeadsTo`), under weak
fairness of the detector's actions as one (TLA+'s `WF_vars(System)`); the variant `unfair` drops the
fairness and breaks it, as TLC says of `Init /\\ [][Next]_vars`.

Check it:   txncheck check ./ewd840.py            (302 distinct states)
            txncheck check ./ewd840.py --config n4  (1,566)
Break it:   txncheck check ./ewd840.py --variant send-up-stays-white --continue   (exit 1)
            (also: token-not-stained, probe-needs-black-token)
"""
from txncheck.spec.domains import BOOL, ConstPlus, EnumDomain, IntRange
from txncheck.spec.expr import ANY, And, Config, Exists, ForAll, If, Implies, Not, Or, Param, Var
from txncheck.spec.fairness import SetFairness, WeakFair
from txncheck.spec.model import (Always, ConfigParam, LeadsTo, NamedConfig, Recoverable, ReplaceGuard, ReplaceUpdate,
                                 Row, Sometimes, Spec, Table, Variant)

Node = IntRange("Node", 0, ConstPlus("n", -1))  # the ring: nodes 0..n-1, numbered (the token goes down)
Color = EnumDomain("Color", ("white", "black"))

active = Var("active", BOOL, index=(Node,), init=ANY, doc="the node is working (not passive)")
color = Var("color", Color, index=(Node,), init=ANY, doc="black: the node woke a node the token passed")
tpos = Var("tpos", Node, init=ANY, doc="the node that holds the token")
tcolor = Var("tcolor", Color, init=Color.black, doc="the token's color: black spoils the round")

i = Param("i", Node)
j = Param("j", Node)

DETECTOR = Table("Detector", doc="The token: the termination detection itself.", rows=(
    Row("TD-1", "Detector", "node 0 starts a round",
        guard=(tpos == 0, Or(tcolor == Color.black, color[0] == Color.black)),
        updates=(tpos.set(Config("n") - 1), tcolor.set(Color.white), color[0].set(Color.white)),
        ref="EWD840.tla InitiateProbe"),
    Row("TD-2", "Detector", "a node passes the token on", params=(i,),
        guard=(i != 0, tpos == i, Or(Not(active[i]), color[i] == Color.black, tcolor == Color.black)),
        updates=(tpos.set(i - 1),
                 tcolor.set(If(color[i] == Color.black, Color.black, tcolor)),  # a black node stains the token
                 color[i].set(Color.white)),
        ref="EWD840.tla PassToken"),
))

NODES = Table("Node", status="active", doc="The computation being watched.", rows=(
    Row("ND-1", "Node", "wake another node", params=(i, j),
        guard=(active[i], i != j),
        updates=(active[j].set(True), color[i].set(If(j > i, Color.black, color[i]))),
        ref="EWD840.tla SendMsg"),
    Row("ND-2", "Node", "go passive", params=(i,),
        guard=(active[i],),
        updates=(active[i].set(False),),
        ref="EWD840.tla Deactivate"),
))

terminated = ForAll(Node, lambda x: Not(active[x]))
detected = And(tpos == 0, tcolor == Color.white, color[0] == Color.white, Not(active[0]))
# Dijkstra's invariant: the nodes the token has passed are passive, or some node the token has yet
# to visit (0..tpos) is black, or the token is black.
dijkstra = Or(ForAll(Node, lambda x: Implies(tpos < x, Not(active[x]))),
              Exists(Node, lambda x: And(x <= tpos, color[x] == Color.black)),
              tcolor == Color.black)

SPEC = Spec(
    name="ewd840",
    doc="Dijkstra's termination detection on a ring (EWD 840), after the TLA+ examples' EWD840.tla.",
    vars=(active, color, tpos, tcolor),
    tables=(DETECTOR, NODES),
    properties=(
        Always("TerminationDetection", Implies(detected, terminated),
               "When node 0 concludes termination, every node is passive."),
        Always("Inv", dijkstra, "Dijkstra's invariant (P0 or P1 or P2)."),
        Sometimes("Detected", detected, "Node 0 concludes termination (TerminationDetection is not vacuous)."),
        Recoverable("DetectionReachable", detected, when=terminated,
                    doc="Once every node is passive, the token alone can still reach a conclusion."),
        LeadsTo("Liveness", terminated, detected,
                "Termination is eventually detected (EWD840.tla Liveness, under WF of the detector)."),
    ),
    params=(ConfigParam("n", 3, "number of nodes on the ring", lo=1, hi=8),),
    configs=(NamedConfig("tiny", (("n", 3),), "N = 3: 302 distinct states (TLC, EWD840.cfg)."),
             NamedConfig("n4", (("n", 4),), "N = 4: 1,566 distinct states (TLC, EWD840_json.cfg).")),
    fairness=(WeakFair("Detector"),),  # WF_vars(System): the detector's actions as one
    terminal=And(detected, terminated),  # termination detected: nothing left to do (TLC: CHECK_DEADLOCK FALSE)
    variants=(
        Variant("send-up-stays-white",
                "A node that wakes a higher-numbered node stays white: the token misses the wake-up.",
                breaks=("TerminationDetection", "Inv"),
                edits=(ReplaceUpdate("ND-1", "color", color[i]),)),
        Variant("token-not-stained",
                "A black node passes the token on without blackening it.",
                breaks=("TerminationDetection", "Inv"),
                edits=(ReplaceUpdate("TD-2", "tcolor", tcolor),)),
        Variant("probe-needs-black-token",
                "Node 0 starts a new round only when the token came back black, not when node 0 itself is black.",
                breaks=("DetectionReachable",),
                edits=(ReplaceGuard("TD-1", (tpos == 0, tcolor == Color.black)),)),
        Variant("unfair", "No fairness (TLA+'s Init /\\ [][Next]_vars): the detector may stop for good.",
                breaks=("Liveness",), edits=(SetFairness(()),)),
    ),
)
