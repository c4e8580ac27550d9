"""A quiet SparkSession: Java check, logging at WARN, the package shipped to executors.

pyspark is imported here lazily (inside functions), never at module import.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

from txncheck.spec.errors import TxncheckError

from ..durable import replace_file


class SparkEngineError(TxncheckError):
    """The Spark engine cannot run here (no Java, no pyspark, master unreachable...)."""


LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = warn
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = warn
logger.nativeio.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeio.level = error
logger.snappy.name = org.apache.spark.util.Utils
logger.snappy.level = error
logger.netty.name = org.apache.spark.network
logger.netty.level = error
logger.blockmgr.name = org.apache.spark.storage.BlockManagerMasterEndpoint
logger.blockmgr.level = error
# a failed task or job is reported by the driver in one line (failures.py), its whole text with TXNCHECK_DEBUG=1
logger.tsm.name = org.apache.spark.scheduler.TaskSetManager
logger.tsm.level = fatal
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = fatal
logger.standalone.name = org.apache.spark.scheduler.cluster.StandaloneSchedulerBackend
logger.standalone.level = error
logger.exec.name = org.apache.spark.deploy.client.StandaloneAppClient$ClientEndpoint
logger.exec.level = error
logger.tse.name = org.apache.spark.scheduler.TaskSchedulerImpl
logger.tse.level = error
logger.pyworker.name = org.apache.spark.api.python.PythonWorkerFactory
logger.pyworker.level = error
"""


def require_pyspark():
    """pyspark, once `require_spark` has checked that it and pyarrow import (a ConfigError naming
    the fix otherwise)."""
    from .available import require_spark
    require_spark(java=False)
    import pyspark
    return pyspark


def java_version() -> tuple[str | None, int | None]:
    """(path of the java launcher, major version) or (None, None) when there is no Java."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home and (Path(home) / "bin" / "java").exists() else shutil.which("java")
    if not java:
        return None, None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return java, None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return java, None
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    return java, major


def check_java(pyspark_version: str | None = None) -> str:
    """The java launcher; raise SparkEngineError naming the fix when it is missing or too old."""
    java, major = java_version()
    if java is None:
        raise SparkEngineError("the Spark engine needs a Java runtime, and none was found (no JAVA_HOME, "
                               "no java on PATH); install one, e.g. apt-get install -y openjdk-17-jre-headless")
    need = 17 if (pyspark_version or "4").split(".")[0] >= "4" else 8
    if major is not None and major < need:
        raise SparkEngineError(f"pyspark {pyspark_version} needs Java {need} or newer, but {java} is Java {major}; "
                               "install openjdk-17-jre-headless or set JAVA_HOME")
    return java


def conf_dir() -> str:
    """A SPARK_CONF_DIR whose log4j2.properties keeps Spark at WARN."""
    d = Path(tempfile.gettempdir()) / f"txncheck-spark-conf-{os.getuid()}"
    d.mkdir(exist_ok=True)
    f = d / "log4j2.properties"
    if not f.exists() or f.read_text() != LOG4J2:
        replace_file(str(f), LOG4J2)
    return str(d)


def check_master(master: str, timeout: float = 5.0) -> None:
    """For spark://host:port masters, fail fast with a clear message when nothing listens."""
    if not master.startswith("spark://"):
        return
    for hp in master[len("spark://"):].split(","):
        host, _, port = hp.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except (OSError, ValueError):
            continue
    raise SparkEngineError(f"cannot reach the Spark master at {master}: nothing accepts connections there. "
                           "Start it (python -m txncheck.checker.spark.cluster start, or spark-class "
                           "org.apache.spark.deploy.master.Master) or pass the right --master URL")


def package_zip(dest_dir: str) -> str:
    """Zip the txncheck sources (every txncheck.* sub-package) for SparkContext.addPyFile."""
    import txncheck.checker
    import txncheck.spec
    roots = {}
    for name in ("spec", "checker", "traces", "reports", "cli"):
        try:
            mod = __import__(f"txncheck.{name}", fromlist=["_"])
        except ImportError:
            continue
        for p in getattr(mod, "__path__", []):
            roots[name] = Path(p)
            break
    out = Path(dest_dir) / "txncheck-src.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, root in roots.items():
            for f in sorted(root.rglob("*")):
                if f.is_dir() or "__pycache__" in f.parts or f.suffix not in (".py", ".md", ".json"):
                    continue
                z.write(f, f"txncheck/{name}/{f.relative_to(root).as_posix()}")
    return str(out)


