"""Spec 002's per-attempt command counts, computed from an attempt's tool-call tables.

This is the engine behind :func:`evalnb._analysis.interaction.interaction` (whose
docstring defines every count and how target commands are found). It works on the
tables themselves (``tool_calls``, ``tool_invocations`` and ``tasks`` for
``short_help_tool``), so a run folder can store the counts of every command
(``pattern=None``) in its tasks table when it is written (:func:`with_command_counts`),
and analysis at scale reads them instead of parsing every tool call again.

Example:
    >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
    >>> from evalnb.records import ToolCallResult as Call
    >>> from evalnb._store.tables import tables_from_records
    >>> calls = [Call(commands="jq . a.json", exit_code=5, call_index=0),
    ...          Call(commands="jq . a.json && ls", exit_code=0, call_index=1)]
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...                  trace=AgentTrace(tool_calls=calls), score=TaskScore(task_id="t"))
    >>> t = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
    >>> with_command_counts(t["tasks"], t["tool_calls"], t["tool_invocations"]).select(
    ...     "total_commands", "unique_commands", "error_count", "retry_count").row(0)
    (3, 2, 1, 1)
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from evalnb._scoring.commands import TargetCommand, argv_command, target_commands
from evalnb._store.plain_scripts import plain_target_commands
from evalnb.records.rust_regex import RustRegex

COUNTS = [
    "total_commands",
    "unique_commands",
    "error_count",
    "retry_count",
    "help_invocations",
    "first_try_successes",
]
"""The per-attempt counts (spec 002), summed when aggregating."""

_TABLE = {
    "_src": pl.UInt64,
    "command_index": pl.Int64,
    "_n": pl.Int64,
    "command": pl.Utf8,
    "subcommand": pl.Utf8,
    "is_help": pl.Boolean,
    "name": pl.Utf8,
    "dash_h": pl.Boolean,
    "_command": pl.UInt64,
}
"""The parse table: a target command (:class:`~evalnb._scoring.commands.TargetCommand`)
per row, keyed by its source and position."""


ATTEMPT = pl.col("attempt_key").alias("_attempt")
"""The integer id of a task attempt (:data:`evalnb._store.tables.RUN_STRIDE`): grouping,
joining and sorting on it is much cheaper than on the four key strings."""


class Parser:
    """The target commands of every script and argv seen so far, each parsed once.

    ``table`` has one row per (source, target command in it): ``_src`` is the hash of
    a script (text rows) or of an argv (event rows: one command each, counted even when
    the pattern does not match it, subcommand then null), ``_n`` the commands in that
    source and ``_command`` the hash of the command text, its id: the same in every
    loaded input (piece), so one parse serves them all, and no join assigns it. Like
    ``_src``, it is a 64-bit hash: two distinct texts share one with a chance of about
    n² / 2⁶⁵ for n distinct texts (3 in 10⁸ for a million). Without a pattern, the plain
    scripts (most of them) are split all together
    (:func:`~evalnb._store.plain_scripts.plain_target_commands`), the others one by one by
    bashkit's parser (:func:`~evalnb._scoring.commands.target_commands`).
    """

    def __init__(self, regex: RustRegex | None) -> None:
        self.regex = regex
        self.table = pl.DataFrame(schema=_TABLE)

    def add(self, calls: pl.DataFrame, argvs: pl.Series) -> None:
        """Parse the scripts (``calls``: ``commands`` and its hash ``_src``) and the argvs
        not parsed before, and add them to ``table``.

        Example:
            >>> parser = Parser(None)
            >>> calls = pl.DataFrame({"commands": ["ls && ls -l"]}).with_columns(
            ...     _src=pl.col("commands").hash())
            >>> parser.add(calls, pl.Series([["git", "status"]]))
            >>> parser.table.select("command_index", "_n", "command").rows()
            [(0, 2, 'ls'), (1, 2, 'ls -l'), (0, 1, 'git status')]
            >>> parser.table.get_column("_command").equals(parser.table["command"].hash())
            True
        """
        known = pl.col("_src").is_in(self.table.get_column("_src").implode())
        # each script once, in order (is_first_distinct: cheaper than unique)
        new = calls.filter(
            ~known & pl.col("commands").is_not_null() & pl.col("_src").is_first_distinct()
        )
        argvs = argvs.drop_nulls().unique()
        argvs = argvs.filter(~argvs.hash().is_in(self.table.get_column("_src").implode()))
        if new.is_empty() and argvs.is_empty():
            return
        parts = []
        if self.regex is None:
            plain, found = plain_target_commands(new.get_column("commands"))
            parts.append(
                found.with_columns(
                    _src=new.get_column("_src").gather(found.get_column("script")),
                    _n=pl.len().over("script").cast(pl.Int64),
                ).drop("script")
            )
            new = new.filter(~plain)
        groups = [
            [_fields(c) for c in target_commands(s, self.regex)]
            for s in new.get_column("commands").to_list()
        ] + [[_event_command(a, self.regex)] for a in argvs.to_list()]
        hashes = pl.concat([new.get_column("_src"), argvs.hash()]).to_list()
        commands = [t for g in groups for t in g]
        fields = ("command", "subcommand", "is_help", "name", "dash_h")
        parts.append(
            pl.DataFrame(
                {
                    "_src": [h for h, g in zip(hashes, groups, strict=True) for _ in g],
                    "command_index": [i for g in groups for i in range(len(g))],
                    "_n": [len(g) for g in groups for _ in g],
                    **{f: [c[k] for c in commands] for k, f in enumerate(fields)},
                },
                schema={c: t for c, t in _TABLE.items() if c != "_command"},
            )
        )
        rows = pl.concat(parts, how="diagonal").with_columns(_command=pl.col("command").hash())
        self.table = pl.concat([self.table, rows.select(*_TABLE)], rechunk=True)


def _event_command(
    argv: list[str], regex: RustRegex | None
) -> tuple[str, str | None, bool, str, bool]:
    """A recorded invocation's parse (its subcommand null when the pattern misses it)."""
    command = argv_command(argv, regex)
    if command is None:  # the tool ran, though the pattern does not describe this argv
        plain = argv_command(argv)
        assert plain is not None
        return _fields(replace(plain, subcommand=None))
    return _fields(command)


