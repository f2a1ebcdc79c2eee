"""Tidy tables built from task records: one row per run, task, LLM call, tool call, check.

Every table carries the key columns ``run_id``, ``model``, ``task_id`` and ``epoch``
(the ``runs`` table has ``run_id`` and ``model``), so any two join without guesswork.
Column names are the specs' field names where a spec names one.

==============  =========================  ============================================
table           one row per                columns
==============  =========================  ============================================
``runs``        run                        :data:`RUN_COLUMNS`
``tasks``       task attempt               keys, category, description, tags, guidance,
                                           turns, tool_call_count, tool_calls_ok,
                                           tool_calls_error,
                                           natural_stop, total_input_tokens,
                                           total_output_tokens, duration_ms, score,
                                           max_score, rate, passed, error,
                                           llm_call_count, base_context,
                                           context_growth_avg, final_cumulative_input,
                                           cache_read_tokens, cache_write_tokens;
                                           for scenarios (null otherwise) spec 002's
                                           outcome, outcome_reason, gates_passed,
                                           gates_total, judge_score, judge_model,
                                           composite_score, interaction_score,
                                           judges (every judge's rating: a list of
                                           :data:`JUDGE_RATING` structs);
                                           spec 002's counts over every command,
                                           stored by run folders (null elsewhere):
                                           total_commands, unique_commands,
                                           error_count, retry_count,
                                           help_invocations, first_try_successes
``llm_calls``   ``provider.chat()`` call   keys, call_number, input_tokens,
                                           output_tokens, cache_read_tokens,
                                           cache_write_tokens, cache_write_1h_tokens,
                                           cumulative_input,
                                           latency_ms, tool_calls_made, stop_reason,
                                           compacted (a marker: history compacted
                                           right before the call), usage_error
``tool_calls``  tool invocation            keys, call_index, call_number, commands,
                                           stdout, stderr, exit_code, duration_ms,
                                           stdout_truncated, stderr_truncated,
                                           timed_out, invocations_recorded
``checks``      check verdict              keys, layer, check, kind, passed (null:
                                           not run), detail, weight
``messages``    content block              keys, message_index, role, block_index,
                                           type, text, tool_use_id, name, commands,
                                           is_error
==============  =========================  ============================================

``tool_invocations`` has one row per run of the tool under test (spec 002's structured
events, recorded by scenario sandboxes; see :class:`~evalnb.records.ToolInvocation`):
keys, call_index and call_number of its tool call, invocation_index, argv, exit_code,
stdout_bytes, stderr_bytes, duration_ms. ``tool_calls.invocations_recorded`` says
whether a call's invocations were recorded (so a call without rows ran the tool zero
times) or not (bash tasks, imports: the metrics then read the command text).

Example:
    >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...                  score=TaskScore(task_id="t"))
    >>> tables = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
    >>> tables["tasks"].select("run_id", "task_id", "passed").row(0)
    ('r', 't', True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import polars as pl

from evalnb._store.command_counts import COUNTS
from evalnb._store.families import model_family
from evalnb.records import LLMCall, RunMeta, TaskRecord, ToolCallResult, ToolInvocation

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

KEYS = ["run_id", "model", "task_id", "epoch"]
RUN_STRIDE = 2**32
"""``attempt_key = run_key * RUN_STRIDE + the attempt's position in its run``: one integer
per task attempt, so metrics group and join on it instead of the four key strings."""
RUN_KEY = (pl.col("attempt_key") // RUN_STRIDE).alias("run_key")
"""The ``run_key`` of an attempt row, as a polars expression."""
TABLES = ("runs", "tasks", "llm_calls", "tool_calls", "checks", "messages", "tool_invocations")
RUN_COLUMNS = [
    "run_id",
    "provider",
    "model",
    "source",
    "dataset",
    "dataset_sha256",
    "started_at",
    "finished_at",
    "max_turns",
    "epochs",
    "sandbox",
    "sandbox_version",
    "evalnb_version",
    "guidance",
    "simulated",
    "recorded_from",
    "status",
    "task_count",
    "run_key",
    "missing_tasks",
    "model_family",
]

JUDGE_RATING = pl.Struct(
    {
        "judge_model": pl.Utf8,
        "judge_score": pl.Float64,
        "passed": pl.Boolean,
        "error": pl.Utf8,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "cache_read_tokens": pl.Int64,
        "cache_write_tokens": pl.Int64,
    }
)
"""One judge's rating of an attempt in the tasks' ``judges`` column
(:class:`~evalnb.records.JudgeRating`)."""

SCHEMAS: dict[str, dict[str, Any]] = {
    "runs": {
        **dict.fromkeys(RUN_COLUMNS, pl.Utf8),
        "max_turns": pl.Int64,
        "epochs": pl.Int64,
        "simulated": pl.Boolean,
        "task_count": pl.Int64,
        "run_key": pl.Int64,
        "missing_tasks": pl.Int64,
    },
    "tasks": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "category": pl.Utf8,
        "description": pl.Utf8,
        "tags": pl.List(pl.Utf8),
        "guidance": pl.Utf8,
        "turns": pl.Int64,
        "tool_call_count": pl.Int64,
        "tool_calls_ok": pl.Int64,
        "tool_calls_error": pl.Int64,
        "natural_stop": pl.Boolean,
        "total_input_tokens": pl.Int64,
        "total_output_tokens": pl.Int64,
        "duration_ms": pl.Float64,
        "score": pl.Float64,
        "max_score": pl.Float64,
        "rate": pl.Float64,
        "passed": pl.Boolean,
        "error": pl.Utf8,
        "llm_call_count": pl.Int64,
        "base_context": pl.Int64,
        "context_growth_avg": pl.Float64,
        "final_cumulative_input": pl.Int64,
        "cache_read_tokens": pl.Int64,
        "cache_write_tokens": pl.Int64,
        "outcome": pl.Utf8,
        "outcome_reason": pl.Utf8,
        "gates_passed": pl.Int64,
        "gates_total": pl.Int64,
        "judge_score": pl.Float64,
        "judge_model": pl.Utf8,
        "composite_score": pl.Float64,
        "interaction_score": pl.Float64,
        "judges": pl.List(JUDGE_RATING),
        **dict.fromkeys(COUNTS, pl.Int64),
        "attempt_key": pl.Int64,
    },
    "llm_calls": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "call_number": pl.Int64,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "cache_read_tokens": pl.Int64,
        "cache_write_tokens": pl.Int64,
        "cache_write_1h_tokens": pl.Int64,
        "cumulative_input": pl.Int64,
        "latency_ms": pl.Float64,
        "tool_calls_made": pl.Int64,
        "stop_reason": pl.Utf8,
        "compacted": pl.Boolean,
        "usage_error": pl.Utf8,
        "attempt_key": pl.Int64,
    },
    "tool_calls": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "call_index": pl.Int64,
        "call_number": pl.Int64,
        "commands": pl.Utf8,
        "stdout": pl.Utf8,
        "stderr": pl.Utf8,
        "exit_code": pl.Int64,
        "duration_ms": pl.Float64,
        "stdout_truncated": pl.Boolean,
        "stderr_truncated": pl.Boolean,
        "timed_out": pl.Boolean,
        "invocations_recorded": pl.Boolean,
        "attempt_key": pl.Int64,
    },
    "tool_invocations": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "call_index": pl.Int64,
        "call_number": pl.Int64,
        "invocation_index": pl.Int64,
        "argv": pl.List(pl.Utf8),
        "exit_code": pl.Int64,
        "stdout_bytes": pl.Int64,
        "stderr_bytes": pl.Int64,
        "duration_ms": pl.Float64,
        "attempt_key": pl.Int64,
    },
    "checks": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "layer": pl.Utf8,
        "check": pl.Utf8,
        "kind": pl.Utf8,
        "passed": pl.Boolean,
        "detail": pl.Utf8,
        "weight": pl.Float64,
        "attempt_key": pl.Int64,
    },
    "messages": {
        "run_id": pl.Utf8,
        "model": pl.Utf8,
        "task_id": pl.Utf8,
        "epoch": pl.Int64,
        "message_index": pl.Int64,
        "role": pl.Utf8,
        "block_index": pl.Int64,
        "type": pl.Utf8,
        "text": pl.Utf8,
        "tool_use_id": pl.Utf8,
        "name": pl.Utf8,
        "commands": pl.Utf8,
        "is_error": pl.Boolean,
        "attempt_key": pl.Int64,
    },
}


def conform(frame: Frame, name: str) -> Frame:
    """Add missing standard columns as nulls and cast known ones to their dtype.

    Works on a DataFrame or a LazyFrame (a scan stays lazy). A ``runs`` table without
    ``model_family`` (older run folders and reports) gets it from ``model``.

    Example:
        >>> conform(pl.DataFrame({"epoch": ["2"]}), "checks").select("epoch", "weight").row(0)
        (2, None)
    """
    schema: dict[str, Any] = SCHEMAS[name]
    have: pl.Schema = frame.collect_schema()
    if name == "runs" and "model" in have and not _has_family(frame):
        family = model_family(pl.col("model"))
        if "model_family" in have:
            family = pl.coalesce(pl.col("model_family"), family).alias("model_family")
        frame = frame.with_columns(family)
        have = frame.collect_schema()
    missing = [pl.lit(None, dtype=dt).alias(c) for c, dt in schema.items() if c not in have]
    casts = {c: dt for c, dt in schema.items() if c in have and have[c] != dt}
    frame = frame.with_columns(missing) if missing else frame
    frame = frame.cast(casts) if casts else frame  # type: ignore[arg-type]
    order = [*schema, *(c for c in have if c not in schema)]
    return frame if not missing and list(have) == order else frame.select(order)


def _has_family(runs: pl.DataFrame | pl.LazyFrame) -> bool:
    """Whether a ``runs`` table (a DataFrame) has every run's ``model_family`` already."""
    if not isinstance(runs, pl.DataFrame) or "model_family" not in runs.columns:
        return False
    family = runs.get_column("model_family")
    return family.dtype == pl.Utf8 and not family.null_count()


