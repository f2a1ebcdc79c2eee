"""Read Codex CLI logs: session rollouts (``~/.codex/sessions``) and ``codex exec --json``.

Each file is one task attempt and one run (``provider`` the session's
``model_provider``, ``model`` the one most of its calls used). ``passed`` is null: a
Codex log carries no verdict.

**Rollouts** (``rollout-<time>-<id>.jsonl``: one ``{timestamp, type, payload}`` per line):

- ``llm_calls``: one per model response. Codex writes a ``token_count`` event after
  each response with the session's running ``total_token_usage`` (and
  ``last_token_usage``), and most of them twice: a call is a ``token_count`` whose total
  differs from the last one seen, and its usage is the difference of the totals, so each
  call counts once and the task's totals equal the last total. ``input_tokens`` includes
  ``cached_input_tokens`` (the whole prompt, as evalnb counts it; ``cache_read_tokens``
  is that part) and ``output_tokens`` includes ``reasoning_output_tokens`` (also a task
  column, ``reasoning_tokens``); Codex records no cache writes (null). The model is the
  latest ``turn_context``'s.
- ``tool_calls``: ``function_call``, ``custom_tool_call`` (``apply_patch``) and
  ``local_shell_call`` items, each belonging to the response whose ``token_count``
  follows it, answered by the ``*_output`` item with the same ``call_id``. ``commands``:
  :func:`~evalnb._formats.agent_logs.command_text` of the arguments; ``exit_code`` and
  ``duration_ms`` from the output's ``metadata`` (older shells wrote JSON ``{"output",
  "metadata": {"exit_code", "duration_seconds"}}``), else the exit code its text states
  (``Process exited with code N``, ``Exit code: N``), else ``exec_command_end`` /
  ``patch_apply_end`` events where the rollout kept them; otherwise null.
- **Compaction** (a ``compacted`` line, a ``context_compacted`` event or a
  ``compaction`` item): the next call is marked ``compacted``; the task's
  ``compactions`` column counts them. Codex writes one compaction as several of these
  (codex-rs persists the ``compacted`` item, then sends ``ContextCompacted``, which the
  rollout keeps as a ``context_compacted`` event), with no model response between them,
  so the signals between two responses are one compaction.
- **Ending**: the prompt is the first ``user_message`` event. A turn that started and
  neither completed (``task_complete``) nor was aborted means the session was cut off:
  the task is errored, as it is for ``turn_aborted``; tool calls made just before the
  end without a following ``token_count`` belong to a response whose usage is unknown
  (null tokens). ``natural_stop``: the last response asked for no tool and its turn
  completed. ``duration_ms`` spans the lines' timestamps.

**``codex exec --json``** (``thread.started``, ``turn.started``, ``item.*``,
``turn.completed`` / ``turn.failed``): there is no model, version or per-call usage.
``turn.completed`` carries the thread's running total (``input_tokens`` with
``cached_input_tokens`` in it, ``output_tokens``), so the last one is the attempt's
totals (totals only: ``turns`` and the per-call tables are unknown); a stream cut off
before it has no usage (null) and is errored, as is ``turn.failed``. Completed
``command_execution`` items are tool calls (``exit_code``, ``aggregated_output``),
``file_change`` and ``mcp_tool_call`` items too (``status`` ``completed`` is exit 0,
``failed`` 1); an item that started and never completed has a null exit code.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/")), EXEC_FORMAT.recognises(Probe("/"))
    (False, False)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evalnb._formats.agent_logs import (
    Attempt,
    Usage,
    command_text,
    json_arguments,
    most_common,
    one_run,
    parse_time,
    span_ms,
    stated_exit_code,
    task_record,
    warn_local_times,
)
from evalnb._formats.detect import Format, Probe
from evalnb.errors import InputError, parse_json, read_input
from evalnb.records import (
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    TaskRecord,
    ToolCallResult,
)

SOURCE = "codex"
ROLLOUT_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
TOOL_ITEMS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The file's JSON objects with their line numbers; anything else is an InputError."""
    out = []
    for lineno, raw in enumerate(read_input(path).split("\n"), start=1):
        if not raw.strip():
            continue
        doc = parse_json(raw, path, lineno)
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            raise InputError(path, lineno, "type", "a line must be a JSON object with a type")
        out.append((lineno, doc))
    return out


