import contextlib
import io
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


@pytest.fixture
def txncheck_cli():
    """Run the installed console script; returns (exit code, stdout, stderr)."""
    import subprocess

    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")

    def run(*args, cwd=None, env=None):
        p = subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.fixture(scope="session")
def txncheck_main():
    """Run the command line in this process (`txncheck.cli.main.main`: no interpreter to start, for
    tests that run many commands); returns (exit code, stdout, stderr)."""
    from txncheck.cli.main import main

    def run(*args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return code, out.getvalue(), err.getvalue()
    return run


@pytest.fixture(scope="module")
def spark():
    """A local[2] session shared by a Spark test module's tests (the engine reuses the active one)."""
    import shutil
    import tempfile

    from txncheck.checker.spark.ref import SparkOptions
    from txncheck.checker.spark.session import start_session
    work = tempfile.mkdtemp(prefix="txncheck-spark-test-")
    s = start_session(SparkOptions(master="local[2]"), work)
    yield s
    s.stop()
    shutil.rmtree(work, ignore_errors=True)
