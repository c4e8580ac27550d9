"""`txncheck bmc SPEC [--config NAME] [--variant V] [--set K=V] (--depth K | --induction K)`.

--depth K: bounded model checking with z3: a violation of each `always` property within K steps,
shortest first; a counterexample is written as a standard trace (`txncheck replay` reads it).
The properties that are 1-inductive together (with the spec's strengthening invariants) are first
proved for every depth and left out of the unrolling (--no-prove unrolls them all). --from-depth K0
asks only at depths K0..K: a deep counterexample sooner, not known to be the shortest, unless
--refute-below first shows in one query (CaDiCaL) that nothing fails below K0.
--progress prints each solver query's time to stderr as it finishes.
--induction K: k-induction (k = 1..K) of the `always` properties together with the spec's
strengthening invariants, within the type bounds.
--pdr: IC3/PDR (z3's Spacer) on each `always` property: a proof comes with the inductive invariant
Spacer found (no strengthening invariant needed), a violation with a trace (not necessarily the
shortest); experimental: it answers small models only (RESULTS.md).

Exit 0: no counterexample up to K / proved; 1: counterexample; 3: k-induction inconclusive (a
counterexample to induction, printed as a witness) or z3 answered unknown. The exit code is the
result's `verdict` (pass, violation, incomplete: checker/symbolic/status.py).
"""
from __future__ import annotations

import json
import os
import sys

from txncheck.spec.errors import ConfigError

from txncheck.checker.run import trace_path
from txncheck.reports.run_output import RunOutput
from txncheck.reports.symbolic_text import symbolic_text
from txncheck.reports.writer import write_symbolic

from .common import add_model_args
from .exit_codes import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION

# the run's verdict (checker/symbolic/status.py) is its exit code; a property left undecided (a
# counterexample to induction, unknown) is exit 3, as `check --require-complete` treats a cut search
EXIT_OF_VERDICT = {"pass": EXIT_PASS, "violation": EXIT_VIOLATION, "incomplete": EXIT_INCOMPLETE}


def _written(data: dict, traces: dict, staged, out: str) -> dict:
    """Write the result with each property's trace path as the user will find it (under --out)."""
    names = {name: trace_path(name) for name in traces}
    for p in data["properties"]:
        if p["name"] in names:
            p["trace"] = os.path.join(out, names[p["name"]])
    write_symbolic(data, traces, staged)
    return names


def register(subparsers) -> None:
    p = subparsers.add_parser("bmc", help="bounded model checking and k-induction with z3",
                              description="Bounded model checking (--depth K) or k-induction (--induction K) "
                              "of the always properties with z3. Exit 0: none up to K / proved; 1: "
                              "counterexample (written as a trace with --out); 3: k-induction inconclusive.")
    add_model_args(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--depth", type=int, help="bounded model checking up to K steps")
    g.add_argument("--induction", type=int, metavar="K", help="k-induction, k = 1..K")
    g.add_argument("--pdr", action="store_true",
                   help="IC3/PDR with z3's Spacer (experimental): proves small models without strengthening "
                   "invariants")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="with --pdr: seconds per property before answering unknown (default 300)")
    p.add_argument("--property", action="append", help="only these always properties (repeatable)")
    p.add_argument("--no-prove", action="store_true",
                   help="with --depth: skip the 1-induction pass that first proves what it can for every depth "
                   "(Houdini over the properties and the spec's strengthening invariants) and unroll every "
                   "property")
    p.add_argument("--no-simple-path", action="store_true", help="k-induction without the simple-path constraint")
    p.add_argument("--solver", choices=("fd", "smt"), default=None,
                   help="z3's finite-domain solver (the default for --depth, faster on unrolled paths) or its "
                   "general SMT solver (the default for --induction, faster on the one large step query)")
    p.add_argument("--lemmas", action="store_true",
                   help="first mine candidate invariants from the vector engine's reachable states and keep those "
                   "z3 proves inductive (Houdini); assert them on every unrolled state (bmc) or assume them in "
                   "the step case (k-induction)")
    p.add_argument("--lemma-max-states", type=int, default=None, metavar="N",
                   help="with --lemmas: mine from a breadth-first prefix of about N states")
    p.add_argument("--from-depth", type=int, default=0, metavar="K0",
                   help="with --depth: ask only at depths K0..K, to reach a deep counterexample without first "
                   "refuting every shallower depth; one found is not known to be the shortest, and 'none' "
                   "covers K0..K only")
    p.add_argument("--refute-below", action="store_true",
                   help="with --from-depth K0: first show in one query (CaDiCaL) that no property fails at a "
                   "depth below K0, so a counterexample found is a shortest one (if one fails below K0, the "
                   "search starts from depth 0 instead); on deep cases cheaper than refuting depth by depth")
    p.add_argument("--progress", action="store_true",
                   help="print each solver query's time to stderr as it finishes (deep runs take minutes)")
    p.add_argument("--out", default=None, help="directory for counterexample traces and result.json")
    p.add_argument("--html", action="store_true", help="with --out: also a viewer page per trace and traces/index.html")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def _print_progress(label: str, seconds: float, result: str) -> None:
    print(f"{label}: {result} ({seconds:.2f} s)", file=sys.stderr, flush=True)


