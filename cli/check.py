"""`txncheck check SPEC`: exhaustive search with a verdict, results and traces."""
from __future__ import annotations

import contextlib
import json
import os
import sys

from dataclasses import replace

from txncheck.checker import checkpoint, engines, resources, symmetry
from txncheck.checker.fingerprint import format_probability
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import check
from txncheck.reports.run_output import RunOutput
from txncheck.reports.writer import write_check, write_views
from txncheck.spec.errors import ConfigError

from .common import add_model_args, model_request
from .exit_codes import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION


def register(sub):
    p = sub.add_parser("check", help="explore every reachable state and check the properties")
    add_model_args(p)
    p.add_argument("--engine", choices=engines.names(), default=engines.DEFAULT_ENGINE,
                   help="search engine: " + "; ".join(f"{e.name}: {e.summary}" for e in engines.ENGINES))
    p.add_argument("--symmetry", action="store_true", help="reduce by the spec's declared symmetries")
    p.add_argument("--max-states", type=int, metavar="N", help="stop after the level that reaches N states")
    p.add_argument("--max-depth", type=int, metavar="D", help="explore at most D steps deep")
    p.add_argument("--continue", dest="keep_going", action="store_true",
                   help="keep searching after a violation to find the shortest violation of every property")
    p.add_argument("--deadlock", action="store_true", help="report states with no enabled action as deadlocks")
    p.add_argument("--property", action="append", metavar="NAME", help="check only these properties (repeatable)")
    p.add_argument("--invariants", action="store_true",
                   help="also check the spec's strengthening invariants (the ones `bmc` uses for induction, "
                   "e.g. Kafka's IND-*) on every reachable state")
    p.add_argument("--require-complete", action="store_true", help="exit 3 when the search was cut by a bound")
    p.add_argument("--memory-budget", metavar="MB", help="vector engine: keep the search near MB MiB, expanding "
                   "levels in chunks and spilling to disk what outgrows its share (a quarter each for the visited "
                   "set, the frontier and the next level, an eighth each for a chunk's candidates and for the "
                   "edges); without it only the visited set spills, beyond a quarter of --max-memory")
    p.add_argument("--max-memory", metavar="MB", help="bound the whole process to MB MiB (default: 80%% of the "
                   "machine's memory); a search that reaches it stops incomplete with exit 3 and advice")
    p.add_argument("--out", metavar="DIR", help="where to write result.json and traces (default out/SPEC-CONFIG[-VARIANT])")
    p.add_argument("--json", action="store_true", help="print result.json to stdout instead of the summary")
    p.add_argument("--html", action="store_true",
                   help="also write a viewer page per trace (traces/NAME.html) and traces/index.html")
    p.add_argument("--progress", action="store_true", help="print a progress line every few seconds (stderr)")
    p.add_argument("--master", help="spark engine: the Spark master URL (default local[*])")
    p.add_argument("--partitions", type=int, help="spark engine: number of partitions")
    p.add_argument("--checkpoint", metavar="DIR", help="vector and spark engines: write each completed level "
                   "durably to DIR (a new or empty directory outside --out), so that a killed run can go on with "
                   "--resume DIR (spark: default OUT/spark)")
    p.add_argument("--resume", metavar="DIR", help="vector and spark engines: continue a killed run from its last "
                   "complete level in DIR (its --checkpoint DIR; spark also its --out) and keep checkpointing there; "
                   "the model and the options that decide the result must be the same")
    p.add_argument("--driver-memory", metavar="SIZE", help="spark engine: spark.driver.memory, e.g. 2g")
    p.add_argument("--executor-memory", metavar="SIZE", help="spark engine: spark.executor.memory, e.g. 2g")
    p.set_defaults(run=run)


def default_out(spec: str, config: str, variant: str | None, changed: dict | None = None) -> str:
    """`out/SPEC-CONFIG[-VARIANT][-KEY=VALUE...]`: runs with different settings never share a folder."""
    name = f"{spec}-{config}" + (f"-{variant}" if variant else "")
    name += "".join(f"-{k}={v}" for k, v in sorted((changed or {}).items()))
    return os.path.join("out", name)


