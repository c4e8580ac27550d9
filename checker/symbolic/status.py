"""What a symbolic engine's per-property status (bmc, k-induction, PDR) means in `check`'s words.

Each status is a finer detail of one of `check`'s property outcomes (`checker.result.OUTCOMES`), and
a run's verdict (`checker.result.VERDICTS`) follows from its properties' outcomes alone:

| status           | outcome  | verdict of the run, if no property ranks higher |
|------------------|----------|-------------------------------------------------|
| `violated`       | violated | violation                                       |
| `cti`            | unknown  | incomplete                                      |
| `unknown`        | unknown  | incomplete                                      |
| `proved`         | holds    | pass                                            |
| `holds-to-depth` | holds    | pass                                            |

(violation ranks above incomplete, incomplete above pass.) `holds-to-depth` K counts as holds
because `bmc --depth K` asks a bounded question, "is there a counterexample within K steps?", and
answers it in full; the status and the depth keep that the claim is bounded. `check --max-depth`
differs: it asks about every reachable state and was cut short, so its outcome is unknown. A
counterexample to induction is not a counterexample: the property may hold, so it is unknown.

The CLI turns the verdict into the exit code (`cli/bmc.py`), the gate judges bmc entries by it
(`reports/gate.py`), and the JSON carries both words (`SymbolicResult.to_json`): this table is the
only place they are decided.
"""
from __future__ import annotations

VIOLATED, CTI, UNKNOWN, PROVED, HOLDS_TO_DEPTH = "violated", "cti", "unknown", "proved", "holds-to-depth"
STATUSES = (VIOLATED, CTI, UNKNOWN, PROVED, HOLDS_TO_DEPTH)
OUTCOME_OF = {VIOLATED: "violated", CTI: "unknown", UNKNOWN: "unknown", PROVED: "holds", HOLDS_TO_DEPTH: "holds"}
VERDICT_OF = {"violated": "violation", "unknown": "incomplete", "holds": "pass"}
RANK = ("violation", "incomplete", "pass")  # the run's verdict is its properties' highest-ranked one


def outcome_of(status: str) -> str:
    """`check`'s word for a symbolic status."""
    return OUTCOME_OF[status]


def verdict_of(statuses) -> str:
    """The run's verdict from its properties' statuses: a violation if any is violated, else incomplete
    if any is not decided (a counterexample to induction, unknown), else pass (none at all: pass)."""
    found = {VERDICT_OF[outcome_of(s)] for s in statuses}
    return next((v for v in RANK if v in found), "pass")
