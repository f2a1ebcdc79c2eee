"""Context an agent carries, peaks and compacts: per call and per attempt.

Spec 003's ``context_growth_avg`` is a straight slope from the first call to the last
(:func:`context_growth`, unchanged); it hides the peak and the
drops where an agent compacts its history. Beside it, from the ``llm_calls`` rows:

- a call's context is its ``input_tokens`` (the whole prompt, cached or not);
- a call **drops** the context when its ``input_tokens`` is below the previous call's
  (both known), or when the source marks it ``compacted`` (Claude Code's
  ``compact_boundary``, Codex's ``compacted``: the history was summarised right before);
- per attempt: ``peak_context`` (the largest ``input_tokens``) and ``peak_call`` (its
  first call), ``drops`` and ``drop_calls`` (their call numbers), ``compactions`` (the
  calls marked ``compacted``), and ``tokens_reread``, the sum of ``input_tokens`` over
  the calls: every call re-reads its whole prompt, so this is what a long attempt pays
  for. Null when any call's count is unknown (a sum missing a call would understate it).

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> context_peaks(Runs.empty()).columns[4:7]
    ['llm_call_count', 'peak_context', 'peak_call']
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from evalnb._analysis.runs import AGGREGATE, Runs
from evalnb._store.tables import KEYS, RUN_KEY

DROPPED = pl.col("dropped")
"""Of :func:`context_calls`' rows: the call dropped the context."""


def context_calls(runs: Runs) -> pl.LazyFrame:
    """Per LLM call: keys, ``call_number``, ``input_tokens``, ``compacted`` and
    ``dropped`` (see the module docstring), in call order within each attempt.

    Example:
        >>> context_calls(Runs.empty()).collect().columns[-2:]
        ['compacted', 'dropped']
    """
    previous = pl.col("input_tokens").shift(1).over("attempt_key", order_by="call_number")
    return (
        runs.scan("llm_calls")
        .select(*KEYS, "attempt_key", "call_number", "input_tokens", "compacted")
        .sort("attempt_key", "call_number")
        .with_columns(
            (
                (pl.col("input_tokens") < previous).fill_null(False)
                | pl.col("compacted").fill_null(False)
            ).alias("dropped")
        )
    )


def context_peaks(runs: Runs) -> pl.DataFrame:
    """One row per task attempt with LLM calls: its peak, drops and tokens re-read.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.

    Returns
    -------
    polars.DataFrame
        Columns: keys, ``llm_call_count``, ``peak_context``, ``peak_call``, ``drops``,
        ``drop_calls``, ``compactions``, ``tokens_reread`` (see the module docstring).

    Raises
    ------
    TypeError
        If ``runs`` is not a :class:`evalnb.Runs`.

    See Also
    --------
    context_growth : Spec 003 context growth per attempt, run or model.

    Examples
    --------
    The simulated models' context never drops:

    >>> from evalnb._examples import example_runs
    >>> context_peaks(example_runs()).filter(run_id="careful").sort("task_id", "epoch").select(
    ...     "task_id", "epoch", "llm_call_count", "peak_context", "peak_call", "drops").head(4)
    shape: (4, 6)
    ┌───────────────────┬───────┬────────────────┬──────────────┬───────────┬───────┐
    │ task_id           ┆ epoch ┆ llm_call_count ┆ peak_context ┆ peak_call ┆ drops │
    │ ---               ┆ ---   ┆ ---            ┆ ---          ┆ ---       ┆ ---   │
    │ str               ┆ i64   ┆ i64            ┆ i64          ┆ i64       ┆ i64   │
    ╞═══════════════════╪═══════╪════════════════╪══════════════╪═══════════╪═══════╡
    │ smoke_count_words ┆ 1     ┆ 4              ┆ 1574         ┆ 4         ┆ 0     │
    │ smoke_count_words ┆ 2     ┆ 3              ┆ 1574         ┆ 3         ┆ 0     │
    │ smoke_jq_fields   ┆ 1     ┆ 4              ┆ 1589         ┆ 4         ┆ 0     │
    │ smoke_jq_fields   ┆ 2     ┆ 4              ┆ 1594         ┆ 4         ┆ 0     │
    └───────────────────┴───────┴────────────────┴──────────────┴───────────┴───────┘

    A compaction at call 4 is a drop; every call's input is re-read:

    >>> from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> calls = [LLMCall(call_number=i + 1, input_tokens=n, compacted=i == 3 or None)
    ...     for i, n in enumerate([1000, 5000, 9000, 2000, 4000])]
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
    ...     trace=AgentTrace(llm_calls=calls), score=TaskScore(task_id="t"))
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec]))
    >>> context_peaks(runs).select("peak_context", "peak_call", "drop_calls",
    ...     "compactions", "tokens_reread").row(0)
    (9000, 3, [4], 1, 21000)
    """
    tokens = pl.col("input_tokens")
    return (
        context_calls(runs)
        .group_by(*KEYS, "attempt_key")
        .agg(
            pl.len().cast(pl.Int64).alias("llm_call_count"),
            tokens.max().alias("peak_context"),
            pl.col("call_number").filter(tokens == tokens.max()).min().alias("peak_call"),
            DROPPED.sum().cast(pl.Int64).alias("drops"),
            pl.col("call_number").filter(DROPPED).alias("drop_calls"),
            pl.col("compacted").fill_null(False).sum().cast(pl.Int64).alias("compactions"),
            pl.when(tokens.null_count() == 0).then(tokens.sum()).alias("tokens_reread"),
        )
        .sort("attempt_key")
        .drop("attempt_key")
        .collect(engine=AGGREGATE)
    )


