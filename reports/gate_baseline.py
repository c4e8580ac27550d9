"""Drift detection for `txncheck gate`: a committed baseline of what each entry's search found.

Golden counts in the gate file catch a changed state count only where someone wrote one. The baseline
records, for every entry, what a model can silently lose: its distinct states and depth, the `sometimes`
properties it witnesses (a lost witness means an invariant may have become vacuous), the rows that fired
(a row that stops firing is a behaviour the model no longer has) and, for an entry that must find a
violation, the properties violated (a known bug no longer caught). `txncheck gate --update-baseline`
writes it; a normal run compares against it. A loss fails the entry; a gain (a new witness, row or
violated property) is a note, because the model grew and the next `--update-baseline` records it.

Symbolic entries record what they can lose instead: a `tables` entry the obligations each check
discharged (a check that covers fewer transitions, or more, is a changed model, like a changed state
count), a `bmc` entry the properties proved (`EntryOutcome.proved`: status `proved`, finer than their
outcome, holds, which `holds-to-depth` K shares: checker/symbolic/status.py; so a proof that became a mere
"holds to depth K" fails) and, when it must find a violation, the properties violated. Such a record
names its `kind`.

The file is JSON with sorted keys and sorted lists, so regenerating an unchanged baseline changes no byte
and a reviewer's diff shows exactly which fact moved.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

from txncheck.spec.errors import ConfigError

from .atomic import write_atomic
from .gate import EntryOutcome, Expectation

SCHEMA = "txncheck.gate-baseline/1"
DEFAULT_NAME = "txncheck-baseline.json"
FACTS = ("distinct", "depth", "witnessed", "fired_rows", "violated")
SYMBOLIC_FACTS = {"tables": ("kind", "obligations", "violated"), "bmc": ("kind", "proved", "violated")}


class BaselineError(ConfigError):
    """A baseline file that cannot be used (exit 2): the message names the file and the fix."""


def default_path(gate_path: str) -> str:
    """Beside the gate file: the baseline is committed with it and describes its entries."""
    return os.path.join(os.path.dirname(gate_path), DEFAULT_NAME)


def facts(o: EntryOutcome) -> dict:
    """What the baseline records of one entry's outcome."""
    if o.entry.kind == "tables":
        d = {"kind": "tables", "obligations": dict(sorted(o.obligations))}
        if o.entry.expect == "violation":
            d["violated"] = sorted(o.violated)
        return d
    if o.entry.kind == "bmc":
        d = {"kind": "bmc", "proved": sorted(o.proved)}
        if o.entry.expect == "violation":
            d["violated"] = sorted(o.violated)
        return d
    d = {"distinct": o.distinct, "depth": o.depth, "witnessed": sorted(o.witnessed), "fired_rows": sorted(o.fired_rows)}
    if o.entry.expect == "violation":
        d["violated"] = sorted(o.violated)
    return d


def load(path: str) -> dict[str, dict]:
    """The baseline's entries by name; any problem is one BaselineError naming the file and the fix."""
    fix = f"regenerate it with `txncheck gate --update-baseline {path}` (or restore the committed file)"
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise BaselineError(f"baseline file {path} does not exist; write it with "
                            f"`txncheck gate --update-baseline {path}`") from None
    except OSError as err:
        raise BaselineError(f"baseline file {path} cannot be read ({err.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BaselineError(f"baseline file {path} is not valid JSON ({err}); {fix}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        raise BaselineError(f"baseline file {path} is not a {SCHEMA} file (schema {found!r}); {fix}")
    entries = data.get("entries")
    if not isinstance(entries, dict):
        raise BaselineError(f"baseline file {path} has no \"entries\" object; {fix}")
    for name, e in entries.items():
        problem = _problem(e)
        if problem:
            raise BaselineError(f"baseline file {path}: entry {name!r} {problem}; {fix}")
    return entries


def _problem(e: object) -> str | None:
    if not isinstance(e, dict):
        return "is not an object"
    if "kind" in e:
        if e["kind"] not in SYMBOLIC_FACTS:
            return f"has an unknown kind {e['kind']!r} (tables or bmc; a check entry's record has no kind)"
        unknown = sorted(set(e) - set(SYMBOLIC_FACTS[e["kind"]]))
        if unknown:
            return f"has an unknown key {unknown[0]!r} for a {e['kind']} entry"
        if e["kind"] == "tables" and not (isinstance(e.get("obligations"), dict) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in e["obligations"].values())):
            return "needs obligations as an object of whole numbers"
        for key in ("proved", "violated"):
            if key in e and not (isinstance(e[key], list) and all(isinstance(x, str) for x in e[key])):
                return f"needs {key} as a list of names"
        if e["kind"] == "bmc" and "proved" not in e:
            return "has no proved"
        return None
    unknown = sorted(set(e) - set(FACTS))
    if unknown:
        return f"has an unknown key {unknown[0]!r}"
    for key in ("distinct", "depth"):
        if not isinstance(e.get(key), int) or isinstance(e.get(key), bool):
            return f"needs {key} as a whole number"
    for key in ("witnessed", "fired_rows", "violated"):
        if key in e and not (isinstance(e[key], list) and all(isinstance(x, str) for x in e[key])):
            return f"needs {key} as a list of names"
    for key in ("witnessed", "fired_rows"):
        if key not in e:
            return f"has no {key}"
    return None


