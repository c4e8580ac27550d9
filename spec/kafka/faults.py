"""Environment tables: the network (NET-*) and faults (FLT-*), each spending a budget of the config.

Delays and reordering need no row: every in-flight message is delivered by its receiver's row in
any order and at any later time. Client-side produce expiry (PC-12) and produce retries (PC-13)
are producer rows because the client decides them; they spend `delays` and `duplicates`.
"""
from txncheck.spec.domains import BOOL
from txncheck.spec.expr import And, Config, If, Max, Not, Or, Param
from txncheck.spec.model import Row, Table
from txncheck.spec.sequence import At, Receive

from .chart import NETWORK, PRODUCER
from .domains import ROTATION, tid_of, tid_used, writes_to, MAXP, CResp, Outcome, Pend, PendBy, PcState, Result, TxnState as S, Ver
from .params import c, i, p, t
from .leader import leader_change
from .requests import abandoned, cleared, late_cleared
from .state import (n_cresp_rot, env_late, env_loss, env_mkd, env_tlf, tc_ff, n_creq, n_late, n_late_ce, n_cresp, n_cresp_e, n_lost, n_mk, n_mk_e,
                    n_mk_res, n_mk_rot, n_mkd, n_mkd_c, n_mkd_e, n_mkd_res, n_mkd_rot, pc_st, tc_ce, tc_e, tc_last,
                    tc_next, tc_pend_rot, tc_rot,
                    tc_parts, tc_pend, tc_pend_by, tc_pend_cli, tc_pend_e, tc_pend_p, tc_st, tl_e,
                    tl_parts, tl_st, w_redrive, g_ci, g_ck, g_pk)
from .txnlog import clear_pend, decide, implicit_add_done, markers

d = Param("durable", BOOL)

NET = Table("network", (
    Row("NET-01", "network", "drop a coordinator request", params=(i,),
        guard=(n_creq[i], env_loss < Config("losses")),
        updates=(*cleared(), n_lost[i].set(True), env_loss.set(env_loss + 1)), tags=("network",),
        ref="kafka-protocol §1.7 network: drop (the client times out, outcome indefinite)"),
    Row("NET-02", "network", "drop a coordinator response", params=(i,),
        guard=(n_cresp[i] != CResp.NONE, env_loss < Config("losses")),
        updates=(n_cresp[i].set(CResp.NONE), n_cresp_e[i].set(-1), n_cresp_rot[i].set(False), n_lost[i].set(True),
                 env_loss.set(env_loss + 1)),
        tags=("network",),
        ref="kafka-protocol §1.7, §3.10 indefinite outcome (e.g. EndTxn(COMMIT) applied, answer lost)"),
    Row("NET-10", "network", "WriteTxnMarkers request timeout: re-sent, the first copy still in flight", params=(t, p, c),
        guard=(tid_used(t), writes_to(p), n_mk[t][p][c], c == tc_ce[t], Not(n_mkd[t][p]),
               env_mkd < Config("marker_dups")),
        updates=(n_mkd[t][p].set(True), n_mkd_res[t][p].set(n_mk_res[t][p][c]), n_mkd_e[t][p].set(n_mk_e[t][p][c]),
                 n_mkd_c[t][p].set(c), n_mkd_rot[t][p].set(n_mk_rot[t][p][c]), env_mkd.set(env_mkd + 1)),
        tags=("network",), sends_from=At("coordinator", t),
        ref="kafka-protocol §3.8 marker re-send; NetworkClient.handleTimedOutRequests (request.timeout.ms: the "
            "connection is closed, the request completes as disconnected), TransactionMarkerRequestCompletionHandler."
            "onComplete (wasDisconnected and the coordinator epoch unchanged: addTxnMarkersToBrokerQueue with the "
            "marker's own producer epoch, result and coordinator epoch)",
        doc="The request the coordinator gave up on becomes the stale copy (its own result, producer epoch and "
            "coordinator epoch, n_mkd); the live cell is the re-sent request, delivered and answered as before "
            "(PL-20..PL-23). The stale copy reaches the leader at any later time, or never (PL-24..PL-27)."),
    Row("NET-20", "network", "request timeout: the client closes the connection and re-sends; the first copy is late",
        params=(i,),
        guard=(Config("late_requests") >= 1, n_creq[i], Not(n_late[i]), env_late < Config("late_requests"),
               pc_st[i] != PcState.CRASHED),
        updates=(*abandoned(), n_lost[i].set(True), env_late.set(env_late + 1)), tags=("network",),
        sends_from=PRODUCER,
        ref="kafka-protocol §1.7 late copy of a coordinator request; NetworkClient.handleTimedOutRequests "
            "(request.timeout.ms: the connection is closed, the request completes as disconnected), "
            "TransactionManager.TxnRequestHandler.onComplete (wasDisconnected: reenqueue the same request); "
            "SocketServer / KafkaRequestHandler still process a request already read, and the response to the "
            "closed connection is dropped",
        doc="The coordinator broker may already hold the first copy (read into its request queue, or waiting "
            "behind another request on that connection): it is kept apart (n_late: its own kind, epoch and "
            "partition) and handled later with the rows TC-1xx (the same handlers as TC-xx), whose answer reaches "
            "nobody. The client re-sends as after a loss (PC-21), with the same content."),
    Row("NET-21", "network", "late copy at a broker no longer the coordinator: NOT_COORDINATOR, to a closed connection",
        params=(i,), guard=(Config("late_requests") >= 1, n_late[i], n_late_ce[i] != tc_ce[tid_of(i)]),
        updates=late_cleared(), tags=("network",),
        ref="kafka-protocol §1.7 late copy of a coordinator request; TransactionStateManager.getTransactionState "
            "(the broker no longer leads the tid's __transaction_state partition: NOT_COORDINATOR); the response "
            "to the closed connection is dropped",
        doc="The late copy is held by the broker it was sent to. After a coordinator failover (FLT-03) that broker "
            "no longer owns the tid's __transaction_state partition, so it answers NOT_COORDINATOR and changes "
            "nothing; the new coordinator never sees the copy."),
), doc="Loss of coordinator requests and responses (delivery order is free: the network is a bag); the late "
       "copy of a request the client abandoned on a request timeout; a WriteTxnMarkers request re-sent on a timeout "
       "while its first copy is still in flight.", at=NETWORK)