def tables_from_records(meta: RunMeta, records: list[TaskRecord]) -> dict[str, pl.DataFrame]:
    """Build the seven tables of one run from its task records.

    The tasks' :data:`CALL_FIGURES` (spec 000's tool-call counts, spec 003's context
    figures) are summed up from the call rows by :func:`with_call_figures`.

    Example:
        >>> from evalnb.records import LLMCall, AgentTrace, Task, TaskRecord, TaskScore
        >>> trace = AgentTrace(llm_calls=[LLMCall(call_number=1, input_tokens=90),
        ...                               LLMCall(call_number=2, input_tokens=130)])
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"), trace=trace,
        ...                  score=TaskScore(task_id="t"))
        >>> t = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
        >>> t["llm_calls"].height, t["tasks"].select("base_context", "context_growth_avg").row(0)
        (2, (90, 40.0))
    """
    run_id, model = meta.run_id, meta.model
    tasks = [
        {
            "run_id": run_id,
            "model": model,
            "task_id": rec.task.id,
            "epoch": rec.epoch,
            "category": rec.task.category,
            "description": rec.task.description,
            "tags": rec.task.tags,
            "guidance": meta.guidance,
            "turns": rec.trace.turns,
            "natural_stop": rec.trace.natural_stop,
            "total_input_tokens": rec.trace.total_input_tokens,
            "total_output_tokens": rec.trace.total_output_tokens,
            "duration_ms": rec.trace.duration_ms,
            "score": rec.score.score,
            "max_score": rec.score.max_score,
            "rate": rec.score.rate(),
            "passed": rec.passed,
            "error": rec.error,
            **(rec.scenario.model_dump() if rec.scenario else {}),
            **(
                {f"replay_{k}": v for k, v in rec.replay.model_dump().items()} if rec.replay else {}
            ),
            **{k: v for k, v in rec.extra.items() if k not in SCHEMAS["tasks"]},
            "attempt_key": n,
        }
        for n, rec in enumerate(records)
    ]
    # the call, check and message tables column by column: each row's attempt (its
    # position in ``records``) gives its keys, its record's fields its other columns
    llm = _Rows([(n, c) for n, rec in enumerate(records) for c in rec.trace.llm_calls])
    tools = _Rows([(n, c) for n, rec in enumerate(records) for c in rec.trace.tool_calls])
    invocations = _Rows(
        [
            (n, (c, i))
            for n, rec in enumerate(records)
            for c in rec.trace.tool_calls
            for i in c.invocations or []
        ]
    )
    checks = _Rows([(n, r) for n, rec in enumerate(records) for r in rec.score.results])
    blocks = _Rows(
        [
            (n, (mi, msg.role, bi, block))
            for n, rec in enumerate(records)
            for mi, msg in enumerate(rec.trace.messages)
            for bi, block in enumerate(msg.content)
        ]
    )
    blocks_ = [b for _, _, _, b in blocks.items]
    keys = (
        [r.task.id for r in records],
        [r.epoch for r in records],
        run_id,
        model,
    )
    out = {
        "runs": run_frame(meta, len(records)),
        "tasks": _frame(tasks, "tasks"),
        "llm_calls": llm.frame("llm_calls", keys, llm.fields(LLMCall.model_fields)),
        "tool_calls": tools.frame(
            "tool_calls",
            keys,
            {
                **tools.fields(f for f in ToolCallResult.model_fields if f != "invocations"),
                "invocations_recorded": [c.invocations is not None for c in tools.items],
            },
        ),
        "checks": checks.frame(
            "checks", keys, checks.fields(set(SCHEMAS["checks"]) - {*KEYS, "attempt_key"})
        ),
        "messages": blocks.frame(
            "messages",
            keys,
            {
                "message_index": [mi for mi, _, _, _ in blocks.items],
                "role": [role for _, role, _, _ in blocks.items],
                "block_index": [bi for _, _, bi, _ in blocks.items],
                "type": [b.type for b in blocks_],
                "text": [b.text if b.type == "text" else b.content for b in blocks_],
                "tool_use_id": [b.id or b.tool_use_id for b in blocks_],
                "name": [b.name for b in blocks_],
                "commands": [(b.input or {}).get("commands") for b in blocks_],
                "is_error": [b.is_error for b in blocks_],
            },
        ),
        "tool_invocations": invocations.frame(
            "tool_invocations",
            keys,
            {
                "call_index": [c.call_index for c, _ in invocations.items],
                "call_number": [c.call_number for c, _ in invocations.items],
                **{
                    f: [getattr(i, f) for _, i in invocations.items]
                    for f in ToolInvocation.model_fields
                },
            },
        ),
    }
    recorded = [r.extra.get("recorded") for r in records]
    out["tasks"] = finished_tasks(out["tasks"], out["llm_calls"], out["tool_calls"], recorded)
    return out


