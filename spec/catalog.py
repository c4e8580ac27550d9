"""The shipped specs, by name. An explicit table: nothing is discovered by introspection."""
from __future__ import annotations

import importlib

from .errors import ConfigError
from .model import Spec

SPECS: tuple[tuple[str, str], ...] = (
    ("twophase", "txncheck.spec.twophase"),
    ("paxoscommit", "txncheck.spec.paxoscommit"),
    ("kafka", "txncheck.spec.kafka"),
)


def names() -> tuple[str, ...]:
    return tuple(n for n, _ in SPECS)


def load(name: str) -> Spec:
    for n, module in SPECS:
        if n == name:
            spec = importlib.import_module(module).SPEC
            return spec
    raise ConfigError(f"unknown spec '{name}'; shipped specs are: {', '.join(names())} "
                      "(run `txncheck specs` to list them)")
