"""evalnb's errors: one family, so a caller can catch :class:`EvalnbError` for all of them.

- :class:`InputError`: bad input, named as ``file:line: field: message``. Every loader
  (datasets, scenarios, rubrics, scripted agents, price tables, foreign trace files)
  raises it.
- :class:`ProviderError`: a model provider failed for good (after its own retries).
- :class:`SetupError`: something evalnb needs is missing: a task's workspace could not be
  prepared, or an optional extra is not installed.

The CLI prints any of them as one line and exits with code 2.

Example:
    >>> str(InputError("tasks.jsonl", 3, "expectations.0.check", "unknown check kind 'x'"))
    "tasks.jsonl:3: expectations.0.check: unknown check kind 'x'"
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


class EvalnbError(Exception):
    """Base of every error evalnb raises on purpose (the CLI reports them without a traceback)."""


class ProviderError(EvalnbError):
    """A provider call failed for good (after the SDK's own retries).

    ``kind`` says how: ``"connection"`` (the server could not be reached or gave no
    complete answer in time: a run stops after several in a row), ``"status"`` (it
    answered with an HTTP error) or ``"response"`` (its answer could not be understood).

    Example:
        >>> ProviderError("connection refused", kind="connection").kind
        'connection'
    """

    def __init__(self, message: str, kind: str = "status") -> None:
        super().__init__(message)
        self.kind = kind


class SetupError(EvalnbError):
    """Something evalnb needs is missing: a task's workspace could not be prepared (a
    scenario's setup or health check failed), or an optional extra is not installed."""


class InputError(EvalnbError):
    """Bad input, reported as ``file:line: field: message``."""

    def __init__(self, file: str | Path, line: int | None, field: str | None, message: str) -> None:
        self.file = str(file)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


def read_input(path: str | Path, display: str | Path | None = None) -> str:
    """The text of an input file; a missing or non-UTF-8 file raises InputError.

    ``display`` is the name used in the message (default: the path).

    Example:
        >>> read_input("no/such/tasks.jsonl")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no/such/tasks.jsonl: file not found
    """
    shown = path if display is None else display
    path = Path(path)
    if not path.is_file():
        raise InputError(shown, None, None, "file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(shown, None, None, f"not UTF-8 text: {exc}") from None


def from_validation_error(
    file: str | Path, line: int | None, exc: ValidationError, prefix: str = ""
) -> InputError:
    """Turn the first error of a pydantic ValidationError into an InputError.

    Example:
        >>> from pydantic import BaseModel
        >>> class M(BaseModel):
        ...     n: int
        >>> try:
        ...     M(n="x")
        ... except ValidationError as e:
        ...     print(from_validation_error("f.yaml", 2, e))
        f.yaml:2: n: Input should be a valid integer, unable to parse string as an integer
    """
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or "(record)")
    msg = err["msg"].removeprefix("Value error, ")
    return InputError(file, line, field, msg)
