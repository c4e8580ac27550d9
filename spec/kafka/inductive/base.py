"""Strengthening invariants of the coordinator's cache and log, the partition log, markers, clients
and decisions (see __init__.py). The IND-1x group is the coordinator, IND-2x the partition log, IND-3x
markers, IND-4x/5x clients and decisions; the helpers below are shared with the other modules."""
from txncheck.spec.expr import And, Config, Exists, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import (NO_PART, TV2, CEpoch, CResp, Inc, Kind, Outcome, Part, PcState, Pend, PendBy, PResp, Rq, Slot, Tid, Txn,
                      TxnState as S, Ver, pid_of, tid_of, writes_to)
from .pids import b_x, cresp_x, durable_x, owner, pc_x
from ..properties import is_batch
from ..state import (b_e, env_late, g_ci, g_ck, g_dec, g_pk, log_kind, log_k, log_out, log_pid, n_creq, n_creq_e, n_creq_p, n_creq_rq, n_cresp,
                    n_late, n_late_ce, n_late_e, n_late_k, n_late_p, n_late_rq,
                    n_cresp_e, n_mk,
                    n_pres, n_prod, pc_e, pc_k, pc_rq, pc_rqp, pc_st, pl_ce, pl_end, pl_first, pl_open, pl_vb, pl_vst,
                    tc_ce, tc_e, tc_ff, tc_mk, tc_parts, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e, tc_pend_p, tc_pend_rot, tc_rot, tc_st, tl_e,
                    tl_parts, tl_st)

PREPARE = (S.PrepareCommit, S.PrepareAbort)
SETTLED = (S.Empty, S.CompleteCommit, S.CompleteAbort)
GONE = (PcState.CRASHED, PcState.FATAL_ERROR)
IN_TXN = (PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION,
          PcState.ABORTABLE_ERROR)


def pending_for(i):
    """The coordinator holds a pending transition for client i's request."""
    t = tid_of(i)
    return And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.CLIENT, tc_pend_cli[t] == i)


def unfenced(t):
    """The cached epoch with no fence pending: the durable one, or one above while a failed fence
    append is remembered (hasFailedEpochFence)."""
    return Or(tc_e[t] == tl_e[t], And(tc_ff[t], tc_e[t] == tl_e[t] + 1))


def decided(i, k):
    return g_dec[i][k] != Outcome.NONE


def each_tid(f):
    return ForAll(Tid, f)


def each_tid_part(f):
    return ForAll(Tid, lambda t: ForAll(Part, lambda p: f(t, p)))


def each_slot(f):
    return ForAll(Part, lambda p: ForAll(Slot, lambda s: f(p, s)))


def each_marker(f):
    return ForAll(Tid, lambda t: ForAll(Part, lambda p: ForAll(CEpoch, lambda c: f(t, p, c))))


def each_batch(f):
    """f(i, p, k) for every client batch: incarnation i's batch to p in its transaction k."""
    return ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: f(i, p, k))))


def batch_slot(p, s, i, k):
    """Slot s of p holds client batch (i, p, k): its first batch, the one the invariants describe (config `batches`)."""
    return And(log_kind[p][s] == Kind.DATA, is_batch(p, s, i, k, 1))


def slot_of(i, p, k):
    """Some slot of p holds client batch (i, p, k)."""
    return Exists(Slot, lambda s: batch_slot(p, s, i, k))


NO_EXPIRY = Config("expiries") == 0
# no two running incarnations share a tid: no zombies, or one incarnation per tid (variant B7)
NO_ZOMBIES = Or(Config("zombies") == 0, Config("incs") <= Config("tids"))
NO_DUPLICATES = Config("duplicates") == 0


def data_of(p, s, t):
    return And(log_kind[p][s] == Kind.DATA, log_pid[p][s] == t)