def _is_local_master(master: str) -> bool:
    return master.startswith("local") or "127.0.0.1" in master or "localhost" in master


# Only the JVM's own start-up lines; everything else the JVM prints (WARN and above) passes.
_BANNER = ("WARNING: Using incubator modules", "Setting default log level to",
           "To adjust logging level use sc.setLogLevel")

# The engine's JVMs only schedule tasks and move small results (the Python workers do the work),
# so C1-only JIT and the serial collector: about 40% faster start-up on a busy 2-core machine,
# and no C2 compiler threads competing with the Python workers.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


_STOPPING = threading.Event()


def stop(sc) -> None:
    """Stop a context the engine started. Python workers killed by the shutdown print
    BrokenPipe tracebacks; the result is already recorded, so the JVM's stderr is dropped from
    here on."""
    _STOPPING.set()
    try:
        sc.stop()
    finally:
        _STOPPING.clear()


def _forward_stderr(stream, dest) -> None:
    """Copy the JVM's stderr to ours, without its start-up banner lines (nor anything printed
    while the context stops)."""
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        if line.startswith(_BANNER) or _STOPPING.is_set():
            continue
        try:
            dest.write(line)
            dest.flush()
        except (OSError, ValueError):
            pass


def start_session(opts, workdir: str):
    """Start a SparkContext configured for the engine (no SparkSession: the engine uses no
    DataFrames, and a session costs seconds of start-up)."""
    pyspark = require_pyspark()
    check_java(pyspark.__version__)
    check_master(opts.master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if opts.quiet:
        os.environ.setdefault("SPARK_CONF_DIR", conf_dir())
    if _is_local_master(opts.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf, SparkContext

    settings = {
        "spark.master": opts.master,
        "spark.app.name": opts.app_name,
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.python.worker.reuse": "true",          # keeps the kernel and visited cache warm
        # Unix sockets between the JVM and Python workers: tens of ms less per task (Spark 4.1+;
        # older versions ignore the key)
        "spark.python.unix.domain.socket.enabled": "true",
        "spark.task.maxFailures": "8",
        "spark.executorEnv.PYSPARK_PYTHON": os.environ["PYSPARK_PYTHON"],
        "spark.driver.extraJavaOptions": JVM_OPTIONS,
        "spark.executor.extraJavaOptions": JVM_OPTIONS,
    }
    if _is_local_master(opts.master):
        settings["spark.driver.host"] = settings["spark.driver.bindAddress"] = "127.0.0.1"
    if opts.driver_memory:
        settings["spark.driver.memory"] = opts.driver_memory
    if opts.executor_memory:
        settings["spark.executor.memory"] = opts.executor_memory
    if opts.executor_cores:
        settings["spark.executor.cores"] = str(opts.executor_cores)
    settings.update(dict(opts.conf))
    conf = SparkConf().setAll(sorted(settings.items()))
    # the driver's scratch space in the run's work directory (removed at the end), set through the
    # environment: as spark.local.dir it draws a warning at every start
    saved = os.environ.get("SPARK_LOCAL_DIRS")
    os.environ["SPARK_LOCAL_DIRS"] = workdir
    try:
        gateway = None
        if opts.quiet and "PYSPARK_GATEWAY_PORT" not in os.environ:   # not under spark-submit
            from pyspark.java_gateway import launch_gateway
            gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
            threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr, sys.stderr),
                             name="txncheck-jvm-stderr", daemon=True).start()
        sc = SparkContext(conf=conf, gateway=gateway)
    except Exception as exc:  # py4j / JVM start-up failures
        proc = getattr(gateway, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()          # the JVM we launched for a context that failed
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkEngineError(f"could not start Spark with master {opts.master}: {msg}") from exc
    finally:
        if saved is None:
            os.environ.pop("SPARK_LOCAL_DIRS", None)
        else:
            os.environ["SPARK_LOCAL_DIRS"] = saved
    sc.setLogLevel("WARN" if opts.quiet else "INFO")
    if opts.ship_package:
        sc.addPyFile(package_zip(workdir))
    return sc
