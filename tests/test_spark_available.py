"""Without the spark extra, `--engine spark` is a one-line ConfigError naming the fix, found before
anything imports pyspark or pyarrow (not a ModuleNotFoundError, exit 4, from inside the engine).

The missing module is simulated with sys.modules[name] = None, which makes `import name` fail as
if it were not installed; so these tests need no Spark and run everywhere."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from txncheck.spec.errors import ConfigError

FIX = "pip install 'txncheck[spark]'"
FIX_RE = re.escape(FIX)


@pytest.mark.parametrize("missing", ["pyarrow", "pyspark"])
def test_require_spark_names_the_missing_module_and_the_fix(monkeypatch, missing):
    from txncheck.checker.spark import require_spark
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(ConfigError, match=rf"needs {missing} .*not installed.*{FIX_RE}"):
        require_spark()


def test_require_spark_names_both_when_both_are_missing(monkeypatch):
    from txncheck.checker.spark import require_spark
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"needs pyspark .* and pyarrow .*are not installed"):
        require_spark()


def test_the_engine_checks_before_it_imports(monkeypatch):
    """The engine's entry point fails with the ConfigError before building the model or touching
    its store (storage imports pyarrow lazily, which used to surface as ModuleNotFoundError)."""
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.spark.engine import ModelRef, SparkOptions, explore
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"needs pyarrow .*" + FIX_RE):
        explore(ModelRef.named("twophase", "tiny"), ExploreOptions(), SparkOptions(master="local[1]"))


def test_the_cli_exits_2_with_the_fix_when_pyarrow_is_missing(tmp_path):
    """`txncheck check --engine spark` in a process where pyarrow cannot be imported."""
    code = textwrap.dedent("""
        import sys
        sys.modules["pyarrow"] = None
        from txncheck.cli.main import main
        sys.exit(main(sys.argv[1:]))
    """)
    p = subprocess.run([sys.executable, "-c", code, "check", "twophase", "--config", "tiny", "--engine", "spark",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if k != "TXNCHECK_DEBUG"})
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "needs pyarrow" in p.stderr and FIX in p.stderr
    assert "ModuleNotFoundError" not in p.stderr and "Traceback" not in p.stderr
    assert "verdict" not in p.stdout.lower()


def test_require_spark_checks_java(monkeypatch):
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from txncheck.checker.spark import require_spark
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ConfigError, match=r"needs a Java runtime.*openjdk-17-jre-headless"):
        require_spark()
    require_spark(java=False)     # where a running context already proves there is Java