prev = Max(i - 1, 0)
pend_state = If(tc_pend[t] == Pend.Empty, S.Empty, If(tc_pend[t] == Pend.Ongoing, S.Ongoing,
                                                         If(tc_pend[t] == Pend.PrepareCommit, S.PrepareCommit,
                                                            S.PrepareAbort)))
new_st = If(d, pend_state, tl_st[t])
new_e = If(d, tc_pend_e[t], tl_e[t])


def new_parts(q):
    pend_parts = If(tc_pend[t] == Pend.Empty, False,
                    If(tc_pend[t] == Pend.Ongoing, Or(tc_parts[t][q], tc_pend_p[t] == q), tc_parts[t][q]))
    return If(d, pend_parts, tl_parts[t][q])


redrive = Or(new_st == S.PrepareCommit, new_st == S.PrepareAbort)
# §3.14: a durable Empty that rotates carries the new pid; a durable Prepare* that rotates, its nextProducerId
new_rot = And(ROTATION, Or(tc_rot[t], And(d, tc_pend[t] == Pend.Empty, tc_pend_rot[t])))
new_next = And(ROTATION, If(d, And(tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_pend_rot[t]), tc_next[t]))
starts_durably = And(d, tc_pend[t] == Pend.Ongoing, tc_st[t] != S.Ongoing)
waiting_client = And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.CLIENT)
waiting_leader = And(tc_pend[t] != Pend.NONE, tc_pend_by[t] == PendBy.LEADER)
cli_resp = n_cresp[tc_pend_cli[t]]