def _checkpointing(args, engine: str, out: str):
    """The vector engine's checkpoint settings (None without --checkpoint or --resume); for every engine,
    a checkpoint directory that cannot work is refused before the search."""
    if not (args.checkpoint or args.resume):
        return None
    if args.checkpoint and args.resume and os.path.abspath(args.checkpoint) != os.path.abspath(args.resume):
        raise ConfigError("--resume DIR goes on checkpointing into DIR; drop --checkpoint or give both the same DIR")
    out_abs = os.path.abspath(out)
    for flag, d in (("--checkpoint", args.checkpoint), ("--resume", args.resume if engine != "spark" else None)):
        if d and os.path.commonpath([out_abs, os.path.abspath(d)]) in (out_abs, os.path.abspath(d)):
            raise ConfigError(f"{flag} {d} and --out {out} overlap, and each run replaces --out whole; keep the "
                              "checkpoint in a directory of its own, beside --out")
    if args.checkpoint and not args.resume:
        checkpoint.refuse_existing(args.checkpoint)
    if engine != "vector":
        return None
    return checkpoint.Checkpointing(args.resume or args.checkpoint, resume=bool(args.resume))


def run(args) -> int:
    if args.max_states is not None and args.max_states < 1:
        raise ConfigError("--max-states must be at least 1")
    if args.max_depth is not None and args.max_depth < 0:
        raise ConfigError("--max-depth must be 0 or more")
    if args.partitions is not None and args.partitions < 1:
        raise ConfigError("--partitions must be at least 1")
    engine = engines.engine_named(args.engine)
    engines.refuse_unsupported(engine, {flag: getattr(args, flag.replace("-", "_"))
                                        for flag in engines.engine_options()})
    max_memory = resources.parse_megabytes("--max-memory", args.max_memory)
    budget = resources.parse_megabytes("--memory-budget", args.memory_budget)
    request = model_request(args, invariants=args.invariants)
    spec = request.base_spec()
    if args.symmetry and spec.symmetry is None:
        raise ConfigError(f"spec {spec.name} declares no symmetry, so --symmetry would change nothing; drop it")
    model = request.ground()  # the one resolution: a misspelt variant or constant is reported before anything runs
    if args.symmetry and symmetry.idle(model):
        raise ConfigError(symmetry.idle(model))
    options = ExploreOptions(symmetry=args.symmetry, max_states=args.max_states, max_depth=args.max_depth,
                             stop_on_violation=not args.keep_going, check_deadlock=args.deadlock,
                             properties=tuple(args.property) if args.property else None,
                             progress=args.progress, memory_budget=budget)
    if args.property and not args.invariants:
        named = sorted(n for n in args.property if n in {p.name for p in spec.invariants_for_induction})
        if named:
            raise ConfigError(f"{', '.join(named)} is a strengthening invariant, not a property; add --invariants "
                              "to check it")
    given = dict(request.overrides)
    out = args.out or default_out(request.spec_name, model.config.name, request.variant,
                                  {k: v for k, v in model.config.overrides if k in given})
    shown, settings = out, _checkpointing(args, engine.name, out)
    if engine.name == "spark":
        from txncheck.checker.spark import require_spark
        from txncheck.checker.spark.ref import SparkOptions
        require_spark()
        out = os.path.abspath(out)  # the executors' working directory is not ours
        settings = SparkOptions(master=args.master or "local[*]", partitions=args.partitions,
                                store=os.path.abspath(args.checkpoint) if args.checkpoint else os.path.join(out, "spark"),
                                resume=args.resume,
                                driver_memory=args.driver_memory, executor_memory=args.executor_memory)
    staged = RunOutput.prepare(out, keep=("spark",) if engine.name == "spark" else ())
    # Spark's JVMs size their own memory (--driver-memory); a bound here would be inherited by them
    limit = (max_memory or resources.default_max_memory()) if engine.in_process else None
    if limit and "memory-budget" in engine.options and budget is None:
        options = replace(options, visited_budget=resources.visited_budget(limit))
    with staged, (resources.memory_bound(limit) if limit else contextlib.nullcontext()):
        if engine.in_process:
            options = replace(options, workdir=staged.scratch("spill"))
        result = check(request, engine.name, options, settings)
        bound = resources.memory_limit()
        write_check(result, staged)
        index = write_views(result.traces, staged, f"{result.spec} · {model.config.name}"
                            + (f" · {result.variant}" if result.variant else ""), model=model) if args.html else None
        staged.commit()
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(summary(result, shown))
        if index:
            print(f"viewer: {os.path.join(shown, index)}")
    if result.stop_reason == "memory":
        print(f"txncheck: {resources.out_of_memory_message(bound)}", file=sys.stderr)
    for why in result.stats.get("unjudged", {}).values():
        print(f"txncheck: {why}", file=sys.stderr)
    if result.verdict == "violation":
        return EXIT_VIOLATION
    if result.verdict == "incomplete" and (args.require_complete or result.stop_reason in ("memory", "judging_memory")):
        return EXIT_INCOMPLETE
    return EXIT_PASS


