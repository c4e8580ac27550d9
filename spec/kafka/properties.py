"""Properties of §5 with Kafka's names, over ghost and protocol state.

RC(p), the records a read_committed reader gets, are the data slots below LSO(p) that are not in
an aborted span: {s < LSO(p) : kind = DATA ∧ outcome ≠ ABORT}. RU(p) is every data slot below the
HW (= log end unless `replication_lag` is 1; the LSO is at most the HW, so RC(p) is below it too). Two-state properties (DUR-2, ORD-3's monotonic LSO) are ghost flags set by the
rows that could break them (`g_vislost`, `g_lso_dec`), so they are checked on every transition.
"""
from txncheck.spec.expr import And, Config, Exists, ForAll, If, Implies, Not, Or
from txncheck.spec.model import Always, LeadsTo, Recoverable, Sometimes

from .domains import (ROTATION, CTP, LAG, OP, Bat, BatSlot, PResp, Protocol, pid_of, tid_of, BatchSt, CEpoch, InOffset, Inc, Kind, Outcome, Part, PcState, Pend, Slot,
                      Tid, Txn, TxnState as S, in_use)
from .state import (pc_rot, tc_rot, env_to, g_ack, g_ackc, g_bound, g_cereg, g_dec, g_f2, g_illegal, pc_b, pc_k, g_lso_dec, g_torn, g_vislost, gc_off, log_b, log_inc, log_k,
                    log_kind, log_out, log_pid, log_ret, log_e, log_seq, log_src, n_mk, n_pres, hw, pc_e, pc_st, pl_end, pl_first,
                    pl_lso, pl_open, tc_e, tc_pend, tc_st, tl_e, tl_parts, tl_st, w_dup, w_fence, w_gen, w_redrive, w_vrej)

DATA = Kind.DATA
PREPARE = (S.PrepareCommit, S.PrepareAbort)


def data(p, s):
    return log_kind[p][s] == DATA


def in_rc(p, s):
    return And(s < pl_lso[p], data(p, s), log_out[p][s] != Outcome.ABORT)


def all_slots(fn):
    return ForAll(Part, lambda p: ForAll(Slot, lambda s: fn(p, s)))


quiescent = And(ForAll(Part, lambda p: ForAll(Tid, lambda t: Not(pl_open[p][t]))),
                ForAll(Tid, lambda t: And(Not(tc_st[t].is_in(*PREPARE)), tc_pend[t] == Pend.NONE)),
                ForAll(Tid, lambda t: ForAll(Part, lambda p: ForAll(CEpoch, lambda c: Not(n_mk[t][p][c])))))



def same_txn(p, s, q, s2):
    return And(log_inc[p][s] == log_inc[q][s2], log_k[p][s] == log_k[q][s2])


def is_batch(p, s, i, k, b):
    """Data slot (p, s) holds batch b of incarnation i's transaction k."""
    return And(log_inc[p][s] == i, log_k[p][s] == k, log_b[p][s] == b)


def output(p, s):
    """A data slot of an output (data) partition."""
    return And(in_use(p), data(p, s))


def offsets_committed_with(p, s):
    """The transaction of output record (p, s) has a COMMIT-closed TxnOffsetCommit record on op."""
    return Exists(Slot, lambda s2: And(data(OP, s2), same_txn(p, s, OP, s2), log_out[OP][s2] == Outcome.COMMIT))


ATOM3 = Implies(quiescent, And(
    all_slots(lambda p, s: Implies(And(output(p, s), log_out[p][s] == Outcome.COMMIT), offsets_committed_with(p, s))),
    ForAll(Slot, lambda s2: Implies(And(data(OP, s2), log_out[OP][s2] == Outcome.COMMIT), ForAll(Part, lambda p: Implies(
        in_use(p), Exists(Slot, lambda s: And(data(p, s), same_txn(p, s, OP, s2), log_out[p][s] == Outcome.COMMIT))))))))

