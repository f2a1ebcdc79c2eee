"""Builders of records and runs that many test files share.

- :func:`record`: one task attempt from its checks ``(passed, weight)`` and, optionally,
  its tool calls' exit codes, its LLM calls' input tokens and its trace's totals.
- :func:`run_of`: one run of records (``run_id`` "r", model "m" unless given).
- :func:`runs_of`: several runs from ``(run_id, model, records)`` triples.
"""

from __future__ import annotations

from typing import Any

from evalnb._analysis.runs import Runs
from evalnb._store.tables import tables_from_records
from evalnb.records import (
    AgentTrace,
    LLMCall,
    RunMeta,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)


def record(
    task_id: str,
    checks: list[tuple[bool, float]],
    *,
    category: str = "c",
    epoch: int = 1,
    exits: tuple[int | None, ...] = (),
    call_inputs: tuple[int | None, ...] = (),
    turns: int = 1,
    natural_stop: bool = True,
    tokens: tuple[int, int] = (0, 0),
    duration_ms: float = 0.0,
    error: str | None = None,
) -> TaskRecord:
    """One task attempt; its score is the sum of the passed checks' weights (spec 000)."""
    results = [ScoreResult(check="exit_code:0", passed=ok, weight=w) for ok, w in checks]
    trace = AgentTrace(
        tool_calls=[
            ToolCallResult(commands="true", exit_code=code, call_index=i)
            for i, code in enumerate(exits)
        ],
        llm_calls=[LLMCall(call_number=i + 1, input_tokens=n) for i, n in enumerate(call_inputs)],
        turns=turns,
        natural_stop=natural_stop,
        total_input_tokens=tokens[0],
        total_output_tokens=tokens[1],
        duration_ms=duration_ms,
    )
    score = TaskScore.from_results(task_id, results)
    task = Task(id=task_id, category=category, prompt="p")
    return TaskRecord(task=task, epoch=epoch, trace=trace, score=score, error=error)


def run_of(
    records: list[TaskRecord],
    run_id: str = "r",
    model: str = "m",
    provider: str = "p",
    **meta: Any,
) -> Runs:
    """One run of ``records``; ``meta`` are further :class:`RunMeta` fields."""
    return Runs(
        **tables_from_records(
            RunMeta(run_id=run_id, provider=provider, model=model, **meta), records
        )
    )


def runs_of(*runs: tuple[str, str, list[TaskRecord]], provider: str = "test") -> Runs:
    """Runs from ``(run_id, model, records)`` triples."""
    return Runs.concat([run_of(recs, r, m, provider) for r, m, recs in runs])
