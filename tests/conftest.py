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
