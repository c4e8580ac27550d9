"""Where a row or a property is written: the spec's Python source file and line, for annotations and SARIF.

Found by reading the source text of the module that defines the spec (every `.py` file of it when it
is a package), never by introspecting frames at run time: a definition such as `Row("PC-06", ...)` or
`Always("ATOM-2", ...)` first, else the first quoted literal `"PC-06"`. Files are searched in sorted
order, so the answer is deterministic. Paths are relative to the working directory when under it
(GitHub resolves annotation paths against the repository root, where CI runs the gate).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache

from txncheck.spec import loader

_DEFINERS = r"(?:Row|Always|Sometimes|Recoverable|Property|Invariant)"


@lru_cache(maxsize=None)
def spec_files(spec: str) -> tuple[str, ...]:
    """The source files of the module that defines `spec` (a catalogue name, a spec file, MODULE:ATTR or a
    published name), the defining one first: as the loader finds them, without running anything."""
    return loader.source_files(spec)


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
