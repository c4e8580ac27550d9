"""Strengthening invariants under protocols (a) KIP-98 and (b) KIP-890 part 1 (`protocol` kip98 or
verify): with them, on tiny with protocol kip98 and delays 0 (the setting most B-variants start
from, KIP98_NO_B1), every always property but BOUNDS is 1-inductive (see __init__.py).

Without the per-transaction epoch bump of TV2, consecutive transactions share (pid, e), so what the
TV2 invariants get from the epoch these get from the absence of late produce: no delivery-timeout
expiry of an in-flight batch (delays 0), no client resend and no zombie (KIP98_ND). IND-191, 207
and 208 are the KIP98_ND twins of IND-32, IND-81 and IND-64.
"""
from txncheck.spec.expr import And, Config, Exists, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always

from ..domains import (MULTI_BATCH, SEQ_GIVEN_BACK, BatchSt, CResp, Inc, KIP98, Kind, Outcome, PResp, Part, PcState, Pend, PendBy, Rq, Slot, TV01,
                       Tid, Txn, Ver, in_use, tid_of, TxnState as S)
from ..state import (b_e, b_s, g_ci, g_ck, g_dec, g_pk, log_inc, log_k, log_kind, log_out, log_pid, log_ret, n_creq,
                     n_cresp, n_cresp_e, n_pres, n_prod, pc_add, pc_b, pc_e, pc_k, pc_rq, pc_rqp, pc_seq, pc_st, pl_e,
                     pl_first, pl_open, pl_seq, pl_vb, tc_e, tc_mk, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e,
                     tc_st, tl_e, tl_parts, tl_st)
from .pids import durable_x, init_epoch, pc_x
from .base import (IN_TXN, NO_DUPLICATES, NO_EXPIRY, NO_ZOMBIES, PREPARE, decided, each_batch, each_tid,
                   each_tid_part, pending_for)
from .idempotence import dominated, held

NO_DELAYS = Config("delays") == 0
# protocols (a)/(b) without late produce (no delivery-timeout expiry of an in-flight batch), no client resend and
# no zombie incarnation
KIP98_ND = And(TV01, NO_DELAYS, NO_DUPLICATES, NO_ZOMBIES)
ONE_BATCH = Not(MULTI_BATCH)  # one batch per partition per transaction (config batches, §2.3)


def registered(i, p):
    t = tid_of(i)
    return Or(And(tl_st[t] == S.Ongoing, tl_e[t] == pc_e[i], tl_parts[t][p], g_ci[t] == i, g_ck[t] == pc_k[i]),
              And(pc_e[i] < tl_e[t], Or(pl_e[p][t] > pc_e[i], And(tl_st[t] == S.PrepareAbort, tl_parts[t][p], tc_mk[t][p],
                                                        g_ci[t] == i, g_ck[t] == pc_k[i]))))


