"""Issue 20 target 5 at scale: the vector engine and the Spark engine on a local standalone cluster, each as the
whole `txncheck check` process a user runs, side by side in one run; the Spark driver is killed (SIGKILL) once its
checkpoint holds a given number of levels and the run goes on with `--resume`.

    .venv/bin/python benchmarks/spark_scale_bench.py --workdir DIR [--config nightly] [--set delays=1]
        [--kill-at-level 40] [--workers 2] [--worker-memory 8g] [--memory-budget 8000] [--property P ...]
        [-- EXTRA CHECK ARGS]

DIR gets vector/, spark/, spark-checkpoint/ and cluster/ (removed first if they exist). The script asserts that the
two result.json files agree on the verdict, every property's outcome and counterexample length, the distinct
states, the level sizes and the generated count, and prints a Markdown block for benchmarks/RESULTS.md with the
wall and CPU time (the driver process and its children; a standalone cluster's executors are the workers'
children, whose CPU the driver does not see) and the peak RSS of each process.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from txncheck.checker.spark import cluster
from txncheck.spec.errors import TxncheckError
from txncheck.spec.request import ModelRequest


def always_and_sometimes(spec: str, config: str, overrides: dict) -> list[str]:
    """The properties judged during the search alone (no stored edges): those that apply to this configuration."""
    model = ModelRequest.of(spec, config, overrides, None).ground()
    return [p.name for p in model.properties if p.kind in ("always", "sometimes")]


def txncheck() -> list[str]:
    exe = shutil.which("txncheck", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "txncheck.cli"]


class Run:
    """One child process, timed whole: wall clock, and CPU and peak RSS from wait4."""

    def __init__(self, argv: list[str], log: str):
        self.argv, self.log = argv, log
        self.t0 = time.perf_counter()
        with open(log, "ab") as f:
            self.proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        self.rc = self.wall = self.cpu = self.rss_mib = None

    def wait(self) -> "Run":
        _, status, ru = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.rc, self.wall = self.proc.returncode, time.perf_counter() - self.t0
        self.cpu, self.rss_mib = ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
        return self

    def running(self) -> bool:
        """Still running (without reaping it: wait() collects its rusage)."""
        return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None

    def kill(self) -> "Run":
        os.killpg(self.proc.pid, signal.SIGKILL)
        return self.wait()


def levels_done(checkpoint: str) -> int:
    try:
        with open(os.path.join(checkpoint, "manifest.json")) as f:
            return len(json.load(f)["records"])
    except (OSError, ValueError, KeyError):
        return 0


def summary(path: str) -> dict:
    with open(path) as f:
        r = json.load(f)
    s = r["stats"]
    props = {p["name"]: (p["outcome"], p["depth"]) for p in r["properties"]}
    return {"verdict": r["verdict"], "complete": r["complete"], "distinct": s["distinct"], "generated": s["generated"],
            "levels": s["levels"], "properties": props, "search_seconds": s.get("seconds")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--spec", default="kafka")
    ap.add_argument("--config", default="nightly")
    ap.add_argument("--set", action="append", default=[], metavar="K=V")
    ap.add_argument("--property", action="append", help="default: every always and sometimes property")
    ap.add_argument("--kill-at-level", type=int, default=40, help="SIGKILL the Spark driver once its checkpoint "
                    "holds this many levels (0: no kill)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="8g")
    ap.add_argument("--executor-memory", default="6g")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--memory-budget", type=int, help="the vector run's --memory-budget (MB)")
    ap.add_argument("--skip-vector", action="store_true", help="reuse DIR/vector from an earlier run")
    ap.add_argument("extra", nargs="*", help="after --: more arguments for both check commands")
    a = ap.parse_args()
    if any("=" not in kv for kv in a.set):
        ap.error("--set takes KEY=VALUE, e.g. --set delays=1")
    try:
        props = a.property or always_and_sometimes(a.spec, a.config, dict(kv.split("=", 1) for kv in a.set))
    except TxncheckError as e:
        ap.error(str(e))
    wd = os.path.abspath(a.workdir)
    os.makedirs(wd, exist_ok=True)
    base = txncheck() + ["check", a.spec, "--config", a.config, "--continue", "--json"]
    for kv in a.set:
        base += ["--set", kv]
    for p in props:
        base += ["--property", p]
    base += a.extra

    vout = os.path.join(wd, "vector")
    if not a.skip_vector:
        shutil.rmtree(vout, ignore_errors=True)
        vcmd = base + ["--out", vout] + (["--memory-budget", str(a.memory_budget)] if a.memory_budget else [])
        print("vector:", " ".join(vcmd), flush=True)
        v = Run(vcmd, os.path.join(wd, "vector.log")).wait()
        print(f"vector: exit {v.rc}, {v.wall:.1f} s wall, {v.cpu:.1f} s CPU, {v.rss_mib:.0f} MiB", flush=True)
    sout, ckpt, cdir = (os.path.join(wd, d) for d in ("spark", "spark-checkpoint", "cluster"))
    for d in (sout, ckpt, cdir):
        shutil.rmtree(d, ignore_errors=True)
    c = cluster.start(cdir, workers=a.workers, memory=a.worker_memory)
    try:
        scmd = base + ["--engine", "spark", "--master", c.url, "--partitions", str(a.partitions), "--out", sout,
                       "--executor-memory", a.executor_memory, "--driver-memory", a.driver_memory]
        print("spark:", " ".join(scmd + ["--checkpoint", ckpt]), flush=True)
        runs = [Run(scmd + ["--checkpoint", ckpt], os.path.join(wd, "spark.log"))]
        if a.kill_at_level:
            while levels_done(ckpt) < a.kill_at_level and runs[0].running():
                time.sleep(0.5)
            if runs[0].running():
                runs[0].kill()
                killed_at = levels_done(ckpt)
                print(f"spark: driver killed after {runs[0].wall:.1f} s with {killed_at} levels checkpointed", flush=True)
                runs.append(Run(scmd + ["--resume", ckpt], os.path.join(wd, "spark.log")))
        s = runs[-1].wait()
        print(f"spark: exit {s.rc}, {sum(r.wall for r in runs):.1f} s wall in {len(runs)} process(es)", flush=True)
    finally:
        c.stop()
    vs, ss = summary(os.path.join(vout, "result.json")), summary(os.path.join(sout, "result.json"))
    for k in ("verdict", "complete", "distinct", "generated", "levels", "properties"):
        assert vs[k] == ss[k], f"{k} differs: vector {vs[k]!r}, spark {ss[k]!r}"
    sw = sum(r.wall for r in runs)
    print()
    print("| run | processes | wall s | driver CPU s | driver peak RSS MiB | search s (result.json) |")
    print("|---|---|---:|---:|---:|---:|")
    if not a.skip_vector:
        print(f"| vector | 1 | {v.wall:.1f} | {v.cpu:.1f} | {v.rss_mib:,.0f} | {vs['search_seconds']} |")
    kill = f"killed at level {killed_at}, resumed" if len(runs) > 1 else "one"
    print(f"| spark, standalone {a.workers} x 1 core | {len(runs)} ({kill}) | {sw:.1f} | "
          f"{sum(r.cpu for r in runs):.1f} | {max(r.rss_mib for r in runs):,.0f} | {ss['search_seconds']} |")
    if not a.skip_vector:
        print(f"\nspark / vector wall: {sw / v.wall:.2f}x; both: {vs['distinct']:,} states, {vs['generated']:,} "
              f"generated, {len(vs['levels'])} levels, verdict {vs['verdict']}; every property's outcome and trace "
              f"length equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
