"""Hypothesis: `levels.Findings` chooses, whatever order and split the candidates arrive in, the least
fingerprint of the first level that has one (the rule in checker/outcome.py)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.levels import DEADLOCK, VIOLATION, WITNESS, Findings

U64 = st.integers(0, 2**64 - 1)
# (kind, name, level, fp): candidates as engines offer them, in levels of increasing depth
candidate = st.tuples(st.sampled_from([VIOLATION, WITNESS, DEADLOCK]), st.sampled_from(["p", "q"]),
                      st.integers(0, 3), U64)


def expected(cands):
    out = {}
    for kind, name, level, fp in cands:
        key = (kind, "" if kind == DEADLOCK else name)
        out[key] = min(out.get(key, (level, fp)), (level, fp))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(candidate, max_size=30), st.randoms(use_true_random=False), st.integers(1, 4))
def test_first_level_least_fingerprint_in_any_split(cands, rnd, parts):
    cands = sorted(cands, key=lambda c: c[2])  # levels are checked in order; within one, any order
    by_level = {}
    for c in cands:
        by_level.setdefault(c[2], []).append(c)
    f, new = Findings(), set()
    for level in sorted(by_level):
        group = by_level[level]
        rnd.shuffle(group)
        for i in range(parts):   # a level split over tasks: each part offered through offer_least
            part = group[i::parts]
            for key in sorted({(k, "" if k == DEADLOCK else n) for k, n, _, _ in part}):
                mine = [c for c in part if (c[0], "" if c[0] == DEADLOCK else c[1]) == key]
                if f.open(key[0], key[1], level) and f.offer_least(key[0], key[1], level,
                                                                   np.array([c[3] for c in mine], dtype=np.uint64),
                                                                   [(level, c[3]) for c in mine]):
                    new.add(key)
    want = expected(cands)
    assert {k: v[2] for k, v in f.chosen.items()} == want
    assert new == set(want)   # `offer` says "new" exactly once per key
    assert f.deadlock() == want.get((DEADLOCK, ""))


def test_a_restored_choice_is_final():
    f = Findings()
    f.restore(VIOLATION, "p", 2, 17)
    assert not f.offer(VIOLATION, "p", 2, 0, 99)   # a resumed run does not re-choose within the level
    assert not f.offer(VIOLATION, "p", 3, 0, 98)
    assert f.refs(VIOLATION) == {"p": 17}
    assert not f.open(VIOLATION, "p", 3) and f.open(VIOLATION, "q", 3)


def test_an_unsigned_order():
    f = Findings()
    f.offer_least(VIOLATION, "p", 1, np.array([2**63, 5], dtype=np.uint64), ["big", "small"])
    assert f.refs(VIOLATION) == {"p": "small"}
    f.offer(VIOLATION, "p", 1, 2**64 - 1, "max")
    assert f.refs(VIOLATION) == {"p": "small"}
