"""Bulk lookups of fingerprints in a sorted fingerprint array, by a bucket directory; and the group-by of a
level's deduplication: the distinct fingerprints of its candidates, each candidate's group, and the least
key (parent row · A + action, the outcome rule's order) of each group, as every engine computes it.

Where only the distinct fingerprints and their least keys are needed (the vector engine's new level), a
large group-by goes through a direct-mapped table (`distinct_least`): each candidate's slot is its
fingerprint's top bits, so the occupied slots list the distinct fingerprints already in order, and
`np.minimum.at` keeps each slot's least key; the few fingerprints that lost their slot to another go round
again with a table of more bits. No candidate is sorted: numpy's sort costs 50-70 ns an element on arrays
of 10^6 on the 2-core machine of benchmarks/RESULTS.md ("Speed against Spin"); the table, all rounds, 17-20 ns
a candidate on twophase rm=8.

Fingerprints are uniform 64-bit values, so a directory of 2^B buckets over the top bits (about two
buckets per element) finds most values at the first probe; the few others walk forward a step or
two. For 10^8 queries into 10^7 sorted values this is about 8x faster than `np.searchsorted`
(whose random binary searches miss the cache at every step) and faster than sorting the queries.
"""
from __future__ import annotations

import numpy as np

_U64 = np.uint64


DIRECTORY_BLOCK = 1 << 20  # values of `u` bucketed at a time by `directory`


def directory(u: np.ndarray, dtype=np.int64) -> tuple[np.ndarray, np.uint64]:
    """The bucket directory of a sorted array of more than one value (for `group_index`'s repeated calls);
    `dtype` int32 halves it where len(u) < 2^31 (the positions `group_index` gives are then int32 too)."""
    B = min(int(np.ceil(np.log2(len(u)))) + 1, 40)
    shift = _U64(64 - B)
    # D[b] is how many values lie in buckets before b. Built a block of `u` at a time, since the buckets of a
    # sorted block are ascending: no count array of 2^B int64 beside D, nor the int64 temporary that cumsum into
    # a narrower D makes (16 bytes a value each; after Kafka's 1.8·10^8-state search, 8.6 GB; benchmarks/RESULTS.md)
    D = np.empty((1 << B) + 1, dtype=dtype)
    D[0] = 0
    done = 0  # D[:done + 1] is final
    for a in range(0, len(u), DIRECTORY_BLOCK):
        b = (np.asarray(u[a:a + DIRECTORY_BLOCK], dtype=_U64) >> shift).view(np.int64)
        lo, hi = int(b[0]), int(b[-1])
        D[done + 1:lo + 1] = a  # empty buckets before this block's first
        # up to bucket hi: a later block that starts in bucket hi writes D[hi + 1] again, with its own values
        np.cumsum(np.bincount(b - lo, minlength=hi - lo + 1), out=D[lo + 1:hi + 2])
        D[lo + 1:hi + 2] += a
        done = hi + 1
    D[done + 1:] = len(u)
    return D, shift


