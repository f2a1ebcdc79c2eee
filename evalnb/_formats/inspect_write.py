"""Write an evalnb run as an Inspect AI eval log (``.eval``), for ``inspect view`` and co.

Needs the ``inspect`` extra (``pip install 'evalnb[inspect]'``); without it a
:class:`~evalnb.errors.SetupError` names the install command.

One run becomes one log; each task attempt one sample (``id`` = task id, ``epoch``):

- ``eval``: ``task`` = the run's dataset name (else its run id), ``model`` =
  ``provider/model``, ``run_id`` = the run id, ``config.epochs``, ``created`` = the
  run's start, ``packages`` the inspect_ai version writing it (its usage semantics);
  ``status`` ``success`` for a complete run, else ``cancelled``.
- ``messages``: the task's system prompt, then the conversation (tool-use blocks as
  assistant tool calls, tool results as tool messages, ``error`` set where evalnb
  marked the result an error).
- ``events``: a ``sample_init`` event first (as Inspect always writes, so
  ``inspect_ai.analysis.events_df`` reads every sample, also one without LLM calls);
  one model event per LLM call (its input the conversation before that turn, its
  output the turn's assistant message, usage with cache tokens (no usage when the
  call's input or output count is unknown: Inspect's counts cannot be null),
  ``working_time`` = latency; evalnb's stop reasons mapped onto Inspect's), then one
  tool event per tool call after the call that asked for it (``bash`` with argument
  ``commands``; the result is the text evalnb's agent sends the model,
  :func:`~evalnb.records.trace.tool_result_text`). A failed call carries a tool
  ``error``, as Inspect's viewer counts tool errors: ``timeout`` for a timeout, else
  ``unknown`` with its stderr (or ``Exit code: N``) for a non-zero exit code.
- ``scores``: one per check, keyed by the check string (``#2``, ``#3`` on repeats),
  value ``C`` when it passed, ``I`` when it failed, ``N`` when it was not run (the
  attempt errored before its work ran), the detail as explanation; ``results`` gets
  each check's accuracy over the samples where it ran.
- ``error``: the task's error; ``model_usage`` and ``total_time`` the task's totals.

What Inspect has no field for is kept under ``metadata["evalnb"]`` of the log (the
:class:`~evalnb.records.RunMeta`), of each sample (the task, scenario outcome, replay
agreement, extra columns, turns, natural stop, duration, and the command counts the
run folder stores with each attempt, :data:`~evalnb._store.command_counts.COUNTS`), of
each event (the exact
:class:`~evalnb.records.LLMCall` / :class:`~evalnb.records.ToolCallResult`) and of each
score (check, layer, kind, weight, detail), so :mod:`evalnb._formats.inspect_log` reads
the log back into the same run.

Example:
    >>> write_inspect_log("no-such-run", "logs")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: no-such-run: not an evalnb run folder (no run.json)
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from evalnb._extras import require
from evalnb._formats.inspect_log import EVALNB_KEY
from evalnb._store import RunStore, is_run_folder
from evalnb._store.command_counts import COUNTS, with_command_counts
from evalnb._store.tables import tables_from_records
from evalnb.errors import InputError
from evalnb.records import Message, RunMeta, TaskRecord, ToolCallResult
from evalnb.records.trace import tool_result_text

TOOL_NAME = "bash"
_STOP_REASONS = {
    "end_turn": "stop",
    "stop": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "tool_calls": "tool_calls",
    "max_tokens": "max_tokens",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def write_inspect_log(run_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the run folder ``run_dir`` as ``out_dir/<run_id>.eval``; return its path.

    An existing log of that name is an error (nothing is overwritten); the file is
    written under a temporary name and renamed, so no half-written log is left.

    Example:
        >>> import tempfile
        >>> from evalnb.records import RunMeta
        >>> from evalnb._store import RunStore
        >>> root = tempfile.mkdtemp()
        >>> run = RunStore.write_records(root, RunMeta(run_id="r1", provider="p", model="m"), [])
        >>> write_inspect_log(run, f"{root}/logs").name
        'r1.eval'
    """
    run_dir = Path(run_dir)
    if not is_run_folder(run_dir):
        raise InputError(run_dir, None, None, "not an evalnb run folder (no run.json)")
    store = RunStore.open(run_dir)
    target = Path(out_dir) / f"{store.meta.run_id}.eval"
    if target.exists():
        raise InputError(target, None, None, "log already exists; remove it first")
    log = eval_log(store.meta, store.records())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    require("inspect_ai.log", "inspect").write_eval_log(log, str(tmp), format="eval")
    os.replace(tmp, target)
    return target


