"""Zombie-aware strengthening invariants (zombies = 1, config eos): IND-170..IND-187; with them every
always property but BOUNDS is 1-inductive on eos (see __init__.py).

The core is epoch ownership (IND-170..IND-173, IND-179, IND-180): each epoch is handed to one incarnation
and, under TV2, the epochs of two incarnations of a tid never interleave, so the facts that the NO_ZOMBIES
invariants state for "the" client hold for whichever incarnation holds the coordinator's epoch (the ctp
invariants IND-156..160 and 164 need no zombie guard for that reason). IND-174..178 and IND-187 are twins of
IND-103, 110, 112, 113, 117 and 114 without the NO_ZOMBIES guard."""
from txncheck.spec.expr import And, Exists, ForAll, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import TV2, CResp, Inc, Outcome, Part, PcState, Pend, Rq, Txn, tid_of, TxnState as S
from ..state import (b_e, g_ci, g_ck, n_creq, n_cresp, n_cresp_e, pc_e, pc_k, pc_rq, pc_st, tc_pend,
                     tc_st)
from .base import pending_for
from .pids import b_x, below_x, cresp_x, handed_pend_x, handed_x, pc_x, tc_x
from .outcome import ACTIVE, COMMITTING, dec_cur


HANDS = (Pend.Empty, Pend.PrepareCommit, Pend.PrepareAbort)


def carriers(i):
    """The epochs incarnation i holds, is being handed, or fixed in a batch, as generators: gen(Q, g) applies
    g(condition, epoch) to each, closing a batch's indices with the quantifier Q (ForAll or Exists)."""
    t = tid_of(i)
    return (lambda Q, g: g(pc_e[i] != -1, pc_x(i)),
            lambda Q, g: g(And(n_cresp[i] == CResp.OK, n_cresp_e[i] != -1), cresp_x(i)),
            lambda Q, g: g(And(pending_for(i), tc_pend[t].is_in(*HANDS)), handed_pend_x(t)),
            lambda Q, g: Q(Part, lambda p: Q(Txn, lambda k: g(b_e[i][p][k] != -1, b_x(i, p, k)))))


def all_pairs(i, j, rel):
    """rel(x, y) for every epoch x of i and y of j."""
    return And(*[gi(ForAll, lambda ci, ei: gj(ForAll, lambda cj, ej: Implies(And(ci, cj), rel(ei, ej))))
                 for gi in carriers(i) for gj in carriers(j)])


def has(i, pred):
    """Some epoch of i satisfies pred."""
    return Or(*[g(Exists, lambda c, e: And(c, pred(e))) for g in carriers(i)])


def others(i, f):
    """f(j) for every other incarnation j of i's transactional id."""
    return ForAll(Inc, lambda j: Implies(And(j != i, tid_of(j) == tid_of(i)), f(j)))


