"""Spec 002 layer 1: interaction metrics from the target-tool commands of each task attempt.

The preferred source is the structured ``tool_calls`` table (one row per tool call, with
its exit code). Each call's ``commands`` text is split into *target commands*:

- ``pattern=None`` (bash tasks): every simple command with a literal name, found by
  bashkit's static analyser (``bashkit.Bash().analyze``; plain scripts all together,
  with the same result: :mod:`evalnb._store.plain_scripts`), including commands inside
  pipelines, ``$(...)`` substitutions and function bodies; assignment-only commands and
  commands whose name is not a literal word are skipped. The subcommand is the command
  name (``jq``, ``grep``). The command text is rebuilt from the parsed words, joined by
  single spaces, a word quoted when it holds whitespace, quotes, ``<`` or ``>``, and a
  non-literal word (``"$x"``, ``$(date)``) written as ``<expr>``. A call that does not
  parse counts as one command: its whole text, whitespace normalised, subcommand = its
  first word.
- a regex ``pattern`` (spec 002 ``target.command_pattern``, e.g. ``r"notes\\s+(\\S+)"``,
  in the Rust dialect of :func:`evalnb.records.rust_regex.compile_pattern`: a pattern
  with lookaround or a backreference raises ValueError naming the argument): the parsed
  commands the pattern matches at the start of, the command name reduced to its
  basename (``./notes``, ``/x/bin/notes``); never text in quotes, heredoc bodies or
  comments, nor ``command -v notes``. In a call that does not parse, and in a plain
  transcript, a match counts only where it starts a word
  (:func:`evalnb._scoring.commands.pattern_matches`). The subcommand is capture group 1,
  or null when the pattern has no group (then, as spec 002 says, only aggregate counts
  are available).

Each string is parsed once however often it recurs (the same script repeats across
runs), so a million tool-call rows cost about as much as their distinct scripts.

A run folder stores each attempt's counts over every command (``pattern=None``) in its
tasks table when the run is written
(:func:`evalnb._store.command_counts.with_command_counts`, the same code); without a
pattern, ``interaction(by="task" | "run")`` reads those six integers per attempt
instead of parsing the tool calls again. Inputs without them (imports, runs in
progress, older folders) are counted from their tool calls.

Recorded invocations (spec 002's structured events, table ``tool_invocations``) come
first: a tool call whose invocations were recorded (``invocations_recorded``) gives one
target command per invocation, with the invocation's own exit code (``source`` =
``"events"``; a run killed before it ended has a null exit code and counts as failed),
its text and subcommand from its argv by the same rules
(:func:`evalnb._scoring.commands.argv_command`; a run the pattern does not describe
still counts, with a null subcommand). Other calls (bash tasks, imports) fall back to
their text (``source`` = ``"text"``): a tool call has one exit code, and every target
command in it inherits it; rows of calls that hold more than one target command are
marked ``exit_code_approximate``.

Definitions (per task attempt; commands ordered by call, then position in the call):

- ``total_commands``: target commands executed (spec 002 "Command count").
- ``unique_commands``: distinct command texts.
- ``error_count``: commands whose exit code is not 0; ``error_rate`` = error_count / total.
  A command read from text whose call has no exit code (some imports) counts as not
  failed, so also as a first-try success when first; a recorded invocation without one
  was killed and counts as failed.
- ``retry_count``: *retries*, executions of a command text that already ran earlier in
  the attempt and failed at its previous execution. A command repeated after it
  succeeded is not a retry.
- ``retry_rate``: spec 002's formula, ``(total - unique) / total``: the share of
  executions that repeat an earlier command, whether or not it had failed.
- ``help_invocations``: commands with ``--help`` among their arguments, whose first
  argument is ``help``, or named ``help``; ``-h`` only for commands whose ``-h`` means
  help (:data:`evalnb._scoring.commands.SHORT_HELP`), so not ``df -h`` or ``sort -h``,
  and for a scenario's own tool only when the scenario says so (``target.short_help``,
  recorded as the task column ``short_help_tool``: the tool's name): then, in that
  scenario's attempts, a command of that name with ``-h`` among its arguments counts.
- ``first_try_successes``: distinct commands whose first execution succeeded;
  ``first_try_success_rate`` = first_try_successes / total_commands (spec 002: "commands
  that succeeded on first attempt / total commands"), so repeating a command lowers it
  even when every execution succeeded; first_try_successes / unique_commands is the
  share of distinct commands that worked at once.
- ``iteration_ratio``: unique_commands / total_commands (spec 002).
- ``completed``: the attempt ended by the model's own stop (``natural_stop``, i.e. not
  cut off at the turn limit, this harness's timeout) and without a provider or sandbox
  error (spec 002 "Completion"); null (unknown) when ``natural_stop`` is (imported
  plain transcripts). Per run, ``completed_tasks`` counts the completed attempts,
  ``known_completion`` those whose completion is known and ``completion_rate`` =
  completed_tasks / known_completion (null when none is known).

A rate with zero commands is null.

Example:
    >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
    >>> from evalnb.records import ToolCallResult as Call
    >>> from evalnb._analysis.runs import Runs
    >>> from evalnb._store.tables import tables_from_records
    >>> calls = [Call(commands="jq . a.json", exit_code=5, call_index=0),
    ...          Call(commands="jq . a.json", exit_code=0, call_index=1)]
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...                  trace=AgentTrace(tool_calls=calls, natural_stop=True),
    ...                  score=TaskScore(task_id="t"))
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec]))
    >>> interaction(runs).select("total_commands", "error_count", "retry_count",
    ...                          "first_try_success_rate", "completed").row(0)
    (2, 1, 1, 0.0, True)
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from evalnb._analysis.runs import AGGREGATE, Runs
from evalnb._store.command_counts import (
    ATTEMPT,
    COUNTS,
    Parser,
    attempt_counts,
    count_exprs,
    ordered_rows,
    with_flags,
)
from evalnb._store.tables import KEYS, RUN_STRIDE, TABLES, tables_from_records
from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
from evalnb.records.rust_regex import RustRegex, compile_pattern

METRICS = [
    "total_commands",
    "unique_commands",
    "error_count",
    "error_rate",
    "retry_count",
    "retry_rate",
    "help_invocations",
    "first_try_successes",
    "first_try_success_rate",
    "iteration_ratio",
]
"""Metric columns of :func:`interaction`, in output order."""


def command_rows(runs: Runs, pattern: str | RustRegex | None = None) -> pl.DataFrame:
    """One row per target command, in execution order, with its exit code.

    The target commands are those of :func:`interaction`, read by the same rules (see
    the module docstring): recorded invocations first, else the call's command text.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.
    pattern : str or RustRegex or None, default None
        None: every simple command with a literal name (bash tasks). A regex (spec 002
        ``target.command_pattern``, Rust dialect): the commands it matches at the start
        of; the subcommand is its capture group 1.

    Returns
    -------
    polars.DataFrame
        Columns: keys (run_id, model, task_id, epoch), call_index, call_number,
        command_index (0-based position in the call), command, subcommand, exit_code,
        source (``"events"``: a recorded invocation; ``"text"``: read from the call's
        command text), exit_code_approximate, is_help, failed, is_first (first
        execution of this command text in the attempt) and is_retry (see the module
        docstring).

    Raises
    ------
    ValueError
        If ``pattern`` is not a valid regex of the Rust dialect (lookaround, a
        backreference), naming the argument.
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    interaction : The counts and rates of these rows per attempt, run or subcommand.
    failing_commands : The commands most often blamed for failing tool calls.

    Examples
    --------
    The failed commands of the hasty model: it retried ``wcc -w`` once in epoch 1.

    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> rows = command_rows(example_runs()).filter(pl.col("failed"))
    >>> rows.sort("task_id", "epoch", maintain_order=True).select(
    ...     "task_id", "epoch", "command", "exit_code", "is_retry").head(4)
    shape: (4, 5)
    ┌───────────────────┬───────┬────────────────────────────────┬───────────┬──────────┐
    │ task_id           ┆ epoch ┆ command                        ┆ exit_code ┆ is_retry │
    │ ---               ┆ ---   ┆ ---                            ┆ ---       ┆ ---      │
    │ str               ┆ i64   ┆ str                            ┆ i64       ┆ bool     │
    ╞═══════════════════╪═══════╪════════════════════════════════╪═══════════╪══════════╡
    │ smoke_count_words ┆ 1     ┆ wcc -w                         ┆ 127       ┆ false    │
    │ smoke_count_words ┆ 1     ┆ wcc -w                         ┆ 127       ┆ true     │
    │ smoke_count_words ┆ 2     ┆ wcc -w                         ┆ 127       ┆ false    │
    │ smoke_jq_fields   ┆ 1     ┆ jq -r .version /data/pkgs.json ┆ 2         ┆ false    │
    └───────────────────┴───────┴────────────────────────────────┴───────────┴──────────┘

    A call's text that holds several commands gives one row each, all with the call's
    exit code (``exit_code_approximate``):

    >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
    >>> from evalnb.records import ToolCallResult as Call
    >>> from evalnb._store.tables import tables_from_records
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...     trace=AgentTrace(tool_calls=[Call(commands="cat  a | grep -c x", exit_code=1)]),
    ...     score=TaskScore(task_id="t"))
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec]))
    >>> command_rows(runs).select("command", "subcommand", "exit_code_approximate").rows()
    [('cat a', 'cat', True), ('grep -c x', 'grep', True)]
    """
    parser = Parser(_command_regex(pattern, "command_rows"))
    return pl.concat(
        [_piece_command_rows(piece, parser) for piece in runs.pieces()], how="vertical"
    )


def _piece_rows(piece: Runs, parser: Parser) -> pl.DataFrame:
    """The ordered command rows of one input (see :func:`ordered_rows`)."""
    scan = piece.scan
    return ordered_rows(scan("tool_calls"), scan("tool_invocations"), scan("tasks"), parser)


def _piece_command_rows(piece: Runs, parser: Parser) -> pl.DataFrame:
    rows = with_flags(_piece_rows(piece, parser))
    keys = piece.scan("tool_calls").select(*KEYS, ATTEMPT).unique("_attempt").collect()
    texts = parser.table.select("_command", "command", "subcommand").unique("_command")
    return (
        rows.join(keys, on="_attempt", how="left", maintain_order="left")
        .join(texts, on="_command", how="left", maintain_order="left")
        .select(
            *KEYS,
            "call_index",
            "call_number",
            "command_index",
            "command",
            "subcommand",
            "exit_code",
            pl.when("_events").then(pl.lit("events")).otherwise(pl.lit("text")).alias("source"),
            "exit_code_approximate",
            "is_help",
            "failed",
            "is_first",
            "is_retry",
        )
    )


def interaction(
    runs: Runs,
    pattern: str | RustRegex | None = None,
    by: Literal["task", "run", "subcommand"] = "task",
) -> pl.DataFrame:
    """Spec 002 interaction metrics per task attempt, per run or per subcommand.

    ``by="task"``: one row per task attempt (tasks without target commands included,
    with counts 0 and null rates) and ``completed``. ``by="run"``: per run, the
    per-task counts summed and the rates recomputed from the sums, plus ``tasks``,
    ``completed_tasks`` and ``completion_rate``. ``by="subcommand"``: per (run,
    subcommand), the same counts and rates plus ``tasks`` (attempts that used it);
    it needs a subcommand, so a regex pattern without a capture group raises
    ValueError. See the module docstring for every definition.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.
    pattern : str or RustRegex or None, default None
        None: every simple command with a literal name (bash tasks). A regex (spec 002
        ``target.command_pattern``, e.g. ``r"notes\\s+(\\S+)"``, Rust dialect): the
        commands it matches at the start of; the subcommand is its capture group 1.
    by : {"task", "run", "subcommand"}, default "task"
        One row per task attempt, per run, or per (run, subcommand).

    Returns
    -------
    polars.DataFrame
        ``by="task"``: keys (run_id, model, task_id, epoch), the metrics
        (total_commands, unique_commands, error_count, error_rate, retry_count,
        retry_rate, help_invocations, first_try_successes, first_try_success_rate,
        iteration_ratio) and completed. ``by="run"``: run_id, model, tasks,
        completed_tasks, known_completion, completion_rate and the metrics.
        ``by="subcommand"``: run_id, model, subcommand, tasks and the metrics.

    Raises
    ------
    ValueError
        If ``by`` is not one of its choices, if ``pattern`` is not a valid regex of the
        Rust dialect (naming the argument), or if ``by="subcommand"`` and the pattern has
        no capture group.
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    command_rows : The target commands themselves, one row each.
    compare_guidance : These metrics compared across guidance versions.

    Examples
    --------
    Per run: the hasty model's commands fail more often, and fewer work at once.

    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> interaction(example_runs(), by="run").select("run_id", "total_commands",
    ...     "error_count", "retry_count", pl.col("first_try_success_rate").round(3))
    shape: (2, 5)
    ┌─────────┬────────────────┬─────────────┬─────────────┬────────────────────────┐
    │ run_id  ┆ total_commands ┆ error_count ┆ retry_count ┆ first_try_success_rate │
    │ ---     ┆ ---            ┆ ---         ┆ ---         ┆ ---                    │
    │ str     ┆ i64            ┆ i64         ┆ i64         ┆ f64                    │
    ╞═════════╪════════════════╪═════════════╪═════════════╪════════════════════════╡
    │ careful ┆ 26             ┆ 0           ┆ 0           ┆ 1.0                    │
    │ hasty   ┆ 23             ┆ 6           ┆ 1           ┆ 0.696                  │
    └─────────┴────────────────┴─────────────┴─────────────┴────────────────────────┘

    Per task attempt, for one run:

    >>> interaction(example_runs()).filter(run_id="hasty").sort("task_id", "epoch").select(
    ...     "task_id", "epoch", "total_commands", "error_count", "retry_count")
    shape: (6, 5)
    ┌────────────────────┬───────┬────────────────┬─────────────┬─────────────┐
    │ task_id            ┆ epoch ┆ total_commands ┆ error_count ┆ retry_count │
    │ ---                ┆ ---   ┆ ---            ┆ ---         ┆ ---         │
    │ str                ┆ i64   ┆ i64            ┆ i64         ┆ i64         │
    ╞════════════════════╪═══════╪════════════════╪═════════════╪═════════════╡
    │ smoke_count_words  ┆ 1     ┆ 4              ┆ 2           ┆ 1           │
    │ smoke_count_words  ┆ 2     ┆ 6              ┆ 1           ┆ 0           │
    │ smoke_jq_fields    ┆ 1     ┆ 2              ┆ 1           ┆ 0           │
    │ smoke_jq_fields    ┆ 2     ┆ 2              ┆ 1           ┆ 0           │
    │ smoke_make_project ┆ 1     ┆ 3              ┆ 0           ┆ 0           │
    │ smoke_make_project ┆ 2     ┆ 6              ┆ 1           ┆ 0           │
    └────────────────────┴───────┴────────────────┴─────────────┴─────────────┘

    Per subcommand of a scenario's own tool, named by a pattern's capture group:

    >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
    >>> from evalnb.records import ToolCallResult as Call
    >>> from evalnb._store.tables import tables_from_records
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...     trace=AgentTrace(tool_calls=[Call(commands="notes add x; notes --help")]),
    ...     score=TaskScore(task_id="t"))
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec]))
    >>> interaction(runs, r"notes\\s+(\\S+)", by="subcommand").select(
    ...     "subcommand", "total_commands", "help_invocations").sort("subcommand").rows()
    [('--help', 1, 1), ('add', 1, 0)]
    """
    if by not in ("task", "run", "subcommand"):
        raise ValueError(f"by must be 'task', 'run' or 'subcommand', got {by!r}")
    regex = _command_regex(pattern, "interaction")
    if by == "subcommand":
        if regex is not None and regex.groups == 0:
            raise ValueError(
                f"pattern {regex.pattern!r} has no capture group, so there is no subcommand "
                "(spec 002: only aggregate counts are available)"
            )
        rows = command_rows(runs, regex)
        per_sub = rows.group_by("run_id", "model", "subcommand", maintain_order=True).agg(
            pl.struct("task_id", "epoch").n_unique().cast(pl.Int64).alias("tasks"), *count_exprs()
        )
        return (
            _with_rates(per_sub)
            .select("run_id", "model", "subcommand", "tasks", *METRICS)
            .sort("run_id", "subcommand", nulls_last=True)
        )
    counts = _attempt_counts(runs, Parser(regex))
    # null when the source does not say how the attempt ended (a transcript)
    completed = (
        pl.when(pl.col("natural_stop").is_not_null())
        .then(pl.col("natural_stop") & pl.col("error").is_null())
        .alias("completed")
    )
    if by == "task":
        tasks = runs.scan("tasks").select(*KEYS, ATTEMPT, completed)
        joined = tasks.join(counts, on="_attempt", how="left", maintain_order="left").collect()
        joined = joined.with_columns(pl.col(COUNTS).fill_null(0))
        return _with_rates(joined).select(*KEYS, *METRICS, "completed")
    run_key = (pl.col("_attempt") // RUN_STRIDE).alias("run_key")
    per_run_tasks, per_run_counts = pl.collect_all(
        [
            runs.scan("tasks")
            .select(ATTEMPT, completed)
            .group_by(run_key)
            .agg(
                pl.len().cast(pl.Int64).alias("tasks"),
                pl.col("completed").sum().cast(pl.Int64).alias("completed_tasks"),
                pl.col("completed").count().cast(pl.Int64).alias("known_completion"),
                pl.col("completed").mean().alias("completion_rate"),
            ),
            counts.group_by(run_key).agg(pl.col(COUNTS).sum().cast(pl.Int64)),
        ],
        engine=AGGREGATE,
    )
    per_run = (
        runs.runs.select("run_id", "model", "run_key")
        .join(per_run_tasks, on="run_key", how="inner", maintain_order="left")
        .join(per_run_counts, on="run_key", how="left", maintain_order="left")
        .with_columns(pl.col(COUNTS).fill_null(0))
    )
    return _with_rates(per_run).select(
        "run_id",
        "model",
        "tasks",
        "completed_tasks",
        "known_completion",
        "completion_rate",
        *METRICS,
    )


def _attempt_counts(runs: Runs, parser: Parser) -> pl.LazyFrame:
    """The :data:`COUNTS` per attempt (``_attempt``), input by input: an input's tasks
    table's own where it stores them for this rule (every command, see
    :func:`evalnb._store.command_counts.with_command_counts`), else counted from its
    tool calls."""
    pieces = runs.pieces()
    stored = [False] * len(pieces)
    if parser.regex is None:  # one query for all inputs: does each store every count?
        complete = pl.col("total_commands").null_count() == 0
        found = pl.collect_all([piece.scan("tasks").select(complete) for piece in pieces])
        stored = [frame.item() for frame in found]
    return pl.concat(
        [
            piece.scan("tasks").select(ATTEMPT, *COUNTS)
            if has_counts
            else attempt_counts(_piece_rows(piece, parser)).lazy()
            for piece, has_counts in zip(pieces, stored, strict=True)
        ],
        how="vertical",
    )


def interaction_from_transcript(text: str, pattern: str | RustRegex) -> pl.DataFrame:
    """Spec 002 transcript fallback: the interaction metrics of a raw-text transcript.

    The transcript is read by evalnb's one transcript parser,
    :func:`evalnb._formats.transcript.transcript_trace` (the reader that imports
    transcripts), and measured like any imported attempt: every target command on a
    command line gets that line's approximate exit code. ``completed`` is null: a
    transcript does not say how the agent ended. Returns one row with the columns of
    :data:`METRICS` and ``completed``.

    Example:
        >>> log = "$ notes add a\\nError: no store\\n$ notes init\\n$ notes add a\\n"
        >>> interaction_from_transcript(log, r"notes\\s+(\\S+)").select(
        ...     "total_commands", "error_count", "retry_count", "completed").row(0)
        (3, 1, 1, None)
    """
    from evalnb._formats.transcript import transcript_trace  # a reader: loaded only when used

    regex = _command_regex(pattern, "interaction_from_transcript")
    assert regex is not None  # a pattern is required here
    record = TaskRecord(
        task=Task(id="transcript", category="transcript", prompt="(transcript)"),
        trace=transcript_trace(text, regex),
        score=TaskScore(task_id="transcript"),
    )
    meta = RunMeta(run_id="transcript", provider="unknown", model="unknown")
    tables = tables_from_records(meta, [record])
    runs = Runs(*(tables[name] for name in TABLES))
    return interaction(runs, regex).select(*METRICS, "completed")


def _command_regex(pattern: str | RustRegex | None, caller: str) -> RustRegex | None:
    """A command pattern compiled in the Rust dialect (:func:`compile_pattern`), or
    ValueError naming ``caller``'s argument ``pattern``.

    Example:
        >>> _command_regex(r"notes\\s+(\\S+)", "interaction").groups
        1
        >>> _command_regex(r"(?<![\\w-])notes", "interaction")
        Traceback (most recent call last):
        ...
        ValueError: interaction(): pattern: invalid regex '(?<![\\\\w-])notes': lookbehind \
(?<!: the Rust regex dialect (bashkit-eval, llm-tool-test) has no lookaround
    """
    if not isinstance(pattern, str):
        return pattern
    try:
        return compile_pattern(pattern)
    except ValueError as exc:
        raise ValueError(f"{caller}(): pattern: {exc}") from None


def _with_rates(counts: pl.DataFrame) -> pl.DataFrame:
    """Add the rates computed from the counts (null with zero commands)."""
    total = pl.col("total_commands")

    def rate(numerator: pl.Expr) -> pl.Expr:
        return pl.when(total > 0).then(numerator / total).otherwise(None)

    return counts.with_columns(
        error_rate=rate(pl.col("error_count")),
        retry_rate=rate(total - pl.col("unique_commands")),
        first_try_success_rate=rate(pl.col("first_try_successes")),
        iteration_ratio=rate(pl.col("unique_commands")),
    )
