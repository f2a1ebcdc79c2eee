"""What one task attempt did: tool calls, LLM calls and the conversation.

Field names follow spec 000 (``ToolCallResult``, ``AgentTrace``) and spec 003
(per-LLM-call metrics).

Example:
    >>> trace = AgentTrace(tool_calls=[ToolCallResult(commands="ls", exit_code=0)])
    >>> trace.tool_call_count, trace.last_tool_response.commands
    (1, 'ls')
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ToolInvocation(BaseModel):
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


class ToolCallResult(BaseModel):
    """One bash invocation (spec 000 ``ToolCallResult`` plus timing and truncation).

    ``timed_out`` is set by the sandbox when the call hit its time limit.
    ``call_index`` is the 0-based position among the task's tool calls;
    ``call_number`` is the 1-based number of the LLM call that asked for it.
    ``invocations`` are the runs of the tool under test the call made, recorded by a
    scenario's sandbox; None when nothing recorded them (bash tasks, imports).
    """

    commands: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    duration_ms: float | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    call_index: int = 0
    call_number: int | None = None
    invocations: list[ToolInvocation] | None = None


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
    """What one task attempt did (spec 000 ``AgentTrace`` plus per-call records).

    ``natural_stop`` (spec 002's completion, spec 000's natural stop) is None when the
    source does not say how the attempt ended (an imported plain transcript, a Claude
    Code session without its ``result`` line): unknown, neither completed nor not.
    """

    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCallResult] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    tool_call_count: int = 0
    turns: int = 0
    natural_stop: bool | None = False
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
