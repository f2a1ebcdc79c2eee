"""The rows the Inspect mapping (:mod:`evalnb._formats.inspect_log`) reads from a log's
samples, kept table by table as plain tuples, then made into the run's tables at once
(:meth:`Columns.tables`: one polars frame per table, no object per row) or, for one
sample, into its task record (:meth:`Columns.record`: ``evalnb import`` writes records).

Example:
    >>> from evalnb.records import RunMeta
    >>> out = Columns()
    >>> out.llm.append((0, *llm_row(1, input_tokens=90)))
    >>> out.add_task(("t", 1, "c", "", None, "p", 1, False, 90, 0, None, None), {})
    >>> tables = out.tables(RunMeta(run_id="r", provider="p", model="m"), [0])
    >>> tables["tasks"].select("task_id", "llm_call_count", "base_context").row(0)
    ('t', 1, 90)
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalnb._store.tables import SCHEMAS, finished_tasks, keyed, run_frame
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
    ToolInvocation,
)

LLM_FIELDS = (
    "call_number",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "cumulative_input",
    "latency_ms",
    "tool_calls_made",
    "stop_reason",
    "compacted",
    "usage_error",
)
"""An LLM call row's fields: :class:`~evalnb.records.LLMCall`'s."""
TOOL_FIELDS = (
    *(f for f in ToolCallResult.model_fields if f != "invocations"),
    "invocations_recorded",
)
"""A tool call row's fields: :class:`~evalnb.records.ToolCallResult`'s (its invocations of
the tool under test, which evalnb's exports of scenario runs keep, whether recorded)."""
INVOCATION_FIELDS = ("call_index", "call_number", *ToolInvocation.model_fields)
"""A ``tool_invocations`` row's fields: its tool call's, then the invocation's."""
CHECK_FIELDS = ("check", "kind", "passed", "detail", "weight", "layer")
BLOCK_FIELDS = (
    "message_index",
    "role",
    "block_index",
    "type",
    "text",
    "tool_use_id",
    "name",
    "commands",
    "is_error",
)
"""A message content block row's fields: the ``messages`` table's columns."""
TASK_FIELDS = (
    "task_id",
    "epoch",
    "category",
    "description",
    "system",
    "prompt",
    "turns",
    "natural_stop",
    "total_input_tokens",
    "total_output_tokens",
    "duration_ms",
    "error",
)
"""A task row's fields (``system`` and ``prompt`` only for its record)."""
_LLM_DEFAULTS = {f: LLMCall.model_fields[f].default for f in LLM_FIELDS}


def llm_row(call_number: int, **fields: Any) -> tuple[Any, ...]:
    """An LLM call row: ``fields`` in :data:`LLM_FIELDS` order, the others their defaults.

    Example:
        >>> llm_row(2, input_tokens=90)[:3]
        (2, 90, None)
    """
    values = {**_LLM_DEFAULTS, "call_number": call_number, **fields}
    return tuple(values[f] for f in LLM_FIELDS)


class Columns:
    """The rows of one Inspect log's tables as the mapping reads its samples.

    Each row of a call, check or block table is a tuple: the attempt's position among
    the log's tasks, then the table's fields (:data:`LLM_FIELDS`, :data:`TOOL_FIELDS`,
    :data:`CHECK_FIELDS`, :data:`BLOCK_FIELDS`, :data:`INVOCATION_FIELDS`); ``inputs``
    holds each block's tool input (a ``tool_use`` block's arguments), ``invocations`` a
    tool call's invocations (for their records). A task is a tuple of
    :data:`TASK_FIELDS` and a dict of its other figures (``score_<scorer>``,
    ``grader_calls``, ...; ``recorded``: the figures that replace the standard ones).
    """

    def __init__(self) -> None:
        self.tasks: list[tuple[Any, ...]] = []
        self.extras: list[dict[str, Any]] = []
        self.messages: list[int] = []  # each task's number of messages
        self.llm: list[tuple[Any, ...]] = []
        self.tools: list[tuple[Any, ...]] = []
        self.checks: list[tuple[Any, ...]] = []
        self.blocks: list[tuple[Any, ...]] = []
        self.inputs: list[dict[str, Any] | None] = []
        self.invocations: dict[int, list[ToolInvocation]] = {}  # by the row of its tool call
        self.invocation_rows: list[tuple[Any, ...]] = []

    def add_task(self, task: tuple[Any, ...], extra: dict[str, Any], messages: int = 0) -> None:
        """Add the task row of the sample whose rows were just added."""
        self.tasks.append(task)
        self.extras.append(extra)
        self.messages.append(messages)

    def tables(self, meta: RunMeta, order: list[int]) -> dict[str, pl.DataFrame]:
        """The run's seven tables (as :func:`~evalnb._store.tables.tables_from_records`
        builds them from the same samples' records), the tasks in ``order`` (the positions
        of the tasks as added, in the order the run lists them)."""
        moved = self._reorder(order)
        task_ids = [t[0] for t in self.tasks]
        epochs = [t[1] for t in self.tasks]
        keys = (task_ids, epochs, meta.run_id, meta.model)
        llm = _table(self.llm, "llm_calls", LLM_FIELDS, keys, moved)
        tools = _table(self.tools, "tool_calls", TOOL_FIELDS, keys, moved)
        checks = _table(self.checks, "checks", CHECK_FIELDS, keys, moved)
        recorded = [extra.get("recorded") for extra in self.extras]
        return {
            "runs": run_frame(meta, len(self.tasks)),
            "tasks": finished_tasks(self._tasks(meta, keys, checks), llm, tools, recorded),
            "llm_calls": llm,
            "tool_calls": tools,
            "checks": checks,
            "messages": _table(self.blocks, "messages", BLOCK_FIELDS, keys, moved),
            "tool_invocations": _table(
                self.invocation_rows, "tool_invocations", INVOCATION_FIELDS, keys, moved
            ),
        }

    def _reorder(self, order: list[int]) -> pl.Series | None:
        """Put the tasks in ``order``; gives each task's new position by its old one (None
        when none moves), which the call tables' rows take (:func:`_table`)."""
        if order == list(range(len(self.tasks))):
            return None
        self.tasks = [self.tasks[n] for n in order]
        self.extras = [self.extras[n] for n in order]
        self.messages = [self.messages[n] for n in order]
        return pl.Series(order, dtype=pl.Int64).arg_sort()

    def _tasks(
        self,
        meta: RunMeta,
        keys: tuple[list[str], list[int], str, str],
        checks: pl.DataFrame,
    ) -> pl.DataFrame:
        """The tasks table before its call figures: each task's fields, its ``checks``'
        sums (spec 000, as :meth:`~evalnb.records.TaskScore.from_results`: ``score`` the
        weights of the checks that passed, a check not run did not; ``max_score`` every
        weight), its verdict (no error and every check passed)."""
        schema = SCHEMAS["tasks"]
        if not self.tasks:
            return pl.DataFrame(schema=schema)
        fields = [f for f in TASK_FIELDS if f not in ("system", "prompt")]
        columns = {f: [t[TASK_FIELDS.index(f)] for t in self.tasks] for f in fields}
        columns.update(tags=[[] for _ in self.tasks], guidance=[meta.guidance] * len(self.tasks))
        own = pl.DataFrame(columns, schema={c: schema[c] for c in columns}, strict=False)
        passed = pl.col("passed").fill_null(False)
        sums = checks.group_by("attempt_key").agg(
            score=pl.col("weight").filter(passed).sum(),
            max_score=pl.col("weight").sum(),
            all_passed=passed.all(),
        )
        attempts = pl.int_range(pl.len(), dtype=pl.Int64).alias("attempt_key")
        scored = (
            own.with_columns(attempts)
            .join(sums, on="attempt_key", how="left", maintain_order="left")
            .with_columns(pl.col("score", "max_score").fill_null(0.0))
            .with_columns(
                rate=pl.when(pl.col("max_score") != 0).then(pl.col("score") / pl.col("max_score")),
                passed=pl.col("error").is_null() & pl.col("all_passed").fill_null(True),
            )
            .drop("attempt_key", "all_passed")
        )
        extras = pl.DataFrame(self.extras, infer_schema_length=None)
        frame = pl.concat([scored, extras], how="horizontal")
        return keyed(frame, "tasks", list(range(len(self.tasks))), keys)

    def record(self) -> TaskRecord:
        """The task record of the one sample these rows hold."""
        [task] = self.tasks
        row = dict(zip(TASK_FIELDS, task, strict=True))
        [extra] = self.extras
        results = [ScoreResult(**dict(zip(CHECK_FIELDS, r[1:], strict=True))) for r in self.checks]
        trace = AgentTrace(
            messages=self._messages(),
            llm_calls=[LLMCall(**dict(zip(LLM_FIELDS, r[1:], strict=True))) for r in self.llm],
            tool_calls=[
                ToolCallResult(
                    **dict(zip(TOOL_FIELDS[:-1], r[1:-1], strict=True)),
                    invocations=self.invocations.get(n),
                )
                for n, r in enumerate(self.tools)
            ],
            turns=row["turns"],
            natural_stop=row["natural_stop"],
            total_input_tokens=row["total_input_tokens"],
            total_output_tokens=row["total_output_tokens"],
            duration_ms=row["duration_ms"],
        )
        return TaskRecord(
            task=Task(
                id=row["task_id"],
                category=row["category"],
                description=row["description"],
                system=row["system"],
                prompt=row["prompt"],
            ),
            epoch=row["epoch"],
            trace=trace,
            score=TaskScore.from_results(row["task_id"], results),
            error=row["error"],
            extra=extra,
        )

    def _messages(self) -> list[Message]:
        """The sample's messages from its blocks (a message without blocks: an assistant's
        that said nothing and called no tool)."""
        [count] = self.messages
        roles: list[str] = ["assistant"] * count
        content: list[list[ContentBlock]] = [[] for _ in range(count)]
        for block, tool_input in zip(self.blocks, self.inputs, strict=True):
            _, index, role, _, kind, text, use_id, name, _, is_error = block
            roles[index] = role
            if kind == "text":
                content[index].append(ContentBlock(type="text", text=text))
            elif kind == "tool_use":
                content[index].append(
                    ContentBlock(type="tool_use", id=use_id, name=name, input=tool_input)
                )
            else:
                content[index].append(
                    ContentBlock(type=kind, tool_use_id=use_id, content=text, is_error=is_error)
                )
        return [Message(role=r, content=c) for r, c in zip(roles, content, strict=True)]


def _table(
    rows: list[tuple[Any, ...]],
    name: str,
    fields: tuple[str, ...],
    keys: tuple[list[str], list[int], str, str],
    moved: pl.Series | None,
) -> pl.DataFrame:
    """Table ``name`` of ``rows`` (each its attempt, then ``fields``), with its key columns;
    ``moved``: each task's new position by the one its rows name, in whose order the rows
    are put (a task's own rows keep theirs)."""
    schema = SCHEMAS[name]
    if not rows:
        return pl.DataFrame(schema=schema)
    names = ("attempt_key", *fields)
    frame = pl.DataFrame(  # column by column: faster than polars reading the rows
        [
            pl.Series(name, values, dtype=schema[name], strict=False)
            for name, values in zip(names, zip(*rows, strict=True), strict=True)
        ]
    )
    if moved is not None:
        attempt = moved.gather(frame.get_column("attempt_key"))
        frame = frame.with_columns(attempt.alias("attempt_key")).sort(
            "attempt_key", maintain_order=True
        )
    return keyed(frame, name, frame.get_column("attempt_key").to_list(), keys)
