"""Bulk lookups of fingerprints in a sorted fingerprint array, by a bucket directory; and the group-by of a
level's deduplication: the distinct fingerprints of its candidates, each candidate's group, and the least
key (parent row · A + action, the outcome rule's order) of each group, as every engine computes it.

Where only the distinct fingerprints and their least keys are needed (the vector engine's new level), a
large group-by is Arrow's hash aggregation (`distinct_least`): one pass over the candidates and a sort of
the distinct ones, instead of sorting every candidate. numpy's sort costs 50-70 ns an element on arrays of
10^6 on the 2-core machine of benchmarks/RESULTS.md ("Speed against Spin"), Arrow's hash 25-30 ns.

Fingerprints are uniform 64-bit values, so a directory of 2^B buckets over the top bits (about two
buckets per element) finds most values at the first probe; the few others walk forward a step or
two. For 10^8 queries into 10^7 sorted values this is about 8x faster than `np.searchsorted`
(whose random binary searches miss the cache at every step) and faster than sorting the queries.
"""
from __future__ import annotations

import os

import numpy as np

from .resources import has_room

_U64 = np.uint64


def directory(u: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """The bucket directory of a sorted array of more than one value (for `group_index`'s repeated calls)."""
    B = min(int(np.ceil(np.log2(len(u)))) + 1, 40)
    shift = _U64(64 - B)
    counts = np.bincount((u >> shift).view(np.int64), minlength=1 << B)
    D = np.empty(len(counts) + 1, dtype=np.int64)
    D[0] = 0
    np.cumsum(counts, out=D[1:])
    return D, shift


def group_starts(s: np.ndarray) -> np.ndarray:
    """Where each run of equal values of the sorted array `s` starts: `s[group_starts(s)]` is its distinct values."""
    first = np.empty(len(s), dtype=bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return first


def distinct(c: np.ndarray) -> np.ndarray:
    """The sorted distinct values of `c` (by sorting: much faster than numpy's hashing unique on large arrays)."""
    s = np.sort(c)
    return s[group_starts(s)]


def edge_keys(rows: np.ndarray, actions: np.ndarray, A: np.uint64, offset: int = 0) -> np.ndarray:
    """The key (parent row + offset) · A + action of each candidate: ordered as (parent row, action)."""
    # rows and actions are non-negative: the unsafe casts convert them in the same pass
    key = np.multiply(rows, A, dtype=_U64, casting="unsafe")
    if offset:
        key += _U64(offset) * A
    np.add(key, actions, out=key, dtype=_U64, casting="unsafe")
    return key


HASH_MIN = 1 << 15  # candidates: below this, Arrow's fixed cost per call (about 0.1 ms) outweighs its gain
# Arrow only where the memory bound leaves this much room, and HASH_BYTES a candidate: close to the bound,
# Arrow's first load can fail to map its libraries, its threads abort the process (std::bad_alloc) and its
# allocations can spin instead of failing, where numpy raises MemoryError and the search ends incomplete
HASH_ROOM = 256 << 20
HASH_BYTES = 64


def distinct_least(c: np.ndarray, key: np.ndarray, hashed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(u, least): the sorted distinct values of `c` and the least `key` of each (keys as `edge_keys`).
    `hashed`: by Arrow's hash table where `c` is large and the memory bound leaves room; without it (a
    search under --memory-budget) by numpy's sort, whose arrays are all the budget sizes a chunk for."""
    if hashed and len(c) >= HASH_MIN and has_room(HASH_ROOM + HASH_BYTES * len(c)):
        return distinct_least_hashed(c, key)
    u = distinct(c)
    return u, least_per_group(group_index(u, c), len(u), key)


def distinct_least_hashed(c: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`distinct_least` by Arrow's hash group-by, on one thread (the engine's CPU figures are one core's)."""
    # Arrow's own allocator (mimalloc) keeps what it frees and reserves address space at import, all of it
    # counted against check's --max-memory (RLIMIT_DATA): twophase rm=8 then needs 300 MiB instead of 250.
    # The system allocator, chosen before Arrow is first imported (a user's setting wins), is as fast here.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    import pyarrow as pa  # here, not at the top: loading Arrow costs 0.06 s, which small searches need not pay

    groups = pa.table({"c": c, "key": key}).group_by("c", use_threads=False).aggregate([("key", "min")])
    u = groups.column("c").to_numpy()
    least = groups.column("key_min").to_numpy()
    order = np.argsort(u)
    return u[order], least[order]


def least_per_group(grp: np.ndarray, groups: int, key: np.ndarray) -> np.ndarray:
    """The least `key` of each of `groups` groups (`grp`: each key's group)."""
    best = np.full(groups, np.iinfo(np.uint64).max, dtype=_U64)
    np.minimum.at(best, grp, key)
    return best


def split_key(key: np.ndarray, A: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """(parent row int64, action int32) of `edge_keys`' keys."""
    return (key // A).astype(np.int64), (key % A).astype(np.int32)


def group_index(u: np.ndarray, c: np.ndarray, index: tuple[np.ndarray, np.uint64] | None = None) -> np.ndarray:
    """For each value of `c`, its index in the sorted unique array `u`; every value of c must be in
    u (the group-by of a deduplication: u = unique(c)). `index`: u's `directory`, if the caller has it."""
    if len(u) <= 1:
        return np.zeros(len(c), dtype=np.int64)
    D, shift = index if index is not None else directory(u)
    pos = D[(c >> shift).view(np.int64)]  # top bits < 2^40: the int64 view is exact and free
    act = np.flatnonzero(u[pos] != c)
    while len(act):
        pos[act] += 1
        act = act[u[pos[act]] != c[act]]
    return pos


def contains_sorted(block: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Membership of each query of `q` in the sorted array `block`, by binary search."""
    if len(block) == 0 or len(q) == 0:
        return np.zeros(len(q), dtype=bool)
    i = np.searchsorted(block, q)
    i[i == len(block)] = len(block) - 1
    return block[i] == q


def find_sorted(u: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index, found): for each value of `c`, its index in the sorted array `u` where found (0
    elsewhere). Values of c need not be in u."""
    c = np.asarray(c, dtype=_U64)
    if len(u) == 0:
        return np.zeros(len(c), dtype=np.int64), np.zeros(len(c), dtype=bool)
    u = np.asarray(u, dtype=_U64)
    if len(u) == 1:
        found = c == u[0]
        return np.zeros(len(c), dtype=np.int64), found
    D, shift = directory(u)
    b = (c >> shift).view(np.int64)
    pos, end = D[b], D[b + 1]
    # walk within the bucket while u[pos] < c
    act = np.flatnonzero(pos < end)
    act = act[u[pos[act]] < c[act]]
    while len(act):
        pos[act] += 1
        act = act[pos[act] < end[act]]
        act = act[u[pos[act]] < c[act]]
    inb = pos < end
    found = np.zeros(len(c), dtype=bool)
    found[inb] = u[pos[inb]] == c[inb]
    pos[~found] = 0
    return pos, found
