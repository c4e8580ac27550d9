"""txncheck.spec.kafka: Apache Kafka's exactly-once transactions as explicit state-transition tables.

References: every `kafka-protocol §x` (and every bare `§x`) in this package points at the section
or labelled item x of docs/kafka-protocol.md, the protocol reference this spec follows.

Tables: producer client (PC-*), transaction coordinator and transaction log
(TC-*, TL-*), partition leaders and the group coordinator on __consumer_offsets (PL-*), the
consume-transform-produce consumer (CS-*), network (NET-*) and faults (FLT-*); properties of §5;
protocol versions of §4 as the `protocol` switch; the §6 catalogue as variants.
"""
from txncheck.spec.expr import Config, Or
from txncheck.spec.fairness import WeakFair
from txncheck.spec.model import Assume, Spec, Symmetry

from . import chart, configs, consumer, coordinator, faults, inductive, partition, producer, properties, state, variants
from .domains import MAXP, Part

SPEC = Spec(
    name="kafka",
    doc=__doc__.splitlines()[0].split(": ", 1)[1],
    vars=state.VARS,
    tables=(producer.TABLE, consumer.TABLE, coordinator.TABLE, partition.TABLE, faults.NET, faults.FLT),
    properties=properties.PROPERTIES,
    params=configs.PARAMS,
    retired=configs.RETIRED,
    configs=configs.CONFIGS,
    variants=variants.VARIANTS,
    invariants_for_induction=inductive.INVARIANTS,
    assumptions=(Assume(Config("parts") + Config("ctp") <= MAXP,
                        f"the tables have {MAXP} partitions; `parts` data partitions plus the __consumer_offsets "
                        f"partition of `ctp` need parts + ctp <= {MAXP}: lower parts or set ctp=0"),
                 Assume(Or(Config("offset_commits") == 1, Config("ctp") == 1),
                        "offset_commits counts sendOffsetsToTransaction calls of the consume-transform-produce loop: "
                        "set ctp=1, or offset_commits=1"),
                 Assume(Or(Config("pids") == 1, Config("tids") == 1),
                        "pids=2 gives the tid's second producer id the index of a second tid: set tids=1, or pids=1"),
                 Assume(Config("restart_txns") <= Config("txns"),
                        "restart_txns must not exceed txns (the Txn domain is sized by txns)")),
    ref="docs/kafka-protocol.md; KIP-98, KIP-360, KIP-447, KIP-890",
    lanes=chart.LANES,
    channels=chart.CHANNELS,
    findings="FINDINGS.md",
    # the data partitions are alike: partitions 0..parts-1 (with ctp, partition `parts` is __consumer_offsets,
    # and with parts=1 there is nothing to permute); incarnations and tids are not (docs/kafka-protocol.md)
    symmetry=Symmetry((Part,), first=((Part, "parts"),)),
    # LIVE-4: the brokers keep taking each of their enabled steps; the clients, timers and faults need not
    fairness=(WeakFair("coordinator", "partition", each=True, exclude_tags=("timeout",)),),
)
