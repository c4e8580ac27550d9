"""The Spark test modules' shared precondition: skip the module, with the fix, where Spark cannot run.

With TXNCHECK_REQUIRE_SPARK=1 (`make test-spark35`, whose whole point is to run them) a missing
piece fails the module instead of skipping it."""
import importlib.util
import os
import shutil

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("TXNCHECK_REQUIRE_SPARK") == "1":
        pytest.fail(f"TXNCHECK_REQUIRE_SPARK=1, but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def skip_without_spark() -> None:
    if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pyarrow") is None:
        _unavailable("pyspark/pyarrow not installed (pip install 'txncheck[spark]')")
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and os.access(os.path.join(home, "bin", "java"), os.X_OK)):
        _unavailable("no Java runtime (no java on PATH, no JAVA_HOME): the Spark engine needs Java 17 "
                     "(apt-get install -y openjdk-17-jre-headless)")
