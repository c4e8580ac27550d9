"""One large satisfiability query handed to CaDiCaL (python-sat), on the clauses z3 made of it.

z3's finite-domain solver bit-blasts the bounded integers and pseudo-Boolean constraints of an
unrolling to clauses; `Solver.dimacs()` prints them after a probe that stops at the first conflict.
CaDiCaL 1.9.5 decides the single query "does some property fail at a depth below K0" about five
times faster than z3's own SAT core on Kafka (B7 at depth 32: 75 s against 384 s,
benchmarks/RESULTS.md), where the shortest-first run's incremental queries keep z3, which reuses
what it learnt from one depth to the next. A path is read back through the action picks' names.
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


def check(fd, want=()) -> tuple[str, dict | None]:
    """("sat" or "unsat", the model's values of the Bools named in `want`) for the assertions of
    `fd` (a z3 QF_FD solver, which this leaves unusable for further queries). The values are read
    through the names z3 prints beside the clauses; a name z3 simplified away is missing from the
    dict, and the dict is None when unsat or when z3 decided the query while simplifying."""
    Solver = _solver_class()
    fd.set("max_conflicts", 0)
    r = fd.check()
    if r != z3.unknown:      # decided while simplifying
        return str(r), None
    clauses, var_of = [], {}
    wanted = set(want)
    for line in fd.dimacs().splitlines():
        if not line or line[0] == "p":
            continue
        if line[0] == "c":       # "c <var> <name>"
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[2] in wanted:
                var_of[parts[2]] = int(parts[1])
            continue
        clauses.append([int(x) for x in line.split()][:-1])   # each clause line ends with 0
    with Solver(name="cadical195", bootstrap_with=clauses) as s:
        if not s.solve():
            return "unsat", None
        true = {v for v in s.get_model() if v > 0}
    return "sat", {name: v in true for name, v in var_of.items()}
