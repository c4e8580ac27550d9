"""What an executor's task reports instead of raising, so that a user's mistake or a full disk reads as one
message, as on the vector engine, and not as a Java stack trace that says "a bug in txncheck".

A task that raises makes Spark log the worker's Python traceback, retry a task that fails the same way
again, and hand the driver a Py4JJavaError. So `engine._task` turns the failures a user can act on into its
result (`task_result`), and the driver raises them after the job (`raise_any`), the least failing task first:
- a write into the store that fails for want of room (`no_room.is_no_room`: a full filesystem, a quota, a
  file-size limit): `StoreFull`, exit 2, with the store, who failed, the room left, what the store holds and
  what the last level took; the driver's own failed writes say the same. A kept store (`--out`,
  `--checkpoint`) resumes from its recorded levels once there is room, as after a kill;
- an `EvaluationError` (a ground action leaves its domain in some state: only the executors search, so only
  they meet it): the same error, row and state as the vector engine raises, exit 2;
- any other error of txncheck's own kinds (a spec an executor cannot load, say): its message, naming the
  task, exit 2 (a `ResourceError`: exit 3); any other OSError (a task touches no file but the store's): the
  store cannot be used from that executor, exit 2;
- a `MemoryError` (a Python worker under `spark.executor.pyspark.memory`): `ExecutorOutOfMemory`, exit 3. So is
  an `ImportError` that could not map a library's segment while the worker's address space is capped (that
  setting caps it: the library did not fit, as Arrow's did not in a 300 MiB worker once the kernel did).

A job Spark gives up on for a reason outside the task's code (a Python worker that dies, most often killed
by the operating system for memory; a lost executor) comes back as a Py4JJavaError of hundreds of lines:
`job_failure` makes it `SparkJobFailed` (exit 3: the search did not finish), naming the job, the task, its
attempts and the cause. An exception the task's own code raised and none of the above covers is a bug: it
stays an internal error (exit 4), in one line with the Python error's last line (the whole of it with
TXNCHECK_DEBUG=1).
"""
from __future__ import annotations

import re

from txncheck.checker.no_room import FIXES, amount, bytes_under, free_bytes, is_no_room
from txncheck.spec.errors import EvaluationError, ResourceError, TxncheckError

from .session import SparkEngineError


class StoreFull(SparkEngineError):
    """The store's filesystem has no room (or a quota or a file-size limit is reached)."""


class ExecutorOutOfMemory(ResourceError):
    """A Python worker on an executor ran out of memory."""


class SparkJobFailed(ResourceError):
    """Spark gave up on a job for a reason outside the tasks' code (a crashed worker, a lost executor)."""


class NoRoom(Exception):
    """A write into the store failed for want of room: `code` (errno), `detail` (the error's text), `where`
    (the driver, or which task); the engine adds what it knows of the store (`store_full`)."""

    def __init__(self, code: int, detail: str, where: str):
        super().__init__(f"{where}: {detail}")
        self.code, self.detail, self.where = code, detail, where


def task_result(err: BaseException, task: int) -> dict | None:
    """What task `task` returns in place of raising `err`; None for an error that stays one."""
    if is_no_room(err):
        failed = {"kind": "no_room", "errno": int(err.errno), "detail": str(err)}
    elif isinstance(err, OSError):   # a task reads and writes nothing but the store
        failed = {"kind": "store", "detail": str(err)}
    elif isinstance(err, MemoryError):
        failed = {"kind": "memory", "what": "MemoryError", "detail": str(err)}
    elif isinstance(err, ImportError) and "failed to map segment" in str(err) and _address_space_capped():
        failed = {"kind": "memory", "what": "ImportError", "detail": f"{err}, under the worker's address-space cap"}
    elif isinstance(err, EvaluationError):
        failed = {"kind": "evaluation", "message": err.message, "row": err.row, "state": err.state}
    elif isinstance(err, TxncheckError):
        failed = {"kind": "resource" if isinstance(err, ResourceError) else "error", "detail": str(err)}
    else:
        return None
    return {"task": task, "failed": failed}


def _address_space_capped() -> bool:
    import resource
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def raise_any(results: list[dict], description: str) -> None:
    """The failure of the least task (by number) whose result is one, raised."""
    for r in sorted(results, key=lambda r: r["task"]):
        f = r.get("failed")
        if f is None:
            continue
        where = f"task {r['task']} of the job '{description}', on an executor"
        kind = f["kind"]
        if kind == "no_room":
            raise NoRoom(f["errno"], f["detail"], where)
        if kind == "evaluation":
            raise EvaluationError(f["message"], f["row"], f["state"])
        if kind == "memory":
            raise ExecutorOutOfMemory(
                f"{where} ran out of memory ({f['what']}{': ' + f['detail'] if f['detail'] else ''}); give each "
                "executor more memory (--executor-memory, and spark.executor.pyspark.memory where the cluster "
                "caps its Python workers), or run on more executors, each then holding less of a level")
        if kind == "store":
            raise SparkEngineError(f"{where} could not use the store: {f['detail']}; check that every executor may "
                                   "read and write it, at the same path as the driver")
        if kind == "resource":
            raise ResourceError(f"{where}: {f['detail']}")
        raise SparkEngineError(f"{where}: {f['detail']}")


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


_ABORTED = re.compile(r"Task (\d+) in stage \S+ failed (\d+) times?, most recent failure: [^\n]*?\) ?: "
                      r"(?:[\w.$]+(?:Exception|Error|Failure)\b:? ?)?([^\n]*)")
# a worker that died: said outright, or (pyspark 3.5, by timing) as the JVM's lost connection to it
_CRASHED = ("Python worker exited unexpectedly", "ExecutorLostFailure", "Executor lost", "Container killed",
            "exited caused by one of the running tasks", "java.net.SocketException", "java.io.EOFException")


def job_failure(err: BaseException, description: str) -> BaseException | None:
    """What the driver raises for `err`, a job's failure as pyspark hands it back; None if it is not one."""
    if type(err).__name__ != "Py4JJavaError":
        return None
    text = str(err)
    if "Traceback (most recent call last):" in text:
        return RuntimeError(f"a task of the job '{description}' raised on an executor: {_python_error(text)}")
    m = _ABORTED.search(text)
    if m is None:
        said = [re.split(r"(?:Exception|Error): ", line, maxsplit=1)[-1].strip() for line in text.splitlines()
                if re.search(r"(?:Exception|Error): ", line)]
        return SparkJobFailed(f"the Spark job '{description}' failed: {said[0] if said else type(err).__name__}")
    task, attempts, cause = m.group(1), m.group(2), m.group(3).split(". Consider ")[0].rstrip(". ")
    fix = ("a Python worker that dies on its own is most often killed by the operating system for memory "
           "(the kernel log, dmesg, says so): give each executor more memory (--executor-memory) or run on more "
           "executors" if any(c in text for c in _CRASHED) else "see the executors' logs")
    return SparkJobFailed(f"the Spark job '{description}' failed: task {task} failed {attempts} "
                          f"time{'s' if attempts != '1' else ''} ({cause}); {fix}; a store kept with --out or "
                          "--checkpoint resumes from its recorded levels with --resume")


def _python_error(text: str) -> str:
    """The last line of the first Python traceback in `text` (`KeyError: 'x'`)."""
    block = text.split("Traceback (most recent call last):", 1)[1]
    last = "(no message)"
    for line in block.splitlines()[1:]:
        if line.startswith(("\tat ", "\t... ")):
            break
        if line.strip() and not line.startswith(" "):
            last = line.strip()
    return last
