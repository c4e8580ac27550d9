"""The shipped Kafka spec with one more variant: the coordinator never writes CompleteX (TL-06 dropped), so a
decision in the transaction log never completes. LIVE-4 (a leads_to under the brokers' weak fairness) must
catch it (tests/test_liveness.py)."""
from dataclasses import replace

from txncheck.spec.kafka import SPEC as KAFKA
from txncheck.spec.model import DropRow, Variant

SPEC = replace(KAFKA, variants=KAFKA.variants + (
    Variant("no-complete", "the coordinator never writes CompleteX after the markers", ("LIVE-4",),
            (DropRow("TL-06"),)),))
