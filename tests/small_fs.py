"""A real filesystem that fills up, for the tests of what a run says when the disk is full: a tmpfs of a given
size mounted on a directory of the test's (root only; CI runs as root). `grow` remounts it larger, as a user
who makes room does. Where it cannot be mounted the test is skipped with the reason, except under CI (`CI`
set), where that fails it rather than hides it."""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess

import pytest

from txncheck.checker.no_room import free_bytes


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"the full-disk tests cannot run in CI: {why}", pytrace=False)
    pytest.skip(why)


class SmallFs:
    def __init__(self, path: str):
        self.path = path

    def grow(self, size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", self.path], check=True, capture_output=True)

    def fill(self) -> None:
        """Take every byte left with a file of its own."""
        fd = os.open(os.path.join(self.path, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as err:
            if err.errno != errno.ENOSPC:
                raise
        finally:
            os.close(fd)
        assert self.free() == 0

    def free(self) -> int:
        return free_bytes(self.path)


@contextlib.contextmanager
def small_filesystem(path, size: str):
    path = str(path)
    if os.geteuid() != 0:
        _unavailable("mounting a small tmpfs needs root")
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
    if p.returncode:
        _unavailable(f"cannot mount a tmpfs on {path}: {p.stderr.strip()}")
    try:
        yield SmallFs(path)
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True)
