"""`txncheck tables SPEC [--config NAME] [--set K=V] [--verify] [--check C] [--json]`.

Prints every table (id, from-state, trigger, guard, to-state, reference); with --verify, runs the
z3 table checks (determinism, completeness, type preservation, conformance; see
`txncheck.checker.symbolic.tables`). Exit 0: no finding; 1: findings.
"""
from __future__ import annotations

import json

from txncheck.spec.errors import ConfigError

from .common import add_model_args, model_request

CHECKS = ("determinism", "completeness", "type", "conformance")


def load_model(args):
    """The ground model for SPEC, --variant (with the settings it is checked under), --config and --set
    overrides: the command's ModelRequest, grounded as `txncheck check` grounds it."""
    return model_request(args).ground()


def register(subparsers) -> None:
    p = subparsers.add_parser("tables", help="print a spec's tables; --verify checks them with z3",
                              description="Print every table (id, from-state, trigger, guard, to-state, "
                              "reference); with --verify, check determinism, completeness, type "
                              "preservation and conformance for every state within the type bounds. "
                              "Exit 0: no finding; 1: findings.")
    add_model_args(p)
    p.add_argument("--verify", action="store_true", help="run determinism, completeness, type and conformance checks")
    p.add_argument("--check", action="append", choices=CHECKS, help="run only these checks (repeatable)")
    p.add_argument("--table", action="append", metavar="ACTOR", help="only these tables (repeatable)")
    p.add_argument("--assume-invariants", action="store_true",
                   help="check only states satisfying the spec's strengthening invariants (prove them with "
                   "`txncheck bmc SPEC --induction K`)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(run=run)


TABLES_SCHEMA = "txncheck.tables/1"


def run(args) -> int:
    from txncheck.spec.listing import render_text, table_lines
    m = load_model(args)
    lines = table_lines(m.spec, m.env)
    if args.table:
        known = {t.actor for t in m.spec.tables}
        bad = [t for t in args.table if t not in known]
        if bad:
            raise ConfigError(f"spec {m.spec.name} has no table {', '.join(bad)}; its tables are {', '.join(sorted(known))}")
        lines = [ln for ln in lines if ln.table in args.table]
    report = None
    if args.verify:
        from txncheck.checker.symbolic.tables import verify_tables
        report = verify_tables(m, tuple(args.check or CHECKS), tuple(args.table) if args.table else None,
                               assume_invariants=args.assume_invariants)
    if args.json:
        out = {"schema": TABLES_SCHEMA, "spec": m.spec.name, "variant": m.spec.variant, "config": m.config.to_json(),
               "rows": [ln.to_json() for ln in lines]}
        if report is not None:
            out["verify"] = report.to_json()
        print(json.dumps(out, indent=1, ensure_ascii=False))
    else:
        print(render_text(lines))
        if report is not None:
            print()
            print(report.text())
    return 1 if report is not None and report.findings else 0
