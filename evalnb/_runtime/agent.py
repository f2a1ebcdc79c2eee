"""The agent loop: provider turns, tool calls in the sandbox, and the recorded trace.

Semantics follow spec 000: a turn is one ``provider.chat()`` call; every tool_use
block of a turn runs in order and all of that turn's results go back in one
message; ``natural_stop`` is true when the model stops asking for tools; at the
turn limit the last turn's tools still run and the loop ends with
``natural_stop == False``. Per-call records follow spec 003.

Choices where the specs are silent: a reply cut by the output limit (stop reason
``length`` or ``max_tokens``, see :data:`CUT_STOP_REASONS`) that asks for no tool ends
the attempt as a cut, ``natural_stop == False``, its stop reason kept on the LLM call.
A reply's text beyond :data:`MAX_REPLY_CHARS` is cut (the cut is marked in the text).
A reply whose token counts cannot be used (no usage, a negative count: see
:func:`~evalnb._runtime.providers.sdk.token_counts`) is otherwise used: its counts are
unknown, the call's ``usage_error`` says why, and the attempt goes on.

Example:
    >>> import asyncio
    >>> from evalnb._runtime.providers.offline import ReferenceProvider
    >>> from evalnb._runtime.sandbox import BashkitSandbox
    >>> from evalnb.records import Task
    >>> task = Task(id="t", category="c", prompt="say hi", solution="echo hi")
    >>> out = asyncio.run(run_agent(task, ReferenceProvider(), BashkitSandbox()))
    >>> out.trace.turns, out.trace.tool_calls[0].stdout, out.trace.natural_stop
    (2, 'hi\\n', True)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import bashkit

from evalnb._runtime.sandbox.bashkit import HOSTNAME, USERNAME
from evalnb.errors import ProviderError
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    Task,
    ToolCallResult,
    cumulative_inputs,
)
from evalnb.records.interfaces import ChatRequest, Provider, Sandbox, ToolSpec, ToolUse
from evalnb.records.trace import tool_result_text

DEFAULT_MAX_TURNS = 10
TOOL_NAME = "bash"

EventSink = Callable[[str, dict[str, Any]], None]
"""Receives ``(event_type, payload)`` for each ``llm_call`` and ``tool_call`` as it happens."""


@cache
def bash_tool_spec() -> ToolSpec:
    """The ``bash`` tool offered to models: bashkit BashTool's description and schema.

    Example:
        >>> bash_tool_spec().input_schema["required"]
        ['commands']
    """
    tool = bashkit.BashTool(username=USERNAME, hostname=HOSTNAME)
    return ToolSpec(TOOL_NAME, tool.description(), json.loads(tool.input_schema()))


@cache
def default_system_prompt() -> str:
    """BashTool's own system prompt (for user ``eval``), as bashkit-eval uses.

    Example:
        >>> "/home/eval" in default_system_prompt()
        True
    """
    return bashkit.BashTool(username=USERNAME, hostname=HOSTNAME).system_prompt()


UNREACHABLE = "provider unreachable"
"""How the error of an attempt the provider's server never answered begins."""
ERROR_KINDS = {
    "connection": UNREACHABLE,
    "status": "provider error",
    "response": "bad provider response",
}
"""The start of an attempt's ``error`` for each kind of :class:`ProviderError`; an
exception the provider raised that is not a ProviderError (a truncated or malformed
answer) counts as ``"response"``, and an attempt cut by its time limit begins
``"task timeout"``."""


CUT_STOP_REASONS = frozenset({"length", "max_tokens"})
"""Stop reasons of a reply cut by the output-token limit (OpenAI's, Anthropic's)."""

MAX_REPLY_CHARS = 200_000
"""The most characters of one reply's text kept (sent back, recorded); the rest is cut."""


def capped(text: str) -> str:
    """``text`` cut to :data:`MAX_REPLY_CHARS`, the cut said at its end.

    Example:
        >>> capped("x" * (MAX_REPLY_CHARS + 5))[MAX_REPLY_CHARS - 1 :]
        'x[... 5 characters of this reply cut by evalnb ...]'
    """
    if len(text) <= MAX_REPLY_CHARS:
        return text
    cut = len(text) - MAX_REPLY_CHARS
    return f"{text[:MAX_REPLY_CHARS]}[... {cut} characters of this reply cut by evalnb ...]"


@dataclass
class AgentOutcome:
    """The trace of one attempt, and the error that ended it early (if any)."""

    trace: AgentTrace
    error: str | None = None


