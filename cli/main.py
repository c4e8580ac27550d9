"""`txncheck`: parse, dispatch, and map typed errors to exit codes.

Exit codes: 0 pass, 1 property violated (or a finding), 2 usage/spec/config/trace error,
3 incomplete when --require-complete is given, 4 internal error.
"""
from __future__ import annotations

import argparse
import os
import sys

from txncheck.spec.errors import TxncheckError

from . import bmc, check, replay, specs, tables

EXIT_PASS, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"txncheck: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="txncheck", description="Exhaustive model checking of transactional protocols "
                "written as state-transition tables (Kafka exactly-once transactions and more).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in (specs, check, replay, tables, bmc):  # z3 is imported only when tables/bmc run
        mod.register(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except TxncheckError as err:
        print(f"txncheck: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("txncheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_PASS
    except Exception as err:  # noqa: BLE001 - the last line of defence: never a bare traceback
        if os.environ.get("TXNCHECK_DEBUG"):
            raise
        print(f"txncheck: internal error: {type(err).__name__}: {err}\n"
              "This is a bug in txncheck; rerun with TXNCHECK_DEBUG=1 for the traceback and report it.",
              file=sys.stderr)
        return EXIT_INTERNAL


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
