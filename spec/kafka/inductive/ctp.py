"""Strengthening invariants of consume-transform-produce (ctp = 1): ATOM-3 and EOS-1 (see __init__.py).

A committed transaction has its batch on every output partition and on __consumer_offsets (IND-151,
IND-161); its records carry the input offset it consumed (IND-150); committed transactions consumed
distinct inputs (IND-152); the group's committed offset gc_off is one past the inputs whose
TxnOffsetCommit was committed (IND-153, IND-155). The rest makes these inductive by following the
offset from the consumer's position (IND-159, IND-162, IND-163) through the transaction's begin
(IND-158, IND-164) and its batches (IND-157) to the coordinator's current transaction (IND-156,
IND-160) and the group's pending offset (IND-154): the next transaction consumes the record at
gc_off, or the one after a commit whose marker on __consumer_offsets is not written yet.
"""
from txncheck.spec.expr import And, Exists, ForAll, If, Implies, Not
from txncheck.spec.model import Always

from ..domains import (CTP, MULTI, OP, TV2, BatchSt, CResp, InOffset, Inc, Kind, Outcome, Part, PcState, Rq, Slot, Txn, tid_of,
                       writes_to, TxnState as S)
from ..properties import data
from .pids import FIRST_OF_SECOND, b_x, cresp_x, pc_x, tc_x
from ..state import (b_e, b_src, cs_pos, g_ack, g_ci, g_ck, g_dec, gc_off, gc_pend, log_inc, log_k, log_kind, log_out,
                     log_src, n_cresp, n_cresp_rot, n_oab, pc_b, pc_e, pc_rot, pc_k, pc_oc, pc_rq, pc_st, pl_first, pl_open, tc_e,
                     tc_st, tl_st)
from .base import IN_TXN, data_of, each_batch, each_slot, each_tid, slot_of

COMMIT = Outcome.COMMIT
# consume-transform-produce, and every EndTxn bumps the epoch: under TV2 only the incarnation holding
# the coordinator's epoch can begin or commit (a zombie's epochs are all older: zombies.py, IND-171)
SOLO = And(CTP, TV2)


def each_txn(f):
    return ForAll(Inc, lambda i: ForAll(Txn, lambda k: f(i, k)))


def committed(i, k):
    return g_dec[i][k] == COMMIT


def is_cur(t, i, k):
    """(i, k) is the coordinator's current transaction of t."""
    return And(g_ck[t] >= 1, g_ci[t] == i, g_ck[t] == k)


def cur_src(t, f):
    """f(the input offset t's current transaction consumed); vacuous when t has none."""
    return each_txn(lambda i, k: Implies(is_cur(t, i, k), f(b_src[i][k])))


def next_src(t, n):
    """n is the input offset t's next transaction consumes: the committed offset, or, while a commit's
    markers are written (PrepareCommit), the one after that transaction's input."""
    return And(Implies(tc_st[t] != S.PrepareCommit, n == gc_off),
               Implies(tc_st[t] == S.PrepareCommit, cur_src(t, lambda m: n == m + 1)))


