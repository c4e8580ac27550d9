"""The vector engine's checkpoint: one file per completed level and a manifest that names them.

Layout of `--checkpoint DIR`:

    manifest.json      the search it belongs to (`header`: format, txncheck version, model request,
                       ground-model digest, search key) and one record per completed expansion, in order
    level-LLLLL.bin    the arrays of record L, each 8-byte aligned at the offset its record gives:
                       the new states' fps (sorted), parent (global index) and action; the goal/when
                       masks of the properties judged on the state graph; the expansion's edges (src
                       index, dst fp, action); the cumulative fired counts

Record 0 is the initial level; record L >= 1 is the expansion of level L-1 (its new states, or at
the depth limit only whether there were any). A level file is written and made durable before the
manifest that names it, and the manifest is replaced atomically (`checker/checkpoint.py`), so a run
killed at any moment leaves the manifest of its last complete level; files it names nothing of are
removed on resume. Each record carries its file's size and CRC-32: a file that does not match is
refused, never read as states. Frontier states are not stored: a resumed run rebuilds them from the
records (each level from the one before, by its parent links and actions) and checks their
fingerprints against the stored ones, which also proves the model is the one that wrote them.
"""
from __future__ import annotations

import errno
import json
import os
import re
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..checkpoint import (MANIFEST, TMP_PREFIX, CheckpointError, Checkpointing, refuse_existing, refuse_other,
                          write_json_durable)
from ..durable import Replacement, fsync_dir

FORMAT = "txncheck.vector-checkpoint/1"
_LEVEL = re.compile(r"level-(\d{5,})\.bin$")
_ALIGN = 8


def level_name(index: int) -> str:
    return f"level-{index:05d}.bin"


