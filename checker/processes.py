"""Whether a process still lives: for a staging directory left by a killed run, and for the Spark
cluster processes the tests and `make cluster-start` manage."""
from __future__ import annotations

import os


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