INVARIANTS = (
    Always("IND-170", ForAll(Inc, lambda i: others(i, lambda j: Implies(TV2, all_pairs(i, j, lambda x, y: x != y)))),
           "Under TV2 an epoch is handed to one incarnation only: every InitProducerId and EndTxn answer carries a fresh bump "
           "above every epoch handed out before (or, for a retried EndTxn, the bump of the requester's own epoch), "
           "so two incarnations of a transactional id never hold, are being handed, or wrote a batch with the same "
           "epoch."),
    Always("IND-171", ForAll(Inc, lambda i: others(i, lambda j: Implies(TV2, Or(
        all_pairs(i, j, lambda x, y: x < y), all_pairs(i, j, lambda x, y: y < x))))),
           "Under TV2 the epochs of two incarnations do not interleave: a fresh bump goes above every epoch handed "
           "out, an incarnation asks InitProducerId only before it holds any epoch, and a retried EndTxn is answered "
           "the bump of the requester's own epoch, so the incarnation that asked last holds only epochs above the "
           "other's."),
    Always("IND-172", ForAll(Inc, lambda i: Implies(And(TV2, pc_rq[i] == Rq.INIT), pc_e[i] == -1)),
           "Under TV2 a client sends InitProducerId only from initTransactions, before it holds an epoch (EndTxn "
           "bumps instead of a KIP-360 re-initialisation)."),
    Always("IND-173", ForAll(Inc, lambda i: others(i, lambda j: Implies(
        And(TV2, tc_st[tid_of(i)].is_in(S.PrepareCommit, S.PrepareAbort, S.CompleteCommit, S.CompleteAbort)),
        Not(And(has(i, lambda x: x == below_x(tid_of(i))), has(j, lambda x: x == handed_x(tid_of(i)))))))),
           "Under TV2 the epoch of a Prepare*/Complete* record is the bump of the one below it, made by that epoch's "
           "EndTxn (handed to its requester) or by a fence (handed to nobody): no incarnation holds it while another "
           "holds the epoch below."),
    Always("IND-174", ForAll(Inc, lambda i: Implies(
        And(TV2, pc_st[i].is_in(*ACTIVE), tc_st[tid_of(i)] == S.Ongoing, pc_x(i) == tc_x(tid_of(i))),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i], pc_st[i] != PcState.READY))),
           "IND-103 with zombies: under TV2 an Ongoing transaction at the epoch a live client holds is that client's "
           "current one (only the holder of an epoch writes with it, IND-170)."),
    Always("IND-175", ForAll(Inc, lambda i: Implies(
        And(TV2, pc_st[i] == COMMITTING, pc_rq[i] == Rq.COMMIT, pc_x(i) + 1 == tc_x(tid_of(i)),
            tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)), dec_cur(i, Outcome.COMMIT))),
           "IND-110 with zombies: under TV2 a PrepareCommit/CompleteCommit one epoch above a committing client's is "
           "that client's EndTxn(COMMIT) (only the holder of an epoch ends a transaction with it; a fence aborts)."),
    Always("IND-176", ForAll(Inc, lambda i: Implies(
        And(TV2, n_creq[i], pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT), tc_st[tid_of(i)] == S.Ongoing,
            pc_x(i) == tc_x(tid_of(i))),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i]))),
           "IND-112 with zombies: under TV2 an EndTxn in flight at the epoch of an Ongoing transaction is for that "
           "transaction (its sender holds the epoch that started it)."),
    Always("IND-177", ForAll(Inc, lambda i: Implies(
        And(TV2, pc_st[i].is_in(PcState.READY, PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR,
                                PcState.ABORTING_TRANSACTION), tc_x(tid_of(i)) == pc_x(i) + 1),
        Not(tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)))),
           "IND-113 with zombies: under TV2 only the holder's own EndTxn(COMMIT) commits at the epoch above its own, "
           "so a client not committing never finds such a commit."),
    Always("IND-178", ForAll(Inc, lambda i: ForAll(Inc, lambda j: Implies(
        And(i != j, tid_of(i) == tid_of(j), pc_st[i] == PcState.CRASHED, pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT)), And(
            Implies(pc_e[j] != -1, pc_x(i) < pc_x(j)),
            Implies(And(n_cresp[j] == CResp.OK, pc_rq[j] == Rq.INIT), pc_x(i) < cresp_x(j)))))),
           "IND-117 with zombies: a crashed client whose EndTxn is still outstanding holds an epoch below any other "
           "incarnation's (a restart follows the crash, and its InitProducerId bumps past it)."),
    Always("IND-179", ForAll(Inc, lambda i: Implies(n_cresp[i] != CResp.OK, n_cresp_e[i] == -1)),
           "Only a coordinator answer NONE carries an epoch (InitProducerId, and EndTxn under TV2); errors carry none "
           "and a consumed or dropped answer leaves none behind."),
    Always("IND-180", ForAll(Inc, lambda i: Implies(
        And(TV2, n_cresp[i] == CResp.OK, n_cresp_e[i] != -1), And(
            Not(And(tc_st[tid_of(i)] == S.Ongoing, tc_x(tid_of(i)) == cresp_x(i))),
            Not(And(tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit),
                    tc_x(tid_of(i)) == cresp_x(i) + 1))))),
           "Under TV2 an epoch handed in an answer the client has not consumed yet has started no transaction and "
           "committed none: only its holder writes or ends a transaction with it."),
    # -- consume-transform-produce: IND-156..IND-160, IND-164 without NO_ZOMBIES -------------------------
    Always("IND-187", ForAll(Inc, lambda i: Implies(
        And(TV2, n_cresp[i] == CResp.OK, n_cresp_e[i] != -1, cresp_x(i) == handed_x(tid_of(i))), And(
            Implies(pc_rq[i] == Rq.INIT, tc_st[tid_of(i)] == S.Empty),
            Implies(pc_rq[i] == Rq.COMMIT, tc_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit)),
            Implies(pc_rq[i] == Rq.ABORT, tc_st[tid_of(i)].is_in(S.PrepareAbort, S.CompleteAbort))))),
           "IND-114 with zombies: under TV2 an answer NONE carrying the coordinator's current epoch finds the "
           "coordinator still in the state it reported (Empty after InitProducerId, PrepareX/CompleteX after EndTxn(X)): "
           "only the answer's recipient could move it without a further bump."),
)
