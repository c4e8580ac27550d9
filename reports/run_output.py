"""A run's output directory as one unit: staged beside `--out`, swapped in whole at the end.

`RunOutput.prepare(out)` checks the destination before any search starts and creates a private
staging directory in the same parent (so the final step is a rename on one filesystem). Every file
of the run is written there; `commit()` then exchanges the staging directory with `out` in one
atomic `renameat2(RENAME_EXCHANGE)` where the kernel supports it (two renames otherwise, with a
moment in which `out` is absent but never mixed), and removes the previous run. A reader of `out`
therefore sees the previous run complete or this run complete, never a mix and nothing stale.

A staging directory that outlives its process (SIGKILL) is named after that process id; the next
run into the same `out` removes it once that process is gone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import tempfile

from txncheck.checker.processes import alive
from txncheck.spec.errors import ConfigError

from .atomic import umask

_STAGE = ".txncheck-stage-"
_OLD = ".txncheck-old-"
# what txncheck itself writes into an output directory; anything else is the user's and is never replaced
_OWN_ENTRIES = {"result.json", "traces", "spark", "spill",
                "report.html", "report.md", "report.json", "figures", "runs"}  # the last five: txncheck report
_OWN_SUFFIXES = (".trace.json", ".trace.txt", ".cti.json", ".cti.txt")  # bmc's names before traces/


class OutputError(ConfigError):
    """An output path that cannot be used (exit 2, before any search)."""


def _renameat2_exchange(a: str, b: str) -> bool:
    """Atomically exchange two paths; False when the platform or filesystem cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    err = ctypes.get_errno()
    raise OSError(err, os.strerror(err), b)


def _foreign_entries(path: str) -> list[str]:
    return sorted(e for e in os.listdir(path)
                  if e not in _OWN_ENTRIES and not e.endswith(_OWN_SUFFIXES) and not e.startswith(".txncheck-"))


class RunOutput:
    """The staging directory of one run and its destination. Use `prepare`, then write, then `commit`."""

    def __init__(self, out: str, stage: str, keep: tuple[str, ...]):
        self.out = out            # absolute destination
        self.stage = stage        # absolute staging directory (same parent)
        self.keep = keep          # entries of the previous `out` this run carries over (the Spark store)
        self.committed = False
        self._scratch: list[str] = []

    @staticmethod
    def prepare(out: str, option: str = "--out", keep: tuple[str, ...] = ()) -> "RunOutput":
        """Check `out` and create the staging directory beside it; raise OutputError naming the fix."""
        if not out or not out.strip():
            raise OutputError(f"{option} needs a directory path")
        path = os.path.abspath(out)
        if path == os.path.abspath(os.sep):
            raise OutputError(f"{option} {out} is the filesystem root; give a directory of its own, e.g. out/run1")
        if os.path.exists(path) and not os.path.isdir(path):
            raise OutputError(f"{option} {out} exists and is not a directory; give a directory path "
                              "(txncheck writes result.json and traces/ into it)")
        if os.path.isdir(path):
            try:
                foreign = _foreign_entries(path)
            except OSError as err:
                raise OutputError(f"{option} {out} cannot be read ({err.strerror}); give a directory you own") from None
            if foreign:
                shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
                raise OutputError(f"{option} {out} holds files txncheck did not write ({shown}); a run replaces "
                                  "its output directory whole, so give a new or empty directory")
        parent = os.path.dirname(path)
        ancestor = parent
        while not os.path.exists(ancestor):
            ancestor = os.path.dirname(ancestor)
        if not os.path.isdir(ancestor):
            raise OutputError(f"{option} {out}: {ancestor} is a file, not a directory; give a path whose "
                              "parents are directories")
        try:
            os.makedirs(parent, exist_ok=True)
            clean_stale(parent, os.path.basename(path))
            stage = tempfile.mkdtemp(prefix=f"{_STAGE}{os.getpid()}-{os.path.basename(path)}-", dir=parent)
        except OSError as err:
            raise OutputError(f"{option} {out}: cannot create files in {parent} ({err.strerror}); "
                              "give a directory you can write to") from None
        return RunOutput(path, stage, keep)

    # -- writing ----------------------------------------------------------------------------------
    def path(self, rel: str) -> str:
        return os.path.join(self.stage, rel)

    def scratch(self, name: str) -> str:
        """A directory for the run's temporary files (a spilled visited set): removed with the stage, never
        part of the committed output."""
        self._scratch.append(name)
        return self.path(name)

    def write_text(self, rel: str, text: str) -> None:
        p = self.path(rel)
        try:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:  # created with the user's umask
                f.write(text)
        except OSError as err:  # a full disk: the staged run is discarded, `out` keeps the previous one
            size = len(text.encode("utf-8"))
            raise OutputError(f"cannot write {rel} of the run ({err.strerror or err}; {size:,} bytes) into {p}; "
                              f"make room beside {self.out} or give an --out with room; the previous "
                              f"run there was left as it was") from None

    def write_json(self, rel: str, data: object) -> None:
        self.write_text(rel, json.dumps(data, indent=1) + "\n")

    # -- the swap ---------------------------------------------------------------------------------
    def commit(self) -> None:
        """Make the staged run the content of `out`, atomically where the kernel allows."""
        for name in self._scratch:
            shutil.rmtree(self.path(name), ignore_errors=True)
        os.chmod(self.stage, 0o777 & ~umask())
        if os.path.isdir(self.out):
            for name in self.keep:  # this run's own store was written into the previous directory
                src = os.path.join(self.out, name)
                if os.path.exists(src) and not os.path.exists(self.path(name)):
                    os.rename(src, self.path(name))
            if _renameat2_exchange(self.stage, self.out):
                shutil.rmtree(self.stage, ignore_errors=True)  # it now holds the previous run
            else:
                old = self.stage.replace(_STAGE, _OLD, 1)
                os.rename(self.out, old)
                os.rename(self.stage, self.out)
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.stage, self.out)
        self.committed = True

    def discard(self) -> None:
        """Remove the staging directory (on error or interruption); `out` is left as it was."""
        if not self.committed:
            shutil.rmtree(self.stage, ignore_errors=True)

    def __enter__(self) -> "RunOutput":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def clean_stale(parent: str, base: str) -> None:
    """Remove staging directories for `base` left by processes that no longer exist (SIGKILL)."""
    for e in os.listdir(parent):
        for prefix in (_STAGE, _OLD):
            if not e.startswith(prefix):
                continue
            pid_s, _, rest = e[len(prefix):].partition("-")
            if not pid_s.isdigit() or not rest.startswith(base + "-"):
                continue
            if int(pid_s) != os.getpid() and not alive(int(pid_s)):
                shutil.rmtree(os.path.join(parent, e), ignore_errors=True)