def finished_tasks(
    tasks: pl.DataFrame, llm_calls: pl.DataFrame, tool_calls: pl.DataFrame, recorded: list[Any]
) -> pl.DataFrame:
    """A run's tasks table with its :data:`CALL_FIGURES` summed up from its call rows
    (:func:`with_call_figures`) and each row's ``recorded`` figures (``recorded``: each
    task's, None where it has none) completed with its own values.

    Example:
        >>> tasks = conform(pl.DataFrame({"task_id": ["t"], "attempt_key": [0]}), "tasks")
        >>> calls = conform(pl.DataFrame({"attempt_key": [0]}), "llm_calls")
        >>> tools = conform(pl.DataFrame({"attempt_key": [0]}), "tool_calls")
        >>> tasks = finished_tasks(tasks, calls, tools, [None])
        >>> tasks.select("llm_call_count", "tool_call_count").row(0)
        (1, 1)
    """
    tasks = with_call_figures(tasks, llm_calls, tool_calls)
    return _recorded_per_row(tasks, recorded)


def _recorded_per_row(tasks: pl.DataFrame, recorded: list[Any]) -> pl.DataFrame:
    """``tasks`` with each row's ``recorded`` figures (a format's own task figures, that
    replace the standard columns on loading) holding the row's own value for a figure it
    did not record: a struct has every field in every row, and a field absent from a
    row's record would otherwise read as a recorded null and replace that row's figure.

    Example:
        >>> tasks = pl.DataFrame({"turns": [3, 4], "recorded": [{"turns": None}, None]})
        >>> _recorded_per_row(tasks, [{"turns": None}, {}])["recorded"].to_list()
        [{'turns': None}, {'turns': 4}]
    """
    schema = tasks.schema.get("recorded")
    if not isinstance(schema, pl.Struct):
        return tasks
    keys = pl.Series("_recorded_keys", [list(r or {}) for r in recorded], dtype=pl.List(pl.Utf8))
    fields = []
    for f in schema.fields:
        dtype = SCHEMAS["tasks"].get(f.name, f.dtype)  # a field of nulls only has no dtype
        own = pl.col(f.name).cast(dtype) if f.name in tasks.columns else pl.lit(None, dtype)
        fields.append(
            pl.when(pl.col("_recorded_keys").list.contains(f.name))
            .then(pl.col("recorded").struct.field(f.name).cast(dtype))
            .otherwise(own)
            .alias(f.name)
        )
    return (
        tasks.with_columns(keys)
        .with_columns(pl.struct(fields).alias("recorded"))
        .drop("_recorded_keys")
    )


