"""`txncheck gate [FILE]`: run every entry of a gate file and write the reports CI systems read.

Entries run in worker processes (at most --jobs at once) through `reports.gate.run_entry`, which
calls the checker the way the entry's command does (`check`, `tables --verify`, `bmc`). Running them in
processes is what lets the gate stop an entry that overruns its time budget: its worker is ended
(SIGTERM, then SIGKILL after GRACE seconds; the entry's staging directory is removed either way) and
the entry fails with "over budget after N s, no verdict"; and an entry with a max_memory runs in a
fresh worker, bounded to it. With --jobs 1 and no entry with a budget or max_memory, the entries run
in this process, one after another. Progress lines go to stderr as entries finish; the results go to
stdout in gate-file order, so the output does not depend on which worker was faster. Exit 0 only when
every entry showed what it must, 1 when one did not, 2 for a bad gate file or flag, 4 for a bug.

Before anything runs, each entry is looked up in the cache (reports/gate_cache.py): a hit reuses its
last green outcome. After the run every outcome, searched or cached, is compared with the baseline
(reports/gate_baseline.py), so a cached entry cannot hide drift. `--update-baseline` writes the baseline
instead, and only when every entry showed what it must.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import wait

from txncheck.reports import gate_baseline, gate_cache, gatefile
from txncheck.reports.atomic import append_text, check_writable, write_atomic
from txncheck.reports.gate import EntryOutcome, GateReport, out_of_memory, over_budget, run_entry
from txncheck.reports.gate import worker as gate_worker
from txncheck.reports.run_output import clean_stale
from txncheck.spec.errors import ConfigError

from .exit_codes import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATION


# glibc's exit status when it cannot allocate a new thread's thread-local data (a native library starting
# threads under the entry's memory cap): `_exit(127)` after "cannot allocate memory for thread-local data"
LOADER_OUT_OF_MEMORY = 127
GRACE = 3.0  # seconds a stopped entry's process has to unwind (remove its staging directory) before SIGKILL


def run(args) -> int:
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    for flag in ("junit", "sarif", "summary"):
        if getattr(args, flag):
            check_writable(getattr(args, flag), f"--{flag}")
    path = args.file or gatefile.default_path()
    gate = gatefile.load(path).only(args.only)
    updating = args.update_baseline is not None
    base_path = args.update_baseline or args.baseline or gate_baseline.default_path(path)
    if updating:
        check_writable(base_path, "--update-baseline")
    # read the baseline before the search: a corrupt one is exit 2 now, not after minutes of checking
    baseline = None
    if args.baseline or os.path.exists(base_path):
        try:
            baseline = gate_baseline.load(base_path)
        except gate_baseline.BaselineError:
            if not updating:
                raise
            if args.only:  # the entries not run keep their old facts, which we cannot read
                raise
            baseline = {}  # a full update replaces a corrupt baseline whole
    # --no-cache still records this run: it forces the search, it does not forget
    cache = args.cache or gate_cache.default_dir(args.out)
    t0 = time.perf_counter()
    outcomes = _run_all(gate, args.out, jobs, cache, not args.no_cache, baseline, updating)
    report = GateReport(path, tuple(outcomes), round(time.perf_counter() - t0, 3))
    _write_reports(report, args)
    print(_results_text(report))
    if baseline is None and not updating:
        print(f"txncheck gate: no baseline {base_path}; drift is not checked (write one with "
              "txncheck gate --update-baseline)", file=sys.stderr)
    if any(o.internal for o in report.outcomes):
        return EXIT_INTERNAL
    if updating:
        return _update_baseline(report, base_path, baseline if args.only else {})
    return EXIT_PASS if report.ok else EXIT_VIOLATION


def _update_baseline(report: GateReport, path: str, kept: dict | None) -> int:
    failed = [o.name for o in report.outcomes if not o.ok]
    if failed:
        # a baseline records what a correct model shows: writing a failing run would make the failure the norm
        print(f"txncheck gate: baseline {path} not written: {len(failed)} entr{'y' if len(failed) == 1 else 'ies'} "
              f"did not show what {'it' if len(failed) == 1 else 'they'} must ({', '.join(failed)}); fix "
              "the model or the gate file first", file=sys.stderr)
        return EXIT_VIOLATION
    entries = dict(kept or {})  # with --only, the entries not run keep their recorded facts
    entries.update({o.name: gate_baseline.facts(o) for o in report.outcomes})
    gate_baseline.write(path, entries)
    print(f"txncheck gate: baseline written: {path} ({len(report.outcomes)} entries)")
    return EXIT_PASS


def _run_all(gate: gatefile.GateFile, out: str, jobs: int, cache: str | None, use_cache: bool,
             baseline: dict | None, updating: bool) -> list[EntryOutcome]:
    """Every entry's outcome, searched or cached, with its drift checks against `baseline` (if any)."""
    total = len(gate.entries)
    done: dict[str, EntryOutcome] = {}
    keys = {e.name: gate_cache.entry_key(e) for e in gate.entries} if cache else {}

    def progress(o: EntryOutcome) -> None:
        # drift is judged here, so the progress line already says what the results will say
        shown = gate_baseline.check([o], baseline, updating)[0] if baseline is not None else o
        done[o.name] = shown
        mark = "ok" if shown.ok else "FAILED"
        how = "cached" if o.cached else f"{o.seconds:.2f} s"
        print(f"txncheck gate: [{len(done)}/{total}] {o.name}: {mark} ({o.verdict}, {how})",
              file=sys.stderr, flush=True)
        if cache and not o.cached and o.ok and not o.internal:
            gate_cache.store(cache, o, keys[o.name])  # only a green run: a failure must be searched again

    todo = []
    for e in gate.entries:
        hit = None
        if cache and use_cache:
            t = time.perf_counter()
            hit = gate_cache.lookup(cache, e, keys[e.name], os.path.join(out, e.name))
        if hit is not None:
            progress(replace(hit, seconds=round(time.perf_counter() - t, 3)))
        else:
            todo.append(e)
    if jobs == 1 and not any(e.budget is not None or e.max_memory is not None for e in todo):
        for e in todo:  # nothing to stop or bound: no process to start, the entries run here in turn
            progress(run_entry(e, out, 1))
    elif todo:
        _run_in_processes(todo, out, min(jobs, len(todo)), progress)
    return [done[e.name] for e in gate.entries]


