"""Typed errors raised by the IR. Only the CLI turns them into messages and exit codes.

An error about one part of a spec carries that part as its `subject`: a row, a property, a var, a
table, a variant, a configuration constant, a named config, a domain, an assumption, or a field of
the `Spec` itself (`terminal=`), by name; for a name defined twice, which definition is at fault
(the second `Row("A-9", ...)`). The message says what is wrong in the spec's own terms and how to
fix it. spec/ does not know where a spec's source is and never introspects frames for it: the layer
that does (`spec/loader.py:locate_error`, which the CLI calls) returns a copy of the error located at
its subject's definition, printed as `fencing.py:41: row F-03: ...`.
"""
from __future__ import annotations

from dataclasses import dataclass

# kind -> how a message names it ("" for kinds whose message already says what it is about)
SUBJECT_WORDS = {"row": "row", "property": "property", "table": "table", "var": "var", "variant": "variant",
                 "param": "constant", "config": "config", "domain": "domain", "assumption": "", "field": ""}


@dataclass(frozen=True)
class Subject:
    """The part of a spec an error is about: its kind (a key of SUBJECT_WORDS), its name (a row id, a
    property's name, ...; an assumption's message; a field of Spec), and which definition of that name
    (1: the first; a repeated row id is about the second)."""

    kind: str
    name: str
    nth: int = 1

    def __post_init__(self):
        if self.kind not in SUBJECT_WORDS:
            raise ValueError(f"unknown subject kind {self.kind!r}")

    def __str__(self) -> str:
        word = SUBJECT_WORDS[self.kind]
        return f"{word} {self.name}" if word else ""


def _subject(row: str | None, about: dict, nth: int) -> Subject | None:
    given = [(k, v) for k, v in about.items() if v is not None]
    if row is not None:
        given.insert(0, ("row", row))
    if len(given) > 1:
        raise TypeError(f"an error has one subject, not {', '.join(k for k, _ in given)}")
    if not given:
        return None
    kind, name = given[0]
    return Subject("property" if kind == "prop" else kind, str(name), nth)


class TxncheckError(Exception):
    """Base of every error a user can cause; carries a message that names the fix.

    `subject` (a Subject, or None) is the part of the spec at fault; `message` the text without the
    subject's name; `location` (path, line) of the subject's definition, once a layer that knows the
    spec's source has located it (`located`)."""

    subject: Subject | None = None
    location: tuple[str, int] | None = None

    def __init__(self, message: str = "", *, subject: Subject | None = None):
        self.message = message
        self.subject = subject
        named = str(subject) if subject is not None else ""
        super().__init__(f"{named}: {message}" if named else message)

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.location[0]}:{self.location[1]}: {text}" if self.location else text

    def located(self, path: str, line: int) -> "TxncheckError":
        """A copy of this error at `path:line` (the original is left as raised)."""
        cls = type(self)
        err = cls.__new__(cls, *self.args)  # not __init__: subclasses' signatures differ
        err.args = self.args
        err.__dict__.update(self.__dict__)
        err.location = (path, int(line))
        return err


class SpecError(TxncheckError):
    """A spec is malformed. Its subject is the part at fault: `SpecError(msg, "A-1")` is about row A-1,
    `SpecError(msg, prop="P")` about property P; likewise table=, var=, variant=, param= (a
    configuration constant), config= (a named config), domain=, assumption= (its message) and field=
    (a field of Spec, e.g. "terminal"); `nth=2` for the second definition of a repeated name."""

    def __init__(self, message: str, row: str | None = None, *, nth: int = 1, prop: str | None = None,
                 table: str | None = None, var: str | None = None, variant: str | None = None,
                 param: str | None = None, config: str | None = None, domain: str | None = None,
                 assumption: str | None = None, field: str | None = None):
        subject = _subject(row, dict(prop=prop, table=table, var=var, variant=variant, param=param,
                                     config=config, domain=domain, assumption=assumption, field=field), nth)
        self.row = subject.name if subject is not None and subject.kind == "row" else None
        super().__init__(message, subject=subject)


class ConfigError(TxncheckError):
    """A configuration (named config, --set override, variant name) is invalid. A mistake written in
    the spec (a named config's value, a variant's setting) names it as its subject, as SpecError does;
    a command-line mistake has none."""

    def __init__(self, message: str, *, nth: int = 1, prop: str | None = None, table: str | None = None,
                 var: str | None = None, variant: str | None = None, param: str | None = None,
                 config: str | None = None, domain: str | None = None, assumption: str | None = None,
                 field: str | None = None):
        super().__init__(message, subject=_subject(None, dict(
            prop=prop, table=table, var=var, variant=variant, param=param, config=config, domain=domain,
            assumption=assumption, field=field), nth))


class EvaluationError(TxncheckError):
    """A ground action failed at run time: a computed index or an assignment left its domain."""

    def __init__(self, message: str, row: str | None = None, state: dict | None = None):
        self.row = row
        self.state = state
        super().__init__(message, subject=Subject("row", row) if row else None)


class ResourceError(TxncheckError):
    """A run ran out of a resource (memory) before it could finish; the message says what to change."""
