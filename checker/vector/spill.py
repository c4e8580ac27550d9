"""The files a vector search spills to under `--memory-budget`: where they go, and columns appended in pieces.

`SpillDir` names the files (in the run's workdir, or a temporary directory) and removes every one it
named when closed, so a search that fails or finishes leaves nothing behind; it counts the bytes written
(the progress line's "spilled"). `Columns` holds named 1-D columns appended together, piece after piece
(the graph's edges, the property masks judged on it): in memory until `spill`, then one file per column,
appended to sequentially and read back memory-mapped.

A file that cannot be written (a full disk, a quota, a file-size limit, a directory the process may not
write) raises `SpillError`, one message naming the file, what was being written and how much: the CLI
reports it as bad input (exit 2) with no result, and the files written before it go as on any failure.
Files are named after the process (`STEM-PID-N.bin`) and created empty, so a run never reads what another
wrote; in a workdir given explicitly, the files of processes that no longer exist (a SIGKILLed run) are
removed when the first file is created.

Files are read with `np.fromfile` at an offset (a sequential read into an array the caller owns), not
through long-lived memory maps: pages of a map count as the process's resident memory for as long as it
is mapped, which is what a budget must bound.
"""
from __future__ import annotations

import os
import re
import tempfile

import numpy as np

from txncheck.spec.errors import TxncheckError

from ..no_room import FIXES, free_bytes, mib
from ..processes import alive

# what each file stem holds, for the message when it cannot be written
_HOLDS = (("reverse", "the edges sorted by target state, for judging graph properties"),
          ("live", "the edges between goal-less states, for judging eventually and leads_to properties"),
          ("edges-dst", "the edges' target states"), ("edges", "the state graph's edges"),
          ("masks", "the property masks"), ("records", "the visited states' records"),
          ("visited", "the visited set"), ("level", "a level's states"), ("run", "a chunk's new states"))
_OURS = re.compile(r"^[a-z][a-z0-9-]*-(\d+)-\d+\.bin$")  # STEM-PID-N.bin


class SpillError(TxncheckError):
    """A spill file that cannot be written (exit 2): the message names the file, what it holds, the size
    being written and the fix."""


class SpillDir:
    def __init__(self, workdir: str | None = None):
        self.workdir = workdir
        self._tmp = None
        self._count = 0
        self.files: set[str] = set()
        self.written = 0  # bytes written, over the search
        self._ready = False

    def directory(self) -> str:
        if self.workdir:
            os.makedirs(self.workdir, exist_ok=True)
            if not self._ready:
                remove_stale(self.workdir)
                self._ready = True
            return self.workdir
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="txncheck-vector-")
        return self._tmp.name

    def new(self, stem: str) -> str:
        """The path of a new, empty file."""
        self._count += 1
        name = f"{stem}-{os.getpid()}-{self._count}.bin"
        path = os.path.join(self.workdir or tempfile.gettempdir(), name)  # named in a message if not created
        try:
            path = os.path.join(self.directory(), name)
            open(path, "wb").close()
        except OSError as err:
            raise self._error(err, path, 0) from None
        self.files.add(path)
        return path

    def append(self, path: str, arr: np.ndarray) -> None:
        try:
            with open(path, "ab") as f:  # not ndarray.tofile, whose short write carries no errno
                f.write(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
        except OSError as err:
            raise self._error(err, path, int(arr.nbytes)) from None
        self.written += int(arr.nbytes)

    def _error(self, err: OSError, path: str, size: int) -> SpillError:
        """One message: the file, what it holds, the size being written, the room left, and the fix."""
        name = os.path.basename(path)
        holds = next((what for stem, what in _HOLDS if name.startswith(stem + "-")), "the search's data")
        code = err.errno
        why = err.strerror or str(err)
        left = free_bytes(os.path.dirname(path))
        free = f", {mib(left)} free there" if left is not None else ""
        room = code in FIXES
        fix = FIXES.get(code, "make that directory writable")
        place = "a filesystem with room" if room else "a directory you can write to"
        where = (f"give --out on {place} (the spill files are written beside it)" if self.workdir
                 else f"set TMPDIR to {place}")
        doing = f"writing {mib(size)} of {holds} to {path}" if size else f"creating {path} for {holds}"
        fixes = [fix, where] + (["give a larger --memory-budget so that less is spilled"] if room else [])
        stage = "judging the graph properties" if name.startswith(("reverse-", "live-")) else "the search"
        return SpillError(f"{stage} cannot spill to disk: {doing} failed ({why}); the run had spilled "
                          f"{mib(self.written)} before it{free}; {', '.join(fixes[:-1])} or {fixes[-1]}")

    def remove(self, path: str) -> None:
        self.files.discard(path)
        try:
            os.unlink(path)
        except OSError:
            pass

    def close(self) -> None:
        for path in sorted(self.files):
            self.remove(path)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def remove_stale(workdir: str) -> None:
    """Remove spill files of processes that no longer exist (a SIGKILLed run); never another live run's."""
    try:
        names = os.listdir(workdir)
    except OSError:
        return
    for name in names:
        m = _OURS.match(name)
        if m and int(m.group(1)) != os.getpid() and not alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(workdir, name))
            except OSError:
                pass


