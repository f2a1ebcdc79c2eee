"""Flaky tasks: tasks whose attempts disagree (some passed, some not), and each run's consistency.

A task is flaky for a model when, over that model's ``n`` attempts at it (its epochs,
in every run of the model with the same guidance version), ``c`` passed with
``0 < c < n`` (an errored attempt counts as not passed). A run's consistency is the
share of its repeated tasks (``n >= 2`` in the run) whose attempts all agree, with a
95% Wilson interval (one trial per task, so the task is the unit).

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> flaky_tasks(Runs.empty()).columns
    ['model', 'guidance', 'task_id', 'attempts', 'passed', 'pass_share', 'runs']
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.pass_at_k import task_passes
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import wilson
from evalnb._analysis.verdicts import PASSED

FLAKY = (pl.col("c") > 0) & (pl.col("c") < pl.col("n"))
"""Of :func:`~evalnb._analysis.pass_at_k.task_passes`' rows: some attempts passed, some not."""


def flaky_tasks(runs: Runs) -> pl.DataFrame:
    """Flaky tasks: one row per (model, guidance, task) whose attempts disagree.

    A task is flaky for a model when, over that model's attempts at it (its epochs, in
    every run of the model with the same guidance version), some passed and some did not
    (see the module docstring; an errored attempt counts as not passed).

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.

    Returns
    -------
    DataFrame
        One row per (model, guidance, flaky task): ``model``, ``guidance``, ``task_id``,
        ``attempts`` and ``passed`` over the model's runs with that guidance (``guidance``
        null: none), ``pass_share`` and ``runs`` (how many runs attempted it); by model,
        then the tasks nearest a coin flip first.

    Raises
    ------
    TypeError
        ``runs`` is not a :class:`Runs`.

    See Also
    --------
    consistency : Each run's share of repeated tasks whose attempts agree.
    epoch_variance : Per (run, task) stability across epochs.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> flaky_tasks(example_runs()).drop("guidance")
    shape: (1, 6)
    ┌───────────┬───────────────────┬──────────┬────────┬────────────┬──────┐
    │ model     ┆ task_id           ┆ attempts ┆ passed ┆ pass_share ┆ runs │
    │ ---       ┆ ---               ┆ ---      ┆ ---    ┆ ---        ┆ ---  │
    │ str       ┆ str               ┆ i64      ┆ i64    ┆ f64        ┆ i64  │
    ╞═══════════╪═══════════════════╪══════════╪════════╪════════════╪══════╡
    │ sim/hasty ┆ smoke_count_words ┆ 2        ┆ 1      ┆ 0.5        ┆ 1    │
    └───────────┴───────────────────┴──────────┴────────┴────────────┴──────┘

    Three attempts at task ``a``, one passed; both at ``b`` passed:

    >>> from evalnb.records import RunMeta, ScoreResult, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> recs = [TaskRecord(task=Task(id=t, category="c", prompt="p"), epoch=e + 1,
    ...     score=TaskScore(task_id=t, score=ok, max_score=1,
    ...         results=[ScoreResult(check="exit_code:0", passed=ok)]))
    ...     for t, oks in (("a", [1, 0, 0]), ("b", [1, 1])) for e, ok in enumerate(oks)]
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), recs))
    >>> flaky_tasks(runs).select("task_id", "attempts", "passed").rows()
    [('a', 3, 1)]
    """
    guidance = runs.runs.select("run_id", "guidance")
    return (
        task_passes(runs)
        .join(guidance, on="run_id", how="left")
        .group_by("model", "guidance", "task_id")
        .agg(pl.col("n").sum(), pl.col("c").sum(), pl.len().cast(pl.Int64).alias("runs"))
        .filter(FLAKY)
        .rename({"n": "attempts", "c": "passed"})
        .with_columns((pl.col("passed") / pl.col("attempts")).alias("pass_share"))
        .sort("model", "guidance", (pl.col("pass_share") - 0.5).abs(), "task_id")
        .select("model", "guidance", "task_id", "attempts", "passed", "pass_share", "runs")
    )


