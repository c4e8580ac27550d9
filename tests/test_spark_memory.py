"""A state space whose visited set does not fit the driver's memory completes on Spark, with the
vector engine's exact counts.

The driver runs in a subprocess. Its JVM gets `--driver-memory` (spark.driver.memory), and once
the JVM is up (so that the cap does not reach the JVM or the Python workers it forks), the
Python driver's data segment is capped with RLIMIT_DATA at its size then plus a small headroom.
RLIMIT_DATA counts the heap and private anonymous mappings (numpy and Arrow buffers), not
file-backed shared mappings, so the memory-mapped result index on disk is allowed while any
in-memory copy of the visited set is not; the subprocess proves the cap bites by failing to
allocate an array of the visited set's size (the vector engine's 24 bytes per state).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from spark_env import skip_without_spark

pytestmark = [pytest.mark.spark, pytest.mark.slow]

skip_without_spark()
if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_DATA semantics are Linux's", allow_module_level=True)

VISITED_BYTES_PER_STATE = 24     # the vector engine's visited store (fp, parent, action, sorted fp)

DRIVER = textwrap.dedent("""
    import json, resource, sys, tempfile
    import numpy as np
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
    from txncheck.checker.spark.session import start_session

    rm, jvm_mem, headroom, store, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])

    def vm(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    sopts = SparkOptions(master="local[2]", partitions=partitions, store=store, driver_memory=jvm_mem)
    sc = start_session(sopts, tempfile.mkdtemp(prefix="txncheck-mem-"))
    # start Arrow's thread pools before the cap (their threads' stacks count as data)
    import pyarrow as pa, pyarrow.parquet as pq
    pq.write_table(pa.table({"x": [1]}), tempfile.mktemp(suffix=".parquet"))
    jvm_max = sc._jvm.java.lang.Runtime.getRuntime().maxMemory()
    base = vm("VmData")
    cap = base + headroom
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    o = explore(ModelRef.named("twophase", None, (("rm", rm),)), ExploreOptions(), sopts)
    try:    # the cap bites: the vector engine's visited store does not fit
        np.ones(o.distinct * %d, dtype=np.uint8)
        fits = True
    except MemoryError:
        fits = False
    print(json.dumps({"distinct": o.distinct, "generated": o.generated, "level_sizes": list(o.level_sizes),
                      "witnesses": {k: len(o.path(v)) for k, v in o.witnesses.items()},
                      "data_base": base, "data_cap": cap, "data_end": vm("VmData"), "jvm_max_heap": jvm_max,
                      "visited_fits": fits}))
    sc.stop()
""" % VISITED_BYTES_PER_STATE)


def _small_stacks():
    # 1 MiB thread stacks (glibc takes the default from RLIMIT_STACK): a thread's stack is a
    # private mapping that RLIMIT_DATA counts, and it is not the visited set
    import resource
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))


def run_capped(rm: int, jvm_mem: str, headroom: int, tmp_path, partitions: int = 8) -> dict:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", DRIVER, str(rm), jvm_mem, str(headroom), str(tmp_path / "store"),
                        str(partitions)], capture_output=True, text=True, env=env, timeout=3600,
                       preexec_fn=_small_stacks)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"twophase rm={rm}: {json.dumps(got)}")     # the numbers, with pytest -s
    return got


def vector_counts(rm: int) -> dict:
    """The vector engine's result, in its own process (so its memory is returned)."""
    code = ("import json; from txncheck.checker.outcome import ExploreOptions; "
            "from txncheck.checker.spark.ref import ModelRef; "
            "from txncheck.checker.vector.explore import explore; "
            f"v = explore(ModelRef.named('twophase', None, (('rm', '{rm}'),)).build(), ExploreOptions()); "
            "print(json.dumps({'distinct': v.distinct, 'generated': v.generated, 'level_sizes': list(v.level_sizes), "
            "'witnesses': {k: len(v.path(i)) for k, i in v.witnesses.items()}}))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def check(got: dict, want: dict) -> None:
    for key in ("distinct", "generated", "level_sizes", "witnesses"):
        assert got[key] == want[key], key
    assert not got["visited_fits"]
    assert got["data_end"] <= got["data_cap"]


def test_python_driver_capped_below_visited_set(tmp_path):
    # twophase rm=8: 1,745,408 states, a 42 MB visited store; the Python driver may grow 16 MB
    headroom = 16 << 20
    got = run_capped(8, "512m", headroom, tmp_path)
    assert got["distinct"] * VISITED_BYTES_PER_STATE > 2 * headroom
    check(got, vector_counts(8))


@pytest.mark.heavy
def test_driver_jvm_and_python_capped_below_visited_set(tmp_path):
    # twophase rm=10: 61.5 million states, a 1.48 GB visited store (0.49 GB of fingerprints
    # alone), against a 512 MiB driver JVM (Spark's floor is 450 MiB) plus 64 MiB of Python
    # driver growth
    headroom = 64 << 20
    got = run_capped(10, "512m", headroom, tmp_path, partitions=16)
    assert got["distinct"] * VISITED_BYTES_PER_STATE > got["jvm_max_heap"] + headroom
    assert got["distinct"] * 8 > 4 * headroom
    check(got, vector_counts(10))