def summary(result, out: str | None) -> str:
    st = result.stats
    cfg = result.config
    vals = " ".join(f"{k}={v}" for k, v in cfg["values"].items())
    lines = [f"txncheck: {result.spec}" + (f" variant {result.variant}" if result.variant else "")
             + f" (config {cfg['name']}: {vals}), engine {result.engine}"]
    rate = f"{st['states_per_second']:,} states/s" if st.get("states_per_second") else ""
    lines.append(f"  {st['distinct']:,} distinct states, {st['generated']:,} generated, depth {st['depth']}, "
                 f"{st['seconds']:.2f} s ({rate}), {st['peak_memory_bytes'] / 2**20:,.0f} MiB peak")
    lines.append(f"  fingerprint collision probability: {format_probability(st['collision_probability'])}")
    if not result.complete:
        why = ("memory: the search reached the memory bound (see below)" if result.stop_reason == "memory"
               else result.stop_reason)
        lines.append(f"  search stopped early: {why}")
    if result.stats.get("unjudged"):
        lines.append(f"  not judged within --memory-budget (unknown): {', '.join(result.stats['unjudged'])} (see below)")
    lines.append("  properties:")
    width = max((len(p.name) for p in result.properties), default=8)
    for p in result.properties:
        steps = f"{p.depth} step{'s' if p.depth != 1 else ''}" if p.depth is not None else ""
        where = f"  after {steps}: {os.path.join(out, p.trace) if out else p.trace}" if p.trace else ""
        mark = "  (expected: this variant breaks it)" if p.expected_to_break and p.outcome == "violated" else ""
        lines.append(f"    {p.name:<{width}}  {p.kind:<11} {p.outcome}{where}{mark}")
    if result.not_applicable:
        lines.append(f"  not applicable to this config: {', '.join(result.not_applicable)}")
    if result.deadlock:
        lines.append(f"  deadlock after {result.deadlock['depth']} steps: "
                     f"{os.path.join(out, result.deadlock['trace']) if out else result.deadlock['trace']}")
    lines += coverage_lines(result)
    lines.append(f"verdict: {result.verdict.upper()}" + (f"   (results in {out}/result.json)" if out else ""))
    return "\n".join(lines)


def coverage_lines(result) -> list[str]:
    """Rows fired out of those the config lets fire, the applicable ones that never fired, and how many
    rows the config switches off (checker/applicable.py), which are no warning sign."""
    fired = sum(1 for c in result.coverage if c["fired"])
    off = len(result.inapplicable_rows)
    lines = [f"  coverage: {fired}/{len(result.coverage) - off} {'applicable ' if off else ''}rows fired"
             + (f"; never fired: {', '.join(result.unfired_rows)}" if result.unfired_rows else "")]
    if off:
        lines.append(f"  {off} row{'s' if off != 1 else ''} not applicable to this config (cannot fire under it; "
                     "inapplicable_rows in result.json)")
    return lines