def render(entries: dict[str, dict]) -> str:
    return json.dumps({"schema": SCHEMA, "entries": entries}, indent=1, sort_keys=True) + "\n"


def write(path: str, entries: dict[str, dict]) -> None:
    write_atomic(path, render(entries))


def drift(o: EntryOutcome, base: dict) -> tuple[list[Expectation], list[str]]:
    """One expectation per drift check (failed when something was lost) and notes for what was gained."""
    kind = base.get("kind", "check")
    if kind != o.entry.kind:
        return [Expectation("drift kind", False, f"baseline drift: kind {kind} -> {o.entry.kind} (the entry now runs "
                            f"{o.entry.command}; its baseline facts are of another kind)")], []
    if kind == "tables":
        return _drift_tables(o, base)
    if kind == "bmc":
        return _drift_bmc(o, base)
    exps: list[Expectation] = []
    notes: list[str] = []
    for key, what in (("distinct", "distinct states"), ("depth", "depth")):
        was, now = base[key], getattr(o, key)
        exps.append(Expectation(f"drift {key}", was == now,
                                f"{what} {now} as in the baseline" if was == now else
                                f"baseline drift: {what} {was} -> {now}"))
    lost, gained = _diff(base["witnessed"], o.witnessed)
    exps.append(Expectation("drift witnesses", not lost,
                            "; ".join(f"baseline drift: {n} is no longer witnessed: an invariant may have become "
                                      "vacuous" for n in lost) or "every sometimes witness of the baseline is witnessed"))
    notes += [f"{n} is now witnessed (not in the baseline)" for n in gained]
    lost, gained = _diff(base["fired_rows"], o.fired_rows)
    exps.append(Expectation("drift rows", not lost,
                            "; ".join(f"baseline drift: row {r} fired in the baseline and no longer fires"
                                      + (" (it is now not applicable to this config: its guard cannot hold)"
                                         if r in o.inapplicable_rows else "")
                                      + ": a behaviour of the model is lost" for r in lost)
                            or "every row that fired in the baseline fires"))
    notes += [f"row {r} now fires (not in the baseline)" for r in gained]
    _drift_violated(o, base, exps, notes)
    return exps, notes


def _drift_violated(o: EntryOutcome, base: dict, exps: list, notes: list) -> None:
    if o.entry.expect != "violation":
        return
    lost, gained = _diff(base.get("violated", []), o.violated)
    exps.append(Expectation("drift violated", not lost,
                            "; ".join(f"baseline drift: {n} is no longer violated: the known bug is no longer "
                                      "caught" for n in lost)
                            or "every property violated in the baseline is violated"))
    notes += [f"{n} is now violated too (not in the baseline)" for n in gained]


def _drift_tables(o: EntryOutcome, base: dict) -> tuple[list[Expectation], list[str]]:
    was, now = base["obligations"], dict(o.obligations)
    moved = [f"{c} obligations {was.get(c, 0)} -> {now.get(c, 0)}" for c in sorted(set(was) | set(now))
             if was.get(c, 0) != now.get(c, 0)]
    exps = [Expectation("drift obligations", not moved,
                        "; ".join(f"baseline drift: {m}: the tables changed what the checks cover" for m in moved)
                        or "every check discharged the obligations of the baseline")]
    notes: list[str] = []
    _drift_violated(o, base, exps, notes)
    return exps, notes


def _drift_bmc(o: EntryOutcome, base: dict) -> tuple[list[Expectation], list[str]]:
    lost, gained = _diff(base["proved"], o.proved)
    exps = [Expectation("drift proved", not lost,
                        "; ".join(f"baseline drift: {n} was proved in the baseline and no longer is" for n in lost)
                        or "every property proved in the baseline is proved")]
    notes = [f"{n} is now proved (not in the baseline)" for n in gained]
    _drift_violated(o, base, exps, notes)
    return exps, notes


def _diff(was, now) -> tuple[list[str], list[str]]:
    was, now = set(was), set(now)
    return sorted(was - now), sorted(now - was)


def check(outcomes: list[EntryOutcome], baseline: dict[str, dict], updating: bool = False) -> list[EntryOutcome]:
    """Each outcome with its drift checks added. While updating, drift is what the update records, so it is
    reported as notes (`... -> ...`) instead of failing the entry."""
    out = []
    for o in outcomes:
        if o.error is not None or not o.judged:  # nothing to compare: the error or the stop is the failure
            out.append(o)
            continue
        base = baseline.get(o.name)
        if base is None:
            if not updating:
                o = replace(o, notes=o.notes + (f"no baseline for {o.name}; run txncheck gate --update-baseline",))
            out.append(o)
            continue
        exps, notes = drift(o, base)
        if updating:
            changed = [e.message.removeprefix("baseline drift: ") for e in exps if not e.ok]
            out.append(replace(o, notes=o.notes + tuple(f"baseline updated: {m}" for m in changed + notes)))
        else:
            out.append(replace(o, expectations=o.expectations + tuple(exps), notes=o.notes + tuple(notes)))
    return out
