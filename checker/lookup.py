"""Bulk lookups of fingerprints in a sorted fingerprint array, by a bucket directory.

Fingerprints are uniform 64-bit values, so a directory of 2^B buckets over the top bits (about two
buckets per element) finds most values at the first probe; the few others walk forward a step or
two. For 10^8 queries into 10^7 sorted values this is about 8x faster than `np.searchsorted`
(whose random binary searches miss the cache at every step) and faster than sorting the queries.
"""
from __future__ import annotations

import numpy as np

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
