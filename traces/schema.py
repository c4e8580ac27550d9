"""The versioned trace format: a counterexample (or witness) as a replayable artifact.

A trace names the spec, variant and configuration it came from, then lists its steps: step 0 is
the initial state, in full; each later step names the row (stable id), actor, trigger and
parameters of the action taken and the cells it changed. The last part says which property the
trace is about and the cells that make it false (or, for a witness, true).

`txncheck.trace/2` is what txncheck writes: only step 0 carries the state, and `Trace.from_json`
rebuilds every later step's state from it and the steps' `changed` cells, so `Step.state` is there
for every reader (states are shared between steps where they agree: treat them as read-only).
`txncheck.trace/1` (every step with its full state, and `values` every cell the property reads) is
still read. `trace.schema.json` (shipped beside this module; `trace-1.schema.json` for /1) is the
format as a JSON Schema (draft 2020-12); `load` and `Trace.from_json` validate against it, and every
way a file can fail is a `TraceError` that names the field (`steps[3].changed[0].cell`), what was
expected, and the fix. docs/traces.md describes every field.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field, fields
from importlib import resources

from txncheck.spec.errors import TxncheckError

TRACE_SCHEMA = "txncheck.trace/2"  # what txncheck writes
TRACE_SCHEMA_V1 = "txncheck.trace/1"  # every step with its full state; still read
SCHEMA_FILES = {TRACE_SCHEMA: "trace.schema.json", TRACE_SCHEMA_V1: "trace-1.schema.json"}
SCHEMA_FILE = SCHEMA_FILES[TRACE_SCHEMA]
KINDS = ("violation", "witness", "deadlock", "unrecoverable", "cti", "lasso")  # cti: step 0 need not be initial

# Limits that keep a hostile or broken file from hanging or crashing the reader. The largest trace
# the shipped specs write (Kafka eos, tens of steps) is a few MB and nests 7 levels deep.
MAX_TRACE_BYTES = 64 * 2**20
MAX_NESTING = 32
MAX_INT_DIGITS = 100  # Python refuses int <-> str beyond 4,300 digits; no trace needs more than 20

FIX = "correct that field, or write the trace again with `txncheck check` (docs/traces.md describes the format)"


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
    config: dict          # {"name": ..., "values": {...}, "max_states", "max_depth"[, "overrides"]}
    engine: str
    property: dict        # {"name", "kind", "doc"}
    kind: str             # one of KINDS
    steps: tuple[Step, ...]
    values: dict = field(default_factory=dict)  # the cells that make the property false (a witness: true)
    explanation: str = ""
    symmetry: bool = False
    # provenance (optional, absent from traces written before it): how the spec was loaded (its catalogue
    # name, a spec file's absolute path, or MODULE:ATTR) and the sha256 of its source (spec/loader.py)
    spec_source: str | None = None
    spec_sha256: str | None = None
    # a lasso's loop (`kind == "lasso"`): after the last step the behaviour is back at the state after
    # `loop` steps and repeats the steps after it forever; `loop == length`: it stutters there
    loop: int | None = None
    # the format the trace was read from: a /1 file's `values` are every cell the property reads.
    # Not written (to_json writes /2) and not compared.
    schema: str = field(default=TRACE_SCHEMA, compare=False, repr=False)

    @property
    def length(self) -> int:
        """Number of actions (steps after the initial state)."""
        return len(self.steps) - 1

    def to_json(self) -> dict:
        """The trace as `txncheck.trace/2`: step 0 with its state, later steps with their changes only."""
        # field by field rather than dataclasses.asdict, whose deep copy of every state costs seconds on Kafka
        d = {}
        for f in fields(self):
            if f.name in _PROVENANCE or f.name in ("schema", "loop"):
                continue
            d[f.name] = getattr(self, f.name)
            if f.name == "spec":  # where the spec came from, beside its name; absent when not known
                d.update({k: getattr(self, k) for k in _PROVENANCE if getattr(self, k) is not None})
        d["steps"] = [{f.name: getattr(s, f.name) for f in fields(Step) if k == 0 or f.name != "state"}
                      for k, s in enumerate(self.steps)]
        if self.loop is not None:
            d["loop"] = self.loop
        return {"schema": TRACE_SCHEMA, **d}

    @staticmethod
    def from_json(d: object, source: str = "trace") -> "Trace":
        if not isinstance(d, dict):
            raise TraceError(f"{source}: a trace is a JSON object, not {_json_type(d)}; "
                             "give a trace written by `txncheck check`")
        schema = d.get("schema")
        if not isinstance(schema, str) or schema not in SCHEMA_FILES:
            raise TraceError(f"{source}: unsupported trace schema {show_value(schema)}; "
                             f"this txncheck reads {TRACE_SCHEMA} (and {TRACE_SCHEMA_V1})")
        _check_structure(d, source)
        validate(d, source, schema)
        for i, s in enumerate(d["steps"]):
            if s["index"] != i:
                raise TraceError(f"{source}: malformed trace: {field_path(('steps', i, 'index'))}: expected {i}, "
                                 f"got {show_value(s['index'])}: steps are numbered 0, 1, 2, ... in order; {FIX}")
        loop, n = d.get("loop"), len(d["steps"]) - 1
        if (d["kind"] == "lasso") != (loop is not None):
            raise TraceError(f"{source}: malformed trace: loop: a lasso trace (kind \"lasso\") has a loop and no other "
                             f"kind has one, but kind is {show_value(d['kind'])} and loop is {show_value(loop)}; {FIX}")
        if loop is not None and loop > n:
            raise TraceError(f"{source}: malformed trace: loop: {loop} is past the last step ({n}); the loop is "
                             f"the step whose state the behaviour returns to; {FIX}")
        states = [s["state"] for s in d["steps"]] if schema == TRACE_SCHEMA_V1 else _states(d["steps"], source)
        steps = tuple(Step(index=s["index"], row=s["row"], actor=s["actor"], trigger=s["trigger"], label=s["label"],
                           params=dict(s["params"]), tags=tuple(s["tags"]), state=state,
                           changed=tuple(dict(c) for c in s["changed"])) for s, state in zip(d["steps"], states))
        return Trace(spec=d["spec"], variant=d["variant"], config=dict(d["config"]), engine=d["engine"],
                     property=dict(d["property"]), kind=d["kind"], steps=steps, values=dict(d["values"]),
                     explanation=d["explanation"], symmetry=d["symmetry"], spec_source=d.get("spec_source"),
                     spec_sha256=d.get("spec_sha256"), loop=d.get("loop"), schema=schema)


_PROVENANCE = ("spec_source", "spec_sha256")  # optional fields of /2, written only when known


# ---- the states of a /2 trace ------------------------------------------------------------------
_CELL = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])*)")


def cell_path(cell: str) -> tuple[str, ...] | None:
    """`pc_seq[inc2][p2]` -> `("pc_seq", "inc2", "p2")`: where a cell is in a state by named var
    (spec/state_text.render_state); None if `cell` is not written as a cell name."""
    m = _CELL.fullmatch(cell)
    if m is None:
        return None
    return (m.group(1),) + tuple(re.findall(r"\[([^\[\]]*)\]", m.group(2)))


def _states(steps: list, source: str) -> list[dict]:
    """Each step's state: step 0's, then each step's `changed` cells set to their `after` value. A
    state shares with the one before it every var (and index level) the step did not change."""
    state = steps[0]["state"]
    out = [state]
    for k, s in enumerate(steps[1:], start=1):
        new = dict(state)
        fresh = {id(new)}  # the objects this step copied, which it may write
        for j, c in enumerate(s["changed"]):
            path = cell_path(c["cell"])
            node = new
            for n, key in enumerate(path or ()):
                child = node.get(key)
                last = n == len(path) - 1
                if last != (not isinstance(child, dict)) or child is None:
                    raise TraceError(f"{source}: malformed trace: {field_path(('steps', k, 'changed', j, 'cell'))}: "
                                     f"{_not_a_cell(path, n, node)}; a cell is a var and its indices as "
                                     f"steps[0].state names them, e.g. rmState[r1]; {FIX}")
                if last:
                    node[key] = c["after"]
                    break
                if id(child) not in fresh:
                    child = node[key] = dict(child)
                    fresh.add(id(child))
                node = child
            else:  # not written as a cell name at all
                raise TraceError(f"{source}: malformed trace: {field_path(('steps', k, 'changed', j, 'cell'))}: "
                                 f"expected a cell name such as rmState[r1], got {show_value(c['cell'])}; {FIX}")
        out.append(new)
        state = new
    return out


def _cell_name(path) -> str:
    return path[0] + "".join(f"[{p}]" for p in path[1:])


def _not_a_cell(path, n: int, node: dict) -> str:
    here = show_value(_cell_name(path[:n + 1]))
    if path[n] not in node:
        return f"the state (steps[0].state) has no {here}"
    if isinstance(node[path[n]], dict):
        return f"{here} is an array, not one cell"
    return f"{here} is one cell, with no index {show_value(path[n + 1])}"


# ---- the JSON Schema ------------------------------------------------------------------------
@functools.cache
def schema_document(version: str = TRACE_SCHEMA) -> dict:
    """The trace format as a JSON Schema (draft 2020-12), from the package's trace.schema.json
    (`txncheck.trace/1`: trace-1.schema.json)."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILES[version]).read_text(encoding="utf-8"))


