"""What one task attempt did: tool calls, LLM calls and the conversation.

Field names follow spec 000 (``ToolCallResult``, ``AgentTrace``) and spec 003
(per-LLM-call metrics).

Example:
    >>> trace = AgentTrace(tool_calls=[ToolCallResult(commands="ls", exit_code=0)])
    >>> trace.tool_call_count, trace.last_tool_response.commands
    (1, 'ls')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import AliasChoices, ConfigDict, Field, model_validator

from evalnb.records.base import Record


class ToolInvocation(Record):
    """One run of the tool under test inside a tool call (spec 002's structured event).

    ``argv`` is what the tool received, ``argv[0]`` being the tool's name (its
    basename, however it was called). ``exit_code`` is None when the run was killed
    before it finished (the call timed out or was stopped). ``stdout_bytes`` and
    ``stderr_bytes`` count what it wrote; ``invocation_index`` is its 0-based position
    among the call's invocations, in the order they started.
    """

    argv: list[str]
    exit_code: int | None = None
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None
    duration_ms: float | None = None
    invocation_index: int = 0


class ToolCallResult(Record):
    """One bash invocation (spec 000 ``ToolCallResult`` plus timing and truncation).

    ``timed_out`` is set by the sandbox when the call hit its time limit.
    ``call_index`` is the 0-based position among the task's tool calls;
    ``call_number`` is the 1-based number of the LLM call that asked for it.
    ``exit_code`` is None where the source did not report one (an imported Inspect
    tool event without an exit code); such a call does not count as ok.
    ``invocations`` are the runs of the tool under test the call made, recorded by a
    scenario's sandbox; None when nothing recorded them (bash tasks, imports).
    """

    commands: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = 0
    duration_ms: float | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    call_index: int = 0
    call_number: int | None = None
    invocations: list[ToolInvocation] | None = None


def tool_result_text(result: ToolCallResult) -> str:
    """The text sent back to the model for one tool call (bashkit-eval's format).

    stdout, then ``STDERR: <stderr>`` when stderr is non-empty, then
    ``Exit code: N`` when N is known and not 0, each on a new line when something
    precedes it; ``(no output)`` when all are empty.

    Example:
        >>> tool_result_text(ToolCallResult(commands="x", stdout="a\\n", stderr="bad", exit_code=2))
        'a\\n\\nSTDERR: bad\\nExit code: 2'
        >>> tool_result_text(ToolCallResult(commands="true"))
        '(no output)'
    """
    text = result.stdout
    if result.stderr:
        text += ("\n" if text else "") + f"STDERR: {result.stderr}"
    if result.exit_code not in (0, None):
        text += ("\n" if text else "") + f"Exit code: {result.exit_code}"
    return text or "(no output)"


class LLMCall(Record):
    """One ``provider.chat()`` call (spec 003 ``LLMCallMetrics`` plus cache counts and stop reason).

    ``input_tokens`` is the whole prompt the model saw, cached or not (spec 003 takes
    it from OpenAI's ``prompt_tokens``, which includes cached tokens; for Anthropic it
    is ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``).
    ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of it read from and
    written to the provider's prompt cache, so the uncached part is
    ``input_tokens - cache_read_tokens - cache_write_tokens``.
    ``cumulative_input`` is the running sum of ``input_tokens`` over calls 1..N, None
    from the first call whose count is unknown on (:func:`cumulative_inputs`).
    Token counts are None where the source did not record them; ``usage_error`` says why
    a provider's reply left them unknown (no usage, a count missing, negative or not a
    whole number), None when nothing was wrong. ``compacted`` is True when the agent
    compacted (summarised and dropped) its history right before this call, as the source
    marks it (Claude Code's ``compact_boundary`` line, Codex's ``compacted`` event, an ATIF
    continuation or ``context_management`` step), and None where the source has no such
    marker.

    Example:
        >>> LLMCall(call_number=1, input_tokens=70_000, cache_read_tokens=69_000,
        ...         cache_write_tokens=990).uncached_input_tokens
        10
    """

    call_number: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = Field(
        default=None, validation_alias=AliasChoices("cache_write_tokens", "cache_creation_tokens")
    )
    cache_write_1h_tokens: int | None = None
    cumulative_input: int | None = None
    latency_ms: float | None = None
    tool_calls_made: int = 0
    stop_reason: str | None = None
    compacted: bool | None = None
    usage_error: str | None = None

    @property
    def uncached_input_tokens(self) -> int | None:
        """The part of ``input_tokens`` neither read from nor written to the cache."""
        if self.input_tokens is None:
            return None
        return self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)


def cumulative_inputs(input_tokens: Iterable[int | None]) -> list[int | None]:
    """Spec 003's ``cumulative_input`` of each call: the sum of ``input_tokens`` over calls
    1..N, in call order.

    A call whose count is unknown (None) makes that sum unknown, so every call from the
    first unknown one on has None: the running total never silently skips a call.

    Example:
        >>> cumulative_inputs([1000, 1200, 1500]), cumulative_inputs([1000, None, 1600])
        ([1000, 2200, 3700], [1000, None, None])
    """
    out: list[int | None] = []
    total: int | None = 0
    for count in input_tokens:
        total = None if total is None or count is None else total + count
        out.append(total)
    return out


class ContentBlock(Record):
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


class Message(Record):
    """A conversation message: role ``user``, ``assistant`` or ``tool_result``."""

    role: Literal["user", "assistant", "tool_result"]
    content: list[ContentBlock]


class AgentTrace(Record):
    """What one task attempt did (spec 000 ``AgentTrace`` plus per-call records).

    ``natural_stop`` (spec 002's completion, spec 000's natural stop) is None when the
    source does not say how the attempt ended (an imported plain transcript, a Claude
    Code session without its ``result`` line): unknown, neither completed nor not.
    ``duration_ms`` is None when the source did not record it (an Inspect sample
    without ``total_time``, a Terminal-Bench trial without timestamps): unknown, not 0.
    """

    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCallResult] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    tool_call_count: int = 0
    turns: int = 0
    natural_stop: bool | None = False
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    duration_ms: float | None = 0.0

    @property
    def last_tool_response(self) -> ToolCallResult | None:
        """The most recent tool call, or None (used by the ``exit_code`` check)."""
        return self.tool_calls[-1] if self.tool_calls else None

    @model_validator(mode="after")
    def _count_tool_calls(self) -> AgentTrace:
        self.tool_call_count = len(self.tool_calls)
        return self
