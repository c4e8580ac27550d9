"""Partition leader table: Produce (§3.5), verification hand-off (§3.11), WriteTxnMarkers (§3.8) and
its stale copies (a request the coordinator re-sent on a timeout, NET-10, executed late and unanswered),
producer-state expiry (§3.12 X2). With `ctp`, partition `parts` is the group's __consumer_offsets
partition op, whose leader is the group coordinator: a TxnOffsetCommit is a transactional batch on
op checked for generation (O2) and epoch (O4) but not sequence; its append records
pending[g][pid] and its marker materialises (COMMIT) or drops (ABORT) it (§1.5, §3.4). Kafka: `ProducerAppendInfo`, `ProducerStateManager`,
`UnifiedLog.append`, `ReplicaManager.appendRecords` (verification guard).

The log is an array of slots with an end offset; appends are acks=all. Without `replication_lag` they are
replicated in the same step, so HW = log end, `unreplicated(p)` is empty, and a leader change (FLT-05,
spec/kafka/leader.py) truncates nothing. With it a data partition's HW (`pl_hw`) lags: appends land above it,
their answers wait in DelayedProduce (PL-40..PL-44), and a leader change may truncate above the HW. The LSO
is a variable updated by every append and HW move: min(first offset of every span open below the HW, HW) (§1.4). Duplicate detection keeps every
batch of the current epoch (the configs never exceed NUM_BATCHES_TO_RETAIN = 5 per epoch).
Verification (§3.11, P4) is per batch and shared per pid, as Kafka's leader keeps it: every batch of a pid that
needs verification joins the pid's VerificationStateEntry at p and carries its guard, and is verified on its own
(only a batch below the stored epoch is refused before it; a duplicate or out-of-order batch is answered after it,
§3.5 "Order");
a marker of the pid at p clears the entry, so the guards held then are stale (`entry_cleared`), and a stale guard
fails the append only while the pid has no ongoing transaction at p (INVALID_TXN_STATE); with one, the guard is
not checked and the epoch and sequence checks decide. A retry copy of a batch that is itself held waits in the
network until the held one is answered (a timing restriction: the client resends only after its request timed
out).
"""
from typing import NamedTuple

from txncheck.spec.expr import And, Config, ForAll, If, Max, Min, MinOver, Not, Or
from txncheck.spec.model import Row, Table

from .chart import PARTITION
from .domains import (LOWEST_SEQUENCE, batch_used, invalid_epoch, lagged, pid_of, pid_used, tid_of, tid_used, IncSlot, TxnSlot, BatSlot, BATCH_CELLS, MAXS, Kind, Outcome, PcState, PResp, Protocol, Result, Tid, Ver, TV2, generation,
                      is_op, writes_to)
from .params import b, c, i, k, p, T, t
from .replication import ROWS as REPLICATION_ROWS
from .state import (n_mw, n_mwe, n_pw, n_pwe, pl_hw, pl_le, b_e, b_s, b_src, call_offset, env_exp, g_bound, g_cereg, g_lso_dec, g_vislost, gc_off, gc_pend,
                    log_b, log_ce, log_e, log_inc, log_k, log_kind, log_out, log_pid, log_ret, log_seq, log_src, n_mk, n_mk_e, n_mk_res,
                    n_mkd, n_mkd_c, n_mkd_e, n_mkd_res, n_oab, n_pres, n_prod, pc_st, b_rot, n_mk_rot, n_mkd_rot, tc_rot,
                    pl_ce, pl_e, pl_end, pl_first, pl_low, pl_low_e, pl_lso, pl_open, pl_seq, pl_vb, pl_vst, tc_ce, tc_mk, tl_e,
                    w_dup, w_gen)

A = "partition"
PAI = "ProducerAppendInfo"

e_b = b_e[i][p][k]
s_b = b_s[i][p][k][b]
def batch_pid(j, part, kk):
    """The producer id transaction (j, kk)'s batches to part carry (§3.14: its tid's first or second)."""
    return pid_of(tid_of(j), b_rot[j][part][kk])