def context_growth(runs: Runs, by: Literal["task", "run", "model"] = "task") -> pl.DataFrame:
    """Spec 003 context growth per task attempt, or aggregated per run or per model.

    Per task: ``calls`` (LLM calls recorded), ``has_call_tokens`` (whether call 1
    carries its input token count, so ``base_context`` is known; bashkit-eval result
    files have no per-call counts), ``base_context`` (call 1's input tokens),
    ``context_growth_avg`` (``(input[N] - input[1]) / (N - 1)``, 0 for one call, may be
    negative) and ``final_cumulative_input`` (the sum of input tokens over the calls).
    All are the tasks table's own (:func:`evalnb._store.tables.with_llm_call_figures`,
    which gives the rule for unknown counts: a figure is null when its formula needs
    one), so this reads one row per attempt.

    Per run (``run_id``, ``model``) or per ``model``: ``tasks``,
    ``share_with_call_tokens``, ``calls_mean`` and the mean and median of the three
    token figures over the tasks that have them.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    by : {"task", "run", "model"}, default "task"
        One row per task attempt, per run or per model (the runs of one model pool
        their tasks).

    Returns
    -------
    DataFrame
        Per task: ``run_id``, ``model``, ``task_id``, ``epoch``, then the figures above,
        sorted by those keys. Per run or model: the group's columns, then the
        aggregates above (``base_context_mean``, ``base_context_median``...), sorted.

    Raises
    ------
    ValueError
        ``by`` is not one of the three.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = context_growth(example_runs(), by="run")
    >>> out.select("run_id", "tasks", "calls_mean", pl.col("base_context_mean").round(1))
    shape: (2, 4)
    ┌─────────┬───────┬────────────┬───────────────────┐
    │ run_id  ┆ tasks ┆ calls_mean ┆ base_context_mean │
    │ ---     ┆ ---   ┆ ---        ┆ ---               │
    │ str     ┆ i64   ┆ f64        ┆ f64               │
    ╞═════════╪═══════╪════════════╪═══════════════════╡
    │ careful ┆ 6     ┆ 4.0        ┆ 1434.3            │
    │ hasty   ┆ 6     ┆ 3.0        ┆ 1284.3            │
    └─────────┴───────┴────────────┴───────────────────┘
    """
    if by not in ("task", "run", "model"):
        raise ValueError(f"by must be 'task', 'run' or 'model', got {by!r}")
    figures = ["base_context", "context_growth_avg", "final_cumulative_input"]
    keys = KEYS if by == "task" else []
    per_task = (
        runs.scan("tasks")
        .select(*keys, "attempt_key", *figures, calls=pl.col("llm_call_count").fill_null(0))
        .with_columns(pl.col("base_context").is_not_null().alias("has_call_tokens"))
    )
    if by == "task":
        return per_task.select(*KEYS, "calls", "has_call_tokens", *figures).collect().sort(KEYS)
    group = {"run": ["run_id", "model"], "model": ["model"]}[by]
    names = runs.runs.select("run_key", *group).lazy()
    per_task = per_task.with_columns(RUN_KEY)
    if by == "model":  # runs of one model pool their tasks (medians do not combine)
        per_task = per_task.join(names, on="run_key", how="left")
    stats = per_task.group_by("model" if by == "model" else "run_key").agg(
        pl.len().cast(pl.Int64).alias("tasks"),
        pl.col("has_call_tokens").mean().alias("share_with_call_tokens"),
        pl.col("calls").mean().alias("calls_mean"),
        *[pl.col(f).mean().alias(f"{f}_mean") for f in figures],
        *[pl.col(f).median().alias(f"{f}_median") for f in figures],
    )
    if by == "run":
        stats = stats.join(names, on="run_key").select(*group, pl.exclude("run_key", *group))
    return stats.collect(engine=AGGREGATE).sort(group)