@functools.cache
def _validator(version: str = TRACE_SCHEMA):
    from jsonschema import Draft202012Validator, validators

    # JSON Schema counts 1.0 as an integer and true as neither; txncheck writes integers only, and a
    # trace that says 1.0 or 1 where the spec has TRUE must not compare equal to what the spec gives
    def is_int(_, x):
        return isinstance(x, int) and not isinstance(x, bool)

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        "integer": is_int,
        "number": lambda c, x: is_int(c, x) or (isinstance(x, float) and math.isfinite(x)),
        "array": lambda _, x: isinstance(x, (list, tuple)),  # Trace.to_json() keeps tuples
    })
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    return cls(schema_document(version))


def validate(d: dict, source: str = "trace", version: str = TRACE_SCHEMA) -> None:
    """Raise a TraceError naming the first field of `d` that the schema of `version` rejects."""
    from jsonschema.exceptions import best_match

    err = best_match(_validator(version).iter_errors(d))
    if err is not None:
        raise TraceError(f"{source}: malformed trace: {_explain(err, version)}; {FIX}")


def field_path(parts) -> str:
    """`("steps", 3, "changed", 0, "cell")` -> `steps[3].changed[0].cell`; odd keys are quoted."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,59}", p):
            out += f".{p}" if out else p
        else:
            out += f"[{show_value(p)}]"
    return out or "the trace"


def _explain(err, version: str = TRACE_SCHEMA) -> str:
    path = list(err.absolute_path)
    where = field_path(path)
    what = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
    about = f"; it is {what}" if what else ""
    v, inst = err.validator, err.instance
    if v == "required":
        missing = next(k for k in err.validator_value if k not in inst)
        sub = err.schema.get("properties", {}).get(missing, {})
        desc = sub.get("description") or _ref_description(sub, version)
        return f"{field_path(path + [missing])} is missing" + (f"; it is {desc}" if desc else "")
    if v == "additionalProperties":
        extra = next(k for k in inst if k not in err.schema.get("properties", {}))
        return (f"{field_path(path + [extra])} is not a field of {version} "
                f"({where if path else 'a trace'} has only {', '.join(err.schema.get('properties', {}))})")
    if v == "type":
        types = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return f"{where}: expected {_or(_TYPE_WORDS[t] for t in types)}, got {_describe(inst)}{about}"
    if v == "const":
        return f"{where}: expected {show_value(err.validator_value)}, got {_describe(inst)}{about}"
    if v == "enum":
        choices = ", ".join(map(show_value, err.validator_value))
        return f"{where}: expected one of {choices}, got {_describe(inst)}{about}"
    if v in ("maxItems", "maxProperties") and err.validator_value == 0:
        return f"{where}: must be empty, got {_describe(inst)}{about}"
    if v in ("minItems", "minLength", "minProperties") and err.validator_value == 1:
        return f"{where}: must not be empty{about}"
    if v == "minimum":
        return f"{where}: expected at least {err.validator_value}, got {_describe(inst)}{about}"
    return f"{where}: {err.message[:200]}{about}"


def _ref_description(sub: dict, version: str = TRACE_SCHEMA) -> str:
    ref = sub.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return schema_document(version)["$defs"].get(ref[len("#/$defs/"):], {}).get("description", "")
    return ""


_TYPE_WORDS = {"null": "null", "boolean": "true or false", "integer": "an integer", "number": "a number",
               "string": "a string", "array": "an array", "object": "an object"}


def _or(words) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# ---- values the reader could not take as they are -------------------------------------------
class _Unfit:
    """A JSON number Python cannot hold as written; it stays in the document for the schema to
    reject with its path (no field of a trace takes one)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.describe()