@dataclass
class _Worker:
    proc: multiprocessing.process.BaseProcess
    conn: object                        # the parent's end of the worker's pipe
    fresh: bool = True                  # has run no entry yet (an entry with max_memory needs one)
    entry: gatefile.GateEntry | None = None  # the entry it runs, None when idle
    started: float | None = None        # when the entry began (its "start" message): its budget counts from here
    sent: float = 0.0                   # when the entry was sent to it
    stopping: float | None = None       # when it was sent SIGTERM for overrunning the entry's budget
    ran: float = 0.0                    # the entry's time from start to SIGTERM

    @property
    def key(self):
        """What the loop waits on: the pipe, or once stopping the process's sentinel (its end)."""
        return self.proc.sentinel if self.stopping is not None else self.conn


def _run_in_processes(todo: list, out: str, jobs: int, progress) -> None:
    """Run the entries in at most `jobs` worker processes; stop an entry that overruns its budget.

    An entry over budget is stopped by ending its worker (SIGTERM, then SIGKILL after GRACE seconds); the
    worker keeps its place among the `jobs` until its process has ended, so a stopping search never
    shares the cores with more than `jobs` others, and the loop goes on meanwhile, so the other entries'
    budgets and progress lines are not held up. A new worker takes the place of an ended one."""
    # spawn: a fresh interpreter per worker, so no lock held by one of our threads is copied into it
    ctx = multiprocessing.get_context("spawn")
    pending = list(todo)
    workers: list[_Worker] = []
    retired: list[_Worker] = []  # told to end: joined at the end

    def launch() -> _Worker:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=gate_worker, args=(out, jobs, child), name="txncheck-gate-worker")
        proc.start()
        child.close()  # the worker holds its own end: EOF here once it exits
        w = _Worker(proc, parent)
        workers.append(w)
        return w

    def retire(w: _Worker) -> None:
        workers.remove(w)
        retired.append(w)
        try:
            w.conn.send(None)
        except OSError:
            pass
        w.conn.close()

    def ended(w: _Worker) -> None:
        w.proc.join()
        workers.remove(w)
        w.conn.close()

    def assign() -> None:
        while pending:
            e = pending[0]
            idle = [w for w in workers if w.entry is None and (w.fresh or e.max_memory is None)]
            if idle:
                w = idle[0]
            elif len(workers) < jobs:
                w = launch()
            elif e.max_memory is not None and any(w.entry is None for w in workers):
                retire(next(w for w in workers if w.entry is None))  # make room for a fresh process
                w = launch()
            else:
                return
            try:
                w.conn.send(e)
            except OSError:  # an idle worker that ended (killed from outside): another takes its place
                ended(w)
                continue
            pending.pop(0)
            w.entry, w.fresh, w.started, w.sent = e, False, None, time.monotonic()

    def done(w: _Worker, outcome: EntryOutcome) -> None:
        w.entry = None
        progress(outcome)

    try:
        while pending or any(w.entry is not None for w in workers):
            assign()
            busy = [w for w in workers if w.entry is not None]
            now = time.monotonic()
            deadlines = [w.stopping + GRACE if w.stopping is not None else w.started + w.entry.budget for w in busy
                         if w.stopping is not None or (w.started is not None and w.entry.budget is not None)]
            timeout = max(0.0, min(deadlines) - now) if deadlines else None
            ready = set(wait([w.key for w in busy], timeout))
            for w in busy:
                if w.key not in ready:
                    continue
                if w.stopping is not None:  # a stopped entry's worker has ended
                    e = w.entry
                    ended(w)
                    _clean_stage(out, e.name)
                    progress(over_budget(e, os.path.join(out, e.name), w.ran))
                    continue
                try:
                    kind, payload = w.conn.recv()
                except (EOFError, OSError):  # the worker ended without a verdict
                    ended(w)
                    progress(_died(w, out))
                    continue
                if kind == "start":
                    w.started = time.monotonic()
                else:
                    done(w, payload)
                    if payload.entry.max_memory is not None:
                        ended(w)  # it ends by itself after an entry with a max_memory
            now = time.monotonic()
            for w in list(workers):
                if w.entry is None:
                    continue
                if w.stopping is None and w.started is not None and w.entry.budget is not None \
                        and now - w.started >= w.entry.budget:
                    # over budget: SIGTERM unwinds the entry (its staging directory goes); wait for its end
                    w.ran, w.stopping = now - w.started, now
                    w.proc.terminate()
                elif w.stopping is not None and now - w.stopping >= GRACE and w.proc.is_alive():
                    w.proc.kill()  # a native call that ignores the signal: killed, and its stage removed after
        for w in list(workers):
            retire(w)
        for w in retired:
            w.proc.join()
    except BaseException:
        # Ctrl-C / SIGTERM: stop every entry now (each cleans its staging directory) rather than wait for
        # verdicts nobody will read
        for w in workers + retired:
            _stop(w.proc, out, w.entry.name if w.entry is not None else None)
        raise


