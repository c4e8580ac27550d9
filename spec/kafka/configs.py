"""Configuration constants and named presets. Every fault spends a budget; recovery is free."""
from txncheck.spec.model import ConfigParam, NamedConfig

from .domains import MAXB, MAXP, MAXS

PARAMS = (
    ConfigParam("protocol", "tv2", "protocol version (§4): kip98 = (a) KIP-98 as shipped, verify = (b) + KIP-890 "
                "part 1 partition verification, tv2 = (c) KIP-890 part 2", choices=("kip98", "verify", "tv2")),
    ConfigParam("incs", 2, "producer incarnations of the transactional id (1 + restarts)", lo=1, hi=3),
    ConfigParam("tids", 1, "transactional ids (2: incarnation 2 is another worker's tid, variant B7)", lo=1, hi=2),
    ConfigParam("parts", 1, f"data partitions (<= {MAXP})", lo=1, hi=MAXP),
    ConfigParam("txns", 2, "transactions in each incarnation's script", lo=1, hi=3),
    ConfigParam("restart_txns", 2, "transactions in the script of a restarted incarnation (<= txns)", lo=0, hi=3),
    ConfigParam("slots", 8, f"log slots per partition (<= {MAXS}); BOUNDS flags a config that fills them", lo=2, hi=MAXS),
    ConfigParam("maxe", 8, "largest producer epoch the model issues (a bump beyond it is disabled)", lo=1, hi=30),
    ConfigParam("pids", 1, "producer ids a tid may hold (§3.14): 2 = the coordinator rotates the tid to a new producer "
                "id once its epoch is exhausted (maxe - 1 reached: EndTxn under tv2, a fence under tv2, InitProducerId "
                "under every protocol), needs tids=1; 1 = no rotation, an exhausted epoch is the model's bound (BOUNDS)",
                lo=1, hi=2),
    ConfigParam("batches", 1, "batches the script writes to each data partition in a transaction, one record each; "
                f"all of them may be in flight at once (max.in.flight.requests.per.connection >= batches, <= {MAXB}): "
                "a later batch may reach the leader before an earlier one, and a failed batch re-sequences the "
                "ones after it (kafka-protocol §2.3; with 1, a failed batch still gives its sequence back to a client "
                "that keeps its epoch)", lo=1, hi=MAXB),
    ConfigParam("maxseq", 3, "largest sequence number", lo=1, hi=8),
    ConfigParam("timeouts", 1, "budget: coordinator transaction-timeout aborts (T1)", lo=0, hi=3),
    ConfigParam("failovers", 1, "budget: coordinator failovers per tid", lo=0, hi=3),
    ConfigParam("delays", 1, "budget: produce requests delayed past the client's delivery timeout", lo=0, hi=3),
    ConfigParam("duplicates", 1, "budget: produce or TxnOffsetCommit requests resent by the client while still in flight", lo=0, hi=3),
    ConfigParam("losses", 0, "budget: coordinator requests or responses lost (client times out, retries)", lo=0, hi=3),
    ConfigParam("late_requests", 0, "budget: coordinator requests (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, "
                "EndTxn) the client abandons on a request timeout, closing the connection and re-sending, while the "
                "coordinator broker still holds the first copy and handles it later, its answer lost (NET-20)",
                lo=0, hi=2),
    ConfigParam("expiries", 0, "budget: producer-state expiries at a partition (X2)", lo=0, hi=3),
    ConfigParam("tl_failures", 0, "budget: transaction-log appends of an epoch fence (PrepareAbort after "
                "InitProducerId or a timeout) that fail, e.g. NOT_ENOUGH_REPLICAS", lo=0, hi=3),
    ConfigParam("marker_dups", 0, "budget: stale WriteTxnMarkers copies: a marker request whose request timed out at the "
                "coordinator (connection closed, the same markers re-sent) while the partition leader may still execute "
                "it, at any later time, unanswered (kafka-protocol §3.8 marker re-send); at most one per tid and "
                "partition in flight", lo=0, hi=3),
    ConfigParam("leader_failovers", 0, "budget: leader changes of a data partition (FLT-05): the new leader's producer "
                "state is what a replay of the log gives (ProducerAppendInfo with origin REPLICATION), its "
                "VerificationStateEntry guards are gone, and a batch the old leader held for verification is answered "
                "NOT_LEADER_OR_FOLLOWER (retriable); 0 in every shipped config", lo=0, hi=2),
    ConfigParam("replication_lag", 0, "1: a data partition's high watermark lags its log end (kafka-protocol §3.13): "
                "batches and markers land above it, the followers catch up to the log end in a step of their own "
                "(PL-40), and only then is a Produce answered NONE or a marker answered to the coordinator "
                "(DelayedProduce); a leader change (FLT-05) truncates the log to the new leader's end, anywhere between "
                "the HW and the old end, and answers the waiting requests NOT_LEADER_OR_FOLLOWER; 0 in every shipped "
                "config", lo=0, hi=1),
    ConfigParam("zombies", 0, "1: a restart may leave the old incarnation running (zombie)", lo=0, hi=1),
    ConfigParam("app_aborts", 0, "1: the application may abort a healthy transaction", lo=0, hi=1),
    ConfigParam("ctp", 1, "1: the application is a consume-transform-produce loop: each transaction consumes one "
                "input record, writes one output per data partition and commits the next input offset with "
                "sendOffsetsToTransaction; partition `parts` is then the group's __consumer_offsets partition",
                lo=0, hi=1),
    ConfigParam("offset_commits", 1, "sendOffsetsToTransaction calls per transaction of the consume-transform-produce "
                "loop (§3.4 O6): call j of n commits offset b_src + 1 - (n - j), so every call's offset is distinct and "
                "increasing and the last one is the next input offset; with 2, a TxnOffsetCommit abandoned on a request "
                "timeout is kept apart from its resend and never answered (the client closed its connection)",
                lo=1, hi=2),
    ConfigParam("inputs", 2, "records in the input partition the consume-transform-produce loop consumes", lo=1, hi=3),
    ConfigParam("kip447", 1, "1: TxnOffsetCommit carries the consumer's generation (O2 fencing) and OffsetFetch "
                "uses RequireStable (KIP-447); 0: pre-2.5 clients", lo=0, hi=1),
    ConfigParam("client", "java", "client profile (§2.2 client profiles): java = the Java client 2.5 to 4.x, whose "
                "failed batch sets epochBumpRequired under kip98 and verify (the abort bumps the epoch; under tv2 "
                "EndTxn does); reference = the protocol reference's client, which sets it only on "
                "OUT_OF_ORDER_SEQUENCE_NUMBER", choices=("java", "reference")),
)
# constants the spec no longer has, and what replaces them (a --set of one is refused with this advice)
RETIRED = (("client_bump", "the client profile replaced it: client_bump=1 is client=java (the default of every "
                           "shipped config), client_bump=0 is client=reference"),)

