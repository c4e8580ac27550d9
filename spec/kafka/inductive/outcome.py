"""Strengthening invariants for transaction outcomes: ATOM-2, DUR-1 and DUR-3 (see __init__.py).
"""
from txncheck.spec.expr import And, Config, Exists, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import (BatchSt, CResp, Inc, Kind, Outcome, PResp, Part, PcState, Pend, PendBy, Result, Rq,
                       Slot, TV2, Tid, Txn, Ver, pid_of, tid_of, TxnState as S)
from .pids import b_pid, b_x, cresp_x, durable_x, handed_x, init_epoch, mk_x, owner, pc_x, tc_x
from ..state import (hw, b_e, g_ack, g_ci, g_ck, g_dec, g_pk, log_e, log_inc, log_k, log_kind, log_pid, n_creq,
                     n_cresp, n_cresp_e, n_mk, n_mk_e, n_mk_res, n_mk_rot, n_mkd, n_pres, n_prod, pc_b, pc_e, pc_k, pc_rq, pc_st,
                     pl_ce, pl_e, pl_end, pl_first, pl_lso, pl_open, pl_seq, pl_vb, pl_vst, tc_ce, tc_e,
                     tc_mk, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e, tc_pend_p, tc_rot, tc_st, tl_e, tl_parts,
                     tl_st)
from .base import (NO_EXPIRY, NO_ZOMBIES, PREPARE, SETTLED, each_batch, each_marker, each_tid, each_tid_part,
                   slot_of)


def each_pts(f):
    return ForAll(Part, lambda p: ForAll(Tid, lambda t: ForAll(Slot, lambda s: f(p, t, s))))


def in_open_span(p, t, s):
    return And(log_kind[p][s] == Kind.DATA, log_pid[p][s] == t, pl_open[p][t], s >= pl_first[p][t])


def res_of(t):
    """The marker result matching the durable Prepare* state."""
    return If(tl_st[t] == S.PrepareCommit, Result.COMMIT, Result.ABORT)


def live(t, p, c):
    """A marker carrying the durable Prepare* record's producer id, result and epoch."""
    return And(tl_st[t].is_in(*PREPARE), n_mk_rot[t][p][c] == tc_rot[t], n_mk_e[t][p][c] == tl_e[t],
               n_mk_res[t][p][c] == res_of(t))


def cur_dec(t):
    return g_dec[g_ci[t]][g_ck[t]]

