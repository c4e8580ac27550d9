"""Fingerprints are stable across processes and PYTHONHASHSEED values."""
import os
import subprocess
import sys

CODE = """
from txncheck.checker.run import build_model
from txncheck.checker.scalar.explore import explore
from txncheck.checker.outcome import ExploreOptions
from txncheck.spec import catalog
m = build_model(catalog.load('twophase'), 'tiny', {'rm': 3})
o = explore(m, ExploreOptions(symmetry=True))
print(int(o.fps.sum() % (2**61 - 1)), int(o.fps[-1]), o.distinct)
"""


def test_fingerprints_identical_across_hash_seeds():
    outs = set()
    for seed in ("0", "1", "12345", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1


def test_known_fingerprint_value():
    from txncheck.checker.fingerprint import zobrist_value
    assert zobrist_value(0, 0) == zobrist_value(0, 0)
    assert zobrist_value(0, 0) != zobrist_value(0, 1) != zobrist_value(1, 0)
    assert zobrist_value(3, -1) == 0x23b7fb61d9825ba4  # pinned: a change would silently invalidate stored runs