def eval_log(meta: RunMeta, records: list[TaskRecord]) -> Any:
    """The ``inspect_ai.log.EvalLog`` of one run (see the module docstring).

    Example:
        >>> log = eval_log(RunMeta(run_id="r", provider="p", model="m", status="complete"), [])
        >>> log.eval.model, log.eval.run_id, log.status
        ('p/m', 'r', 'success')
    """
    require("inspect_ai.log", "inspect")
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    model = meta.model if "/" in meta.model else f"{meta.provider}/{meta.model}"
    counts = _command_counts(meta, records)
    samples = [_sample(rec, model, n) for rec, n in zip(records, counts, strict=True)]
    created = meta.started_at or _now()
    inputs = sum(r.trace.total_input_tokens for r in records)
    outputs = sum(r.trace.total_output_tokens for r in records)
    return EvalLog(
        status="success" if meta.status == "complete" else "cancelled",
        eval=EvalSpec(
            created=created,
            task=meta.dataset or meta.run_id,
            run_id=meta.run_id,
            dataset=EvalDataset(name=meta.dataset, samples=len({r.task.id for r in records})),
            model=model,
            config=EvalConfig(epochs=meta.epochs),
            # the usage below follows this version's meaning (input_tokens uncached), which
            # a reader tells from it (evalnb._formats.inspect_log.cache_reads_apart)
            packages={"inspect_ai": version("inspect_ai")},
            metadata={EVALNB_KEY: meta.model_dump(mode="json")},
        ),
        results=EvalResults(
            total_samples=len(records),
            completed_samples=sum(1 for r in records if r.error is None),
            scores=_results(samples),
        ),
        stats=EvalStats(
            started_at=created,
            completed_at=meta.finished_at or created,
            model_usage={
                model: ModelUsage(
                    input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs
                )
            },
        ),
        samples=samples,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _command_counts(meta: RunMeta, records: list[TaskRecord]) -> list[dict[str, Any]]:
    """Each attempt's command counts, as the run folder stores them (in record order)."""
    tables = tables_from_records(meta, records)
    counted = with_command_counts(tables["tasks"], tables["tool_calls"], tables["tool_invocations"])
    return counted.sort("attempt_key").select(COUNTS).to_dicts()


def _sample(rec: TaskRecord, model: str, counts: dict[str, Any]) -> Any:
    from inspect_ai.dataset import Sample
    from inspect_ai.event import SampleInitEvent
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ChatMessageSystem, ModelUsage

    trace = rec.trace
    system = [ChatMessageSystem(content=rec.task.system)] if rec.task.system else []
    conversation = _chat(trace.messages)
    usage = ModelUsage(
        input_tokens=trace.total_input_tokens,
        output_tokens=trace.total_output_tokens,
        total_tokens=trace.total_input_tokens + trace.total_output_tokens,
    )
    ours = {
        "task": rec.task.model_dump(mode="json"),
        "scenario": rec.scenario.model_dump(mode="json") if rec.scenario else None,
        "replay": rec.replay.model_dump(mode="json") if rec.replay else None,
        "extra": rec.extra,
        "trace": {
            "turns": trace.turns,
            "natural_stop": trace.natural_stop,
            "duration_ms": trace.duration_ms,
        },
        "counts": counts,
    }
    error = rec.error
    return EvalSample(
        id=rec.task.id,
        epoch=rec.epoch,
        input=rec.task.prompt,
        target="",
        messages=[*system, *conversation],
        events=[
            SampleInitEvent(sample=Sample(id=rec.task.id, input=rec.task.prompt)),
            *_events(rec, model, [*system, *conversation]),
        ],
        scores=_scores(rec),
        metadata={EVALNB_KEY: ours},
        model_usage={model: usage},
        total_time=trace.duration_ms / 1000 if trace.duration_ms is not None else None,
        error=EvalError(message=error, traceback="", traceback_ansi="") if error else None,
    )


def _chat(messages: list[Message]) -> list[Any]:
    """evalnb messages as Inspect chat messages (one tool message per tool result)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    out: list[Any] = []
    for msg in messages:
        texts = "\n".join(b.text or "" for b in msg.content if b.type == "text")
        if msg.role == "user":
            out.append(ChatMessageUser(content=texts))
        elif msg.role == "assistant":
            calls = [
                ToolCall(
                    id=b.id or f"call_{n}", function=b.name or TOOL_NAME, arguments=b.input or {}
                )
                for n, b in enumerate(msg.content)
                if b.type == "tool_use"
            ]
            out.append(ChatMessageAssistant(content=texts, tool_calls=calls or None))
        else:
            out += [
                ChatMessageTool(
                    content=b.content or "",
                    tool_call_id=b.tool_use_id,
                    function=TOOL_NAME,
                    error=ToolCallError(type="unknown", message=b.content or "")
                    if b.is_error
                    else None,
                )
                for b in msg.content
                if b.type == "tool_result"
            ]
    return out


def _events(rec: TaskRecord, model: str, chat: list[Any]) -> list[Any]:
    """Model events (with the conversation before each turn) and the tool events after."""
    from inspect_ai.event import ModelEvent, ToolEvent
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.tool import ToolCallError

    turns = [n for n, m in enumerate(chat) if m.role == "assistant"]
    by_call: dict[int | None, list[Any]] = {}
    for tool_call in rec.trace.tool_calls:
        by_call.setdefault(tool_call.call_number, []).append(tool_call)
    events: list[Any] = []
    for n, call in enumerate(rec.trace.llm_calls):
        at = turns[n] if n < len(turns) else None
        message = chat[at] if at is not None else ChatMessageAssistant(content="")
        cached = (call.cache_read_tokens or 0) + (call.cache_write_tokens or 0)
        inp, out = max((call.input_tokens or 0) - cached, 0), call.output_tokens or 0
        usage = (
            None  # Inspect's usage cannot say a count is unknown: none rather than a 0
            if call.input_tokens is None or call.output_tokens is None
            else ModelUsage(
                input_tokens=inp,
                output_tokens=out,
                total_tokens=inp
                + out
                + (call.cache_read_tokens or 0)
                + (call.cache_write_tokens or 0),
                input_tokens_cache_read=call.cache_read_tokens,
                input_tokens_cache_write=call.cache_write_tokens,
            )
        )
        stop = _STOP_REASONS.get(call.stop_reason or "", "unknown")
        events.append(
            ModelEvent(
                model=model,
                input=chat[:at] if at is not None else [],
                tools=[],
                tool_choice="auto",
                config=GenerateConfig(),
                output=ModelOutput(
                    model=model,
                    choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
                    usage=usage,
                ),
                working_time=call.latency_ms / 1000 if call.latency_ms is not None else None,
                metadata={EVALNB_KEY: call.model_dump(mode="json")},
            )
        )
        events += _tool_events(by_call.pop(call.call_number, []), ToolEvent, ToolCallError)
    for calls in by_call.values():  # tool calls no recorded LLM call asked for
        events += _tool_events(calls, ToolEvent, ToolCallError)
    return events


def _tool_events(calls: list[ToolCallResult], tool_event: Any, tool_error: Any) -> list[Any]:
    return [
        tool_event(
            id=f"tool_{c.call_index}",
            function=TOOL_NAME,
            arguments={"commands": c.commands},
            result=tool_result_text(c),
            error=_tool_error(c, tool_error),
            working_time=c.duration_ms / 1000 if c.duration_ms is not None else None,
            metadata={EVALNB_KEY: c.model_dump(mode="json")},
        )
        for c in calls
    ]


def _tool_error(call: ToolCallResult, tool_error: Any) -> Any:
    """Inspect's ``ToolCallError`` of a failed call (timed out, or a non-zero exit code)."""
    if call.timed_out:
        return tool_error(type="timeout", message=call.stderr)
    if call.exit_code not in (0, None):
        return tool_error(type="unknown", message=call.stderr or f"Exit code: {call.exit_code}")
    return None


def _scores(rec: TaskRecord) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    seen: Counter[str] = Counter()
    out = {}
    for r in rec.score.results:
        seen[r.check] += 1
        key = r.check if seen[r.check] == 1 else f"{r.check}#{seen[r.check]}"
        out[key] = Score(
            value={True: "C", False: "I", None: "N"}[r.passed],
            explanation=r.detail or None,
            # a verdict travels as the value; a check not run (passed null) says so here
            metadata={
                EVALNB_KEY: r.model_dump(
                    mode="json", exclude={"passed"} if r.passed is not None else None
                )
            },
        )
    return out


def _results(samples: list[Any]) -> list[Any]:
    """One Inspect ``EvalScore`` per check name: its accuracy over the samples having it."""
    from inspect_ai.log import EvalMetric, EvalScore

    verdicts: dict[str, list[bool]] = {}
    for sample in samples:
        for name, score in (sample.scores or {}).items():
            if score.value != "N":  # a check not run is no verdict
                verdicts.setdefault(name, []).append(score.value == "C")
    return [
        EvalScore(
            name=name,
            scorer=name,
            scored_samples=len(v),
            metrics={"accuracy": EvalMetric(name="accuracy", value=sum(v) / len(v))},
        )
        for name, v in verdicts.items()
    ]