def run(args) -> int:
    from .tables import load_model
    m = load_model(args)
    # every option is checked before any work starts: mining lemmas can take minutes
    if args.lemma_max_states is not None and (not args.lemmas or args.lemma_max_states < 1):
        raise ConfigError(f"--lemma-max-states needs --lemmas and a count of at least 1; got {args.lemma_max_states}")
    if args.pdr and args.lemmas:
        raise ConfigError("--lemmas applies to --depth and --induction, not --pdr; drop one of them")
    if args.timeout is not None and not args.pdr:
        raise ConfigError("--timeout applies to --pdr only; drop it")
    if args.pdr and args.timeout is not None and not args.timeout > 0:
        raise ConfigError(f"--timeout must be positive; got {args.timeout}")
    if args.no_prove and args.depth is None:
        raise ConfigError("--no-prove applies to --depth (bounded model checking) only; drop it")
    if args.depth is not None and args.depth < 0:
        raise ConfigError(f"--depth must be 0 or more; got {args.depth}")
    if args.from_depth and args.depth is None:
        raise ConfigError("--from-depth applies to --depth (bounded model checking) only; drop it")
    if args.depth is not None and not 0 <= args.from_depth <= args.depth:
        raise ConfigError(f"--from-depth must be between 0 and --depth ({args.depth}); got {args.from_depth}")
    if args.refute_below and not args.from_depth:
        raise ConfigError("--refute-below applies to --from-depth K0 (K0 >= 1); add --from-depth or drop it")
    if args.induction is not None and args.induction < 1:
        raise ConfigError(f"--induction needs K >= 1; got {args.induction}")
    on_query = _print_progress if args.progress else None
    if args.progress and args.pdr:
        raise ConfigError("--progress applies to --depth and --induction, not --pdr; drop one of them")
    if args.html and not args.out:
        raise ConfigError("--html writes its pages under --out; add --out DIR")
    staged = RunOutput.prepare(args.out) if args.out else None  # a bad --out is found before any solving
    try:
        return _solve_and_report(args, m, on_query, staged)
    finally:
        if staged is not None:
            staged.discard()


def _solve_and_report(args, m, on_query, staged) -> int:
    from txncheck.checker.symbolic.bmc import bmc
    from txncheck.checker.symbolic.induction import k_induction
    lemmas = None
    if args.lemmas:
        from txncheck.checker.symbolic.lemmas import prove_lemmas
        lemmas = prove_lemmas(m, "explore", max_states=args.lemma_max_states)
    if args.pdr:
        from txncheck.checker.symbolic.pdr import pdr
        res, _ = pdr(m, args.property, timeout_s=args.timeout if args.timeout is not None else 300.0)
    elif args.depth is not None:
        res = bmc(m, args.depth, args.property, solver=args.solver or "fd", lemmas=lemmas, prove=not args.no_prove,
                  on_query=on_query, from_depth=args.from_depth, refute_below=args.refute_below)
    else:
        res = k_induction(m, args.induction, args.property, simple_path=not args.no_simple_path,
                          solver=args.solver or "smt", lemmas=lemmas, on_query=on_query)
    data = res.to_json()
    paths = {}
    if staged is not None:
        traces = {p.name: p.trace for p in res.properties if p.trace is not None}
        rel = {name: os.path.join(args.out, r) for name, r in _written(data, traces, staged, args.out).items()}
        if args.html:
            from txncheck.reports.writer import write_views
            index = write_views(traces, staged, f"{m.spec.name} · bmc")
            rel["(viewer index)"] = os.path.join(args.out, index)
        staged.commit()
        paths = rel
    if args.json:
        print(json.dumps(data, indent=1, ensure_ascii=False))
    else:
        print(symbolic_text(res, paths))
    return EXIT_OF_VERDICT[res.verdict]
