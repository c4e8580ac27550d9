"""The engine registry: every explicit-state engine, the options it honours, and how to run it.

An engine is a module with `run(request, model, options, settings) -> SearchOutcome`; it is
imported only when it runs (the Spark engine needs pyspark and a JVM, the default does not). The
CLI lists engines from here, and an option an engine would ignore is refused here, with a message
naming the engines that take it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Mapping

from txncheck.spec.errors import ConfigError, ResourceError
from txncheck.spec.ground_ir import GroundModel
from txncheck.spec.request import ModelRequest

from .outcome import ExploreOptions, SearchOutcome
from .resources import memory_limit, out_of_memory_message


@dataclass(frozen=True)
class Engine:
    name: str
    module: str                  # defines run(request, model, options, settings)
    summary: str
    options: tuple[str, ...]     # the options (CLI flag names without --) only this kind of engine takes
    in_process: bool = True      # searches in this process, so --max-memory bounds it


ENGINES: tuple[Engine, ...] = (
    Engine("vector", "txncheck.checker.vector.explore",
           "breadth-first search a whole level at a time, in numpy (the default)",
           ("memory-budget", "max-memory", "checkpoint", "resume")),
    Engine("scalar", "txncheck.checker.scalar.explore",
           "the reference interpreter: generated Python over state tuples", ("max-memory",)),
    Engine("spark", "txncheck.checker.spark.engine",
           "the same level-synchronous search on a Spark cluster (needs txncheck[spark] and Java 17+)",
           ("master", "partitions", "checkpoint", "resume", "driver-memory", "executor-memory"), in_process=False),
)
DEFAULT_ENGINE = "vector"


def names() -> tuple[str, ...]:
    return tuple(e.name for e in ENGINES)


def engine_named(name: str) -> Engine:
    for e in ENGINES:
        if e.name == name:
            return e
    raise ConfigError(f"unknown engine '{name}'; choose one of {', '.join(names())}")


def refuse_unsupported(engine: Engine, given: Mapping[str, object]) -> None:
    """Refuse every engine option in `given` (flag name -> value, None when not given) that `engine`
    does not take: a flag that does nothing is a mistake to report, not to ignore."""
    for flag, value in given.items():
        if value is None or flag in engine.options:
            continue
        takers = [e.name for e in ENGINES if flag in e.options]
        where = " and ".join(takers) or "no"
        raise ConfigError(f"--{flag} applies to the {where} engine{'s' if len(takers) > 1 else ''} only, not "
                          f"{engine.name}; drop it" + (f" or add --engine {takers[0]}" if len(takers) == 1 else ""))


def engine_options() -> tuple[str, ...]:
    """Every engine-specific option, each once, in registry order."""
    seen: list[str] = []
    for e in ENGINES:
        seen += [o for o in e.options if o not in seen]
    return tuple(seen)


def explore(engine: Engine, request: ModelRequest, model: GroundModel, options: ExploreOptions,
            settings=None) -> SearchOutcome:
    """Run `engine` on the grounded `request`; `settings` are the engine's own (Spark's SparkOptions, the
    vector engine's `checkpoint.Checkpointing`)."""
    module = importlib.import_module(engine.module)
    try:
        return module.run(request, model, options, settings)
    except MemoryError:
        # the vector engine keeps its checked levels itself; an engine that could not is left with nothing
        raise ResourceError(out_of_memory_message(memory_limit())) from None