INVARIANTS = (
    Always("IND-81", each_pts(lambda p, u, s: Implies(And(TV2, in_open_span(p, u, s)), And(
        g_ck[owner(u)] >= 1, log_inc[p][s] == g_ci[owner(u)], log_k[p][s] == g_ck[owner(u)]))),
           "Under TV2, the data of an open span belongs to the coordinator's current transaction."),
    Always("IND-82", each_tid(lambda t: And(
        Implies(tl_st[t] == S.Ongoing, g_ck[t] >= 1),
        Implies(tl_st[t] == S.PrepareCommit, And(g_ck[t] >= 1, cur_dec(t) == Outcome.COMMIT)),
        Implies(And(tl_st[t] == S.PrepareAbort, g_ck[t] >= 1), cur_dec(t) == Outcome.ABORT),
        Implies(tl_st[t].is_in(*SETTLED), g_ck[t] == 0))),
           "A durable Ongoing record has a current transaction; a durable PrepareX record means that transaction "
           "is decided X; a settled record has none."),
    Always("IND-83", each_marker(lambda t, p, c: Implies(And(n_mk[t][p][c], c == tc_ce[t]), live(t, p, c))),
           "A marker of the current coordinator epoch in flight carries the durable Prepare* result and epoch."),
    Always("IND-84", each_marker(lambda t, p, c: Implies(n_mk[t][p][c], mk_x(t, p, c) <= durable_x(t))),
           "No marker carries a producer epoch above the durable one."),
    Always("IND-85", each_marker(lambda t, p, c: Implies(And(TV2, NO_EXPIRY, n_mk[t][p][c], Not(live(t, p, c))), Or(
        c < pl_ce[p][t], n_mk_e[t][p][c] <= pl_e[p][t]))),
           "Under TV2, a stale marker (of a completed Prepare*) in flight is fenced at p: by coordinator epoch or by "
           "a producer epoch not above p's (W2/W3)."),
    Always("IND-86", each_marker(lambda t, p, c: Implies(And(TV2, n_mk[t][p][c], live(t, p, c)), tl_parts[t][p])),
           "Under TV2, a marker of the durable Prepare* goes to a partition it lists."),
    Always("IND-87", each_tid_part(lambda t, p: Implies(And(NO_EXPIRY, tl_st[t].is_in(*PREPARE), tl_parts[t][p], Not(tc_mk[t][p])),
                                                  And(pl_ce[p][pid_of(t, tc_rot[t])] == tc_ce[t],
                                                      pl_e[p][pid_of(t, tc_rot[t])] == tl_e[t]))),
           "Once p acknowledged the current Prepare*'s marker it stored that coordinator epoch and producer epoch."),
    Always("IND-88", each_tid_part(lambda t, p: Implies(tl_st[t].is_in(*SETTLED), Not(tl_parts[t][p]))),
           "A settled (Empty/Complete*) record lists no partitions."),
    Always("IND-89", each_tid(lambda t: And(
        Implies(tc_pend[t] == Pend.Ongoing, g_pk[t] >= 1))),
           "A pending transaction start names a begun transaction."),
)
INVARIANTS += (
    Always("IND-90", each_batch(lambda i, p, k: Implies(And(TV2, pl_vb[p][i][k][1] == Ver.OK, Not(pl_vst[p][i][k][1])), And(
        g_ck[tid_of(i)] >= 1, g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == k))),
           "Under TV2, a batch the coordinator verified whose guard is current belongs to its current transaction."),
    Always("IND-91", each_batch(lambda i, p, k: Implies(
        And(TV2, tc_st[tid_of(i)] == S.Ongoing, b_e[i][p][k] != -1, b_x(i, p, k) == tc_x(tid_of(i))),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == k))),
           "Under TV2, a batch carrying the epoch of an Ongoing coordinator belongs to its current transaction."),
    Always("IND-92", each_batch(lambda i, p, k: ForAll(Inc, lambda j: ForAll(Part, lambda q: ForAll(Txn, lambda k2: Implies(
        And(TV2, tid_of(i) == tid_of(j), b_e[i][p][k] != -1, b_x(i, p, k) == b_x(j, q, k2)), And(i == j, k == k2)))))),
           "Under TV2, one producer epoch is used by one transaction of one incarnation (every EndTxn bumps)."),
    Always("IND-93", each_batch(lambda i, p, k: ForAll(Inc, lambda j: Implies(
        And(TV2, tid_of(i) == tid_of(j), b_e[i][p][k] != -1, b_x(i, p, k) == pc_x(j),
            Or(pc_st[j] != PcState.CRASHED, pc_rq[j].is_in(Rq.COMMIT, Rq.ABORT))), And(i == j, k == pc_k[j])))),
           "Under TV2, a batch carrying the epoch a client holds (a crashed one: with its EndTxn outstanding) belongs to that client's current transaction."),
    Always("IND-94", each_batch(lambda i, p, k: Implies(
        And(TV2, pl_open[p][tid_of(i)], b_e[i][p][k] != -1, b_e[i][p][k] == pl_e[p][tid_of(i)]),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == k))),
           "Under TV2, a batch at the epoch of an open span belongs to the coordinator's current transaction."),
    Always("IND-95", each_batch(lambda i, p, k: Implies(And(TV2, pl_vb[p][i][k][1] == Ver.ADDING), And(
        tc_pend[tid_of(i)] == Pend.Ongoing, tc_pend_by[tid_of(i)] == PendBy.LEADER, tc_pend_p[tid_of(i)] == p,
        tc_pend_cli[tid_of(i)] == i, g_pk[tid_of(i)] == k, b_x(i, p, k) == tc_x(tid_of(i)),
        Implies(tc_st[tid_of(i)] == S.Ongoing, And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == k))))),
           "Under TV2, a batch whose implicit add is pending is the one the coordinator's pending Ongoing adds, at "
           "its epoch."),
)
INVARIANTS += (
    Always("IND-96", each_batch(lambda i, p, k: Implies(And(pc_b[i][p][1] == BatchSt.NONE, k == pc_k[i]), And(
        b_e[i][p][k] == -1, n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE))),
           "A batch the client has not drained yet in its current transaction has no epoch, request or response."),
)
INVARIANTS += (
    Always("IND-97", each_tid(lambda t: Implies(And(TV2, tc_pend[t] == Pend.Ongoing, tc_pend_by[t] == PendBy.LEADER), And(
        ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: Implies(
            And(i == tc_pend_cli[t], p == tc_pend_p[t], k == g_pk[t]), And(tid_of(i) == t, b_x(i, p, k) == tc_x(t), b_e[i][p][k] != -1))))),
        Implies(tc_st[t] == S.Ongoing, And(g_ci[t] == tc_pend_cli[t], g_ck[t] == g_pk[t]))))),
           "Under TV2, a pending implicit add is for a batch at the coordinator's epoch, of its current transaction "
           "if one is Ongoing."),
)
ACTIVE = (PcState.READY, PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION,
          PcState.ABORTABLE_ERROR)