PB = batch_pid(i, p, k)
stored = pl_e[p][PB]
last = pl_seq[p][PB]
at_op = is_op(p)  # TxnOffsetCommit batches carry no sequence: only the epoch is checked (§3.4 O4)


def retained(s):
    """Slot s of p holds a batch of the pid with batch (i, p, k, b)'s epoch and sequence: one the pid's entry retains
    (it forgets them when its epoch changes, so only at the stored epoch)."""
    return And(log_kind[p][s] == Kind.DATA, log_pid[p][s] == PB, log_e[p][s] == e_b, log_seq[p][s] == s_b)


# a duplicate matches a retained batch exactly (ProducerStateEntry.findDuplicateBatch)
dup = And(Not(at_op), e_b == stored, s_b <= last, Or(*[retained(s) for s in range(MAXS)]))
fenced = e_b < stored
low = pl_low[p][PB]
# a batch above the lowest sequence the pid's VerificationStateEntry has seen is refused (KIP-890 part 1:
# ProducerAppendInfo.checkSequence; kept where one epoch sends several sequences to p, LOWEST_SEQUENCE)
above_low = And(LOWEST_SEQUENCE, low != -1, s_b > low)
oos = And(Not(at_op), Or(And(stored != -1, e_b > stored, s_b != 0), And(stored != -1, e_b == stored, s_b != last + 1),
                         And(stored == -1, TV2, s_b != 0), above_low))
# KIP-447 (§3.4 O2): the group coordinator fences a TxnOffsetCommit from a member of an older generation
gen_ok = Or(Not(at_op), Config("kip447") == 0, i == generation(pc_st, PcState.IDLE))
FENCED_RESP = invalid_epoch(p)
seq_ok = And(Not(dup), Not(fenced), Not(oos))
verified_span = And(pl_open[p][PB], stored == e_b)
needs_verify = And(Config("protocol") != Protocol.kip98, Not(verified_span))
room = pl_end[p] < Config("slots")
in_flight = n_prod[i][p][k][b] > 0
vb = pl_vb[p][i][k][b]  # where batch (i, p, k) stands in p's verification
not_held = vb == Ver.NONE
# the append's guard check (UnifiedLog.analyzeAndValidateProducerState): skipped while the pid has an ongoing
# transaction at p (an open span, whatever its epoch); otherwise the batch's guard must still be the entry's
guard_ok = Or(Not(pl_vst[p][i][k][b]), pl_open[p][PB])
# Before verification the leader refuses only a batch below the stored epoch (UnifiedLog.
# maybeStartTransactionVerification); a duplicate or out-of-order batch that needs verification starts it like any
# other, joining the pid's VerificationStateEntry, and the append's checks answer it afterwards (PL-07)
early_dup = And(dup, Not(needs_verify))
early_oos = And(Not(fenced), oos, Not(needs_verify))
# answered whatever the verification state (PL-01, PL-02, PL-03); another copy of a held batch waits (module doc)
answered_while_held = Or(early_dup, And(fenced, Or(Not(at_op), And(gen_ok, Not(needs_verify)))), early_oos)

# an abandoned copy of (i, k)'s TxnOffsetCommit is in flight (§3.4 O6); on op each call is one batch, b = 1
abandoned = And(b == 1, n_oab[i][k] != -1)

LSO_ON_DATA = pl_lso[p]  # a data append never moves the LSO: the span it joins or opens starts at or after it


def release():
    """Batch (i, p, k) is no longer held: it was appended, refused or answered (a no-op for a batch not held)."""
    return (vb.set(Ver.NONE), pl_vst[p][i][k][b].set(False))


def none_held(part, pid):
    """No batch of `pid` is held for verification at `part`."""
    return ForAll(IncSlot, lambda j: ForAll(TxnSlot, lambda kk: ForAll(BatSlot, lambda bb: Or(
        Not(batch_used(j, kk, bb)), batch_pid(j, part, kk) != pid, pl_vb[part][j][kk][bb] == Ver.NONE))))


