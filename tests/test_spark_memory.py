"""A state space whose visited set does not fit the driver's memory completes on Spark, with the
vector engine's exact counts; so does a Kafka search whose recoverable properties are judged over
more edges than the driver may hold, with its leads_to property (whose edges the driver reads) or without.

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
EDGE_BYTES = 20                  # an edge as the local engines hold it (source, target, action)

DRIVER = textwrap.dedent("""
    import json, mmap, resource, sys, tempfile
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
    from txncheck.checker.spark.session import start_session

    req, jvm_mem, headroom, store, partitions = (json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                                 sys.argv[4], int(sys.argv[5]))

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
    # the ground model and its compiled kernel (Kafka's are tens of MB, whatever the state count) too
    ref = ModelRef.named(req["spec"], req["config"], tuple(map(tuple, req["overrides"])))
    model = ref.build()
    ref.kernel(model)
    base = vm("VmData")
    cap = base + headroom
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    props = tuple(req["properties"]) if req["properties"] else None
    o = explore(ref, ExploreOptions(properties=props), sopts, model=model)

    def fits(nbytes):
        # whether the cap lets the driver's data grow by that much: a new private mapping, which RLIMIT_DATA
        # counts, since an allocation through malloc may reuse heap the model's build freed before `base`
        # (inside VmData already) and say nothing about the cap
        try:
            m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            return False
        m.close()
        return True
    print(json.dumps({"distinct": o.distinct, "generated": o.generated, "level_sizes": list(o.level_sizes),
                      "witnesses": {k: len(o.path(v)) for k, v in o.witnesses.items()},
                      "unrecoverable": {k: None if v is None else [str(int(o.fps[v])), len(o.path(v))]
                                        for k, v in o.unrecoverable.items()},
                      "stored_edges": o.extra["stored_edges"], "driver_edges": o.extra["driver_edges"],
                      "data_base": base, "data_cap": cap, "data_end": vm("VmData"), "jvm_max_heap": jvm_max,
                      "visited_fits": fits(o.distinct * %d), "edges_fit": fits(o.extra["stored_edges"] * %d)}))
    sc.stop()
""" % (VISITED_BYTES_PER_STATE, EDGE_BYTES))


def _small_stacks():
    # 1 MiB thread stacks (glibc takes the default from RLIMIT_STACK): a thread's stack is a
    # private mapping that RLIMIT_DATA counts, and it is not the visited set
    import resource
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))


def request(spec: str, config: str | None = None, overrides=(), properties=None) -> dict:
    return {"spec": spec, "config": config, "overrides": [list(kv) for kv in overrides],
            "properties": list(properties) if properties else None}


def run_capped(req: dict, jvm_mem: str, headroom: int, tmp_path, partitions: int = 8) -> dict:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(req), jvm_mem, str(headroom),
                        str(tmp_path / "store"), str(partitions)], capture_output=True, text=True, env=env,
                       timeout=3600, preexec_fn=_small_stacks)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"{json.dumps(req)}: {json.dumps(got)}")     # the numbers, with pytest -s
    return got


def vector_counts(req: dict) -> dict:
    """The vector engine's result, in its own process (so its memory is returned)."""
    code = ("import json, sys; from txncheck.checker.outcome import ExploreOptions; "
            "from txncheck.checker import recoverable; "
            "from txncheck.checker.spark.ref import ModelRef; "
            "from txncheck.checker.vector.explore import explore; "
            "req = json.loads(sys.argv[1]); props = tuple(req['properties']) if req['properties'] else None; "
            "m = ModelRef.named(req['spec'], req['config'], tuple(map(tuple, req['overrides']))).build(); "
            "v = explore(m, ExploreOptions(properties=props)); "
            "bad = {p.name: recoverable.check(m, v, p.name) for p in m.properties "
            "       if p.kind == 'recoverable' and (props is None or p.name in props)}; "
            "print(json.dumps({'distinct': v.distinct, 'generated': v.generated, 'level_sizes': list(v.level_sizes), "
            "'witnesses': {k: len(v.path(i)) for k, i in v.witnesses.items()}, "
            "'unrecoverable': {k: None if i is None else [str(int(v.fps[i])), len(v.path(i))] "
            "                  for k, i in bad.items()}}))")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(req)], capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def check(got: dict, want: dict) -> None:
    for key in ("distinct", "generated", "level_sizes", "witnesses", "unrecoverable"):
        assert got[key] == want[key], key
    assert not got["visited_fits"]
    assert got["data_end"] <= got["data_cap"]


