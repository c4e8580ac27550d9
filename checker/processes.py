"""Whether a process still lives (for a staging directory left by a killed run, and for the Spark
cluster processes the tests and `make cluster-start` manage), and signals that a finaliser swallowed."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Callable


def alive(pid: int) -> bool:
    """True while process `pid` exists; a zombie child of ours counts as gone (it is reaped here)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    try:
        wpid, _ = os.waitpid(pid, os.WNOHANG)
        return wpid == 0
    except ChildProcessError:  # not our child: it exists
        return True


def redeliver_swallowed_signals(signal_of: Callable[[BaseException], int | None]) -> Callable[[], None]:
    """A signal handler that raises (SIGTERM as SystemExit, Ctrl-C as KeyboardInterrupt) may run while a
    finaliser is on the stack (z3's `__del__`, a memory map's). Python swallows an exception there: it
    prints "Exception ignored in ..." with a traceback and goes on as if no signal had come. From now on
    in this process, such an exception is not printed: its signal (`signal_of(exc)`, None for an exception
    that is not a signal's) is sent again to the main thread a moment later, from a thread of its own, so
    that its handler raises once the finaliser (and this hook: a handler run inside it would be lost for
    good) has returned; should it land in a finaliser again, it comes back here. Returns what puts the
    previous hook back."""
    previous = sys.unraisablehook

    def hook(info) -> None:
        signum = signal_of(info.exc_value) if info.exc_value is not None else None
        if signum is None:
            previous(info)
            return
        threading.Thread(target=_send_later, args=(signum,), name="txncheck-redeliver", daemon=True).start()

    sys.unraisablehook = hook

    def undo() -> None:
        sys.unraisablehook = previous
    return undo


def _send_later(signum: int) -> None:
    time.sleep(0.1)
    main = threading.main_thread()
    if not main.is_alive():  # the interpreter is already going down: nothing to raise in
        return
    try:
        signal.pthread_kill(main.ident, signum)  # to the main thread: it interrupts a sleep there
    except OSError:  # it ended after the check (ESRCH): a traceback from this thread would be the last words
        pass