FLT = Table("faults", (
    Row("FLT-01", "env", "producer crash and restart (same transactional.id)", params=(i,), at=At("producer", prev),
        guard=(i >= 1, pc_st[i] == PcState.IDLE, pc_st[prev] != PcState.IDLE),
        updates=(pc_st[i].set(PcState.UNINITIALIZED), pc_st[prev].set(PcState.CRASHED)), tags=("crash",),
        ref="kafka-protocol §1.1 incarnations, §1.7 crash: a new process with the same tid starts UNINITIALIZED; "
            "its requests still in flight may arrive later"),
    Row("FLT-02", "env", "producer restart leaving a zombie", params=(i,), at=At("producer", prev),
        guard=(Config("zombies") >= 1, i >= 1, pc_st[i] == PcState.IDLE,
               Not(pc_st[prev].is_in(PcState.IDLE, PcState.CRASHED, PcState.FATAL_ERROR))),
        updates=(pc_st[i].set(PcState.UNINITIALIZED),), tags=("zombie",),
        ref="kafka-protocol §1.7 zombie: the old incarnation is paused, not dead, and resumes later"),
    Row("FLT-03", "env", "coordinator failover (reload, ce+1, re-drive)", params=(t, d), at=At("coordinator", t),
        # a durable append was delivered to the log before the leader moved: not lost
        receives=(Receive("transaction log append", (t,), when=d),),
        guard=(tid_used(t), tc_ce[t] < Config("failovers"), Or(Not(d), tc_pend[t] != Pend.NONE)),
        updates=(tl_st[t].set(new_st), tl_e[t].set(new_e),
                 *[tl_parts[t][q].set(new_parts(q)) for q in range(MAXP)],
                 tc_st[t].set(new_st), tc_e[t].set(new_e), tc_last[t].set(-1),
                 tc_rot[t].set(new_rot), tc_next[t].set(new_next),
                 *[tc_parts[t][q].set(new_parts(q)) for q in range(MAXP)],
                 tc_ce[t].set(tc_ce[t] + 1),
                 *[u for u in markers(t, tc_ce[t] + 1, If(new_st == S.PrepareCommit, Result.COMMIT, Result.ABORT),
                                      new_e, lambda q: And(redrive, new_parts(q)), new_rot)],
                 *decide(t, If(tc_pend[t] == Pend.PrepareCommit, Outcome.COMMIT, Outcome.ABORT),
                         And(d, tc_pend[t].is_in(Pend.PrepareCommit, Pend.PrepareAbort), tc_st[t] == S.Ongoing)),
                 cli_resp.set(If(waiting_client, CResp.RETRY, cli_resp)),
                 # the implicit add being logged fails with NOT_COORDINATOR: the leader answers its batch retriable
                 *[u for q in range(MAXP) for u in implicit_add_done(t, q, If(
                     And(waiting_leader, tc_pend_p[t] == q), Ver.RETRY, Ver.ADDING))],
                 w_redrive.set(Or(w_redrive, redrive)),
                 g_ci[t].set(If(starts_durably, tc_pend_cli[t], g_ci[t])),
                 g_ck[t].set(If(starts_durably, g_pk[t], g_ck[t])),
                 tc_ff[t].set(False), *clear_pend(t)),
        tags=("crash",),
        ref="kafka-protocol §1.3 reload, §3.10 L1-L5 (pending callbacks fail with NOT_COORDINATOR, C4; "
            "Prepare* re-driven with the new coordinator epoch); TransactionStateManager."
            "loadTransactionsForTxnTopicPartition, TransactionCoordinator.onElection",
        doc="`durable` says whether the pending transition's append reached the HW before the leader "
            "changed; either way the waiting client gets NOT_COORDINATOR. The deposed coordinator's "
            "markers already sent stay in flight (W2 fences them)."),
    Row("FLT-04", "env", "transaction-log append of an epoch fence fails", params=(t,), at=At("coordinator", t),
        guard=(tid_used(t), tc_pend[t] == Pend.PrepareAbort, tc_pend_by[t] == PendBy.INTERNAL,
               env_tlf < Config("tl_failures")),
        updates=(tc_ff[t].set(True), tc_last[t].set(-1), env_tlf.set(env_tlf + 1), *clear_pend(t)),
        tags=("crash",),
        ref="kafka-protocol §1.7 failed transaction-log append, §6 B9; TransactionCoordinator.endTransaction "
            "sendTxnMarkersCallback (error, isEpochFence: hasFailedEpochFence = true; the pending state is "
            "cleared, the cached epoch stays bumped and lastProducerEpoch -1, state Ongoing)",
        doc="The append of the PrepareAbort that an InitProducerId fence (TC-07) or a timeout (TC-40, TC-41) "
            "prepared fails (e.g. NOT_ENOUGH_REPLICAS under min.insync.replicas) while the coordinator keeps "
            "its partition; the next fence retries it without a second bump (fenced_epoch)."),
    leader_change(),
), doc="Faults: producer crash/restart and zombies; transaction-coordinator failover; a failed transaction-log "
       "append of an epoch fence; a leader change of a data partition.")