async def run_agent(
    task: Task,
    provider: Provider,
    sandbox: Sandbox,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    epoch: int = 1,
    system: str | None = None,
    on_event: EventSink | None = None,
    timeout_s: float | None = None,
) -> AgentOutcome:
    """Run one task attempt to its natural stop, the turn limit or ``timeout_s``.

    A provider failure (of any exception type) or the time limit ends the attempt: the
    trace so far is kept and the error is returned, classified by its first words
    (:data:`ERROR_KINDS`), so the runner records the task as errored rather than drop it.

    Example:
        >>> import asyncio
        >>> from evalnb._runtime.providers.offline import ReferenceProvider
        >>> from evalnb._runtime.sandbox import BashkitSandbox
        >>> task = Task(id="t", category="c", prompt="p", solution="echo hi; exit 3")
        >>> out = asyncio.run(run_agent(task, ReferenceProvider(), BashkitSandbox()))
        >>> [m.role for m in out.trace.messages], out.trace.tool_calls[0].exit_code
        (['user', 'assistant', 'tool_result', 'assistant'], 3)
    """
    emit = on_event or (lambda _type, _payload: None)
    tool = bash_tool_spec()
    trace = AgentTrace(
        messages=[Message(role="user", content=[ContentBlock(type="text", text=task.prompt)])]
    )
    messages = trace.messages
    synthetic_clock = provider.simulated or provider.recording is not None
    started = time.perf_counter()
    error: str | None = None
    try:
        async with asyncio.timeout(timeout_s):
            for turn in range(1, max_turns + 1):
                request = ChatRequest(
                    system=system or task.system or default_system_prompt(),
                    messages=list(messages),
                    tools=[tool],
                    task=task,
                    epoch=epoch,
                    turn=turn,
                )
                call_started = time.perf_counter()
                try:
                    response = await provider.chat(request)
                except ProviderError as exc:
                    kind = ERROR_KINDS.get(exc.kind, ERROR_KINDS["status"])
                    error = f"{kind} on turn {turn}: {exc}"
                    break
                except Exception as exc:  # a truncated or malformed answer the SDK cannot read
                    kind = ERROR_KINDS["response"]
                    error = f"{kind} on turn {turn}: {type(exc).__name__}: {str(exc)[:500]}"
                    break
                latency = response.latency_ms
                if latency is None and provider.recording is None:
                    latency = (time.perf_counter() - call_started) * 1000
                inputs = [c.input_tokens for c in trace.llm_calls] + [response.input_tokens]
                call = LLMCall(
                    call_number=turn,
                    input_tokens=response.input_tokens,
                    output_tokens=response.output_tokens,
                    cache_read_tokens=response.cache_read_tokens,
                    cache_write_tokens=response.cache_write_tokens,
                    cumulative_input=cumulative_inputs(inputs)[-1],
                    latency_ms=latency,
                    tool_calls_made=len(response.tool_uses),
                    stop_reason=response.stop_reason,
                    usage_error=response.usage_error,
                )
                trace.llm_calls.append(call)
                trace.turns = turn
                trace.total_input_tokens += response.input_tokens or 0
                trace.total_output_tokens += response.output_tokens or 0
                emit("llm_call", call.model_dump())

                blocks: list[ContentBlock] = []
                if response.text:
                    blocks.append(ContentBlock(type="text", text=capped(response.text)))
                blocks += [
                    ContentBlock(type="tool_use", id=use.id, name=use.name, input=use.input)
                    for use in response.tool_uses
                ]
                messages.append(Message(role="assistant", content=blocks))
                if not response.wants_tools:
                    trace.natural_stop = response.stop_reason not in CUT_STOP_REASONS
                    break

                results: list[ContentBlock] = []
                for use in response.tool_uses:
                    result = await _run_tool(use, sandbox)
                    result.call_index = len(trace.tool_calls)
                    result.call_number = turn
                    trace.tool_calls.append(result)
                    emit("tool_call", result.model_dump())
                    results.append(
                        ContentBlock(
                            type="tool_result",
                            tool_use_id=use.id,
                            content=tool_result_text(result),
                            is_error=result.exit_code != 0,
                        )
                    )
                messages.append(Message(role="tool_result", content=results))
    except TimeoutError:
        error = f"task timeout: the attempt ran past {timeout_s:g}s ({trace.turns} turns done)"

    trace.tool_call_count = len(trace.tool_calls)
    if synthetic_clock:
        trace.duration_ms = sum(c.latency_ms or 0 for c in trace.llm_calls) + sum(
            t.duration_ms or 0 for t in trace.tool_calls
        )
    else:
        trace.duration_ms = (time.perf_counter() - started) * 1000
    return AgentOutcome(trace=trace, error=error)


async def _run_tool(use: ToolUse, sandbox: Sandbox) -> ToolCallResult:
    """Run one tool_use block; a wrong tool name or bad input is answered as an error."""
    commands = use.input.get("commands") if isinstance(use.input, dict) else None
    if use.name != TOOL_NAME:
        return ToolCallResult(
            commands=str(commands or ""),
            stderr=f"unknown tool {use.name!r}: the only tool is {TOOL_NAME!r}",
            exit_code=127,
        )
    if not isinstance(commands, str):
        return ToolCallResult(
            commands=json.dumps(use.input)[:2000],
            stderr="invalid input: 'commands' (a string) is required",
            exit_code=2,
        )
    return await sandbox.exec(commands)