# Every shipped config runs the current Java client (client=java); `--set client=reference` gives the reference's.
_BASE = (("client", "java"), ("incs", 2), ("txns", 2), ("parts", 1), ("slots", 8), ("maxe", 8), ("maxseq", 3),
         ("inputs", 2), ("kip447", 1), ("expiries", 0))
_CI = (("protocol", "tv2"), *_BASE, ("ctp", 1), ("restart_txns", 0), ("timeouts", 1), ("failovers", 1), ("delays", 0),
       ("duplicates", 0), ("losses", 0), ("zombies", 0), ("app_aborts", 0))
_TINY = (("protocol", "tv2"), *_BASE, ("ctp", 0), ("restart_txns", 0), ("timeouts", 1), ("failovers", 1), ("delays", 1),
         ("duplicates", 0), ("losses", 0), ("zombies", 0), ("app_aborts", 0))
CONFIGS = (
    NamedConfig("tiny", _TINY,
                "The producer side, with the Java client. Bounds: 1 tid, 1 data partition, 8 log slots; incarnation 1 "
                "runs 2 transactions, one crash/restart whose incarnation 2 only initialises (it fences); budgets: 1 "
                "coordinator timeout abort, 1 coordinator failover, 1 produce delayed past the client's delivery "
                "timeout; no consumer side (ctp=0), duplicate, loss, zombie, producer-state expiry or voluntary "
                "abort. 205,632 states (1 s vector). tv2 passes with every applicable sometimes witnessed; verify "
                "passes too (183,733 states: the Java client bumps the epoch after the failed batch, F1) and "
                "violates ATOM-2 (B1 b) with client=reference; kip98 violates TRACK-1 and LIVE-1 (B1 a), ATOM-2 and "
                "FENCE-1 (B1 b with the retired epoch)."),
    NamedConfig("eos", (("protocol", "tv2"), *_BASE, ("ctp", 1), ("txns", 1), ("restart_txns", 1), ("timeouts", 1),
                        ("failovers", 0), ("delays", 0), ("duplicates", 0), ("losses", 0), ("zombies", 1),
                        ("app_aborts", 0)),
                "The consume-transform-produce loop (KIP-447), Java client. Bounds: 1 tid, 1 output partition plus "
                "the group's __consumer_offsets partition, 2 input records; incarnation 1 runs 1 transaction, then a "
                "restart (the old incarnation may run on as a zombie) whose incarnation 2 rejoins the group, fetches "
                "the committed offset and runs 1 transaction; 1 coordinator timeout abort; no failover, delay, "
                "duplicate or loss (one loss makes it 19.5 million states under verify; faults has every fault). "
                "608,612 states (4 s vector)."),
    NamedConfig("ci", _CI,
                "Consume-transform-produce with two consecutive transactions, Java client: tiny's crash/restart, "
                "timeout abort and coordinator failover with TxnOffsetCommit in every transaction, no produce delay. "
                "1,302,713 states (5 s on the vector engine)."),
    NamedConfig("faults", (*_CI, ("txns", 1), ("delays", 1), ("duplicates", 1), ("losses", 1)),
                "Every fault the model has, once, Java client: ci with one transaction per incarnation and budgets "
                "of 1 coordinator timeout abort, 1 coordinator failover, 1 Produce delayed past the client's "
                "delivery timeout (PC-12), 1 client retry of an in-flight Produce or TxnOffsetCommit (PC-13), and "
                "1 lost coordinator request or response (NET-01/02: InitProducerId and EndTxn, under kip98 and "
                "verify also AddPartitionsToTxn and AddOffsetsToTxn). Markers are never lost, and no stale "
                "marker copy is sent (marker_dups is 0 in every shipped config; F7). 7,867,735 states with --continue (about 40 s of search, 1.5 minutes with judging, 2.6 GiB on "
                "the vector engine); tv2 violates only FENCE-1, through a retried TxnOffsetCommit (F4, at depth 24, "
                "4 s without --continue); verify passes (18.7 million states, 3 minutes of search); kip98 violates TRACK-1 and "
                "LIVE-1 (B1 a).", heavy=True),
    NamedConfig("copies", (*_TINY, ("late_requests", 1), ("marker_dups", 1)),
                "Late and stale copies of the coordinator's messages, Java client: tiny plus 1 coordinator request the "
                "client timed out and re-sent whose first copy the coordinator still handles late (NET-20: "
                "InitProducerId, AddPartitionsToTxn, EndTxn) and 1 WriteTxnMarkers request the coordinator re-sent "
                "whose first copy the partition leader still executes (NET-10). 10,333,262 states (30 s of search, "
                "about 45 s in all and 3 GiB on the vector engine); tv2 passes with every applicable sometimes "
                "witnessed; verify violates ATOM-2 and FENCE-1 through the stale COMMIT copy (F7); kip98 the same, "
                "and TRACK-1 and LIVE-1 (B1 a).",
                heavy=True),
    NamedConfig("rotation", (*_TINY, ("pids", 2), ("maxe", 3), ("restart_txns", 1)),
                "Producer id rotation (§3.14), Java client: tiny with epochs exhausted at 2 (maxe 3) and a second "
                "producer id the coordinator hands out then (pids 2); the restarted incarnation runs 1 transaction, "
                "so the new pid writes, commits and is fenced in turn. 1,579,719 states (6 s on the vector engine); "
                "tv2 passes with every applicable sometimes witnessed (RotatedPidCommits included); verify passes; "
                "kip98 shows only B1's violations."),
    NamedConfig("inflight", (*_TINY, ("batches", 2), ("maxseq", 4)),
                "Two batches in flight to the partition in every transaction (kafka-protocol §2.3), Java client: tiny "
                "with batches 2 (max.in.flight.requests.per.connection >= 2) and room for their sequences (maxseq 4). "
                "A later batch may reach the leader first and is retried, a failed batch re-sequences the one behind it. "
                "7,724,720 states (about 37 s of search on the vector engine); tv2 and verify pass with every applicable "
                "sometimes witnessed; kip98 shows only B1's violations."),
    NamedConfig("nightly", (*_CI, ("duplicates", 1)),
                "ci plus 1 client retry of an in-flight produce or TxnOffsetCommit. 23,549,120 states with --continue "
                "(about 4 minutes of search and 7 GiB on the vector engine); violates FENCE-1 through a retried TxnOffsetCommit "
                "(spec/FINDINGS.md F4).", heavy=True)
)
