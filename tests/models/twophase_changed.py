"""TwoPhase after a (bad) protocol change: TMCommit no longer waits for the RMs' votes. The report's
change review against the shipped twophase must show the row's guard diff and TCConsistent going
from holds to violated."""
from dataclasses import replace

from txncheck.spec.twophase import SPEC as BASE

_tm = BASE.tables[0]
_rows = tuple(replace(r, guard=r.guard[:1]) if r.id == "TM-02" else r for r in _tm.rows)
SPEC = replace(BASE, tables=(replace(_tm, rows=_rows),) + BASE.tables[1:], variants=())
