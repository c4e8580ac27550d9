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


def pytest_make_parametrize_id(config, val, argname):
    """A spec file given by its absolute path shows as its name in the test id: the same id from every checkout
    (tests/tiers.toml lists ids; CI logs are compared across clones)."""
    if isinstance(val, str) and os.path.isabs(val):
        return os.path.basename(val)
    return None


TIERS = os.path.join(ROOT, "tests", "tiers.toml")


def _tiers() -> dict[str, str]:
    """tests/tiers.toml: make test's pytest ids moved to make test-long (`long`) or make test-heavy (`heavy`) by
    their measured time, id -> tier."""
    import tomllib
    with open(TIERS, "rb") as f:
        data = tomllib.load(f)
    tiers = {}
    for tier in ("long", "heavy"):
        for nodeid in data.get(tier, ()):
            if tiers.setdefault(nodeid, tier) != tier:
                raise pytest.UsageError(f"tests/tiers.toml lists {nodeid} under both long and heavy: keep one")
    return tiers


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these marks
def pytest_collection_modifyitems(config, items):
    tiers = _tiers()
    files, twice = set(), []
    for item in items:
        if ROOT in item.nodeid:  # an id must name the same test in every checkout (tiers.toml, CI logs)
            raise pytest.UsageError(f"test id {item.nodeid} holds this checkout's path: give its parametrize ids "
                                    "that name the file, not where it lies (pytest_make_parametrize_id above does "
                                    "for absolute paths)")
        files.add(item.nodeid.split("::")[0])
        tier = tiers.get(item.nodeid)
        if tier:
            own = sorted({m.name for m in item.iter_markers() if m.name in ("long", "heavy")})
            if own:  # one place says where a check runs: a file's mark and a listed tier would disagree in time
                twice.append(f"{item.nodeid} ({own[0]} in its file, {tier} in tests/tiers.toml)")
            item.add_marker(getattr(pytest.mark, tier))
    if twice:
        raise pytest.UsageError(f"tests/tiers.toml lists {len(twice)} test id(s) whose files mark them long or heavy "
                                f"already, first {twice[0]}: keep the file's mark and remove the id from "
                                "tests/tiers.toml\n" + "\n".join(twice))
    if any("::" in arg for arg in config.args):  # a test picked by its id: its file's other ids are not collected
        return
    nodeids = {item.nodeid for item in items}
    gone = sorted(n for n in tiers if n.split("::")[0] in files and n not in nodeids)
    if gone:
        raise pytest.UsageError(f"tests/tiers.toml lists {len(gone)} test id(s) that their files no longer have, "
                                f"first {gone[0]}: rename or remove them there")
