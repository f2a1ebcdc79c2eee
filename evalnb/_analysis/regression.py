"""Regressions between two runs: the tasks that flipped, and a gate for CI.

- :func:`task_diff`: the shared tasks whose verdict differs between run A (the
  baseline) and run B: pass→fail first (regressions), then fail→pass, each with the
  checks that failed on either side. A run passes a task when it passed a strict
  majority of its attempts there (as :func:`evalnb._analysis.diagnostics.diagnose`
  decides; a tie is a fail), errored attempts counting as failed.
- :func:`regression_gate`: B is significantly worse than A on a metric of
  :func:`evalnb._analysis.compare.compare` when ``A - B > 0`` and its Holm-adjusted
  p-value, over the metrics named, is at most ``alpha``. ``evalnb compare A B
  --fail-on-regression`` exits 1 then. For the gate an errored attempt is a failed
  attempt, as spec 000's run summary counts it (``total_passed`` counts only attempts
  that passed): a run whose attempts mostly errored is worse, not smaller. So the gate
  reads a comparison made with ``include_errored=True``, and refuses one that left
  errored attempts out.

Example:
    >>> sorted(GATE_METRICS)
    ['pass_rate', 'weighted_rate']
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalnb._analysis.compare import resolve_run
from evalnb._analysis.comparison import Comparison
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import holm
from evalnb._analysis.verdicts import PASSED

GATE_METRICS = {"pass_rate": ("diff", "p"), "weighted_rate": ("rate_diff", "rate_p")}
"""The metrics the gate can watch: ``{name: (Comparison's A - B field, its p field)}``;
``weighted_rate`` is Σscore / Σmax_score, the reports' overall rate."""

FLIPS = ("pass→fail", "fail→pass")
"""The values of :func:`task_diff`'s ``flip``, in the order the rows come."""


def task_diff(runs: Runs, a: str, b: str) -> pl.DataFrame:
    """The tasks of runs ``a`` and ``b`` (run ids, or models used by one run) that flipped.

    A run passes a task when it passed a strict majority of its attempts there (a tie is
    a fail, an errored attempt counts as failed: see the module docstring).

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    a : str
        Run A, the baseline: a run_id, or a model name used by one run only.
    b : str
        Run B, the same way.

    Returns
    -------
    DataFrame
        One row per shared task whose verdict differs, columns ``task_id``, ``category``,
        ``flip`` (:data:`FLIPS`), ``passed_a``/``attempts_a``, ``passed_b``/``attempts_b``
        and ``failed_checks_a``/``failed_checks_b`` (the distinct checks that failed in
        any of that run's attempts at the task, sorted, with ``error: ...`` for an errored
        attempt); pass→fail rows first.

    Raises
    ------
    ValueError
        A name that matches no run or a model several runs used.

    See Also
    --------
    compare : The two runs compared on every shared task.
    regression_gate : Whether B is significantly worse than A.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> diff = task_diff(example_runs(), "careful", "hasty")
    >>> diff.select("task_id", "flip", "passed_a", "attempts_a", "passed_b", "attempts_b")
    shape: (2, 6)
    ┌───────────────────┬───────────┬──────────┬────────────┬──────────┬────────────┐
    │ task_id           ┆ flip      ┆ passed_a ┆ attempts_a ┆ passed_b ┆ attempts_b │
    │ ---               ┆ ---       ┆ ---      ┆ ---        ┆ ---      ┆ ---        │
    │ str               ┆ str       ┆ i64      ┆ i64        ┆ i64      ┆ i64        │
    ╞═══════════════════╪═══════════╪══════════╪════════════╪══════════╪════════════╡
    │ smoke_count_words ┆ pass→fail ┆ 2        ┆ 2          ┆ 1        ┆ 2          │
    │ smoke_jq_fields   ┆ pass→fail ┆ 2        ┆ 2          ┆ 0        ┆ 2          │
    └───────────────────┴───────────┴──────────┴────────────┴──────────┴────────────┘
    >>> sorted(check.split(":")[0] for check in diff.get_column("failed_checks_b")[0])
    ['exit_code', 'file_line_regex', 'stdout_regex']

    Built by hand, one attempt per task:

    >>> from evalnb.records import RunMeta, ScoreResult, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> def run(name, oks):
    ...     recs = [TaskRecord(task=Task(id=f"t{i}", category="c", prompt="p"),
    ...         score=TaskScore(task_id=f"t{i}", score=ok, max_score=1,
    ...             results=[ScoreResult(check="exit_code:0", passed=ok)]))
    ...         for i, ok in enumerate(oks)]
    ...     return Runs(**tables_from_records(RunMeta(run_id=name, provider="p",
    ...         model=name), recs))
    >>> diff = task_diff(Runs.concat([run("x", [1, 0, 1]), run("y", [0, 1, 1])]), "x", "y")
    >>> diff.select("task_id", "flip", "failed_checks_b").rows()
    [('t0', 'pass→fail', ['exit_code:0']), ('t1', 'fail→pass', [])]
    """
    run_a, _ = resolve_run(runs, a)
    run_b, _ = resolve_run(runs, b)
    ids = pl.Series([run_a, run_b], dtype=pl.Utf8).implode()
    tasks = runs.scan("tasks").filter(pl.col("run_id").is_in(ids))
    verdicts = tasks.group_by("run_id", "task_id").agg(
        pl.col("category").first(),
        PASSED.sum().cast(pl.Int64).alias("passed"),
        pl.len().cast(pl.Int64).alias("attempts"),
    )
    failed = pl.concat(
        [
            runs.scan("checks")
            .filter(pl.col("run_id").is_in(ids) & ~pl.col("passed").fill_null(False))
            .select("run_id", "task_id", pl.col("check").alias("why")),
            tasks.filter(pl.col("error").is_not_null()).select(
                "run_id", "task_id", pl.format("error: {}", "error").alias("why")
            ),
        ]
    )
    why = failed.group_by("run_id", "task_id").agg(pl.col("why").unique().sort())
    per_run = verdicts.join(why, on=["run_id", "task_id"], how="left").collect()

    def side(run_id: str, suffix: str) -> pl.DataFrame:
        return per_run.filter(run_id=run_id).select(
            "task_id",
            "category",
            pl.col("passed").alias(f"passed{suffix}"),
            pl.col("attempts").alias(f"attempts{suffix}"),
            pl.col("why").fill_null([]).alias(f"failed_checks{suffix}"),
        )

    won_a = pl.col("passed_a") * 2 > pl.col("attempts_a")
    won_b = pl.col("passed_b") * 2 > pl.col("attempts_b")
    return (
        side(run_a, "_a")
        .join(side(run_b, "_b").drop("category"), on="task_id")
        .filter(won_a != won_b)
        .with_columns(
            pl.when(won_a).then(pl.lit(FLIPS[0])).otherwise(pl.lit(FLIPS[1])).alias("flip")
        )
        .sort(pl.col("flip") != FLIPS[0], "task_id")
        .select(
            "task_id",
            "category",
            "flip",
            "passed_a",
            "attempts_a",
            "passed_b",
            "attempts_b",
            "failed_checks_a",
            "failed_checks_b",
        )
    )


def regression_gate(
    comparison: Comparison, metrics: Sequence[str] = ("pass_rate",), alpha: float = 0.05
) -> pl.DataFrame:
    """One row per metric named: is run B significantly worse than run A?

    A metric regressed when ``diff > 0`` and ``p_holm <= alpha``. A metric without a
    value (a weighted rate without scores) never regresses. ``evalnb compare A B
    --fail-on-regression`` exits 1 when a metric regressed.

    Parameters
    ----------
    comparison : Comparison
        Runs A (the baseline) and B compared, from :func:`compare` with
        ``include_errored=True``: the gate counts errored attempts as failed.
    metrics : sequence of str, default ("pass_rate",)
        The metrics to test together, from :data:`GATE_METRICS` (``"pass_rate"``,
        ``"weighted_rate"``).
    alpha : float, default 0.05
        The significance level, between 0 and 1.

    Returns
    -------
    DataFrame
        Columns ``metric``, ``a``, ``b`` (the values), ``diff`` (A - B), ``p``, ``p_holm``
        (Holm's adjustment over the metrics named: they are tested together) and
        ``regressed``: ``diff > 0`` and ``p_holm <= alpha``.

    Raises
    ------
    ValueError
        A metric not in :data:`GATE_METRICS`, no metric, an ``alpha`` outside (0, 1), or
        a comparison that left errored attempts out (make it with
        ``compare(..., include_errored=True)``: the gate counts them as failed).

    See Also
    --------
    compare : The comparison this reads.
    task_diff : The tasks that flipped.

    Examples
    --------
    Three shared tasks are too few for a difference of 0.5 to be significant:

    >>> import polars as pl
    >>> from evalnb._analysis.compare import compare
    >>> from evalnb._examples import example_runs
    >>> gate = regression_gate(
    ...     compare(example_runs(), "careful", "hasty", include_errored=True),
    ...     metrics=["pass_rate", "weighted_rate"],
    ... )
    >>> gate.with_columns(pl.col(pl.Float64).round(3))
    shape: (2, 7)
    ┌───────────────┬─────┬───────┬───────┬─────┬────────┬───────────┐
    │ metric        ┆ a   ┆ b     ┆ diff  ┆ p   ┆ p_holm ┆ regressed │
    │ ---           ┆ --- ┆ ---   ┆ ---   ┆ --- ┆ ---    ┆ ---       │
    │ str           ┆ f64 ┆ f64   ┆ f64   ┆ f64 ┆ f64    ┆ bool      │
    ╞═══════════════╪═════╪═══════╪═══════╪═════╪════════╪═══════════╡
    │ pass_rate     ┆ 1.0 ┆ 0.5   ┆ 0.5   ┆ 0.5 ┆ 1.0    ┆ false     │
    │ weighted_rate ┆ 1.0 ┆ 0.667 ┆ 0.333 ┆ 0.5 ┆ 1.0    ┆ false     │
    └───────────────┴─────┴───────┴───────┴─────┴────────┴───────────┘

    Eight tasks that all flipped are:

    >>> from evalnb.records import RunMeta, ScoreResult, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> def run(name, oks):
    ...     recs = [TaskRecord(task=Task(id=f"t{i}", category="c", prompt="p"),
    ...         score=TaskScore(task_id=f"t{i}", score=ok, max_score=1,
    ...             results=[ScoreResult(check="exit_code:0", passed=ok)]))
    ...         for i, ok in enumerate(oks)]
    ...     return Runs(**tables_from_records(RunMeta(run_id=name, provider="p",
    ...         model=name), recs))
    >>> runs = Runs.concat([run("base", [1] * 8), run("new", [0] * 8)])
    >>> gate = regression_gate(compare(runs, "base", "new", include_errored=True))
    >>> gate.select("metric", "diff", pl.col("p").round(6), "regressed").row(0)
    ('pass_rate', 1.0, 0.007813, True)
    """
    unknown = [m for m in metrics if m not in GATE_METRICS]
    if unknown or not metrics:
        raise ValueError(
            f"unknown metric {', '.join(map(repr, unknown)) or '(none)'}; "
            f"choose from {', '.join(GATE_METRICS)}"
        )
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    left_out = comparison.errored_a + comparison.errored_b
    if left_out:
        raise ValueError(
            f"the comparison left {left_out} errored attempts out; the gate counts them as "
            "failed: compare with include_errored=True"
        )
    values: dict[str, tuple[float | None, float | None]] = {
        "pass_rate": (comparison.pass_rate_a, comparison.pass_rate_b),
        "weighted_rate": (comparison.rate_a, comparison.rate_b),
    }
    names = list(dict.fromkeys(metrics))
    diffs = [getattr(comparison, GATE_METRICS[m][0]) for m in names]
    ps = [getattr(comparison, GATE_METRICS[m][1]) for m in names]
    adjusted = holm(ps)
    return pl.DataFrame(
        {
            "metric": names,
            "a": [values[m][0] for m in names],
            "b": [values[m][1] for m in names],
            "diff": diffs,
            "p": ps,
            "p_holm": adjusted,
            "regressed": [
                d is not None and q is not None and d > 0 and q <= alpha
                for d, q in zip(diffs, adjusted, strict=True)
            ],
        },
        schema={
            "metric": pl.Utf8,
            **dict.fromkeys(["a", "b", "diff", "p", "p_holm"], pl.Float64),
            "regressed": pl.Boolean,
        },
    )
