"""A local standalone Spark cluster from the pyspark package: a master and workers started with
`spark-class`, stopped by PID (TERM, then KILL). Used by the tests and by `make cluster-start` /
`make cluster-stop`:

    python -m txncheck.checker.spark.cluster start [--workers 2] [--port 7077] [--dir .spark-cluster]
    python -m txncheck.checker.spark.cluster status [--dir ...]
    python -m txncheck.checker.spark.cluster stop [--dir ...]

The PIDs and the master URL are kept in DIR/cluster.json. Everything binds to 127.0.0.1; each
worker offers one core and 1 GiB.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from txncheck.spec.errors import TxncheckError

from ..durable import replace_file
from ..processes import alive
from .session import SparkEngineError, check_java, conf_dir, require_pyspark

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def spark_class() -> str:
    pyspark = require_pyspark()
    home = Path(pyspark.__file__).parent
    sc = home / "bin" / "spark-class"
    if not sc.exists():
        raise SparkEngineError(f"no spark-class in {home}/bin: is pyspark installed from the full package?")
    return str(sc)


def _env(workdir: Path) -> dict:
    env = dict(os.environ)
    env.setdefault("SPARK_CONF_DIR", conf_dir())
    env["SPARK_LOCAL_IP"] = HOST
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON", sys.executable)
    env["SPARK_LOG_DIR"] = str(workdir / "logs")
    env["SPARK_WORKER_DIR"] = str(workdir / "work")
    env["SPARK_LOCAL_DIRS"] = str(workdir / "local")
    env.pop("SPARK_HOME", None)
    return env


@dataclass
class Cluster:
    dir: str
    port: int
    master_pid: int
    worker_pids: list[int] = field(default_factory=list)
    worker_cores: int = 1
    worker_memory: str = "1g"

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def save(self) -> None:
        replace_file(str(Path(self.dir) / "cluster.json"), json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, d: str) -> "Cluster":
        return cls(**json.loads((Path(d) / "cluster.json").read_text()))

    # -- processes ----------------------------------------------------------------------------
    def start_worker(self) -> int:
        d = Path(self.dir)
        i = len(self.worker_pids)
        log = open(d / "logs" / f"worker-{i}-{int(time.time())}.log", "ab")
        p = subprocess.Popen([spark_class(), "org.apache.spark.deploy.worker.Worker", self.url,
                              "--host", HOST, "--cores", str(self.worker_cores), "--memory", self.worker_memory,
                              "--work-dir", str(d / "work")],
                             stdout=log, stderr=subprocess.STDOUT, env=_env(d), start_new_session=True)
        self.worker_pids.append(p.pid)
        self.save()
        return p.pid

    def kill_worker(self, pid: int, sig=signal.SIGKILL) -> None:
        _kill_tree(pid, sig)
        if pid in self.worker_pids:
            self.worker_pids.remove(pid)
        self.save()

    def alive_workers(self) -> int:
        """Workers registered and ALIVE at the master (from the master's JSON status page)."""
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.port + 1}/json/", timeout=3) as r:
                data = json.loads(r.read().decode())
        except Exception:
            return 0
        return sum(1 for w in data.get("workers", []) if w.get("state") == "ALIVE")

    def wait_workers(self, n: int, timeout: float = 90.0) -> None:
        t = time.time() + timeout
        while time.time() < t:
            if self.alive_workers() >= n:
                return
            time.sleep(0.5)
        raise SparkEngineError(f"the local cluster at {self.url} did not get {n} workers within {timeout:.0f} s; "
                               f"see the logs in {self.dir}/logs")

    def stop(self) -> None:
        for pid in list(self.worker_pids):
            _kill_tree(pid, signal.SIGTERM)
        _kill_tree(self.master_pid, signal.SIGTERM)
        self.worker_pids = []
        self.save()


def _kill_tree(pid: int, sig=signal.SIGTERM, grace: float = 10.0) -> None:
    """Signal the process group started for `pid` (spark-class execs java in it), then KILL."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
    t = time.time() + grace
    while time.time() < t and alive(pid):
        time.sleep(0.2)
    if alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        time.sleep(0.2)
        alive(pid)


def start(d: str, workers: int = 2, port: int | None = None, cores: int = 1, memory: str = "1g",
          wait: bool = True) -> Cluster:
    pyspark = require_pyspark()
    check_java(pyspark.__version__)
    dp = Path(d).absolute()
    (dp / "logs").mkdir(parents=True, exist_ok=True)
    (dp / "work").mkdir(parents=True, exist_ok=True)
    if (dp / "cluster.json").exists():
        old = Cluster.load(str(dp))
        if alive(old.master_pid):
            raise SparkEngineError(f"a cluster from {dp} is already running at {old.url} (master PID "
                                   f"{old.master_pid}); stop it first")
    port = port or free_port()
    log = open(dp / "logs" / f"master-{int(time.time())}.log", "ab")
    p = subprocess.Popen([spark_class(), "org.apache.spark.deploy.master.Master", "--host", HOST,
                          "--port", str(port), "--webui-port", str(port + 1)],
                         stdout=log, stderr=subprocess.STDOUT, env=_env(dp), start_new_session=True)
    c = Cluster(str(dp), port, p.pid, [], cores, memory)
    c.save()
    try:
        t = time.time() + 60
        while time.time() < t:
            try:
                with socket.create_connection((HOST, port), timeout=1):
                    break
            except OSError:
                if p.poll() is not None:
                    raise SparkEngineError(f"the Spark master exited at start; see {dp}/logs")
                time.sleep(0.3)
        else:
            raise SparkEngineError(f"the Spark master did not listen on {HOST}:{port} within 60 s; see {dp}/logs")
        for _ in range(workers):
            c.start_worker()
        if wait and workers:
            c.wait_workers(workers)
    except BaseException:
        c.stop()
        raise
    return c


def stop(d: str) -> bool:
    p = Path(d)
    if not (p / "cluster.json").exists():
        return False
    Cluster.load(str(p)).stop()
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m txncheck.checker.spark.cluster",
                                 description="Start or stop a local standalone Spark cluster (127.0.0.1).")
    ap.add_argument("command", choices=("start", "stop", "status"))
    ap.add_argument("--dir", default=".spark-cluster", help="where PIDs, logs and work dirs go")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--port", type=int, default=7077)
    ap.add_argument("--cores", type=int, default=1, help="cores per worker")
    ap.add_argument("--memory", default="1g", help="memory per worker")
    a = ap.parse_args(argv)
    try:
        if a.command == "start":
            c = start(a.dir, a.workers, a.port, a.cores, a.memory)
            print(f"master {c.url} (PID {c.master_pid}), workers PIDs {c.worker_pids}; "
                  f"run: txncheck check SPEC --engine spark --master {c.url}")
        elif a.command == "stop":
            print("stopped" if stop(a.dir) else f"no cluster recorded in {a.dir}")
        else:
            if not (Path(a.dir) / "cluster.json").exists():
                print(f"no cluster recorded in {a.dir}")
                return 1
            c = Cluster.load(a.dir)
            up = alive(c.master_pid)
            print(f"master {c.url} PID {c.master_pid} {'running' if up else 'stopped'}; "
                  f"{c.alive_workers() if up else 0} workers alive (PIDs {c.worker_pids})")
            return 0 if up else 1
    except TxncheckError as e:   # SparkEngineError, or ConfigError when pyspark is missing
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
