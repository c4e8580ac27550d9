"""Writes that fail for want of room (a full filesystem, a disk quota, a file-size limit): which errors those
are, the fix for each, and the room left, for the one message each engine gives instead of a traceback."""
from __future__ import annotations

import errno
import os

FIXES = {errno.ENOSPC: "make room on that filesystem",
         errno.EDQUOT: "free some of your disk quota there",
         errno.EFBIG: "raise the file-size limit (`ulimit -f`)"}


def is_no_room(err: BaseException) -> bool:
    return isinstance(err, OSError) and err.errno in FIXES


def mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def amount(n: int) -> str:
    """`n` bytes in KiB, MiB or GiB, whichever reads best."""
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return f"{n / 2**shift:,.1f} {unit}"
    return f"{n / 2**10:,.1f} KiB"


def free_bytes(path: str) -> int | None:
    """The bytes an unprivileged process may still write on the filesystem of `path` (or of its nearest
    existing ancestor); None where that cannot be told."""
    p = os.path.abspath(path)
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def bytes_under(path: str) -> int:
    """The size of the files under directory `path` (0 where there is none)."""
    total = 0
    for d, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(d, n)).st_size
            except OSError:
                pass
    return total