def _fields(c: TargetCommand) -> tuple[str, str | None, bool, str, bool]:
    return c.command, c.subcommand, c.is_help, c.name, c.dash_h


def ordered_rows(
    tool_calls: pl.LazyFrame, tool_invocations: pl.LazyFrame, tasks: pl.LazyFrame, parser: Parser
) -> pl.DataFrame:
    """The command rows in execution order, with integer ids only (no key or command text).

    ``_events`` marks the rows of recorded invocations (``source`` "events").

    Calls whose invocations were recorded take their rows from ``tool_invocations``
    (exact exit codes); the others are parsed from their text (each distinct script
    once, by ``parser``, which then holds their texts). ``tasks`` gives ``short_help_tool``.

    Example:
        >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb.records import ToolCallResult as Call
        >>> from evalnb._store.tables import tables_from_records
        >>> calls = [Call(commands="jq . a.json", exit_code=5, call_index=0),
        ...          Call(commands="jq . a.json && ls", exit_code=0, call_index=1)]
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...                  trace=AgentTrace(tool_calls=calls), score=TaskScore(task_id="t"))
        >>> t = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
        >>> rows = ordered_rows(t["tool_calls"].lazy(), t["tool_invocations"].lazy(),
        ...                     t["tasks"].lazy(), Parser(None))
        >>> rows.select("call_index", "command_index", "exit_code",  # jq . a.json twice
        ...             new=pl.col("_command").is_first_distinct()).rows()
        [(0, 0, 5, True), (1, 0, 0, False), (1, 1, 0, True)]
    """
    recorded = pl.col("invocations_recorded").fill_null(False)
    calls = tool_calls.select(
        "call_index",
        "call_number",
        "exit_code",
        "commands",
        ATTEMPT,
        _src=pl.col("commands").hash(),
        _events=recorded,
    ).collect()
    invocations = tool_invocations.select(
        "call_index", "call_number", "exit_code", "invocation_index", "argv", "attempt_key"
    ).collect()
    text_calls = calls.filter(~pl.col("_events"))
    parser.add(text_calls.select("commands", "_src"), invocations.get_column("argv"))
    lean = parser.table.select("_src", "command_index", "_n", "is_help", "_command")
    # each source's commands are consecutive rows of the parse table: a call's rows are
    # the range of rows of its script, gathered (much cheaper than a join that keeps order)
    starts = lean.with_row_index("_start").filter(pl.col("command_index") == 0)
    text_calls = (
        text_calls.join(
            starts.select("_src", "_start", "_n"), on="_src", how="inner", maintain_order="left"
        )
        .select(
            "call_index",
            "call_number",
            "exit_code",
            "_attempt",
            _row=pl.int_ranges("_start", pl.col("_start") + pl.col("_n"), dtype=pl.UInt32),
        )
        .explode("_row")
    )
    parsed = lean.select(
        "command_index", "is_help", "_command", exit_code_approximate=pl.col("_n") > 1
    )[text_calls.get_column("_row")]
    text_rows = pl.concat([text_calls.drop("_row"), parsed], how="horizontal").select(
        "call_index",
        "call_number",
        "exit_code",
        "_attempt",
        "command_index",
        "is_help",
        "_command",
        "exit_code_approximate",
        _events=False,
    )
    if invocations.height:
        # each attempt's position is that of its first call in the table: the attempts
        # keep their table order, and each attempt's rows stay together
        first = calls.select("_attempt").with_row_index("_first").unique("_attempt", keep="first")
        event_rows = invocations.select(
            "call_index",
            "call_number",
            "exit_code",
            ATTEMPT,
            command_index="invocation_index",
            _src=pl.col("argv").hash(),
        ).join(lean.select("_src", "is_help", "_command"), on="_src", how="left")
        rows = pl.concat(
            [
                text_rows,
                event_rows.select(
                    text_rows.columns[:-2], exit_code_approximate=False, _events=True
                ),
            ]
        )
        rows = (
            rows.join(first, on="_attempt", how="left")
            .sort("_first", "call_index", "command_index", maintain_order=True)
            .drop("_first")
        )
    elif not _in_execution_order(calls):
        rows = text_rows.sort("_attempt", "call_index", maintain_order=True)
    else:
        rows = text_rows
    return _with_tool_help(rows, parser.table, tasks)


