"""Tasks and their expectation checks (spec 000's dataset line).

Example:
    >>> t = Task(id="t1", category="demo", description="d", prompt="echo hi",
    ...          expectations=[{"check": "stdout_contains:hi"}])
    >>> t.expectations[0].kind, t.expectations[0].weight
    ('stdout_contains', 1.0)
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

CHECK_KINDS: tuple[str, ...] = (
    "exit_code",
    "stdout_contains",
    "stdout_regex",
    "stderr_empty",
    "file_exists",
    "dir_exists",
    "file_contains",
    "file_line_regex",
    "tool_calls_min",
    "tool_calls_max",
    "llm_judge",
)
"""Expectation check kinds: the 10 of spec 000 plus ``file_line_regex``."""

_PATH_VALUE_KINDS = {"file_contains", "file_line_regex"}
_PATH_KINDS = {"file_exists", "dir_exists"}
_INT_KINDS = {"exit_code", "tool_calls_min", "tool_calls_max"}
_REGEX_KINDS = {"stdout_regex", "file_line_regex"}


class Expectation(BaseModel):
    """One expectation check of a task: ``{"check": "kind:arg", "weight": 1.0}``.

    The check string is parsed at load time; an unknown kind, a bad regex, a
    non-integer count or a ``file_contains`` without a path is a validation error.

    Example:
        >>> e = Expectation(check="file_contains:/tmp/out.txt:a:b")
        >>> e.kind, e.path, e.value
        ('file_contains', '/tmp/out.txt', 'a:b')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    weight: float = Field(default=1.0, ge=0)

    @field_validator("check")
    @classmethod
    def _valid_check(cls, check: str) -> str:
        parse_check(check)
        return check

    @property
    def kind(self) -> str:
        """The check kind, the text before the first ``:``."""
        return parse_check(self.check)[0]

    @property
    def path(self) -> str | None:
        """The file path of a file check, else None."""
        return parse_check(self.check)[1]

    @property
    def value(self) -> str:
        """The argument after the kind (and after the path for path:value checks)."""
        return parse_check(self.check)[2]


def parse_check(check: str) -> tuple[str, str | None, str]:
    """Split a check string into ``(kind, path, value)``; raise ValueError if invalid.

    ``file_contains:/path:text`` and ``file_line_regex:/path:regex`` split at the
    first ``:`` after the path, so the text may itself contain colons.

    Example:
        >>> parse_check("exit_code:0")
        ('exit_code', None, '0')
        >>> parse_check("file_contains:/a/b.txt:key: value")
        ('file_contains', '/a/b.txt', 'key: value')
    """
    kind, _, arg = check.partition(":")
    if kind not in CHECK_KINDS:
        raise ValueError(f"unknown check kind {kind!r} (known: {', '.join(CHECK_KINDS)})")
    path: str | None = None
    value = arg
    if kind in _PATH_VALUE_KINDS:
        path, sep, value = arg.partition(":")
        if not path.startswith("/") or not sep:
            raise ValueError(f"{kind} needs '{kind}:/absolute/path:text', got {check!r}")
    elif kind in _PATH_KINDS:
        if not arg.startswith("/"):
            raise ValueError(f"{kind} needs an absolute path, got {check!r}")
        path, value = arg, ""
    elif kind in _INT_KINDS:
        try:
            int(arg)
        except ValueError:
            raise ValueError(f"{kind} needs an integer, got {arg!r}") from None
    elif kind in {"stdout_contains", "llm_judge"} and not arg:
        raise ValueError(f"{kind} needs a value after ':'")
    if kind in _REGEX_KINDS:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex {value!r}: {exc}") from None
    return kind, path, value


class Task(BaseModel):
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