class _Rows:
    """The rows of one table of :func:`tables_from_records`: each an item (a call, check
    or message block) and its attempt's position among the records."""

    def __init__(self, rows: list[tuple[int, Any]]) -> None:
        self.attempts = [n for n, _ in rows]
        self.items = [item for _, item in rows]

    def fields(self, names: Iterable[str]) -> dict[str, list[Any]]:
        """Each field of the items, a column."""
        return {name: [getattr(item, name) for item in self.items] for name in names}

    def frame(
        self,
        name: str,
        keys: tuple[list[str], list[int], str, str],
        columns: dict[str, list[Any]],
    ) -> pl.DataFrame:
        """Table ``name`` of these rows: ``columns`` with each row's key columns (the task
        ids and epochs of the records, the run's id and model) and ``attempt_key``."""
        schema = SCHEMAS[name]
        if not self.items:
            return pl.DataFrame(schema=schema)
        frame = pl.DataFrame(columns, schema={c: schema[c] for c in columns}, strict=False)
        return keyed(frame, name, self.attempts, keys)


def keyed(
    frame: pl.DataFrame,
    name: str,
    attempts: list[int],
    keys: tuple[list[str], list[int], str, str],
) -> pl.DataFrame:
    """Table ``name`` of a run from its rows' own columns (``frame``): each row's key columns
    (``keys``: the run's task ids and epochs by attempt, its id and model) added from its
    attempt (``attempts``: the row's position among the run's attempts, its ``attempt_key``).

    Example:
        >>> calls = pl.DataFrame({"call_number": [1, 1]})
        >>> keyed(calls, "llm_calls", [0, 1], (["a", "b"], [1, 1], "r", "m")).select(
        ...     "task_id", "attempt_key").rows()
        [('a', 0), ('b', 1)]
    """
    task_ids, epochs, run_id, model = keys
    attempt = pl.Series("attempt_key", attempts, dtype=pl.Int64)
    frame = frame.with_columns(
        attempt,
        pl.lit(run_id, pl.Utf8).alias("run_id"),
        pl.lit(model, pl.Utf8).alias("model"),
        pl.Series(task_ids, dtype=pl.Utf8).gather(attempt).alias("task_id"),
        pl.Series(epochs, dtype=pl.Int64).gather(attempt).alias("epoch"),
    )
    return conform(frame, name)


