"""Write evalnb runs as ATIF trajectories inside a Harbor-style job folder.

``write_atif(run_dir, out)`` makes ``out/<run_id>/`` a Harbor job (``config.json``,
``result.json`` with ``stats``) holding one trial per task attempt
(``<task>__<epoch>/``: ``config.json``, ``result.json``, ``agent/trajectory.json``,
``verifier/reward.txt``), which :mod:`evalnb._formats.harbor` and Harbor's own tools read.
Each trajectory is ATIF-v1.7:

- steps: the task's system prompt (a ``system`` step), its prompt (``user``), then one
  ``agent`` step per LLM call (``llm_call_count`` 1, the run's model, the call's text,
  its tool calls as ``bash`` calls with ``{"commands": ...}`` and their results, the
  text evalnb's agent sent its model, with ``extra.exit_code``), and one step with
  ``llm_call_count`` 0 for tool calls no recorded call asked for;
- ``metrics`` as Harbor writes Anthropic usage: ``prompt_tokens`` = the whole prompt
  less the cache writes, ``cached_tokens`` = cache reads, cache writes in
  ``extra.cache_creation_input_tokens`` (:mod:`evalnb._formats.atif` adds them back);
  ``extra.stop_reason`` the call's stop reason; ``final_metrics`` the sums;
- ``extra.evalnb``: what ATIF has no field for (the task, its checks and score, error,
  natural stop, turns, duration, scenario outcome and task columns), so reading the
  folder back gives the same summary.

The reward is 1 for a passed attempt and 0 otherwise (``verifier/reward.txt`` and the
trial's ``verifier_result``); an errored attempt has ``exception_info``. The trial
``config.json`` names the agent's model as Harbor does, ``provider/model`` (a model
already named ``provider/...`` is not prefixed again). The trial ``result.json`` has
the attempt's times: ``finished_at`` its ``task_finished`` event's time, ``started_at``
its ``task_started`` event's (else ``finished_at`` less the duration), and
``agent_execution`` the agent's run, ``duration_ms`` from that start (null where a time
or the duration is unknown), so Harbor's tools see the durations. The job's
``stats`` count the trials, errors and rewards as Harbor does. Everything is written in a
temporary folder and renamed: an existing job folder is refused and nothing is left
half-written.

Example:
    >>> write_atif("no-such-run", "atif")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: no-such-run: not an evalnb run folder (no run.json)
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from evalnb._formats.agent_logs import parse_time, slug
from evalnb._formats.atif import EVALNB_KEY
from evalnb._store import RunStore, is_run_folder
from evalnb._version import __version__
from evalnb.errors import InputError
from evalnb.records import LLMCall, Message, RunMeta, TaskRecord, ToolCallResult
from evalnb.records.trace import tool_result_text

VERSION = "ATIF-v1.7"
TOOL = "bash"


def _slug(text: str) -> str:
    return slug(text).strip("-") or "task"


def _said(messages: list[Message]) -> list[str]:
    """The text of each assistant message, in order (one per LLM call in evalnb's loop)."""
    return [
        "\n".join(b.text for b in m.content if b.type == "text" and b.text)
        for m in messages
        if m.role == "assistant"
    ]


def trajectory(meta: RunMeta, record: TaskRecord) -> dict[str, Any]:
    """One attempt as an ATIF-v1.7 trajectory (see the module docstring).

    Example:
        >>> from evalnb.records import Task, TaskScore, AgentTrace
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"), score=TaskScore(
        ...     task_id="t"), trace=AgentTrace(llm_calls=[LLMCall(call_number=1,
        ...     input_tokens=100, cache_read_tokens=60, cache_write_tokens=30)]))
        >>> doc = trajectory(RunMeta(run_id="r", provider="p", model="m"), rec)
        >>> [s["source"] for s in doc["steps"]], doc["steps"][1]["metrics"]["prompt_tokens"]
        (['user', 'agent'], 70)
    """
    trace = record.trace
    steps: list[dict[str, Any]] = []
    if record.task.system:
        steps.append({"source": "system", "message": record.task.system})
    steps.append({"source": "user", "message": record.task.prompt})
    said = _said(trace.messages)
    said = said if len(said) == len(trace.llm_calls) else [""] * len(trace.llm_calls)
    tools_of: dict[int | None, list[ToolCallResult]] = {}
    for tool in trace.tool_calls:
        tools_of.setdefault(tool.call_number, []).append(tool)
    if None in tools_of:
        steps.append(
            {"source": "agent", "message": "", "llm_call_count": 0, **_tool_fields(tools_of[None])}
        )
    for call, text in zip(trace.llm_calls, said, strict=True):
        step: dict[str, Any] = {
            "source": "agent",
            "model_name": meta.model,
            "message": text,
            "llm_call_count": 1,
            **_tool_fields(tools_of.get(call.call_number, [])),
        }
        metrics = _metrics(call)
        if metrics:
            step["metrics"] = metrics
        if call.stop_reason:
            step["extra"] = {"stop_reason": call.stop_reason}
        steps.append(step)
    calls = trace.llm_calls
    totals = {
        "total_prompt_tokens": _total([c.input_tokens for c in calls]),
        "total_completion_tokens": _total([c.output_tokens for c in calls]),
        "total_cached_tokens": _total([c.cache_read_tokens for c in calls]),
        "total_steps": len(steps),
    }
    return {
        "schema_version": VERSION,
        "session_id": f"{meta.run_id}/{record.task.id}/{record.epoch}",
        "agent": {
            "name": meta.sandbox or "evalnb",
            "version": __version__,
            "model_name": meta.model,
            "extra": {"provider": meta.provider},
        },
        "steps": [{"step_id": n, **s} for n, s in enumerate(steps, start=1)],
        "final_metrics": {k: v for k, v in totals.items() if v is not None},
        "extra": {EVALNB_KEY: {**_evalnb_fields(record), "guidance": meta.guidance}},
    }


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _metrics(call: LLMCall) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if call.input_tokens is not None:
        out["prompt_tokens"] = call.input_tokens - (call.cache_write_tokens or 0)
    if call.output_tokens is not None:
        out["completion_tokens"] = call.output_tokens
    if call.cache_read_tokens is not None:
        out["cached_tokens"] = call.cache_read_tokens
    if call.cache_write_tokens is not None:
        out["extra"] = {"cache_creation_input_tokens": call.cache_write_tokens}
    return out


def _tool_fields(tools: list[ToolCallResult]) -> dict[str, Any]:
    if not tools:
        return {}
    results = []
    for tool in tools:
        result: dict[str, Any] = {
            "source_call_id": f"call_{tool.call_index}",
            "content": tool_result_text(tool),
        }
        extra: dict[str, Any] = {EVALNB_KEY: tool.model_dump(mode="json")}  # read back exactly
        if tool.exit_code is not None:
            extra["exit_code"] = tool.exit_code
        result["extra"] = extra
        results.append(result)
    return {
        "tool_calls": [
            {
                "tool_call_id": f"call_{t.call_index}",
                "function_name": TOOL,
                "arguments": {"commands": t.commands},
            }
            for t in tools
        ],
        "observation": {"results": results},
    }


def _evalnb_fields(record: TaskRecord) -> dict[str, Any]:
    """What ATIF has no field for, as :func:`evalnb._formats.atif.restore` reads it back."""
    trace = record.trace
    return {
        **record.model_dump(
            mode="json", include={"task", "epoch", "score", "error", "scenario", "replay", "extra"}
        ),
        "turns": trace.turns,
        "natural_stop": trace.natural_stop,
        "duration_ms": trace.duration_ms,
        "total_input_tokens": trace.total_input_tokens,
        "total_output_tokens": trace.total_output_tokens,
    }


def write_atif(run_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the run folder ``run_dir`` as the Harbor job ``out_dir/<run_id>``; return it."""
    run_dir = Path(run_dir)
    if not is_run_folder(run_dir):
        raise InputError(run_dir, None, None, "not an evalnb run folder (no run.json)")
    store = RunStore.open(run_dir)
    meta, records = store.meta, store.records()
    target = Path(out_dir) / _slug(meta.run_id)
    if target.exists():
        raise InputError(target, None, None, "job folder already exists; remove it first")
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _write_job(tmp, meta, records, _attempt_times(store))
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_Times = dict[tuple[str, int], tuple[datetime | None, datetime | None]]


def _attempt_times(store: RunStore) -> _Times:
    """When each attempt (task id, epoch) started and finished: the times of its last
    ``task_finished`` event and of the ``task_started`` event of the same attempt."""
    started: dict[tuple[Any, ...], datetime | None] = {}
    times: _Times = {}
    for event in store.events():
        key = (event.get("task_id"), event.get("epoch"), event.get("attempt"))
        time, _ = parse_time(event.get("ts"))
        if event.get("event") == "task_started":
            started[key] = time
        elif event.get("event") == "task_finished":
            times[(str(key[0]), int(key[1] or 1))] = (started.get(key), time)
    return times


def _timing(record: TaskRecord, times: _Times) -> dict[str, Any]:
    """The trial result's ``started_at``, ``finished_at`` and ``agent_execution``."""
    start, end = times.get((record.task.id, record.epoch), (None, None))
    duration = record.trace.duration_ms
    took = timedelta(milliseconds=duration) if duration is not None else None
    if start is None and end is not None and took is not None:
        start = end - took
    execution = None
    if start is not None and took is not None:
        execution = {"started_at": _iso(start), "finished_at": _iso(start + took)}
    return {"started_at": _iso(start), "finished_at": _iso(end), "agent_execution": execution}


def _iso(time: datetime | None) -> str | None:
    return None if time is None else time.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _model_name(meta: RunMeta) -> str:
    """Harbor's ``provider/model`` name of a run's model (never prefixed twice).

    Example:
        >>> _model_name(RunMeta(run_id="r", provider="sim", model="sim/flailing"))
        'sim/flailing'
        >>> _model_name(RunMeta(run_id="r", provider="anthropic", model="claude-haiku-4-5"))
        'anthropic/claude-haiku-4-5'
    """
    prefix = f"{meta.provider}/"
    return meta.model if meta.model.startswith(prefix) else prefix + meta.model


def _write_job(job: Path, meta: RunMeta, records: list[TaskRecord], times: _Times) -> None:
    agent = meta.sandbox or "evalnb"
    agents = {"name": agent, "model_name": _model_name(meta)}
    names: list[str] = []
    rewards: dict[str, list[str]] = {"1.0": [], "0.0": []}
    for record in records:
        name = f"{_slug(record.task.id)}__{record.epoch}"
        name = name if name not in names else f"{name}_{len(names)}"
        names.append(name)
        reward = 1.0 if record.passed else 0.0
        rewards[str(reward)].append(name)
        trial = job / name
        _write(trial / "agent" / "trajectory.json", trajectory(meta, record))
        (trial / "verifier").mkdir(parents=True)
        (trial / "verifier" / "reward.txt").write_text(f"{reward:g}\n")
        config = {
            "trial_name": name,
            "task": {"path": record.task.id},
            "agent": agents,
            "job_id": meta.run_id,
        }
        _write(trial / "config.json", config)
        _write(
            trial / "result.json",
            {
                "task_name": record.task.id,
                "trial_name": name,
                "config": config,
                "agent_info": {
                    "name": agent,
                    "version": __version__,
                    "model_info": {"name": meta.model, "provider": meta.provider},
                },
                "agent_result": {
                    "n_input_tokens": record.trace.total_input_tokens,
                    "n_cache_tokens": _total([c.cache_read_tokens for c in record.trace.llm_calls]),
                    "n_output_tokens": record.trace.total_output_tokens,
                    "cost_usd": None,
                },
                "verifier_result": {"rewards": {"reward": reward}},
                "exception_info": (
                    {"exception_type": "EvalnbError", "exception_message": record.error}
                    if record.error
                    else None
                ),
                **_timing(record, times),
            },
        )
    errors = sum(r.error is not None for r in records)
    stats = {
        "n_trials": len(records),
        "n_errors": errors,
        "metrics": [{"mean": len(rewards["1.0"]) / len(records) if records else 0.0}],
        "reward_stats": {"reward": {k: v for k, v in rewards.items() if v}},
        "exception_stats": {},
    }
    _write(
        job / "config.json",
        {
            "job_name": meta.run_id,
            "n_attempts": meta.epochs,
            "agents": [agents],
            "datasets": [],
            "tasks": [],
        },
    )
    _write(
        job / "result.json",
        {
            "id": meta.run_id,
            "started_at": meta.started_at,
            "finished_at": meta.finished_at,
            "n_total_trials": len(records),
            "stats": {
                "n_trials": len(records),
                "n_errors": errors,
                "evals": {f"{agent}__{meta.model}__{meta.dataset or 'adhoc'}": stats},
            },
        },
    )


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