class _HugeInt(_Unfit):
    def describe(self) -> str:
        return f"a {len(self.text.lstrip('-')):,}-digit integer"


class _NonFinite(_Unfit):
    def describe(self) -> str:
        return f"{_clip(self.text)} (not a finite number; JSON has none)"


class _DupKeys(dict):
    """An object in which a key appears twice: json keeps the last value, a reader may see the first."""

    duplicate: str = ""


def _parse_int(text: str):
    return int(text) if len(text) <= MAX_INT_DIGITS else _HugeInt(text)


def _parse_float(text: str):
    x = float(text)
    return x if math.isfinite(x) else _NonFinite(text)


def _pairs(pairs):
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    seen: set = set()
    dup = next(k for k, _ in pairs if k in seen or seen.add(k))
    d = _DupKeys(d)
    d.duplicate = dup
    return d


def _json_type(x) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "a boolean"
    if isinstance(x, (int, float, _Unfit)):
        return "a number"
    if isinstance(x, str):
        return "a string"
    if isinstance(x, (list, tuple)):
        return "an array"
    return "an object" if isinstance(x, dict) else type(x).__name__


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "..."


def show_value(x) -> str:
    """A value from the file, quoted and cut short (it may be long or hold control characters)."""
    if isinstance(x, _Unfit):
        return x.describe()
    if isinstance(x, (list, tuple, dict)):
        return _clip(json.dumps(x, ensure_ascii=True, default=repr))
    if isinstance(x, int) and not isinstance(x, bool) and len(str(x)) > 20:
        return f"a {len(str(abs(x))):,}-digit integer"
    return _clip(json.dumps(x, ensure_ascii=True))