def _with_tool_help(rows: pl.DataFrame, table: pl.DataFrame, tasks: pl.LazyFrame) -> pl.DataFrame:
    """``is_help`` also for ``TOOL -h`` in the attempts whose ``short_help_tool`` is TOOL.

    A scenario with ``target.short_help`` records its tool's name in that task column
    (see the module docstring); the other attempts keep the general rule.
    """
    if "short_help_tool" not in tasks.collect_schema().names():
        return rows
    asked = table.filter("dash_h").select("_command", "name").unique("_command")
    tools = (
        tasks.select(ATTEMPT, pl.col("short_help_tool").cast(pl.Utf8))
        .drop_nulls("short_help_tool")
        .collect()
    )
    hits = asked.join(tools, left_on="name", right_on="short_help_tool").select(
        "_attempt", "_command", _tool_help=pl.lit(True)
    )
    if hits.height == 0:
        return rows
    return (
        rows.join(hits, on=["_attempt", "_command"], how="left", maintain_order="left")
        .with_columns(is_help=pl.col("is_help") | pl.col("_tool_help").fill_null(False))
        .drop("_tool_help")
    )


def _in_execution_order(calls: pl.DataFrame) -> bool:
    """True when each attempt's calls are contiguous and in ``call_index`` order.

    evalnb's tables list them so; checking costs one pass, sorting would cost more.
    """
    starts = pl.col("_attempt") != pl.col("_attempt").shift(1)
    check = calls.select(
        runs=starts.fill_null(True).sum(),
        attempts=pl.col("_attempt").n_unique(),
        ordered=(starts.fill_null(True) | (pl.col("call_index").diff() > 0)).all(),
    ).row(0, named=True)
    return bool(check["ordered"] and check["runs"] == check["attempts"])


def _in_command_order(rows: pl.DataFrame) -> pl.DataFrame:
    """Each command's executions lined up, with ``failed``, ``is_first`` and ``is_retry``.

    ``rows`` must be in execution order (as :func:`ordered_rows` gives them). A stable
    sort by one integer, the hash of the (attempt, command id) pair, puts the executions
    of each (attempt, command) next to each other in execution order, so a shift finds
    the previous one (two pairs sharing a hash: the chance :class:`Parser` gives for
    command ids). Columns: ``_row`` (the row's position in ``rows``), ``_attempt``,
    ``is_help`` and the three flags.
    """
    ordered = rows.select(
        "_attempt",
        "is_help",
        _row=pl.int_range(pl.len(), dtype=pl.UInt32),
        failed=_failed(),
        _key=pl.struct("_attempt", "_command").hash(),
    ).sort("_key", maintain_order=True)
    same = (pl.col("_key") == pl.col("_key").shift(1)).fill_null(False)
    return ordered.select(
        "_row",
        "_attempt",
        "is_help",
        "failed",
        is_first=~same,
        is_retry=same & pl.col("failed").shift(1).fill_null(False),
    )