def run_frame(meta: RunMeta, task_count: int) -> pl.DataFrame:
    """The one-row ``runs`` table of a run: :func:`run_frames` of one.

    Example:
        >>> run_frame(RunMeta(run_id="r", provider="anthropic",
        ...     model="claude-haiku-4-5-20251001"), 3).select("task_count", "model_family").row(0)
        (3, 'claude-haiku-4-5')
    """
    return run_frames([meta], [task_count])


def run_frames(metas: list[RunMeta], task_counts: list[int]) -> pl.DataFrame:
    """The ``runs`` table of some runs: their ``run.json`` fields, task counts and family.

    ``model_family`` follows :func:`evalnb._store.families.model_family`;
    ``missing_tasks`` is the number of tasks a partial run lacks, where known;
    ``run_key`` numbers the runs from 0 (renumbered when runs are concatenated);
    ``skipped``, when a run's ``settings.skipped`` says it, the cases its source skipped.

    Example:
        >>> metas = [RunMeta(run_id=r, provider="p", model="m") for r in ("a", "b")]
        >>> run_frames(metas, [3, 4]).select("run_id", "task_count", "run_key").rows()
        [('a', 3, 0), ('b', 4, 1)]
    """
    fields = [vars(meta) for meta in metas]  # the attributes, without pydantic's per-name lookup
    columns = {c: [f.get(c) for f in fields] for c in RUN_COLUMNS}
    columns["task_count"], columns["run_key"] = list(task_counts), list(range(len(metas)))
    frame = pl.DataFrame(columns, schema=SCHEMAS["runs"]).with_columns(
        model_family(pl.col("model"))
    )
    skipped = [meta.settings.skipped for meta in metas]
    if any(n is not None for n in skipped):  # cases an imported run's source skipped
        frame = frame.with_columns(pl.Series("skipped", skipped, dtype=pl.Int64))
    return frame