def group_starts(s: np.ndarray) -> np.ndarray:
    """Where each run of equal values of the sorted array `s` starts: `s[group_starts(s)]` is its distinct values."""
    first = np.empty(len(s), dtype=bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return first


def distinct(c: np.ndarray, kind: str = "quicksort") -> np.ndarray:
    """The sorted distinct values of `c` (by sorting: much faster than numpy's hashing unique on large arrays);
    `kind="stable"` (timsort) where `c` comes nearly sorted: linear on its runs, and only about 12% slower
    than quicksort on random values."""
    s = np.sort(c, kind=kind)
    return s[group_starts(s)]


def concat_ranges(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices lo[i], lo[i]+1, ..., lo[i]+counts[i]-1 for every i, concatenated: the entries of the
    CSR rows that start at `lo`."""
    return np.repeat(lo - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(int(counts.sum()))


def sort_order(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, keys[order]) with order `np.argsort(keys, kind="stable")`, for non-negative integer keys of
    up to 64 bits. numpy's argsort is a comparison sort; its vectorised sort of plain values is several
    times faster (22 M random 64-bit keys: argsort 3.7 s, this 0.8-2 s on the 2-core machine), so each
    key is sorted with its position packed into its low bits. Keys too wide to keep whole beside a
    position keep their high bits only; equal keys still come out in position order, and the few runs of
    equal high bits that hold different keys out of order are then put in order by the whole key."""
    n = len(keys)
    u = keys.view(_U64) if keys.dtype.itemsize == 8 and keys.dtype.kind in "iu" else keys.astype(_U64)
    if n < 2:
        return np.arange(n, dtype=np.int64), u.copy()
    k = int(n - 1).bit_length()
    mask = _U64((1 << k) - 1)
    whole = int(u.max()).bit_length() + k <= 64
    packed = u << _U64(k) if whole else u & ~mask
    packed |= np.arange(n, dtype=_U64)
    packed.sort()
    order = (packed & mask).view(np.int64)
    if whole:
        packed >>= _U64(k)
        return order, packed
    s = u[order]
    down = np.flatnonzero(s[1:] < s[:-1])
    if not len(down):
        return order, s
    high = distinct(packed[down] & ~mask)            # the runs of equal high bits out of order
    lo, up = np.searchsorted(packed, high), np.searchsorted(packed, high | mask, "right")
    del packed
    size = up - lo
    at = concat_ranges(lo, size)
    run = np.repeat(np.arange(len(high)), size)
    sub = order[at]
    order[at] = sub[np.lexsort((sub, s[at], run))]
    s[at] = u[order[at]]
    return order, s


def edge_keys(rows: np.ndarray, actions: np.ndarray, A: np.uint64, offset: int = 0) -> np.ndarray:
    """The key (parent row + offset) · A + action of each candidate: ordered as (parent row, action)."""
    # rows and actions are non-negative: the unsafe casts convert them in the same pass
    key = np.multiply(rows, A, dtype=_U64, casting="unsafe")
    if offset:
        key += _U64(offset) * A
    np.add(key, actions, out=key, dtype=_U64, casting="unsafe")
    return key


TABLE_MIN = 1 << 12  # candidates: below this, sorting them costs less than a table's numpy calls
_EMPTY = np.iinfo(np.uint64).max  # no key: keys (parent row · A + action) stay far below it


def distinct_least(c: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, least): the sorted distinct values of `c` (uniform 64-bit fingerprints) and the least `key` of
    each (keys as `edge_keys`)."""
    return _by_table(c, key, -1)


def _by_table(c: np.ndarray, key: np.ndarray, spare: int) -> tuple[np.ndarray, np.ndarray]:
    """`distinct_least` with a table of 2^(ceil(log2 len(c)) + spare) slots: in the first round (spare -1)
    a quarter to a half as many slots as candidates (a fingerprint has several, most often); the losers go
    round again with one bit more each time. Fewer than TABLE_MIN candidates, or those left after four
    rounds, are sorted."""
    m = len(c)
    bits = max(int(np.ceil(np.log2(max(m, 2)))) + spare, 1)
    if m < TABLE_MIN or bits > 40 or spare > 2:
        u = distinct(c)
        return u, least_per_group(group_index(u, c), len(u), key)
    slot = (c >> _U64(64 - bits)).view(np.int64)  # top bits < 2^40: the int64 view is exact and free
    spare_slot = 1 << bits  # where the losers' keys go: never read
    table = np.zeros(spare_slot + 1, dtype=_U64)
    table[slot] = c  # one of a slot's fingerprints wins it
    lost = np.flatnonzero(table[slot] != c)
    slot[lost] = spare_slot
    best = np.full(spare_slot + 1, _EMPTY, dtype=_U64)
    np.minimum.at(best, slot, key)
    del slot
    held = np.flatnonzero(best[:-1] != _EMPTY)
    u, least = table[held], best[held]  # slots in order: the winners sorted
    del table, best, held
    if not len(lost):
        return u, least
    lu, lk = _by_table(c[lost], key[lost], spare + 1)  # no loser equals a winner: its slot's fingerprint differs
    return merge_disjoint(u, least, lu, lk)


def merge_disjoint(u: np.ndarray, a: np.ndarray, v: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted union of the sorted arrays u and v, which share no value, with their companions a and b."""
    at = np.searchsorted(u, v) + np.arange(len(v))
    rest = np.ones(len(u) + len(v), dtype=bool)
    rest[at] = False
    w, ab = np.empty(len(rest), dtype=_U64), np.empty(len(rest), dtype=_U64)
    w[at], ab[at] = v, b
    w[rest], ab[rest] = u, a
    return w, ab


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


def search_sorted(block: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, found) of each query of `q` in the sorted array `block`, by binary search (a query beyond
    the last value is compared with the last; in an empty block every position is 0, none found)."""
    if len(block) == 0:
        return np.zeros(len(q), dtype=np.int64), np.zeros(len(q), dtype=bool)
    i = np.searchsorted(block, q)
    i[i == len(block)] = len(block) - 1
    return i, block[i] == q


def contains_sorted(block: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Membership of each query of `q` in the sorted array `block`, by binary search."""
    if len(block) == 0 or len(q) == 0:
        return np.zeros(len(q), dtype=bool)
    return search_sorted(block, q)[1]


def occurring(block: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Which values of the sorted distinct array `block` occur in `q`: `contains_sorted(q, block)` for sorted
    `q`, but searching the queries' side, which is cheaper where `q` is the shorter array."""
    mark = np.zeros(len(block), dtype=bool)
    if len(block) and len(q):
        i, found = search_sorted(block, q)
        mark[i[found]] = True
    return mark


def find_sorted(u: np.ndarray, c: np.ndarray, index: tuple[np.ndarray, np.uint64] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(index, found): for each value of `c`, its index in the sorted array `u` where found (0
    elsewhere). Values of c need not be in u. `index`: u's `directory`, for repeated calls (its dtype is the
    indices')."""
    c = np.asarray(c, dtype=_U64)
    if len(u) == 0:
        return np.zeros(len(c), dtype=np.int64), np.zeros(len(c), dtype=bool)
    u = np.asarray(u, dtype=_U64)
    if len(u) == 1:
        found = c == u[0]
        return np.zeros(len(c), dtype=np.int64), found
    D, shift = index if index is not None else directory(u)
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


class StoredIndex:
    """The store index of fingerprints, for mapping the edges' targets after a search: the stored states'
    fingerprints `fps` (one sorted run per level) sorted once, the order that sorts them, and a bucket
    directory over the sorted copy, its indices as narrow as `dtype` (int32 below 2^31 states: every array
    made here is memory the kernel faults in afresh, on Kafka nightly more costly than the lookups). Both the
    vector engine and the Spark driver map their targets through it a block at a time, into one array."""

    def __init__(self, fps: np.ndarray, dtype):
        fps = np.asarray(fps, dtype=_U64)
        self.order = np.argsort(fps, kind="stable").astype(dtype)
        self.sorted = fps[self.order]
        self.index = directory(self.sorted, dtype) if len(self.sorted) > 1 else None

    def every(self, c: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The store index of each fingerprint of `c`, every one of which is stored; into `out` if given."""
        # every position is in range; any mode but "raise" writes to `out` without a buffer
        return np.take(self.order, group_index(self.sorted, c, self.index), out=out, mode="clip")

    def found(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(store indices of the stored ones, which of `c` are stored): fingerprints that need not be stored."""
        pos, ok = find_sorted(self.sorted, c, self.index)
        return self.order[pos[ok]], ok