EOS1_AT_MOST_ONCE = all_slots(lambda p, s: ForAll(Slot, lambda s2: Implies(
    And(s < s2, in_use(p), in_rc(p, s), in_rc(p, s2)), log_src[p][s] != log_src[p][s2])))
EOS1_QUIESCENT = Implies(quiescent, ForAll(Part, lambda p: Implies(in_use(p), And(
    ForAll(InOffset, lambda n: Implies(n < gc_off, Exists(Slot, lambda s: And(in_rc(p, s), log_src[p][s] == n)))),
    ForAll(Slot, lambda s: Implies(in_rc(p, s), log_src[p][s] < gc_off))))))

LIVE_CLIENT = (PcState.IDLE, PcState.UNINITIALIZED, PcState.FATAL_ERROR, PcState.CRASHED)

PROPERTIES = (
    Always("ATOM-1", all_slots(lambda p, s: Implies(in_rc(p, s), log_out[p][s] == Outcome.COMMIT)),
           "No aborted or open read: every record below the LSO is in a span closed by a COMMIT marker.",
           ref="kafka-protocol §5.2 ATOM-1"),
    Always("ATOM-2", all_slots(lambda p, s: Implies(And(data(p, s), log_out[p][s] != Outcome.NONE),
                                                     log_out[p][s] == g_dec[log_inc[p][s]][log_k[p][s]])),
           "Partition outcome = decision: a closed record's marker equals decided[γ(record)].",
           ref="kafka-protocol §5.2 ATOM-2"),
    Always("ATOM-3", ATOM3,
           "Offsets all-or-nothing: at quiescence a transaction's outputs are committed exactly when its "
           "TxnOffsetCommit is (pending offsets are materialised only by the COMMIT marker of their own "
           "transaction on op, which ATOM-2 checks against decided[γ]).", ref="kafka-protocol §5.2 ATOM-3",
           applies=CTP),
    Always("EOS-1", And(EOS1_AT_MOST_ONCE, EOS1_QUIESCENT),
           "Consume-transform-produce: each input offset has at most one output in RC(out); at quiescence the "
           "outputs in RC(out) are exactly one per input offset below the group's committed offset.",
           ref="kafka-protocol §5.2 EOS-1", applies=CTP),
    Always("DECIDE-1", Not(g_torn), "No γ is both committed and aborted.", ref="kafka-protocol §5.2 structural"),
    Always("DUR-1", ForAll(Inc, lambda i: ForAll(Txn, lambda k: Implies(
        g_ackc[i][k], And(g_dec[i][k] == Outcome.COMMIT,
                          all_slots(lambda p, s: Implies(And(data(p, s), log_inc[p][s] == i, log_k[p][s] == k),
                                                         log_out[p][s] != Outcome.ABORT)))))),
           "Commit is final: an acknowledged EndTxn(COMMIT) means decided COMMIT and no ABORT marker for γ "
           "(a durable PrepareCommit fixes the decision: DECIDE-1).", ref="kafka-protocol §5.2 DUR-1"),
    Always("DUR-2", And(Not(g_vislost), Not(g_lso_dec)),
           "Stable visibility: no record leaves RC(p) (an ABORT never closes a record below the LSO) and the "
           "LSO never moves back, so RC(p) only grows at its end.", ref="kafka-protocol §5.2 DUR-2"),
    Always("DUR-3", Implies(quiescent, ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: ForAll(
        Bat, lambda b: Implies(And(in_use(p), g_ack[i][p][k][b], g_dec[i][k] == Outcome.COMMIT),
                               Exists(Slot, lambda s: And(in_rc(p, s), is_batch(p, s, i, k, b))))))))),
           "No lost acknowledged write: at quiescence every acknowledged batch of a COMMIT-decided γ is in RC(p).",
           ref="kafka-protocol §5.2 DUR-3"),
    Always("DUR-4", ForAll(Inc, lambda i: ForAll(Part, lambda p: ForAll(Txn, lambda k: ForAll(Bat, lambda b: Implies(
        And(in_use(p), Or(g_ack[i][p][k][b], n_pres[i][p][k][b] == PResp.OK)),
        Exists(Slot, lambda s: And(s < hw(p), data(p, s), is_batch(p, s, i, k, b)))))))),
           "An acknowledged batch is replicated: a batch answered NONE (the answer in flight or received) is in "
           "its partition's log below the HW, so no leader change truncates it (acks=all).",
           ref="kafka-protocol §3.13 LC1, §5.2 DUR-3; DelayedProduce, Partition.checkEnoughReplicasReachOffset",
           applies=LAG),
    Always("ORD-1", ForAll(Part, lambda p: ForAll(Slot, lambda s: (s < pl_end[p]) == (log_kind[p][s] != Kind.EMPTY))),
           "Offset order: the log is a gap-free prefix of slots, so RC and RU list records in offset order.",
           ref="kafka-protocol §5.2 ORD-1"),
    Always("ORD-2", all_slots(lambda p, s: Implies(
        And(data(p, s), log_out[p][s] != Outcome.NONE),
        Exists(Slot, lambda s2: And(s2 > s, log_pid[p][s2] == log_pid[p][s],
                                    log_kind[p][s2] == If(log_out[p][s] == Outcome.COMMIT, Kind.COMMIT, Kind.ABORT))))),
           "Marker order: a closed record is followed by a marker of its pid with its outcome "
           "(one open span per (p, pid) is structural: pl_open is a flag).", ref="kafka-protocol §5.2 ORD-2"),
    Always("ORD-3", And(Not(g_lso_dec), ForAll(Part, lambda p: And(
        pl_lso[p] <= hw(p), ForAll(Tid, lambda t: Implies(pl_open[p][t], pl_lso[p] <= pl_first[p][t]))))),
           "LSO never decreases, LSO <= HW, and LSO <= the first offset of every open span.",
           ref="kafka-protocol §5.2 ORD-3"),
    Always("ORD-4", all_slots(lambda p, s: ForAll(Slot, lambda s2: Implies(
        And(s < s2, output(p, s), data(p, s2), log_pid[p][s] == log_pid[p][s2], log_e[p][s] == log_e[p][s2]),
        log_seq[p][s] < log_seq[p][s2]))),
           "Producer order: within one (pid, e) at a data partition, sequence numbers strictly increase "
           "(TxnOffsetCommit batches on op carry none).",
           ref="kafka-protocol §5.2 ORD-4"),
    Always("ORD-5", all_slots(lambda p, s: ForAll(Slot, lambda s2: Implies(
        And(s < s2, output(p, s), data(p, s2), same_txn(p, s, p, s2)), log_b[p][s] <= log_b[p][s2]))),
           "Send order: the batches one transaction wrote to a data partition are in its log in the order the client "
           "sent them, though several were in flight at once (config `batches`; with one batch it holds trivially).",
           ref="kafka-protocol §5.2 ORD-5, §2.3"),
    Always("DUP-1", all_slots(lambda p, s: ForAll(Slot, lambda s2: Implies(
        And(s < s2, output(p, s), data(p, s2)),
        Or(log_inc[p][s] != log_inc[p][s2], log_k[p][s] != log_k[p][s2], log_b[p][s] != log_b[p][s2])))),
           "Idempotence: each client batch (γ, p) appears at most once in p's log (data partitions: a retried "
           "TxnOffsetCommit carries no sequence and may be appended twice on op, harmlessly).",
           ref="kafka-protocol §5.2 DUP-1"),
    Always("FENCE-1", all_slots(lambda p, s: Implies(And(data(p, s), log_ret[p][s]), log_out[p][s] != Outcome.COMMIT)),
           "Zombie writes: no batch appended while Retired(pid, e) held is ever committed.",
           ref="kafka-protocol §5.2 FENCE-1"),
    Always("FENCE-2", Not(g_f2), "Zombie decisions: no EndTxn with a retired epoch prepares a transition.",
           ref="kafka-protocol §5.2 FENCE-2"),
    Always("FENCE-3", ForAll(Inc, lambda i: ForAll(Inc, lambda j: Implies(
        And(i < j, tid_of(i) == tid_of(j), Not(pc_st[i].is_in(*LIVE_CLIENT)), Not(pc_st[j].is_in(*LIVE_CLIENT)),
            pc_st[i] != PcState.INITIALIZING, pc_st[j] != PcState.INITIALIZING, pc_e[i] != -1),
        Or(pc_e[i] != pc_e[j], pc_rot[i] != pc_rot[j])))),
           "Unique epochs: no two live incarnations (of one tid) hold the same (pid, e).",
           ref="kafka-protocol §5.2 FENCE-3"),
    Always("EPOCH-1", ForAll(Tid, lambda t: tc_e[t] <= tl_e[t] + 1),
           "Epochs are spent only through the log: the coordinator's cached producer epoch is at most one above "
           "its durable one, so failed fence appends (NOT_ENOUGH_REPLICAS) cannot walk the epoch towards "
           "Short.MaxValue, where fencing and initialisation become impossible.",
           ref="kafka-protocol §6 B9 (\"no epoch above MaxE\"); TransactionMetadata.prepareFenceProducerEpoch "
               "(hasFailedEpochFence), KAFKA-9666"),
    Always("CEPOCH-1", Not(g_cereg),
           "Coordinator epochs at partitions never decrease: no marker with a lower ce is appended.",
           ref="kafka-protocol §5.2 structural; ProducerAppendInfo.checkCoordinatorEpoch"),
    Always("TRACK-1", ForAll(Part, lambda p: ForAll(Tid, lambda u: Implies(
        pl_open[p][u], And(tl_st[tid_of(u)].is_in(S.Ongoing, *PREPARE), tl_parts[tid_of(u)][p],
                           pid_of(tid_of(u), tc_rot[tid_of(u)]) == u)))),
           "No untracked span: every open span's pid is its tid's current pid, with a durable Ongoing/Prepare* "
           "record listing p (the pid-indexed cells range over Tid: pid u belongs to tid tid_of(u), §3.14).",
           ref="kafka-protocol §5.2 TRACK-1"),
    Always("BOUNDS", And(ForAll(Part, lambda p: pl_end[p] < Config("slots")), Not(g_bound)),
           "The log never fills its last slot, so no append was ever refused for lack of room, and no request "
           "needed an epoch beyond maxe or a sequence number beyond maxseq (rows PL-13, PL-14, PL-17, PL-23, PL-27, "
           "TC-91, TC-92, TC-96, PC-22 set the flag; a config that hits this is too small to be trusted).",
           ref="model bound"),
    Always("STRUCT-1", Not(g_illegal),
           "No illegal coordinator transition: no handler or transaction-log append reaches one of Kafka's "
           "IllegalStateException assertions (a transition outside validPreviousStates, or a cached Dead / "
           "PrepareEpochFence state; rows TL-07, TC-90, TC-93, TC-94, TC-95, TC-97 set the flag), so tc_st moves "
           "only along the valid-previous-state table.",
           ref="kafka-protocol §2.1 mechanics 1-2, §3.1 I12; TransactionMetadata.prepareTransitionTo / "
               "completeTransitionTo, TransactionCoordinator.handleInitProducerId / handleEndTransaction"),
    Always("STRUCT-2", ForAll(Inc, lambda i: Implies(
        Or(pc_st[i].is_in(PcState.IN_TRANSACTION, PcState.COMMITTING_TRANSACTION, PcState.ABORTING_TRANSACTION,
                          PcState.ABORTABLE_ERROR), Exists(Part, lambda p: Exists(BatSlot, lambda b: pc_b[i][p][b] != BatchSt.NONE))),
        pc_k[i] >= 1)),
           "A client in a transaction, or holding a batch, has begun one (pc_k >= 1), so the index guard "
           "pc_k >= 1 of PC-06, PC-13 and PC-17 never disables them.",
           ref="kafka-protocol §2.2 beginTransaction; TransactionManager.beginTransaction"),
    Recoverable("LIVE-1", ForAll(Part, lambda p: ForAll(Tid, lambda t: Not(pl_open[p][t]))),
                "No hanging transaction: every open span can still be closed by protocol actions (no admin abort).",
                exclude_tags=("admin",), ref="kafka-protocol §5.3 LIVE-1"),
    Recoverable("LIVE-2", ForAll(Tid, lambda t: Not(tl_st[t].is_in(*PREPARE))),
                "Decisions complete: a tid in Prepare* can reach CompleteX.", ref="kafka-protocol §5.3 LIVE-2"),
    Recoverable("LIVE-3", ForAll(Inc, lambda i: pc_st[i].is_in(PcState.READY, PcState.IDLE, PcState.FATAL_ERROR,
                                                               PcState.CRASHED)),
                "Clients proceed: every incarnation that is not FATAL or crashed can reach READY.",
                ref="kafka-protocol §5.3 LIVE-3"),
    LeadsTo("LIVE-4", Exists(Tid, lambda t: tl_st[t].is_in(*PREPARE)), ForAll(Tid, lambda t: Not(tl_st[t].is_in(*PREPARE))),
            "Decisions complete without help: once a tid's decision (Prepare*) is in the transaction log, the "
            "coordinator and the partition leaders finish it (CompleteX) in every behaviour where they keep taking "
            "their enabled steps (weak fairness, spec `fairness`), whatever the clients do.",
            ref="kafka-protocol §5.3 LIVE-4"),
    Sometimes("Commit", Exists(Part, lambda p: Exists(Slot, lambda s: in_rc(p, s))),
              "A committed record becomes visible to read_committed readers."),
    Sometimes("Abort", Exists(Part, lambda p: Exists(Slot, lambda s: And(data(p, s), log_out[p][s] == Outcome.ABORT))),
              "A record is aborted by an ABORT marker."),
    Sometimes("Fence", w_fence, "InitProducerId fences an Ongoing transaction (I11).",
              applies=Config("incs") > Config("tids")),
    Sometimes("TimeoutAbort", And(env_to >= 1, Exists(Tid, lambda t: tl_st[t] == S.CompleteAbort)),
              "The coordinator times a transaction out and completes the abort (T1).", applies=Config("timeouts") >= 1),
    Sometimes("FailoverRedrive", w_redrive, "A coordinator failover re-drives a Prepare* transaction (L3).",
              applies=Config("failovers") >= 1),
    Sometimes("VerificationRejected", w_vrej,
              "A partition leader's verification / TV2 implicit add rejects a batch (P3, KIP-890).",
              applies=Config("protocol") != Protocol.kip98),
    Sometimes("DuplicateAbsorbed", w_dup, "A resent batch is answered as a duplicate (P5).",
              applies=Config("duplicates") >= 1),
    Sometimes("ConsecutiveCommits", Exists(Inc, lambda i: ForAll(Txn, lambda k: g_ackc[i][k])),
              "One incarnation commits every transaction of its script (consecutive transactions work).",
              applies=Config("txns") >= 2),
    Sometimes("RotatedPidCommits", Exists(Part, lambda p: Exists(Slot, lambda s: And(
        in_rc(p, s), log_pid[p][s] >= Config("tids")))),
              "A record of a tid's second producer id, which the coordinator handed out when the first one's epoch was "
              "exhausted, commits and becomes visible (§3.14).", applies=ROTATION),
    Sometimes("OffsetsCommitted", gc_off >= 1,
              "A transaction's input offset is materialised in __consumer_offsets by its COMMIT marker.", applies=CTP),
    Sometimes("GenerationFenced", w_gen, "The group coordinator refuses a TxnOffsetCommit of an older generation "
              "(O2, KIP-447).", applies=And(CTP, Config("kip447") == 1, Config("incs") >= 2)),
)
