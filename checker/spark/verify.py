"""The driver's checks that nothing was lost between it and the executors, after every job.

Every task reports what it read and wrote per fingerprint partition; the driver compares that
with what it recorded and with what it can read itself. A store that is not one shared place
(a relative --out, which each executor resolves against its own working directory; a local
path on a multi-machine cluster; a filesystem that lost a file) otherwise loses states without
any error: missing files read as empty partitions, and the search ends early with a confident,
wrong verdict. So any difference is an error, never a verdict:

- the executors read as many states of the expanded level as the driver recorded (EXPAND);
- each partition receives every candidate the other tasks sent it (STEP, COUNT): this is what
  catches executors that do not share the store with each other;
- each partition's visited fingerprints, as read by its task, number what the driver recorded
  for levels 0..L (STEP, COUNT);
- every new state an executor wrote is readable from the driver, file by file (Parquet footers
  only: a few bytes per file), and so are the edges.
"""
from __future__ import annotations

import numpy as np

from . import storage
from .session import SparkEngineError

FIX = ("give --out a path on a filesystem shared by the driver and every executor, at the same "
       "absolute path everywhere (or an hdfs:// or s3:// URI)")


class StoreNotShared(SparkEngineError):
    """The driver and the executors (or the executors among themselves) do not see the same store."""


def _parts(counts: dict, partitions: int) -> np.ndarray:
    out = np.zeros(partitions, dtype=np.int64)
    for p, n in counts.items():
        out[int(p)] = int(n)
    return out


def _states(n) -> str:
    return f"{int(n):,} state" + ("" if int(n) == 1 else "s")


def _diff(expected: np.ndarray, got: np.ndarray) -> str:
    bad = np.flatnonzero(expected != got)
    shown = ", ".join(f"partition {p}: {int(expected[p]):,} expected, {int(got[p]):,} found" for p in bad[:4])
    return shown + (f" and {len(bad) - 4} more partitions" if len(bad) > 4 else "")


def stored_rows(root: str, level: int, partitions: int) -> np.ndarray:
    """Rows of every partition file of a stored level as the driver reads them (0 when absent)."""
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs
    fs, base = storage.fs_and_path(root)
    out = np.zeros(partitions, dtype=np.int64)
    d = storage.level_dir(base, level)
    if fs.get_file_info(d).type != pafs.FileType.Directory:
        return out
    for p in range(partitions):
        path = storage.part_file(base, level, p)
        if fs.get_file_info(path).type != pafs.FileType.File:
            continue
        try:
            out[p] = pq.read_metadata(path, filesystem=fs).num_rows
        except (OSError, ValueError) as exc:
            raise StoreNotShared(f"{path} is unreadable from the driver ({exc}); {FIX}") from None
    return out


def edge_rows(root: str, level: int) -> int:
    """Rows of the stored edges out of `level`, as the driver reads them."""
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs
    fs, base = storage.fs_and_path(root)
    d = storage.edges_dir(base, level)
    if fs.get_file_info(d).type != pafs.FileType.Directory:
        return 0
    n = 0
    for info in fs.get_file_info(pafs.FileSelector(d)):
        if info.base_name.startswith("task-") and info.base_name.endswith(".parquet"):
            try:
                n += pq.read_metadata(info.path, filesystem=fs).num_rows
            except (OSError, ValueError) as exc:
                raise StoreNotShared(f"{info.path} is unreadable from the driver ({exc}); {FIX}") from None
    return n


class Ledger:
    """What the driver knows of the store: states per (level, partition), the visited count per
    partition, and the candidates the last job sent to each partition."""

    def __init__(self, root: str, partitions: int):
        self.root, self.partitions = root, partitions
        self.levels: list[np.ndarray] = []
        self.visited = np.zeros(partitions, dtype=np.int64)
        self.sent: np.ndarray | None = None      # None: the next job reads no candidates we know of

    def add_level(self, parts) -> None:
        parts = np.asarray(parts, dtype=np.int64)
        self.levels.append(parts)
        self.visited += parts

    def load(self, records: list[dict], n_levels: int) -> None:
        """The stored levels of a resumed run, each checked against what the driver reads."""
        for lv in range(n_levels):
            rows = stored_rows(self.root, lv, self.partitions)
            rec = records[lv]
            if "parts" in rec:           # stores written before per-partition counts were recorded have none
                want = np.asarray(rec["parts"], dtype=np.int64)
                if not np.array_equal(want, rows):
                    raise StoreNotShared(f"--resume {self.root}: level {lv} is not all there from the driver "
                                         f"({_diff(want, rows)}); run without --resume to start over, and {FIX}")
            if int(rows.sum()) != int(rec["new"]):
                raise StoreNotShared(f"--resume {self.root}: level {lv} holds {_states(rows.sum())} from the "
                                     f"driver, the manifest says {int(rec['new']):,}; run without --resume to "
                                     f"start over, and {FIX}")
            self.add_level(rows)

    def check(self, got: dict, level: int, mode: str) -> list[int] | None:
        """Check one merged job report (see `_merge`) of the job run with frontier `level`; returns
        the new level's per-partition counts as the driver reads them (STEP), else None."""
        from .worker import COUNT, EXPAND, STEP
        P = self.partitions
        seen = _parts(got["seen"], P)
        if mode == EXPAND:
            want = self.levels[level]
            if not np.array_equal(seen, want):
                raise StoreNotShared(
                    f"the Spark executors could not read level {level} of the store at {self.root} that the driver "
                    f"recorded ({_states(want.sum())}; the executors read {int(seen.sum()):,}: "
                    f"{_diff(want, seen)}): {FIX}")
        else:
            if self.sent is not None and not np.array_equal(seen, self.sent):
                raise StoreNotShared(
                    f"the Spark executors lost candidates of level {level + 1} between tasks in the store at "
                    f"{self.root} ({int(self.sent.sum()):,} sent, {int(seen.sum()):,} received: "
                    f"{_diff(self.sent, seen)}); the executors do not all see the same store: {FIX}")
            vis = _parts(got["vis"], P)
            if not np.array_equal(vis, self.visited):
                raise StoreNotShared(
                    f"the Spark executors could not read levels 0..{level} of the store at {self.root} "
                    f"({_states(self.visited.sum())} recorded, {int(vis.sum()):,} read: "
                    f"{_diff(self.visited, vis)}): {FIX}")
        self.sent = None if got.get("sent") is None else np.asarray(got["sent"], dtype=np.int64)
        if got.get("edge_rows") is not None:
            lv = level if mode == EXPAND else level + 1
            have = edge_rows(self.root, lv)
            if have != got["edge_rows"]:
                raise StoreNotShared(
                    f"the Spark executors wrote the edges out of level {lv} where the driver cannot read them "
                    f"({self.root}: {got['edge_rows']:,} edges written, {have:,} readable from the driver): {FIX}")
        if mode != STEP:
            assert mode in (EXPAND, COUNT)
            return None
        wrote = _parts(got["wrote"], P)
        rows = stored_rows(self.root, level + 1, P)
        if not np.array_equal(wrote, rows) or int(wrote.sum()) != int(got["new"]):
            raise StoreNotShared(
                f"the Spark executors wrote level {level + 1} of the store where the driver cannot read it "
                f"({self.root}: they wrote {_states(got['new'])}, the driver finds {int(rows.sum()):,}: "
                f"{_diff(wrote, rows)}): {FIX}")
        return rows.tolist()
