"""`txncheck`: parse, dispatch, and map typed errors and signals to exit codes.

The exit code is always the verdict: a closed stdout (`| head`) does not change it, and a signal
is never reported as a pass.
"""
from __future__ import annotations

import os
import signal
import sys

# nothing heavy is imported before the signal handlers are in place (numpy takes a tenth of a second)
from txncheck.checker.processes import redeliver_swallowed_signals

from .exit_codes import EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_SIGINT, EXIT_SIGTERM, EXIT_USAGE

EXIT_CODES = """exit codes:
  0    pass: the search was complete, every always property holds and every sometimes is witnessed
       (also an incomplete search without --require-complete; the summary says it stopped early)
  1    a property was violated (or a deadlock, or a table finding, or a replayed violation confirmed);
       gate: an entry did not show what its gate file says it must
  2    bad input: command line, spec, config, --out or trace file (one message names the fix);
       also a replay that does not confirm its trace, and a disk that cannot take the run's files
       (spill files, --checkpoint, --out: full, over quota, past `ulimit -f`, read-only); no result is written
  3    incomplete: cut by a bound with --require-complete, or out of memory (--max-memory);
       bmc: a counterexample to induction, or z3 answered unknown
  4    internal error (a bug in txncheck: rerun with TXNCHECK_DEBUG=1 and report it)
  130  interrupted (SIGINT, Ctrl-C): no verdict, --out left as it was
  143  terminated (SIGTERM: CI cancellation, `timeout`): no verdict, --out left as it was"""


class Terminated(BaseException):
    """SIGTERM (CI cancellation, `timeout`, Kubernetes): unwinds like Ctrl-C so that temporary files go."""


class _PipeSafe:
    """A stream whose reader may go away (`txncheck ... | head`): output is then dropped, the run goes on
    and its exit code stays the verdict."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def build_parser():
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message):
            self.print_usage(sys.stderr)
            print(f"txncheck: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
            raise SystemExit(EXIT_USAGE)

    p = _Parser(prog="txncheck", description="Exhaustive model checking of transactional protocols "
                "written as state-transition tables (Kafka exactly-once transactions and more).",
                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import bmc, check, gate_args, new, replay, report, specs, tables, view
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in (specs, check, replay, view, report, tables, bmc, gate_args, new):  # z3 is imported only when tables/bmc run
        mod.register(sub)
    return p


class _Signals:
    """SIGINT and SIGTERM as exceptions, remembered: an error raised while one unwinds (an import cut
    short by Ctrl-C fails with ImportError) is the signal's doing, not a bug."""

    def __init__(self):
        self.received: int | None = None
        self.previous: dict = {}
        self.undo_hook = lambda: None

    def _handle(self, signum, frame):
        self.received = signum
        raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated()

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self.previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread (an embedding program): leave its handlers alone
                pass
        if self.previous:
            self.undo_hook = redeliver_swallowed_signals(self._signal_of)

    def _signal_of(self, exc: BaseException) -> int | None:
        if isinstance(exc, KeyboardInterrupt) and self.received == signal.SIGINT:
            return signal.SIGINT
        return signal.SIGTERM if isinstance(exc, Terminated) else None

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.undo_hook()

    def exit_code(self) -> int | None:
        if self.received is None:
            return None
        name = "interrupted" if self.received == signal.SIGINT else "terminated"
        print(f"txncheck: {name} (no verdict; --out left as it was)", file=sys.stderr)
        return EXIT_SIGINT if self.received == signal.SIGINT else EXIT_SIGTERM


def _guard_streams() -> dict:
    saved = {"stdout": sys.stdout, "stderr": sys.stderr}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, _PipeSafe) or stream is None:
            continue
        try:  # a terminal or pipe that cannot encode '→' gets an escape, not a crash
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
        setattr(sys, name, _PipeSafe(stream))
    return saved


def main(argv=None) -> int:
    signals = _Signals()
    signals.install()
    saved = _guard_streams()
    try:
        return _main(argv, signals)
    except BaseException as err:  # noqa: BLE001 - a signal, or an error it caused, is never a traceback
        code = signals.exit_code()
        if code is None:
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise
            return _internal_error(err)
        return code
    finally:
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001 - output already dropped; the exit code stands
            pass
        signals.restore()
        sys.stdout, sys.stderr = saved["stdout"], saved["stderr"]


def _internal_error(err: BaseException) -> int:
    if os.environ.get("TXNCHECK_DEBUG"):
        raise err
    print(f"txncheck: internal error: {type(err).__name__}: {err}\n"
          "This is a bug in txncheck; rerun with TXNCHECK_DEBUG=1 for the traceback and report it.",
          file=sys.stderr)
    return EXIT_INTERNAL


def _main(argv, signals: _Signals) -> int:
    from txncheck.spec.errors import ResourceError, TxncheckError
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code = int(args.run(args))
        sys.stdout.flush()
        return code
    except ResourceError as err:
        print(f"txncheck: {err}", file=sys.stderr)
        return EXIT_INCOMPLETE
    except TxncheckError as err:
        if signals.received is not None:
            raise
        print(f"txncheck: error: {_located(err, args)}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        from txncheck.checker.resources import memory_limit, out_of_memory_message
        print(f"txncheck: {out_of_memory_message(memory_limit())}", file=sys.stderr)
        return EXIT_INCOMPLETE


def _located(err, args):
    """A mistake about a part of the command's spec, at that part's definition (`path:line: ...`)."""
    ref = getattr(args, "spec", None)
    if not isinstance(ref, str) or getattr(err, "subject", None) is None:
        return err
    from txncheck.spec.loader import locate_error
    return locate_error(err, ref)


def entry() -> None:
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # between the handlers and the first try: still no traceback
        sys.exit(EXIT_SIGINT)
    except Terminated:
        sys.exit(EXIT_SIGTERM)


if __name__ == "__main__":
    entry()
