"""Replace a file whole: a reader (a resumed run after a kill or a power cut, a CI step, the next
gate) sees the old file or the new one, never a part.

The new content goes to a temporary file beside the destination (so the last step is a rename on one
filesystem), is flushed to disk, then `os.replace`d over it; with `sync_dir` the directory is flushed
too, so that the rename itself survives a power cut. Any exception, Ctrl-C and SIGTERM included
(cli/main.py raises them), removes the temporary file; after SIGKILL only the temporary can remain,
never a partial file. The file is created with the user's umask, as any file they write.

Checkpoints (`checkpoint.py`, `vector/checkpoint.py`), the Spark engine's small state files and every
report file (`reports/atomic.py`) are written through this one module.
"""
from __future__ import annotations

import os
import uuid


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_beside(path: str) -> str:
    """A fresh hidden name beside `path`: `.NAME.<random>.tmp`."""
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex[:12]}.tmp")


class Replacement:
    """`with Replacement(path) as f: f.write(...)` replaces `path` by what the block writes, or leaves it
    as it was if the block raises. Creating it creates the temporary file (`temp`, by default
    `temp_beside(path)`), so an OSError there means the directory cannot be written to, before anything
    is written; `text` opens it for str (UTF-8), else for bytes."""

    def __init__(self, path: str, temp: str | None = None, *, text: bool = False, sync_dir: bool = False):
        self.path = path
        self.temp = temp if temp is not None else temp_beside(path)
        self.sync_dir = sync_dir
        self.file = open(self.temp, "w", encoding="utf-8") if text else open(self.temp, "wb")

    def __enter__(self):
        return self.file

    def __exit__(self, kind, err, tb) -> None:
        done = False
        try:
            with self.file:
                if kind is None:
                    self.file.flush()
                    os.fsync(self.file.fileno())
            if kind is None:
                os.replace(self.temp, self.path)
                done = True
        finally:
            if not done:
                try:
                    os.unlink(self.temp)
                except OSError:
                    pass
        if done and self.sync_dir:
            fsync_dir(os.path.dirname(self.path) or ".")


def replace_file(path: str, data: bytes | str, temp: str | None = None, *, sync_dir: bool = False) -> None:
    """Replace `path` by `data` (see `Replacement`)."""
    with Replacement(path, temp, text=isinstance(data, str), sync_dir=sync_dir) as f:
        f.write(data)
