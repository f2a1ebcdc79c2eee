"""The contracts between layers: providers (one ``chat()`` call in, one turn out) and sandboxes.

Every model (Anthropic, OpenAI-compatible, and the offline agents) implements
:class:`Provider`. Requests carry the conversation in bashkit-eval's neutral message
format (:class:`~evalnb.records.Message`); each provider translates it to its API.

Example:
    >>> r = ChatResponse(text="done", tool_uses=[], stop_reason="end_turn",
    ...                  input_tokens=10, output_tokens=2)
    >>> r.wants_tools
    False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from evalnb.records.score import ReplayAgreement, TaskScore
from evalnb.records.task import Task
from evalnb.records.trace import AgentTrace, Message, ToolCallResult


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model asked for."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ChatRequest:
    """What the agent loop sends for one turn.

    ``task``, ``epoch`` and ``turn`` (1-based) let offline agents decide what to do;
    real providers ignore them.
    """

    system: str
    messages: list[Message]
    tools: list[ToolSpec]
    task: Task
    epoch: int = 1
    turn: int = 1
    max_tokens: int = 4096


@dataclass
class ChatResponse:
    """One assistant turn: its text, tool calls, stop reason and usage.

    ``latency_ms`` is filled by the provider only when the figure is not the
    wall-clock time of the call (recorded or simulated latencies); otherwise the
    agent loop measures it. Token counts are None when the provider gave none;
    ``input_tokens`` is the whole prompt, cache reads and writes included (see
    :class:`~evalnb.records.LLMCall`); ``usage_error`` says why a count the provider
    should have given is None (its usage was missing, or a count was not one).
    """

    text: str
    tool_uses: list[ToolUse]
    stop_reason: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    usage_error: str | None = None

    @property
    def wants_tools(self) -> bool:
        """True when the turn asked for at least one tool call."""
        return bool(self.tool_uses)


class Recording(Protocol):
    """A recorded run a provider plays back (``replay:``): its totals and verdicts.

    ``source`` is the run folder or file replayed.
    """

    source: str

    def apply_recording(self, trace: AgentTrace, task_id: str, epoch: int) -> None:
        """Copy the recording's task totals (tokens, duration) onto the replayed trace."""
        ...

    def agreement(self, task_id: str, epoch: int, score: TaskScore) -> ReplayAgreement:
        """How many of the replay's check verdicts equal the recording's."""
        ...


class Provider(Protocol):
    """Anything that can play the assistant's turns.

    ``provider`` and ``model`` name it in ``run.json`` (for example
    ``"anthropic"`` and ``"claude-haiku-4-5"``). ``simulated`` marks an offline agent
    whose tokens and latencies are synthetic; ``recording`` is the run a replay plays
    back (None for every other provider), whose tokens and latencies are copied.
    """

    provider: str
    model: str
    simulated: bool
    recording: Recording | None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Play one assistant turn; raise :class:`ProviderError` when it cannot."""
        ...

    def settings(self) -> dict[str, Any]:
        """Non-secret settings to record in ``run.json``."""
        ...


class Sandbox(Protocol):
    """What the agent loop and the scorers need from a sandbox.

    ``workdir`` is the working directory commands start in (relative paths in gates
    and checks are resolved against it).
    """

    name: str
    version: str
    workdir: str

    async def exec(self, commands: str) -> ToolCallResult:
        """Run a bash script; return its bounded, recorded result."""
        ...

    def read_text(self, path: str) -> str | None:
        """A file's text, or None when it does not exist or is not a file."""
        ...

    def file_type(self, path: str) -> str | None:
        """``"file"``, ``"directory"``, ``"symlink"`` or None when the path does not exist."""
        ...

    def close(self) -> None:
        """Release the sandbox's resources."""
        ...
