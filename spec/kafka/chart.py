"""The sequence chart of a Kafka trace (spec/sequence.py): lanes as a Kafka engineer draws them, and
the state cells that hold messages in flight.

Lanes, left to right: the application's producer client per incarnation (with `ctp` also its
consumer: OffsetFetch, CS-01), the transaction coordinator per transactional id, its transaction
log partition (`__transaction_state`), the partition leaders (with `ctp`, partition `parts` is the
group's `__consumer_offsets` partition, led by the group coordinator), and the network (message
loss). Rows say where they happen with their table's or their own `at`; faults sit on the lane of
what fails (a producer crash on the crashed incarnation, a coordinator failover on the coordinator).

Messages are named as on the wire (kafka-protocol §3), with Kafka's error codes (`_coord_error`,
`_produce_error`).
"""
from txncheck.spec.domains import EnumDomain, IntRange
from txncheck.spec.expr import TRUE, And, Config, Exists, If, Not
from txncheck.spec.sequence import At, Channel, Field, Lane

from .domains import MAXT, OP, ROTATION, pid_of, CResp, Inc, KIP98, Part, PcState, Pend, PResp, Result, Rq, Tid, TV2, VERIFY, Ver, is_op, tid_of
from .params import b, c, i, k, p, T, t
from .state import (b_rot, n_creq_rot, n_cresp_rot, n_late_rot, n_mk_rot, n_mkd_rot, tc_pend_rot, tc_rot, b_e, b_s, call_offset, n_creq, n_creq_e, n_creq_p, n_creq_rq, n_late, n_late_e, n_late_p,
                    n_late_rq, n_cresp, n_cresp_e, n_mk, n_mk_e, n_mk_res, n_mkd, n_mkd_c, n_mkd_e, n_mkd_res, n_oab,
                    n_pres, n_prod, pc_rq, pc_rqp, pc_st, pl_vb, tc_pend, tc_pend_e, tc_pend_p)


# places of the tables' rows (the tables import these)
PRODUCER = At("producer", i)
COORDINATOR = At("coordinator", T)
TXN_LOG = At("__transaction_state", t)
PARTITION = At("partition", p)
NETWORK = At("network")

LANES = (
    Lane("producer", Inc, "the application's producer client (TransactionManager), one lane per incarnation; "
         "with ctp also its consumer (OffsetFetch)", param=i,
         # a later incarnation with the same transactional.id has started: this one is a zombie
         stale=Exists(Inc, lambda j: And(j > i, tid_of(j) == tid_of(i), pc_st[j] != PcState.IDLE))),
    Lane("coordinator", Tid, "the transaction coordinator of a transactional id: request handlers, timeouts, "
         "failover"),
    Lane("__transaction_state", Tid, "the coordinator's transaction log partition: an append becomes durable"),
    Lane("partition", Part, "a partition leader; with ctp, partition `parts` is the group's __consumer_offsets "
         "partition, led by the group coordinator", param=p,
         titles=((is_op(p), "group coordinator (__consumer_offsets)"),)),
    Lane("network", None, "the network: lost coordinator requests and responses"),
)


# Error codes as Kafka names them (kafka-protocol §2.2 error classes, §3 decision tables). The model
# keeps a response's class (CResp, PResp: what the client does with it); where one class stands for
# several codes under the configuration, the label lists them (A/B). A label may only read the
# message's own cells and the configuration: the story takes a label that changes while the message
# is in flight for a rewrite of it.
CoordError = EnumDomain("CoordinatorError", (
    "NONE", "CONCURRENT_TRANSACTIONS", "CONCURRENT_TRANSACTIONS/NOT_COORDINATOR", "PRODUCER_FENCED",
    "INVALID_TXN_STATE", "TRANSACTION_ABORTABLE"))
ProduceError = EnumDomain("ProduceError", (
    "NONE", "NOT_ENOUGH_REPLICAS", "OUT_OF_ORDER_SEQUENCE_NUMBER", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH",
    "INVALID_PRODUCER_EPOCH/PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH/INVALID_TXN_STATE",
    "INVALID_PRODUCER_EPOCH/TRANSACTION_ABORTABLE/INVALID_TXN_STATE", "ILLEGAL_GENERATION",
    "ILLEGAL_GENERATION/INVALID_TXN_STATE", "ILLEGAL_GENERATION/TRANSACTION_ABORTABLE/INVALID_TXN_STATE",
    "NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS/NOT_LEADER_OR_FOLLOWER"))
