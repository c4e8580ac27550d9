"""CheckResult: the versioned JSON contract of a check. Text is rendered from it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

RESULT_SCHEMA = "txncheck.result/1"
VERDICTS = ("pass", "violation", "incomplete", "error")
OUTCOMES = ("holds", "violated", "witnessed", "unwitnessed", "unknown")  # a property's, in PropertyOutcome


@dataclass(frozen=True)
class PropertyOutcome:
    name: str
    kind: str
    outcome: str          # one of OUTCOMES
    doc: str = ""
    depth: int | None = None      # length of the counterexample / witness trace
    trace: str | None = None      # path of its trace file, relative to the result's directory
    expected_to_break: bool = False


@dataclass(frozen=True)
class CheckResult:
    spec: str
    variant: str | None
    config: dict
    engine: str
    verdict: str
    complete: bool
    stop_reason: str | None
    stats: dict
    properties: tuple[PropertyOutcome, ...]
    coverage: tuple[dict, ...] = ()
    unfired_rows: tuple[str, ...] = ()    # rows the config allows that never fired in the search
    inapplicable_rows: tuple[str, ...] = ()  # rows that cannot fire under the config (checker/applicable.py)
    deadlock: dict | None = None
    options: dict = field(default_factory=dict)
    not_applicable: tuple[str, ...] = ()  # properties the config leaves out (Property.applies)
    error: str | None = None
    traces: dict = field(default_factory=dict, compare=False, repr=False)  # name -> Trace (not serialised)

    def outcome_of(self, name: str) -> PropertyOutcome:
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def fired_rows(self) -> tuple[str, ...]:
        """The rows that fired at least once in the search, in table order."""
        return tuple(c["row"] for c in self.coverage if c["fired"])

    @property
    def violated(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.properties if p.outcome in ("violated", "unwitnessed"))

    def to_json(self) -> dict:
        # not dataclasses.asdict: it would deep-copy every trace (`traces`) only to drop them
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "traces"}
        d["properties"] = [asdict(p) for p in self.properties]
        return {"schema": RESULT_SCHEMA, **d}
