"""What every explorer returns: the contract between engines and the shared result machinery.

Explorers (scalar, vector, spark) differ only in how they expand a frontier; when to stop is
decided once, by `checker/levels.py`. They all produce a `SearchOutcome` with identical content
for the same model and options, because the choices below are defined independently of
expansion order:

- States are stored in BFS level order; `level_sizes[d]` states have depth d.
- Each state's parent link is the least (parent fingerprint, action id) among its in-edges from
  the previous level (unsigned comparison), so traces do not depend on expansion order.
- A property's counterexample (or witness) is, among the states of the first level where it is
  violated (witnessed), the one with the least fingerprint.
- With symmetry, the stored fingerprint is the least over the state's orbit (and the stored
  frontier state is that orbit member).
- Level 0 (the initial states) is checked before any expansion. Expanding level d yields level
  d+1; afterwards the engine records deadlocks among level-d states and always-violations and
  sometimes-witnesses among level-(d+1) states, keeping level d+1 in full. With
  `stop_on_violation`, the search stops there if anything new was violated (stop_reason
  "violation"; deadlock counts as a violation).
- `max_depth` D: level D is expanded only to learn whether it has unvisited successors; they are
  not stored, and if there is one the search is incomplete (stop_reason "max_depth").
- `max_states` N: after a level is added, if the count is >= N and the new level is non-empty,
  the search stops incomplete (stop_reason "max_states").
- Out of memory (the vector engine): the levels fully checked before the allocation failed are kept,
  the search is incomplete (stop_reason "memory"); engines that cannot keep them raise.
- `generated` counts enabled (state, action) pairs expanded, including level D under max_depth.
- Edges (for the properties judged on the state graph: recoverable, eventually, leads_to) list every
  expanded transition (src, dst, action) whose destination is stored. Only a complete search's graph
  is judged, so a search that stopped (at a violation, a bound, out of memory) returns none, whatever
  it collected. An engine that keeps its edges elsewhere (Spark) judges the recoverable properties
  there and returns the chosen states in `unrecoverable` instead, chosen as `recoverable.check`
  chooses them; its `edges` are then only those the properties in `edges_for` read (out of the states
  where their goal fails), and no other property is judged on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ExploreOptions:
    """How to search. Frozen; passed explicitly to every engine."""

    symmetry: bool = False
    max_states: int | None = None
    max_depth: int | None = None
    stop_on_violation: bool = True  # False (--continue): find the shortest violation of every property
    check_deadlock: bool = False
    properties: tuple[str, ...] | None = None  # None: every property of the spec
    progress: bool = False
    progress_interval: float = 5.0
    memory_budget: int | None = None  # bytes; the vector engine spills beyond it (resources.split_budget)
    visited_budget: int | None = None  # bytes; without memory_budget, the vector engine spills only its visited set
    workdir: str | None = None  # where engines may spill or checkpoint
    chunk_states: int | None = None  # vector engine: frontier states per expansion chunk (tests); None: from the budget


@dataclass
class SearchOutcome:
    fps: np.ndarray            # uint64 [n], canonical fingerprints in BFS order
    parent: np.ndarray         # int64 [n], index of the parent state, -1 for initial states
    action: np.ndarray         # int32 [n], ground action id that produced the state, -1 initially
    level_sizes: list[int]
    generated: int             # successor states generated (enabled action applications)
    fired: np.ndarray          # int64 [n_actions], times each ground action was enabled
    violations: dict[str, int] = field(default_factory=dict)  # always-property -> state index
    witnesses: dict[str, int] = field(default_factory=dict)   # sometimes-property -> state index
    deadlock: int | None = None  # state index of the chosen deadlock, when checked
    goal_masks: dict[str, np.ndarray] = field(default_factory=dict)  # recoverable -> bool [n] goal
    when_masks: dict[str, np.ndarray] = field(default_factory=dict)  # recoverable -> bool [n] when
    edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # (src, dst, action): complete searches only
    edges_for: tuple[str, ...] | None = None  # None: every edge; else only those these properties read
    # recoverable properties an engine judged where its edges are (Spark: on the executors), on a
    # complete search: property -> the chosen state that cannot recover, None when it holds
    unrecoverable: dict[str, int | None] = field(default_factory=dict)
    complete: bool = True
    stop_reason: str | None = None  # "violation", "max_states", "max_depth", "deadlock", "memory"
    elapsed: float = 0.0
    peak_memory: int = 0       # bytes (peak RSS of the process)
    store_bytes: int = 0       # bytes held by the visited store (fps, parents, actions, edges)
    engine: str = ""
    extra: dict = field(default_factory=dict)  # engine-specific statistics

    @property
    def distinct(self) -> int:
        return int(len(self.fps))

    @property
    def depth(self) -> int:
        return len(self.level_sizes) - 1

    def depth_of(self, index: int) -> int:
        acc = 0
        for d, n in enumerate(self.level_sizes):
            acc += n
            if index < acc:
                return d
        raise IndexError(index)

    def path(self, index: int) -> list[int]:
        """Action ids from an initial state to state `index`."""
        acts = []
        i = index
        while self.parent[i] >= 0:
            acts.append(int(self.action[i]))
            i = int(self.parent[i])
        return acts[::-1]

    def root(self, index: int) -> int:
        i = index
        while self.parent[i] >= 0:
            i = int(self.parent[i])
        return i


def selected_properties(model, options: ExploreOptions):
    """The model's properties that `options.properties` selects (all when it is None)."""
    if options.properties is None:
        return model.properties
    names = set(options.properties)
    return tuple(p for p in model.properties if p.name in names)
