"""The run's durable store: one Parquet directory per BFS level, a manifest, and the driver-side
index (fps, parent, action in BFS order) built at the end as memory-mapped .npy files.

Layout under the store directory:

    manifest.json                 model reference, partitions, one record per complete level
    levels/LLLLL/part=PPPPP/data.parquet   new states of level L in fingerprint partition P:
                                  fp, pfp (parent fp), action, state (packed row), flags
    edges/LLLLL/task-TTTTT.parquet  every edge out of level L that task T expanded (only with recoverable
                                  properties): src, dst, action, in row groups by target partition
                                  (dst mod P), whose sizes the footer lists (`write_edges_atomic`)
    cand/LLLLL/to=QQQQQ/from-TTTTT.cand  successor candidates for level L in partition Q, sent by
                                  task T (raw arrays, see CandidateWriter): the level's exchange, removed once the
                                  level is recorded; never trusted on resume (recomputed)
    index/{fps,parent,action}.npy   BFS-order arrays for the result (built by `build_index`)
    reach/                        scratch space of the reverse search for recoverable properties
                                  (reach.py), removed when it ends

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

SCHEMA_VERSION = 3    # 2: candidate exchange files, (part, fp) index order; 3: edges by target partition


def fs_and_path(uri: str):
    from pyarrow import fs as pafs
    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    return pafs.FileSystem.from_uri(uri)


def partition_keys(fps: np.ndarray, partitions: int) -> np.ndarray:
    """The fingerprint partition (fp mod P) of each fp, 16-bit where P allows, so that a stable argsort of
    them is numpy's radix sort."""
    return (fps % np.uint64(partitions)).astype(np.int16 if partitions < (1 << 15) else np.int64)


def level_dir(root: str, level: int) -> str:
    return f"{root}/levels/{level:05d}"


def part_file(root: str, level: int, part: int) -> str:
    return f"{level_dir(root, level)}/part={part:05d}/data.parquet"


def edges_dir(root: str, level: int) -> str:
    return f"{root}/edges/{level:05d}"


def cand_dir(root: str, level: int, part: int | None = None) -> str:
    d = f"{root}/cand/{level:05d}"
    return d if part is None else f"{d}/to={part:05d}"


_MAGIC = b"TXCC"


class CandidateWriter:
    """Candidates one task sends to one partition: a file of chunks, each a small header and
    the raw arrays fp (u64), pfp (u64), action (i32) and the states column-major (width x n),
    the kernel's own layout, so neither side transposes or re-encodes them. Written to a
    temporary name and moved into place by `close`."""

    def __init__(self, fs, base: str, level: int, part: int, task: int):
        d = cand_dir(base, level, part)
        fs.create_dir(d, recursive=True)
        self.fs, self.tmp, self.path = fs, f"{d}/.tmp-{uuid.uuid4().hex}", f"{d}/from-{task:05d}.cand"
        self.sink = fs.open_output_stream(self.tmp)
        self.nbytes = 0

    def write(self, fps: np.ndarray, pfps: np.ndarray, actions: np.ndarray, cols: np.ndarray) -> None:
        n, (w, m) = len(fps), cols.shape
        assert m == n
        dt = np.dtype(cols.dtype).str.encode().ljust(8)
        head = _MAGIC + b"\0" * 4 + np.array([n, w], dtype=np.int64).tobytes() + dt   # 32 bytes
        parts = [head, np.ascontiguousarray(fps, np.uint64), np.ascontiguousarray(pfps, np.uint64),
                 np.ascontiguousarray(actions, np.int32)]
        if n % 2:
            parts.append(b"\0" * 4)       # keep the states 8-byte aligned
        parts.append(np.ascontiguousarray(cols))
        if cols.nbytes % 8:
            parts.append(b"\0" * (8 - cols.nbytes % 8))   # every array stays 8-byte aligned
        for x in parts:
            self.sink.write(x if isinstance(x, bytes) else memoryview(x).cast("B"))
            self.nbytes += len(x) if isinstance(x, bytes) else x.nbytes

    def close(self) -> int:
        self.sink.close()
        _move(self.fs, self.tmp, self.path)
        return self.nbytes


