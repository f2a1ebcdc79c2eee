"""Pydantic records: tasks, traces, scores and run metadata.

Field names follow spec 000 (bashkit-eval metrics) and spec 003 (per-LLM-call metrics)
wherever those specs name a field. These records are what the runner writes to the
store and what importers produce; the tidy tables in :mod:`evalnb.frames` are built
from them.

Example:
    >>> from evalnb.schema import Task
    >>> t = Task(id="t1", category="demo", description="d", prompt="echo hi",
    ...          expectations=[{"check": "stdout_contains:hi"}])
    >>> t.expectations[0].kind, t.expectations[0].weight
    ('stdout_contains', 1.0)
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


class ToolCallResult(BaseModel):
    """One bash invocation (spec 000 ``ToolCallResult`` plus timing and truncation).

    ``call_index`` is the 0-based position among the task's tool calls;
    ``call_number`` is the 1-based number of the LLM call that asked for it.
    """

    commands: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    duration_ms: float | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    call_index: int = 0
    call_number: int | None = None


class LLMCall(BaseModel):
    """One ``provider.chat()`` call (spec 003 ``LLMCallMetrics`` plus stop reason).

    ``cumulative_input`` is the running sum of ``input_tokens`` over calls 1..N.
    Token counts are None where the source did not record them.
    """

    call_number: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cumulative_input: int | None = None
    latency_ms: float | None = None
    tool_calls_made: int = 0
    stop_reason: str | None = None


class ContentBlock(BaseModel):
    """A message content block in bashkit-eval's format (text, tool_use, tool_result)."""

    model_config = ConfigDict(extra="allow")

    type: Literal["text", "tool_use", "tool_result"]
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: str | None = None
    is_error: bool | None = None


class Message(BaseModel):
    """A conversation message: role ``user``, ``assistant`` or ``tool_result``."""

    role: Literal["user", "assistant", "tool_result"]
    content: list[ContentBlock]


class AgentTrace(BaseModel):
    """What one task attempt did (spec 000 ``AgentTrace`` plus per-call records)."""

    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCallResult] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    tool_call_count: int = 0
    turns: int = 0
    natural_stop: bool = False
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    duration_ms: float = 0.0

    @property
    def last_tool_response(self) -> ToolCallResult | None:
        """The most recent tool call, or None (used by the ``exit_code`` check)."""
        return self.tool_calls[-1] if self.tool_calls else None

    @model_validator(mode="after")
    def _count_tool_calls(self) -> AgentTrace:
        self.tool_call_count = len(self.tool_calls)
        return self


Layer = Literal["expectation", "gate", "judge"]


class ScoreResult(BaseModel):
    """One check verdict (spec 000 ``ScoreResult``), tagged with its layer and kind."""

    check: str
    passed: bool
    detail: str = ""
    weight: float = 1.0
    layer: Layer = "expectation"
    kind: str = ""


class TaskScore(BaseModel):
    """Spec 000 ``TaskScore``: score = sum of passed weights, max_score = sum of weights."""

    task_id: str
    results: list[ScoreResult] = Field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0

    def all_passed(self) -> bool:
        """True when every check passed (vacuously true with no checks)."""
        return all(r.passed for r in self.results)

    def rate(self) -> float | None:
        """``score / max_score``, or None when max_score is 0."""
        return self.score / self.max_score if self.max_score else None


class TaskRecord(BaseModel):
    """Everything stored for one finished task attempt: the unit the frames are built from.

    ``error`` is set when the provider or sandbox failed; such a task still counts
    in every total (as failed).
    """

    task: Task
    epoch: int = 1
    trace: AgentTrace = Field(default_factory=AgentTrace)
    score: TaskScore
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """A task passes only if it did not error and every check passed.

        A CLI-tool scenario passes by spec 002's outcome instead (``extra["outcome"]``:
        all gates pass and, when enabled, the judge's weighted score reaches the
        threshold), so a single judge criterion scored low does not fail it.
        """
        if self.error is not None:
            return False
        if "outcome" in self.extra:
            return self.extra["outcome"] == "pass"
        return self.score.all_passed()


class RunMeta(BaseModel):
    """``run.json``: one model over one dataset."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    provider: str
    model: str
    source: str = "evalnb"
    dataset: str | None = None
    dataset_sha256: str | None = None
    max_turns: int | None = None
    epochs: int = 1
    sandbox: str | None = None
    sandbox_version: str | None = None
    evalnb_version: str | None = None
    guidance: str | None = None
    simulated: bool = False
    recorded_from: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status: Literal["running", "partial", "complete"] = "running"
    task_count: int | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
