"""Typed errors raised by the IR. Only the CLI turns them into messages and exit codes."""


class TxncheckError(Exception):
    """Base of every error a user can cause; carries a message that names the fix."""


class SpecError(TxncheckError):
    """A spec is malformed. `row` names the offending row when there is one."""

    def __init__(self, message: str, row: str | None = None):
        self.row = row
        super().__init__(f"row {row}: {message}" if row else message)


class ConfigError(TxncheckError):
    """A configuration (named config, --set override, variant name) is invalid."""


class EvaluationError(TxncheckError):
    """A ground action failed at run time: a computed index or an assignment left its domain."""

    def __init__(self, message: str, row: str | None = None, state: dict | None = None):
        self.row = row
        self.state = state
        super().__init__(f"row {row}: {message}" if row else message)


class ResourceError(TxncheckError):
    """A run ran out of a resource (memory) before it could finish; the message says what to change."""