def _int(value: Any, path: Path, lineno: int, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(path, lineno, name, f"expected a count of tokens, got {value!r}")
    return value


@dataclass
class _Rollout:
    """What one rollout accumulates, line by line."""

    path: Path
    session: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    models: list[str | None] = field(default_factory=list)
    calls: list[LLMCall] = field(default_factory=list)
    tools: list[ToolCallResult] = field(default_factory=list)
    by_call_id: dict[str, ToolCallResult] = field(default_factory=dict)
    pending: list[ToolCallResult] = field(default_factory=list)
    text: list[ContentBlock] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    total: Usage = field(default_factory=Usage)
    reasoning: int | None = None
    seen_total: tuple[Any, ...] | None = None
    compact_next: bool = False
    compactions: int = 0
    prompt: str | None = None
    open_turn: bool = False
    aborted: str | None = None
    times: list[datetime] = field(default_factory=list)
    local: bool = False

    def line(self, lineno: int, doc: dict[str, Any]) -> None:
        time, local = parse_time(doc.get("timestamp"))
        self.times += [time] if time else []
        self.local |= local
        kind, payload = doc["type"], doc.get("payload")
        if not isinstance(payload, dict):
            raise InputError(self.path, lineno, "payload", "expected an object")
        if kind == "session_meta":
            self.session = payload
        elif kind == "turn_context":
            self.model = payload.get("model") or self.model
        elif kind == "compacted":
            self._compacted()
        elif kind == "response_item":
            self._item(payload)
        elif kind == "event_msg":
            self._event(lineno, payload)

    def _compacted(self) -> None:
        """A compaction signal: counted unless one came since the last response (the
        same compaction, see the module docstring)."""
        self.compactions += not self.compact_next
        self.compact_next = True

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "assistant":
            text = "".join(c.get("text", "") for c in item.get("content") or [])
            self.text.append(ContentBlock(type="text", text=text))
        elif kind in TOOL_ITEMS:
            arguments = (
                item.get("action")
                if kind == "local_shell_call"
                else json_arguments(item.get("arguments", item.get("input")))
            )
            name = str(item.get("name") or "local_shell")
            tool = ToolCallResult(commands=command_text(name, arguments), exit_code=None)
            self.pending.append(tool)
            self.by_call_id[str(item.get("call_id"))] = tool
            self.text.append(
                ContentBlock(
                    type="tool_use",
                    id=str(item.get("call_id")),
                    name=name,
                    input={"commands": tool.commands},
                )
            )
        elif kind in OUTPUT_ITEMS:
            answered = self.by_call_id.get(str(item.get("call_id")))
            if answered is not None:
                _answer(answered, item.get("output"))
                self.messages.append(
                    Message(
                        role="tool_result",
                        content=[
                            ContentBlock(
                                type="tool_result",
                                tool_use_id=str(item.get("call_id")),
                                content=answered.stdout,
                            )
                        ],
                    )
                )
        elif kind == "compaction":
            self._compacted()

    def _event(self, lineno: int, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "token_count" and isinstance(event.get("info"), dict):
            self._token_count(lineno, event["info"])
        elif kind == "user_message" and self.prompt is None:
            self.prompt = str(event.get("message") or "") or None
        elif kind == "context_compacted":
            self._compacted()
        elif kind in ("task_started", "turn_started"):
            self.open_turn = True
        elif kind in ("task_complete", "turn_complete"):
            self.open_turn = False
        elif kind == "turn_aborted":
            self.open_turn = False
            self.aborted = str(event.get("reason") or "aborted")
        elif kind == "exec_command_end":
            self._ended(event, event.get("exit_code"), event.get("duration"))
        elif kind == "patch_apply_end":
            self._ended(event, 0 if event.get("success") else 1, None)

    def _ended(self, event: dict[str, Any], code: Any, duration: Any) -> None:
        tool = self.by_call_id.get(str(event.get("call_id")))
        if tool is not None and isinstance(code, int):
            tool.exit_code = code
            if isinstance(duration, dict) and isinstance(duration.get("secs"), int):
                tool.duration_ms = duration["secs"] * 1000 + duration.get("nanos", 0) / 1e6

    def _token_count(self, lineno: int, info: dict[str, Any]) -> None:
        total = info.get("total_token_usage")
        if not isinstance(total, dict):
            raise InputError(
                self.path, lineno, "payload.info.total_token_usage", "expected an object"
            )
        key = tuple(sorted(total.items()))
        if key == self.seen_total:
            return  # the same event written again
        self.seen_total = key
        names = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_output_tokens")
        counts = [_int(total.get(n), self.path, lineno, f"total_token_usage.{n}") for n in names]
        now = Usage(counts[0], counts[1], counts[2])
        previous = self.total
        self.total = now
        self.reasoning = counts[3]
        usage = Usage(
            *(
                _difference(getattr(now, f), getattr(previous, f))
                for f in ("input_tokens", "output_tokens", "cache_read_tokens")
            )
        )
        self._close(usage)

    def _close(self, usage: Usage) -> None:
        """End the response under way: one LLM call with its tool calls."""
        call = usage.call(tool_calls_made=len(self.pending), compacted=self.compact_next)
        self.calls.append(call)
        self.models.append(self.model)
        for tool in self.pending:
            tool.call_number = len(self.calls)
        self.tools += self.pending
        if self.text:
            self.messages.append(Message(role="assistant", content=self.text))
        self.pending, self.text, self.compact_next = [], [], False

    def attempt(self) -> Attempt:
        asked = bool(self.pending)
        if self.pending or self.text:
            self._close(Usage())  # a response cut off before its token_count: usage unknown
        error = None
        if self.aborted:
            error = f"turn aborted ({self.aborted})"
        elif self.open_turn:
            error = "the session ended mid-turn (no task_complete): cut off"
        if self.local:
            warn_local_times(self.path, ["timestamp"])
        session_id = str(self.session.get("id") or self.path.stem)
        return Attempt(
            task_id=session_id,
            category=SOURCE,
            prompt=self.prompt,
            llm_calls=self.calls,
            tool_calls=self.tools,
            messages=(
                [Message(role="user", content=[ContentBlock(type="text", text=self.prompt)])]
                if self.prompt
                else []
            )
            + self.messages,
            turns=len(self.calls),
            totals=self.total if any(c.input_tokens is None for c in self.calls) else None,
            duration_ms=span_ms(self.times),
            natural_stop=None if not self.calls else not asked and error is None,
            error=error,
            extra={
                "session_id": session_id,
                "codex_version": self.session.get("cli_version"),
                "originator": self.session.get("originator"),
                "log_format": "rollout",
                "reasoning_tokens": self.reasoning,
                "compactions": self.compactions,
                "local_times": self.local,
            },
        )


def _difference(now: int | None, before: int | None) -> int | None:
    return None if now is None else now - (before or 0)


def _answer(tool: ToolCallResult, output: Any) -> None:
    """Fill a tool call from its output item (module docstring)."""
    text = output if isinstance(output, str) else (output or {}).get("content", "")
    parsed = json_arguments(text)
    if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
        meta = parsed["metadata"]
        text = str(parsed.get("output", ""))
        if isinstance(meta.get("exit_code"), int):
            tool.exit_code = meta["exit_code"]
        if isinstance(meta.get("duration_seconds"), int | float):
            tool.duration_ms = meta["duration_seconds"] * 1000
    tool.stdout = str(text)
    if tool.exit_code is None:
        tool.exit_code = stated_exit_code(tool.stdout)


def read_rollout(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one Codex session rollout as a run of one task attempt.

    Example:
        >>> import tempfile, pathlib, json
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "rollout.jsonl"
        >>> lines = [{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
        ...           "payload": {"id": "s1", "model_provider": "openai"}},
        ...          {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload":
        ...           {"type": "token_count", "info": {"total_token_usage":
        ...            {"input_tokens": 90, "cached_input_tokens": 10, "output_tokens": 5}}}}]
        >>> _ = p.write_text("\\n".join(json.dumps(x) for x in lines))
        >>> [(m.provider, r.trace.total_input_tokens) for m, [r] in read_rollout(p)]
        [('openai', 90)]
    """
    path = Path(path)
    rollout = _Rollout(path)
    for lineno, doc in _lines(path):
        if doc["type"] not in ROLLOUT_TYPES:
            raise InputError(path, lineno, "type", f"not a rollout line type: {doc['type']!r}")
        rollout.line(lineno, doc)
    record = task_record(rollout.attempt())
    return one_run(
        path,
        record,
        source=SOURCE,
        provider=str(rollout.session.get("model_provider") or "openai"),
        model=most_common(rollout.models),
        key=str(record.extra["session_id"]),
        unavailable=["checks", "per_call_latency"],
        sandbox_version=rollout.session.get("cli_version"),
    )


def read_exec_json(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one ``codex exec --json`` stream as a run of one task attempt.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
        >>> _ = p.write_text('{"type":"thread.started","thread_id":"t1"}\\n{"type":"turn.started"}')
        >>> [r.error for r in read_exec_json(p)[0][1]]
        ['the stream ended before turn.completed: cut off']
    """
    path = Path(path)
    thread, usage, error = path.stem, Usage(), None
    completed = False
    items: dict[str, dict[str, Any]] = {}
    said: list[str] = []
    for lineno, doc in _lines(path):
        kind = doc["type"]
        if kind == "thread.started":
            thread = str(doc.get("thread_id") or thread)
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = doc.get("item")
            if not isinstance(item, dict) or "id" not in item:
                raise InputError(path, lineno, "item", "expected an object with an id")
            items[str(item["id"])] = {**item, "_done": kind == "item.completed"}
        elif kind == "turn.completed":
            completed = True
            raw = doc.get("usage") or {}
            counts = [
                _int(raw.get(n), path, lineno, f"usage.{n}")
                for n in ("input_tokens", "output_tokens", "cached_input_tokens")
            ]
            usage = Usage(*counts)  # the thread's running total: the last one counts
        elif kind in ("turn.failed", "error"):
            failure = doc.get("error")
            if failure is not None and not isinstance(failure, dict):
                raise InputError(path, lineno, "error", "expected an object with a message")
            message = (failure or {}).get("message") or doc.get("message")
            error = f"codex {kind}: {message}"
    tools = []
    for item in items.values():
        if item.get("type") == "agent_message" and item["_done"]:
            said.append(str(item.get("text") or ""))
        tool = _exec_tool(item)
        if tool is not None:
            tools.append(tool)
    cut = error is None and not completed
    if cut:
        error = "the stream ended before turn.completed: cut off"
    attempt = Attempt(
        task_id=thread,
        category=SOURCE,
        tool_calls=tools,
        messages=[
            Message(role="assistant", content=[ContentBlock(type="text", text=t)]) for t in said
        ],
        totals=usage,
        natural_stop=None if cut else error is None,
        error=error,
        extra={"session_id": thread, "log_format": "exec-json"},
    )
    record = task_record(attempt)
    unavailable = ["checks", "per_call_latency", "per_call_tokens", "llm_calls", "model"]
    return one_run(
        path,
        record,
        source=SOURCE,
        provider="openai",
        model="unknown",
        key=thread,
        unavailable=unavailable,
    )


def _exec_tool(item: dict[str, Any]) -> ToolCallResult | None:
    kind, status = item.get("type"), item.get("status")
    code = None
    if item["_done"] and kind == "command_execution":
        code = item.get("exit_code")  # Codex closes a still-running command without one
    elif item["_done"] and status in ("completed", "failed"):
        code = 0 if status == "completed" else 1
    if kind == "command_execution":
        return ToolCallResult(
            commands=str(item.get("command") or ""),
            stdout=str(item.get("aggregated_output") or ""),
            exit_code=code,
        )
    if kind == "file_change":
        changes = " ".join(f"{c.get('kind')} {c.get('path')}" for c in item.get("changes") or [])
        return ToolCallResult(commands=f"apply_patch({changes})", exit_code=code)
    if kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        return ToolCallResult(
            commands=command_text(name, item.get("arguments") or {}), exit_code=code
        )
    return None


def _rollout(probe: Probe) -> bool:
    first = probe.first_line
    return (
        not probe.is_dir
        and isinstance(first, dict)
        and first.get("type") in ROLLOUT_TYPES
        and "payload" in first
    )


def _exec(probe: Probe) -> bool:
    first = probe.first_line
    return not probe.is_dir and isinstance(first, dict) and first.get("type") == "thread.started"


FORMAT = Format("a Codex CLI session rollout", _rollout, read=read_rollout, key="codex")
EXEC_FORMAT = Format(
    "a codex exec --json stream", _exec, read=read_exec_json, key="codex-exec-json"
)
FORMATS = (FORMAT, EXEC_FORMAT)