def consistency(runs: Runs) -> pl.DataFrame:
    """Each run's consistency: the share of its repeated tasks whose attempts all agree.

    A task is repeated in a run when the run attempted it at least twice; it is flaky
    when some of those attempts passed and some did not. The interval is a 95% Wilson
    interval with one trial per task (see the module docstring).

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.

    Returns
    -------
    DataFrame
        One row per run, in the order of ``runs.runs``: ``run_id``, ``model``,
        ``repeated_tasks`` (attempted at least twice), ``flaky_tasks`` among them, and
        ``consistency`` = the share of repeated tasks whose attempts all agree, with its
        Wilson interval ``consistency_lo``/``consistency_hi`` (null without a repeated
        task).

    Raises
    ------
    TypeError
        ``runs`` is not a :class:`Runs`.

    See Also
    --------
    flaky_tasks : The tasks whose attempts disagree.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = consistency(example_runs())
    >>> out.select("run_id", "repeated_tasks", "flaky_tasks", pl.col("^consistency.*$").round(3))
    shape: (2, 6)
    ┌─────────┬────────────────┬─────────────┬─────────────┬────────────────┬────────────────┐
    │ run_id  ┆ repeated_tasks ┆ flaky_tasks ┆ consistency ┆ consistency_lo ┆ consistency_hi │
    │ ---     ┆ ---            ┆ ---         ┆ ---         ┆ ---            ┆ ---            │
    │ str     ┆ i64            ┆ i64         ┆ f64         ┆ f64            ┆ f64            │
    ╞═════════╪════════════════╪═════════════╪═════════════╪════════════════╪════════════════╡
    │ careful ┆ 3              ┆ 0           ┆ 1.0         ┆ 0.439          ┆ 1.0            │
    │ hasty   ┆ 3              ┆ 1           ┆ 0.667       ┆ 0.208          ┆ 0.939          │
    └─────────┴────────────────┴─────────────┴─────────────┴────────────────┴────────────────┘
    """
    per_run = (
        task_passes(runs)
        .filter(pl.col("n") >= 2)
        .group_by("run_id")
        .agg(
            pl.len().cast(pl.Int64).alias("repeated_tasks"),
            FLAKY.sum().cast(pl.Int64).alias("flaky_tasks"),
        )
    )
    out = (
        runs.runs.select("run_id", "model")
        .join(per_run, on="run_id", how="left", maintain_order="left")
        .with_columns(pl.col("repeated_tasks", "flaky_tasks").fill_null(0))
    )
    limits = [
        wilson(repeated - flaky, repeated)
        for repeated, flaky in out.select("repeated_tasks", "flaky_tasks").iter_rows()
    ]
    return out.with_columns(
        pl.when(pl.col("repeated_tasks") > 0)
        .then(1 - pl.col("flaky_tasks") / pl.col("repeated_tasks"))
        .alias("consistency"),
        pl.Series("consistency_lo", [lo for lo, _ in limits], dtype=pl.Float64),
        pl.Series("consistency_hi", [hi for _, hi in limits], dtype=pl.Float64),
    )


def epoch_variance(runs: Runs) -> pl.DataFrame:
    """Per (run, task): how stable the outcome is across epochs.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.

    Returns
    -------
    DataFrame
        One row per (run, task), sorted by ``run_id`` and ``task_id``: ``run_id``,
        ``model``, ``task_id``, ``epochs`` (attempts), ``passed`` (count), ``pass_share``
        (``passed / epochs``), ``rate_mean`` and ``rate_std`` (sample standard deviation
        of the per-attempt weighted rate; null with a single epoch).

    Raises
    ------
    TypeError
        ``runs`` is not a :class:`Runs`.

    See Also
    --------
    flaky_tasks : The tasks whose attempts disagree, per model.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = epoch_variance(example_runs())
    >>> out.select("run_id", "task_id", "epochs", "passed", pl.col("^rate_.*$").round(3))
    shape: (6, 6)
    ┌─────────┬────────────────────┬────────┬────────┬───────────┬──────────┐
    │ run_id  ┆ task_id            ┆ epochs ┆ passed ┆ rate_mean ┆ rate_std │
    │ ---     ┆ ---                ┆ ---    ┆ ---    ┆ ---       ┆ ---      │
    │ str     ┆ str                ┆ i64    ┆ i64    ┆ f64       ┆ f64      │
    ╞═════════╪════════════════════╪════════╪════════╪═══════════╪══════════╡
    │ careful ┆ smoke_count_words  ┆ 2      ┆ 2      ┆ 1.0       ┆ 0.0      │
    │ careful ┆ smoke_jq_fields    ┆ 2      ┆ 2      ┆ 1.0       ┆ 0.0      │
    │ careful ┆ smoke_make_project ┆ 2      ┆ 2      ┆ 1.0       ┆ 0.0      │
    │ hasty   ┆ smoke_count_words  ┆ 2      ┆ 1      ┆ 0.5       ┆ 0.707    │
    │ hasty   ┆ smoke_jq_fields    ┆ 2      ┆ 0      ┆ 0.5       ┆ 0.236    │
    │ hasty   ┆ smoke_make_project ┆ 2      ┆ 2      ┆ 1.0       ┆ 0.0      │
    └─────────┴────────────────────┴────────┴────────┴───────────┴──────────┘
    """
    return (
        runs.tasks.group_by("run_id", "model", "task_id")
        .agg(
            pl.len().cast(pl.Int64).alias("epochs"),
            PASSED.sum().cast(pl.Int64).alias("passed"),
            PASSED.mean().alias("pass_share"),
            pl.col("rate").mean().alias("rate_mean"),
            pl.col("rate").std().alias("rate_std"),
        )
        .sort("run_id", "task_id")
    )
