"""Where a row or a property is written: the spec's Python source file and line, for annotations and SARIF.

Found by reading the source text of the module that defines the spec (every `.py` file of it when it
is a package), never by introspecting frames at run time: a definition such as `Row("PC-06", ...)` or
`Always("ATOM-2", ...)` first, else the first quoted literal `"PC-06"`. Files are searched in sorted
order, so the answer is deterministic. Paths are relative to the working directory when under it
(GitHub resolves annotation paths against the repository root, where CI runs the gate).
"""
from __future__ import annotations

import importlib.util
import os
import re
from functools import lru_cache

from txncheck.spec import catalog

_DEFINERS = r"(?:Row|Always|Sometimes|Recoverable|Property|Invariant)"


@lru_cache(maxsize=None)
def spec_files(spec: str) -> tuple[str, ...]:
    """The source files of the module that defines `spec` (a catalogue name or MODULE:ATTR)."""
    module = dict(catalog.SPECS).get(spec) or (spec.partition(":")[0] if ":" in spec else None)
    if module is None:
        return ()
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return ()
    if found is None or not found.origin or not found.origin.endswith(".py"):
        return ()
    if found.submodule_search_locations:  # a package: every module in it, __init__ first
        root = os.path.dirname(found.origin)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
        return tuple(sorted(files, key=lambda p: (p != found.origin, p)))
    return (found.origin,)


@lru_cache(maxsize=None)
def _lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8") as f:
            return tuple(f.read().splitlines())
    except OSError:
        return ()


def locate(spec: str, ident: str) -> tuple[str, int] | None:
    """(path, 1-based line) where `ident` (a row id or property name) is defined in `spec`'s source."""
    literal = re.escape(f'"{ident}"')
    for pattern in (re.compile(rf"\b{_DEFINERS}\(\s*{literal}"), re.compile(literal)):
        for path in spec_files(spec):
            for n, line in enumerate(_lines(path), 1):
                if pattern.search(line):
                    return display_path(path), n
    return None


def display_path(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel
