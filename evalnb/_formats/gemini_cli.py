"""Read Gemini CLI chat sessions (``{sessionId, projectHash, startTime, messages[]}``).

A session file (as Gemini CLI keeps it, and as Harbor saves it as
``agent/gemini-cli.trajectory.json``) is one task attempt and one run (provider
``google``, model the one most of its replies name). ``passed`` is null: a session
carries no verdict. What evalnb makes of it:

- ``messages`` are read once per ``id`` (a message written again replaces the first).
- ``llm_calls``: one per ``gemini`` message with ``tokens`` (Gemini CLI writes the
  response's usage on the reply it belongs to). ``input_tokens`` is the whole prompt:
  ``input`` (Gemini's ``promptTokenCount``, cached part included) plus ``tool``
  (``toolUsePromptTokenCount``, outside it); ``cache_read_tokens`` is ``cached``;
  ``output_tokens`` is ``output`` plus ``thoughts``, since thinking tokens are not in
  ``output`` but are generated and billed as output (``thoughts`` is also the task's
  ``reasoning_tokens``). A ``gemini`` message without ``tokens`` is not a call.
- ``tool_calls``: each reply's ``toolCalls`` (``commands``:
  :func:`~evalnb._formats.agent_logs.command_text`; ``stdout`` the function response's
  ``output``, ``stderr`` its ``error``). ``exit_code`` is the ``Exit Code: N`` the shell
  tool's output states, else 0 for ``status`` ``success`` and 1 for ``error`` (those
  counted in ``exit_codes_inferred``), else null (``cancelled``, or a call that never
  finished).
- The prompt is the first user message; ``natural_stop`` is true when the last reply
  asked for no tool; a session whose last message is an ``error`` message is errored,
  as is a session cut off while a tool ran: a tool call still in a status before
  ``success``/``error``/``cancelled`` (``executing``, ``scheduled``, ...), whose result
  the file never got (Gemini CLI rewrites a message as its calls finish).
  ``duration_ms`` spans ``startTime``, ``lastUpdated`` and the message times.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._formats.agent_logs import (
    Attempt,
    Usage,
    command_text,
    most_common,
    one_run,
    parse_time,
    span_ms,
    stated_exit_code,
    task_record,
    warn_local_times,
)
from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import read_json, validate
from evalnb.records import (
    ContentBlock,
    Message,
    RunMeta,
    TaskRecord,
    ToolCallResult,
)

SOURCE = "gemini-cli"
_STATUS_CODES = {"success": 0, "error": 1}
_FINISHED = (*_STATUS_CODES, "cancelled")
"""The tool call statuses of a call that ended; any other (``executing``, ...) is running."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Tokens(_Open):
    """A reply's ``tokens``."""

    input: int = Field(ge=0)
    output: int = Field(ge=0)
    cached: int | None = Field(None, ge=0)
    thoughts: int | None = Field(None, ge=0)
    tool: int | None = Field(None, ge=0)

    def usage(self) -> Usage:
        """The whole prompt, cache reads and output with thinking (module docstring)."""
        return Usage(self.input + (self.tool or 0), self.output + (self.thoughts or 0), self.cached)


class ToolCall(_Open):
    """One of a reply's ``toolCalls``."""

    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: list[dict[str, Any]] | None = None
    status: str | None = None


class SessionMessage(_Open):
    """One of ``messages[]``."""

    id: str
    timestamp: str | None = None
    type: str
    content: str | list[dict[str, Any]] | None = None
    model: str | None = None
    tokens: Tokens | None = None
    toolCalls: list[ToolCall] | None = None


class Session(_Open):
    """The session file."""

    sessionId: str
    startTime: str | None = None
    lastUpdated: str | None = None
    messages: list[SessionMessage]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _response(call: ToolCall) -> dict[str, Any]:
    for part in call.result or []:
        response = (part.get("functionResponse") or {}).get("response")
        if isinstance(response, dict):
            return response
    return {}