INVARIANTS = (
    Always("IND-190", ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        And(decided(i, k), pc_k[i] == k, Or(pc_rq[i] == Rq.ADD, pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.ABORTABLE_ERROR))),
        pc_x(i) < durable_x(tid_of(i))))),
           "A client still writing a transaction (or with its AddPartitionsToTxn outstanding, even crashed) that is "
           "already decided was fenced: only its own EndTxn (which "
           "moves it to COMMITTING/ABORTING) or an epoch fence (which bumps the durable epoch) decides it."),

    Always("IND-191", each_tid_part(lambda t, p: Implies(
        And(KIP98_ND, tl_st[t].is_in(*PREPARE), tl_parts[t][p], Not(tc_mk[t][p])), Not(pl_open[p][t]))),
           "Without late produce (KIP-98/KIP-890 part 1, no delivery-timeout expiry), once p acknowledged a "
           "Prepare* transaction's marker its span stays closed: no batch that could still be appended is in flight."),
    Always("IND-192", each_batch(lambda i, p, k: Implies(
        And(KIP98_ND, Or(n_prod[i][p][k][1] > 0, n_pres[i][p][k][1] == PResp.RETRY, held(p, i, k)), Not(dominated(i, p, k))), And(
            tl_parts[tid_of(i)][p],
            Or(And(tl_st[tid_of(i)] == S.Ongoing, b_e[i][p][k] == tl_e[tid_of(i)], g_ci[tid_of(i)] == i,
                   g_ck[tid_of(i)] == k),
               And(tl_st[tid_of(i)] == S.PrepareAbort, tc_mk[tid_of(i)][p], b_e[i][p][k] < tl_e[tid_of(i)],
                   g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == k))))),
           "Without late produce, a Produce in flight (or to be resent, or held for verification) that p would still "
           "append belongs to the coordinator's "
           "Ongoing transaction, which lists p, or to the current one an epoch fence is aborting, whose marker p has "
           "not "
           "written yet (the marker's bumped epoch then fences it)."),

    Always("IND-193", each_batch(lambda i, p, k: Implies(
        And(NO_DELAYS, NO_DUPLICATES, Or(n_prod[i][p][k][1] > 0, n_pres[i][p][k][1] == PResp.RETRY, held(p, i, k))),
        And(k == pc_k[i], pc_b[i][p][1] == BatchSt.SENT))),
           "Without delivery-timeout expiry or resends, a batch still in flight (or to be resent, or held for "
           "verification) is its client's current one and still in flight for the client too: the client fails a "
           "batch only on an answer, and ends a transaction only when no batch is in flight."),

    Always("IND-194", ForAll(Inc, lambda i: ForAll(Part, lambda p: Implies(
        And(KIP98_ND, pc_add[i][p], pc_st[i].is_in(*IN_TXN)), Or(registered(i, p), And(
            tl_e[tid_of(i)] == pc_e[i],
            Or(And(pc_st[i] == PcState.COMMITTING_TRANSACTION, tl_st[tid_of(i)].is_in(S.PrepareCommit, S.CompleteCommit),
                   ForAll(Txn, lambda k: Implies(k == pc_k[i], g_dec[i][k] == Outcome.COMMIT))),
               And(pc_st[i] == PcState.ABORTING_TRANSACTION, tl_st[tid_of(i)].is_in(S.PrepareAbort, S.CompleteAbort),
                   ForAll(Txn, lambda k: Implies(k == pc_k[i], g_dec[i][k] == Outcome.ABORT))))))))),
           "Under KIP-98 (no late produce), a client in a transaction that registered p either is the "
           "coordinator's Ongoing transaction at its epoch, which lists p, or was fenced (p already stores a higher "
           "epoch or the fence's abort marker for p is still to be written), or its own EndTxn decided it as asked "
           "(at its epoch)."),
    Always("IND-196", ForAll(Inc, lambda i: Implies(
        And(KIP98_ND, pc_rq[i] == Rq.ADD, n_cresp[i] == CResp.OK, pc_st[i].is_in(*IN_TXN)),
        registered(i, pc_rqp[i]))),
           "Under KIP-98, an AddPartitionsToTxn answered NONE to a client in a transaction was made durable for it "
           "(as IND-194 once the client records it)."),
    Always("IND-197", ForAll(Inc, lambda i: Implies(
        And(KIP98_ND, pending_for(i), tc_pend[tid_of(i)] == Pend.Ongoing), And(
            tc_pend_e[tid_of(i)] == pc_e[i], g_pk[tid_of(i)] == pc_k[i],
            Implies(tc_st[tid_of(i)] == S.Ongoing, And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i]))))),
           "Under KIP-98, an AddPartitionsToTxn being logged is at the client's epoch for its current transaction, "
           "which is the coordinator's Ongoing one if any."),
    Always("IND-198", ForAll(Inc, lambda i: Implies(
        And(TV01, Or(n_creq[i], n_cresp[i] == CResp.RETRY, pending_for(i)),
            pc_rq[i].is_in(Rq.ADD, Rq.COMMIT, Rq.ABORT), tl_st[tid_of(i)] == S.Ongoing, pc_e[i] == tl_e[tid_of(i)]),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i]))),
           "Under KIP-98, a transactional request in flight (or being logged, or to be resent) at the epoch of an "
           "Ongoing transaction is from that "
           "transaction's client and for it: incarnations hold distinct epochs and a client begins a transaction "
           "only after its previous EndTxn was made durable."),
    Always("IND-195", Implies(Config("ctp") == 0, And(
        ForAll(Inc, lambda i: And(
            ForAll(Part, lambda p: Implies(pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT, Rq.INIT, Rq.INITBUMP),
                                           pc_b[i][p][1] != BatchSt.SENT)),
            ForAll(Part, lambda p: Implies(And(in_use(p), pc_b[i][p][1] != BatchSt.NONE), pc_add[i][p])),
            Implies(pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT), Exists(Part, lambda q: pc_add[i][q])),
            Implies(pc_rq[i].is_in(Rq.ADD, Rq.COMMIT, Rq.ABORT), pc_k[i] >= 1),
            Implies(Or(pc_rq[i] == Rq.INIT, pc_st[i].is_in(PcState.IDLE, PcState.UNINITIALIZED)), And(
                pc_k[i] == 0, ForAll(Part, lambda q: And(Not(pc_add[i][q]), pc_b[i][q][1] == BatchSt.NONE)))))),
        each_tid(lambda t: Implies(
            And(tc_pend[t] == Pend.Empty, tc_pend_by[t] == PendBy.CLIENT, pc_rq[tc_pend_cli[t]] == Rq.INIT),
            And(tc_e[t] == tl_e[t], tc_pend_e[t] == init_epoch(t)))))),
           "Without consume-transform-produce (whose offsets partition is added by AddOffsetsToTxn, not by a "
           "batch), a client's outstanding request (even one that crashed since) matches its script: a batch to a "
           "data partition means it was added, EndTxn and InitProducerId wait for every batch, EndTxn is sent "
           "only for a started transaction, AddPartitionsToTxn and EndTxn only inside a begun one, the first "
           "InitProducerId before any; a pending first InitProducerId bumps the durable epoch (I7)."),
    Always("IND-199", And(
        each_tid_part(lambda t, p: Implies(TV01, tc_pend_by[t] != PendBy.LEADER)),
        each_batch(lambda i, p, k: And(Implies(TV01, pl_vb[p][i][k][1] != Ver.ADDING),
                                       Implies(KIP98, pl_vb[p][i][k][1] == Ver.NONE))),
        ForAll(Inc, lambda i: And(
            Implies(pc_rq[i] == Rq.INIT, n_cresp[i].is_in(CResp.NONE, CResp.OK, CResp.RETRY)),
            Implies(pc_rq[i] == Rq.INITBUMP, n_cresp[i].is_in(CResp.NONE, CResp.OK, CResp.RETRY, CResp.FENCED))))),
           "Before TV2 no partition leader adds a partition implicitly, under KIP-98 no leader verifies at all, and "
           "InitProducerId is answered only NONE, CONCURRENT_TRANSACTIONS/NOT_COORDINATOR or (with an epoch, "
           "KIP-360) PRODUCER_FENCED."),

    Always("IND-200", ForAll(Inc, lambda i: Implies(
        And(TV01, pc_st[i].is_in(PcState.READY, *IN_TXN), tl_st[tid_of(i)] == S.Ongoing, pc_e[i] == tl_e[tid_of(i)]),
        And(g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i], pc_st[i] != PcState.READY))),
           "Before TV2, an Ongoing transaction at the epoch a live client holds is that client's current one: "
           "incarnations hold distinct epochs and the client's previous transaction was prepared before it began "
           "this one."),

    Always("IND-201", ForAll(Inc, lambda i: Implies(
        And(TV01, tl_st[tid_of(i)] == S.Ongoing, g_ci[tid_of(i)] == i, g_ck[tid_of(i)] == pc_k[i],
            pc_st[i].is_in(*IN_TXN)),
        Or(pc_rq[i] == Rq.ADD, Exists(Part, lambda q: pc_add[i][q])))),
           "Before TV2, a client whose current transaction the coordinator holds Ongoing has started it: an "
           "AddPartitionsToTxn of it is answered or still outstanding (so abortTransaction sends EndTxn)."),

    Always("IND-202", ForAll(Inc, lambda i: Implies(
        And(TV01, pc_st[i] == PcState.INITIALIZING, pc_rq[i].is_in(Rq.INIT, Rq.INITBUMP), n_cresp[i] == CResp.OK),
        And(Not(And(tl_st[tid_of(i)] == S.Ongoing, tl_e[tid_of(i)] == n_cresp_e[i])),
            Not(And(tc_pend[tid_of(i)] == Pend.Ongoing, tc_pend_e[tid_of(i)] == n_cresp_e[i]))))),
           "Before TV2, no transaction is started at the epoch an InitProducerId answer in flight hands out to a live "
           "client: only "
           "that client could start one, and it has not read the answer yet."),

    Always("IND-203", ForAll(Inc, lambda i: Implies(
        And(TV01, pc_st[i].is_in(PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION),
            pc_rq[i].is_in(Rq.COMMIT, Rq.ABORT), n_cresp[i] == CResp.OK),
        And(ForAll(Txn, lambda k: Implies(k == pc_k[i], g_dec[i][k] == If(pc_rq[i] == Rq.COMMIT, Outcome.COMMIT, Outcome.ABORT))),
            Not(And(tl_st[tid_of(i)] == S.Ongoing, tl_e[tid_of(i)] == pc_e[i])),
            Not(And(tc_pend[tid_of(i)] == Pend.Ongoing, tc_pend_e[tid_of(i)] == pc_e[i]))))),
           "Before TV2, an EndTxn answered NONE to a live client means its transaction's PrepareX is durable "
           "(decided as asked) and, until the client reads the answer, nothing starts another transaction at its "
           "epoch."),

    Always("IND-204", each_tid(lambda t: Implies(
        And(TV01, tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_pend_by[t] == PendBy.CLIENT),
        And(tc_st[t] == S.Ongoing, tc_pend_e[t] == tc_e[t], tc_e[t] == tl_e[t], pc_e[tc_pend_cli[t]] == tc_e[t],
            g_ci[t] == tc_pend_cli[t], g_ck[t] == pc_k[tc_pend_cli[t]]))),
           "Before TV2, an EndTxn being logged prepares the requesting client's current Ongoing transaction at the "
           "epoch it holds, which is the durable one (E4: no bump)."),

    Always("IND-205", ForAll(Inc, lambda i: ForAll(Part, lambda p: Implies(
        And(TV01, pc_st[i].is_in(*IN_TXN), pc_b[i][p][1] != BatchSt.NONE),
        And(pc_add[i][p], ForAll(Txn, lambda k: Implies(k == pc_k[i], b_e[i][p][k] == pc_e[i])))))),
           "Before TV2, a client sends a batch to p only after AddPartitionsToTxn(p) succeeded, and within a "
           "transaction its epoch does not change, so the batch carries it."),

    Always("IND-206", And(
        each_batch(lambda i, p, k: Implies(
            And(KIP98_ND, ONE_BATCH, in_use(p), Or(n_prod[i][p][k][1] > 0, n_pres[i][p][k][1] == PResp.RETRY,
                                                  held(p, i, k)),
                b_e[i][p][k] == pl_e[p][tid_of(i)]), b_s[i][p][k][1] > pl_seq[p][tid_of(i)])),
        each_batch(lambda i, p, k: Implies(And(TV01, NO_EXPIRY, ONE_BATCH, in_use(p), b_e[i][p][k] != -1,
                                                   b_e[i][p][k] == pc_e[i]),
                                           If(SEQ_GIVEN_BACK, b_s[i][p][k][1] <= pc_seq[i][p],
                                              b_s[i][p][k][1] < pc_seq[i][p]))),
        ForAll(Inc, lambda i: ForAll(Part, lambda p: Implies(
            And(TV01, NO_EXPIRY, NO_ZOMBIES, ONE_BATCH, in_use(p), pc_e[i] != -1, pc_e[i] == pl_e[p][tid_of(i)]),
            pc_seq[i][p] > pl_seq[p][tid_of(i)])))),
           "Before TV2 (one epoch spans a client's consecutive transactions, sequence numbers keep growing), a "
           "batch still in flight at p's stored epoch has a sequence above p's last one, as has the next batch "
           "a client holding that epoch creates: the client numbers batches in the order it sends them, one "
           "at a time per partition (data partitions: a TxnOffsetCommit carries no sequence). With several batches "
           "per partition (config batches) the second may be appended first and the first give its sequence back "
           "(kafka-protocol §2.3), so it needs batches=1. A client that keeps its epoch after a failed batch gives "
           "the sequence back (SEQ_GIVEN_BACK), so its next batch may carry the failed one's."),
    Always("IND-207", ForAll(Part, lambda p: ForAll(Tid, lambda t: ForAll(Slot, lambda s: Implies(
        And(KIP98_ND, log_kind[p][s] == Kind.DATA, log_pid[p][s] == t, pl_open[p][t], s >= pl_first[p][t]),
        And(g_ck[t] >= 1, log_inc[p][s] == g_ci[t], log_k[p][s] == g_ck[t]))))),
           "Without late produce, the data of an open span belongs to the coordinator's current transaction "
           "(the twin of IND-81 for KIP-98: consecutive transactions share the epoch, but a batch is appended only "
           "while its own transaction is current)."),

    Always("IND-208", ForAll(Part, lambda p: ForAll(Tid, lambda t: ForAll(Slot, lambda s: Implies(
        And(KIP98_ND, log_kind[p][s] == Kind.DATA, log_pid[p][s] == t, log_ret[p][s], log_out[p][s] == Outcome.NONE),
        tl_st[t] == S.PrepareAbort)))),
           "Without late produce, a batch appended with a retired epoch and still open belongs to a transaction an "
           "epoch fence is aborting (the twin of IND-64): before KIP-890 only a fence bumps the epoch "
           "mid-transaction."),
)
