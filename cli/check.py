"""`txncheck check SPEC`: exhaustive search with a verdict, results and traces."""
from __future__ import annotations

import contextlib
import json
import os
import sys

from dataclasses import replace

from txncheck.checker import resources
from txncheck.checker.fingerprint import format_probability
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import DEFAULT_ENGINE, ENGINES, SparkSettings, check_spec, default_config
from txncheck.reports.run_output import RunOutput
from txncheck.reports.writer import write_check
from txncheck.spec.errors import ConfigError

from .common import add_model_args, load_spec, parse_sets
from .exit_codes import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION

_SPARK_ONLY = ("master", "partitions", "resume", "driver_memory", "executor_memory")


def register(sub):
    p = sub.add_parser("check", help="explore every reachable state and check the properties")
    add_model_args(p)
    p.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE, help=f"search engine (default {DEFAULT_ENGINE})")
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
    p.add_argument("--memory-budget", metavar="MB", help="vector engine: spill the visited set to disk beyond MB MiB "
                   "(default: a quarter of --max-memory)")
    p.add_argument("--max-memory", metavar="MB", help="bound the whole process to MB MiB (default: 80%% of the "
                   "machine's memory); a search that reaches it stops incomplete with exit 3 and advice")
    p.add_argument("--out", metavar="DIR", help="where to write result.json and traces (default out/SPEC-CONFIG[-VARIANT])")
    p.add_argument("--json", action="store_true", help="print result.json to stdout instead of the summary")
    p.add_argument("--progress", action="store_true", help="print a progress line every few seconds (stderr)")
    p.add_argument("--master", help="spark engine: the Spark master URL (default local[*])")
    p.add_argument("--partitions", type=int, help="spark engine: number of partitions")
    p.add_argument("--resume", metavar="DIR", help="spark engine: resume a killed run from its --out directory")
    p.add_argument("--driver-memory", metavar="SIZE", help="spark engine: spark.driver.memory, e.g. 2g")
    p.add_argument("--executor-memory", metavar="SIZE", help="spark engine: spark.executor.memory, e.g. 2g")
    p.set_defaults(run=run)


def default_out(spec: str, config: str, variant: str | None, changed: dict | None = None) -> str:
    """`out/SPEC-CONFIG[-VARIANT][-KEY=VALUE...]`: runs with different settings never share a folder."""
    name = f"{spec}-{config}" + (f"-{variant}" if variant else "")
    name += "".join(f"-{k}={v}" for k, v in sorted((changed or {}).items()))
    return os.path.join("out", name)


def _refuse_idle_flags(args, spec) -> None:
    """A flag the chosen engine or spec would ignore is refused, never silently dropped."""
    if args.engine != "spark":
        given = [f"--{n.replace('_', '-')}" for n in _SPARK_ONLY if getattr(args, n) is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to the spark engine only; "
                              f"add --engine spark or drop {'it' if len(given) == 1 else 'them'}")
    elif args.memory_budget is not None or args.max_memory is not None:
        raise ConfigError("--memory-budget and --max-memory apply to the vector and scalar engines; on Spark use "
                          "--driver-memory and --executor-memory")
    if args.memory_budget is not None and args.engine != "vector":
        raise ConfigError("--memory-budget applies to the vector engine only (it spills the visited set); drop it "
                          "or add --engine vector")
    if args.symmetry and spec.symmetry is None:
        raise ConfigError(f"spec {spec.name} declares no symmetry, so --symmetry would change nothing; drop it")


def run(args) -> int:
    spec = load_spec(args.spec)
    if args.max_states is not None and args.max_states < 1:
        raise ConfigError("--max-states must be at least 1")
    if args.max_depth is not None and args.max_depth < 0:
        raise ConfigError("--max-depth must be 0 or more")
    if args.partitions is not None and args.partitions < 1:
        raise ConfigError("--partitions must be at least 1")
    _refuse_idle_flags(args, spec)
    max_memory = resources.parse_megabytes("--max-memory", args.max_memory)
    budget = resources.parse_megabytes("--memory-budget", args.memory_budget)
    options = ExploreOptions(symmetry=args.symmetry, max_states=args.max_states, max_depth=args.max_depth,
                             stop_on_violation=not args.keep_going, check_deadlock=args.deadlock,
                             properties=tuple(args.property) if args.property else None,
                             progress=args.progress, memory_budget=budget)
    invariant_names = {p.name for p in spec.invariants_for_induction}
    if args.property and not args.invariants:
        named = sorted(n for n in args.property if n in invariant_names)
        if named:
            raise ConfigError(f"{', '.join(named)} is a strengthening invariant, not a property; add --invariants "
                              "to check it")
    sets = parse_sets(args.set)
    config = args.config or default_config(spec, args.variant)  # also validates the variant name
    out = args.out or default_out(spec.name, config or "default", args.variant,
                                  _changed_values(spec, config, args.variant, sets))
    if args.engine == "spark":
        from txncheck.checker.spark import require_spark
        require_spark()
        out = os.path.abspath(out)  # the executors' working directory is not ours
    staged = RunOutput.prepare(out, keep=("spark",) if args.engine == "spark" else ())
    spark = (SparkSettings(args.master or "local[*]", args.partitions, args.resume, out, args.driver_memory,
                           args.executor_memory) if args.engine == "spark" else None)
    # Spark's JVMs size their own memory (--driver-memory); a bound here would be inherited by them
    limit = None if spark else max_memory or resources.default_max_memory()
    if limit and args.engine == "vector" and budget is None:
        options = replace(options, memory_budget=limit // 4)
    with staged, (resources.memory_bound(limit) if limit else contextlib.nullcontext()):
        if not spark:
            options = replace(options, workdir=staged.scratch("spill"))
        result = check_spec(spec, config, sets, args.variant, args.engine, options, spark, args.invariants)
        bound = resources.memory_limit()
        write_check(result, staged)
        staged.commit()
    shown = args.out or out
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(summary(result, shown))
    if result.stop_reason == "memory":
        print(f"txncheck: {resources.out_of_memory_message(bound)}", file=sys.stderr)
    if result.verdict == "violation":
        return EXIT_VIOLATION
    if result.verdict == "incomplete" and (args.require_complete or result.stop_reason == "memory"):
        return EXIT_INCOMPLETE
    return EXIT_PASS


def _changed_values(spec, config, variant, sets) -> dict:
    """The --set values that differ from the named config's (a --set equal to it names the same run)."""
    if not sets:
        return {}
    s = spec.with_variant(variant)
    base = dict(s.resolve_config(config).values)
    full = s.resolve_config(config, sets)
    changed = {k: v for k, v in full.values if base.get(k) != v}
    for k in ("max_states", "max_depth"):
        if k in sets:
            changed[k] = getattr(full, k)
    return changed


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
    fired = sum(1 for c in result.coverage if c["fired"])
    lines.append(f"  coverage: {fired}/{len(result.coverage)} rows fired"
                 + (f"; never fired: {', '.join(result.unfired_rows)}" if result.unfired_rows else ""))
    lines.append(f"verdict: {result.verdict.upper()}" + (f"   (results in {out}/result.json)" if out else ""))
    return "\n".join(lines)
