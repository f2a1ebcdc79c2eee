"""evalnb's errors and warnings: one family each, so a caller can catch
:class:`EvalnbError` or filter :class:`EvalnbWarning` for all of them.

- :class:`InputError`: bad input, named as ``file:line: field: message``. Every loader
  (datasets, scenarios, rubrics, scripted agents, price tables, foreign trace files)
  raises it.
- :class:`ProviderError`: a model provider failed for good (after its own retries).
- :class:`SetupError`: something evalnb needs is missing: a task's workspace could not be
  prepared, or an optional extra is not installed.
- :class:`StoreError`: a run folder could not be written (read-only, disk full).

The CLI prints any of them as one line and exits with code 2.

The warnings (:class:`EvalnbWarning`, a :class:`UserWarning`) say what evalnb did with
input it could read only in part or had to guess about: :class:`MissingPriceWarning`,
:class:`PartialRunWarning`, :class:`DamagedInputWarning`, :class:`DataQualityWarning`
and :class:`FallbackWarning`. Each points at the caller's own line, the first one
outside evalnb (:func:`warn`), so ``python -W error::evalnb.DamagedInputWarning`` or
``warnings.filterwarnings("ignore", category=en.MissingPriceWarning)`` picks them out.

Example:
    >>> str(InputError("tasks.jsonl", 3, "expectations.0.check", "unknown check kind 'x'"))
    "tasks.jsonl:3: expectations.0.check: unknown check kind 'x'"
    >>> issubclass(MissingPriceWarning, EvalnbWarning)
    True
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

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


class StoreError(EvalnbError):
    """A run folder could not be written (read-only, disk full, gone); the message names it.

    Nothing half-written is left: a failed write is undone before this is raised.

    Example:
        >>> str(StoreError("runs/r1", "run.json", OSError(28, "No space left on device")))
        'cannot write runs/r1/run.json: No space left on device'
    """

    def __init__(self, folder: str | Path, name: str, exc: Exception) -> None:
        self.folder = str(folder)
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        super().__init__(f"cannot write {Path(folder) / name}: {reason}")


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


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"duplicate key {key!r}")


def parse_json(text: str, file: str | Path, line: int | None = None) -> Any:
    """Parse JSON input strictly; any problem raises InputError naming file and line.

    ``text`` is the whole of ``file``, or its line ``line`` (one JSON Lines record).
    Refused: text that is not JSON (the line and column where parsing failed), a key
    named twice in one object (the key is the error's field) and nesting deeper than
    Python can follow.

    Example:
        >>> parse_json('{"id": "a"}', "tasks.jsonl", 3)
        {'id': 'a'}
        >>> parse_json('{"id": "a", "id": "b"}', "tasks.jsonl", 3)
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: tasks.jsonl:3: id: duplicate key in one object
        >>> parse_json('{"results": [1,\\n', "r.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: r.json:2: invalid JSON: Expecting value (column 1)
        >>> parse_json("[" * 100_000 + "]" * 100_000, "deep.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: deep.json: invalid JSON: nested too deeply
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line + exc.lineno - 1
        raise InputError(file, at, None, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except _DuplicateKey as exc:
        raise InputError(file, line, exc.key, "duplicate key in one object") from None
    except ValueError as exc:  # an integer too long to convert
        raise InputError(file, line, None, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise InputError(file, line, None, "invalid JSON: nested too deeply") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


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


class EvalnbWarning(UserWarning):
    """Base of every warning evalnb issues (a :class:`UserWarning`)."""


class MissingPriceWarning(EvalnbWarning):
    """A model or judge has no price in the price table: its cost is null, not 0."""


class PartialRunWarning(EvalnbWarning):
    """A run lacks tasks it should hold (its file says so, or its siblings show it); its
    figures are computed from the tasks present and the run is marked ``partial``."""


class DamagedInputWarning(EvalnbWarning):
    """Part of an input was damaged and left out or rebuilt: a torn last line, a run
    folder's tables rebuilt from its events, inputs ``load(strict=False)`` could not
    read, a file a trace refers to that is not there."""


class DataQualityWarning(EvalnbWarning):
    """An input reads, but some of it is doubtful: its own figures disagree with evalnb's
    recount (evalnb's are used), a line repeats, or evalnb had to assume what the source
    left out (a time zone, how a session ended)."""


class FallbackWarning(EvalnbWarning):
    """evalnb goes on doing less than it was asked: the local sandbox without confinement,
    a bundled scenario without its judge, a scenario field evalnb does not use."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[EvalnbWarning]) -> None:
    """Issue ``message`` as ``category``, attributed to the first caller outside evalnb.

    ``warnings.warn`` attributes a warning to a fixed number of frames up, which
    points inside evalnb whenever the public function that was called reached this
    point through a different number of calls; Python 3.12's ``skip_file_prefixes``
    does what this does, but evalnb supports 3.11.

    Example:
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn("no price for model(s) m", MissingPriceWarning)
        >>> caught[0].category.__name__, caught[0].filename.startswith(_PACKAGE)
        ('MissingPriceWarning', False)
    """
    frame, level = sys._getframe(), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
