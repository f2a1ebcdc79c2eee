"""Run summaries: spec 000's EvalSummary per run, recomputed from the per-task rows.

Everything is recomputed from the per-task and per-tool-call rows of
:class:`evalnb._analysis.runs.Runs`, never copied from a stored summary, with spec 000's
formulas (micro-averaged: ``overall_rate = sum(score) / sum(max_score)``):

- ``pass_rate = total_passed / total_tasks``; a task passes when every check
  passed and it did not error. Errored tasks count as tasks (not passed).
- ``total_tool_calls`` is the sum of the tasks' ``tool_call_count`` (spec 000), so it
  includes calls a source counted without recording them (onetool-bench).
  ``tool_call_success_rate = tool_calls_ok / (tool_calls_ok + tool_calls_error)``; ok
  means exit code 0, error a non-zero one (the tasks' counts of their tool-call rows,
  :func:`evalnb._store.tables.with_call_figures`). A call whose exit code the source did
  not record (null: Terminal-Bench keystrokes, some Inspect tools, calls without rows)
  counts in ``total_tool_calls`` and ``tool_calls_unknown``, never as ok or as an error.
- A rate whose denominator is 0 is null. A NaN ``score`` or ``max_score`` counts as
  unknown (null), like a missing one; a task with a NaN in either adds to neither
  ``total_score`` nor ``total_max_score``.
- A scenario task's ``score``/``max_score`` are its gates passed / gates total (spec
  002 keeps the judge apart), so a scenario run's ``overall_rate`` is its share of
  gates passed; its layers are reported separately (:mod:`evalnb._analysis.layers`).
- ``natural_stop_rate`` is over the attempts whose ending is known (imported plain
  transcripts do not say how the agent ended: ``natural_stop`` null).

Intervals treat the task as the unit of analysis (Miller 2024): a task's epochs, checks
and tool calls form one cluster (:func:`evalnb._analysis.stats.clustered_wilson`).

Example:
    >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore, ScoreResult
    >>> from evalnb._store.tables import tables_from_records
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"), score=TaskScore(
    ...     task_id="t", results=[ScoreResult(check="exit_code:0", passed=True)],
    ...     score=1, max_score=1))
    >>> meta = RunMeta(run_id="r", provider="reference", model="reference")
    >>> summary(Runs(**tables_from_records(meta, [rec]))).select("pass_rate", "cost_usd").row(0)
    (1.0, 0.0)
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.cost import Prices, judge_costs, run_costs
from evalnb._analysis.layers import LAYER_COLUMNS, scenario_layers
from evalnb._analysis.rates import cluster_sums, interval_of_sums, ratio
from evalnb._analysis.runs import AGGREGATE, Runs
from evalnb._analysis.verdicts import PASSED, SCORED, known_scores
from evalnb._store.tables import RUN_KEY

RUN_INFO = [
    "run_id",
    "model",
    "model_family",
    "provider",
    "source",
    "simulated",
    "guidance",
    "started_at",
    "status",
    "missing_tasks",
]


def summary(runs: Runs, *, prices: Prices | None = None) -> pl.DataFrame:
    """One row per run: spec 000's EvalSummary fields, 95% intervals, stop rate, cost.

    Columns: run identity (:data:`RUN_INFO`); tasks (``total_tasks``, spec 000's count of
    task attempts, ``distinct_tasks``, ``total_passed``, ``errored_tasks``,
    ``unscored_tasks`` (:data:`SCORED`), ``pass_rate`` = ``total_passed`` over the
    attempts with a verdict, null when none has one); weighted checks (``total_score``,
    ``total_max_score``, ``overall_rate``); tool calls (``total_tool_calls``, ``tool_calls_ok``,
    ``tool_calls_error``, ``tool_calls_unknown``, ``tool_call_success_rate``). The three
    rates come with 95% ``_lo``/``_hi`` limits clustered by task (a task's epochs, checks
    and calls together: :func:`evalnb._analysis.stats.clustered_wilson`); effort
    (``total_turns``, ``avg_turns_per_task``, ``avg_tool_calls_per_task``,
    ``natural_stop_rate``); tokens and time (``total_input_tokens``, ``total_output_tokens``,
    ``total_duration_ms`` over the attempts whose duration is known, null when none
    is, and ``avg_duration_ms`` over those); ``cost_usd`` (null when any task's
    cost is unknown), the part of it the source recorded, ``recorded_cost_usd``, and every
    task at the price table's figure, ``priced_cost_usd``
    (:func:`~evalnb._analysis.cost.run_costs`); what its judges cost, apart,
    ``judge_cost_usd`` (:func:`~evalnb._analysis.cost.judge_costs`, null without judge
    ratings); spec 002's layers for scenario runs
    (:data:`~evalnb._analysis.layers.LAYER_COLUMNS`, null for other runs).

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    prices : Prices, optional
        The price table ``cost_usd`` and ``priced_cost_usd`` use; defaults to the
        packaged price table.

    Returns
    -------
    DataFrame
        One row per run, in the order of ``runs.runs``, with the columns above.

    Raises
    ------
    TypeError
        An argument of the wrong type.

    See Also
    --------
    by_category : The same rates per category.
    pass_at_k : pass@k and pass^k per run.
    compare : Two runs compared, paired by task.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = summary(example_runs())
    >>> out.select("run_id", "total_tasks", "total_passed", pl.col("^pass_rate.*$").round(3))
    shape: (2, 6)
    ┌─────────┬─────────────┬──────────────┬───────────┬──────────────┬──────────────┐
    │ run_id  ┆ total_tasks ┆ total_passed ┆ pass_rate ┆ pass_rate_lo ┆ pass_rate_hi │
    │ ---     ┆ ---         ┆ ---          ┆ ---       ┆ ---          ┆ ---          │
    │ str     ┆ i64         ┆ i64          ┆ f64       ┆ f64          ┆ f64          │
    ╞═════════╪═════════════╪══════════════╪═══════════╪══════════════╪══════════════╡
    │ careful ┆ 6           ┆ 6            ┆ 1.0       ┆ 0.076        ┆ 1.0          │
    │ hasty   ┆ 6           ┆ 3            ┆ 0.5       ┆ 0.036        ┆ 0.964        │
    └─────────┴─────────────┴──────────────┴───────────┴──────────────┴──────────────┘
    """
    tasks = known_scores(
        runs.scan("tasks")
        .select(
            "attempt_key",
            "task_id",
            "passed",
            "error",
            "score",
            "max_score",
            "rate",
            "turns",
            "total_input_tokens",
            "total_output_tokens",
            "duration_ms",
            "natural_stop",
            # spec 000: a task's calls; those with a known exit code are ok or error
            pl.col("tool_call_count").fill_null(0),
            pl.col("tool_calls_ok").fill_null(0).cast(pl.Float64),
            pl.col("tool_calls_error").fill_null(0).cast(pl.Float64),
        )
        .with_columns(
            RUN_KEY, (pl.col("tool_calls_ok") + pl.col("tool_calls_error")).alias("_known")
        )
    )
    run_key = ["run_key"]
    tasks = tasks.with_columns(
        PASSED.cast(pl.Float64).alias("_pass"), SCORED.cast(pl.Float64).alias("_one")
    )
    rates = {
        "pass_rate": ("_pass", "_one"),
        "overall_rate": ("score", "max_score"),
        "tool_call_success_rate": ("tool_calls_ok", "_known"),
    }
    run_totals, sums, costs, judging, layers = pl.collect_all(
        [
            tasks.group_by("run_key").agg(
                pl.len().alias("total_tasks"),
                PASSED.sum().alias("total_passed"),
                pl.col("error").is_not_null().sum().alias("errored_tasks"),
                (~SCORED).sum().alias("unscored_tasks"),
                pl.col("score").sum().alias("total_score"),
                pl.col("max_score").sum().alias("total_max_score"),
                pl.col("turns").sum().alias("total_turns"),
                pl.col("total_input_tokens").sum(),
                pl.col("total_output_tokens").sum(),
                pl.col("duration_ms").sum().alias("total_duration_ms"),
                pl.col("duration_ms").count().alias("_timed"),
                pl.col("natural_stop").mean().alias("natural_stop_rate"),
                pl.col("tool_call_count").sum().alias("total_tool_calls"),
                pl.col("tool_calls_ok").sum(),
                pl.col("tool_calls_error").sum(),
                (pl.col("tool_call_count") - pl.col("_known")).sum().alias("tool_calls_unknown"),
            ),
            cluster_sums(tasks, run_key, rates),
            run_costs(runs, prices),
            judge_costs(runs, prices),
            scenario_layers(runs),
        ],
        engine=AGGREGATE,
    )
    per_run = run_totals.lazy().join(
        sums.lazy().select("run_key", pl.col("_tasks").alias("distinct_tasks")), on="run_key"
    )
    counts = [
        "total_tasks",
        "distinct_tasks",
        "total_passed",
        "errored_tasks",
        "unscored_tasks",
        "total_turns",
        "total_input_tokens",
        "total_output_tokens",
        "total_tool_calls",
        "tool_calls_ok",
        "tool_calls_error",
        "tool_calls_unknown",
    ]
    totals = ["total_score", "total_max_score"]
    out = (
        runs.runs.lazy()
        .select(*RUN_INFO, "run_key")
        .with_row_index("_order")  # one row per run, in the runs table's order
        .join(per_run, on="run_key", how="left")
        .with_columns(
            pl.col(counts).fill_null(0).cast(pl.Int64),
            pl.col(totals).fill_null(0.0),
            pl.when(pl.col("_timed") > 0).then(pl.col("total_duration_ms")),
        )
        .with_columns(
            ratio("total_passed", pl.col("total_tasks") - pl.col("unscored_tasks")).alias(
                "pass_rate"
            ),
            ratio("total_score", "total_max_score").alias("overall_rate"),
            ratio("tool_calls_ok", pl.col("tool_calls_ok") + pl.col("tool_calls_error")).alias(
                "tool_call_success_rate"
            ),
            ratio("total_turns", "total_tasks").alias("avg_turns_per_task"),
            ratio("total_tool_calls", "total_tasks").alias("avg_tool_calls_per_task"),
            ratio("total_duration_ms", "_timed").alias("avg_duration_ms"),
        )
        .join(interval_of_sums(sums, run_key, "pass_rate", counts=True), on="run_key", how="left")
        .join(
            interval_of_sums(sums, run_key, "overall_rate", counts=False), on="run_key", how="left"
        )
        .join(
            interval_of_sums(sums, run_key, "tool_call_success_rate", counts=True),
            on="run_key",
            how="left",
        )
        .join(costs.lazy(), on="run_key", how="left")
        .join(judging.lazy(), on="run_key", how="left")
        .join(layers.lazy(), on="run_id", how="left")
        .sort("_order")
    )
    return out.select(
        *RUN_INFO,
        "total_tasks",
        "distinct_tasks",
        "total_passed",
        "errored_tasks",
        "unscored_tasks",
        "pass_rate",
        "pass_rate_lo",
        "pass_rate_hi",
        "total_score",
        "total_max_score",
        "overall_rate",
        "overall_rate_lo",
        "overall_rate_hi",
        "total_tool_calls",
        "tool_calls_ok",
        "tool_calls_error",
        "tool_calls_unknown",
        "tool_call_success_rate",
        "tool_call_success_rate_lo",
        "tool_call_success_rate_hi",
        "total_turns",
        "avg_turns_per_task",
        "avg_tool_calls_per_task",
        "natural_stop_rate",
        "total_input_tokens",
        "total_output_tokens",
        "total_duration_ms",
        "avg_duration_ms",
        "cost_usd",
        "recorded_cost_usd",
        "priced_cost_usd",
        "judge_cost_usd",
        *LAYER_COLUMNS,
    ).collect()
