"""Read onetool-mcp bench CSV (``ot-bench run --csv``: spec 003's own harness).

One row per task: ``scenario``, ``task``, ``model``, ``server`` (the MCP servers, comma
separated, ``-`` for none), ``result``, ``total_input``, ``total_output``, ``llm_calls``,
``tool_calls``, ``duration_s``, ``cost_usd``, ``base_context``, ``context_growth_avg``.
What this reader makes of it:

- One evalnb run per model in the file: ``run_id`` = ``<file stem>-<model>`` (``/``
  made ``_``), ``provider`` = the model's prefix before ``/`` (else ``unknown``).
- Tasks with aggregates only: ``task_id`` = ``<scenario>/<task>`` (a task name is
  unique only within its scenario, and the same task may run in two scenarios: the
  scenario is part of the key; ``description`` is the task name), ``category`` =
  ``scenario``; a (scenario, task) row repeated for one model is a repeat, epochs 1, 2,
  ... in file order,
  ``turns`` and ``llm_call_count`` = ``llm_calls``, ``natural_stop`` null (a row does
  not say how the agent ended), tokens, ``duration_ms`` = ``duration_s`` x 1000, the
  row's ``cost_usd`` as the task's recorded cost (``recorded_cost_usd``: its cost, not
  re-priced), ``base_context`` and ``context_growth_avg`` exactly as the
  harness computed them (spec 003), ``tool_call_count`` = ``tool_calls``
  (``tool_calls_ok`` and ``tool_calls_error`` null: per-call exit codes are not in the
  file), ``server``.
- ``result``: ``PASS``/``FAIL`` is one check ``result``; ``ERROR`` is an errored task;
  a number (a scored evaluation) goes to ``eval_score`` and ``-`` (not evaluated)
  leaves ``passed`` null: no pass/fail verdict was recorded.
- The per-call tables (``llm_calls``, ``tool_calls``, ``messages``) stay empty, and
  ``RunMeta.settings.unavailable`` says so.
- A malformed row is an InputError naming ``file:line: column``; so is a file with a
  header and no rows (nothing to read).

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Any

from evalnb._formats.detect import Format, Probe
from evalnb.errors import InputError, read_input
from evalnb.records import (
    AgentTrace,
    RunMeta,
    RunSettings,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
)

SOURCE = "onetool-bench"
COLUMNS = (
    "scenario",
    "task",
    "model",
    "server",
    "result",
    "total_input",
    "total_output",
    "llm_calls",
    "tool_calls",
    "duration_s",
    "cost_usd",
    "base_context",
    "context_growth_avg",
)
UNAVAILABLE = [
    "llm_calls",
    "tool_calls",
    "messages",
    "per_call_tokens",
    "tool_call_exit_codes",
    "prompt",
]


def _recognises(probe: Probe) -> bool:
    if probe.is_dir or not probe.head:
        return False
    first = probe.head.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    return set(COLUMNS) <= {c.strip() for c in first.split(",")}


def read_onetool_bench(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one bench CSV: one ``(RunMeta, task records)`` per model.

    Example:
        >>> read_onetool_bench("missing.csv")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.csv: file not found
    """
    path = Path(path)
    reader = csv.DictReader(io.StringIO(read_input(path), newline=""))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(path, 1, missing[0], "column missing from the header")
    by_model: dict[str, list[TaskRecord]] = defaultdict(list)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for row in reader:
        line = reader.line_num
        record = _record(path, line, row)
        model = _text(path, line, row, "model")
        seen[(model, record.task.id)] += 1
        record.epoch = seen[(model, record.task.id)]
        by_model[model].append(record)
    if not by_model:
        raise InputError(path, None, None, "no task rows: the CSV holds its header only")
    runs = []
    for model, records in by_model.items():
        provider, _, name = model.partition("/")
        meta = RunMeta(
            run_id=f"{path.stem}-{model}".replace("/", "_"),
            provider=provider if name else "unknown",
            model=model,
            source=SOURCE,
            status="complete",
            task_count=len(records),
            settings=RunSettings(source_files=[path.name], unavailable=UNAVAILABLE),
        )
        runs.append((meta, records))
    return runs


def _text(path: Path, line: int, row: dict[str, Any], column: str) -> str:
    value = row.get(column)
    if value is None or not value.strip():
        raise InputError(path, line, column, "empty")
    return str(value).strip()


def _number(path: Path, line: int, row: dict[str, Any], column: str, kind: type) -> Any:
    text = _text(path, line, row, column)
    try:
        return kind(text)
    except ValueError:
        raise InputError(path, line, column, f"not a number: {text!r}") from None


def _record(path: Path, line: int, row: dict[str, Any]) -> TaskRecord:
    task = _text(path, line, row, "task")
    scenario = _text(path, line, row, "scenario")
    task_id = f"{scenario}/{task}"
    result = _text(path, line, row, "result")
    checks: list[ScoreResult] = []
    recorded: dict[str, Any] = {
        "tool_call_count": _number(path, line, row, "tool_calls", int),
        "llm_call_count": _number(path, line, row, "llm_calls", int),
        "tool_calls_ok": None,
        "tool_calls_error": None,
        "base_context": _number(path, line, row, "base_context", int),
        "context_growth_avg": _number(path, line, row, "context_growth_avg", float),
    }
    extra: dict[str, Any] = {
        "server": _text(path, line, row, "server"),
        "recorded_cost_usd": _number(path, line, row, "cost_usd", float),
        "result": result,
    }
    error = None
    recorded["passed"] = result == "PASS" if result in ("PASS", "FAIL", "ERROR") else None
    if result in ("PASS", "FAIL"):
        checks.append(
            ScoreResult(check="result", passed=result == "PASS", detail=result, kind="result")
        )
    elif result == "ERROR":
        error = "ERROR (the bench recorded an error for this task)"
    elif result != "-":
        extra["eval_score"] = _number(path, line, row, "result", float)
    return TaskRecord(
        task=Task(id=task_id, category=scenario, description=task, prompt=task),
        trace=AgentTrace(
            turns=_number(path, line, row, "llm_calls", int),
            natural_stop=None,  # a row does not say how the attempt ended
            total_input_tokens=_number(path, line, row, "total_input", int),
            total_output_tokens=_number(path, line, row, "total_output", int),
            duration_ms=_number(path, line, row, "duration_s", float) * 1000,
        ),
        score=TaskScore.from_results(task_id, checks),
        error=error,
        extra={**extra, "recorded": recorded},
    )


def _read(path: Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    return read_onetool_bench(path)


FORMAT = Format("an onetool-mcp bench CSV", _recognises, read=_read, key="onetool-bench")
