"""Tasks and their expectation checks (spec 000's dataset line).

Example:
    >>> t = Task(id="t1", category="demo", description="d", prompt="echo hi",
    ...          expectations=[{"check": "stdout_contains:hi"}])
    >>> t.expectations[0].kind, t.expectations[0].weight
    ('stdout_contains', 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from evalnb.records.base import Record
from evalnb.records.rust_regex import RustRegex, compile_pattern


@dataclass(frozen=True)
class ExitCode:
    """``exit_code:N``: the last tool call exited with ``code``."""

    code: int
    kind: ClassVar[str] = "exit_code"


@dataclass(frozen=True)
class StdoutContains:
    """``stdout_contains:text``: any call's stdout contains ``text`` (case-sensitive)."""

    text: str
    kind: ClassVar[str] = "stdout_contains"


@dataclass(frozen=True)
class StdoutRegex:
    """``stdout_regex:pattern``: ``pattern`` (Rust's dialect) matches in any call's stdout."""

    pattern: RustRegex
    kind: ClassVar[str] = "stdout_regex"


@dataclass(frozen=True)
class StderrEmpty:
    """``stderr_empty``: every call's stderr is empty."""

    kind: ClassVar[str] = "stderr_empty"


@dataclass(frozen=True)
class FileExists:
    """``file_exists:/path``: the path exists (a directory counts)."""

    path: str
    kind: ClassVar[str] = "file_exists"


@dataclass(frozen=True)
class DirExists:
    """``dir_exists:/path``: the path is a directory."""

    path: str
    kind: ClassVar[str] = "dir_exists"


@dataclass(frozen=True)
class FileContains:
    """``file_contains:/path:text``: the file's text contains ``text``."""

    path: str
    text: str
    kind: ClassVar[str] = "file_contains"


@dataclass(frozen=True)
class FileLineRegex:
    """``file_line_regex:/path:pattern``: some line of the file matches ``pattern``."""

    path: str
    pattern: RustRegex
    kind: ClassVar[str] = "file_line_regex"


@dataclass(frozen=True)
class ToolCallsMin:
    """``tool_calls_min:N``: at least ``n`` tool calls were made."""

    n: int
    kind: ClassVar[str] = "tool_calls_min"


@dataclass(frozen=True)
class ToolCallsMax:
    """``tool_calls_max:N``: at most ``n`` tool calls were made."""

    n: int
    kind: ClassVar[str] = "tool_calls_max"


@dataclass(frozen=True)
class LlmJudge:
    """``llm_judge:prompt``: a judge's verdict on ``prompt`` (a weight-0 stub without one)."""

    prompt: str
    kind: ClassVar[str] = "llm_judge"


Check = (
    ExitCode
    | StdoutContains
    | StdoutRegex
    | StderrEmpty
    | FileExists
    | DirExists
    | FileContains
    | FileLineRegex
    | ToolCallsMin
    | ToolCallsMax
    | LlmJudge
)
"""One parsed expectation check: the 10 of spec 000 plus ``file_line_regex``."""

FileCheck = FileExists | DirExists | FileContains | FileLineRegex
"""The checks that read the sandbox's filesystem."""

CHECK_KINDS: tuple[str, ...] = tuple(
    c.kind
    for c in (
        ExitCode,
        StdoutContains,
        StdoutRegex,
        StderrEmpty,
        FileExists,
        DirExists,
        FileContains,
        FileLineRegex,
        ToolCallsMin,
        ToolCallsMax,
        LlmJudge,
    )
)
"""Expectation check kinds, in spec 000's order plus ``file_line_regex``."""


MAX_EXIT_CODE = 255
"""The highest exit status a process can report (bash keeps the low 8 bits)."""
MAX_TOOL_CALLS = 1_000_000
"""The largest count ``tool_calls_min``/``tool_calls_max`` take: far beyond what one
attempt makes (its turns are limited, and so is each reply), and small enough that a
count written as ``10^23`` digits is refused rather than kept as a check no attempt
can pass."""