@pytest.mark.long  # 18 s: make test-long, on pyspark 4.x (2026-11-28)
def test_python_driver_capped_below_visited_set(tmp_path):
    # twophase rm=8: 1,745,408 states, a 42 MB visited store; the Python driver may grow 16 MB
    headroom = 16 << 20
    req = request("twophase", None, (("rm", "8"),))
    got = run_capped(req, "512m", headroom, tmp_path)
    assert got["distinct"] * VISITED_BYTES_PER_STATE > 2 * headroom
    check(got, vector_counts(req))


@pytest.mark.long  # kafka ci on Spark and on the vector engine, about a minute
def test_recoverable_properties_judged_over_more_edges_than_the_driver_may_hold(tmp_path):
    # kafka ci with its recoverable properties: 1.2 million states, about 3.7 million stored edges, 58 levels.
    # The per-state arrays the driver keeps fit under the cap (the index, 20 B a state: 24.5 MB,
    # memory-mapped, plus the goal and when masks, 6 B a state: 7.4 MB); the edges alone, at the local
    # engines' 20 B an edge, are 76.1 MB, more than the 48 MiB (50.3 MB) the Python driver may grow by.
    # Before the reverse search ran on the executors, the driver mapped every edge and this run died
    # with a MemoryError.
    headroom = 48 << 20
    req = request("kafka", "ci", properties=("LIVE-1", "LIVE-2", "LIVE-3"))
    got = run_capped(req, "512m", headroom, tmp_path)
    assert got["stored_edges"] * EDGE_BYTES > headroom and got["driver_edges"] == 0
    assert not got["edges_fit"]
    assert set(got["unrecoverable"]) == {"LIVE-1", "LIVE-2", "LIVE-3"}
    want = vector_counts(req)
    for key in ("distinct", "generated", "level_sizes", "witnesses", "unrecoverable"):
        assert got[key] == want[key], key
    assert got["data_end"] <= got["data_cap"]


@pytest.mark.long  # kafka ci on Spark and on the vector engine, about a minute
def test_liveness_reads_only_its_edges_onto_a_capped_driver(tmp_path):
    # kafka ci with every property, LIVE-4 (leads_to) among them: 4,065,232 stored edges, 81.3 MB at 20 B an
    # edge, more than the 72 MiB (75.5 MB) the Python driver may grow by. The driver reads only the 1,948,754
    # edges out of LIVE-4's goal-less states, and the recoverable LIVE-1..3 are judged on the executors. Measured
    # on 2026-12-03 with run_capped: it completes from 48 MiB and runs out at 40 and 32. The figures of 2026-12-01
    # (from 56, out at 48; the build that read every edge out at 96, 128 and 160) counted on heap the kernel's
    # compilation had freed before the cap: once the kernel compiled less, this test ran out at 72 until the
    # driver found the edges' targets a level at a time (`engine._edge_indices`).
    headroom = 72 << 20
    req = request("kafka", "ci")
    got = run_capped(req, "512m", headroom, tmp_path)
    assert got["stored_edges"] * EDGE_BYTES > headroom and not got["edges_fit"]
    assert 0 < got["driver_edges"] < got["stored_edges"] // 2
    assert set(got["unrecoverable"]) == {"LIVE-1", "LIVE-2", "LIVE-3"}
    want = vector_counts(req)
    for key in ("distinct", "generated", "level_sizes", "witnesses", "unrecoverable"):
        assert got[key] == want[key], key
    assert got["data_end"] <= got["data_cap"]


@pytest.mark.heavy
def test_driver_jvm_and_python_capped_below_visited_set(tmp_path):
    # twophase rm=10: 61.5 million states, a 1.48 GB visited store (0.49 GB of fingerprints
    # alone), against a 512 MiB driver JVM (Spark's floor is 450 MiB) plus 64 MiB of Python
    # driver growth
    headroom = 64 << 20
    req = request("twophase", None, (("rm", "10"),))
    got = run_capped(req, "512m", headroom, tmp_path, partitions=16)
    assert got["distinct"] * VISITED_BYTES_PER_STATE > got["jvm_max_heap"] + headroom
    assert got["distinct"] * 8 > 4 * headroom
    check(got, vector_counts(req))
