"""Golden state counts: numbers our explorer did not invent (TLC's, and an independent oracle's)."""
import json
import os

import pytest
from models.two_phase import reachable

from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check_spec
from txncheck.spec import catalog

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "golden", "state_counts.json")))


@pytest.mark.parametrize("rm", [1, 2, 3, 4, 5])
def test_twophase_matches_independent_oracle(rm):
    r = check_spec(catalog.load("twophase"), "tiny", {"rm": rm}, engine="scalar")
    assert r.verdict == "pass"
    assert r.stats["distinct"] == len(reachable(rm))


def test_twophase_rm3_is_288_like_tlc():
    r = check_spec(catalog.load("twophase"), "tiny", {"rm": 3}, engine="scalar")
    assert r.stats["distinct"] == 288 == GOLDEN["twophase/tiny"]["distinct"]
    assert r.stats["depth"] == GOLDEN["twophase/tiny"]["depth"]


@pytest.mark.parametrize("key", sorted(k for k in GOLDEN if k.startswith(("twophase/", "paxoscommit/"))))
def test_golden(key):
    name, rest = key.split("/", 1)
    sym = rest.endswith("+symmetry")
    rest = rest.removesuffix("+symmetry")
    if "=" in rest:
        k, v = rest.split("=")
        config, overrides = "tiny", {k: int(v)}
    else:
        config, overrides = rest, {}
    r = check_spec(catalog.load(name), config, overrides, engine="scalar", options=ExploreOptions(symmetry=sym))
    assert (r.stats["distinct"], r.stats["depth"]) == (GOLDEN[key]["distinct"], GOLDEN[key]["depth"])
    assert r.verdict == "pass"