class LevelLog:
    """An open checkpoint: the records found there (on resume) and the writer of the next ones."""

    def __init__(self, directory: str, header: dict, records: list[dict]):
        self.directory = directory
        self.header = header
        self.records = records
        self.bytes = sum(int(r["bytes"]) for r in records)
        self._next = len(records)  # the index of the next record appended
        self._pool = None
        self._pending = None

    # -- opening -------------------------------------------------------------------------------------
    @staticmethod
    def open(settings: Checkpointing, header: dict) -> "LevelLog":
        """A new checkpoint in an empty `settings.directory`, or (resume) the one there, checked against
        `header` (the search about to run)."""
        d = os.path.abspath(settings.directory)
        if not settings.resume:
            refuse_existing(d)
            return LevelLog._create(d, header)
        if not os.path.isdir(d):
            raise CheckpointError(f"--resume {settings.directory}: no such directory; give the directory a killed "
                                  "run was writing with --checkpoint")
        path = os.path.join(d, MANIFEST)
        if not os.path.exists(path):
            ours = [e for e in os.listdir(d) if e.startswith(TMP_PREFIX) or _LEVEL.match(e)]
            if len(ours) == len(os.listdir(d)):  # killed before its first level was recorded: nothing to keep
                _remove(d, ours)
                return LevelLog._create(d, header)
            raise CheckpointError(f"--resume {settings.directory}: no vector checkpoint there (no {MANIFEST}); give "
                                  "the directory a killed run was writing with --checkpoint")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as err:
            raise CheckpointError(f"--resume {settings.directory}: unreadable {MANIFEST} ({err}); remove the "
                                  "directory to start over") from None
        engine = data.get("engine") if isinstance(data, dict) else None
        if engine not in (None, "vector"):
            raise CheckpointError(f"--resume {settings.directory}: the checkpoint of a {engine} engine run; resume "
                                  f"it with --engine {engine}")
        if not isinstance(data, dict) or not isinstance(data.get("header"), dict) \
                or not isinstance(data.get("records"), list):
            raise CheckpointError(f"--resume {settings.directory}: {MANIFEST} is not a vector engine checkpoint; "
                                  "give the directory a vector run was writing with --checkpoint")
        stored = data["header"]
        if stored.get("format") != FORMAT:
            raise CheckpointError(f"--resume {settings.directory}: a checkpoint of format {stored.get('format')}, "
                                  f"not {FORMAT}; resume it with the txncheck that wrote it, or start over")
        refuse_other(f"--resume {settings.directory}: that checkpoint", stored, header)
        records = data["records"]
        keep = {r["file"] for r in records}
        _remove(d, [e for e in os.listdir(d) if (e.startswith(TMP_PREFIX) or _LEVEL.match(e)) and e not in keep])
        return LevelLog(d, header, records)

    @staticmethod
    def _create(d: str, header: dict) -> "LevelLog":
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as err:
            raise CheckpointError(f"--checkpoint {d}: cannot create it ({err.strerror}); give a directory you "
                                  "can write to") from None
        log = LevelLog(d, header, [])
        try:
            log._save()
        except OSError as err:
            raise CheckpointError(f"--checkpoint {d}: cannot write there ({err.strerror}); give a directory you "
                                  "can write to") from None
        return log

    # -- reading -------------------------------------------------------------------------------------
    def read(self, rec: dict) -> dict[str, np.ndarray]:
        """The arrays of one record, after checking its file's size and CRC-32."""
        path = os.path.join(self.directory, rec["file"])
        where = f"checkpoint {self.directory}: {rec['file']} (level {rec['level']})"
        try:
            with open(path, "rb") as f:
                buf = bytearray(f.read())
        except OSError as err:
            raise CheckpointError(f"{where} cannot be read ({err.strerror}); remove the directory to start "
                                  "over") from None
        if len(buf) != int(rec["bytes"]) or zlib.crc32(buf) != int(rec["crc32"]):
            raise CheckpointError(f"{where} is damaged ({len(buf):,} bytes, {rec['bytes']:,} recorded, or a "
                                  "checksum that differs); remove the directory to start over")
        out = {}
        for name, dtype, n, offset in rec["arrays"]:
            # a copy each: a view would keep the whole file's buffer alive for as long as any one array
            out[name] = np.frombuffer(buf, dtype=np.dtype(dtype), count=int(n), offset=int(offset)).copy()
        return out

    # -- writing -------------------------------------------------------------------------------------
    def append(self, fields: dict, arrays: dict[str, np.ndarray]) -> None:
        """Record the next expansion. A background thread writes it while the search expands the next
        level, one level at a time (this waits for the one before): its level file made durable first,
        then the manifest naming it. The caller must not change `arrays` afterwards."""
        self.wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="txncheck-checkpoint")
        index, self._next = self._next, self._next + 1
        self._pending = self._pool.submit(self._write, index, fields, arrays)

    def wait(self) -> None:
        """Block until the level in flight is recorded; its write's error is raised here."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        """Let the level in flight finish (an error there is for `wait` to report) and stop the writer."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.exception()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _write(self, index: int, fields: dict, arrays: dict[str, np.ndarray]) -> None:
        name = level_name(index)
        path = os.path.join(self.directory, name)
        tmp = os.path.join(self.directory, f"{TMP_PREFIX}{name}")
        table, offset, crc = [], 0, 0
        need = sum(-(-np.asarray(a).nbytes // _ALIGN) * _ALIGN for a in arrays.values())
        try:
            with Replacement(path, tmp) as f:
                for key in sorted(arrays):
                    a = np.ascontiguousarray(arrays[key])
                    if a.dtype == np.bool_:
                        a = a.view(np.uint8)
                        dt = "|b1"
                    else:
                        dt = a.dtype.str
                    data = memoryview(a).cast("B")
                    pad = (-len(data)) % _ALIGN
                    f.write(data)
                    crc = zlib.crc32(data, crc)
                    if pad:
                        f.write(b"\0" * pad)
                        crc = zlib.crc32(b"\0" * pad, crc)
                    table.append([key, dt, int(a.shape[0]), offset])
                    offset += len(data) + pad
            fsync_dir(self.directory)  # the level's name is durable before the manifest that names it
            rec = {"level": index, **fields, "file": name, "bytes": offset, "crc32": crc, "arrays": table}
            self.records.append(rec)
            try:
                self._save()
            except BaseException:
                self.records.pop()
                raise
        except OSError as err:
            fix = "raise the file-size limit (`ulimit -f`)" if err.errno == errno.EFBIG else "make room there"
            raise CheckpointError(f"--checkpoint {self.directory}: cannot write level {index} ({err.strerror}; the "
                                  f"level takes {need / 2**20:,.1f} MiB); {fix} and continue with "
                                  f"--resume {self.directory}") from None
        self.bytes += offset

    def _save(self) -> None:
        write_json_durable(os.path.join(self.directory, MANIFEST),
                           {"engine": "vector", "header": self.header, "records": self.records})


def _remove(d: str, names) -> None:
    for n in names:
        try:
            os.unlink(os.path.join(d, n))
        except OSError:
            pass