def with_flags(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (see :func:`_in_command_order`) with ``failed``, ``is_first`` and ``is_retry``.

    Example:
        >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb.records import ToolCallResult as Call
        >>> from evalnb._store.tables import tables_from_records
        >>> calls = [Call(commands="jq . a.json", exit_code=5, call_index=0),
        ...          Call(commands="jq . a.json && ls", exit_code=0, call_index=1)]
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...                  trace=AgentTrace(tool_calls=calls), score=TaskScore(task_id="t"))
        >>> t = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
        >>> rows = ordered_rows(t["tool_calls"].lazy(), t["tool_invocations"].lazy(),
        ...                     t["tasks"].lazy(), Parser(None))
        >>> with_flags(rows).select("failed", "is_first", "is_retry").rows()
        [(True, True, False), (False, False, True), (False, True, False)]
    """
    flags = _in_command_order(rows).sort("_row").select("failed", "is_first", "is_retry")
    return rows.with_columns(flags)


def attempt_counts(rows: pl.DataFrame) -> pl.DataFrame:
    """The counts of :data:`COUNTS` per attempt (``_attempt``) of ``rows`` (see
    :func:`_in_command_order`), summed from the flags without restoring the row order.

    Example:
        >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb.records import ToolCallResult as Call
        >>> from evalnb._store.tables import tables_from_records
        >>> calls = [Call(commands="jq . a.json", exit_code=5, call_index=0),
        ...          Call(commands="jq . a.json && ls", exit_code=0, call_index=1)]
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...                  trace=AgentTrace(tool_calls=calls), score=TaskScore(task_id="t"))
        >>> t = tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
        >>> rows = ordered_rows(t["tool_calls"].lazy(), t["tool_invocations"].lazy(),
        ...                     t["tasks"].lazy(), Parser(None))
        >>> attempt_counts(rows).drop("_attempt").row(0)
        (3, 2, 1, 1, 0, 1)
    """
    return _in_command_order(rows).group_by("_attempt").agg(count_exprs())


def _failed() -> pl.Expr:
    """Non-zero exit code; a recorded invocation without one was killed, so it failed."""
    return (pl.col("exit_code") != 0).fill_null(pl.col("_events"))


def count_exprs() -> list[pl.Expr]:
    """The :data:`COUNTS` as aggregations over command rows flagged by :func:`with_flags`
    (``failed``, ``is_first``, ``is_retry``, ``is_help``).

    Example:
        >>> rows = pl.DataFrame({"failed": [True, False], "is_first": [True, False],
        ...                      "is_retry": [False, True], "is_help": [False, False]})
        >>> rows.select(count_exprs()).row(0)
        (2, 1, 1, 1, 0, 0)
    """
    return [
        pl.len().cast(pl.Int64).alias("total_commands"),
        pl.col("is_first").sum().cast(pl.Int64).alias("unique_commands"),
        pl.col("failed").sum().cast(pl.Int64).alias("error_count"),
        pl.col("is_retry").sum().cast(pl.Int64).alias("retry_count"),
        pl.col("is_help").sum().cast(pl.Int64).alias("help_invocations"),
        (pl.col("is_first") & ~pl.col("failed")).sum().cast(pl.Int64).alias("first_try_successes"),
    ]


def with_command_counts(
    tasks: pl.DataFrame, tool_calls: pl.DataFrame, tool_invocations: pl.DataFrame
) -> pl.DataFrame:
    """``tasks`` with the :data:`COUNTS` of every command (``pattern=None``) per attempt.

    An attempt without commands counts 0. Run folders store these columns so analysis
    need not parse the tool calls again; a null means they were not stored (an older
    folder, tables built by hand) and :func:`evalnb._analysis.interaction.interaction`
    computes them.

    Example:
        >>> from evalnb._store.tables import SCHEMAS
        >>> empty = {n: pl.DataFrame(schema=SCHEMAS[n]) for n in SCHEMAS}
        >>> tasks = pl.DataFrame({"attempt_key": [0]}, schema={"attempt_key": pl.Int64})
        >>> with_command_counts(tasks, empty["tool_calls"], empty["tool_invocations"]).row(0)
        (0, 0, 0, 0, 0, 0, 0)
    """
    rows = ordered_rows(tool_calls.lazy(), tool_invocations.lazy(), tasks.lazy(), Parser(None))
    counts = attempt_counts(rows).rename({"_attempt": "attempt_key"})
    return (
        tasks.drop(COUNTS, strict=False)
        .join(counts, on="attempt_key", how="left", maintain_order="left")
        .with_columns(pl.col(COUNTS).fill_null(0).cast(pl.Int64))
    )