def read_gemini_session(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one Gemini CLI session file as a run of one task attempt.

    Example:
        >>> import tempfile, pathlib, json
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "session.json"
        >>> _ = p.write_text(json.dumps({"sessionId": "s", "projectHash": "h", "messages": [
        ...     {"id": "1", "type": "user", "content": [{"text": "hi"}]},
        ...     {"id": "2", "type": "gemini", "content": "hello", "model": "gemini-x",
        ...      "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 3, "tool": 0}}]}))
        >>> [(m.model, r.trace.total_output_tokens) for m, [r] in read_gemini_session(p)]
        [('gemini-x', 5)]
    """
    path = Path(path)
    text, doc = read_json(path)
    session = validate(path, text, doc, Session)
    by_id: dict[str, SessionMessage] = {}
    for message in session.messages:
        by_id[message.id] = message  # a message written again replaces the first copy
    attempt = Attempt(task_id=session.sessionId, category=SOURCE, turns=0)
    times, local = [], False
    inferred, reasoning, models = 0, 0, []
    asked: bool | None = None
    for value in (session.startTime, session.lastUpdated):
        time, naive = parse_time(value)
        times += [time] if time else []
        local |= naive
    for message in by_id.values():
        time, naive = parse_time(message.timestamp)
        times += [time] if time else []
        local |= naive
        if message.type == "user":
            said = _text(message.content)
            attempt.prompt = attempt.prompt or said or None
            attempt.messages.append(
                Message(role="user", content=[ContentBlock(type="text", text=said)])
            )
            continue
        if message.type == "error":
            attempt.error = _text(message.content) or "error"
        if message.type != "gemini":
            continue
        attempt.error = None
        if message.tokens is not None:
            attempt.llm_calls.append(
                message.tokens.usage().call(tool_calls_made=len(message.toolCalls or []))
            )
            models.append(message.model)
            reasoning += message.tokens.thoughts or 0
            asked = bool(message.toolCalls)
        blocks = [ContentBlock(type="text", text=t)] if (t := _text(message.content)) else []
        results = []
        for call in message.toolCalls or []:
            response = _response(call)
            command = command_text(call.name, call.args)
            out, err = str(response.get("output", "")), str(response.get("error", "") or "")
            code = stated_exit_code(out)
            if code is None and call.status in _STATUS_CODES:
                code = _STATUS_CODES[call.status]
                inferred += 1
            attempt.tool_calls.append(
                ToolCallResult(
                    commands=command,
                    stdout=out,
                    stderr=err,
                    exit_code=code,
                    call_number=len(attempt.llm_calls) or None,
                )
            )
            blocks.append(
                ContentBlock(
                    type="tool_use", id=call.id, name=call.name, input={"commands": command}
                )
            )
            results.append(
                ContentBlock(
                    type="tool_result",
                    tool_use_id=call.id,
                    content=out or err,
                    is_error=call.status == "error",
                )
            )
        attempt.messages.append(Message(role="assistant", content=blocks))
        if results:
            attempt.messages.append(Message(role="tool_result", content=results))
    running = [
        c
        for m in by_id.values()
        for c in m.toolCalls or []
        if c.status is not None and c.status not in _FINISHED
    ]
    if running:
        attempt.error = (
            f"the session was cut off: tool call {running[0].name!r} never finished "
            f"(status {running[0].status})"
        )
    if local:
        warn_local_times(path, ["timestamp"])
    attempt.turns = len(attempt.llm_calls)
    attempt.duration_ms = span_ms(times)
    attempt.natural_stop = None if asked is None else not asked and attempt.error is None
    attempt.extra = {
        "session_id": session.sessionId,
        "reasoning_tokens": reasoning if attempt.llm_calls else None,
        "exit_codes_inferred": inferred,
        "local_times": local,
    }
    return one_run(
        path,
        task_record(attempt),
        source=SOURCE,
        provider="google",
        model=most_common(models),
        key=session.sessionId,
        unavailable=["checks", "per_call_latency", "tool_call_duration", "cache_write_tokens"],
        exit_codes="'Exit Code: N' in the output, else 0 for success and 1 for error",
    )


def _recognises(probe: Probe) -> bool:
    keys = probe.keys()
    return (
        not probe.is_dir
        and {"sessionId", "messages"} <= keys
        and bool(keys & {"projectHash", "startTime"})
    )


FORMAT = Format("a Gemini CLI session", _recognises, read=read_gemini_session, key="gemini-cli")
