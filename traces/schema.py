"""The versioned trace format: a counterexample (or witness) as a replayable artifact.

A trace names the spec, variant and configuration it came from, then lists its steps: step 0 is
the initial state; each later step names the row (stable id), actor, trigger and parameters of
the action taken, the full state by named var, and the cells that changed. The last part says
which property the trace is about and the values that violate (or witness) it.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field

from txncheck.spec.errors import TxncheckError

TRACE_SCHEMA = "txncheck.trace/1"
KINDS = ("violation", "witness", "deadlock", "unrecoverable", "cti")  # cti: step 0 need not be initial


class TraceError(TxncheckError):
    """A trace file is unreadable, of another schema, or malformed."""


@dataclass(frozen=True)
class Step:
    index: int
    row: str | None
    actor: str | None
    trigger: str | None
    label: str
    params: dict
    tags: tuple[str, ...]
    state: dict
    changed: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Trace:
    spec: str
    variant: str | None
    config: dict          # {"name": ..., "values": {...}}
    engine: str
    property: dict        # {"name", "kind", "doc"}
    kind: str             # one of KINDS
    steps: tuple[Step, ...]
    values: dict = field(default_factory=dict)  # cells the property reads, in the last state
    explanation: str = ""
    symmetry: bool = False

    @property
    def length(self) -> int:
        """Number of actions (steps after the initial state)."""
        return len(self.steps) - 1

    def to_json(self) -> dict:
        d = asdict(self)
        d = {"schema": TRACE_SCHEMA, **d}
        return d

    @staticmethod
    def from_json(d: object, source: str = "trace") -> "Trace":
        if not isinstance(d, dict):
            raise TraceError(f"{source}: a trace is a JSON object, not {type(d).__name__}")
        schema = d.get("schema")
        if schema != TRACE_SCHEMA:
            raise TraceError(f"{source}: unsupported trace schema {schema!r}; this txncheck reads {TRACE_SCHEMA}")
        try:
            steps = tuple(Step(index=int(s["index"]), row=s.get("row"), actor=s.get("actor"),
                               trigger=s.get("trigger"), label=str(s["label"]), params=dict(s.get("params") or {}),
                               tags=tuple(s.get("tags") or ()), state=dict(s["state"]),
                               changed=tuple(s.get("changed") or ())) for s in d["steps"])
            kind = d["kind"]
            if kind not in KINDS:
                raise TraceError(f"{source}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
            t = Trace(spec=str(d["spec"]), variant=d.get("variant"), config=dict(d["config"]),
                      engine=str(d.get("engine", "")), property=dict(d["property"]), kind=kind, steps=steps,
                      values=dict(d.get("values") or {}), explanation=str(d.get("explanation", "")),
                      symmetry=bool(d.get("symmetry", False)))
        except TraceError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise TraceError(f"{source}: malformed trace ({type(err).__name__}: {err}); "
                             "it must have spec, config, property, kind and steps with label and state") from None
        if not steps:
            raise TraceError(f"{source}: a trace needs at least the initial state")
        if "name" not in t.property:
            raise TraceError(f"{source}: property must name the property")
        return t


def write_json_atomic(path: str, data: object) -> None:
    """Write JSON to `path` via a temporary file and a rename, so readers never see half a file."""
    write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def write_text_atomic(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save(trace: Trace, path: str) -> None:
    write_json_atomic(path, trace.to_json())


def load(path: str) -> Trace:
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise TraceError(f"trace file {path} does not exist") from None
    except IsADirectoryError:
        raise TraceError(f"{path} is a directory; give the path of a trace .json file") from None
    except json.JSONDecodeError as err:
        raise TraceError(f"{path} is not valid JSON (line {err.lineno}: {err.msg}); "
                         "give a trace written by `txncheck check`") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path} is not a text file; give a trace written by `txncheck check`") from None
    return Trace.from_json(data, path)
