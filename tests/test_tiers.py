"""tests/tiers.toml and conftest's marks: a listed id gets its tier, and the list cannot silently disagree
with the test files (a check's tier is said in one place)."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

TESTS = '''import pytest

def test_plain():
    pass

@pytest.mark.heavy
def test_marked_heavy():
    pass

@pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.long)])
def test_params(n):
    pass
'''


def _collect(tmp_path, tiers, *args):
    """Collect a small suite under a copy of the project's conftest with the given tiers.toml."""
    (tmp_path / "tests").mkdir()
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "tests" / "conftest.py")
    (tmp_path / "tests" / "tiers.toml").write_text(tiers)
    (tmp_path / "tests" / "test_small.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    long: l\n    heavy: h\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "--collect-only", *args, "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def test_a_listed_id_gets_its_tier_and_is_deselected_from_make_test(tmp_path):
    code, out = _collect(tmp_path, 'long = ["tests/test_small.py::test_plain"]\n', "-m", "long and not heavy")
    assert code == 0, out
    assert "tests/test_small.py::test_plain" in out
    assert "tests/test_small.py::test_params[2]" in out  # the file's own mark
    assert "test_marked_heavy" not in out and "test_params[1]" not in out


@pytest.mark.parametrize("listed,tier", [("tests/test_small.py::test_marked_heavy", "long"),
                                         ("tests/test_small.py::test_params[2]", "long"),
                                         ("tests/test_small.py::test_marked_heavy", "heavy")])
def test_an_id_whose_file_marks_its_tier_is_refused(tmp_path, listed, tier):
    code, out = _collect(tmp_path, f'{tier} = ["{listed}"]\n')
    assert code != 0
    assert "whose files mark them long or heavy already" in out and listed in out, out
    assert "Traceback" not in out


def test_an_id_the_file_no_longer_has_is_refused(tmp_path):
    code, out = _collect(tmp_path, 'long = ["tests/test_small.py::test_renamed"]\n')
    assert code != 0
    assert "no longer have" in out and "tests/test_small.py::test_renamed" in out, out


def test_an_id_under_both_tiers_is_refused(tmp_path):
    plain = '["tests/test_small.py::test_plain"]'
    code, out = _collect(tmp_path, f"long = {plain}\nheavy = {plain}\n")
    assert code != 0
    assert "under both long and heavy" in out, out