def entry_seen():
    """Batch (i, p, k, b) starts verification: the pid's VerificationStateEntry keeps the lowest sequence of its
    epoch, or starts again at a higher epoch (VerificationStateEntry.maybeUpdateLowestSequenceAndEpoch)."""
    keep = And(LOWEST_SEQUENCE, Not(at_op))
    fresh = Or(low == -1, e_b > pl_low_e[p][PB])
    return (pl_low[p][PB].set(If(keep, If(fresh, s_b, If(e_b == pl_low_e[p][PB], Min(low, s_b), low)), low)),
            pl_low_e[p][PB].set(If(keep, If(fresh, e_b, pl_low_e[p][PB]), pl_low_e[p][PB])))


def entry_cleared(pid):
    """A marker of `pid` appended at p clears its VerificationStateEntry: every batch of the pid held at p keeps a
    guard that is stale from now on (a later batch gets a new entry and guard). Kafka clears the entry on a data
    append too, but that is not observable: a guard is checked only while the pid has no open span at p, and the
    span a data append opens closes only by a marker, which clears the entry again."""
    return tuple(pl_vst[p][j][kk][bb].set(Or(pl_vst[p][j][kk][bb], And(batch_used(j, kk, bb), batch_pid(j, p, kk) == pid,
                                                               pl_vb[p][j][kk][bb].is_in(Ver.PENDING, Ver.OK, Ver.ADDING))))
                 for j, kk, bb in BATCH_CELLS)


# ghost: the batch's (pid, e) is retired: a pid the tid has rotated away from, or the pid's epoch below the logged one
retired = Or(And(tc_rot[T], Not(b_rot[i][p][k])), And(b_rot[i][p][k] == tc_rot[T], tl_e[T] > e_b))


def append_data(offset=None, answer=True):
    """The batch (i, p, k) is appended (and no longer held); on op it is a TxnOffsetCommit of `offset` (default: the
    current call's), answered NONE unless its sender abandoned it (`answer` False: then it is a copy, and the
    live request of the batch, held or not, stays as it is)."""
    pos = pl_end[p]
    off = call_offset(i, k) if offset is None else offset
    return (log_kind[p][pos].set(Kind.DATA), log_pid[p][pos].set(PB), log_inc[p][pos].set(i), log_k[p][pos].set(k),
            log_b[p][pos].set(b),
            log_e[p][pos].set(e_b), log_seq[p][pos].set(s_b), log_ret[p][pos].set(retired),
            log_src[p][pos].set(b_src[i][k]), gc_pend[PB].set(If(at_op, off, gc_pend[PB])),
            pl_end[p].set(pos + 1), pl_e[p][PB].set(e_b), pl_seq[p][PB].set(s_b), pl_open[p][PB].set(True),
            pl_low[p][PB].set(-1), pl_low_e[p][PB].set(-1),
            pl_first[p][PB].set(If(pl_open[p][PB], pl_first[p][PB], pos)),
            pl_lso[p].set(LSO_ON_DATA), g_lso_dec.set(Or(g_lso_dec, LSO_ON_DATA < pl_lso[p])),
            *((*release(), *acked(lagged(p))) if answer else ()))


def acked(waits, until=None):
    """Batch (i, p, k)'s NONE answer: sent now, or (`waits`) held in DelayedProduce at this leader until the HW
    reaches `until` (default: the end of the batch being appended)."""
    end = pl_end[p] + 1 if until is None else until
    return (n_pres[i][p][k][b].set(If(waits, n_pres[i][p][k][b], PResp.OK)),
            n_pw[i][p][k][b].set(If(waits, end, n_pw[i][p][k][b])), n_pwe[i][p][k][b].set(If(waits, pl_le[p], n_pwe[i][p][k][b])))


# a duplicate's answer carries the original batch's offsets, so it waits as the original does while that batch is
# above the HW (ReplicaManager.appendRecords: the DelayedProduce of the duplicate's LogAppendInfo)
dup_end = Max(*[If(retained(s), s + 1, 0) for s in range(MAXS)])
dup_waits = And(lagged(p), dup_end > pl_hw[p])


# ---- WriteTxnMarkers at p (§3.8): what a marker checks and appends ---------------------------------
me = n_mk_e[t][p][c]
mres = n_mk_res[t][p][c]
MP = pid_of(t, n_mk_rot[t][p][c])  # the marker's producer id (§3.14)


