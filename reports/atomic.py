"""Report files written whole (`write_atomic`): a reader (a CI step, a killed gate's next run) sees the
old file or the new one, never a part (`checker/durable.py` says how); after SIGKILL only a hidden
`.NAME.*.tmp` can remain, never a partial NAME. Also the checks that refuse a report path before a
run, and appending to a file that others append to.
"""
from __future__ import annotations

import os

from txncheck.checker.durable import Replacement
from txncheck.spec.errors import ConfigError


class ReportPathError(ConfigError):
    """A report path (--junit, --sarif, --summary) that cannot be written (exit 2)."""


def umask() -> int:
    """The process's umask (reading it means setting it: put straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path: str, option: str) -> None:
    """Refuse a report path before the gate runs (a directory, a parent that is a file)."""
    if not path or not path.strip():
        raise ReportPathError(f"{option} needs a file path")
    if os.path.isdir(path):
        raise ReportPathError(f"{option} {path} is a directory; give a file path, e.g. {os.path.join(path, 'report')}")
    parent = os.path.dirname(os.path.abspath(path))
    probe = parent
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise ReportPathError(f"{option} {path}: {probe} is a file, not a directory")


def write_atomic(path: str, text: str | bytes) -> None:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        out = Replacement(path, text=isinstance(text, str))
    except OSError as err:
        raise ReportPathError(f"cannot write {path} ({err.strerror}); give a path you can write to") from None
    with out as f:
        f.write(text)


def append_text(path: str, text: str) -> None:
    """Append (GitHub's $GITHUB_STEP_SUMMARY is shared by every step of a job: it must not be replaced)."""
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        raise ReportPathError(f"cannot append to {path} ({err.strerror})") from None