VerifyError = EnumDomain("VerifyError", ("NONE", "NOT_COORDINATOR"))


# RETRY: CONCURRENT_TRANSACTIONS (§3.1 I3/I5/I11, §3.2 A3, §3.6 E3/E6, §3.7 F3/F10), or NOT_COORDINATOR
# when a failover fails the callback the client waits for (§3.10 L1, FLT-03).
_coord_error = If(n_cresp[i] == CResp.OK, CoordError.NONE,
                  If(n_cresp[i] == CResp.FENCED, CoordError.PRODUCER_FENCED,
                     If(n_cresp[i] == CResp.FATAL, CoordError.INVALID_TXN_STATE,
                        If(n_cresp[i] == CResp.ABORTABLE, CoordError.TRANSACTION_ABORTABLE,
                           If(Config("failovers") == 0, CoordError.CONCURRENT_TRANSACTIONS,
                              CoordError.lit("CONCURRENT_TRANSACTIONS/NOT_COORDINATOR"))))))

# Produce / TxnOffsetCommit (§3.4, §3.5, §3.11). RETRY: NOT_ENOUGH_REPLICAS (P3, a coordinator error of
# verification) or, with leader changes, NOT_LEADER_OR_FOLLOWER. OOS: OUT_OF_ORDER_SEQUENCE_NUMBER (P7-P9). FENCED (on op only): INVALID_PRODUCER_EPOCH
# (O4, or verification's PRODUCER_FENCED as the leader passes it on), fatal for TxnOffsetCommit. ABORTABLE:
# INVALID_PRODUCER_EPOCH (P6, or from verification, V2) on a data partition or ILLEGAL_GENERATION (O2) on op; with
# verification also INVALID_TXN_STATE (P4, the guard cleared by a marker) and under (b) TRANSACTION_ABORTABLE (V5).
_pres = n_pres[i][p][k][b]
_abortable = If(is_op(p),
                If(KIP98, ProduceError.ILLEGAL_GENERATION,
                   If(VERIFY, ProduceError.lit("ILLEGAL_GENERATION/TRANSACTION_ABORTABLE/INVALID_TXN_STATE"),
                      ProduceError.lit("ILLEGAL_GENERATION/INVALID_TXN_STATE"))),
                If(KIP98, ProduceError.INVALID_PRODUCER_EPOCH,
                   If(VERIFY, ProduceError.lit("INVALID_PRODUCER_EPOCH/TRANSACTION_ABORTABLE/INVALID_TXN_STATE"),
                      ProduceError.lit("INVALID_PRODUCER_EPOCH/INVALID_TXN_STATE"))))
# RETRY with leader changes (FLT-05): also NOT_LEADER_OR_FOLLOWER (§3.13 LC4, LC5), the only one under (a)
_retriable = If(Config("leader_failovers") == 0, ProduceError.NOT_ENOUGH_REPLICAS,
                If(KIP98, ProduceError.NOT_LEADER_OR_FOLLOWER,
                   ProduceError.lit("NOT_ENOUGH_REPLICAS/NOT_LEADER_OR_FOLLOWER")))
_produce_error = If(_pres == PResp.OK, ProduceError.NONE,
                    If(_pres == PResp.RETRY, _retriable,
                       If(_pres == PResp.OOS, ProduceError.OUT_OF_ORDER_SEQUENCE_NUMBER,
                          If(_pres == PResp.FENCED, ProduceError.INVALID_PRODUCER_EPOCH, _abortable))))

_rq = pc_rq[i]  # the client's outstanding request, which a response answers
_end = _rq.is_in(Rq.COMMIT, Rq.ABORT)
_add = _rq == Rq.ADD
_offsets = And(_add, is_op(pc_rqp[i]))