def in_span(s, pid):
    return And(pl_open[p][pid], pl_first[p][pid] <= s, s < pl_end[p], log_pid[p][s] == pid,
               log_kind[p][s] == Kind.DATA)


# With a lagging HW the closed span stays unstable until the HW passes its marker (ProducerStateManager
# unreplicatedTxns), so the LSO does not move: it already is min(first offsets, HW) and the marker changes neither.
def lso_on_marker(pid):
    return If(lagged(p), pl_lso[p],
              MinOver(Tid, lambda u: If(And(pl_open[p][u], u != pid), pl_first[p][u], pl_end[p] + 1), default=0))


def marker_append(commit, epoch, ce, pid=t):
    """A control batch of producer id `pid` (default: the tid's first) at p (W4-W6): COMMIT when `commit` holds,
    else ABORT, with producer epoch `epoch` and coordinator epoch `ce`; shared by the coordinator's markers and the
    admin's."""
    outcome = If(commit, Outcome.COMMIT, Outcome.ABORT)
    lso = lso_on_marker(pid)
    return (log_kind[p][pl_end[p]].set(If(commit, Kind.COMMIT, Kind.ABORT)),
            log_pid[p][pl_end[p]].set(pid), log_e[p][pl_end[p]].set(epoch),
            log_ce[p][pl_end[p]].set(If(Config("leader_failovers") >= 1, ce, -1)),
            *[log_out[p][s].set(If(in_span(s, pid), outcome, log_out[p][s])) for s in range(MAXS)],
            g_vislost.set(Or(g_vislost, And(Not(commit), Or(*[And(in_span(s, pid), s < pl_lso[p])
                                                              for s in range(MAXS)])))),
            pl_end[p].set(pl_end[p] + 1), pl_open[p][pid].set(False), pl_first[p][pid].set(0),
            pl_e[p][pid].set(epoch), pl_seq[p][pid].set(If(epoch != pl_e[p][pid], -1, pl_seq[p][pid])),
            pl_ce[p][pid].set(ce),
            pl_lso[p].set(lso), g_lso_dec.set(Or(g_lso_dec, lso < pl_lso[p])),
            g_cereg.set(Or(g_cereg, ce < pl_ce[p][pid])),
            gc_off.set(If(And(is_op(p), commit, gc_pend[pid] != -1), gc_pend[pid], gc_off)),
            gc_pend[pid].set(If(is_op(p), -1, gc_pend[pid])), *entry_cleared(pid),
            *[v[p][pid].set(If(And(TV2, epoch == pl_low_e[p][pid]), v[p][pid], -1)) for v in (pl_low, pl_low_e)])


def marker_rejected(epoch, pid=t):
    """W3: INVALID_PRODUCER_EPOCH for a marker of `pid` with producer epoch `epoch`."""
    return If(TV2, Or(epoch < pl_e[p][pid], And(epoch == pl_e[p][pid], pl_open[p][pid])), epoch < pl_e[p][pid])


w3_bad = marker_rejected(me, MP)

# ---- a stale WriteTxnMarkers copy at p (§3.8 marker re-send): the message's own fields, nobody waits for its answer --
stale = n_mkd[t][p]
stale_c = n_mkd_c[t][p]
stale_e = n_mkd_e[t][p]
stale_pid = pid_of(t, n_mkd_rot[t][p])
stale_w3_bad = marker_rejected(stale_e, stale_pid)


def drop_stale():
    """The stale copy is gone (executed or refused); its answer goes to a closed connection."""
    return (n_mkd[t][p].set(False), n_mkd_res[t][p].set(Result.COMMIT), n_mkd_e[t][p].set(-1), n_mkd_c[t][p].set(0),
            n_mkd_rot[t][p].set(False))


