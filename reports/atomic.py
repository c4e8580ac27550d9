"""Write one file atomically: a reader (a CI step, a killed gate's next run) sees the old file or the
new one, never a part.

The text goes to a temporary file in the same directory (so the final step is a rename on one
filesystem), is flushed to disk, then `os.replace`d over the destination. Ctrl-C and SIGTERM unwind
as exceptions (cli/main.py), which remove the temporary file; after SIGKILL only a hidden
`.NAME.*.tmp` can remain, never a partial NAME.
"""
from __future__ import annotations

import os
import tempfile

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
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=parent)
    except OSError as err:
        raise ReportPathError(f"cannot write {path} ({err.strerror}); give a path you can write to") from None
    try:
        with (os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8")) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes 0600; a report is as readable as any file the user writes
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_text(path: str, text: str) -> None:
    """Append (GitHub's $GITHUB_STEP_SUMMARY is shared by every step of a job: it must not be replaced)."""
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        raise ReportPathError(f"cannot append to {path} ({err.strerror})") from None