def _request(rq, part):
    """A coordinator request message's name and fields, read from the message itself."""
    end, add = rq.is_in(Rq.COMMIT, Rq.ABORT), rq == Rq.ADD
    offsets = And(add, is_op(part))
    names = ((rq.is_in(Rq.INIT, Rq.INITBUMP), "InitProducerId"), (offsets, "AddOffsetsToTxn"),
             (add, "AddPartitionsToTxn"), (end, "EndTxn"))
    return names, offsets, end, add


_req_names, _req_offsets, _req_end, _req_add = _request(n_creq_rq[i], n_creq_p[i])
_late_names, _late_offsets, _late_end, _late_add = _request(n_late_rq[i], n_late_p[i])

PidNumber = IntRange("Pid", 1, MAXT + 1)


def pid_field(tid, rot, when=TRUE, name="pid"):
    """The producer id a message carries, numbered from 1 (pid 2 of tid 1 is its rotated one), shown only when the
    config lets pids rotate (§3.14)."""
    return Field(name, pid_of(tid, rot) + 1, when=And(ROTATION, when), domain=PidNumber)


CHANNELS = (
    Channel("coordinator request", (i,), n_creq[i], sender=PRODUCER, receiver=COORDINATOR,
            names=_req_names,
            fields=(Field("", If(n_creq_rq[i] == Rq.COMMIT, Result.COMMIT, Result.ABORT), when=_req_end, domain=Result),
                    Field("partition", n_creq_p[i], when=And(_req_add, Not(_req_offsets))),
                    pid_field(T, n_creq_rot[i], n_creq_rq[i] != Rq.INIT),
                    Field("epoch", n_creq_e[i], when=n_creq_rq[i] != Rq.INIT)),
            doc="the client's one outstanding coordinator request (§1.1 obligation 3); InitProducerId with an "
                "epoch is the KIP-360 bump InitProducerId(pid, e); AddOffsetsToTxn registers __consumer_offsets"),
    Channel("late coordinator request", (i,), n_late[i], sender=PRODUCER, receiver=COORDINATOR,
            names=tuple((when, f"{name} (late copy)") for when, name in _late_names),
            fields=(Field("", If(n_late_rq[i] == Rq.COMMIT, Result.COMMIT, Result.ABORT), when=_late_end, domain=Result),
                    Field("partition", n_late_p[i], when=And(_late_add, Not(_late_offsets))),
                    pid_field(T, n_late_rot[i], n_late_rq[i] != Rq.INIT),
                    Field("epoch", n_late_e[i], when=n_late_rq[i] != Rq.INIT)),
            doc="the first copy of a coordinator request the client abandoned on a request timeout (NET-20: it "
                "closed the connection and re-sent); the coordinator still handles it (TC-1xx), and nobody hears "
                "its answer (kafka-protocol §1.7)"),
    Channel("coordinator response", (i,), n_cresp[i] != CResp.NONE, sender=COORDINATOR, receiver=PRODUCER,
            names=((_rq.is_in(Rq.INIT, Rq.INITBUMP), "InitProducerId response"),
                   (_offsets, "AddOffsetsToTxn response"), (_add, "AddPartitionsToTxn response"),
                   (_end, "EndTxn response")),
            fields=(Field("error", _coord_error, domain=CoordError),
                    pid_field(T, n_cresp_rot[i], n_cresp_e[i] != -1),
                    Field("epoch", n_cresp_e[i], when=n_cresp_e[i] != -1)),
            doc="the coordinator's answer; the transaction log's rows answer once the append is durable"),
    Channel("Produce", (i, p, k, b), n_prod[i][p][k][b], sender=PRODUCER, receiver=PARTITION,
            names=((is_op(p), "TxnOffsetCommit"),),
            fields=(pid_field(T, b_rot[i][p][k]), Field("epoch", b_e[i][p][k]), Field("seq", b_s[i][p][k][b], when=Not(is_op(p))),
                    Field("offset", call_offset(i, k), when=is_op(p))),
            doc="batch b of transaction k of incarnation i to p, one cell per batch (a retry is a second copy); on "
                "__consumer_offsets the TxnOffsetCommit of sendOffsetsToTransaction"),
    Channel("Produce response", (i, p, k, b), n_pres[i][p][k][b] != PResp.NONE, sender=PARTITION, receiver=PRODUCER,
            names=((is_op(p), "TxnOffsetCommit response"),),
            fields=(Field("error", _produce_error, domain=ProduceError),),
            doc="the leader's answer (a verification failure is passed on as the leader's answer)"),
    Channel("abandoned TxnOffsetCommit", (i, k), n_oab[i][k] != -1, sender=PRODUCER, receiver=At("partition", OP),
            names=((TRUE, "TxnOffsetCommit (abandoned)"),),
            fields=(pid_field(T, b_rot[i][OP][k]), Field("epoch", b_e[i][OP][k]), Field("offset", n_oab[i][k])),
            doc="a TxnOffsetCommit the client gave up on at its request timeout (PC-24: the connection is closed "
                "and the same request resent); the group coordinator may still execute it, and nobody hears its "
                "answer (kafka-protocol §3.4 O6)"),
    Channel("WriteTxnMarkers", (t, p, c), n_mk[t][p][c], sender=At("coordinator", t), receiver=PARTITION,
            fields=(Field("", n_mk_res[t][p][c]), pid_field(t, n_mk_rot[t][p][c]), Field("epoch", n_mk_e[t][p][c]),
                    Field("cepoch", c)),
            doc="the coordinator's marker for p (§3.8), one cell per coordinator epoch; re-driven markers of "
                "a failover replace a queued one"),
    Channel("stale WriteTxnMarkers", (t, p), n_mkd[t][p], sender=At("coordinator", t), receiver=PARTITION,
            names=((TRUE, "WriteTxnMarkers (stale copy)"),),
            fields=(Field("", n_mkd_res[t][p]), pid_field(t, n_mkd_rot[t][p]), Field("epoch", n_mkd_e[t][p]),
                    Field("cepoch", n_mkd_c[t][p])),
            doc="a WriteTxnMarkers request the coordinator gave up on at its request timeout (NET-10: the "
                "connection is closed and the same markers re-sent); the leader may still execute it, and nobody "
                "hears its answer (kafka-protocol §3.8 marker re-send)"),
    Channel("transaction log append", (t,), tc_pend[t] != Pend.NONE, sender=At("coordinator", t), receiver=TXN_LOG,
            names=((tc_pend[t] == Pend.Empty, "append Empty"), (tc_pend[t] == Pend.Ongoing, "append Ongoing"),
                   (tc_pend[t] == Pend.PrepareCommit, "append PrepareCommit"),
                   (tc_pend[t] == Pend.PrepareAbort, "append PrepareAbort")),
            fields=(pid_field(t, tc_rot[t]), Field("epoch", tc_pend_e[t]),
                    Field("partition", tc_pend_p[t], when=tc_pend[t] == Pend.Ongoing),
                    pid_field(t, True, tc_pend_rot[t], "next pid")),
            doc="the pending transition (pendingState) on its way to __transaction_state (§2.1 mechanics 2)"),
    Channel("verification", (i, p, k, b), pl_vb[p][i][k][b] == Ver.PENDING, sender=PARTITION, receiver=COORDINATOR,
            names=((VERIFY, "AddPartitionsToTxn VerifyOnly"), (TV2, "AddPartitionsToTxn")),
            fields=(pid_field(T, b_rot[i][p][k]), Field("epoch", b_e[i][p][k])),
            doc="the leader asks the coordinator about a batch it holds (§3.11): v4 VerifyOnly under "
                "protocol (b), the v5 implicit add under TV2"),
    Channel("verification response", (i, p, k, b), pl_vb[p][i][k][b].is_in(Ver.OK, Ver.RETRY), sender=COORDINATOR,
            receiver=PARTITION, names=((TRUE, "AddPartitionsToTxn response"),),
            fields=(Field("error", If(pl_vb[p][i][k][b] == Ver.OK, VerifyError.NONE,
                                      VerifyError.NOT_COORDINATOR), domain=VerifyError),),
            doc="NONE lets the held batch be appended; the other answers are passed straight on to the "
                "producer as its Produce response (the model's one step for the leader's hop)"),
)