class MarkerMsg(NamedTuple):
    """One WriteTxnMarkers message at p as `marker_rows` reads it: the coordinator's request (answered) or its
    stale copy (nobody waits for the answer). `ids` are the four row ids, `live` orders the guard as each group
    reads (the coordinator-epoch check before or after the message's presence), `refs`/`docs` per row."""
    ids: tuple
    name: str
    params: tuple
    pid: object
    present: object
    c: object
    bad: object
    commit: object
    epoch: object
    taken: tuple
    answer: tuple
    refs: tuple
    docs: tuple
    live: bool


def marker_rows(m):
    """W2 (coordinator epoch fenced), W3 (producer epoch refused), W4-W6 (appended), and the slot bound, for one
    WriteTxnMarkers message `m` at p (§3.8)."""
    base = (tid_used(t), writes_to(p))
    ce_ok = m.c >= pl_ce[p][m.pid]
    ok = (*base, ce_ok, m.present) if m.live else (*base, m.present, ce_ok)
    return (
        Row(m.ids[0], A, m.name, params=m.params, guard=(*base, m.present, m.c < pl_ce[p][m.pid]), updates=m.taken,
            ref=m.refs[0], doc=m.docs[0]),
        Row(m.ids[1], A, m.name, params=m.params, guard=(*base, m.present, ce_ok, m.bad), updates=m.taken,
            ref=m.refs[1], doc=m.docs[1]),
        Row(m.ids[2], A, m.name, params=m.params, guard=(*ok, Not(m.bad), pl_end[p] < Config("slots")),
            updates=(*marker_append(m.commit, m.epoch, m.c, m.pid), *m.taken, *m.answer), ref=m.refs[2], doc=m.docs[2]),
        Row(m.ids[3], A, m.name, params=m.params, guard=(*ok, Not(m.bad), pl_end[p] >= Config("slots")),
            updates=(g_bound.set(True),), ref=m.refs[3], doc=m.docs[3]),
    )


BOUND_DOC = "No protocol state changes; the ghost flag is BOUNDS."

LIVE_MARKER = MarkerMsg(
    ids=("PL-20", "PL-21", "PL-22", "PL-23"), name="WriteTxnMarkers", params=(t, p, c), pid=MP, present=n_mk[t][p][c], c=c,
    bad=w3_bad, commit=mres == Result.COMMIT, epoch=me, taken=(n_mk[t][p][c].set(False),),
    answer=(tc_mk[t][p].set(If(And(c == tc_ce[t], Not(lagged(p))), False, tc_mk[t][p])),
            n_mw[t][p][c].set(If(lagged(p), pl_end[p] + 1, n_mw[t][p][c])),
            n_mwe[t][p][c].set(If(lagged(p), pl_le[p], n_mwe[t][p][c]))), live=True,
    refs=("kafka-protocol §3.8 W2 (TRANSACTION_COORDINATOR_FENCED); ProducerAppendInfo.checkCoordinatorEpoch",
          "kafka-protocol §3.8 W3 (INVALID_PRODUCER_EPOCH: the coordinator stops); "
          "ProducerAppendInfo.checkProducerEpoch(isTransactionMarker)",
          "kafka-protocol §3.8 W4-W6 (control batch; the span closes; epoch and coordinatorEpoch stored, the "
          "retained batches cleared when the epoch changes (ProducerStateEntry.maybeUpdateProducerEpoch); "
          "LSO = min(first offset of open spans, HW); the verification guard is cleared); "
          "ProducerAppendInfo.appendEndTxnMarker, ProducerStateManager.completeTxn; on op, §1.5 / §3.8: a "
          "COMMIT moves pending[g][pid] into committed, an ABORT drops it (GroupMetadataManager.handleTxnCompletion)",
          "model bound (config slots): PL-22 with no free log slot; BOUNDS flags a config that gets here"),
    docs=("", "", "The marker's NONE answer is delivered to the coordinator of epoch c in the same step (it "
                  "only removes p from the pending set; a deposed coordinator ignores it); with `replication_lag` it "
                  "waits until the followers caught up (PL-40, acks=-1).", BOUND_DOC))

