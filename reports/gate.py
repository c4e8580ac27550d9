"""Running one gate entry and judging it against what it must show.

`run_entry` is what a gate worker process calls: it checks the entry through `checker.run.check` (the
API `txncheck check` uses), writes its result and traces under `OUT/NAME/` as one unit
(`RunOutput` + `write_check`), and returns an `EntryOutcome`: plain, picklable data from which every
CI output (JUnit, annotations, summary, SARIF) is rendered, so those never rerun or reread anything.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from txncheck.checker import engines, resources
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check
from txncheck.spec.errors import TxncheckError

from .gatefile import GateEntry
from .run_output import RunOutput
from .writer import write_check, write_views

GATE_SCHEMA = "txncheck.gate/1"
FAILING = ("violated", "unwitnessed", "unknown")  # in an entry that must pass


@dataclass(frozen=True)
class PropertyReport:
    name: str
    kind: str
    outcome: str
    doc: str
    ok: bool                     # did this property show what the entry needs?
    expected_violation: bool     # listed in the entry's `properties` (or the variant's breaks)
    depth: int | None = None
    trace: str | None = None     # path of the trace JSON as the user reaches it (OUT/NAME/traces/P.json)
    last_row: str | None = None  # row id of the trace's last step
    last_label: str | None = None
    story: str = ""              # one line: property, kind, outcome, length, last step, trace path
    steps: tuple = ()            # the trace as (row id, its story line) per step: SARIF's code flow


@dataclass(frozen=True)
class Expectation:
    name: str                    # "expect pass", "golden distinct", ...
    ok: bool
    message: str


@dataclass(frozen=True)
class EntryOutcome:
    entry: GateEntry
    out: str
    verdict: str                 # the check's verdict, or "error"
    distinct: int | None = None
    depth: int | None = None
    seconds: float = 0.0
    properties: tuple[PropertyReport, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    unfired_rows: tuple[str, ...] = ()
    error: str | None = None
    internal: bool = False       # the error is a bug in txncheck, not the entry's
    # what the baseline records (reports/gate_baseline.py): kept here so a cached outcome carries them too
    witnessed: tuple[str, ...] = ()    # sometimes properties witnessed
    fired_rows: tuple[str, ...] = ()   # rows with fired > 0 in result.json's coverage
    violated: tuple[str, ...] = ()     # properties violated
    cached: bool = False               # reused from the cache (reports/gate_cache.py), not searched this run
    notes: tuple[str, ...] = ()        # worth saying, never a failure (a new witness, no baseline yet)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def ok(self) -> bool:
        return self.error is None and all(e.ok for e in self.expectations) and all(p.ok for p in self.properties)

    @property
    def failures(self) -> list[str]:
        """Why the entry failed, one line each (empty when it passed)."""
        if self.error:
            return [self.error]
        return [e.message for e in self.expectations if not e.ok] + [p.story for p in self.properties if not p.ok]

    @property
    def failures_without_trace(self) -> list[str]:
        """The failures no failed property's trace explains (a golden count, a bug no longer caught, an error):
        where a property failed, the entry's own "expect" line says the same thing again, so it is left out."""
        if self.error:
            return [self.error]
        props_failed = any(not p.ok for p in self.properties)
        return [e.message for e in self.expectations
                if not e.ok and not (props_failed and e.name.startswith("expect"))]

    def to_json(self) -> dict:
        return {"name": self.name, "ok": self.ok, "verdict": self.verdict, "distinct": self.distinct,
                "depth": self.depth, "seconds": self.seconds, "out": self.out, "error": self.error,
                "cached": self.cached, "notes": list(self.notes),
                "witnessed": list(self.witnessed), "fired_rows": list(self.fired_rows), "violated": list(self.violated),
                "expectations": [e.__dict__ for e in self.expectations],
                "properties": [p.__dict__ for p in self.properties]}


def options_for(entry: GateEntry, jobs: int = 1) -> ExploreOptions:
    opts = ExploreOptions(symmetry=entry.symmetry, stop_on_violation=not entry.keep_going,
                          check_deadlock=entry.deadlock)
    if "memory-budget" in engines.engine_named(entry.engine).options:
        # as `check` does, with the memory shared among the gate's parallel workers
        share = resources.default_max_memory() // max(jobs, 1)
        opts = replace(opts, memory_budget=max(resources.visited_budget(share), 1 << 26))
    return opts


def run_entry(entry: GateEntry, out_root: str, jobs: int = 1) -> EntryOutcome:
    """Check one entry, write its output under `out_root/NAME`, judge it. Never raises for a failed check."""
    out = os.path.join(out_root, entry.name)
    t0 = time.perf_counter()
    try:
        staged = RunOutput.prepare(out, option=f"--out for entry {entry.name}")
        with staged:
            opts = replace(options_for(entry, jobs), workdir=staged.scratch("spill"))
            result = check(entry.request(), entry.engine, opts)
            write_check(result, staged)
            # a CI artifact a reviewer opens: the counterexamples as viewer pages (traces/index.html)
            write_views(result.traces, staged, f"gate entry {entry.name}", model=entry.request().ground())
            staged.commit()
    except (TxncheckError, MemoryError) as err:
        msg = f"{type(err).__name__}: {err}" if isinstance(err, MemoryError) else str(err)
        return EntryOutcome(entry, out, "error", seconds=round(time.perf_counter() - t0, 3),
                            error=f"{entry.name}: {msg}")
    except Exception as err:  # noqa: BLE001 - one entry's bug must not hide the other entries' verdicts
        return EntryOutcome(entry, out, "error", seconds=round(time.perf_counter() - t0, 3), internal=True,
                            error=f"{entry.name}: internal error: {type(err).__name__}: {err} (a bug in txncheck; "
                            "rerun the entry with `txncheck check` and TXNCHECK_DEBUG=1)")
    seconds = round(time.perf_counter() - t0, 3)
    return judge_entry(entry, out, result, seconds)