class Candidates:
    """Every candidate sent to one partition: fps, pfps, actions (concatenated) and the
    states, kept as the files' column-major chunks; `states(sel)` gathers the selected ones."""

    def __init__(self, chunks: list, width: int, dtype):
        self.width, self.dtype = width, np.dtype(dtype)
        self.chunks = chunks                    # (offset, cols) per chunk
        if chunks:
            self.fps = np.concatenate([c[1] for c in chunks])
            self.pfps = np.concatenate([c[2] for c in chunks])
            self.actions = np.concatenate([c[3] for c in chunks])
        else:
            self.fps = self.pfps = np.zeros(0, np.uint64)
            self.actions = np.zeros(0, np.int32)
        self.offsets = np.cumsum([0] + [len(c[1]) for c in chunks])

    def __len__(self) -> int:
        return len(self.fps)

    def states(self, sel: np.ndarray) -> np.ndarray:
        """Column-major states (width x len(sel)) of candidates `sel`, in `sel` order."""
        out = np.empty((self.width, len(sel)), dtype=self.dtype)
        if len(self.chunks) == 1:
            np.take(self.chunks[0][4], sel, axis=1, out=out)
            return out
        which = np.searchsorted(self.offsets, sel, side="right") - 1
        for i in np.unique(which):
            m = np.flatnonzero(which == i)
            out[:, m] = self.chunks[i][4][:, sel[m] - self.offsets[i]]
        return out


def read_candidates(root: str, level: int, part: int, width: int, dtype) -> Candidates:
    """Every candidate sent to `part` for `level` (files in name order: deterministic)."""
    from pyarrow import fs as pafs
    fs, base = fs_and_path(root)
    d = cand_dir(base, level, part)
    chunks: list = []
    if fs.get_file_info(d).type != pafs.FileType.Directory:
        return Candidates(chunks, width, dtype)
    infos = sorted((i for i in fs.get_file_info(pafs.FileSelector(d)) if i.base_name.startswith("from-")),
                   key=lambda i: i.base_name)
    for info in infos:
        with fs.open_input_stream(info.path) as f:
            buf = f.read()
        pos = 0
        while pos < len(buf):
            if buf[pos:pos + 4] != _MAGIC:
                raise ValueError(f"{info.path}: not a candidate file")
            n, w = np.frombuffer(buf, np.int64, 2, pos + 8)
            n, w = int(n), int(w)
            dt = np.dtype(buf[pos + 24:pos + 32].rstrip().decode())
            pos += 32
            fps = np.frombuffer(buf, np.uint64, n, pos); pos += 8 * n
            pfps = np.frombuffer(buf, np.uint64, n, pos); pos += 8 * n
            acts = np.frombuffer(buf, np.int32, n, pos); pos += 4 * n + (4 if n % 2 else 0)
            cols = np.frombuffer(buf, dt, n * w, pos).reshape(w, n)
            pos += -(-n * w * dt.itemsize // 8) * 8
            chunks.append((None, fps, pfps, acts, cols))
    return Candidates(chunks, width, dtype)


def remove_candidates(root: str, level: int) -> None:
    fs, base = fs_and_path(root)
    try:
        fs.delete_dir(cand_dir(base, level))
    except (FileNotFoundError, OSError):
        pass


def read_part(root: str, level: int, part: int, columns):
    """One partition of one stored level (a table), or None when that partition got no state."""
    import pyarrow.parquet as pq
    fs, base = fs_and_path(root)
    try:
        # one thread: a task or the driver reads one small file at a time, and Arrow's thread pool
        # cannot start its threads in a driver whose memory is capped (threads need stacks)
        return pq.read_table(part_file(base, level, part), columns=list(columns), filesystem=fs,
                             use_threads=False)
    except (FileNotFoundError, OSError):
        return None


def level_table(fps: np.ndarray, pfps: np.ndarray, actions: np.ndarray, states: np.ndarray,
                flags: np.ndarray | None, cols: np.ndarray | None = None):
    """A level's rows: fp, pfp, action, state (one binary value per state, row-major), flags.
    `cols`: the states column-major instead (transposed here)."""
    import pyarrow as pa
    if cols is not None:
        states = _rows(cols)
    n = len(fps)
    width = states.shape[1] * states.dtype.itemsize if states.ndim == 2 else 0
    raw = np.ascontiguousarray(states).view(np.uint8).reshape(-1)
    offsets = (np.arange(n + 1, dtype=np.int32) * width)
    st = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw)])
    cols = {"fp": _prim(pa.int64(), fps.view(np.int64)), "pfp": _prim(pa.int64(), pfps.view(np.int64)),
            "action": _prim(pa.int32(), actions.astype(np.int32, copy=False)), "state": st}
    if flags is not None:
        fw = flags.shape[1]
        fo = np.arange(n + 1, dtype=np.int32) * fw
        cols["flags"] = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(fo),
                                                               pa.py_buffer(np.ascontiguousarray(flags).reshape(-1))])
    return pa.table(cols)


