"""pass@k and pass^k per run: how often k attempts hold one success, and how often all k pass.

Per task (one run's attempts at it that have a verdict: ``n`` attempts, ``c`` of them
passed, an errored attempt counting as not passed and an unscored one left out, as in
the pass rate):

- pass@k, the unbiased estimator of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)``,
  the chance that at least one of k attempts drawn without replacement passed;
- pass^k (τ-bench, Yao et al. 2024): ``C(c, k) / C(n, k)``, the chance that all k
  passed: reliability.

Each is the mean over the run's tasks with ``n >= k`` (a task with fewer attempts
has no estimate and is left out; ``tasks`` says how many were used). pass@1 =
pass^1 is the mean of the tasks' pass shares, which equals the pass rate when every
task has the same number of attempts.

Interval: 95%, the task as the cluster, like every interval in evalnb. For k = 1 it is
the pass rate's own interval over the same attempts: the clusters of
:func:`evalnb._analysis.rates.clustered_interval` are the tasks' passes and attempts
(as counts), each task reweighted to the mean attempts per task so that tasks weigh
alike, as in the mean; when every task has the same attempts that is exactly the
clusters of the pass rate, so pass@1 and the pass rate then agree, interval and all. For
k > 1 the per-task values are the clusters, each task one trial of weight 1 (as counts),
so it is Clopper-Pearson's exact interval of Σvalue successes in as many trials as
tasks: the interval of one pass/fail trial per task. A task's value lies in [0, 1], so
its variance is at most that of a pass/fail trial with the same mean (the Bhatia-Davis
inequality): the interval is exact where k = n (each task's value is 0 or 1) and
conservative where 1 < k < n, and it never collapses when every task has the same value.
Simulated coverage (``python -m bench.pass_at_k_coverage``,
``bench/PASS_AT_K_COVERAGE.md``, 5-60 tasks, 3-10 attempts, task rates near 0, in the
middle and near 1): mean 0.987, no cell below 0.95; at k = 1 0.950 to 0.997 (the pass
rate's interval), where k = n 0.957 to 0.999, and where 1 < k < n 0.992 to 1.000, wider
there than the tasks' spread needs.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> pass_at_k(Runs.empty(), k=[1, 3]).columns[:3]
    ['run_id', 'model', 'k']
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from evalnb._analysis.rates import clustered_interval
from evalnb._analysis.runs import Runs
from evalnb._analysis.verdicts import PASSED, SCORED

COLUMNS = [
    "run_id",
    "model",
    "k",
    "pass_at_k",
    "pass_at_k_lo",
    "pass_at_k_hi",
    "pass_hat_k",
    "pass_hat_k_lo",
    "pass_hat_k_hi",
    "tasks",
]
"""The columns of :func:`pass_at_k`, in order."""


def task_passes(runs: Runs) -> pl.DataFrame:
    """Per (run, task): ``n`` attempts with a verdict and ``c`` passed (an errored attempt
    is not passed; an unscored one, :data:`~evalnb._analysis.metrics.SCORED`, is left out).

    Example:
        >>> task_passes(Runs.empty()).columns
        ['run_id', 'model', 'task_id', 'n', 'c']
    """
    return (
        runs.scan("tasks")
        .filter(SCORED)
        .select("run_id", "model", "task_id", PASSED.alias("_passed"))
        .group_by("run_id", "model", "task_id")
        .agg(pl.len().cast(pl.Int64).alias("n"), pl.col("_passed").sum().cast(pl.Int64).alias("c"))
        .sort("run_id", "task_id")
        .collect()
    )


def estimates(n: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per task, ``(pass@k, pass^k)`` from ``n`` attempts of which ``c`` passed (``n >= k``).

    Example:
        >>> at, hat = estimates(np.array([5, 3]), np.array([2, 3]), 2)
        >>> [round(float(v), 3) for v in at], [round(float(v), 3) for v in hat]
        ([0.7, 1.0], [0.1, 1.0])
    """
    from scipy.special import comb  # scipy loads only when pass@k is computed

    total = comb(n, k, exact=False)
    return 1.0 - comb(n - c, k, exact=False) / total, comb(c, k, exact=False) / total