def _frame(rows: list[dict[str, Any]], name: str) -> pl.DataFrame:
    schema = SCHEMAS[name]
    if not rows:
        return pl.DataFrame(schema=schema)
    present = {k for row in rows for k in row}
    frame = pl.DataFrame(
        rows,
        schema_overrides={c: schema[c] for c in present & set(schema)},
        infer_schema_length=None,
    )
    return conform(frame, name)


TOOL_CALL_FIGURES = ["tool_call_count", "tool_calls_ok", "tool_calls_error"]
"""The tasks table's counts of its tool-call rows (:func:`with_call_figures`)."""
LLM_CALL_FIGURES = [
    "llm_call_count",
    "base_context",
    "context_growth_avg",
    "final_cumulative_input",
    "cache_read_tokens",
    "cache_write_tokens",
]
"""The tasks table's figures summed up from its LLM-call rows (:func:`with_call_figures`)."""
CALL_FIGURES = TOOL_CALL_FIGURES + LLM_CALL_FIGURES


def with_call_figures(
    tasks: Frame, llm_calls: Frame, tool_calls: Frame, figures: list[str] = CALL_FIGURES
) -> Frame:
    """Set the task rows' ``figures`` (default :data:`CALL_FIGURES`), summed up from their
    calls: see :func:`with_tool_call_figures` and :func:`with_llm_call_figures`.

    Stored with the tasks, they let metrics at scale read one row per attempt instead of
    every call. Works on DataFrames or LazyFrames.

    Example:
        >>> calls = conform(pl.DataFrame({"run_id": ["r"] * 2, "model": ["m"] * 2,
        ...     "task_id": ["t"] * 2, "epoch": [1] * 2, "call_number": [1, 2],
        ...     "input_tokens": [100, 150]}), "llm_calls")
        >>> tools = calls.select(*KEYS, exit_code=pl.Series([0, None]))
        >>> tasks = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1]})
        >>> with_call_figures(tasks, calls, tools).select(CALL_FIGURES).row(0)
        (2, 1, 0, 2, 100, 50.0, 250, 0, 0)
    """
    tools = [c for c in TOOL_CALL_FIGURES if c in figures]
    llm = [c for c in LLM_CALL_FIGURES if c in figures]
    out = with_tool_call_figures(tasks, tool_calls, tools) if tools else tasks
    return with_llm_call_figures(out, llm_calls, llm) if llm else out


def with_tool_call_figures(
    tasks: Frame, tool_calls: Frame, figures: list[str] = TOOL_CALL_FIGURES
) -> Frame:
    """Set the task rows' counts of their tool-call rows (spec 000), 0 without calls:
    ``tool_call_count`` (the rows), ``tool_calls_ok`` (exit code 0) and
    ``tool_calls_error`` (a non-zero exit code; a call whose exit code was not recorded
    is neither).

    Example:
        >>> tools = pl.DataFrame({"run_id": ["r"] * 3, "model": ["m"] * 3,
        ...     "task_id": ["t"] * 3, "epoch": [1] * 3, "exit_code": [0, 2, None]})
        >>> tasks = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1]})
        >>> with_tool_call_figures(tasks, tools).select(TOOL_CALL_FIGURES).row(0)
        (3, 1, 1)
    """
    exit_code = pl.col("exit_code")
    key = _attempt(tasks, tool_calls)
    sums = tool_calls.group_by(key).agg(
        pl.len().cast(pl.Int64).alias("tool_call_count"),
        (exit_code == 0).sum().cast(pl.Int64).alias("tool_calls_ok"),
        (exit_code != 0).sum().cast(pl.Int64).alias("tool_calls_error"),
    )
    return _joined(tasks, sums, key, figures).with_columns(pl.col(figures).fill_null(0))


