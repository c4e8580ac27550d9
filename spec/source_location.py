"""Where a part of a spec is written: the file and line of a row, a property, a var, ..., found by
reading the source text of the spec's files, never by introspecting frames at run time.

A definition such as `Row("PC-06", ...)` (or `Row(id="PC-06", ...)`, the id on the next line, single
quotes) is looked for first, else the first quoted literal `"PC-06"`; files are searched in the order
given (the defining file first), so the answer is deterministic. An assumption (which has no name) is
found by its message; a field of the Spec by its keyword (`terminal=`). `spec/loader.py` locates
errors with it; `reports/source_location.py` annotations and SARIF.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

# the constructors that define each kind of subject (spec/errors.py's Subject kinds)
DEFINERS = {
    "row": ("Row",),
    "property": ("Always", "Sometimes", "Recoverable", "Eventually", "LeadsTo", "Property", "Invariant"),
    "table": ("Table",),
    "var": ("Var",),
    "variant": ("Variant",),
    "param": ("ConfigParam",),
    "config": ("NamedConfig",),
    "domain": ("EnumDomain", "IntRange", "IdSet", "SubsetDomain"),
}
_FIRST_ARG = {"row": "id", "table": "actor"}  # the keyword of the name, where it is not `name`


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _patterns(kind: str | tuple[str, ...] | None, name: str) -> list[re.Pattern]:
    literal = rf"(['\"]){re.escape(name)}\1"
    if kind == "field":
        return [re.compile(rf"\b{re.escape(name)}\s*=(?!=)")]
    if kind == "assumption":
        return [re.compile(literal)]
    kinds = [k for k in ((kind,) if isinstance(kind, str) else kind or DEFINERS) if k in DEFINERS]
    names = sorted({d for k in kinds for d in DEFINERS[k]})
    keys = sorted({_FIRST_ARG.get(k, "name") for k in kinds})
    definer = re.compile(rf"\b(?:{'|'.join(names)})\(\s*(?:(?:{'|'.join(keys)})\s*=\s*)?(['\"]){re.escape(name)}\1")
    return [definer, re.compile(literal)]


def find(files: Iterable[str], kind: str | tuple[str, ...] | None, name: str, nth: int = 1,
         read: Callable[[str], str] = read_text) -> tuple[str, int] | None:
    """(path, 1-based line) of the `nth` definition of `name` as a `kind` (or one of several kinds; None: any) in `files`
    (the last one if there are fewer), else of the first quoted literal `name`; None if neither is
    written there."""
    texts = [(path, read(path)) for path in files]
    for k, pattern in enumerate(_patterns(kind, name)):
        hits = [(path, text.count("\n", 0, m.start()) + 1) for path, text in texts for m in pattern.finditer(text)]
        if hits:
            return hits[min(nth, len(hits)) - 1] if k == 0 else hits[0]
    return None
