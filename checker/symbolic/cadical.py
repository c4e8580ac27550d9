"""One large satisfiability query handed to CaDiCaL (python-sat), on the clauses z3 made of it.

z3's finite-domain solver bit-blasts the bounded integers and pseudo-Boolean constraints of an
unrolling to clauses; `Solver.dimacs()` prints them after a probe that stops at the first conflict.
CaDiCaL 1.9.5 decides the single query "does some property fail at a depth below K0" about five
times faster than z3's own SAT core on Kafka (B7 at depth 32: 75 s against 384 s,
benchmarks/RESULTS.md), where the shortest-first run's incremental queries keep z3, which reuses
what it learnt from one depth to the next. Only the verdict is read back: a satisfiable answer
sends bmc to the ordinary search, which finds and replays the path itself.
"""
from __future__ import annotations

import z3

from txncheck.spec.errors import ConfigError


def _solver_class():
    try:
        from pysat.solvers import Solver
    except ImportError:
        raise ConfigError("--refute-below needs the python-sat package (CaDiCaL); reinstall txncheck with "
                          "`make venv` or `pip install python-sat`") from None
    return Solver


def check(fd) -> str:
    """"sat" or "unsat" for the assertions of `fd` (a z3 QF_FD solver, which this leaves unusable
    for further queries)."""
    Solver = _solver_class()
    fd.set("max_conflicts", 0)
    r = fd.check()
    if r != z3.unknown:      # decided while simplifying
        return str(r)
    clauses = []
    for line in fd.dimacs().splitlines():
        if not line or line[0] in "cp":
            continue
        lits = [int(x) for x in line.split()]
        clauses.append(lits[:-1])       # each clause line ends with 0
    with Solver(name="cadical195", bootstrap_with=clauses) as s:
        return "sat" if s.solve() else "unsat"
