"""Import Claude Code sessions saved with ``claude -p ... --output-format stream-json --verbose``.

A stream-json file holds one JSON object per line: a ``system``/``init`` line (model,
session id, version), ``assistant`` lines (one content block each; the blocks of one
API response share ``message.id`` and repeat its ``usage``), ``user`` lines carrying
``tool_result`` blocks (``is_error``, ``content``, and in recent versions a top-level
``tool_use_result`` with ``stdout``/``stderr``), and a final ``result`` line
(``subtype``, ``is_error``, ``duration_ms``, ``num_turns``, ``total_cost_usd``,
``usage``). Each file is one task attempt; files are grouped into one run per model.

What evalnb makes of it:

- ``llm_calls``: one per distinct ``message.id``, in order, with that message's usage
  (``input_tokens`` as the API reports it, cache reads and writes apart), and
  ``tool_calls_made`` = its ``tool_use`` blocks (any tool).
- ``tool_calls``: the ``Bash`` tool uses (``input.command``), with their results.
  Exit code: 0 when ``is_error`` is false; when true, N from a leading
  ``Exit code N``, else 1 (counted in the ``exit_codes_inferred`` task field).
  stdout/stderr come from ``tool_use_result`` when present, else the result text
  (stderr for an error). A call with no result in the file gets exit code -1
  (:data:`NO_RESULT`, also counted as inferred). Other tools (Read, Edit, ...) stay
  in ``messages`` and are counted in ``other_tool_calls``.
- Sub-agent lines (``parent_tool_use_id`` set) are skipped and counted in
  ``sidechain_lines_skipped``.
- ``natural_stop``: the ``result`` line says ``success`` without ``is_error``; None
  (unknown) when the file has no ``result`` line.
  ``error``: none for a success or ``error_max_turns`` (the turn limit, like the
  runner's), the subtype (and result text) otherwise, and a note when the file has no
  ``result`` line (the session was killed).
- The task prompt is the first user text in the file; ``claude -p`` does not echo it,
  so it is usually :data:`PROMPT_MISSING`.
- With ``target`` (``--target NAME``) the command pattern
  (:func:`~evalnb.records.scenario.default_command_pattern`) is recorded in the
  ``command_pattern`` task field and spec 002's ``no_transcript_errors`` gate is
  scored; without it a task has no checks.
- Task fields also hold ``session_id``, ``cost_usd`` (``total_cost_usd``),
  ``num_turns`` (as Claude Code counts them) and ``claude_code_version``.

Example:
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s1.jsonl"
    >>> lines = [{"type": "system", "subtype": "init", "model": "claude-x", "session_id": "a"},
    ...          {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5}]
    >>> _ = p.write_text("\\n".join(json.dumps(x) for x in lines))
    >>> [(meta.model, [r.trace.natural_stop for r in recs]) for meta, recs in read_claude_code([p])]
    [('claude-x', [True])]
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalnb.errors import InputError, read_input
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    RunSettings,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from evalnb.records.scenario import NoTranscriptErrors, default_command_pattern
from evalnb.scoring.gates import gate_rows, no_transcript_errors
from evalnb.store import RunStore

SOURCE = "claude-code"
PROMPT_MISSING = "(prompt not recorded: claude -p does not echo it in stream-json)"
NO_RESULT = -1
"""Exit code of a Bash call whose result is missing from the file (a killed session)."""
_EXIT = re.compile(r"^\s*Exit code (\d+)\s*\n?")


def read_claude_code(
    paths: Sequence[str | Path], target: str | None = None
) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read stream-json files into one ``(RunMeta, records)`` per model.

    Two files with the same name (the task id) raise :class:`~evalnb.errors.InputError`.
    """
    pattern = default_command_pattern(target) if target else None
    by_model: dict[str, list[tuple[Path, TaskRecord]]] = {}
    seen: dict[str, Path] = {}
    for path in map(Path, paths):
        model, record = read_session(path, pattern)
        if record.task.id in seen:
            raise InputError(
                path, None, None, f"task id {record.task.id!r} is also {seen[record.task.id]}"
            )
        seen[record.task.id] = path
        by_model.setdefault(model, []).append((path, record))
    out = []
    for model, items in by_model.items():
        records = [r for _, r in items]
        sessions = sorted(str(r.extra.get("session_id")) for r in records)
        digest = hashlib.sha256("\n".join(sessions).encode()).hexdigest()[:8]
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model)
        versions = {r.extra.get("claude_code_version") for r in records} - {None}
        meta = RunMeta(
            run_id=f"claude-code-{slug}-{digest}",
            provider="anthropic",
            model=model,
            source=SOURCE,
            sandbox=SOURCE,
            sandbox_version=", ".join(sorted(versions)) or None,
            status="complete",
            task_count=len(records),
            settings=RunSettings(
                target=target,
                command_pattern=pattern,
                source_files=[str(p) for p, _ in items],
                exit_codes="0 unless is_error; then 'Exit code N' when given, else 1",
            ),
        )
        out.append((meta, records))
    return out


