"""txncheck.spec.kafka: Apache Kafka's exactly-once transactions as explicit state-transition tables.

Follows docs KAFKA-PROTOCOL.md: producer client (PC-*), transaction coordinator and transaction log
(TC-*, TL-*), partition leaders (PL-*), network (NET-*) and faults (FLT-*); properties of §5;
protocol versions of §4 as the `protocol` switch; the §6 catalogue as variants.
"""
from txncheck.spec.model import Spec

from . import configs, faults, partition, producer, properties, state, txnlog, variants
from .domains import Part

SPEC = Spec(
    name="kafka",
    doc=__doc__.splitlines()[0].split(": ", 1)[1],
    vars=state.VARS,
    tables=(producer.TABLE, txnlog.TABLE, partition.TABLE, faults.NET, faults.FLT),
    properties=properties.PROPERTIES,
    params=configs.PARAMS,
    configs=configs.CONFIGS,
    variants=variants.VARIANTS,
    ref="docs/KAFKA-PROTOCOL.md; KIP-98, KIP-360, KIP-447, KIP-890",
)