def tid_batches(i, f):
    return ForAll(Inc, lambda j: ForAll(Part, lambda q: ForAll(Txn, lambda k: Implies(tid_of(j) == tid_of(i), f(j, q, k)))))
INVARIANTS += (
    Always("IND-98", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, n_cresp[i] == CResp.OK, pc_rq[i] != Rq.ADD, Not(pc_st[i].is_in(PcState.CRASHED, PcState.FATAL_ERROR))),
        tid_batches(i, lambda j, q, k: b_x(j, q, k) < cresp_x(i)))),
           "Under TV2 without zombies, an InitProducerId or EndTxn answer to a live client carries an epoch above "
           "every batch's (a fresh bump)."),
    Always("IND-99", ForAll(Inc, lambda i: Implies(And(TV2, NO_ZOMBIES, pc_st[i].is_in(*ACTIVE)),
        tid_batches(i, lambda j, q, k: And(b_x(j, q, k) <= pc_x(i), Implies(
            b_x(j, q, k) == pc_x(i), And(j == i, k == pc_k[i], pc_st[i] != PcState.READY)))))),
           "Under TV2 without zombies, no batch carries an epoch above the one the live client holds, and only "
           "its current transaction's batches carry that one (none once it is READY)."),
)
INVARIANTS += (
    Always("IND-100", And(
        each_tid(lambda t: Implies(And(TV2, tc_pend[t] == Pend.Ongoing), tc_pend_by[t] == PendBy.LEADER)),
        ForAll(Inc, lambda i: Implies(TV2, Not(pc_rq[i].is_in(Rq.ADD, Rq.INITBUMP))))),
           "Under TV2 partitions are added only implicitly by a leader (no AddPartitionsToTxn from the client) and "
           "no client re-initialises with its epoch (EndTxn bumps instead)."),
)
INVARIANTS += (
    Always("IND-101", each_batch(lambda i, p, k: Implies(b_e[i][p][k] == -1, And(
        n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE, g_ack[i][p][k][1] == False,
        pl_vb[p][i][k][1] == Ver.NONE))),
           "A batch never drained (no epoch fixed) has no Produce request, response, acknowledgement or "
           "verification in progress."),
)
INVARIANTS += (
    Always("IND-102", And(
        ForAll(Inc, lambda i: And(
            Implies(pc_st[i].is_in(*ACTIVE), pc_e[i] >= 0),
            Implies(And(n_cresp[i] == CResp.OK, pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP)), n_cresp_e[i] >= 0),
            Implies(And(TV2, n_cresp[i] == CResp.OK, pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT)), n_cresp_e[i] >= 0))),
        each_tid(lambda t: Implies(tc_pend[t] != Pend.NONE, tc_pend_e[t] >= 0))),
           "A client past initTransactions holds an epoch, and every InitProducerId answer (and under TV2 every "
           "EndTxn answer) and pending transition carries one."),
)
INVARIANTS += (
    Always("IND-103", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, pc_st[i].is_in(*ACTIVE), tc_st[tid_of(i)] == S.Ongoing, pc_x(i) == tc_x(tid_of(i))),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i], pc_st[i] != PcState.READY))),
           "Under TV2 without zombies, an Ongoing transaction at the epoch a live client holds is that client's "
           "current one."),
)
INVARIANTS += (
    Always("IND-104", each_tid(lambda t: Implies(And(TV2, tc_pend[t] == Pend.Empty),
                                               And(tc_e[t] == tl_e[t], tc_pend_e[t] == init_epoch(t)))),
           "Under TV2 a pending InitProducerId always bumps the durable epoch (no KIP-360 same-epoch retry)."),
)
INVARIANTS += (
    Always("IND-105", each_tid(lambda t: ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(TV2, g_ck[t] >= 1, g_ci[t] == i, g_ck[t] == k), Exists(Part, lambda p: b_e[i][p][k] != -1))))),
           "Under TV2 the coordinator's current transaction was started by one of its batches (implicit add)."),
)
INVARIANTS += (
    Always("IND-106", each_tid(lambda t: ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(TV2, tl_st[t] == S.Ongoing, g_ci[t] == i, g_ck[t] == k),
        Exists(Part, lambda p: b_x(i, p, k) == durable_x(t)))))),
           "Under TV2 a durable Ongoing record's epoch is that of a batch of its transaction (the implicit add "
           "that started it)."),
)
INVARIANTS += (
    Always("IND-107", each_tid_part(lambda t, p: ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(TV2, pl_open[p][t], g_ci[t] == i, g_ck[t] == k), b_e[i][p][k] == pl_e[p][t])))),
           "Under TV2 an open span is at the epoch of its transaction's batch to p."),
    Always("IND-108", each_pts(lambda p, t, s: Implies(And(TV2, in_open_span(p, t, s)), log_e[p][s] == pl_e[p][t])),
           "Under TV2 the data of an open span carries the producer epoch p stored for the pid."),
)
def dec_cur(i, val):
    """decided[(i, pc_k[i])] == val."""
    return ForAll(Txn, lambda k: Implies(k == pc_k[i], g_dec[i][k] == val))
