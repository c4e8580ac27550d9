"""The gate file: which checks a CI gate runs and what each must show, read and validated.

`txncheck.toml` holds `[[entry]]` tables; a `pyproject.toml` holds them as `[[tool.txncheck.gate.entry]]`.
An entry's `kind` says which command it stands for: `check` (the default, `txncheck check`), `tables`
(`txncheck tables --verify`) or `bmc` (`txncheck bmc --depth K` / `--induction K`); each kind has its own
keys besides the common ones. Every entry is validated the way its command validates its command line:
its `ModelRequest` is built and grounded, so a misspelt spec, config, constant or variant gets the same
message the command gives. Any problem is one `GateFileError` naming the file, the line of the entry,
the key and the fix, before anything runs.
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

from txncheck.checker import engines, symmetry
from txncheck.spec import catalog, loader
from txncheck.spec.errors import ConfigError, TxncheckError
from txncheck.spec.request import ModelRequest

EXPECTS = ("pass", "violation")
KINDS = ("check", "tables", "bmc")
TABLE_CHECKS = ("determinism", "completeness", "type", "conformance")  # checker.symbolic.tables.CHECKS
SOLVERS = ("fd", "smt")
# key -> (accepted types, what to write): the message for a wrong type quotes the second part
KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), 'a string, e.g. name = "twophase-tiny"'),
    "spec": ((str,), 'a shipped spec name, a spec file or MODULE:ATTRIBUTE, e.g. spec = "twophase"'),
    "config": ((str,), 'a config name, e.g. config = "tiny"'),
    "set": ((dict,), "a table of constants, e.g. set = { rm = 4 }"),
    "variant": ((str,), 'a variant name, e.g. variant = "commit-without-all-prepared"'),
    "engine": ((str,), f"one of {', '.join(engines.names())}"),
    "expect": ((str,), 'expect = "pass" or expect = "violation"'),
    "properties": ((list,), 'a list of property names, e.g. properties = ["ATOM-2"]'),
    "distinct": ((int,), "a whole number of distinct states, e.g. distinct = 288"),
    "depth": ((int,), "a whole number of steps, e.g. depth = 10"),
    "budget": ((int, float), "seconds, e.g. budget = 60"),
    "continue": ((bool,), "true or false"),
    "symmetry": ((bool,), "true or false"),
    "deadlock": ((bool,), "true or false"),
    "kind": ((str,), f"one of {', '.join(KINDS)}, e.g. kind = \"bmc\""),
    "note": ((str,), 'a string shown with the entry in the reports, e.g. note = "TLC\'s count for 3 RMs"'),
    "max_memory": ((int,), "a whole number of MiB, e.g. max_memory = 2048"),
    "induction": ((int,), "the largest k of k-induction, e.g. induction = 2"),
    "checks": ((list,), f"a list of table checks, e.g. checks = [\"determinism\"]; from {', '.join(TABLE_CHECKS)}"),
    "tables": ((list,), 'a list of table names (actors), e.g. tables = ["producer"]'),
    "assume_invariants": ((bool,), "true or false"),
    "solver": ((str,), 'solver = "fd" or solver = "smt"'),
    "lemmas": ((bool,), "true or false"),
}
COMMON_KEYS = ("name", "spec", "config", "set", "variant", "kind", "expect", "budget", "max_memory", "note")
# the keys each kind takes besides the common ones (in a bmc entry `depth` is the bound, as `bmc --depth`)
KIND_KEYS = {
    "check": ("engine", "properties", "distinct", "depth", "continue", "symmetry", "deadlock"),
    "tables": ("checks", "tables", "assume_invariants"),
    "bmc": ("depth", "induction", "properties", "solver", "lemmas"),
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=-]*\Z")  # an entry's name is its folder under --out


class GateFileError(ConfigError):
    """A gate file that cannot be run (exit 2): the message names the line, the key and the fix."""


@dataclass(frozen=True)
class GateEntry:
    name: str
    spec: str
    config: str | None = None
    overrides: tuple[tuple[str, str], ...] = ()
    variant: str | None = None
    engine: str = engines.DEFAULT_ENGINE
    expect: str = "pass"
    properties: tuple[str, ...] = ()     # expect = "violation": each must be violated
    distinct: int | None = None          # golden counts
    depth: int | None = None
    budget: float | None = None          # seconds of wall time
    keep_going: bool = False             # `continue`: find every property's shortest violation
    symmetry: bool = False
    deadlock: bool = False
    line: int = 0                        # where the entry starts in the gate file (annotations point there)
    breaks: tuple[str, ...] = field(default=(), compare=False)  # the variant's own `breaks`
    kind: str = "check"                  # check | tables | bmc (KINDS)
    note: str = ""                       # shown with the entry in the summary, annotations and JUnit
    max_memory: int | None = None        # MiB: the entry's process is bounded to it
    bound: int | None = None             # bmc: `depth` of the gate file, as `bmc --depth K`
    induction: int | None = None         # bmc: as `bmc --induction K`
    solver: str | None = None            # bmc: fd or smt (default: bmc's own per mode)
    lemmas: bool = False                 # bmc: as `bmc --lemmas`
    checks: tuple[str, ...] = ()         # tables: as `tables --check` (default: every check)
    tables: tuple[str, ...] = ()         # tables: as `tables --table` (default: every table)
    assume_invariants: bool = False      # tables: as `tables --assume-invariants`

    @property
    def command(self) -> str:
        """The command the entry stands for, as a user would type its mode (reports show it)."""
        if self.kind == "tables":
            return "tables --verify"
        if self.kind == "bmc":
            return f"bmc --induction {self.induction}" if self.induction is not None else f"bmc --depth {self.bound}"
        return "check"

    def request(self) -> ModelRequest:
        return ModelRequest.of(self.spec, self.config, dict(self.overrides), self.variant)


@dataclass(frozen=True)
class GateFile:
    path: str
    entries: tuple[GateEntry, ...]

    def only(self, names: list[str] | None) -> "GateFile":
        if not names:
            return self
        known = [e.name for e in self.entries]
        for n in names:
            if n not in known:
                raise GateFileError(f"--only {n}: {self.path} has no entry named {n!r}; entries are: {', '.join(known)}")
        return GateFile(self.path, tuple(e for e in self.entries if e.name in names))


def default_path() -> str:
    """`txncheck.toml` if present, else a `pyproject.toml` with a `[tool.txncheck.gate]` table."""
    if os.path.exists("txncheck.toml") or not os.path.exists("pyproject.toml"):
        return "txncheck.toml"
    return "pyproject.toml"


def load(path: str) -> GateFile:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise GateFileError(f"gate file {path} does not exist; create it (see docs/ci.md) or name one: "
                            "txncheck gate PATH") from None
    except OSError as err:
        raise GateFileError(f"gate file {path} cannot be read ({err.strerror})") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise GateFileError(f"{path} is not UTF-8 text; save it as UTF-8") from None
    except tomllib.TOMLDecodeError as err:
        raise GateFileError(f"{path} is not valid TOML: {err}") from None
    where = path
    if os.path.basename(path) == "pyproject.toml":
        data = data.get("tool", {}).get("txncheck", {}).get("gate")
        where = f"{path} [tool.txncheck.gate]"
        if data is None:
            raise GateFileError(f"{path} has no [tool.txncheck.gate] table; add [[tool.txncheck.gate.entry]] "
                                "tables (see docs/ci.md) or put them in txncheck.toml")
    unknown = sorted(set(data) - {"entry"})
    if unknown:
        raise GateFileError(f"{where}: unknown top-level key {unknown[0]!r}; a gate file holds only [[entry]] tables")
    entries = data.get("entry")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise GateFileError(f"{where}: no entries; add at least one [[entry]] table with name, spec and expect")
    lines = _entry_lines(text)
    out, seen = [], {}
    for i, raw_entry in enumerate(entries):
        line = lines[i] if i < len(lines) else 0
        entry = _entry(raw_entry, i, line, path)
        if entry.name in seen:
            raise GateFileError(f"{path}:{line}: entry {entry.name!r} is named twice (also at line {seen[entry.name]}); "
                                "names must be unique (each is a folder under --out)")
        seen[entry.name] = line
        out.append(entry)
    return GateFile(path, tuple(out))


def _entry_lines(text: str) -> list[int]:
    """The line of each `[[entry]]` header, in order (tomllib keeps no positions)."""
    header = re.compile(r"^\s*\[\[\s*(?:tool\.txncheck\.gate\.)?entry\s*\]\]")
    return [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]


def _entry(raw: dict, index: int, line: int, path: str) -> GateEntry:
    label = f"entry {raw['name']!r}" if isinstance(raw.get("name"), str) else f"entry #{index + 1}"
    at = f"{path}:{line}: {label}"

    def fail(msg: str) -> GateFileError:
        return GateFileError(f"{at}: {msg}")

    for key in sorted(raw):
        if key not in KEYS:
            raise fail(f"unknown key {key!r}; known keys are: {', '.join(KEYS)}")
        types, how = KEYS[key]
        value = raw[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise fail(f"{key} must be {how}, not {type(value).__name__} {value!r}")
    kind = raw.get("kind", "check")
    if kind not in KINDS:
        raise fail(f"unknown kind {kind!r}; choose check (txncheck check, the default), tables (txncheck tables "
                   "--verify) or bmc (txncheck bmc --depth K / --induction K)")
    allowed = COMMON_KEYS + KIND_KEYS[kind]
    for key in sorted(raw):
        if key not in allowed:
            owners = [k for k in KINDS if key in KIND_KEYS[k]]
            raise fail(f"key {key!r} does not apply to a {kind} entry (it is for kind = "
                       f"{' or '.join(map(repr, owners))}); a {kind} entry takes: {', '.join(allowed)}")
    for key in ("name", "spec", "expect"):
        if key not in raw:
            raise fail(f"missing key {key!r}; every entry needs name, spec and expect")
    name = raw["name"]
    if not _NAME.match(name):
        raise fail("name must be letters, digits, '.', '_', '-' or '=' (it is the entry's folder under --out)")
    if raw["expect"] not in EXPECTS:
        raise fail(f"expect must be \"pass\" or \"violation\", not {raw['expect']!r}")
    if raw.get("engine", engines.DEFAULT_ENGINE) not in engines.names():
        raise fail(f"unknown engine {raw['engine']!r}; choose one of {', '.join(engines.names())}")
    if not engines.engine_named(raw.get("engine", engines.DEFAULT_ENGINE)).in_process:
        raise fail(f"engine {raw['engine']!r} is not supported in a gate entry; use vector or scalar")
    for key in ("distinct", "depth"):
        if key in raw and raw[key] < 0:
            raise fail(f"{key} must be 0 or more, not {raw[key]}")
    if "budget" in raw and raw["budget"] <= 0:
        raise fail(f"budget must be a positive number of seconds, not {raw['budget']}")
    if "max_memory" in raw and raw["max_memory"] < 1:
        raise fail(f"max_memory must be a positive number of MiB, not {raw['max_memory']}")
    props = raw.get("properties", [])
    if not all(isinstance(p, str) for p in props):
        raise fail(f"properties must be {KEYS['properties'][1]}")
    if props and raw["expect"] != "violation":
        raise fail('properties names what must be violated, so it needs expect = "violation"; drop it or change expect')
    for k, v in raw.get("set", {}).items():
        if not isinstance(v, (str, int, bool)):
            raise fail(f"set.{k} must be a number, string or boolean, not {type(v).__name__}")
    for key in ("checks", "tables"):
        if not all(isinstance(x, str) for x in raw.get(key, [])):
            raise fail(f"{key} must be {KEYS[key][1]}")
    unknown_checks = [c for c in raw.get("checks", []) if c not in TABLE_CHECKS]
    if unknown_checks:
        raise fail(f"unknown table check {unknown_checks[0]!r}; choose from {', '.join(TABLE_CHECKS)}")
    if "checks" in raw and not raw["checks"]:
        raise fail(f"checks is empty, so nothing would be checked; drop it (every check) or name some of "
                   f"{', '.join(TABLE_CHECKS)}")
    if kind == "bmc":
        if ("depth" in raw) == ("induction" in raw):
            raise fail("a bmc entry needs exactly one of depth = K (bounded model checking up to K steps, as "
                       "bmc --depth K) and induction = K (k-induction, as bmc --induction K)")
        if "induction" in raw and raw["induction"] < 1:
            raise fail(f"induction must be 1 or more (k-induction for k = 1..K), not {raw['induction']}")
        if raw.get("solver", "fd") not in SOLVERS:
            raise fail(f"unknown solver {raw['solver']!r}; choose fd (z3's finite-domain solver) or smt")
    spec = raw["spec"]
    if loader.kind_of(spec) == loader.FILE and not os.path.isabs(os.path.expanduser(spec)):
        spec = os.path.join(os.path.dirname(os.path.abspath(path)), spec)  # relative to the gate file
    bmc = kind == "bmc"
    entry = GateEntry(
        name=name, spec=spec, config=raw.get("config"),
        overrides=tuple(sorted((k, str(int(v)) if isinstance(v, bool) else str(v)) for k, v in raw.get("set", {}).items())),
        variant=raw.get("variant"), engine=raw.get("engine", engines.DEFAULT_ENGINE), expect=raw["expect"],
        properties=tuple(props), distinct=raw.get("distinct"), depth=None if bmc else raw.get("depth"),
        budget=float(raw["budget"]) if "budget" in raw else None, keep_going=raw.get("continue", False),
        symmetry=raw.get("symmetry", False), deadlock=raw.get("deadlock", False), line=line,
        kind=kind, note=raw.get("note", ""), max_memory=raw.get("max_memory"),
        bound=raw.get("depth") if bmc else None, induction=raw.get("induction"), solver=raw.get("solver"),
        lemmas=raw.get("lemmas", False), checks=tuple(raw.get("checks", ())), tables=tuple(raw.get("tables", ())),
        assume_invariants=raw.get("assume_invariants", False))
    return _grounded(entry, fail)


def _grounded(entry: GateEntry, fail) -> GateEntry:
    """Ground the entry's request as `check` would: an unknown name is caught here, not mid-gate."""
    if loader.kind_of(entry.spec) == "unknown":
        raise fail(f"unknown spec {entry.spec!r}; shipped specs are: {', '.join(catalog.names())} "
                   "(or a spec file's path, e.g. ./protocols/fencing.py, or MODULE:ATTRIBUTE of a Spec)")
    try:
        model = entry.request().ground()
    except TxncheckError as err:  # a mistake in the entry's spec: at its file and line, as `check` says it
        raise fail(str(loader.locate_error(err, entry.spec))) from None
    spec = model.spec
    if entry.symmetry and spec.symmetry is None:
        raise fail(f"spec {spec.name} declares no symmetry; drop symmetry = true")
    if entry.symmetry and symmetry.idle(model):
        raise fail(symmetry.idle(model).replace("drop --symmetry", "drop symmetry = true"))
    known = {p.name for p in spec.properties}
    for p in entry.properties:
        if p not in known:
            raise fail(f"unknown property {p!r} of spec {spec.name}; its properties are: {', '.join(sorted(known))}")
        if p in model.not_applicable:
            raise fail(f"property {p!r} does not apply to this configuration of {spec.name}; choose a config that "
                       "includes it or drop it from properties")
    if entry.kind == "bmc":
        always = sorted(p.name for p in model.properties if p.kind == "always")  # as bmc's always_properties
        for p in entry.properties:
            if p not in always:
                raise fail(f"property {p!r} is not an always property, and bmc judges only those; its always "
                           f"properties are: {', '.join(always)}")
    if entry.kind == "tables":
        actors = sorted(t.actor for t in spec.tables)
        for t in entry.tables:
            if t not in actors:
                raise fail(f"spec {spec.name} has no table {t!r}; its tables are: {', '.join(actors)}")
    if entry.kind == "check" and entry.expect == "violation" and len(entry.properties) > 1 and not entry.keep_going:
        raise fail(f"expects {len(entry.properties)} properties violated, but the search stops at the first "
                   "violation; add continue = true")
    breaks = tuple(spec.variant_named(entry.variant).breaks) if entry.variant else ()
    if entry.kind == "bmc" and entry.expect == "violation" and not entry.properties and breaks:
        always = {p.name for p in model.properties if p.kind == "always"}
        if not always & set(breaks):
            raise fail(f"variant {entry.variant} breaks {', '.join(breaks)}, none of which is an always property, "
                       "and bmc judges only those; use kind = \"check\" or name an always property in properties")
    return GateEntry(**{**entry.__dict__, "breaks": breaks})
