"""A Spark run whose store runs out of room: one message, not a Java stack trace.

The store takes the most disk of anything the engine writes (at 1.8·10⁸ Kafka states a level's candidate
exchange alone is 27 GB), and it may fill on an executor or on the driver. An executor's task that cannot
write for want of room (`no_room.is_no_room`) returns that as its result instead of raising: Spark
would otherwise log the worker's Python traceback, retry a task that cannot succeed, and hand the driver
a Py4JJavaError that reads as a bug. The driver turns such a result, or its own failed write, into
`StoreFull`: which store, who failed, the room left, what the store holds, what the last level wrote
(what the next one needs at least, where levels grow), and the fix. The CLI reports it as bad input
(exit 2) with no verdict; a kept store (`--out`, `--checkpoint`) resumes from its recorded levels once
there is room, as after a kill.
"""
from __future__ import annotations

from txncheck.checker.no_room import FIXES, amount, bytes_under, free_bytes, is_no_room

from .session import SparkEngineError


class StoreFull(SparkEngineError):
    """The store's filesystem has no room (or a quota or a file-size limit is reached)."""


class NoRoom(Exception):
    """A write into the store failed for want of room: `code` (errno), `detail` (the error's text), `where`
    (the driver, or which task)."""

    def __init__(self, code: int, detail: str, where: str):
        super().__init__(f"{where}: {detail}")
        self.code, self.detail, self.where = code, detail, where


def task_result(err: BaseException, task: int) -> dict | None:
    """What task `task` returns in place of raising `err`, if `err` is a want of room (else None)."""
    if not is_no_room(err):
        return None
    return {"task": task, "no_room": [int(err.errno), str(err)]}


def raise_any(results: list[dict], description: str) -> None:
    """NoRoom for the first task (by number) whose result says it had no room."""
    for r in sorted(results, key=lambda r: r["task"]):
        if "no_room" in r:
            code, detail = r["no_room"]
            raise NoRoom(int(code), detail, f"task {r['task']} of the job '{description}', on an executor")


def store_full(err: BaseException, root: str, kept: bool, levels: int, stats: list[dict]) -> StoreFull:
    """The message for `err` (a NoRoom, or the driver's own OSError for want of room) on store `root`, whose
    search had recorded `levels` complete levels; `stats` the jobs' figures so far (`engine._merge`)."""
    if isinstance(err, NoRoom):
        code, detail, where = err.code, err.detail, err.where
    else:
        code, detail, where = err.errno, str(err), "the driver"
    local = "://" not in root
    left = free_bytes(root) if local else None
    facts = [f"{amount(left)} free on its filesystem" if left is not None else None,
             f"the store holds {amount(bytes_under(root))}" if local else None]
    last = next((s for s in reversed(stats) if s.get("cand_bytes") or s.get("level_bytes")), None)
    if last is not None:
        facts.append(f"the last level written took {amount(int(last['cand_bytes']) + int(last['level_bytes']))} "
                     "(candidates and states), and a growing level needs more")
    then = (f"; the store keeps its {levels} recorded levels: once there is room, the same command with "
            f"--resume {root} goes on from there" if kept and levels else "")
    return StoreFull(f"no room for the Spark engine's store at {root}: {where} failed to write to it ({detail}); "
                     f"{'; '.join(f for f in facts if f)}; {FIXES.get(code, 'make room there')} or give --out (or "
                     f"--checkpoint) on a filesystem with room{then}")