STALE_MARKER = MarkerMsg(
    ids=("PL-24", "PL-25", "PL-26", "PL-27"), name="WriteTxnMarkers (stale copy)", params=(t, p), pid=stale_pid, present=stale,
    c=stale_c, bad=stale_w3_bad, commit=n_mkd_res[t][p] == Result.COMMIT, epoch=stale_e, taken=drop_stale(),
    answer=(), live=False,
    refs=("kafka-protocol §3.8 W2 for the stale copy (TRANSACTION_COORDINATOR_FENCED; the answer goes to a closed "
          "connection); ProducerAppendInfo.checkCoordinatorEpoch",
          "kafka-protocol §3.8 W3 for the stale copy (INVALID_PRODUCER_EPOCH; the answer goes to a closed "
          "connection); ProducerAppendInfo.checkProducerEpoch(isTransactionMarker)",
          "kafka-protocol §3.8 W4-W6 for the stale copy, with its own result, producer epoch and coordinator epoch "
          "(KafkaApis.handleWriteTxnMarkersRequest runs a request read from a connection the coordinator has "
          "since closed; SocketServer drops the answer); ProducerAppendInfo.appendEndTxnMarker, "
          "ProducerStateManager.completeTxn",
          "model bound (config slots): PL-26 with no free log slot; BOUNDS flags a config that gets here"),
    docs=("Refused: a marker of a later coordinator epoch was appended at p since.",
          "Refused by the epoch check: its producer epoch is below the stored one, or under TV2 equal to it while "
          "a span is open (a later transaction's, the strict check of KIP-1228).",
          "Appended as PL-22 appends the live marker; the coordinator is not told (it waits for the re-sent "
          "request's answer, PL-22). Landing after the re-sent marker, and after the next transaction of the same "
          "epoch opened a span at p, it closes that span with the earlier transaction's result.",
          BOUND_DOC))


