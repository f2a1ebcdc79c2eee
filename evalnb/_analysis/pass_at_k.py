"""pass@k and pass^k per run: how often k attempts hold one success, and how often all k pass.

Per task (one run's attempts at it: ``n`` attempts, ``c`` of them passed, an errored
attempt counting as not passed, as in the pass rate):

- pass@k, the unbiased estimator of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)``,
  the chance that at least one of k attempts drawn without replacement passed;
- pass^k (τ-bench, Yao et al. 2024): ``C(c, k) / C(n, k)``, the chance that all k
  passed: reliability.

Each is the mean over the run's tasks with ``n >= k`` (a task with fewer attempts
has no estimate and is left out; ``tasks`` says how many were used). pass@1 =
pass^1 is the mean of the tasks' pass shares, which equals the pass rate when every
task has the same number of attempts.

Interval: 95%, the task as the cluster, like every interval in evalnb: the per-task
values are the clusters of :func:`evalnb._analysis.rates.clustered_interval` (each task
weighs 1) as counts, so the interval is Wilson's at the effective number of tasks,
capped at the number of tasks: a task's value lies in [0, 1], so its variance is at
most that of a pass/fail outcome with the same mean (the Bhatia-Davis inequality), and
the cap keeps the interval from being narrower than that worst case allows. It never
collapses when every task has the same value. Simulated coverage
(``python -m bench.pass_at_k_coverage``, ``bench/PASS_AT_K_COVERAGE.md``): mean 0.975
over 5-60 tasks, 3-10 attempts and task rates near 0, in the middle and near 1; the
cells below 0.93 (lowest 0.881) all have k = n, where each task's value is 0 or 1 and
the interval is the plain Wilson interval, with its known dip near 0 and 1.

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
from evalnb._analysis.verdicts import PASSED

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
    """Per (run, task): ``n`` attempts and ``c`` passed (an errored attempt is not passed).

    Example:
        >>> task_passes(Runs.empty()).columns
        ['run_id', 'model', 'task_id', 'n', 'c']
    """
    return (
        runs.scan("tasks")
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


def pass_at_k(runs: Runs, k: Iterable[int] = (1, 3, 5)) -> pl.DataFrame:
    """One row per (run, k): pass@k and pass^k with 95% task-clustered intervals.

    Columns :data:`COLUMNS`: ``pass_at_k`` (+ ``_lo``/``_hi``), ``pass_hat_k`` (pass^k,
    + ``_lo``/``_hi``) and ``tasks``, the tasks with at least k attempts that the means
    are over; with none, the figures are null. See the module docstring for the
    definitions and the interval.

    Example:
        >>> from evalnb.records import RunMeta, ScoreResult, Task, TaskRecord, TaskScore
        >>> from evalnb._store.tables import tables_from_records
        >>> recs = [TaskRecord(task=Task(id=t, category="c", prompt="p"), epoch=e + 1,
        ...     score=TaskScore(task_id=t, score=ok, max_score=1,
        ...         results=[ScoreResult(check="exit_code:0", passed=ok)]))
        ...     for t, oks in (("a", [1, 0, 0]), ("b", [1, 1, 1])) for e, ok in enumerate(oks)]
        >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), recs))
        >>> out = pass_at_k(runs, k=[1, 2])
        >>> [round(v, 3) for v in out.get_column("pass_at_k")]   # (1/3 + 1) / 2, (2/3 + 1) / 2
        [0.667, 0.833]
        >>> [round(v, 3) for v in out.get_column("pass_hat_k")]  # (1/3 + 1) / 2, (0 + 1) / 2
        [0.667, 0.5]
    """
    ks = sorted(set(k))
    if not ks or ks[0] < 1:
        raise ValueError(f"k must be whole numbers of at least 1, got {list(k)}")
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
                pl.lit(1.0).alias("_one"),
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
    """Per (run, k): the 95% interval of the mean of ``name`` over tasks (module docstring)."""
    return clustered_interval(values, ["run_id", "k"], name, "_one", name, counts=True)
