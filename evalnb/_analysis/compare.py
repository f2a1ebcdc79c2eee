"""Paired comparisons of runs on the tasks they share: one pair, or every pair, Holm-adjusted.

Example:
    >>> compare_all(Runs.empty()).height
    0
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

import polars as pl

from evalnb._analysis.comparison import Comparison
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import (
    EXACT_MAX,
    FLIP_DRAWS,
    SMALL_N,
    detectable_difference,
    holm,
    mcnemar_exact,
    newcombe_paired_diff,
    paired_rate_diff,
    sign_flip_test,
)
from evalnb._analysis.verdicts import PASSED, known_scores

if TYPE_CHECKING:
    import numpy as np


def resolve_run(runs: Runs, key: str) -> tuple[str, str]:
    """``(run_id, model)`` of the run named by its run_id or by a model name used by one run.

    Raises ValueError listing the candidates when ``key`` matches no run or
    names a model that several runs used.

    Example:
        >>> resolve_run(Runs.empty(), "x")
        Traceback (most recent call last):
        ...
        ValueError: no run 'x'; runs: (none)
    """
    table = runs.runs.select("run_id", "model")
    by_id = table.filter(pl.col("run_id") == key)
    if by_id.height == 0:
        by_id = table.filter(pl.col("model") == key)
    if by_id.height == 1:
        run_id, model = by_id.row(0)
        return run_id, model
    candidates = by_id if by_id.height else table
    listed = ", ".join(f"{r} ({m})" for r, m in candidates.iter_rows()) or "(none)"
    if by_id.height:
        raise ValueError(f"model {key!r} matches {by_id.height} runs; pick a run_id: {listed}")
    raise ValueError(f"no run {key!r}; runs: {listed}")


def compare(runs: Runs, a: str, b: str, *, include_errored: bool = False) -> Comparison:
    """Compare runs ``a`` and ``b`` (run_ids, or model names used by one run each), paired.

    Each task's attempts (epochs) are summed first; only tasks both runs have are
    paired, and the others are counted (see :class:`Comparison`). Errored attempts are
    left out unless ``include_errored`` (then they count as failed).

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    a, b : str
        The two runs: a run_id, or a model name used by one run only.
    include_errored : bool, default False
        Count errored attempts as failed instead of leaving them out.

    Returns
    -------
    Comparison
        The pass rates and weighted rates of both runs on their shared tasks, their
        difference A - B with its interval, p-value and test, and the counts of tasks
        only one run has.

    Raises
    ------
    ValueError
        A name that matches no run or a model several runs used, a run compared with
        itself, or runs that share no task.

    See Also
    --------
    compare_all : Every pair of runs, Holm-adjusted.
    regression_gate : Whether B is significantly worse than A.
    task_diff : The tasks that flipped between two runs.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> c = compare(example_runs(), "careful", "hasty")
    >>> c.tasks, c.pass_rate_a, c.pass_rate_b, c.diff, c.a_higher, c.b_higher, c.p, c.test
    (3, 1.0, 0.5, 0.5, 2, 0, 0.5, 'exact sign-flip')

    With one attempt per task, the test is the exact McNemar test:

    >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore, ScoreResult
    >>> from evalnb._store.tables import tables_from_records
    >>> def run(model, outcomes):
    ...     recs = [TaskRecord(task=Task(id=f"t{i}", category="c", prompt="p"),
    ...         score=TaskScore(task_id=f"t{i}", score=ok, max_score=1,
    ...             results=[ScoreResult(check="exit_code:0", passed=ok)]))
    ...         for i, ok in enumerate(outcomes)]
    ...     return Runs(**tables_from_records(RunMeta(run_id=model, provider="p",
    ...         model=model), recs))
    >>> runs = Runs.concat([run("x", [1, 1, 1, 0]), run("y", [1, 0, 0, 0])])
    >>> c = compare(runs, "x", "y")
    >>> c.diff, c.a_higher, c.b_higher, c.p, c.test
    (0.5, 2, 0, 0.5, 'exact McNemar')
    """
    run_a, model_a = resolve_run(runs, a)
    run_b, model_b = resolve_run(runs, b)
    if run_a == run_b:
        raise ValueError(f"cannot compare run {run_a!r} with itself")
    tasks = _compared_tasks(runs, [run_a, run_b])
    return _compare(
        tasks[run_a], tasks[run_b], run_a, model_a, run_b, model_b, include_errored=include_errored
    )


COMPARED_COLUMNS = [
    "run_id",
    "task_id",
    "category",
    "passed",
    "error",
    "score",
    "max_score",
    "rate",
]
"""The columns of the tasks table a paired comparison reads."""


def _compared_tasks(runs: Runs, run_ids: list[str]) -> dict[str, pl.DataFrame]:
    """:data:`COMPARED_COLUMNS` of the attempts of each of ``run_ids``, read in one scan
    (a run without attempts gets no rows)."""
    tasks = known_scores(
        runs.scan("tasks")
        .select(COMPARED_COLUMNS)
        .filter(pl.col("run_id").is_in(pl.Series(run_ids, dtype=pl.Utf8).implode()))
        .collect()
    )
    parts = {str(k[0]): part for k, part in tasks.partition_by("run_id", as_dict=True).items()}
    return {run_id: parts.get(run_id, tasks.clear()) for run_id in run_ids}


def _compare(
    tasks_a: pl.DataFrame,
    tasks_b: pl.DataFrame,
    run_a: str,
    model_a: str,
    run_b: str,
    model_b: str,
    *,
    include_errored: bool,
) -> Comparison:
    """:func:`compare` on the attempts of each run (from :func:`_compared_tasks`)."""

    def side(mine: pl.DataFrame) -> tuple[pl.DataFrame, set[str]]:
        errored = pl.col("error").is_not_null()
        used = mine if include_errored else mine.filter(~errored)
        per_task = used.group_by("task_id").agg(
            pl.col("category").first(),
            pl.len().cast(pl.Int64).alias("attempts"),
            PASSED.sum().cast(pl.Int64).alias("passes"),
            pl.col("score").fill_null(0).sum().cast(pl.Float64).alias("score"),
            pl.col("max_score").fill_null(0).sum().cast(pl.Float64).alias("max_score"),
            pl.col("score").is_not_null().sum().cast(pl.Int64).alias("scored"),
        )
        return per_task, set(mine.get_column("task_id").to_list())

    side_a, ids_a = side(tasks_a)
    side_b, ids_b = side(tasks_b)
    per_task = (
        side_a.join(side_b.drop("category"), on="task_id", suffix="_b")
        .rename({c: f"{c}_a" for c in ("attempts", "passes", "score", "max_score", "scored")})
        .with_columns(
            (pl.col("passes_a") / pl.col("attempts_a")).alias("pass_share_a"),
            (pl.col("passes_b") / pl.col("attempts_b")).alias("pass_share_b"),
            *(
                pl.when(pl.col(f"scored_{s}") > 0)
                .then(pl.col(f"score_{s}") / pl.col(f"scored_{s}"))
                .alias(f"mean_score_{s}")
                for s in "ab"
            ),
        )
        .with_columns(
            pl.when(pl.col("pass_share_a") > pl.col("pass_share_b"))
            .then(pl.lit("a_higher"))
            .when(pl.col("pass_share_a") < pl.col("pass_share_b"))
            .then(pl.lit("b_higher"))
            .otherwise(pl.lit("tied"))
            .alias("outcome"),
            (pl.col("mean_score_a") - pl.col("mean_score_b")).alias("score_diff"),
        )
        .sort("task_id")
    )
    shared = ids_a & ids_b
    if per_task.height == 0:
        left = " with a non-errored attempt on both sides" if shared else ""
        raise ValueError(f"runs {run_a!r} and {run_b!r} share no task{left}")
    on_shared = pl.col("task_id").is_in(pl.Series(sorted(shared), dtype=pl.Utf8).implode())
    left_out = on_shared & pl.col("error").is_not_null()
    col = per_task.get_column
    one_attempt = bool((col("attempts_a") == 1).all() and (col("attempts_b") == 1).all())
    tally = dict(col("outcome").value_counts().iter_rows())
    a_higher, b_higher, tied = (tally.get(k, 0) for k in ("a_higher", "b_higher", "tied"))
    passes_a, passes_b = int(col("passes_a").sum()), int(col("passes_b").sum())
    attempts_a, attempts_b = int(col("attempts_a").sum()), int(col("attempts_b").sum())
    pass_a, pass_b = passes_a / attempts_a, passes_b / attempts_b
    if one_attempt:
        both = int((col("pass_share_a") * col("pass_share_b")).sum())
        diff_lo, diff_hi = newcombe_paired_diff(both, a_higher, b_higher, tied - both)
        p, test = mcnemar_exact(a_higher, b_higher), "exact McNemar"
    else:
        _, diff_lo, diff_hi = paired_rate_diff(
            col("passes_a").to_numpy(),
            col("attempts_a").to_numpy(),
            col("passes_b").to_numpy(),
            col("attempts_b").to_numpy(),
            counts=True,
        )
        shares = (col("pass_share_a") - col("pass_share_b")).to_numpy()
        p, test = sign_flip_test(shares), _flip_name(shares)
    rate_diff, rate_lo, rate_hi = paired_rate_diff(
        col("score_a").to_numpy(),
        col("max_score_a").to_numpy(),
        col("score_b").to_numpy(),
        col("max_score_b").to_numpy(),
    )
    rated = rate_diff is not None
    return Comparison(
        a=run_a,
        b=run_b,
        model_a=model_a,
        model_b=model_b,
        tasks=per_task.height,
        tasks_only_a=len(ids_a - ids_b),
        tasks_only_b=len(ids_b - ids_a),
        tasks_errored=len(shared) - per_task.height,
        attempts_a=attempts_a,
        attempts_b=attempts_b,
        errored_a=0 if include_errored else tasks_a.filter(left_out).height,
        errored_b=0 if include_errored else tasks_b.filter(left_out).height,
        tasks_unscored=per_task.get_column("score_diff").null_count(),
        include_errored=include_errored,
        a_higher=a_higher,
        b_higher=b_higher,
        tied=tied,
        pass_rate_a=pass_a,
        pass_rate_b=pass_b,
        diff=pass_a - pass_b,
        diff_lo=diff_lo,
        diff_hi=diff_hi,
        p=p,
        test=test,
        rate_a=_share(float(col("score_a").sum()), float(col("max_score_a").sum())),
        rate_b=_share(float(col("score_b").sum()), float(col("max_score_b").sum())),
        rate_diff=rate_diff,
        rate_diff_lo=rate_lo,
        rate_diff_hi=rate_hi,
        rate_p=sign_flip_test(col("score_diff").to_numpy()) if rated else None,
        detectable=detectable_difference(per_task.height, (pass_a + pass_b) / 2)
        if per_task.height < SMALL_N
        else None,
        per_task=per_task,
    )


def _share(num: float, den: float) -> float | None:
    return num / den if den else None


def _flip_name(d: np.ndarray) -> str:
    """The name of the sign-flip test :func:`sign_flip_test` runs on ``d``."""
    if int((d != 0).sum()) <= EXACT_MAX:
        return "exact sign-flip"
    return f"sign-flip ({FLIP_DRAWS:,} draws)"


def compare_all(runs: Runs, run_ids: list[str] | None = None) -> pl.DataFrame:
    """Every pair of runs (``run_ids``, default all) on the same dataset, paired, Holm-adjusted.

    A pair is compared when the runs share at least one task and do not have known,
    different dataset hashes (``dataset_sha256``); a pair whose shared tasks all errored on
    one side is left out.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`load`.
    run_ids : list of str, optional
        The runs to pair, in order (each pair's A is the earlier one); all by default.

    Returns
    -------
    DataFrame
        One row per pair and metric (``pass rate``, ``weighted rate``): ``a``, ``b``,
        ``model_a``, ``model_b``, ``tasks`` (shared), ``tasks_only_a``, ``tasks_only_b``,
        ``errored_a``, ``errored_b``, ``metric``, ``value_a``, ``value_b``, ``diff``
        (A - B), ``diff_lo``, ``diff_hi``, ``p``, ``test``, ``p_holm`` (Holm's adjustment
        over every p-value in the frame, because each is one of several comparisons) and
        ``detectable`` (:attr:`Comparison.detectable`, on both rows of the pair).

    Raises
    ------
    TypeError
        An argument of the wrong type.

    See Also
    --------
    compare : One pair, in full.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> out = compare_all(example_runs())
    >>> out.select("a", "b", "metric", pl.col("value_a", "value_b", "diff", "p_holm").round(3))
    shape: (2, 7)
    ┌─────────┬───────┬───────────────┬─────────┬─────────┬───────┬────────┐
    │ a       ┆ b     ┆ metric        ┆ value_a ┆ value_b ┆ diff  ┆ p_holm │
    │ ---     ┆ ---   ┆ ---           ┆ ---     ┆ ---     ┆ ---   ┆ ---    │
    │ str     ┆ str   ┆ str           ┆ f64     ┆ f64     ┆ f64   ┆ f64    │
    ╞═════════╪═══════╪═══════════════╪═════════╪═════════╪═══════╪════════╡
    │ careful ┆ hasty ┆ pass rate     ┆ 1.0     ┆ 0.5     ┆ 0.5   ┆ 1.0    │
    │ careful ┆ hasty ┆ weighted rate ┆ 1.0     ┆ 0.667   ┆ 0.333 ┆ 1.0    │
    └─────────┴───────┴───────────────┴─────────┴─────────┴───────┴────────┘
    """
    ids = runs.runs.get_column("run_id").to_list() if run_ids is None else run_ids
    info = {r["run_id"]: r for r in runs.runs.iter_rows(named=True)}
    tasks = _compared_tasks(runs, ids)
    task_ids = {run_id: set(part.get_column("task_id").to_list()) for run_id, part in tasks.items()}
    rows: list[dict[str, object]] = []
    p_values: list[float | None] = []
    for a, b in combinations(ids, 2):
        sha_a, sha_b = info[a].get("dataset_sha256"), info[b].get("dataset_sha256")
        if a == b or (sha_a and sha_b and sha_a != sha_b) or not task_ids[a] & task_ids[b]:
            continue
        try:
            c = _compare(
                tasks[a], tasks[b], a, info[a]["model"], b, info[b]["model"], include_errored=False
            )
        except ValueError:  # every shared task errored on one side
            continue
        common = {
            "a": c.a,
            "b": c.b,
            "model_a": c.model_a,
            "model_b": c.model_b,
            "tasks": c.tasks,
            "tasks_only_a": c.tasks_only_a,
            "tasks_only_b": c.tasks_only_b,
            "errored_a": c.errored_a,
            "errored_b": c.errored_b,
            "detectable": c.detectable,
        }
        p_values += [c.p, c.rate_p]
        rows.append(
            common
            | {
                "metric": "pass rate",
                "value_a": c.pass_rate_a,
                "value_b": c.pass_rate_b,
                "diff": c.diff,
                "diff_lo": c.diff_lo,
                "diff_hi": c.diff_hi,
                "p": c.p,
                "test": c.test,
            }
        )
        rows.append(
            common
            | {
                "metric": "weighted rate",
                "value_a": c.rate_a,
                "value_b": c.rate_b,
                "diff": c.rate_diff,
                "diff_lo": c.rate_diff_lo,
                "diff_hi": c.rate_diff_hi,
                "p": c.rate_p,
                "test": "sign-flip",
            }
        )
    adjusted = holm(p_values)
    schema = {
        **dict.fromkeys(["a", "b", "model_a", "model_b"], pl.Utf8),
        **dict.fromkeys(
            ["tasks", "tasks_only_a", "tasks_only_b", "errored_a", "errored_b"], pl.Int64
        ),
        "metric": pl.Utf8,
        **dict.fromkeys(["value_a", "value_b", "diff", "diff_lo", "diff_hi", "p"], pl.Float64),
        "test": pl.Utf8,
        "p_holm": pl.Float64,
        "detectable": pl.Float64,
    }
    return pl.DataFrame(
        [r | {"p_holm": q} for r, q in zip(rows, adjusted, strict=True)], schema=schema
    )