ROWS = (
    # -- Produce (§3.5; on op a TxnOffsetCommit, §3.4) and its verification (§3.11) ----------------
    Row("PL-01", A, "Produce", params=(i, p, k, b), guard=(writes_to(p), in_flight, early_dup),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), *acked(dup_waits, dup_end), w_dup.set(True)),
        ref=f"kafka-protocol §3.5 P5 (duplicate: NONE with the original offsets; at once only when no verification "
            f"is needed, §3.5 Order); {PAI}.checkSequence, ProducerStateEntry.findDuplicateBatch"),
    Row("PL-02", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, Not(dup), fenced, Or(Not(at_op), And(gen_ok, Not(needs_verify)))),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), n_pres[i][p][k][b].set(FENCED_RESP)),
        ref=f"kafka-protocol §3.5 P6 (INVALID_PRODUCER_EPOCH, abortable 2.7+), §3.4 O4 (fatal for "
            f"TxnOffsetCommit); {PAI}.checkProducerEpoch"),
    Row("PL-03", A, "Produce", params=(i, p, k, b), guard=(writes_to(p), in_flight, Not(dup), early_oos),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), n_pres[i][p][k][b].set(PResp.OOS)),
        ref=f"kafka-protocol §3.5 P7/P8, P9 under TV2 (OUT_OF_ORDER_SEQUENCE_NUMBER; at once only when no "
            f"verification is needed, §3.5 Order); {PAI}.checkSequence"),
    Row("PL-04", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, Or(at_op, Not(fenced)), needs_verify, not_held),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), vb.set(Ver.PENDING), pl_vst[p][i][k][b].set(False),
                 *entry_seen()),
        ref="kafka-protocol §3.5 P2, §3.11 (no open span at this epoch: verify first / TV2 implicit add; only P6 "
            "is checked before, §3.5 Order); UnifiedLog.maybeStartTransactionVerification, "
            "ReplicaManager.appendRecords -> AddPartitionsToTxnManager; on op the group coordinator verifies before "
            "its generation and epoch checks (GroupCoordinator.handleTxnCommitOffsets)"),
    Row("PL-05", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, seq_ok, gen_ok, Not(needs_verify), not_held, room),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), *append_data()),
        ref=f"kafka-protocol §3.5 P9/P11 (append; a span opens at the base offset), §3.4 O5 (on op: "
            f"pending[g][pid] := offset); {PAI}.append, ProducerStateManager.update, "
            "GroupMetadataManager.storeOffsets (pendingTransactionalOffsetCommits)"),
    Row("PL-06", A, "verified Produce appended", params=(i, p, k, b),
        guard=(writes_to(p), vb == Ver.OK, guard_ok, gen_ok, seq_ok, room),
        updates=append_data(),
        ref="kafka-protocol §3.5 P11 with the verification guard (§3.11; not checked while the pid has an ongoing "
            "transaction at p); UnifiedLog.append(verificationGuard), UnifiedLog.analyzeAndValidateProducerState"),
    Row("PL-07", A, "verified Produce re-checked", params=(i, p, k, b),
        guard=(writes_to(p), vb == Ver.OK, guard_ok, gen_ok, Not(seq_ok)),
        updates=(n_pres[i][p][k][b].set(If(dup, If(dup_waits, n_pres[i][p][k][b], PResp.OK),
                                        If(fenced, FENCED_RESP, PResp.OOS))),
                 n_pw[i][p][k][b].set(If(And(dup, dup_waits), dup_end, n_pw[i][p][k][b])),
                 n_pwe[i][p][k][b].set(If(And(dup, dup_waits), pl_le[p], n_pwe[i][p][k][b])), *release()),
        ref="kafka-protocol §3.5 P5-P8 applied at append time, after verification"),
    Row("PL-08", A, "verification guard cleared", params=(i, p, k, b),
        guard=(writes_to(p), vb == Ver.OK, Not(guard_ok), gen_ok),
        updates=(n_pres[i][p][k][b].set(PResp.ABORTABLE), *release()),
        ref="kafka-protocol §3.5 P4 (the guard was cleared by a transactional append of the pid since, and the pid "
            "has no ongoing transaction at p: INVALID_TXN_STATE); UnifiedLog.analyzeAndValidateProducerState "
            "(batchMissingRequiredVerification), ProducerStateManager.clearVerificationStateEntry"),
    Row("PL-09", A, "verification failed (coordinator moved)", params=(i, p, k, b), guard=(writes_to(p), vb == Ver.RETRY),
        updates=(n_pres[i][p][k][b].set(PResp.RETRY), *release()),
        ref="kafka-protocol §3.5 P3 (coordinator errors -> NOT_ENOUGH_REPLICAS, retriable)"),
    Row("PL-10", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, Not(gen_ok), Not(needs_verify), not_held),
        updates=(n_prod[i][p][k][b].set(n_prod[i][p][k][b] - 1), n_pres[i][p][k][b].set(PResp.ABORTABLE), w_gen.set(True)),
        ref="kafka-protocol §3.4 O2 (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID: abortable at the client), KIP-447; "
            "GroupCoordinator.doTxnCommitOffsets (3.x), OffsetMetadataManager.validateTransactionalOffsetCommit (4.x)",
        doc="On op the leader is the group coordinator: a TxnOffsetCommit from a member whose generation is no "
            "longer current is refused before the append's epoch check."),
    Row("PL-11", A, "verified Produce re-checked", params=(i, p, k, b), guard=(writes_to(p), vb == Ver.OK, Not(gen_ok)),
        updates=(n_pres[i][p][k][b].set(PResp.ABORTABLE), w_gen.set(True), *release()),
        ref="kafka-protocol §3.4 O2 after O3: the generation is checked once verification succeeded; "
            "GroupCoordinator.handleTxnCommitOffsets postVerificationCallback -> doTxnCommitOffsets"),
    Row("PL-12", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, Not(not_held), Not(answered_while_held)),
        updates=(),
        ref="model timing restriction (module doc): another copy of a batch the leader holds for verification waits "
            "in the network until the held one is answered (the client resends a batch only after its request "
            "timed out)",
        doc="Not taken yet: the request stays in flight and nothing changes (a stutter step)."),
    Row("PL-13", A, "Produce", params=(i, p, k, b),
        guard=(writes_to(p), in_flight, seq_ok, gen_ok, Not(needs_verify), not_held, Not(room)),
        updates=(g_bound.set(True),),
        ref="model bound (config slots): PL-05 with no free log slot; BOUNDS flags a config that gets here",
        doc="No protocol state changes; the ghost flag is BOUNDS."),
    Row("PL-14", A, "verified Produce appended", params=(i, p, k, b),
        guard=(writes_to(p), vb == Ver.OK, guard_ok, gen_ok, seq_ok, Not(room)),
        updates=(g_bound.set(True),),
        ref="model bound (config slots): PL-06 with no free log slot; BOUNDS flags a config that gets here",
        doc="No protocol state changes; the ghost flag is BOUNDS."),
    # -- a TxnOffsetCommit its sender abandoned on a request timeout (§3.4 O6): nobody hears its answer --------
    Row("PL-15", A, "abandoned TxnOffsetCommit", params=(i, p, k, b),
        guard=(at_op, abandoned, gen_ok, Not(fenced), Not(needs_verify), room),
        updates=(n_oab[i][k].set(-1), *append_data(n_oab[i][k], answer=False)),
        ref="kafka-protocol §3.4 O6 (the late copy joins the open span at its epoch and overwrites pending[g][pid]: "
            "last write wins), §3.4 O5; UnifiedLog.maybeStartTransactionVerification (hasOngoingTransaction: no "
            "verification), ProducerAppendInfo.maybeValidateDataBatch (coordinator origin: epoch checked, sequence "
            "not), OffsetMetadataManager.replay (pendingTransactionalOffsets put)",
        doc="The answer goes to a closed connection and is dropped. A copy that would need verification (no open "
            "span at its epoch under verify or tv2) waits: it lands from the transaction's first append on op on."),
    Row("PL-16", A, "abandoned TxnOffsetCommit", params=(i, p, k, b), guard=(at_op, abandoned, Or(Not(gen_ok), fenced)),
        updates=(n_oab[i][k].set(-1),),
        ref="kafka-protocol §3.4 O6 (refused: the marker or the next transaction raised the epoch at op, O3/O4, or "
            "the generation moved on, O2); the answer goes to a closed connection",
        doc="Refused by the epoch check (after the TV2 marker at e+1, or inside the next transaction's span) or by "
            "the generation check; nothing is appended and nobody is answered."),
    Row("PL-17", A, "abandoned TxnOffsetCommit", params=(i, p, k, b),
        guard=(at_op, abandoned, gen_ok, Not(fenced), Not(needs_verify), Not(room)),
        updates=(g_bound.set(True),),
        ref="model bound (config slots): PL-15 with no free log slot; BOUNDS flags a config that gets here",
        doc="No protocol state changes; the ghost flag is BOUNDS."),
    Row("PL-18", A, "abandoned TxnOffsetCommit", params=(i, p, k, b),
        guard=(at_op, abandoned, gen_ok, Not(fenced), needs_verify),
        updates=(),
        ref="model timing restriction (kafka-protocol §3.4 O6): a late copy that would need its own verification "
            "(no open span at its epoch under verify or tv2) stays in the network until a span at its epoch is open "
            "or the epoch check refuses it; Kafka would verify it itself",
        doc="Not taken yet: the copy stays in flight and nothing changes (a stutter step)."),
    *marker_rows(LIVE_MARKER),
    *marker_rows(STALE_MARKER),
    # -- producer-state expiry (§3.12 X2) -------------------------------------------------------------
    Row("PL-30", A, "producer-state expiry", params=(t, p),
        guard=(pid_used(t), writes_to(p), pl_e[p][t] != -1, Not(pl_open[p][t]), none_held(p, t),
               env_exp < Config("expiries")),
        updates=(pl_e[p][t].set(-1), pl_seq[p][t].set(-1), pl_ce[p][t].set(-1), env_exp.set(env_exp + 1)),
        tags=("timeout",),
        ref="kafka-protocol §3.12 X2 (no open span, idle > producer.id.expiration.ms); "
            "ProducerStateManager.removeExpiredProducers"),
    *REPLICATION_ROWS,
)

TABLE = Table("partition", ROWS, status=None, at=PARTITION,
              doc="Partition leaders of the data partitions: log, producer state, LSO (§1.4, §3.5, §3.8).")