INVARIANTS = (
    Always("IND-150", each_slot(lambda p, s: Implies(log_kind[p][s] == Kind.DATA,
        each_txn(lambda i, k: Implies(And(log_inc[p][s] == i, log_k[p][s] == k), log_src[p][s] == b_src[i][k])))),
           "An output record (and a TxnOffsetCommit record) carries the input offset its transaction consumed: "
           "beginTransaction fixes b_src once, before any batch of the transaction is created."),
    Always("IND-151", each_txn(lambda i, k: Implies(committed(i, k), ForAll(Part, lambda p: Implies(
        writes_to(p), slot_of(i, p, k))))),
           "A COMMIT-decided transaction has its batch in every partition it writes, output and __consumer_offsets: "
           "only the client's EndTxn(COMMIT) decides COMMIT, and the client sends it after every batch (its "
           "TxnOffsetCommit included) was acknowledged."),
    Always("IND-152", each_txn(lambda i, k: each_txn(lambda j, k2: Implies(
        And(CTP, committed(i, k), committed(j, k2), Not(And(i == j, k == k2))), b_src[i][k] != b_src[j][k2]))),
           "No two committed transactions consumed the same input offset: a transaction commits only having "
           "consumed the record at the group's committed offset, which its own COMMIT marker then advances."),
    Always("IND-153", ForAll(Slot, lambda s: Implies(And(CTP, data(OP, s), log_out[OP][s] == COMMIT),
                                                     log_src[OP][s] < gc_off)),
           "A TxnOffsetCommit record closed by a COMMIT marker has been materialised: that marker moved the group's "
           "committed offset past the input it consumed, and the committed offset never moves back."),
    Always("IND-154", each_tid(lambda t: Implies(CTP, And(
        Implies(Not(pl_open[OP][t]), gc_pend[t] == -1),
        ForAll(Slot, lambda s: Implies(And(data_of(OP, s, t), pl_open[OP][t], s >= pl_first[OP][t]),
                                       gc_pend[t] == log_src[OP][s] + 1))))),
           "pending[g][pid] is exactly the offset of the pid's open TxnOffsetCommit span on __consumer_offsets: "
           "the append records it and the span's marker (COMMIT or ABORT) clears it."),
    Always("IND-155", ForAll(InOffset, lambda n: Implies(And(CTP, n < gc_off), Exists(Slot, lambda s: And(
        data(OP, s), log_out[OP][s] == COMMIT, log_src[OP][s] == n)))),
           "Every input offset below the group's committed offset was consumed by a transaction whose "
           "TxnOffsetCommit was committed: only COMMIT markers move the committed offset, one record at a time."),
    Always("IND-156", each_tid(lambda t: Implies(And(SOLO, tl_st[t].is_in(S.Ongoing, S.PrepareAbort)),
                                                   cur_src(t, lambda n: n == gc_off))),
           "Under TV2, the Ongoing (or aborting) transaction consumed the record at the group's "
           "committed offset: the previous transaction completed, so its offset is materialised, and an abort "
           "materialises none."),
    Always("IND-157", each_batch(lambda i, p, k: Implies(
        And(SOLO, b_e[i][p][k] != -1, b_x(i, p, k) == tc_x(tid_of(i))), next_src(tid_of(i), b_src[i][k]))),
           "Under TV2, a batch at the coordinator's epoch belongs to the transaction begun after "
           "the last EndTxn, which consumed the record at the committed offset or, while a commit's markers are "
           "written, the record after the committed transaction's."),
    Always("IND-158", ForAll(Inc, lambda i: Implies(
        And(SOLO, pc_st[i].is_in(*IN_TXN), pc_e[i] == tc_e[tid_of(i)]),
        ForAll(Txn, lambda k: Implies(k == pc_k[i], next_src(tid_of(i), b_src[i][k]))))),
           "Under TV2, a client inside a transaction at the coordinator's epoch consumed the record "
           "at the committed offset, or the one after a transaction whose commit markers are being written."),
    Always("IND-159", ForAll(Inc, lambda i: Implies(
        And(SOLO, pc_st[i] == PcState.READY, cs_pos[i] >= 0, pc_e[i] == tc_e[tid_of(i)]),
        next_src(tid_of(i), cs_pos[i]))),
           "Under TV2, a READY consumer with a position, at the coordinator's epoch, is positioned "
           "at the committed offset (fetched with RequireStable, or reached by a completed commit), or one past a "
           "transaction whose commit markers are being written."),
    Always("IND-160", each_tid(lambda t: Implies(And(SOLO, tl_st[t] == S.PrepareCommit), cur_src(
        t, lambda n: gc_off + If(pl_open[OP][t], 1, 0) == n + 1))),
           "Under TV2, while a commit's markers are written the committed offset is the input the "
           "transaction consumed until its marker on __consumer_offsets materialises the next one."),
    Always("IND-161", ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: Implies(
        And(k == pc_k[i], pc_b[i][p][1] == BatchSt.ACKED), g_ack[i][p][k][1])))),
           "A batch of the client's current transaction is ACKED only through its Produce answer NONE, which "
           "records the acknowledgement (beginTransaction resets every batch state)."),
    Always("IND-162", ForAll(Inc, lambda i: Implies(And(CTP, pc_st[i].is_in(*IN_TXN)), ForAll(Txn, lambda k: Implies(
        k == pc_k[i], cs_pos[i] == b_src[i][k] + 1)))),
           "Inside a transaction the consumer's position is one past the record the transaction consumed "
           "(beginTransaction polls one record; only an abort rewinds the position)."),
    Always("IND-163", ForAll(Inc, lambda i: And(
        Implies(And(TV2, pc_st[i] == PcState.INITIALIZING), pc_k[i] == 0),
        Implies(And(pc_k[i] == 0, pc_st[i].is_in(PcState.IDLE, PcState.UNINITIALIZED, PcState.INITIALIZING)),
                cs_pos[i] == -1))),
           "A consumer whose producer has not completed initTransactions has no position yet (it fetches the "
           "committed offset only once READY); under TV2 a client initialises only once (EndTxn bumps the epoch "
           "instead of a KIP-360 re-initialisation)."),
    Always("IND-164", ForAll(Inc, lambda i: Implies(
        And(SOLO, pc_st[i] == PcState.COMMITTING_TRANSACTION, pc_rq[i] == Rq.COMMIT, pc_e[i] + 1 == tc_e[tid_of(i)]),
        ForAll(Txn, lambda k: Implies(k == pc_k[i], And(
            Implies(tc_st[tid_of(i)] == S.PrepareCommit, is_cur(tid_of(i), i, k)),
            Implies(tc_st[tid_of(i)] == S.CompleteCommit, gc_off == b_src[i][k] + 1)))))),
           "Under TV2, a PrepareCommit/CompleteCommit one epoch above a committing client's is that "
           "client's own EndTxn(COMMIT): its transaction is still the coordinator's current one while PrepareCommit, "
           "and its offset is materialised once CompleteCommit."),
    Always("IND-165", ForAll(Inc, lambda i: Implies(
        And(TV2, n_cresp[i] == CResp.OK, pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT)),
        cresp_x(i) == If(And(n_cresp_rot[i], Not(pc_rot[i])), FIRST_OF_SECOND, pc_x(i) + 1))),
           "Under TV2 an EndTxn answered NONE hands the client exactly the next epoch: the coordinator bumped the "
           "epoch the client sent by one (or answers a retry of that EndTxn with the epoch it bumped to)."),
    Always("IND-166", Implies(Not(MULTI), ForAll(Inc, lambda i: And(
        pc_oc[i] == 0, ForAll(Txn, lambda k: n_oab[i][k] == -1)))),
           "With one sendOffsetsToTransaction call per transaction (offset_commits = 1) no call is counted and no "
           "TxnOffsetCommit is abandoned: PC-23 and PC-24, the only rows that count calls or abandon one, need "
           "offset_commits >= 2."),
)
