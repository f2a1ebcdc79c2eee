"""Per-category rates: spec 000's CategorySummary per run and category.

The pass rate and overall rate are :mod:`evalnb._analysis.summary`'s, over one
category's attempts.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> by_category(Runs.empty()).columns[:4]
    ['run_id', 'model', 'category', 'tasks']
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.rates import cluster_sums, interval_of_sums, ratio
from evalnb._analysis.runs import AGGREGATE, Runs
from evalnb._analysis.verdicts import PASSED, SCORED, known_scores
from evalnb._store.tables import RUN_KEY


def by_category(runs: Runs) -> pl.DataFrame:
    """One row per (run, category): spec 000's CategorySummary plus pass rate, with 95% intervals.

    ``rate = score / max_score`` (weighted checks); ``pass_rate = passed / tasks``
    (``tasks`` counts attempts; unscored ones, :data:`SCORED`, are left out of the
    pass rate and counted in ``unscored_tasks``). Both intervals (``rate_lo``/``rate_hi``,
    ``pass_rate_lo``/``pass_rate_hi``) are clustered by task, as in :func:`summary`.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.

    Returns
    -------
    DataFrame
        One row per (run, category): ``run_id``, ``model``, ``category``, ``tasks``,
        ``passed``, ``score``, ``max_score``, ``rate``, ``pass_rate``, their intervals and
        ``unscored_tasks``.

    Raises
    ------
    TypeError
        ``runs`` is not a :class:`Runs`.

    See Also
    --------
    summary : The same rates per run.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = by_category(example_runs())
    >>> out.select("run_id", "category", "tasks", "passed", pl.col("rate", "pass_rate").round(3))
    shape: (6, 6)
    ┌─────────┬─────────────────┬───────┬────────┬──────┬───────────┐
    │ run_id  ┆ category        ┆ tasks ┆ passed ┆ rate ┆ pass_rate │
    │ ---     ┆ ---             ┆ ---   ┆ ---    ┆ ---  ┆ ---       │
    │ str     ┆ str             ┆ i64   ┆ i64    ┆ f64  ┆ f64       │
    ╞═════════╪═════════════════╪═══════╪════════╪══════╪═══════════╡
    │ careful ┆ file_operations ┆ 2     ┆ 2      ┆ 1.0  ┆ 1.0       │
    │ careful ┆ json_processing ┆ 2     ┆ 2      ┆ 1.0  ┆ 1.0       │
    │ careful ┆ text_processing ┆ 2     ┆ 2      ┆ 1.0  ┆ 1.0       │
    │ hasty   ┆ file_operations ┆ 2     ┆ 2      ┆ 1.0  ┆ 1.0       │
    │ hasty   ┆ json_processing ┆ 2     ┆ 0      ┆ 0.5  ┆ 0.0       │
    │ hasty   ┆ text_processing ┆ 2     ┆ 1      ┆ 0.5  ┆ 0.5       │
    └─────────┴─────────────────┴───────┴────────┴──────┴───────────┘
    """
    tasks = known_scores(
        runs.scan("tasks")
        .select(
            "attempt_key", "task_id", "category", "passed", "error", "score", "max_score", "rate"
        )
        .with_columns(RUN_KEY)
    )
    keys = ["run_key", "category"]
    tasks = tasks.with_columns(
        PASSED.cast(pl.Float64).alias("_pass"), SCORED.cast(pl.Float64).alias("_one")
    )
    counts, sums = pl.collect_all(
        [
            tasks.group_by(keys).agg(
                pl.len().cast(pl.Int64).alias("tasks"),
                PASSED.sum().cast(pl.Int64).alias("passed"),
                SCORED.sum().alias("_scored"),
                pl.col("score").sum(),
                pl.col("max_score").sum(),
            ),
            cluster_sums(
                tasks, keys, {"rate": ("score", "max_score"), "pass_rate": ("_pass", "_one")}
            ),
        ],
        engine=AGGREGATE,
    )
    return (
        runs.runs.lazy()
        .select("run_id", "model", "run_key")
        .join(counts.lazy(), on="run_key", how="inner")
        .with_columns(
            ratio("score", "max_score").alias("rate"),
            ratio("passed", "_scored").alias("pass_rate"),
        )
        .join(
            interval_of_sums(sums, keys, "rate", counts=False),
            on=keys,
            how="left",
            nulls_equal=True,
        )
        .join(
            interval_of_sums(sums, keys, "pass_rate", counts=True),
            on=keys,
            how="left",
            nulls_equal=True,
        )
        .with_columns((pl.col("tasks") - pl.col("_scored")).alias("unscored_tasks"))
        .drop("run_key", "_scored")
        .sort("run_id", "category", nulls_last=True)
        .collect()
    )