def with_llm_call_figures(
    tasks: Frame, llm_calls: Frame, figures: list[str] = LLM_CALL_FIGURES
) -> Frame:
    """Set the task rows' figures summed up from their LLM calls:

    - ``llm_call_count``: the attempt's LLM calls (0 without any).
    - ``base_context`` (spec 003): call 1's ``input_tokens`` (the whole prompt, cache
      included: see :class:`~evalnb.records.LLMCall`); null when call 1's count is
      unknown, even if later calls have theirs.
    - ``context_growth_avg`` (spec 003): ``sum(input[i+1] - input[i]) / (N - 1)`` over
      the N calls. The sum telescopes to ``input[N] - input[1]``, so the formula's value
      is known exactly when call 1's and call N's counts are, whatever the calls between
      reported (``[1000, null, 1600]`` grows 300 a call); null when either is unknown.
      0 for a single call with a known count. It may be negative (a provider's cache or
      a trimmed history can shrink the input).
    - ``final_cumulative_input`` (spec 003): call N's ``cumulative_input``, the sum of
      ``input_tokens`` over the calls; null when any call's count is unknown.
    - ``cache_read_tokens``, ``cache_write_tokens``: summed over the calls (a missing
      count adds 0).

    All but the count are null for an attempt without calls. Calls are in
    ``call_number`` order.

    Example:
        >>> calls = pl.DataFrame({"run_id": ["r"] * 3, "model": ["m"] * 3,
        ...     "task_id": ["t"] * 3, "epoch": [1] * 3, "call_number": [1, 2, 3],
        ...     "input_tokens": [100, 150, 220], "cache_read_tokens": [0, 90, 140],
        ...     "cache_write_tokens": [90, 50, None]})
        >>> tasks = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1]})
        >>> with_llm_call_figures(tasks, calls).select(LLM_CALL_FIGURES).row(0)
        (3, 100, 60.0, 470, 230, 140)
        >>> gap = calls.with_columns(input_tokens=pl.Series([1000, None, 1600]))
        >>> with_llm_call_figures(tasks, gap).select(LLM_CALL_FIGURES[:4]).row(0)
        (3, 1000, 300.0, None)
    """
    ordered = pl.col("input_tokens").sort_by("call_number")
    first, last, calls = ordered.first(), ordered.last(), pl.len()
    key = _attempt(tasks, llm_calls)
    sums = llm_calls.group_by(key).agg(
        calls.cast(pl.Int64).alias("llm_call_count"),
        first.alias("base_context"),
        pl.when(calls > 1)
        .then((last - first) / (calls - 1))
        .when(first.is_not_null())
        .then(0.0)
        .alias("context_growth_avg"),
        pl.when(pl.col("input_tokens").null_count() == 0)
        .then(pl.col("input_tokens").sum())
        .alias("final_cumulative_input"),
        pl.col("cache_read_tokens").sum(),
        pl.col("cache_write_tokens").sum(),
    )
    counts = [c for c in figures if c == "llm_call_count"]
    return _joined(tasks, sums, key, figures).with_columns(pl.col(counts).fill_null(0))


def _attempt(tasks: Frame, calls: Frame) -> list[str]:
    """The columns that name an attempt in both tables: ``attempt_key`` when both have it
    (two attempts may share a task and epoch), else the four key strings."""
    both = set(tasks.collect_schema().names()) & set(calls.collect_schema().names())
    return ["attempt_key"] if "attempt_key" in both else KEYS


def _joined(tasks: Frame, sums: Frame, key: list[str], figures: list[str]) -> Frame:
    """``tasks`` with its ``figures`` columns replaced by those of ``sums`` (per ``key``)."""
    return tasks.drop(figures, strict=False).join(
        sums.select(*key, *figures), on=key, how="left", nulls_equal=True, maintain_order="left"
    )