def _rows(cols: np.ndarray, block: int = 256) -> np.ndarray:
    """Row-major copy of a column-major state matrix, in blocks of `block` states that stay in
    cache (faster than numpy's transposed copy for wide states)."""
    w, n = cols.shape
    out = np.empty((n, w), dtype=cols.dtype)
    for j in range(0, n, block):
        out[j:j + block] = cols[:, j:j + block].T
    return out


def _prim(typ, a: np.ndarray):
    """A primitive Arrow array over the numpy buffer (no copy, no null scan)."""
    import pyarrow as pa
    a = np.ascontiguousarray(a)
    return pa.Array.from_buffers(typ, len(a), [None, pa.py_buffer(a)])


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
    if n == 0:
        return np.zeros((0, width), dtype=dtype)
    if col.type == pa.large_binary():
        off = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset: col.offset + n + 1]
    else:
        off = np.frombuffer(col.buffers()[1], dtype=np.int32)[col.offset: col.offset + n + 1]
    data = np.frombuffer(col.buffers()[2], dtype=np.uint8)[off[0]: off[-1]]
    return data.view(dtype).reshape(n, width)


def write_table_atomic(table, path: str, fs=None) -> int:
    """Write `table` as Parquet at `path` via a temporary file and a rename; returns its size."""
    import pyarrow.parquet as pq
    if fs is None:
        fs, path = fs_and_path(path)
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}.parquet"
    # lz4 without dictionaries or statistics (the values are unique): about 7x faster to write
    # than the defaults with zstd, for 10-20% more bytes
    pq.write_table(table, tmp, filesystem=fs, compression="lz4", write_statistics=False,
                   use_dictionary=["action"] if "action" in table.column_names else False)
    size = fs.get_file_info(tmp).size or 0
    _move(fs, tmp, path)
    return int(size)


EDGE_PARTS = b"txncheck.edge_parts"     # footer key: the edges into each target partition, in file order


def write_edges_atomic(table, counts: np.ndarray, path: str, fs) -> int:
    """Write the edges `table` (src, dst, action), ordered by target partition with `counts[q]` edges
    into partition q, as Parquet at `path` with each partition's edges in row groups of their own,
    so that the reverse search reads a partition's in-edges alone (`read_edges_into`)."""
    import pyarrow.parquet as pq
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}.parquet"
    table = table.replace_schema_metadata({EDGE_PARTS: json.dumps([int(c) for c in counts]).encode()})
    bounds = np.r_[0, np.cumsum(counts)]
    with fs.open_output_stream(tmp) as out:
        with pq.ParquetWriter(out, table.schema, compression="lz4", write_statistics=False,
                              use_dictionary=["action"]) as w:
            for q in np.flatnonzero(counts):   # a write never shares a row group with the one before
                lo, hi = int(bounds[q]), int(bounds[q + 1])
                w.write_table(table.slice(lo, hi - lo), row_group_size=hi - lo)
    size = fs.get_file_info(tmp).size or 0
    _move(fs, tmp, path)
    return int(size)


