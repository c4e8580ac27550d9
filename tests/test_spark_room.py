"""A Spark store that runs out of room (checker/spark/room.py): one message that names the store, who failed,
the room left and the fix, exit 2 and no verdict, whether an executor or the driver fails; the kept store
resumes once there is room, to the vector engine's counts. The disk is a real one that fills: a small tmpfs."""
from __future__ import annotations

import errno
import json
import os

import pytest
from small_fs import small_filesystem
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark]

skip_without_spark()

from txncheck.checker.outcome import ExploreOptions  # noqa: E402
from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore  # noqa: E402
from txncheck.checker.spark.room import NoRoom, StoreFull, raise_any, task_result  # noqa: E402
from txncheck.checker.vector.explore import explore as vector_explore  # noqa: E402

TINY = ModelRef.named("twophase", "tiny")   # a store of about 300 KiB on tmpfs, 11 levels


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG])
def test_a_want_of_room_is_a_tasks_result(code):
    got = task_result(OSError(code, os.strerror(code)), 3)
    assert got["task"] == 3 and got["no_room"][0] == code
    with pytest.raises(NoRoom, match=r"task 3 of the job 'j'"):
        raise_any([{"task": 5, "no_room": [code, "x"]}, {"task": 1}, got], "j")   # the least task that failed


@pytest.mark.parametrize("err", [OSError(errno.EACCES, "Permission denied"), OSError("no errno"), ValueError("x")])
def test_other_errors_are_not_a_want_of_room(err):
    assert task_result(err, 0) is None
    raise_any([{"task": 0}], "j")


def test_a_full_store_on_the_executors_stops_and_resumes_once_there_is_room(spark, tmp_path):
    v = vector_explore(TINY.build(), ExploreOptions())
    with small_filesystem(tmp_path / "fs", "100k") as fs:
        store = f"{fs.path}/ck"
        with pytest.raises(StoreFull) as info:
            explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, store=store))
        msg = str(info.value)
        assert msg.startswith(f"no room for the Spark engine's store at {store}: task ")
        assert "on an executor failed to write to it" in msg and "No space left on device" in msg
        assert "free on its filesystem" in msg and "the store holds" in msg
        assert "make room on that filesystem or give --out (or --checkpoint) on a filesystem with room" in msg
        assert f"--resume {store} goes on from there" in msg
        with open(f"{store}/manifest.json") as f:
            recorded = len(json.load(f)["records"])
        assert 1 <= recorded < len(v.level_sizes)       # it stopped part way
        fs.grow("8m")
        out = explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, resume=store))
    assert (out.distinct, out.generated, list(out.level_sizes)) == (v.distinct, v.generated, list(v.level_sizes))
    assert out.extra["resumed_levels"] == recorded - 1


def test_a_full_store_on_the_driver_is_the_same_message(spark, tmp_path):
    with small_filesystem(tmp_path / "fs", "64k") as fs:
        fs.fill()    # full before the run starts
        with pytest.raises(StoreFull, match=r"^no room for the Spark engine's store at .*: the driver failed to "
                                            r"write to it \(.*No space left on device\)"):
            explore(TINY, ExploreOptions(), SparkOptions(master="local[2]", partitions=4, store=f"{fs.path}/ck"))


@pytest.mark.long   # two runs of the command line, each starting Spark: about 30 s
def test_the_cli_says_the_store_is_full_in_one_line_then_resumes(tmp_path, txncheck_cli):
    """What a user types: exit 2 and one line on stderr (no Java stack trace, no executor's traceback), no
    verdict and no result.json; after making room the same command with --resume finishes the run."""
    with small_filesystem(tmp_path / "fs", "100k") as fs:
        ck = f"{fs.path}/ck"
        args = ["check", "twophase", "--config", "tiny", "--engine", "spark", "--master", "local[2]",
                "--partitions", "4", "--out", "out"]
        rc, out, err = txncheck_cli(*args, "--checkpoint", ck, cwd=tmp_path)
        assert rc == 2, out + err
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"txncheck: error: no room for the Spark engine's store at {ck}: ")
        assert "verdict" not in out.lower()
        assert not (tmp_path / "out" / "result.json").exists()
        fs.grow("8m")
        rc, out, err = txncheck_cli(*args, "--checkpoint", ck, "--resume", ck, cwd=tmp_path)
        assert rc == 0, out + err
        assert "verdict: PASS" in out
        with open(tmp_path / "out" / "result.json") as f:
            assert json.load(f)["stats"]["distinct"] == 288