INVARIANTS = (
    # -- coordinator cache and transaction log ---------------------------------------------------
    Always("IND-11", each_tid(lambda t: tc_st[t] == tl_st[t]),
           "The cached TransactionState is the logged one: a state changes only when its record is durable "
           "(persist, then apply) and a failover reloads it."),
    Always("IND-12", each_tid_part(lambda t, p: tc_parts[t][p] == tl_parts[t][p]),
           "The cached topicPartitions are the logged TransactionPartitions."),
    Always("IND-13", each_tid(lambda t: And(
        Implies(tc_pend[t] == Pend.Empty, tc_st[t].is_in(*SETTLED)),
        Implies(tc_pend[t] == Pend.Ongoing, tc_st[t].is_in(S.Ongoing, *SETTLED)),
        Implies(tc_pend[t] == Pend.PrepareCommit, tc_st[t] == S.Ongoing),
        Implies(tc_pend[t] == Pend.PrepareAbort, Or(tc_st[t] == S.Ongoing, And(
            TV2, tc_pend_by[t].is_in(PendBy.CLIENT, PendBy.ABANDONED), tc_st[t].is_in(*SETTLED)))))),
           "A pending transition starts from one of its valid previous states (prepareTransitionTo checked "
           "it): InitProducerId from Empty/Complete*, an add from Ongoing or a settled state, EndTxn(COMMIT) "
           "from Ongoing, an abort from Ongoing (or, under TV2, a client's abort from a settled state, a late "
           "copy's included)."),
    Always("IND-14", each_tid(lambda t: Not(tc_st[t].is_in(S.Dead, S.PrepareEpochFence))),
           "The coordinator never caches Dead or PrepareEpochFence (§2.1 mechanics 3)."),
    Always("IND-15", each_tid(lambda t: And(
        Implies(And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.INTERNAL), tc_pend[t] == Pend.PrepareAbort),
        Implies(tc_pend_by[t] == PendBy.LEADER, tc_pend[t] == Pend.Ongoing))),
           "The coordinator prepares only fences on its own and only Ongoing for a partition leader (TV2 "
           "implicit add)."),
    Always("IND-16", each_tid(lambda t: And(
        tl_e[t] <= tc_e[t],
        Implies(tc_pend[t] == Pend.NONE, unfenced(t)),
        Implies(And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.INTERNAL),
                And(tc_pend_e[t] == tc_e[t], tc_e[t] == tl_e[t] + 1)),
        Implies(And(tc_pend[t] != Pend.NONE, tc_pend_by[t] != PendBy.INTERNAL),
                And(unfenced(t), If(And(tc_pend[t] == Pend.Empty, tc_pend_rot[t]),  # InitProducerId rotates (§3.14)
                                    And(tc_pend_e[t] == 0, tc_e[t] >= Config("maxe") - 1),
                                    And(tc_pend_e[t] >= tc_e[t], tc_pend_e[t] <= tc_e[t] + 1)))),
        Implies(tc_pend[t] == Pend.Ongoing, tc_pend_e[t] == tc_e[t]),
        Implies(And(TV2, tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_pend_by[t] == PendBy.CLIENT),
                tc_pend_e[t] == tc_e[t] + 1))),
           "The cached producerEpoch is the durable one except during a fence (bumped by one, with the "
           "PrepareAbort pending at it) and after a fence whose append failed (hasFailedEpochFence: it stays "
           "bumped); a client's or leader's pending transition is at the cached epoch or one above (TV2 bumps "
           "at EndTxn)."),
    # -- clients and decisions ------------------------------------------------------------------------
    Always("IND-41", ForAll(Inc, lambda i: And(
        Implies(pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP), pc_st[i].is_in(PcState.INITIALIZING, *GONE)),
        Implies(pc_rq[i] == Rq.COMMIT, pc_st[i].is_in(PcState.COMMITTING_TRANSACTION, *GONE)),
        Implies(pc_rq[i] == Rq.ABORT, pc_st[i].is_in(PcState.ABORTING_TRANSACTION, *GONE)),
        Implies(pc_rq[i] == Rq.ADD, pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR, *GONE)))),
           "The client's outstanding coordinator request matches its TransactionManager state."),
    Always("IND-42", ForAll(Inc, lambda i: And(
        Not(And(n_creq[i], n_cresp[i] != CResp.NONE)), Not(And(n_creq[i], pending_for(i))),
        Not(And(n_cresp[i] != CResp.NONE, pending_for(i))),
        Implies(pc_rq[i] == Rq.NONE, And(Not(n_creq[i]), n_cresp[i] == CResp.NONE, Not(pending_for(i)))))),
           "A client's one coordinator request is in exactly one place: in flight, pending at the "
           "coordinator, or answered."),
    Always("IND-43", ForAll(Inc, lambda i: ForAll(Inc, lambda j: Implies(
        And(Config("zombies") == 0, i < j, pc_st[j] != PcState.IDLE), pc_st[i] == PcState.CRASHED))),
           "Without zombies, an incarnation starts only after every older one crashed."),
    Always("IND-44", ForAll(Inc, lambda i: Implies(pc_st[i] == PcState.IDLE, And(
        pc_rq[i] == Rq.NONE, Not(n_creq[i]), n_cresp[i] == CResp.NONE, pc_e[i] == -1, pc_k[i] == 0,
        n_cresp_e[i] == -1))),
           "An incarnation that has not started has sent nothing and holds no epoch."),
    Always("IND-45", ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: Implies(k > pc_k[i], And(
        b_e[i][p][k] == -1, n_prod[i][p][k][1] == 0, n_pres[i][p][k][1] == PResp.NONE))))),
           "A transaction the client has not begun has no batch, no Produce request and no response."),
    Always("IND-46", each_batch(lambda i, p, k: Implies(pl_vb[p][i][k][1] != Ver.NONE, k <= pc_k[i])),
           "A batch a leader holds for verification belongs to a transaction its client has begun."),
    Always("IND-47", ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(decided(i, k), k <= pc_k[i]))),
           "Only transactions a client has begun are decided."),
    Always("IND-48", ForAll(Tid, lambda t: ForAll(Inc, lambda i: And(
        Implies(g_ci[t] == i, g_ck[t] <= pc_k[i]),
        Implies(And(tc_pend[t] == Pend.Ongoing, tc_pend_cli[t] == i), g_pk[t] <= pc_k[i])))),
           "The coordinator's current (or pending) transaction of a client is one the client has begun."),
    Always("IND-49", ForAll(Tid, lambda t: ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(tc_st[t] == S.Ongoing, g_ci[t] == i, g_ck[t] == k), g_dec[i][k] == Outcome.NONE)))),
           "The transaction the coordinator holds Ongoing is not decided yet."),
    Always("IND-50", ForAll(Tid, lambda t: ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(tc_pend[t] == Pend.Ongoing, tc_st[t] != S.Ongoing, tc_pend_cli[t] == i, g_pk[t] == k),
        g_dec[i][k] == Outcome.NONE)))),
           "A transaction whose start (Empty/Complete* -> Ongoing) is pending is not decided yet."),
    Always("IND-51", ForAll(Inc, lambda i: And(
        pc_x(i) <= durable_x(tid_of(i)), cresp_x(i) <= durable_x(tid_of(i)),
        ForAll(Part, lambda p: ForAll(Txn, lambda k: b_x(i, p, k) <= durable_x(tid_of(i)))))),
           "No client, response or batch carries an epoch above the durable one: epochs are handed out only "
           "once logged."),
    Always("IND-52", ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: Implies(
        And(TV2, writes_to(p), decided(i, k)), b_x(i, p, k) < durable_x(tid_of(i)))))),
           "Under TV2, a decided transaction's batches, its TxnOffsetCommit on op included, carry an epoch below "
           "the durable one (every EndTxn and fence bumps it before the decision is logged)."),
    Always("IND-53", ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(TV2, decided(i, k), pc_k[i] == k, pc_st[i].is_in(*IN_TXN)), pc_x(i) < durable_x(tid_of(i))))),
           "Under TV2, a client still inside a decided transaction holds an epoch below the durable one."),
    Always("IND-54", ForAll(Inc, lambda i: If(
        n_creq[i],
        And(n_creq_rq[i] == pc_rq[i], n_creq_e[i] == pc_e[i], n_creq_p[i] == If(pc_rq[i] == Rq.ADD, pc_rqp[i], NO_PART)),
        And(n_creq_rq[i] == Rq.NONE, n_creq_e[i] == -1, n_creq_p[i] == NO_PART))),
           "The coordinator request in flight carries the client's outstanding request (kind, epoch and, for an "
           "add, partition), which the client does not change while it is outstanding; a request not in flight "
           "leaves no fields in the network."),
    Always("IND-220", And(
        ForAll(Inc, lambda i: And((pc_rq[i] == Rq.ADD) == (pc_rqp[i] != NO_PART),
                                  (n_late_rq[i] == Rq.ADD) == (n_late_p[i] != NO_PART))),
        ForAll(Tid, lambda t: (tc_pend[t] == Pend.Ongoing) == (tc_pend_p[t] != NO_PART))),
           "A partition field holds a partition exactly while its request is an add (or its pending transition the "
           "Ongoing an add prepares), and none otherwise."),
    Always("IND-56", ForAll(Inc, lambda i: Implies(And(pending_for(i), tc_pend[tid_of(i)] == Pend.Ongoing),
                                                   tc_pend_p[tid_of(i)] == pc_rqp[i])),
           "The partition a client's add being logged adds is the one its outstanding request names."),
    Always("IND-55", And(
        ForAll(Inc, lambda i: And(n_late[i] == (n_late_rq[i] != Rq.NONE), Implies(Config("late_requests") == 0, And(
            Not(n_late[i]), n_late_e[i] == -1, n_late_p[i] == NO_PART, n_late_k[i] == 0)),
            Implies(Not(n_late[i]), n_late_ce[i] == 0), n_late_ce[i] <= tc_ce[tid_of(i)])),
        Implies(Config("late_requests") == 0, And(env_late == 0, ForAll(Tid, lambda t: tc_pend_by[t] != PendBy.ABANDONED)))),
           "A late copy is present exactly when it has a kind, and names a coordinator epoch no later than the "
           "coordinator's; without the late_requests budget there is none, and no transition waits for an abandoned "
           "request."),
    # -- partition log ------------------------------------------------------------------------------
    Always("IND-21", each_batch(lambda i, p, k: Implies(
        And(pl_vb[p][i][k][1] == Ver.OK, Not(pl_vst[p][i][k][1])),
        And(tl_st[tid_of(i)].is_in(S.Ongoing, *PREPARE), tl_parts[tid_of(i)][p]))),
           "A batch the coordinator verified whose guard is still current (no transactional append of its pid at "
           "p since) belongs to a transaction whose durable record is Ongoing or Prepare* and lists p."),
    Always("IND-22", ForAll(Part, lambda p: ForAll(Tid, lambda t: ForAll(Slot, lambda s: Implies(
        data_of(p, s, t), (log_out[p][s] == Outcome.NONE) == And(pl_open[p][t], s >= pl_first[p][t]))))),
           "A data batch has no outcome exactly when it is in its pid's open span (at or after the span's "
           "first offset): spans are closed by markers as a whole."),
    Always("IND-23", each_tid_part(lambda t, p: Implies(pl_open[p][t], And(
        pl_first[p][t] < pl_end[p], log_kind[p][pl_first[p][t]] == Kind.DATA, log_pid[p][pl_first[p][t]] == t))),
           "An open span starts at a data batch of its pid below the log end (currentTxnFirstOffset)."),
    Always("IND-24", each_slot(lambda p, s: Implies(log_kind[p][s] != Kind.DATA, log_out[p][s] == Outcome.NONE)),
           "Only data batches have an outcome: control batches and empty slots are never closed."),
    Always("IND-25", each_slot(lambda p, s: Implies(log_kind[p][s] == Kind.DATA, log_k[p][s] >= 1)),
           "Every data batch belongs to a transaction the client began (γ = (incarnation, k >= 1))."),
    # -- markers ------------------------------------------------------------------------------------
    Always("IND-31", each_tid_part(lambda t, p: Implies(tc_mk[t][p], And(tl_st[t].is_in(*PREPARE), tl_parts[t][p]))),
           "The coordinator awaits a marker only for a partition of a durable Prepare* transaction."),
    Always("IND-32", each_tid_part(lambda t, p: Implies(
        And(TV2, tl_st[t].is_in(*PREPARE), Not(tc_mk[t][p])), And(Not(pl_open[p][pid_of(t, tc_rot[t])]), ForAll(Inc, lambda i: ForAll(
            Txn, lambda k: Implies(tid_of(i) == t, Not(And(pl_vb[p][i][k][1] == Ver.OK, Not(pl_vst[p][i][k][1]))))))))),
           "Under TV2 (KIP-890 part 2), once p acknowledged a Prepare* transaction's marker its span stays "
           "closed: a late batch needs a verification the coordinator refuses in Prepare*. (Under KIP-98 a "
           "late produce reopens it: B1.)"),
    Always("IND-33", each_marker(lambda t, p, c: Implies(n_mk[t][p][c], c <= tc_ce[t])),
           "No marker in flight comes from a coordinator epoch the coordinator has not reached."),
    Always("IND-34", each_tid_part(lambda u, p: pl_ce[p][u] <= tc_ce[owner(u)]),
           "No partition stored a coordinator epoch the coordinator has not reached."),
    Always("IND-35", each_marker(lambda t, p, c: Implies(And(n_mk[t][p][c], c == tc_ce[t]), tc_mk[t][p])),
           "A marker of the current coordinator epoch still in flight is still awaited."),
)