@lru_cache(maxsize=4096)
def parse_check(check: str) -> Check:
    """Parse a check string into its typed form; raise ValueError if it is invalid.

    Results are cached per string (a dataset repeats its checks across epochs and runs).

    ``file_contains:/path:text`` and ``file_line_regex:/path:regex`` split at the
    first ``:`` after the path, so the text may itself contain colons. Paths are
    absolute; ``exit_code`` is -1 (no tool call) to :data:`MAX_EXIT_CODE`; counts
    (``tool_calls_min``/``max``) are 0 to :data:`MAX_TOOL_CALLS`; regexes are in the Rust
    dialect bashkit-eval uses (:func:`evalnb.records.rust_regex.compile_pattern`).

    Example:
        >>> parse_check("exit_code:0")
        ExitCode(code=0)
        >>> parse_check("file_contains:/a/b.txt:key: value")
        FileContains(path='/a/b.txt', text='key: value')
        >>> parse_check("tool_calls_min:-3")
        Traceback (most recent call last):
        ...
        ValueError: tool_calls_min needs a count of 0 to 1,000,000, got '-3'
    """
    kind, _, arg = check.partition(":")
    if kind not in CHECK_KINDS:
        raise ValueError(f"unknown check kind {kind!r} (known: {', '.join(CHECK_KINDS)})")
    if kind in ("exit_code", "tool_calls_min", "tool_calls_max"):
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(f"{kind} needs an integer, got {arg!r}") from None
        if kind == "exit_code":
            if not -1 <= n <= MAX_EXIT_CODE:
                raise ValueError(f"exit_code needs -1 to {MAX_EXIT_CODE}, got {arg!r}")
            return ExitCode(n)
        if not 0 <= n <= MAX_TOOL_CALLS:
            raise ValueError(f"{kind} needs a count of 0 to {MAX_TOOL_CALLS:,}, got {arg!r}")
        return ToolCallsMin(n) if kind == "tool_calls_min" else ToolCallsMax(n)
    if kind == "stderr_empty":
        return StderrEmpty()
    if kind in ("stdout_contains", "llm_judge"):
        if not arg:
            raise ValueError(f"{kind} needs a value after ':'")
        return StdoutContains(arg) if kind == "stdout_contains" else LlmJudge(arg)
    if kind == "stdout_regex":
        return StdoutRegex(compile_pattern(arg))
    if kind in ("file_exists", "dir_exists"):
        if not arg.startswith("/"):
            raise ValueError(f"{kind} needs an absolute path, got {check!r}")
        return FileExists(arg) if kind == "file_exists" else DirExists(arg)
    path, sep, value = arg.partition(":")
    if not path.startswith("/") or not sep:
        raise ValueError(f"{kind} needs '{kind}:/absolute/path:text', got {check!r}")
    return (
        FileContains(path, value)
        if kind == "file_contains"
        else FileLineRegex(path, compile_pattern(value))
    )


class Expectation(Record):
    """One expectation check of a task: ``{"check": "kind:arg", "weight": 1.0}``.

    The check string is parsed once, at validation, into :attr:`spec` (one of the
    :data:`Check` types); an unknown kind, a bad regex, a count or exit code out of
    range, a ``file_contains`` without a path, or a weight that is not a number (a
    boolean or a string), negative or not finite is a validation error.

    Example:
        >>> e = Expectation(check="file_contains:/tmp/out.txt:a:b")
        >>> e.kind, e.spec
        ('file_contains', FileContains(path='/tmp/out.txt', text='a:b'))
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False, strict=True)
    _spec: Check = PrivateAttr()

    @field_validator("check")
    @classmethod
    def _valid_check(cls, check: str) -> str:
        parse_check(check)  # errors name the field; the parse is cached for _keep_spec
        return check

    @model_validator(mode="after")
    def _keep_spec(self) -> Expectation:
        self._spec = parse_check(self.check)
        return self

    @property
    def spec(self) -> Check:
        """The parsed check."""
        return self._spec

    @property
    def kind(self) -> str:
        """The check kind, the text before the first ``:``."""
        return self._spec.kind


class Task(Record):
    """One bash task: the bashkit-eval dataset line plus our ``solution`` and ``tags``.

    Example:
        >>> Task(id="x", category="c", description="d", prompt="p",
        ...      files={"/data/in.txt": "1\\n"}, expectations=[]).files
        {'/data/in.txt': '1\\n'}
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    category: str = Field(min_length=1)
    description: str = ""
    system: str | None = None
    prompt: str = Field(min_length=1)
    files: dict[str, str] = Field(default_factory=dict)
    expectations: list[Expectation] = Field(default_factory=list)
    solution: str | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("files")
    @classmethod
    def _absolute_paths(cls, files: dict[str, str]) -> dict[str, str]:
        for path in files:
            if not path.startswith("/"):
                raise ValueError(f"file path {path!r} must be absolute")
        return files
