"""Strengthening invariant for several batches per partition (config `batches`, kafka-protocol §2.3): IND-240.

With batches=1 no row writes a second batch, a re-sequencing flag or the last acknowledged sequence, and under TV2 no
row writes a verification entry's lowest sequence (LOWEST_SEQUENCE), so those cells keep their initial values;
saying so keeps the 1-induction of the other invariants from considering pre-states with a second batch. The other
invariants describe each transaction's first batch at a partition (`base.batch_slot`, the cells indexed 1), and hold
on config inflight too.
"""
from txncheck.spec.expr import And, ForAll, Implies, Not
from txncheck.spec.model import Always

from ..domains import LOWEST_SEQUENCE, MAXB, MULTI_BATCH, BatchSt, Inc, IncSlot, Part, Pid, Slot, TxnSlot, Ver
from ..state import log_b, pc_ack, pc_b, pc_rs, pl_low, pl_low_e, pl_vb, pl_vst

LATER = range(2, MAXB + 1)  # the batch slots a config with batches=1 leaves unused

INVARIANTS = (
    Always("IND-240", Implies(Not(MULTI_BATCH), And(
        ForAll(Inc, lambda i: ForAll(Part, lambda p: And(
            pc_ack[i][p] == -1, *(Not(pc_rs[i][p][bb]) for bb in range(1, MAXB + 1)),
            *(pc_b[i][p][bb] == BatchSt.NONE for bb in LATER)))),
        ForAll(Part, lambda p: And(
            Implies(Not(LOWEST_SEQUENCE), ForAll(Pid, lambda u: And(pl_low[p][u] == -1, pl_low_e[p][u] == -1))),
            ForAll(Slot, lambda s: log_b[p][s] == 1),
            ForAll(IncSlot, lambda j: ForAll(TxnSlot, lambda kk: And(
                *(pl_vb[p][j][kk][bb] == Ver.NONE for bb in LATER), *(Not(pl_vst[p][j][kk][bb]) for bb in LATER)))))))),
           "With one batch per partition (batches=1) the cells of later batches, the re-sequencing flags, the last "
           "acknowledged sequence and, under TV2, the verification entries' lowest sequence keep their initial "
           "values."),
)
