"""Consumer table: the consume side of the consume-transform-produce loop (§1.6), one consumer per
incarnation in one group with one input partition.

The input partition holds `inputs` committed, non-transactional records (offsets 0..inputs-1); a
read_committed and a read_uncommitted fetch both return them, so the input needs no log of its own.
Polling is part of `beginTransaction` (PC-03: the loop polls one record, then begins). Every
incarnation that starts joins the group, which rebalances and assigns it the input partition
(`generation` in domains.py). A consumer without a position fetches the committed offset; under
KIP-447 it does so with RequireStable, which answers UNSTABLE_OFFSET_COMMIT (retriable) while any
producer has pending transactional offsets for the partition: the retry changes no state, so the
row is simply disabled until the offsets are decided. Readers of the output partitions are the
read_committed and read_uncommitted views RC(p) and RU(p) of properties.py.
"""
from txncheck.spec.expr import Config, ForAll, Or
from txncheck.spec.model import Row, Table

from .chart import PRODUCER
from .domains import CTP, PcState, Tid
from .params import i
from .state import cs_pos, gc_off, gc_pend, pc_st

stable = Or(Config("kip447") == 0, ForAll(Tid, lambda t: gc_pend[t] == -1))

ROWS = (
    Row("CS-01", "consumer", "OffsetFetch", params=(i,),
        guard=(CTP, pc_st[i] == PcState.READY, cs_pos[i] == -1, stable),
        updates=(cs_pos[i].set(gc_off),),
        ref="kafka-protocol §1.5 KIP-447 (OffsetFetch RequireStable), §1.6 (position from OffsetFetch on "
            "assignment and after an abort); KafkaConsumer.committed / ConsumerCoordinator.fetchCommittedOffsets",
        doc="Without KIP-447 (`kip447` = 0) the committed offset is read even while offsets are pending."),
)

TABLE = Table("consumer", ROWS, status=None, at=PRODUCER,
              doc="Consumer of the consume-transform-produce loop: position from the group's committed offset (§1.6).")
