"""The run's durable store: one Parquet directory per BFS level, a manifest, and the driver-side
index (fps, parent, action in BFS order) built at the end as memory-mapped .npy files.

Layout under the store directory:

    manifest.json                 model reference, partitions, one record per complete level
    levels/LLLLL/part=PPPPP/data.parquet   new states of level L in fingerprint partition P:
                                  fp, pfp (parent fp), action, state (packed row), flags
    edges/LLLLL/task-TTTTT.parquet  every edge out of level L (only with recoverable properties)
    index/{fps,parent,action}.npy   BFS-order arrays for the result (built by `build_index`)

Fingerprints are uint64 stored as int64 (same bits). A level directory is trusted only once its
record is in the manifest; the manifest is replaced atomically after the level's job succeeded,
so a run killed at any moment resumes from its last recorded level.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid

import numpy as np

SCHEMA_VERSION = 1


def fs_and_path(uri: str):
    from pyarrow import fs as pafs
    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    return pafs.FileSystem.from_uri(uri)


def level_dir(root: str, level: int) -> str:
    return f"{root}/levels/{level:05d}"


def part_file(root: str, level: int, part: int) -> str:
    return f"{level_dir(root, level)}/part={part:05d}/data.parquet"


def edges_dir(root: str, level: int) -> str:
    return f"{root}/edges/{level:05d}"


def level_table(fps: np.ndarray, pfps: np.ndarray, actions: np.ndarray, states: np.ndarray,
                flags: np.ndarray | None):
    import pyarrow as pa
    n = len(fps)
    width = states.shape[1] * states.dtype.itemsize if states.ndim == 2 else 0
    raw = np.ascontiguousarray(states).view(np.uint8).reshape(-1)
    offsets = (np.arange(n + 1, dtype=np.int32) * width)
    st = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw)])
    cols = {"fp": pa.array(fps.view(np.int64)), "pfp": pa.array(pfps.view(np.int64)),
            "action": pa.array(actions.astype(np.int32)), "state": st}
    if flags is not None:
        fw = flags.shape[1]
        fo = np.arange(n + 1, dtype=np.int32) * fw
        cols["flags"] = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(fo),
                                                               pa.py_buffer(np.ascontiguousarray(flags).reshape(-1))])
    return pa.table(cols)


def binary_matrix(col, width: int, dtype) -> np.ndarray:
    """A binary Arrow column of equal-length values as an (n, width) matrix of `dtype`."""
    import pyarrow as pa
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 0:
            return np.zeros((0, width), dtype=dtype)
        if col.num_chunks > 1:
            return np.concatenate([binary_matrix(c, width, dtype) for c in col.chunks])
        col = col.chunk(0)
    n = len(col)
    itemsize = np.dtype(dtype).itemsize
    if n == 0:
        return np.zeros((0, width), dtype=dtype)
    if col.type == pa.large_binary():
        off = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset: col.offset + n + 1]
    else:
        off = np.frombuffer(col.buffers()[1], dtype=np.int32)[col.offset: col.offset + n + 1]
    data = np.frombuffer(col.buffers()[2], dtype=np.uint8)[off[0]: off[-1]]
    return data.view(dtype).reshape(n, width)


def write_table_atomic(table, path: str, fs=None) -> None:
    import pyarrow.parquet as pq
    if fs is None:
        fs, path = fs_and_path(path)
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}.parquet"
    pq.write_table(table, tmp, filesystem=fs, compression="zstd")
    try:
        fs.move(tmp, path)
    except OSError:
        fs.delete_file(path)
        fs.move(tmp, path)


def read_fps(root: str, levels, part: int) -> np.ndarray:
    """uint64 fingerprints of partition `part` in the given levels."""
    import pyarrow.parquet as pq
    fs, base = fs_and_path(root)
    out = []
    for lv in levels:
        p = part_file(base, lv, part)
        try:
            t = pq.read_table(p, columns=["fp"], filesystem=fs)
        except (FileNotFoundError, OSError):
            continue
        out.append(t.column("fp").to_numpy().view(np.uint64))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.uint64)


class Manifest:
    def __init__(self, root: str):
        self.root = root
        self.fs, self.base = fs_and_path(root)
        self.data: dict = {}

    @property
    def path(self) -> str:
        return f"{self.base}/manifest.json"

    def exists(self) -> bool:
        from pyarrow import fs as pafs
        return self.fs.get_file_info(self.path).type == pafs.FileType.File

    def load(self) -> dict:
        with self.fs.open_input_stream(self.path) as f:
            self.data = json.loads(f.read().decode())
        if self.data.get("version") != SCHEMA_VERSION:
            from .session import SparkEngineError
            raise SparkEngineError(f"{self.root} was written by another store version")
        return self.data

    def save(self) -> None:
        self.fs.create_dir(self.base, recursive=True)
        tmp = f"{self.base}/.manifest-{uuid.uuid4().hex}.json"
        with self.fs.open_output_stream(tmp) as f:
            f.write(json.dumps(self.data, indent=1).encode())
        self.fs.move(tmp, self.path)

    def clear_levels_from(self, level: int, edges_level: int | None = None) -> None:
        """Remove level directories >= level and edge directories >= edges_level (left by a
        killed run)."""
        from pyarrow import fs as pafs
        for sub, first in (("levels", level), ("edges", level if edges_level is None else edges_level)):
            d = f"{self.base}/{sub}"
            if self.fs.get_file_info(d).type != pafs.FileType.Directory:
                continue
            for info in self.fs.get_file_info(pafs.FileSelector(d)):
                try:
                    lv = int(info.base_name)
                except ValueError:
                    continue
                if lv >= first:
                    self.fs.delete_dir(info.path)


def remove_store(root: str) -> None:
    fs, base = fs_and_path(root)
    try:
        fs.delete_dir(base)
    except (FileNotFoundError, OSError):
        shutil.rmtree(base, ignore_errors=True)


def read_level(root: str, level: int, columns) -> "object":
    import pyarrow.dataset as ds
    fs, base = fs_and_path(root)
    d = level_dir(base, level)
    dataset = ds.dataset(d, filesystem=fs, format="parquet", partitioning="hive")
    return dataset.to_table(columns=list(columns))


def build_index(root: str, level_sizes: list[int], recoverable: list[str] | None = None):
    """BFS-order arrays, each level sorted by unsigned fingerprint, as memory-mapped .npy files:
    fps (uint64), parent (int64 index), action (int32); plus goal/when masks for recoverable
    properties (bit 2i: goal, 2i+1: when, in the `flags` column). Only one level is in memory
    at a time (plus the previous level's fingerprints)."""
    fs, base = fs_and_path(root)
    n = int(sum(level_sizes))
    idx = _local_index_dir(root)
    os.makedirs(idx, exist_ok=True)
    fps = np.lib.format.open_memmap(f"{idx}/fps.npy", "w+", np.uint64, (n,))
    parent = np.lib.format.open_memmap(f"{idx}/parent.npy", "w+", np.int64, (n,))
    action = np.lib.format.open_memmap(f"{idx}/action.npy", "w+", np.int32, (n,))
    recoverable = recoverable or []
    masks = {name: (np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)) for name in recoverable}
    off = 0
    prev_sorted = None
    prev_off = 0
    for lv, size in enumerate(level_sizes):
        cols = ["fp", "pfp", "action"] + (["flags"] if recoverable else [])
        t = read_level(root, lv, cols)
        f = t.column("fp").to_numpy().view(np.uint64)
        if len(f) != size:
            from .session import SparkEngineError
            raise SparkEngineError(f"store {root}: level {lv} holds {len(f)} states, the manifest says {size}")
        order = np.argsort(f, kind="stable")
        fs_sorted = f[order]
        fps[off: off + size] = fs_sorted
        if lv == 0:
            parent[off: off + size] = -1
            action[off: off + size] = -1
        else:
            pf = t.column("pfp").to_numpy().view(np.uint64)[order]
            parent[off: off + size] = prev_off + np.searchsorted(prev_sorted, pf)
            action[off: off + size] = t.column("action").to_numpy()[order]
        if recoverable:
            fl = binary_matrix(t.column("flags"), _flag_width(len(recoverable)), np.uint8)
            bits = np.unpackbits(fl, axis=1, count=2 * len(recoverable))[order].astype(bool)
            for i, name in enumerate(recoverable):
                masks[name][0][off: off + size] = bits[:, 2 * i]
                masks[name][1][off: off + size] = bits[:, 2 * i + 1]
        prev_sorted, prev_off = fs_sorted, off
        off += size
    fps.flush(); parent.flush(); action.flush()
    del fps, parent, action
    out = (np.load(f"{idx}/fps.npy", mmap_mode="r"), np.load(f"{idx}/parent.npy", mmap_mode="r"),
           np.load(f"{idx}/action.npy", mmap_mode="r"))
    return out, masks


def _flag_width(n_recoverable: int) -> int:
    return max(1, (2 * n_recoverable + 7) // 8)


def _local_index_dir(root: str) -> str:
    if "://" in root and not root.startswith("file://"):
        import tempfile
        return tempfile.mkdtemp(prefix="txncheck-index-")
    return os.path.join(fs_and_path(root)[1], "index")


def read_edges(root: str, max_level: int, allowed: np.ndarray | None = None):
    """(src fp, dst fp, action) of every stored edge out of levels < max_level."""
    import pyarrow.dataset as ds
    from pyarrow import fs as pafs
    fs, base = fs_and_path(root)
    srcs, dsts, acts = [], [], []
    for lv in range(max_level):
        d = edges_dir(base, lv)
        if fs.get_file_info(d).type != pafs.FileType.Directory:
            continue
        t = ds.dataset(d, filesystem=fs, format="parquet").to_table()
        srcs.append(t.column("src").to_numpy().view(np.uint64))
        dsts.append(t.column("dst").to_numpy().view(np.uint64))
        acts.append(t.column("action").to_numpy().astype(np.int32))
    if not srcs:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.int32)
    return np.concatenate(srcs), np.concatenate(dsts), np.concatenate(acts)