def read_rows(path: str, dtype, start: int, stop: int, width: int = 0) -> np.ndarray:
    """Entries [start, stop) of a file of `dtype` values (rows of `width` values when width > 0)."""
    dtype = np.dtype(dtype)
    per = max(width, 1)
    count = max(stop - start, 0) * per
    if count == 0:
        return np.zeros((0, width) if width else 0, dtype=dtype)
    out = np.fromfile(path, dtype=dtype, count=count, offset=start * per * dtype.itemsize)
    return out.reshape(-1, width) if width else out


def read_cols(path: str, dtype, n: int, width: int, start: int, stop: int) -> np.ndarray:
    """Entries [start, stop) of each row of a file holding a `width` × `n` matrix of `dtype` (C order): a
    `width` × (stop - start) array, one sequential read per row."""
    dtype = np.dtype(dtype)
    k = max(stop - start, 0)
    out = np.empty((width, k), dtype=dtype)
    if k:
        with open(path, "rb") as f:
            for i in range(width):
                f.seek((i * n + start) * dtype.itemsize)
                if f.readinto(memoryview(out[i]).cast("B")) != k * dtype.itemsize:
                    raise AssertionError(f"internal: {path} is shorter than the {width} x {n} matrix it holds")
    return out


def join(parts: list[np.ndarray], dtype=None) -> np.ndarray:
    """The parts end to end, as `dtype` when given (a narrower integer type where the values fit): a
    single part as it is (no copy where it has that type), an empty array of `dtype` for none."""
    if len(parts) == 1:
        return parts[0] if dtype is None else parts[0].astype(dtype, copy=False)
    return np.concatenate(parts, dtype=dtype) if parts else np.zeros(0, dtype=dtype)


def mapped(path: str, dtype, length: int) -> np.ndarray:
    """The first `length` entries of a file, memory-mapped read-only (an empty array when there are none)."""
    if length == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(length,))


