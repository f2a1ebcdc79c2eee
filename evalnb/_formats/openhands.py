"""Read OpenHands event lists (a JSON array of actions and observations).

A file is one task attempt and one run (provider ``openhands``, model the one most of
its responses name). Events carry ``id``, ``timestamp``, ``source`` and either
``action`` + ``args`` or ``observation`` + ``content`` + ``extras`` (``cause`` is the id
of the action an observation answers). What evalnb makes of it:

- Each event is read once per ``id`` (a repeated event is skipped).
- ``llm_calls``: one per distinct ``tool_call_metadata.model_response.id``, in order:
  OpenHands repeats a response's usage on every action it produced and on their
  observations. The usage is LiteLLM's: ``input_tokens`` = ``prompt_tokens`` (cache
  reads and writes included), ``cache_read_tokens`` = ``cache_read_input_tokens`` (else
  ``prompt_tokens_details.cached_tokens``), ``cache_write_tokens`` =
  ``cache_creation_input_tokens``, ``output_tokens`` = ``completion_tokens``;
  ``stop_reason`` is the response's ``finish_reason``.
- ``tool_calls``: each agent action with ``tool_call_metadata`` (``commands``: a
  ``run`` action's ``command``, else ``function({arguments as JSON})``), answered by
  the observation whose ``cause`` is its id: ``stdout`` its content (``stderr`` for an
  ``error`` observation), ``exit_code`` its ``extras.metadata.exit_code`` or
  ``extras.exit_code`` (OpenHands' -1, "not known", and anything else are null).
- The prompt is the first user message; ``natural_stop`` is true when the agent called
  ``finish``; the last ``agent_state_changed`` to ``error`` errors the task (with its
  reason). Event times have no zone: read as UTC and flagged (``local_times``), and
  ``duration_ms`` spans them. ``passed`` is null: an event list carries no verdict.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, RootModel

from evalnb._formats.agent_logs import (
    Attempt,
    Usage,
    command_text,
    json_arguments,
    most_common,
    one_run,
    parse_time,
    span_ms,
    task_record,
    warn_local_times,
)
from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import read_json, validate
from evalnb.records import (
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    TaskRecord,
    ToolCallResult,
)

SOURCE = "openhands"


class Event(BaseModel):
    """One event (only the fields read are checked)."""

    model_config = ConfigDict(extra="allow")

    id: int
    timestamp: str | None = None
    source: str | None = None
    action: str | None = None
    observation: str | None = None
    cause: int | None = None
    message: str | None = None
    content: str | None = None
    args: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    tool_call_metadata: dict[str, Any] | None = None


class Events(RootModel[list[Event]]):
    """The file: a JSON array of events."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(response: dict[str, Any]) -> Usage:
    usage = response.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    read = _int(usage.get("cache_read_input_tokens"))
    return Usage(
        _int(usage.get("prompt_tokens")),
        _int(usage.get("completion_tokens")),
        read if read is not None else _int(details.get("cached_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
    )


def _exit_code(extras: dict[str, Any]) -> int | None:
    code = _int((extras.get("metadata") or {}).get("exit_code"))
    code = code if code is not None else _int(extras.get("exit_code"))
    return None if code is None or code < 0 else code


def _command(event: Event, metadata: dict[str, Any]) -> str:
    if event.action == "run" and isinstance(event.args.get("command"), str):
        return str(event.args["command"])
    response = metadata.get("model_response") or {}
    calls = [
        c
        for choice in response.get("choices") or []
        for c in (choice.get("message") or {}).get("tool_calls") or []
        if c.get("id") == metadata.get("tool_call_id")
    ]
    arguments = json_arguments((calls[0].get("function") or {}).get("arguments")) if calls else {}
    name = str(metadata.get("function_name") or event.action)
    return command_text(name, arguments, shell=False)


def read_openhands(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one OpenHands event list as a run of one task attempt (module docstring).

    Example:
        >>> import tempfile, pathlib, json
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "events.json"
        >>> meta = {"tool_call_id": "c1", "function_name": "execute_bash", "model_response":
        ...     {"id": "r1", "model": "m", "usage": {"prompt_tokens": 50, "completion_tokens": 5}}}
        >>> _ = p.write_text(json.dumps([
        ...     {"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "agent", "action": "run",
        ...      "args": {"command": "ls"}, "tool_call_metadata": meta},
        ...     {"id": 2, "timestamp": "2025-01-01T00:00:01", "source": "agent",
        ...      "observation": "run", "cause": 1, "content": "a", "tool_call_metadata": meta,
        ...      "extras": {"metadata": {"exit_code": 0}}}]))
        >>> [(r.trace.total_input_tokens, r.trace.tool_calls[0].exit_code)
        ...  for m, [r] in read_openhands(p)]
        [(50, 0)]
    """
    path = Path(path)
    text, doc = read_json(path)
    events = validate(path, text, doc, Events).root
    attempt = Attempt(task_id=path.stem, category=SOURCE, natural_stop=False)
    calls: dict[str, LLMCall] = {}
    models: list[str | None] = []
    by_action: dict[int, ToolCallResult] = {}
    seen: set[int] = set()
    times, local = [], False
    for event in events:
        if event.id in seen:
            continue
        seen.add(event.id)
        time, naive = parse_time(event.timestamp)
        times += [time] if time else []
        local |= naive
        metadata = event.tool_call_metadata or {}
        response = metadata.get("model_response") or {}
        if response.get("id") and response["id"] not in calls:
            choice = (response.get("choices") or [{}])[0]
            calls[response["id"]] = _usage(response).call(stop_reason=choice.get("finish_reason"))
            attempt.llm_calls.append(calls[response["id"]])
            models.append(response.get("model"))
        if event.action == "message" and event.source == "user" and attempt.prompt is None:
            attempt.prompt = str(event.args.get("content") or event.message or "") or None
            attempt.messages.append(
                Message(role="user", content=[ContentBlock(type="text", text=attempt.prompt)])
            )
        elif event.action and event.source == "agent" and metadata:
            _action(attempt, event, metadata, response.get("id"), calls, by_action)
        elif event.observation and event.cause in by_action:
            tool = by_action[event.cause]
            body = event.content or ""
            tool.exit_code = _exit_code(event.extras)
            tool.stdout, tool.stderr = ("", body) if event.observation == "error" else (body, "")
            attempt.messages.append(
                Message(
                    role="tool_result",
                    content=[
                        ContentBlock(
                            type="tool_result",
                            tool_use_id=str(event.cause),
                            content=body,
                            is_error=event.observation == "error",
                        )
                    ],
                )
            )
        elif event.observation == "agent_state_changed":
            state = event.extras.get("agent_state")
            attempt.error = (
                f"agent error: {event.extras.get('reason') or 'no reason given'}"
                if state == "error"
                else attempt.error
            )
    if local:
        warn_local_times(path, ["timestamp"])
    attempt.turns = len(attempt.llm_calls)
    attempt.duration_ms = span_ms(times)
    attempt.extra = {"local_times": local}
    unavailable = ["checks", "per_call_latency", "tool_call_duration"]
    return one_run(
        path,
        task_record(attempt),
        source=SOURCE,
        provider=SOURCE,
        model=most_common(models),
        key=path.stem,
        unavailable=unavailable,
    )


def _action(
    attempt: Attempt,
    event: Event,
    metadata: dict[str, Any],
    response_id: str | None,
    calls: dict[str, LLMCall],
    by_action: dict[int, ToolCallResult],
) -> None:
    """One agent action the model called as a function: a tool call of its response."""
    call = calls.get(response_id) if response_id else None
    number = list(calls).index(response_id) + 1 if response_id in calls else None
    if call is not None:
        call.tool_calls_made += 1
    if event.action == "finish":
        attempt.natural_stop = True
    command = _command(event, metadata)
    tool = ToolCallResult(commands=command, exit_code=None, call_number=number)
    by_action[event.id] = tool
    attempt.tool_calls.append(tool)
    blocks = (
        [ContentBlock(type="text", text=t)] if (t := str(event.args.get("thought") or "")) else []
    )
    blocks.append(
        ContentBlock(
            type="tool_use",
            id=str(event.id),
            name=str(metadata.get("function_name") or event.action),
            input={"commands": command},
        )
    )
    attempt.messages.append(Message(role="assistant", content=blocks))


def _recognises(probe: Probe) -> bool:
    doc = probe.doc
    if probe.is_dir or not isinstance(doc, list) or not doc or not isinstance(doc[0], dict):
        return False
    return {"id", "timestamp", "source"} <= set(doc[0]) and bool(
        {"action", "observation"} & set(doc[0])
    )


FORMAT = Format("an OpenHands event list", _recognises, read=read_openhands, key="openhands")
