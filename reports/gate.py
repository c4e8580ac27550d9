"""Running one gate entry and judging it against what it must show.

`run_entry` is what a gate worker process calls. By the entry's kind it runs the same API as the
command the entry stands for: `checker.run.check` (`txncheck check`), `checker.symbolic.tables.
verify_tables` (`txncheck tables --verify`) or `checker.symbolic.bmc.bmc` / `induction.k_induction`
(`txncheck bmc --depth K` / `--induction K`); it writes the result and traces under `OUT/NAME/` as one
unit (`RunOutput`), and returns an `EntryOutcome`: plain, picklable data from which every CI output
(JUnit, annotations, summary, SARIF) is rendered, so those never rerun or reread anything.

An entry that gave no verdict (stopped over its time budget, out of its memory, an error) has a verdict
in NO_VERDICT and a failed expectation saying so: every report shows it failed, never passed or violated.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field, replace

from txncheck.checker import engines, resources
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.processes import redeliver_swallowed_signals
from txncheck.checker.run import check, trace_path
from txncheck.checker.symbolic.status import CTI, HOLDS_TO_DEPTH, PROVED, UNKNOWN, VIOLATED
from txncheck.spec import loader
from txncheck.spec.errors import TxncheckError

from .gatefile import GateEntry
from .source_location import locate
from .run_output import RunOutput
from .writer import write_check, write_symbolic, write_views

GATE_SCHEMA = "txncheck.gate/1"
FAILING = ("violated", "unwitnessed", "unknown")  # in an entry that must pass
OVER_BUDGET, OUT_OF_MEMORY = "over-budget", "out-of-memory"
NO_VERDICT = (OVER_BUDGET, OUT_OF_MEMORY, "error")  # the entry was not judged: it failed
TABLE_CHECK = "table check"  # the kind of a tables entry's PropertyReport (one per check run)
TABLE_CHECK_DOCS = {
    "determinism": "no two rows of a table are enabled for one trigger in one state (unless the trigger is "
                   "declared nondeterministic)",
    "completeness": "every trigger that can be present is answered by some row of its table",
    "type": "every row keeps every variable within its type bounds",
    "conformance": "every row's status transition is one the table's conformance relation allows",
}


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
    inapplicable_rows: tuple[str, ...] = ()  # rows the entry's config switches off (result.json's inapplicable_rows)
    violated: tuple[str, ...] = ()     # properties violated
    cached: bool = False               # reused from the cache (reports/gate_cache.py), not searched this run
    notes: tuple[str, ...] = ()        # worth saying, never a failure (a new witness, no baseline yet)
    proved: tuple[str, ...] = ()       # bmc entries: the properties proved (for every depth, or by k-induction)
    obligations: tuple[tuple[str, int], ...] = ()  # tables entries: (check, obligations discharged)

    @property
    def judged(self) -> bool:
        """Did the entry give a verdict at all (not stopped, not out of memory, no error)?"""
        return self.verdict not in NO_VERDICT

    @property
    def detail(self) -> str:
        """What was searched, in a few words: states and depth, obligations, or properties proved."""
        if self.distinct is not None:
            return f"{self.distinct:,} states, depth {self.depth}"
        if self.obligations:
            return f"{sum(n for _, n in self.obligations):,} obligations"
        if self.entry.kind == "bmc" and self.judged:
            return f"{len(self.proved)} of {len(self.properties)} proved"
        return ""

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
                "proved": list(self.proved), "obligations": dict(self.obligations),
                "kind": self.entry.kind, "note": self.entry.note,
                "expectations": [e.__dict__ for e in self.expectations],
                "properties": [p.__dict__ for p in self.properties]}


def options_for(entry: GateEntry, jobs: int = 1) -> ExploreOptions:
    opts = ExploreOptions(symmetry=entry.symmetry, stop_on_violation=not entry.keep_going,
                          check_deadlock=entry.deadlock)
    if "memory-budget" in engines.engine_named(entry.engine).options:
        # as `check` does: under the entry's max_memory, else the machine's memory shared among the workers
        share = entry.max_memory * 2**20 if entry.max_memory else resources.default_max_memory() // max(jobs, 1)
        floor = 1 << 20 if entry.max_memory else 1 << 26
        opts = replace(opts, visited_budget=max(resources.visited_budget(share), floor))
    return opts


def no_verdict(entry: GateEntry, out: str, verdict: str, message: str, seconds: float) -> EntryOutcome:
    """An entry stopped before it gave a verdict: failed, with the expectation it broke."""
    name = {OVER_BUDGET: "time budget", OUT_OF_MEMORY: "max memory"}[verdict]
    return EntryOutcome(entry, out, verdict, seconds=round(seconds, 3),
                        expectations=(Expectation(name, False, message),))


def over_budget(entry: GateEntry, out: str, seconds: float) -> EntryOutcome:
    return no_verdict(entry, out, OVER_BUDGET, f"over budget after {seconds:.1f} s, no verdict (budget = "
                      f"{entry.budget:g} s; its {entry.command} was stopped)", seconds)


def out_of_memory(entry: GateEntry, out: str, seconds: float, how: str = "") -> EntryOutcome:
    bound = f"max_memory = {entry.max_memory} MiB" if entry.max_memory else "the memory available"
    return no_verdict(entry, out, OUT_OF_MEMORY, f"out of memory, no verdict ({bound}{'; ' + how if how else ''})",
                      seconds)


def _is_out_of_memory(err: BaseException) -> bool:
    # z3 reports its own allocation failure as an exception whose message says so
    return isinstance(err, MemoryError) or "out of memory" in str(err).lower()


def _interrupt_solver_on_sigterm() -> None:
    """Python runs a signal handler only between bytecodes, so a SIGTERM that arrives inside one long z3
    query would wait for the query to end. A thread woken by the signal (through the wakeup fd, which
    the interpreter writes as the signal arrives) interrupts z3, whose query then returns at once and
    lets the handler run. The checker's solvers use z3's default context."""
    import sys
    import threading
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            data = os.read(r, 64)
            if not data:
                return
            z3 = sys.modules.get("z3")
            if signal.SIGTERM in data and z3 is not None:
                z3.main_ctx().interrupt()
    threading.Thread(target=watch, name="txncheck-gate-sigterm", daemon=True).start()


def worker(out_root: str, jobs: int, conn) -> None:
    """A gate worker process's body: runs the entries the gate sends it, one at a time, saying when each
    starts (its time budget counts from there) and then sending its outcome; `None` (or the gate gone)
    ends it. The gate stops an entry by ending its worker: SIGTERM unwinds like `check`'s, so the entry's
    staging directory is removed on the way out. After an entry with a max_memory the worker ends, so
    that bound is always applied in a fresh process, never on top of an earlier entry's leftovers."""
    def _term(signum, frame):
        raise SystemExit(143)
    signal.signal(signal.SIGTERM, _term)
    redeliver_swallowed_signals(lambda exc: signal.SIGTERM if isinstance(exc, SystemExit) else None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the gate stops its entries itself
    _interrupt_solver_on_sigterm()
    try:
        while True:
            try:
                entry = conn.recv()
            except EOFError:
                return
            if entry is None:
                return
            conn.send(("start", None))
            conn.send(("done", run_entry(entry, out_root, jobs)))
            if entry.max_memory is not None:
                return
    finally:
        conn.close()


def run_entry(entry: GateEntry, out_root: str, jobs: int = 1) -> EntryOutcome:
    """Run one entry, write its output under `out_root/NAME`, judge it. Never raises for a failed check."""
    out = os.path.join(out_root, entry.name)
    t0 = time.perf_counter()
    limit = entry.max_memory * 2**20 if entry.max_memory else None
    try:
        staged = RunOutput.prepare(out, option=f"--out for entry {entry.name}")
        with staged, (resources.memory_bound(limit) if limit else contextlib.nullcontext()):
            run = {"check": _run_check, "tables": _run_tables, "bmc": _run_bmc}[entry.kind]
            judge = run(entry, out, staged, jobs)
            staged.commit()
        return judge(round(time.perf_counter() - t0, 3))
    except TxncheckError as err:
        return EntryOutcome(entry, out, "error", seconds=round(time.perf_counter() - t0, 3),
                            error=f"{entry.name}: {loader.locate_error(err, entry.spec)}")
    except Exception as err:  # noqa: BLE001 - one entry's bug must not hide the other entries' verdicts
        # under a bound, a C extension whose allocation failed may raise SystemError instead of MemoryError
        if _is_out_of_memory(err) or (limit and isinstance(err, SystemError)):
            return out_of_memory(entry, out, time.perf_counter() - t0, f"{type(err).__name__}: {err}")
        return EntryOutcome(entry, out, "error", seconds=round(time.perf_counter() - t0, 3), internal=True,
                            error=f"{entry.name}: internal error: {type(err).__name__}: {err} (a bug in txncheck; "
                            f"rerun the entry with `txncheck {entry.command.split()[0]}` and TXNCHECK_DEBUG=1)")


def _run_check(entry: GateEntry, out: str, staged: RunOutput, jobs: int):
    """`txncheck check`: the search, its result.json and traces, and viewer pages for them."""
    opts = replace(options_for(entry, jobs), workdir=staged.scratch("spill"))
    result = check(entry.request(), entry.engine, opts)
    write_check(result, staged)
    # a CI artifact a reviewer opens: the counterexamples as viewer pages (traces/index.html)
    write_views(result.traces, staged, f"gate entry {entry.name}", model=entry.request().ground())
    if result.stop_reason == "memory":
        return lambda seconds: out_of_memory(entry, out, seconds, f"the search stopped after "
                                             f"{result.stats['distinct']:,} states")
    return lambda seconds: judge_entry(entry, out, result, seconds)


def _run_tables(entry: GateEntry, out: str, staged: RunOutput, jobs: int):
    """`txncheck tables --verify`: the z3 table checks; result.json is the JSON `tables --json` prints."""
    from txncheck.checker.symbolic.tables import CHECKS, verify_tables
    m = entry.request().ground()
    report = verify_tables(m, entry.checks or CHECKS, entry.tables or None, assume_invariants=entry.assume_invariants)
    staged.write_json("result.json", {"schema": "txncheck.tables/1", "spec": m.spec.name, "variant": m.spec.variant,
                                      "config": m.config.to_json(), "verify": report.to_json()})
    return lambda seconds: judge_tables(entry, out, report, entry.checks or CHECKS, seconds)


def _run_bmc(entry: GateEntry, out: str, staged: RunOutput, jobs: int):
    """`txncheck bmc --depth K` or `--induction K`: result.json and traces as `bmc --out --html` writes them."""
    from txncheck.checker.symbolic.bmc import bmc
    from txncheck.checker.symbolic.induction import k_induction
    m = entry.request().ground()
    lemmas = None
    if entry.lemmas:
        from txncheck.checker.symbolic.lemmas import prove_lemmas
        lemmas = prove_lemmas(m, "explore")
    props = list(entry.properties) or None
    if entry.induction is not None:
        res = k_induction(m, entry.induction, props, solver=entry.solver or "smt", lemmas=lemmas)
    else:
        res = bmc(m, entry.bound, props, solver=entry.solver or "fd", lemmas=lemmas)
    data = res.to_json()
    traces = {p.name: p.trace for p in res.properties if p.trace is not None}
    for p in data["properties"]:
        if p["name"] in traces:
            p["trace"] = os.path.join(out, trace_path(p["name"]))
    write_symbolic(data, traces, staged)
    write_views(traces, staged, f"gate entry {entry.name} · {entry.command}")
    return lambda seconds: judge_bmc(entry, out, res, seconds, model=m)


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
    exps += _budget(entry, seconds)
    return EntryOutcome(entry, out, result.verdict, st["distinct"], st["depth"], seconds, tuple(props), tuple(exps),
                        tuple(result.unfired_rows),
                        witnessed=tuple(sorted(p.name for p in result.properties
                                               if p.kind == "sometimes" and p.outcome == "witnessed")),
                        fired_rows=tuple(sorted(result.fired_rows)),
                        inapplicable_rows=tuple(result.inapplicable_rows),
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


def _budget(entry: GateEntry, seconds: float) -> list[Expectation]:
    """A finished entry against its time budget (one that overran it is stopped: `over_budget`)."""
    if entry.budget is None:
        return []
    return [Expectation("time budget", seconds <= entry.budget,
                        f"time: {seconds:.2f} s against a budget of {entry.budget:g} s")]


def judge_tables(entry: GateEntry, out: str, report, checks, seconds: float) -> EntryOutcome:
    """`tables --verify`: one PropertyReport per check run; a finding is a violation of its check."""
    props = []
    for c in checks:
        found = [f for f in report.findings if f.check == c]
        first = found[0] if found else None
        ok = not found if entry.expect == "pass" else True
        story = f"{c} ({TABLE_CHECK}) {'violated' if found else 'holds'}: {report.checked.get(c, 0)} obligations"
        if first is not None:
            where = f"table {first.table}" + (f", trigger {first.trigger}" if first.trigger else "")
            story += (f", {len(found)} finding{'s' if len(found) != 1 else ''}; first: {where}, rows "
                      f"{', '.join(first.rows)}: {first.message}")
        props.append(PropertyReport(c, TABLE_CHECK, "violated" if found else "holds", TABLE_CHECK_DOCS.get(c, ""),
                                    ok, bool(found) and entry.expect == "violation",
                                    last_row=first.rows[0] if first is not None and first.rows else None,
                                    last_label=f"{first.table}: {first.message}" if first is not None else None,
                                    story=story))
    n = len(report.findings)
    by_check = ", ".join(f"{c} {sum(f.check == c for f in report.findings)}" for c in checks
                         if any(f.check == c for f in report.findings))
    if entry.expect == "pass":
        exp = Expectation("expect pass", n == 0, "no table finding" if n == 0 else
                          f"expected no table finding, got {n} ({by_check})")
    else:
        exp = Expectation("expect violation", n > 0,
                          f"{n} table finding{'s' if n != 1 else ''} as expected ({by_check})" if n else
                          "expected a table finding, but every check holds; the known bug is no longer caught")
    return EntryOutcome(entry, out, "findings" if n else "pass", seconds=seconds, properties=tuple(props),
                        expectations=(exp, *_budget(entry, seconds)),
                        violated=tuple(sorted({f.check for f in report.findings})),
                        obligations=tuple((c, int(report.checked.get(c, 0))) for c in checks))


def judge_bmc(entry: GateEntry, out: str, res, seconds: float, model=None) -> EntryOutcome:
    """`bmc --depth K` / `--induction K`: each always property proved, held to depth K, or violated. The
    outcomes and the verdict are the result's own (checker/symbolic/status.py); the stories say the status."""
    wanted = set(entry.properties)
    props = []
    for p in res.properties:
        trace = p.trace
        last = trace.steps[-1] if trace is not None and trace.steps else None
        path = os.path.join(out, trace_path(p.name)) if trace is not None else None
        listed = p.name in wanted
        if entry.expect == "pass":
            ok = p.outcome not in FAILING
        else:
            ok = p.outcome == "violated" if listed else True
        story = story_of(p.name, "always", p.outcome, p.depth, last, path)
        if p.status == CTI:
            story = (f"{p.name} (always) not proved: counterexample to {p.depth}-induction"
                     + (f"; last step {last.index}: {last.label}" if last is not None else "")
                     + (f"; trace {path}" if path else ""))
        elif p.status == PROVED:
            story = f"{p.name} (always) proved" + (f" by {p.depth}-induction" if res.engine == "k-induction" else
                                                   " for every depth (1-inductive with the strengthening invariants)")
        elif p.status == HOLDS_TO_DEPTH:
            story = f"{p.name} (always) holds to depth {p.depth}: no counterexample up to {p.depth} steps"
        elif p.status == UNKNOWN:
            story = f"{p.name} (always) unknown at depth {p.depth}" + (f" ({p.note})" if p.note else "")
        if not ok and listed:
            story = f"{p.name} (always) was expected to be violated but {p.outcome} ({p.status})"
        props.append(PropertyReport(p.name, "always", p.outcome, _doc(model, p.name), ok,
                                    listed or p.name in entry.breaks, p.depth, path,
                                    last.row if last else None, last.label if last else None, story,
                                    _steps(entry, trace) if trace is not None and p.status == VIOLATED else ()))
    violated = sorted(p.name for p in res.properties if p.outcome == "violated")
    verdict = res.verdict
    if entry.expect == "pass":
        bad = [f"{p.name} {p.status}" + (f" at depth {p.depth}" if p.depth is not None else "")
               for p in res.properties if p.outcome in FAILING]
        exp = Expectation("expect pass", not bad, f"passed: {entry.command}: every always property "
                          f"{'proved' if entry.induction is not None else 'holds'}" if not bad else
                          f"expected pass, got {verdict}: {'; '.join(bad)}")
    elif entry.properties:
        missing = [n for n in entry.properties if n not in violated]
        exp = Expectation("expect violation", not missing,
                          f"violation of {', '.join(entry.properties)} found as expected" if not missing else
                          f"expected a violation of {', '.join(missing)}, but {entry.command} did not find it "
                          f"(violated: {', '.join(violated) or 'nothing'}); the known bug is no longer caught")
    elif entry.breaks:
        ok = any(n in violated for n in entry.breaks)
        exp = Expectation("expect violation", ok, f"variant {entry.variant} caught ({', '.join(violated)} violated)"
                          if ok else f"variant {entry.variant} is no longer caught: none of "
                          f"{', '.join(entry.breaks)} is violated")
    else:
        exp = Expectation("expect violation", bool(violated), f"violation found ({', '.join(violated)})" if violated
                          else f"expected a violation, got {verdict}")
    return EntryOutcome(entry, out, verdict, seconds=seconds, properties=tuple(props),
                        expectations=(exp, *_budget(entry, seconds)), violated=tuple(violated),
                        proved=tuple(sorted(p.name for p in res.properties if p.status == PROVED)))


def _doc(model, name: str) -> str:
    if model is None:
        return ""
    return next((p.doc for p in model.spec.properties if p.name == name), "")


def property_location(spec: str, p: PropertyReport) -> tuple[str, int] | None:
    """Where a failed property points in the spec's source: its definition, else (a table check, which has
    none) the row of its first finding or the row its trace fired last."""
    where = locate(spec, p.name) if p.kind != TABLE_CHECK else None
    if where is None and p.last_row:
        where = locate(spec, p.last_row)
    return where


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
