"""Whether the Spark engine can run here, checked before anything imports pyspark or pyarrow, so
that a missing extra is a one-line error naming the fix rather than a ModuleNotFoundError from
deep inside the engine. Imports only the standard library at module level.
"""
from __future__ import annotations

import importlib

from txncheck.spec.errors import ConfigError

# (module, what the engine needs it for); pyspark pulls in py4j, reported under its own name
_NEEDED = (("pyspark", "to run jobs"), ("pyarrow", "for its Parquet store"))

INSTALL_HINT = "pip install 'txncheck[spark]' (or, in a clone, make venv-test)"


def require_spark(java: bool = True) -> None:
    """Raise ConfigError naming what is missing (pyspark, pyarrow, a Java runtime) and the fix.

    `java`: also check for a Java runtime new enough for the installed pyspark (a `java -version`
    subprocess, tens of ms); pass False where a running SparkContext already proves there is one."""
    missing = []
    for name, why in _NEEDED:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            # the module that actually failed (py4j under pyspark, say), not only the top-level name
            inner = getattr(exc, "name", None)
            missing.append(f"{name} ({why}" + (f"; import of {inner} failed" if inner and inner != name else "") + ")")
    if missing:
        one = len(missing) == 1
        raise ConfigError(f"the Spark engine needs {' and '.join(missing)}, which {'is' if one else 'are'} not "
                          f"installed; install {'it' if one else 'them'} with {INSTALL_HINT}")
    if java:
        import pyspark

        from .session import SparkEngineError, check_java
        try:
            check_java(pyspark.__version__)
        except SparkEngineError as exc:
            raise ConfigError(str(exc)) from None
