"""Where a row or a property is written: the spec's Python source file and line, for annotations and SARIF.

The search itself is `spec/source_location.py` (read from the source text of the module that defines
the spec, every `.py` file of it when it is a package, never by introspecting frames at run time; the
loader locates a spec's errors with it too). This module caches the files per spec and the texts per
path for the gate, which locates many rows. Paths are relative to the working directory when under it
(GitHub resolves annotation paths against the repository root, where CI runs the gate).
"""
from __future__ import annotations

from functools import lru_cache

from txncheck.spec import loader
from txncheck.spec.source_location import find, read_text


@lru_cache(maxsize=None)
def spec_files(spec: str) -> tuple[str, ...]:
    """The source files of the module that defines `spec` (a catalogue name, a spec file, MODULE:ATTR or a
    published name), the defining one first: as the loader finds them, without running anything."""
    return loader.source_files(spec)


@lru_cache(maxsize=None)
def _text(path: str) -> str:
    return read_text(path)


def locate(spec: str, ident: str) -> tuple[str, int] | None:
    """(path, 1-based line) where `ident` (a property name or row id) is defined in `spec`'s source."""
    found = find(spec_files(spec), ("property", "row"), ident, read=_text)
    return (display_path(found[0]), found[1]) if found else None


def display_path(path: str) -> str:
    return loader.display_path(path)