def _describe(x) -> str:
    if isinstance(x, (list, tuple)):
        return f"an array of {len(x)} item{'s' if len(x) != 1 else ''}" if x else "an empty array"
    if isinstance(x, dict):
        return "an object" if x else "an empty object"
    if isinstance(x, float):
        return f"{show_value(x)} (a number with a fraction or exponent; write integers without one)"
    if isinstance(x, str):
        return f"the string {show_value(x)}"
    return show_value(x)


def _check_structure(d: dict, source: str) -> None:
    """Nesting depth and duplicate keys, checked without recursion (before the schema, whose
    validator recurses): the path of the first offence."""
    stack = [(d, ())]
    while stack:
        x, path = stack.pop()
        if len(path) > MAX_NESTING:
            raise TraceError(f"{source}: malformed trace: {field_path(path)}: nested more than {MAX_NESTING} "
                             "levels deep (a trace nests at most 8: steps, a step, its state, a var and its "
                             f"indices); {FIX}")
        if isinstance(x, _DupKeys):
            raise TraceError(f"{source}: malformed trace: {field_path(path + (x.duplicate,))} appears twice in one "
                             "object (a reader may see the first, txncheck would read the last); keep one")
        if isinstance(x, dict):
            stack.extend((v, path + (k,)) for k, v in reversed(list(x.items())))
        elif isinstance(x, (list, tuple)):
            stack.extend((v, path + (i,)) for i, v in reversed(list(enumerate(x))))


# ---- files ----------------------------------------------------------------------------------
def read_trace_bytes(path: str) -> bytes:
    """The file's bytes, refusing what is not a regular file or is larger than any trace (a device
    such as /dev/zero, or a pipe, would be read forever)."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise TraceError(f"trace file {path} does not exist") from None
    except IsADirectoryError:
        raise TraceError(f"{path} is a directory; give the path of a trace .json file") from None
    except PermissionError:
        raise TraceError(f"cannot read {path}: permission denied; give a trace file you can read") from None
    except OSError as err:
        raise TraceError(f"cannot open {path}: {err.strerror}; give the path of a trace .json file") from None
    st = os.fstat(fd)
    problem = None
    if stat.S_ISDIR(st.st_mode):
        problem = f"{path} is a directory; give the path of a trace .json file"
    elif not stat.S_ISREG(st.st_mode):
        problem = f"{path} is not a regular file (a device, pipe or socket); give the path of a trace .json file"
    elif st.st_size > MAX_TRACE_BYTES:
        problem = (f"{path} has {st.st_size:,} bytes, more than a trace can have ({MAX_TRACE_BYTES:,}); "
                   "give a trace written by `txncheck check`")
    if problem:
        os.close(fd)
        raise TraceError(problem)
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_TRACE_BYTES + 1)
        except OSError as err:
            raise TraceError(f"cannot read {path}: {err.strerror}; give a readable trace .json file") from None
    if len(data) > MAX_TRACE_BYTES:  # it grew while we read it
        raise TraceError(f"{path} has more than {MAX_TRACE_BYTES:,} bytes, more than a trace can have; "
                         "give a trace written by `txncheck check`")
    return data


def parse_trace_json(data: bytes, source: str) -> object:
    """The JSON document in `data`. Numbers Python cannot hold as written are kept as markers for
    the schema to reject with their path; duplicate keys are marked for `_check_structure`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TraceError(f"{source} is not UTF-8 text (byte {err.start:,}); it is not a text file; "
                         "give a trace written by `txncheck check`") from None
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_NonFinite,
                          object_pairs_hook=_pairs)
    except json.JSONDecodeError as err:
        raise TraceError(f"{source} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); "
                         "give a trace written by `txncheck check`") from None
    except RecursionError:
        line, col = _too_deep_at(text)
        raise TraceError(f"{source}: malformed trace: arrays or objects nest more than {MAX_NESTING} levels deep "
                         f"at line {line}, column {col} (a trace nests at most 8: steps, a step, its state, a var "
                         f"and its indices); {FIX}") from None


def _too_deep_at(text: str) -> tuple[int, int]:
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        elif c in "]}":
            depth -= 1
    return 1, 1


def load(path: str) -> Trace:
    return Trace.from_json(parse_trace_json(read_trace_bytes(path), path), path)
