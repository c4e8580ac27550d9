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


# The files that take longest, longest first. make test hands whole files to its workers in collection order
# (pytest-xdist --dist loadfile), so a long file collected late keeps one worker busy after the other is done;
# starting with the long ones leaves the short ones to even the workers out at the end (2-core fresh clone,
# 2026-11-28: 15.6 minutes of pytest in alphabetical order).
LONGEST_FIRST = ("test_variants.py", "test_repo.py", "test_kafka_spec.py", "test_kafka_inductive.py",
                 "test_symbolic_bmc.py", "test_vector_resume.py", "test_engine_agreement.py", "test_spark_cluster.py",
                 "test_spark_engine.py", "test_report.py", "test_kafka_variants.py", "test_symbolic_simplify.py",
                 "test_kafka_leader_failover.py", "test_kafka_marker_copies.py", "test_kafka_late_requests.py",
                 "test_kafka_rotation.py", "test_viewer.py", "test_gate.py", "test_trace_fuzz.py",
                 "test_spark_memory.py", "test_symbolic_verdict.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    order = {id(item): k for k, item in enumerate(items)}  # a file's own tests keep their order
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), order[id(item)]))
