"""The Spark test modules' shared precondition: skip the module, with the fix, where Spark cannot run."""
import importlib.util
import shutil

import pytest


def skip_without_spark() -> None:
    if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyspark/pyarrow not installed (pip install 'txncheck[spark]')", allow_module_level=True)
    if shutil.which("java") is None:
        pytest.skip("no Java runtime on PATH: the Spark engine needs Java 17 "
                    "(apt-get install -y openjdk-17-jre-headless)", allow_module_level=True)
