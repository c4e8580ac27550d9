"""`txncheck gate [FILE]`: run every entry of a gate file and write the reports CI systems read.

Entries run in worker processes (at most --jobs at once) through `reports.gate.run_entry`, which calls
the checker the way `check` does. Progress lines go to stderr as entries finish; the results go to
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
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from txncheck.reports import gate_baseline, gate_cache, gatefile
from txncheck.reports.atomic import append_text, check_writable, write_atomic
from txncheck.reports.gate import EntryOutcome, GateReport, run_entry
from txncheck.spec.errors import ConfigError

from .exit_codes import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATION


def register(sub):
    p = sub.add_parser("gate", help="run the checks of a gate file (txncheck.toml) as a CI gate, with JUnit, "
                       "SARIF, annotations and a job summary")
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="the gate file (default txncheck.toml, else [tool.txncheck.gate] in pyproject.toml)")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    p.add_argument("--sarif", metavar="PATH", help="write a SARIF 2.1.0 report")
    p.add_argument("--summary", metavar="PATH", help="write a Markdown summary (also appended to "
                   "$GITHUB_STEP_SUMMARY when it is set)")
    p.add_argument("--annotations", action="store_true",
                   help="print GitHub Actions ::error annotations (on by default when GITHUB_ACTIONS=true)")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="run at most N entries at once (default: the cores)")
    p.add_argument("--only", action="append", metavar="NAME", help="run only this entry (repeatable)")
    p.add_argument("--out", metavar="DIR", default=os.path.join("out", "gate"),
                   help="where each entry's result.json and traces go, as DIR/NAME (default out/gate)")
    p.add_argument("--baseline", metavar="PATH",
                   help="compare every entry with this baseline (default: txncheck-baseline.json beside the gate "
                   "file, when it exists); a lost witness, row, violation or a changed count fails the entry")
    p.add_argument("--update-baseline", nargs="?", const="", metavar="PATH",
                   help="write the baseline (default: --baseline, else txncheck-baseline.json beside the gate file) "
                   "from this run; written only when every entry showed what it must")
    p.add_argument("--cache", metavar="DIR", help="where green outcomes are cached (default OUT/.cache)")
    p.add_argument("--no-cache", action="store_true", help="search every entry even when it is cached")
    p.set_defaults(run=run)


def _worker_init() -> None:
    # a worker ends like `check` on SIGTERM: the exception unwinds its staging directory's clean-up
    def _term(signum, frame):
        raise SystemExit(143)
    signal.signal(signal.SIGTERM, _term)


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
    jobs = min(jobs, len(todo))
    if not todo:
        pass
    elif jobs == 1:  # no worker to start: the entries run here, one after another
        for e in todo:
            progress(run_entry(e, out, 1))
    else:
        # spawn: a fresh interpreter per worker, so no lock held by one of our threads is copied into it
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_init)
        try:
            futures = {pool.submit(run_entry, e, out, jobs): e.name for e in todo}
            from concurrent.futures import as_completed
            for f in as_completed(futures):
                progress(f.result())
        except BaseException:
            # Ctrl-C / SIGTERM / a broken pool: stop the workers now (each cleans its staging directory)
            # rather than wait for entries whose verdict nobody will read
            for proc in list(getattr(pool, "_processes", {}).values()):
                if proc.is_alive():
                    proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return [done[e.name] for e in gate.entries]


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
        counts = f"{o.distinct:,} states, depth {o.depth}" if o.distinct is not None else ""
        lines.append(f"  {o.name:<{width}}  {'ok    ' if o.ok else 'FAILED'}  expect {o.entry.expect:<9} "
                     f"got {o.verdict:<10} {counts}  {'cached' if o.cached else f'{o.seconds:.2f} s'}")
        for msg in o.failures:
            lines.append(f"      {msg}")
        for note in o.notes:
            lines.append(f"      note: {note}")
    n_bad = sum(not o.ok for o in report.outcomes)
    lines.append(f"verdict: {'PASS' if report.ok else 'FAIL'}"
                 + (f" ({n_bad} of {len(report.outcomes)} entries failed)" if n_bad else "")
                 + f"   (results in {report.outcomes[0].out.rsplit(os.sep, 1)[0] if report.outcomes else ''})")
    return "\n".join(lines)
