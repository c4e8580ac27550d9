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
import zipfile
from pathlib import Path

from txncheck.spec.errors import TxncheckError


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
logger.tsm.name = org.apache.spark.scheduler.TaskSetManager
logger.tsm.level = error
logger.standalone.name = org.apache.spark.scheduler.cluster.StandaloneSchedulerBackend
logger.standalone.level = error
logger.exec.name = org.apache.spark.deploy.client.StandaloneAppClient$ClientEndpoint
logger.exec.level = error
logger.tse.name = org.apache.spark.scheduler.TaskSchedulerImpl
logger.tse.level = error
logger.pyrun.name = org.apache.spark.api.python
logger.pyrun.level = error
"""


def require_pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkEngineError("the Spark engine needs pyspark; install it with "
                               "pip install 'txncheck[spark]' (pyspark, pandas<3, pyarrow)") from None
    try:
        import pyarrow  # noqa: F401
        import pandas  # noqa: F401
    except ImportError:
        raise SparkEngineError("the Spark engine needs pandas>=2.2,<3 and pyarrow>=18 for Arrow exchange; "
                               "pip install 'txncheck[spark]'") from None
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
        tmp = d / f"log4j2.properties.{os.getpid()}"
        tmp.write_text(LOG4J2)
        os.replace(tmp, f)
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


def start_session(opts, workdir: str):
    """Start (or reuse) a SparkSession configured for the engine."""
    pyspark = require_pyspark()
    check_java(pyspark.__version__)
    check_master(opts.master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if opts.quiet:
        os.environ.setdefault("SPARK_CONF_DIR", conf_dir())
    if _is_local_master(opts.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master(opts.master).appName(opts.app_name)
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(opts.batch_rows))
         .config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.python.worker.reuse", "true")
         .config("spark.task.maxFailures", "8")
         .config("spark.local.dir", workdir)
         .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"]))
    if _is_local_master(opts.master):
        b = b.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if opts.driver_memory:
        b = b.config("spark.driver.memory", opts.driver_memory)
    if opts.executor_memory:
        b = b.config("spark.executor.memory", opts.executor_memory)
    if opts.executor_cores:
        b = b.config("spark.executor.cores", str(opts.executor_cores))
    for k, v in opts.conf:
        b = b.config(k, v)
    try:
        spark = b.getOrCreate()
    except Exception as exc:  # py4j / JVM start-up failures
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkEngineError(f"could not start Spark with master {opts.master}: {msg}") from exc
    spark.sparkContext.setLogLevel("WARN" if opts.quiet else "INFO")
    if opts.ship_package:
        spark.sparkContext.addPyFile(package_zip(workdir))
    return spark