def read_edges_into(fs, path: str, part: int, columns=("src", "dst", "action")):
    """The edges of the edges file `path` (`write_edges_atomic`) into target partition `part`, as a table,
    or None where it holds none. Raises ValueError where the footer does not describe the row groups."""
    import pyarrow.parquet as pq
    with fs.open_input_file(path) as f:
        pf = pq.ParquetFile(f)
        meta = pf.metadata
        listed = (meta.metadata or {}).get(EDGE_PARTS)
        if listed is None:
            raise ValueError("its footer lists no target partitions")
        counts = json.loads(listed)
        if not 0 <= part < len(counts):
            raise ValueError(f"it lists {len(counts)} target partitions, not partition {part}")
        if not counts[part]:
            return None
        lo = sum(counts[:part])
        hi, at, groups = lo + counts[part], 0, []
        for i in range(meta.num_row_groups):
            n = meta.row_group(i).num_rows
            if lo <= at and at + n <= hi:
                groups.append(i)
            elif at < hi and at + n > lo:
                raise ValueError(f"row group {i} mixes the edges of target partition {part} with others")
            at += n
        if at != sum(counts) or sum(meta.row_group(i).num_rows for i in groups) != counts[part]:
            raise ValueError(f"its row groups hold {at} edges, its footer lists {sum(counts)}")
        return pf.read_row_groups(groups, columns=list(columns), use_threads=False)


def write_bytes_atomic(fs, path: str, data: bytes) -> int:
    """Write `data` at `path` (a path of `fs`) via a temporary file and a rename; returns its size."""
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}"
    with fs.open_output_stream(tmp) as f:
        f.write(data)
    _move(fs, tmp, path)
    return len(data)


def remove_dir(root: str, path: str) -> None:
    """Remove directory `path` (a path of the store `root`'s filesystem) if it is there."""
    fs, _ = fs_and_path(root)
    try:
        fs.delete_dir(path)
    except (FileNotFoundError, OSError):
        pass


def _move(fs, tmp: str, path: str) -> None:
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
            t = pq.read_table(p, columns=["fp"], filesystem=fs, use_threads=False)
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
        from .session import SparkEngineError
        try:
            with self.fs.open_input_stream(self.path) as f:
                self.data = json.loads(f.read().decode())
        except (OSError, ValueError) as exc:
            raise SparkEngineError(f"{self.root}: unreadable manifest.json ({exc}); run without --resume "
                                   "to start over") from None
        if isinstance(self.data, dict) and self.data.get("engine") not in (None, "spark"):
            raise SparkEngineError(f"{self.root} holds the checkpoint of a {self.data['engine']} engine run; resume "
                                   f"it with --engine {self.data['engine']}")
        if not isinstance(self.data, dict) or self.data.get("version") != SCHEMA_VERSION:
            raise SparkEngineError(f"{self.root} was written by another version of txncheck's Spark store "
                                   f"(version {self.data.get('version') if isinstance(self.data, dict) else None}, this "
                                   f"one reads {SCHEMA_VERSION}); run without --resume to start over")
        for key in ("search", "partitions", "records"):
            if key not in self.data:
                raise SparkEngineError(f"{self.root}: manifest.json has no '{key}'; run without --resume "
                                       "to start over")
        return self.data

    def save(self) -> None:
        self.fs.create_dir(self.base, recursive=True)
        if "://" not in self.root:  # a local store: durable across a power cut too, as the vector engine's
            from txncheck.checker.checkpoint import write_json_durable
            write_json_durable(self.path, self.data)
            return
        tmp = f"{self.base}/.manifest-{uuid.uuid4().hex}.json"
        with self.fs.open_output_stream(tmp) as f:
            f.write(json.dumps(self.data, indent=1).encode())
        self.fs.move(tmp, self.path)

    def clear_levels_from(self, level: int, edges_level: int | None = None) -> None:
        """Remove level directories >= level, edge directories >= edges_level (left by a
        killed run) and every candidate directory."""
        from pyarrow import fs as pafs
        for sub, first in (("levels", level), ("edges", level if edges_level is None else edges_level),
                           ("cand", 0)):
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