COMMITTING = PcState.COMMITTING_TRANSACTION
INVARIANTS += (
    Always("IND-109", ForAll(Inc, lambda i: Implies(
        And(pc_st[i] == COMMITTING, pc_rq[i] == Rq.COMMIT, n_cresp[i] == CResp.OK), dec_cur(i, Outcome.COMMIT))),
           "An EndTxn(COMMIT) answered NONE to a committing client means its transaction is decided COMMIT."),
    Always("IND-110", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, pc_st[i] == COMMITTING, pc_rq[i] == Rq.COMMIT, pc_x(i) + 1 == tc_x(tid_of(i)),
            tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)), dec_cur(i, Outcome.COMMIT))),
           "Under TV2 without zombies, a PrepareCommit/CompleteCommit one epoch above a committing client's is "
           "that client's EndTxn(COMMIT): its transaction is decided COMMIT."),
    Always("IND-111", each_tid(lambda t: Implies(
        And(TV2, tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_pend_by[t] == PendBy.CLIENT),
        And(Implies(tc_st[t] == S.Ongoing, And(g_ci[t] == tc_pend_cli[t], g_ck[t] == pc_k[tc_pend_cli[t]])),
            pc_e[tc_pend_cli[t]] == tc_e[t],
            Implies(tc_pend[t] == Pend.PrepareCommit, pc_rq[tc_pend_cli[t]] == Rq.COMMIT),
            Implies(tc_pend[t] == Pend.PrepareAbort, pc_rq[tc_pend_cli[t]] == Rq.ABORT)))),
           "Under TV2 a pending EndTxn transition is for the requesting client's current transaction, at the "
           "epoch it holds."),
)
INVARIANTS += (
    Always("IND-112", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, n_creq[i], pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT), tc_st[tid_of(i)] == S.Ongoing, pc_x(i) == tc_x(tid_of(i))),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i]))),
           "Under TV2 without zombies, an EndTxn in flight (even from a crashed client) at the epoch of an "
           "Ongoing transaction is for that transaction."),
)
INVARIANTS += (
    Always("IND-113", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, pc_st[i].is_in(PcState.READY, PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR,
                                     PcState.ABORTING_TRANSACTION), tc_x(tid_of(i)) == pc_x(i) + 1),
        Not(tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)))),
           "Under TV2 without zombies, only the live client's own EndTxn(COMMIT) commits at the epoch above its "
           "own: a client not committing never finds such a commit."),
)
INVARIANTS += (
    Always("IND-114", ForAll(Inc, lambda i: Implies(
        And(TV2, NO_ZOMBIES, Config("late_requests") == 0, n_cresp[i] == CResp.OK,
            Not(pc_st[i].is_in(PcState.CRASHED, PcState.FATAL_ERROR))), And(
            Implies(pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT), cresp_x(i) == handed_x(tid_of(i))),
            Implies(pc_rq[i] == Rq.INIT, And(tc_st[tid_of(i)] == S.Empty, cresp_x(i) <= tc_x(tid_of(i)))),
            Implies(pc_rq[i] == Rq.COMMIT, tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)),
            Implies(pc_rq[i] == Rq.ABORT, tc_st[tid_of(i)].is_in(S.PrepareAbort, S.CompleteAbort))))),
           "Under TV2 without zombies, an EndTxn answer NONE to a live client carries the coordinator's epoch, "
           "which stays in the state the answer reported until the client acts; after an InitProducerId answer "
           "the coordinator stays Empty (a crashed incarnation's late InitProducerId may bump it again). Without "
           "late copies: the late copy of the client's own InitProducerId may bump it too."),
)
INVARIANTS += (
    Always("IND-115", ForAll(Inc, lambda i: Implies(pc_st[i] == PcState.FATAL_ERROR, pc_rq[i].is_in(Rq.NONE, Rq.ADD))),
           "A client turns fatal only when an answer is consumed or a batch is fenced, never while its "
           "InitProducerId or EndTxn is outstanding (EndTxn waits for every batch)."),
)
INVARIANTS += (
    Always("IND-116", ForAll(Inc, lambda i: ForAll(Part, lambda p: Implies(
        pc_st[i].is_in(PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION, PcState.INITIALIZING, PcState.READY),
        pc_b[i][p][1] != BatchSt.SENT))),
           "A client ending, initialising or between transactions has no batch in flight (EndTxn waits for "
           "every batch to complete)."),
)
INVARIANTS += (
    Always("IND-117", ForAll(Inc, lambda i: ForAll(Inc, lambda j: Implies(
        And(NO_ZOMBIES, i != j, tid_of(i) == tid_of(j), pc_st[i] == PcState.CRASHED, pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT)), And(
            Implies(pc_e[j] != -1, pc_x(i) < pc_x(j)),
            Implies(And(n_cresp[j] == CResp.OK, pc_rq[j] == Rq.INIT), pc_x(i) < cresp_x(j)))))),
           "Without zombies, a crashed client whose EndTxn is still outstanding holds an epoch below any other "
           "incarnation's (each later InitProducerId bumped past it)."),
)
INVARIANTS += (
    Always("IND-118", ForAll(Inc, lambda i: Implies(pc_st[i].is_in(PcState.IDLE, PcState.UNINITIALIZED), And(
        pc_k[i] == 0, pc_e[i] == -1, pc_rq[i] == Rq.NONE, Not(n_creq[i]), n_cresp[i] == CResp.NONE,
        ForAll(Part, lambda p: pc_b[i][p][1] == BatchSt.NONE)))),
           "An incarnation that has not called initTransactions yet has begun nothing and sent nothing."),
)
INVARIANTS += (
    Always("IND-119", each_tid(lambda t: Implies(And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.CLIENT), And(
        tid_of(tc_pend_cli[t]) == t,
        Implies(tc_pend[t] == Pend.Empty, pc_rq[tc_pend_cli[t]].is_in(Rq.INIT, Rq.INITBUMP)),
        Implies(tc_pend[t] == Pend.Ongoing, pc_rq[tc_pend_cli[t]] == Rq.ADD),
        Implies(tc_pend[t] == Pend.PrepareCommit, pc_rq[tc_pend_cli[t]] == Rq.COMMIT),
        Implies(tc_pend[t] == Pend.PrepareAbort, pc_rq[tc_pend_cli[t]] == Rq.ABORT)))),
           "A transition pending for a client matches the request it has outstanding."),
)
INVARIANTS += (
    Always("IND-120", ForAll(Inc, lambda i: n_cresp[i] != CResp.ABORTABLE),
           "No coordinator answer is abortable in this model (no handler row answers TRANSACTION_ABORTABLE)."),
)
INVARIANTS += (
    Always("IND-121", each_batch(lambda i, p, k: Implies(Or(g_ack[i][p][k][1], n_pres[i][p][k][1] == PResp.OK),
                                                         slot_of(i, p, k))),
           "A batch answered NONE (acknowledged) is in p's log."),
    Always("IND-122", each_tid_part(lambda t, p: Implies(pl_seq[p][t] >= 0, Exists(Slot, lambda s: And(
        log_kind[p][s] == Kind.DATA, log_pid[p][s] == t, log_e[p][s] == pl_e[p][t])))),
           "A sequence number stored for a pid at p comes from a batch of its stored epoch in p's log."),
    Always("IND-123", ForAll(Part, lambda p: ForAll(Slot, lambda s: Implies(log_kind[p][s] == Kind.DATA,
        ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(And(log_inc[p][s] == i, log_k[p][s] == k), And(
            b_e[i][p][k] == log_e[p][s], log_e[p][s] >= 0, b_pid(i, p, k) == log_pid[p][s]))))))),
           "A data batch in the log carries the epoch its client fixed for it (batches are immutable)."),
    Always("IND-124", ForAll(Part, lambda p: Implies(And(ForAll(Tid, lambda t: Not(pl_open[p][t])), hw(p) == pl_end[p]),
                                                     pl_lso[p] == pl_end[p])),
           "With no open span at p and the HW at the log end, the LSO is the log end (HW); with replication lag a "
           "closed span whose marker is above the HW still holds it (§1.4 unreplicated(p))."),
)
INVARIANTS += (
    Always("IND-126", Implies(Config("marker_dups") == 0, each_tid_part(lambda t, p: Not(n_mkd[t][p]))),
           "With marker_dups = 0 no stale WriteTxnMarkers copy is in flight: NET-10, the only row that makes one, "
           "spends that budget."),
)
