"""Spec 002's evaluation layers of a run, reported independently (no invented composite).

One row per run, from the ``tasks`` table's scenario columns. A run's *attempts* are
all its task rows, errored ones included (counted as not passed):

- ``outcome_pass_rate`` = attempts whose ``outcome`` is pass and that did not error /
  attempts (spec 002: every gate passed and, when enabled, the judge passed).
- ``gate_pass_rate`` = attempts whose every gate passed (``gates_passed ==
  gates_total``; none configured passes) and that did not error / attempts: the gate
  layer's own pass/fail. ``gates_passed`` / ``gates_total`` sum the single gates
  (their ratio is the run's overall rate, since a scenario task's score is its gates).
- ``judge_score_mean`` = mean ``judge_score`` over the ``judge_scored`` attempts that
  have one (a failed judge gives none; its attempt fails by outcome).
- ``composite_score_mean`` = mean ``composite_score`` over the attempts that have one:
  null unless a scenario configures ``evaluation.composite``.

Every column is null for a run without any scenario evaluation (bash tasks, imports).

Example:
    >>> from evalnb.records import RunMeta, ScenarioResult, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> def rec(i, outcome, passed, total, judge):
    ...     return TaskRecord(task=Task(id=f"s{i}", category="c", prompt="p"),
    ...         score=TaskScore(task_id=f"s{i}", score=passed, max_score=total),
    ...         scenario=ScenarioResult(outcome=outcome, gates_passed=passed,
    ...                                 gates_total=total, judge_score=judge))
    >>> recs = [rec(1, "pass", 2, 2, 0.9), rec(2, "fail", 2, 2, 0.4), rec(3, "fail", 1, 2, 0.8)]
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), recs))
    >>> row = scenario_layers(runs).collect().row(0, named=True)
    >>> row["outcome_pass_rate"], row["gate_pass_rate"], row["gates_passed"], row["gates_total"]
    (0.3333333333333333, 0.6666666666666666, 5, 6)
    >>> round(row["judge_score_mean"], 3), row["judge_scored"], row["composite_score_mean"]
    (0.7, 3, None)
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._store.tables import RUN_KEY

LAYER_COLUMNS = [
    "outcome_pass_rate",
    "gate_pass_rate",
    "gates_passed",
    "gates_total",
    "judge_scored",
    "judge_score_mean",
    "composite_score_mean",
]
"""The columns :func:`scenario_layers` adds to a run's summary."""


def scenario_layers(runs: Runs) -> pl.LazyFrame:
    """Per run: outcome pass rate, gate pass rate, gate counts, mean judge score, composite.

    See the module docstring for every definition. Lazy, so that
    :func:`evalnb._analysis.summary.summary` collects it with its other per-run figures.

    Example:
        >>> scenario_layers(Runs.empty()).collect().columns == ["run_id", *LAYER_COLUMNS]
        True
    """
    ok = pl.col("error").is_null()
    evaluated = pl.col("outcome").is_not_null().any()
    gates_ok = (pl.col("gates_passed") == pl.col("gates_total")).fill_null(False) & ok
    outcome_ok = (pl.col("outcome") == "pass").fill_null(False) & ok
    layers = (
        runs.scan("tasks")
        .group_by(RUN_KEY)
        .agg(
            pl.when(evaluated).then(outcome_ok.mean()).alias("outcome_pass_rate"),
            pl.when(evaluated).then(gates_ok.mean()).alias("gate_pass_rate"),
            pl.when(evaluated).then(pl.col("gates_passed").sum()).alias("gates_passed"),
            pl.when(evaluated).then(pl.col("gates_total").sum()).alias("gates_total"),
            pl.when(evaluated).then(pl.col("judge_score").count()).alias("judge_scored"),
            pl.col("judge_score").mean().alias("judge_score_mean"),
            pl.col("composite_score").mean().alias("composite_score_mean"),
        )
        .with_columns(
            pl.col("gates_passed", "gates_total", "judge_scored").cast(pl.Int64),
            pl.col("outcome_pass_rate", "gate_pass_rate").cast(pl.Float64),
        )
    )
    return (
        runs.runs.lazy()
        .select("run_id", "run_key")
        .join(layers, on="run_key", how="inner", maintain_order="left")
        .select("run_id", *LAYER_COLUMNS)
    )