def build_index(root: str, level_sizes: list[int], partitions: int, recoverable: list[str] | None = None):
    """BFS-order arrays as memory-mapped .npy files: fps (uint64), parent (int64 index), action
    (int32); plus goal/when masks for recoverable properties (bit 2i: goal, 2i+1: when, in the
    `flags` column). Within a level, states are ordered by (fp mod partitions, fp): partition by
    partition, each as stored (ascending fp). Returns them and `seg`, the first index of every
    (level, partition) segment (levels x partitions+1). Only one stored partition file is in
    memory at a time: parents are found by binary search in the previous level's segments of
    the memory-mapped fps, so the driver never holds a level, let alone the visited set."""
    n = int(sum(level_sizes))
    idx = _local_index_dir(root)
    os.makedirs(idx, exist_ok=True)
    fps = np.lib.format.open_memmap(f"{idx}/fps.npy", "w+", np.uint64, (n,))
    parent = np.lib.format.open_memmap(f"{idx}/parent.npy", "w+", np.int64, (n,))
    action = np.lib.format.open_memmap(f"{idx}/action.npy", "w+", np.int32, (n,))
    recoverable = recoverable or []
    masks = {name: (np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)) for name in recoverable}
    seg = np.zeros((len(level_sizes), partitions + 1), dtype=np.int64)
    cols = ["fp", "pfp", "action"] + (["flags"] if recoverable else [])
    P = np.uint64(partitions)
    off = 0
    for lv, size in enumerate(level_sizes):
        first = off
        for p in range(partitions):
            seg[lv, p] = off
            t = read_part(root, lv, p, cols)
            if t is None or t.num_rows == 0:
                continue
            f = t.column("fp").to_numpy().view(np.uint64)
            k = len(f)
            order = None
            if k > 1 and not bool(np.all(f[1:] > f[:-1])):
                order = np.argsort(f, kind="stable")
                f = f[order]
            fps[off: off + k] = f
            if lv == 0:
                parent[off: off + k] = -1
                action[off: off + k] = -1
            else:
                pf = t.column("pfp").to_numpy().view(np.uint64)
                ac = t.column("action").to_numpy()
                if order is not None:
                    pf, ac = pf[order], ac[order]
                q = (pf % P).astype(np.int64)
                par = np.empty(k, dtype=np.int64)
                for qq in np.unique(q):
                    m = q == qq
                    lo, hi = int(seg[lv - 1, qq]), int(seg[lv - 1, qq + 1])
                    par[m] = lo + np.searchsorted(fps[lo:hi], pf[m])
                parent[off: off + k] = par
                action[off: off + k] = ac
            if recoverable:
                fl = binary_matrix(t.column("flags"), flag_width(len(recoverable)), np.uint8)
                bits = np.unpackbits(fl, axis=1, count=2 * len(recoverable)).astype(bool)
                if order is not None:
                    bits = bits[order]
                for i, name in enumerate(recoverable):
                    masks[name][0][off: off + k] = bits[:, 2 * i]
                    masks[name][1][off: off + k] = bits[:, 2 * i + 1]
            off += k
            del t
        seg[lv, partitions] = off
        if off - first != size:
            from .session import SparkEngineError
            raise SparkEngineError(f"store {root}: level {lv} holds {off - first} states, the manifest says {size}")
    fps.flush(); parent.flush(); action.flush()
    del fps, parent, action
    out = (np.load(f"{idx}/fps.npy", mmap_mode="r"), np.load(f"{idx}/parent.npy", mmap_mode="r"),
           np.load(f"{idx}/action.npy", mmap_mode="r"))
    return out, masks, seg


def flag_width(n_recoverable: int) -> int:
    return max(1, (2 * n_recoverable + 7) // 8)


def _local_index_dir(root: str) -> str:
    if "://" in root and not root.startswith("file://"):
        import tempfile
        return tempfile.mkdtemp(prefix="txncheck-index-")
    return os.path.join(fs_and_path(root)[1], "index")


def iter_edges(root: str, max_level: int):
    """(level, src fp, dst fp, action) of the stored edges out of each level < max_level, a record
    batch at a time (a level may come in several), read on one thread as `read_part` reads."""
    import pyarrow.dataset as ds
    from pyarrow import fs as pafs
    fs, base = fs_and_path(root)
    for lv in range(max_level):
        d = edges_dir(base, lv)
        if fs.get_file_info(d).type != pafs.FileType.Directory:
            continue
        data = ds.dataset(d, filesystem=fs, format="parquet")
        for b in data.to_batches(columns=["src", "dst", "action"], use_threads=False):
            if b.num_rows:
                yield lv, (b.column("src").to_numpy().view(np.uint64), b.column("dst").to_numpy().view(np.uint64),
                           b.column("action").to_numpy().astype(np.int32))
