"""Strengthening invariants for k-induction (`Spec.invariants_for_induction`).

Facts about every reachable state that are not properties of §5 themselves but make them provable
by 1-induction for every depth. With all of them, every always property but BOUNDS (a counting
bound on the log's length) is 1-inductive on config tiny (20 of 21, ORD-5 included) and on eos (22 of 23, ATOM-3
and EOS-1 included; measured 2026-11-28), and was on ci (21 of 22, before ORD-5 was added; not re-run since):
`txncheck bmc kafka --depth 0` proves them first (Houdini), and `txncheck bmc` uses what it proved
on every unrolled state. A variant that breaks an invariant just loses it (Houdini drops it).

Each was found from a counterexample to induction (an unreachable pre-state the solver offered)
and is checked on every reachable state of the shipped configs, under each protocol version, and
of every variant by the explicit engine (tests/test_kafka_inductive.py). An invariant that holds
only under one protocol version or config says so in its guard (TV2; zombies, expiries or
duplicates = 0).

- base.py: the coordinator's cache and log, the partition log, markers, clients and decisions
  (IND-11..IND-56; with them ATOM-1, DECIDE-1, ORD-2, FENCE-2, FENCE-3, EPOCH-1, TRACK-1, STRUCT-1);
- idempotence.py: sequence numbers and zombie fencing (IND-60..IND-80, IND-125: DUP-1, ORD-4, FENCE-1);
- outcome.py: markers and decisions of transaction outcomes (IND-81..IND-124, IND-126: ATOM-2, DUR-1, DUR-3);
- ctp.py: consume-transform-produce, offsets and inputs (IND-150..IND-166: ATOM-3, EOS-1, which
  with them are 1-inductive on config ci);
- zombies.py: epoch ownership between incarnations of one tid, and zombie-aware twins of NO_ZOMBIES
  invariants (IND-170..IND-180, IND-187: with them eos, which has a zombie, proves all but BOUNDS too);
- kip98.py: protocols kip98 and verify without late produce (IND-190..IND-208: with them tiny under
  kip98 with delays 0 proves the same 19 as under TV2);
- leader.py: leader changes of data partitions (IND-210: the producer state is the replay of the log) and
  replication lag (IND-211..IND-213: the HW, and the Produce and marker answers waiting for it);
- rotation.py: without producer id rotation (pids=1) every pid is its tid's first (IND-230); with it, a rotation
  happens once and the second pid is unused before it (IND-231, IND-232). pids.py: the (pid, epoch) order the
  invariants use, so that they hold with a rotation too (config rotation, where 14 of the 19 are 1-inductive).
- batches.py: with one batch per partition the cells of several batches keep their initial values (IND-240); the
  other invariants describe each transaction's first batch at a partition, and hold on config inflight too.
"""
from . import base, batches, ctp, idempotence, kip98, leader, outcome, rotation, zombies

INVARIANTS = (base.INVARIANTS + idempotence.INVARIANTS + outcome.INVARIANTS + ctp.INVARIANTS + zombies.INVARIANTS
              + kip98.INVARIANTS + leader.INVARIANTS + rotation.INVARIANTS + batches.INVARIANTS)