def _stop(proc, out: str, name: str | None) -> None:
    """End an entry's process at once: SIGTERM, and SIGKILL after GRACE seconds; then remove what it left."""
    if proc.is_alive():
        proc.terminate()
        proc.join(GRACE)
    if proc.is_alive():
        proc.kill()
    proc.join()
    if name is not None:
        _clean_stage(out, name)


def _clean_stage(out: str, name: str) -> None:
    """Remove the staging directory an entry's killed process left beside its output (none after SIGTERM)."""
    try:
        clean_stale(os.path.abspath(out), name)
    except OSError:
        pass


def _died(w: _Worker, out: str) -> EntryOutcome:
    """An entry whose worker ended without sending its outcome."""
    entry, code = w.entry, w.proc.exitcode
    seconds = time.monotonic() - (w.started or w.sent)
    entry_out = os.path.join(out, entry.name)
    _clean_stage(out, entry.name)
    how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
    if entry.max_memory is not None and code is not None and (code < 0 or code == LOADER_OUT_OF_MEMORY):
        # a native library (z3) that cannot allocate aborts the process instead of raising MemoryError
        return out_of_memory(entry, entry_out, seconds, f"its process ended by {how}")
    return EntryOutcome(entry, entry_out, "error", seconds=round(seconds, 3), internal=code is None or code >= 0,
                        error=f"{entry.name}: the entry's process ended by {how} without a verdict"
                        + ("" if code is not None and code >= 0 else
                           " (killed from outside, or by the kernel for want of memory: give it a max_memory)"))


def _write_reports(report: GateReport, args) -> None:
    import json
    from txncheck.reports.github import annotations, summary_markdown
    os.makedirs(args.out, exist_ok=True)
    write_atomic(os.path.join(args.out, "gate.json"), json.dumps(report.to_json(), indent=1) + "\n")
    if args.junit:
        from txncheck.reports.junit import write_junit
        write_junit(report, args.junit)
    if args.sarif:
        from txncheck.reports.sarif import write_sarif
        write_sarif(report, args.sarif, _version())
    if args.summary or os.environ.get("GITHUB_STEP_SUMMARY"):
        text = summary_markdown(report, None)
        if args.summary:
            write_atomic(args.summary, text)
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            append_text(os.environ["GITHUB_STEP_SUMMARY"], text)
    if args.annotations or os.environ.get("GITHUB_ACTIONS") == "true":
        for line in annotations(report):
            print(line)


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("txncheck")
    except Exception:  # noqa: BLE001 - an uninstalled tree: the SARIF simply names no version
        return ""


def _results_text(report: GateReport) -> str:
    lines = [f"txncheck gate: {report.path}, {len(report.outcomes)} entries"]
    width = max(len(o.name) for o in report.outcomes)
    for o in report.outcomes:
        what = f"{o.entry.command}: " if o.entry.kind != "check" else ""
        lines.append(f"  {o.name:<{width}}  {'ok    ' if o.ok else 'FAILED'}  {what}expect {o.entry.expect:<9} "
                     f"got {o.verdict:<10} {o.detail}  {'cached' if o.cached else f'{o.seconds:.2f} s'}")
        for msg in o.failures:
            lines.append(f"      {msg}")
        if o.entry.note and not o.ok:
            lines.append(f"      ({o.entry.note})")
        for note in o.notes:
            lines.append(f"      note: {note}")
    n_bad = sum(not o.ok for o in report.outcomes)
    lines.append(f"verdict: {'PASS' if report.ok else 'FAIL'}"
                 + (f" ({n_bad} of {len(report.outcomes)} entries failed)" if n_bad else "")
                 + f"   (results in {report.outcomes[0].out.rsplit(os.sep, 1)[0] if report.outcomes else ''})")
    return "\n".join(lines)
