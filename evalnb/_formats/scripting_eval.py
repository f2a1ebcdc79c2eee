"""Read bashkit's scripting-eval result JSON (the older layout with mock tools).

The file has bashkit-eval's top level (``provider``, ``model``, ``timestamp``,
``max_turns``, ``results``, ``summary``; ``baseline`` too) but its tasks call mock
tools instead of bash: ``task.tools`` lists them (``name``, ``description``,
``schema``, ``mock``) and ``trace.tool_calls[]`` holds ``tool_name``, ``input``,
``output`` and ``exit_code``. What this reader makes of it:

- Tasks, checks, ``passed``, run times and partial runs as for bashkit-eval
  (:mod:`evalnb._formats.bashkit_eval`); the task's tool names go to the ``tools``
  column of ``tasks`` and ``discovery_mode`` to its own column.
- ``tool_calls``: ``commands`` is ``<tool_name> <input as compact JSON>``, ``stdout``
  the tool's ``output``, ``stderr`` empty, ``exit_code`` as recorded; ``call_number``
  is the assistant message whose ``tool_use`` block (matched in order) asked for it.
- ``llm_calls``: one row per assistant message, no tokens or latency (not recorded).
- ``trace.raw_tool_output_bytes`` and ``tool_output_sent_bytes`` go to task columns.
- A file with no results is an error (it would otherwise look like a 0-task run),
  naming the summary's ``total_tasks``.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._formats.bashkit_eval import FileCheck, FileSummary, result_file_meta
from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import error_at, line_of, read_json, validate
from evalnb.errors import InputError
from evalnb.records import (
    AgentTrace,
    LLMCall,
    Message,
    RunMeta,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)

SOURCE = "bashkit-scripting-eval"


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True)


class MockTool(BaseModel):
    """``task.tools[]``: a mock tool (only the name is kept)."""

    model_config = ConfigDict(extra="allow")

    name: str


class ScriptingTask(Task):
    """``task``: a bashkit task plus its mock ``tools`` and ``discovery_mode``."""

    tools: list[MockTool] = Field(default_factory=list)
    discovery_mode: bool = False


class MockToolCall(_Strict):
    """``trace.tool_calls[]``: one mock tool call."""

    tool_name: str
    input: dict[str, Any]
    output: str
    exit_code: int


class ScriptingTrace(BaseModel):
    """``trace``: bashkit-eval's trace with mock tool calls and output byte counts."""

    messages: list[Message]
    tool_calls: list[MockToolCall]
    tool_call_count: int
    turns: int
    natural_stop: bool
    total_input_tokens: int
    total_output_tokens: int
    duration_ms: float
    raw_tool_output_bytes: int | None = None
    tool_output_sent_bytes: int | None = None


class ScriptingScore(_Strict):
    """``score``."""

    task_id: str
    results: list[FileCheck]
    score: float
    max_score: float


class ScriptingResult(BaseModel):
    """One entry of ``results``."""

    task: ScriptingTask
    trace: ScriptingTrace
    score: ScriptingScore


class ScriptingFile(BaseModel):
    """A whole scripting-eval result file."""

    provider: str
    model: str
    timestamp: str
    max_turns: int
    baseline: bool | None = None
    results: list[ScriptingResult]
    summary: FileSummary


def _recognises(probe: Probe) -> bool:
    doc = probe.doc
    if not isinstance(doc, dict) or not {"provider", "model", "results"} <= set(doc):
        return False
    results = doc["results"]
    if isinstance(results, list) and results:
        first = results[0] if isinstance(results[0], dict) else {}
        return isinstance(first.get("task"), dict) and "tools" in first["task"]
    return "baseline" in doc


def read_scripting_eval(path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """Read one scripting-eval result file as ``(RunMeta, task records)``.

    Example:
        >>> read_scripting_eval("missing.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.json: file not found
    """
    path = Path(path)
    text, doc = read_json(path)
    parsed = validate(path, text, doc, ScriptingFile)
    if not parsed.results:
        msg = f"no results (the summary says total_tasks={parsed.summary.total_tasks})"
        raise InputError(path, line_of(text, ("results",)), "results", msg)
    records = []
    for i, result in enumerate(parsed.results):
        records.append(_record(path, text, ("results", i), result))
    return result_file_meta(path, text, parsed, records, SOURCE), records


def _record(path: Path, text: str, where: tuple[Any, ...], result: ScriptingResult) -> TaskRecord:
    task, trace = result.task, result.trace
    if result.score.task_id != task.id:
        msg = f"{result.score.task_id!r} differs from task id {task.id!r}"
        raise error_at(path, text, (*where, "score", "task_id"), msg)
    if trace.tool_call_count != len(trace.tool_calls):
        msg = f"{trace.tool_call_count} but tool_calls has {len(trace.tool_calls)} entries"
        raise error_at(path, text, (*where, "trace", "tool_call_count"), msg)
    llm_calls: list[LLMCall] = []
    asked: list[tuple[int, str | None]] = []
    for message in trace.messages:
        if message.role != "assistant":
            continue
        uses = [b for b in message.content if b.type == "tool_use"]
        llm_calls.append(LLMCall(call_number=len(llm_calls) + 1, tool_calls_made=len(uses)))
        asked += [(len(llm_calls), b.name) for b in uses]
    if [name for _, name in asked] != [c.tool_name for c in trace.tool_calls]:
        msg = f"{len(asked)} tool_use blocks in messages do not match the {len(trace.tool_calls)}"
        raise error_at(path, text, (*where, "trace", "tool_calls"), f"{msg} tool calls")
    tool_calls = [
        ToolCallResult(
            commands=f"{call.tool_name} {json.dumps(call.input, separators=(',', ':'))}",
            stdout=call.output,
            exit_code=call.exit_code,
            call_index=i,
            call_number=number,
        )
        for i, (call, (number, _)) in enumerate(zip(trace.tool_calls, asked, strict=True))
    ]
    checks = [
        ScoreResult(**c.model_dump(), layer="expectation", kind=c.check.partition(":")[0])
        for c in result.score.results
    ]
    base = Task.model_validate(task.model_dump(exclude={"tools", "discovery_mode"}))
    return TaskRecord(
        task=base,
        trace=AgentTrace(
            messages=trace.messages,
            tool_calls=tool_calls,
            llm_calls=llm_calls,
            turns=trace.turns,
            natural_stop=trace.natural_stop,
            total_input_tokens=trace.total_input_tokens,
            total_output_tokens=trace.total_output_tokens,
            duration_ms=trace.duration_ms,
        ),
        score=TaskScore(
            task_id=task.id,
            results=checks,
            score=result.score.score,
            max_score=result.score.max_score,
        ),
        extra={
            "tools": [t.name for t in task.tools],
            "discovery_mode": task.discovery_mode,
            "raw_tool_output_bytes": trace.raw_tool_output_bytes,
            "tool_output_sent_bytes": trace.tool_output_sent_bytes,
        },
    )


def _read(path: Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    return [read_scripting_eval(path)]


FORMAT = Format(
    "a bashkit scripting-eval result file", _recognises, read=_read, key="scripting-eval"
)