class Columns:
    """Named 1-D columns of equal length, appended to together."""

    def __init__(self, spill: SpillDir, dtypes: dict[str, np.dtype], stem: str):
        self.spill_dir = spill
        self.dtypes = {k: np.dtype(v) for k, v in dtypes.items()}
        self.stem = stem
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.dtypes}
        self.files: dict[str, str] | None = None
        self.length = 0
        self.handed = {k: 0 for k in self.dtypes}  # entries of each column given away by `hand_over`

    def append(self, arrays: dict[str, np.ndarray]) -> None:
        n = {len(arrays[k]) for k in self.dtypes}
        if len(n) != 1:
            raise ValueError(f"columns of unequal length appended: {sorted(n)}")
        n = n.pop()
        if n == 0:
            return
        for k, dt in self.dtypes.items():
            a = np.asarray(arrays[k], dtype=dt)
            if self.files is not None:
                self.spill_dir.append(self.files[k], a)
            else:
                self.parts[k].append(a)
        self.length += n

    def memory_bytes(self) -> int:
        return int(sum(a.nbytes for parts in self.parts.values() for a in parts))

    @property
    def spilled(self) -> bool:
        return self.files is not None

    def spill(self) -> None:
        """Write what is in memory to the files; every later piece goes there directly."""
        self._whole()
        if self.files is None:
            self.files = {k: self.spill_dir.new(f"{self.stem}-{i}") for i, k in enumerate(self.dtypes)}
        for k, parts in self.parts.items():
            for a in parts:
                self.spill_dir.append(self.files[k], a)
            self.parts[k] = []

    def slice(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Entries [start, stop) of every column (arrays never written to again)."""
        if self.files is not None:  # everything is in the files once spilled
            return {k: read_rows(self.files[k], dt, start, stop) for k, dt in self.dtypes.items()}
        out = {}
        for k, dt in self.dtypes.items():
            got, at = [], self.handed[k]
            if start < at:
                raise ValueError(f"entries from {start:,} of column {k} were handed over")
            for a in self.parts[k]:
                lo, hi = max(start - at, 0), min(stop - at, len(a))
                if lo < hi:
                    got.append(a[lo:hi])
                at += len(a)
            out[k] = join(got, dt)
        return out

    def blocks(self, name: str, size: int):
        """Column `name` in order, at most `size` entries at a time: views of its parts, or reads of its file."""
        self._whole(name)
        if self.files is not None:
            for a in range(0, self.length, size):
                yield read_rows(self.files[name], self.dtypes[name], a, min(a + size, self.length))
            return
        for part in self.parts[name]:
            for a in range(0, len(part), size):
                yield part[a:a + size]

    def hand_over(self, name: str) -> list[np.ndarray]:
        """The parts of column `name` (never spilled) appended since the last call, let go here: whoever takes
        them keeps them. `slice` then reads later entries only; the column is never read whole again."""
        if self.files is not None:
            raise ValueError(f"column {name} is in a file: its parts cannot be handed over")
        parts, self.parts[name] = self.parts[name], []
        self.handed[name] += sum(len(a) for a in parts)
        return parts

    def drop(self, name: str) -> None:
        """Let go of column `name`'s parts in memory (of columns never spilled, read for the last time)."""
        self.parts[name] = []

    def take(self, name: str, dtype=None) -> np.ndarray:
        """Column `name` of columns never spilled, whole (as `dtype`: a narrower integer type where its
        values fit), its parts let go so that it is not held twice; the column is empty afterwards."""
        if self.files is not None:
            raise ValueError(f"column {name} is in a file: map it with arrays()")
        self._whole(name)
        parts, self.parts[name] = self.parts[name], []
        return join(parts, dtype if dtype is not None else self.dtypes[name])

    def arrays(self) -> dict[str, np.ndarray]:
        """Every column whole: concatenated in memory, or (once spilled) its file memory-mapped."""
        self._whole()
        if self.files is None:
            return {k: join(p, self.dtypes[k]) for k, p in self.parts.items()}
        self.spill()
        return {k: mapped(self.files[k], dt, self.length) for k, dt in self.dtypes.items()}

    def _whole(self, *names: str) -> None:
        for k in names or tuple(self.dtypes):
            if self.handed[k]:
                raise ValueError(f"column {k} was handed over: it is not held whole")

    def clear(self) -> None:
        self.parts = {k: [] for k in self.dtypes}
        if self.files is not None:
            for path in self.files.values():
                self.spill_dir.remove(path)
        self.files = None
        self.length = 0
        self.handed = {k: 0 for k in self.dtypes}