def pass_at_k(runs: Runs, k: int | Iterable[int] = (1, 3, 5)) -> pl.DataFrame:
    """One row per (run, k): pass@k and pass^k with 95% task-clustered intervals.

    pass@k is the chance that at least one of k attempts at a task passed, pass^k the
    chance that all k did, each the mean over the run's tasks with at least k attempts
    with a verdict. See the module docstring for the definitions and the interval.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    k : int or iterable of int, default (1, 3, 5)
        One whole number or several, each at least 1 (repeats are dropped, the rest
        sorted).

    Returns
    -------
    DataFrame
        Columns :data:`COLUMNS`: ``run_id``, ``model``, ``k``, ``pass_at_k``
        (+ ``_lo``/``_hi``), ``pass_hat_k`` (pass^k, + ``_lo``/``_hi``) and ``tasks``, the
        tasks with at least k attempts that the means are over; with none, the figures
        are null.

    Raises
    ------
    ValueError
        No ``k``, or a ``k`` below 1.

    See Also
    --------
    summary : The pass rate per run (pass@1 when every task has as many attempts).
    flaky_tasks : The tasks whose attempts disagree.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = pass_at_k(example_runs(), k=[1, 2])
    >>> out.select("run_id", "k", pl.col("pass_at_k", "pass_hat_k").round(3), "tasks")
    shape: (4, 5)
    ┌─────────┬─────┬───────────┬────────────┬───────┐
    │ run_id  ┆ k   ┆ pass_at_k ┆ pass_hat_k ┆ tasks │
    │ ---     ┆ --- ┆ ---       ┆ ---        ┆ ---   │
    │ str     ┆ i64 ┆ f64       ┆ f64        ┆ i64   │
    ╞═════════╪═════╪═══════════╪════════════╪═══════╡
    │ careful ┆ 1   ┆ 1.0       ┆ 1.0        ┆ 3     │
    │ careful ┆ 2   ┆ 1.0       ┆ 1.0        ┆ 3     │
    │ hasty   ┆ 1   ┆ 0.5       ┆ 0.5        ┆ 3     │
    │ hasty   ┆ 2   ┆ 0.667     ┆ 0.333      ┆ 3     │
    └─────────┴─────┴───────────┴────────────┴───────┘

    By hand: task ``a`` passed 1 of 3 attempts, task ``b`` all 3.

    >>> from evalnb.records import RunMeta, ScoreResult, Task, TaskRecord, TaskScore
    >>> from evalnb._store.tables import tables_from_records
    >>> recs = [TaskRecord(task=Task(id=t, category="c", prompt="p"), epoch=e + 1,
    ...     score=TaskScore(task_id=t, score=ok, max_score=1,
    ...         results=[ScoreResult(check="exit_code:0", passed=ok)]))
    ...     for t, oks in (("a", [1, 0, 0]), ("b", [1, 1, 1])) for e, ok in enumerate(oks)]
    >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), recs))
    >>> out = pass_at_k(runs, k=[1, 2])
    >>> out.get_column("pass_at_k").round(3).to_list()   # (1/3 + 1) / 2, (2/3 + 1) / 2
    [0.667, 0.833]
    >>> out.get_column("pass_hat_k").round(3).to_list()  # (1/3 + 1) / 2, (0 + 1) / 2
    [0.667, 0.5]
    """
    ks = sorted({k} if isinstance(k, int) else set(k))
    if not ks or ks[0] < 1:
        raise ValueError(f"k must be whole numbers of at least 1, got {ks}")
    per_task = task_passes(runs)
    n, c = per_task.get_column("n").to_numpy(), per_task.get_column("c").to_numpy()
    rows = []
    for kk in ks:
        used = n >= kk
        at, hat = estimates(n[used], c[used], kk)
        rows.append(
            per_task.filter(pl.Series(used)).select(
                "run_id",
                "task_id",
                pl.lit(kk, dtype=pl.Int64).alias("k"),
                pl.Series("pass_at_k", at, dtype=pl.Float64),
                pl.Series("pass_hat_k", hat, dtype=pl.Float64),
                pl.col("n").alias("_attempts"),
            )
        )
    values = pl.concat(rows)
    by = ["run_id", "k"]
    means = values.group_by(by).agg(
        pl.col("pass_at_k").mean(), pl.col("pass_hat_k").mean(), pl.len().alias("tasks")
    )
    grid = runs.runs.select("run_id", "model").join(
        pl.DataFrame({"k": ks}, schema={"k": pl.Int64}), how="cross"
    )
    return (
        grid.join(means, on=by, how="left")
        .join(_interval(values, "pass_at_k"), on=by, how="left")
        .join(_interval(values, "pass_hat_k"), on=by, how="left")
        .with_columns(pl.col("tasks").fill_null(0).cast(pl.Int64))
        .select(COLUMNS)
    )


def _interval(values: pl.DataFrame, name: str) -> pl.DataFrame:
    """Per (run, k): the 95% interval of the mean of ``name`` over tasks (module docstring):
    at k = 1 each task weighs the run's mean attempts per task, else 1."""
    by = ["run_id", "k"]
    weight = pl.when(pl.col("k") == 1).then(pl.col("_attempts").mean().over(by)).otherwise(1.0)
    weighted = values.with_columns(weight.alias("_weight")).with_columns(
        (pl.col(name) * pl.col("_weight")).alias("_weighted")
    )
    return clustered_interval(weighted, by, "_weighted", "_weight", name, counts=True)
