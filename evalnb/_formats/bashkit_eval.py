"""Import bashkit-eval result JSON (the pre-mira harness) as evalnb records and run folders.

A result file holds ``provider``, ``model``, ``timestamp`` (the END of the run, UTC),
``max_turns``, ``results`` (``{task, trace, score}`` per task) and ``summary``. What
this importer makes of it:

- ``tasks``: one record per entry of ``results``; the file's ``summary`` is never
  used for figures. A file whose ``results`` hold fewer tasks than
  ``summary.total_tasks`` (the harness dropped tasks whose provider call failed) is
  read as a partial run: a warning names both counts, ``RunMeta.status`` is
  ``"partial"`` and ``missing_tasks`` the difference. A harness that dropped tasks
  and summarised only those left looks complete in its own file;
  :func:`evalnb.load` then finds it from a sibling run of the same day
  (:mod:`evalnb._analysis.completeness`).
- ``llm_calls``: one row per assistant message (``call_number`` in message order,
  ``tool_calls_made`` = its ``tool_use`` blocks). The format has no per-call tokens,
  latency or stop reason, so those are null, and ``RunMeta.settings.unavailable``
  says so (``per_call_tokens``, ``per_call_latency`` and ``tool_call_duration``).
- ``tool_calls``: ``call_index`` in file order; ``call_number`` = the assistant
  message whose ``tool_use`` block (matched in order) asked for it; no duration.
- ``checks``: every ``score.results`` verdict, layer ``expectation``, ``kind`` = the
  check text before ``:``.
- Categories are the file's own ``task.category``: spec 000's ``by_category`` groups
  tasks by ``task.category``, and the file's own ``summary.by_category`` is keyed by
  it, so the February 2026 files' ``jq_mastery`` stays ``jq_mastery`` (later bashkit
  datasets call that category ``json_processing``: a different dataset, not a
  different name for the same rows). This is the file's one reader: used as a dataset
  (:func:`evalnb._formats.tasks.load_tasks`, a replay) it gives the same tasks.
- ``run_id`` is the file name without ``.json`` (stable across imports);
  ``finished_at`` is ``timestamp`` and ``started_at`` is ``timestamp`` minus the sum
  of the tasks' ``duration_ms`` (the harness ran tasks one after another).

Bad input (missing file, truncated JSON, a missing key, a wrong type, a trace whose
``tool_use`` blocks do not match its ``tool_calls``) raises
:class:`~evalnb.errors.InputError` naming the file, the line and the field.

Example:
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "eval-demo.json"
    >>> _ = p.write_text(json.dumps({"provider": "p", "model": "m"}))
    >>> read_bashkit_eval(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: ...eval-demo.json:1: results: Field required
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import completeness, error_at, read_json, validate
from evalnb.records import (
    AgentTrace,
    LLMCall,
    Message,
    RunMeta,
    RunSettings,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from evalnb.records.base import Record

SOURCE = "bashkit-eval"
M = TypeVar("M", bound=BaseModel)
UNAVAILABLE = ["per_call_tokens", "per_call_latency", "tool_call_duration"]
"""What the bashkit-eval formats do not record (``RunMeta.settings.unavailable``)."""


class _Strict(Record):
    model_config = ConfigDict(strict=True)


class FileToolCall(_Strict):
    """``trace.tool_calls[]``: spec 000 ``ToolCallResult``."""

    commands: str
    stdout: str
    stderr: str
    exit_code: int


class FileTrace(_Strict):
    """``trace``: spec 000 ``AgentTrace`` as the harness wrote it."""

    messages: list[Message]
    tool_calls: list[FileToolCall]
    tool_call_count: int
    turns: int
    natural_stop: bool
    total_input_tokens: int
    total_output_tokens: int
    duration_ms: float


class FileCheck(_Strict):
    """``score.results[]``: spec 000 ``ScoreResult``."""

    check: str
    passed: bool
    detail: str
    weight: float


class FileScore(_Strict):
    """``score``: spec 000 ``TaskScore``."""

    task_id: str
    results: list[FileCheck]
    score: float
    max_score: float


class FileResult(_Strict):
    """One entry of ``results``."""

    task: Task
    trace: FileTrace
    score: FileScore


class FileSummary(_Strict):
    """``summary``: only ``total_tasks`` is read, to detect a partial run."""

    total_tasks: int


class ResultsDoc(_Strict):
    """The ``results`` + ``summary`` part of a result file."""

    results: list[FileResult]
    summary: FileSummary


class ResultFile(ResultsDoc):
    """A whole pre-mira result file."""

    provider: str
    model: str
    timestamp: str
    max_turns: int


def read_bashkit_eval(path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """Read one pre-mira bashkit-eval result file as ``(RunMeta, task records)``.

    Example:
        >>> read_bashkit_eval("missing.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.json: file not found
    """
    path = Path(path)
    text, doc = read_json(path)
    parsed = validate(path, text, doc, ResultFile)
    records = records_from_results(path, text, parsed)
    return result_file_meta(path, text, parsed, records, SOURCE), records


class ResultHeader(Protocol):
    """The top level a bashkit-eval result file shares with its siblings (scripting-eval)."""

    provider: str
    model: str
    timestamp: str
    max_turns: int
    summary: FileSummary


def result_file_meta(
    path: Path, text: str, header: ResultHeader, records: list[TaskRecord], source: str
) -> RunMeta:
    """The run of a result file: ``run_id`` = file name without ``.json``, times from
    :func:`run_times`, partial (:func:`completeness`) when ``records`` are fewer than
    ``summary.total_tasks``.

    Example:
        >>> header = ResultFile(provider="p", model="m", timestamp="2026-02-07T05:20:23Z",
        ...     max_turns=10, results=[], summary=FileSummary(total_tasks=2))
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     meta = result_file_meta(Path("eval-x.json"), "", header, [], SOURCE)
        >>> meta.run_id, meta.status, meta.missing_tasks
        ('eval-x', 'partial', 2)
    """
    started, finished = run_times(path, text, header.timestamp, records)
    total = header.summary.total_tasks
    counted = f"the file's summary says total_tasks={total}"
    status, missing = completeness(path, len(records), total, counted)
    return RunMeta(
        run_id=path.stem,
        provider=header.provider,
        model=header.model,
        source=source,
        max_turns=header.max_turns,
        started_at=started,
        finished_at=finished,
        status=status,
        task_count=len(records),
        missing_tasks=missing,
        settings=RunSettings(source_files=[path.name], unavailable=UNAVAILABLE),
    )


def records_from_results(path: Path, text: str, doc: ResultsDoc) -> list[TaskRecord]:
    """Turn validated ``results`` into task records (see the module docstring)."""
    records: list[TaskRecord] = []
    seen: set[str] = set()
    for i, result in enumerate(doc.results):
        where = ("results", i)
        task = result.task
        if task.id in seen:
            raise error_at(path, text, (*where, "task", "id"), f"duplicate task id {task.id!r}")
        seen.add(task.id)
        if result.score.task_id != task.id:
            msg = f"{result.score.task_id!r} differs from task id {task.id!r}"
            raise error_at(path, text, (*where, "score", "task_id"), msg)
        trace = _trace(path, text, where, result.trace)
        checks = [
            ScoreResult(**c.model_dump(), layer="expectation", kind=c.check.partition(":")[0])
            for c in result.score.results
        ]
        score = TaskScore(
            task_id=task.id,
            results=checks,
            score=result.score.score,
            max_score=result.score.max_score,
        )
        records.append(TaskRecord(task=task, trace=trace, score=score))
    return records


def run_times(path: Path, text: str, timestamp: str, records: list[TaskRecord]) -> tuple[str, str]:
    """``(started_at, finished_at)`` from the end-of-run ``timestamp`` and the task durations.

    Example:
        >>> run_times(Path("f.json"), "", "2026-02-07T07:20:23+02:00", [])
        ('2026-02-07T05:20:23Z', '2026-02-07T05:20:23Z')
    """
    try:
        end = datetime.fromisoformat(timestamp)
    except ValueError:
        raise error_at(path, text, ("timestamp",), f"not an ISO 8601 time: {timestamp!r}") from None
    end = end.astimezone(UTC) if end.tzinfo else end.replace(tzinfo=UTC)  # the format is UTC
    start = end - timedelta(milliseconds=sum(r.trace.duration_ms or 0.0 for r in records))
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return start.strftime(fmt), end.strftime(fmt)


def _trace(path: Path, text: str, where: tuple[Any, ...], trace: FileTrace) -> AgentTrace:
    """Build the AgentTrace, matching each tool call to the tool_use block that asked for it."""
    if trace.tool_call_count != len(trace.tool_calls):
        msg = f"{trace.tool_call_count} but tool_calls has {len(trace.tool_calls)} entries"
        raise error_at(path, text, (*where, "trace", "tool_call_count"), msg)
    llm_calls: list[LLMCall] = []
    asked: list[tuple[int, Any]] = []  # (call_number, commands) per tool_use block, in order
    for message in trace.messages:
        if message.role != "assistant":
            continue
        uses = [b for b in message.content if b.type == "tool_use"]
        llm_calls.append(LLMCall(call_number=len(llm_calls) + 1, tool_calls_made=len(uses)))
        asked += [(len(llm_calls), (b.input or {}).get("commands")) for b in uses]
    if trace.turns != len(llm_calls):
        msg = f"{trace.turns} but messages hold {len(llm_calls)} assistant messages"
        raise error_at(path, text, (*where, "trace", "turns"), msg)
    if [cmd for _, cmd in asked] != [c.commands for c in trace.tool_calls]:
        msg = f"{len(asked)} tool_use blocks in messages do not match the {len(trace.tool_calls)}"
        raise error_at(path, text, (*where, "trace", "tool_calls"), f"{msg} tool calls")
    tool_calls = [
        ToolCallResult(**call.model_dump(), call_index=i, call_number=number)
        for i, (call, (number, _)) in enumerate(zip(trace.tool_calls, asked, strict=True))
    ]
    return AgentTrace(
        messages=trace.messages,
        tool_calls=tool_calls,
        llm_calls=llm_calls,
        turns=trace.turns,
        natural_stop=trace.natural_stop,
        total_input_tokens=trace.total_input_tokens,
        total_output_tokens=trace.total_output_tokens,
        duration_ms=trace.duration_ms,
    )


def _recognises(probe: Probe) -> bool:
    return {"provider", "model", "results"} <= probe.keys()


def _read(path: Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    return [read_bashkit_eval(path)]


FORMAT = Format("a bashkit-eval result file", _recognises, read=_read, key="bashkit-eval")