def judge_entry(entry: GateEntry, out: str, result, seconds: float) -> EntryOutcome:
    """What the entry showed against what it must show; `result` is a CheckResult."""
    wanted = set(entry.properties)
    props = []
    for p in result.properties:
        trace = result.traces.get(p.name)
        last = trace.steps[-1] if trace is not None and trace.steps else None
        path = os.path.join(out, p.trace) if p.trace else None
        listed = p.name in wanted
        if entry.expect == "pass":
            ok = p.outcome not in FAILING
        else:
            ok = p.outcome == "violated" if listed else True
        story = story_of(p.name, p.kind, p.outcome, p.depth, last, path)
        if not ok and listed:
            story = f"{p.name} ({p.kind}) was expected to be violated but {p.outcome}"
        props.append(PropertyReport(p.name, p.kind, p.outcome, p.doc, ok, listed or p.name in entry.breaks,
                                    p.depth, path, last.row if last else None, last.label if last else None, story,
                                    _steps(entry, trace) if trace is not None and p.outcome == "violated" else ()))
    st = result.stats
    exps = [_expect(entry, result)]
    if entry.distinct is not None:
        exps.append(Expectation("golden distinct", st["distinct"] == entry.distinct,
                                f"distinct states: expected {entry.distinct:,}, got {st['distinct']:,}"))
    if entry.depth is not None:
        exps.append(Expectation("golden depth", st["depth"] == entry.depth,
                                f"depth: expected {entry.depth}, got {st['depth']}"))
    if entry.budget is not None:
        exps.append(Expectation("time budget", seconds <= entry.budget,
                                f"time: {seconds:.2f} s against a budget of {entry.budget:g} s"))
    return EntryOutcome(entry, out, result.verdict, st["distinct"], st["depth"], seconds, tuple(props), tuple(exps),
                        tuple(result.unfired_rows),
                        witnessed=tuple(sorted(p.name for p in result.properties
                                               if p.kind == "sometimes" and p.outcome == "witnessed")),
                        fired_rows=tuple(sorted(c["row"] for c in result.coverage if c["fired"] > 0)),
                        violated=tuple(sorted(p.name for p in result.properties if p.outcome == "violated")))


def _steps(entry: GateEntry, trace) -> tuple:
    """(row id, what the step does) per step of a counterexample, in the story's words where the
    spec has lanes (traces/text.py), else the action."""
    from txncheck.traces.text import story_lines
    lines = story_lines(entry.request().ground(), trace) or {}
    return tuple((s.row, f"step {s.index}: {lines.get(s.index) or s.label}") for s in trace.steps[1:])


def _expect(entry: GateEntry, result) -> Expectation:
    violated = [p.name for p in result.properties if p.outcome == "violated"]
    if entry.expect == "pass":
        if result.verdict == "pass":
            return Expectation("expect pass", True, "passed: every always property holds, every sometimes witnessed")
        bad = [f"{p.name} {p.outcome}" for p in result.properties if p.outcome in FAILING]
        why = "; ".join(bad) or (f"search incomplete ({result.stop_reason})" if not result.complete else "deadlock")
        return Expectation("expect pass", False, f"expected pass, got {result.verdict}: {why}")
    if entry.properties:
        missing = [n for n in entry.properties if n not in violated]
        ok = not missing
        msg = (f"violation of {', '.join(entry.properties)} found as expected" if ok else
               f"expected a violation of {', '.join(missing)}, but it was not found (violated: "
               f"{', '.join(violated) or 'nothing'}); the known bug is no longer caught")
        return Expectation("expect violation", ok, msg)
    if entry.breaks:  # a variant without a property list: one of what it must break
        ok = any(n in violated for n in entry.breaks)
        return Expectation("expect violation", ok,
                           f"variant {entry.variant} caught ({', '.join(violated)} violated)" if ok else
                           f"variant {entry.variant} is no longer caught: none of {', '.join(entry.breaks)} is violated")
    ok = bool(violated) or result.verdict == "violation"
    return Expectation("expect violation", ok, f"violation found ({', '.join(violated) or 'deadlock'})" if ok else
                       f"expected a violation, got {result.verdict}")


def story_of(name: str, kind: str, outcome: str, depth: int | None, last, path: str | None) -> str:
    """The trace in one line: `ATOM-2 (always) violated after 7 steps; last step 7: PC-06(p=p0) [...]; trace P`."""
    text = f"{name} ({kind}) {outcome}"
    if depth is not None:
        text += f" after {depth} step{'s' if depth != 1 else ''}"
    if last is not None:
        text += f"; last step {last.index}: {last.label}"
        if last.actor or last.trigger:
            text += f" [{last.actor}: {last.trigger}]"
    if path:
        text += f"; trace {path}"
    return text


@dataclass(frozen=True)
class GateReport:
    """The whole gate's outcome, in gate-file order."""
    path: str
    outcomes: tuple[EntryOutcome, ...] = field(default=())
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    def to_json(self) -> dict:
        return {"schema": GATE_SCHEMA, "gate_file": self.path, "ok": self.ok,
                "entries": [o.to_json() for o in self.outcomes]}