def read_session(path: str | Path, pattern: str | None = None) -> tuple[str, TaskRecord]:
    """One stream-json file as ``(model, TaskRecord)``; bad lines raise InputError.

    Example:
        >>> read_session("missing.jsonl")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.jsonl: file not found
    """
    path = Path(path)
    session = _Session()
    for lineno, raw in enumerate(read_input(path).splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise InputError(path, lineno, None, f"invalid JSON: {exc}") from None
        if not isinstance(line, dict):
            raise InputError(path, lineno, None, "a line must be a JSON object")
        try:
            session.add(line)
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(path, lineno, line.get("type"), f"unexpected shape: {exc!r}") from None
    return session.model or "unknown", session.record(path.stem, pattern)


class _Session:
    """Accumulates the lines of one session."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.init: dict[str, Any] = {}
        self.result: dict[str, Any] | None = None
        self.messages: list[Message] = []
        self.calls: dict[str, LLMCall] = {}
        self.tools: list[ToolCallResult] = []
        self.bash_ids: dict[str, int] = {}
        self.answered: set[int] = set()
        self.other_tools = 0
        self.inferred = 0
        self.skipped = 0
        self.prompt: str | None = None

    def add(self, line: dict[str, Any]) -> None:
        """Take one stream-json line into the session."""
        kind = line.get("type")
        if line.get("parent_tool_use_id"):
            self.skipped += 1
        elif kind == "system" and line.get("subtype") == "init":
            self.init = line
            self.model = self.model or line.get("model")
        elif kind == "assistant":
            self._assistant(line["message"])
        elif kind == "user":
            self._user(line["message"], line.get("tool_use_result"))
        elif kind == "result":
            self.result = line

    def _assistant(self, message: dict[str, Any]) -> None:
        self.model = self.model or message.get("model")
        msg_id = message.get("id") or f"anonymous-{len(self.calls)}"
        if msg_id not in self.calls:
            self.calls[msg_id] = LLMCall(call_number=len(self.calls) + 1)
            self.messages.append(Message(role="assistant", content=[]))
        call = self.calls[msg_id]
        usage = message.get("usage") or {}
        call.input_tokens = usage.get("input_tokens", call.input_tokens)
        call.output_tokens = usage.get("output_tokens", call.output_tokens)
        call.cache_read_tokens = usage.get("cache_read_input_tokens", call.cache_read_tokens)
        call.cache_creation_tokens = usage.get(
            "cache_creation_input_tokens", call.cache_creation_tokens
        )
        call.stop_reason = message.get("stop_reason") or call.stop_reason
        blocks = self.messages[-1].content
        for block in message.get("content") or []:
            if block["type"] == "text":
                blocks.append(ContentBlock(type="text", text=block["text"]))
            elif block["type"] == "tool_use":
                call.tool_calls_made += 1
                tool_input = block.get("input") or {}
                blocks.append(
                    ContentBlock(
                        type="tool_use",
                        id=block["id"],
                        name=block["name"],
                        input={"commands": tool_input.get("command")}
                        if block["name"] == "Bash"
                        else tool_input,
                    )
                )
                if block["name"] == "Bash":
                    self.bash_ids[block["id"]] = len(self.tools)
                    self.tools.append(
                        ToolCallResult(
                            commands=str(tool_input.get("command", "")),
                            call_index=len(self.tools),
                            call_number=call.call_number,
                        )
                    )
                else:
                    self.other_tools += 1

    def _user(self, message: dict[str, Any], structured: Any) -> None:
        content = message.get("content")
        if isinstance(content, str):
            self._prompt(content)
            return
        results = []
        for block in content or []:
            if block.get("type") == "text":
                self._prompt(block["text"])
            elif block.get("type") == "tool_result":
                text = _text(block.get("content"))
                is_error = bool(block.get("is_error"))
                results.append(
                    ContentBlock(
                        type="tool_result",
                        tool_use_id=block["tool_use_id"],
                        content=text,
                        is_error=is_error,
                    )
                )
                index = self.bash_ids.get(block["tool_use_id"])
                if index is not None:
                    self.answered.add(index)
                    self._bash_result(self.tools[index], text, is_error, structured)
        if results:
            self.messages.append(Message(role="tool_result", content=results))

    def _prompt(self, text: str) -> None:
        if self.prompt is None and text.strip():
            self.prompt = text
            self.messages.append(
                Message(role="user", content=[ContentBlock(type="text", text=text)])
            )

    def _bash_result(
        self, call: ToolCallResult, text: str, is_error: bool, structured: Any
    ) -> None:
        match = _EXIT.match(text) if is_error else None
        if is_error and match is None:
            self.inferred += 1
        call.exit_code = int(match.group(1)) if match else int(is_error)
        body = text[match.end() :] if match else text
        if isinstance(structured, dict) and isinstance(structured.get("stdout"), str):
            call.stdout = structured["stdout"]
            call.stderr = str(structured.get("stderr") or "")
        elif is_error:
            call.stderr = body
        else:
            call.stdout = body

    def record(self, task_id: str, pattern: str | None) -> TaskRecord:
        """The session as a task record (tool calls without a result are marked so)."""
        for index, tool in enumerate(self.tools):
            if index not in self.answered:
                tool.exit_code, tool.stderr = NO_RESULT, "(no tool result in the file)"
                self.inferred += 1
        calls = list(self.calls.values())
        cumulative = 0
        for call in calls:
            if call.input_tokens is not None:
                cumulative += call.input_tokens
                call.cumulative_input = cumulative
        result = self.result or {}
        natural_stop: bool | None = None
        if self.result is not None:
            natural_stop = result.get("subtype") == "success" and not result.get("is_error")
        error = None
        if self.result is None:
            error = "no result line: the session did not finish (killed or crashed?)"
        elif not natural_stop and result.get("subtype") != "error_max_turns":
            said = str(result.get("result") or "").strip()[:300]
            error = f"claude code ended with {result.get('subtype')}" + (
                f": {said}" if said else ""
            )
        trace = AgentTrace(
            messages=self.messages,
            tool_calls=self.tools,
            llm_calls=calls,
            turns=len(calls),
            natural_stop=natural_stop,
            total_input_tokens=sum(c.input_tokens or 0 for c in calls),
            total_output_tokens=sum(c.output_tokens or 0 for c in calls),
            duration_ms=float(result.get("duration_ms") or 0),
        )
        session_id = self.init.get("session_id") or result.get("session_id")
        rows = []
        if pattern is not None:
            gate = NoTranscriptErrors(type="no_transcript_errors")
            rows = gate_rows([gate], [no_transcript_errors(trace, pattern)])
        return TaskRecord(
            task=Task(
                id=task_id,
                category="claude_code",
                description=f"Claude Code session {session_id}",
                prompt=self.prompt or PROMPT_MISSING,
            ),
            trace=trace,
            score=TaskScore(
                task_id=task_id,
                results=rows,
                score=sum(r.weight for r in rows if r.passed),
                max_score=sum(r.weight for r in rows),
            ),
            error=error,
            extra={
                "session_id": session_id,
                "cost_usd": result.get("total_cost_usd"),
                "num_turns": result.get("num_turns"),
                "claude_code_version": self.init.get("claude_code_version"),
                "command_pattern": pattern,
                "exit_codes_inferred": self.inferred,
                "other_tool_calls": self.other_tools,
                "sidechain_lines_skipped": self.skipped,
            },
        )


def _text(content: Any) -> str:
    """A tool result's content: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def import_claude_code(
    paths: Sequence[str | Path], out_dir: str | Path, target: str | None = None
) -> list[Path]:
    """Write the sessions as run folders (one per model) under ``out_dir``; return them.

    An existing folder of the same run is an error, never overwritten.

    Example:
        >>> import tempfile
        >>> import_claude_code([], tempfile.mkdtemp())
        []
    """
    return [
        RunStore.write_records(out_dir, meta, records)
        for meta, records in read_claude_code(paths, target)
    ]
