"""Run summaries, per-category rates, epoch variance, context growth and paired comparisons.

Everything is recomputed from the per-task and per-tool-call rows of
:class:`evalnb.analysis.runs.Runs`, never copied from a stored summary, with spec 000's
formulas (micro-averaged: ``overall_rate = sum(score) / sum(max_score)``):

- ``pass_rate = total_passed / total_tasks``; a task passes when every check
  passed and it did not error. Errored tasks count as tasks (not passed).
- ``tool_call_success_rate = tool_calls_ok / total_tool_calls``; ok means exit code 0,
  counted over the rows of the ``tool_calls`` table.
- A rate whose denominator is 0 is null.
- A scenario task's ``score``/``max_score`` are its gates passed / gates total (spec
  002 keeps the judge apart), so a scenario run's ``overall_rate`` is its share of
  gates passed; its layers are reported separately (:mod:`evalnb.analysis.layers`).
- ``natural_stop_rate`` is over the attempts whose ending is known (imported plain
  transcripts do not say how the agent ended: ``natural_stop`` null).

Example:
    >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore, ScoreResult
    >>> from evalnb.store.tables import tables_from_records
    >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"), score=TaskScore(
    ...     task_id="t", results=[ScoreResult(check="exit_code:0", passed=True)],
    ...     score=1, max_score=1))
    >>> meta = RunMeta(run_id="r", provider="reference", model="reference")
    >>> summary(Runs(**tables_from_records(meta, [rec]))).select("pass_rate", "cost_usd").row(0)
    (1.0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

import polars as pl

from evalnb.analysis.cost import Prices, task_cost
from evalnb.analysis.layers import LAYER_COLUMNS, scenario_layers
from evalnb.analysis.runs import Runs
from evalnb.analysis.stats import (
    cluster_bootstrap_rate,
    mcnemar_exact,
    newcombe_paired_diff,
    paired_bootstrap_diff,
    wilson_expr,
)
from evalnb.store.tables import KEYS

PASSED = pl.col("passed").fill_null(False) & pl.col("error").is_null()
"""A task attempt passed: every check passed and it did not error."""

RUN_INFO = ["run_id", "model", "provider", "source", "simulated", "guidance", "started_at"]


def _ratio(num: str, den: str) -> pl.Expr:
    """``num / den``, null where ``den`` is 0."""
    return pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den))


def summary(
    runs: Runs, *, prices: Prices | None = None, n_boot: int = 2000, seed: int = 0
) -> pl.DataFrame:
    """One row per run: spec 000's EvalSummary fields, 95% intervals, stop rate, cost.

    Columns: run identity (:data:`RUN_INFO`); tasks (``total_tasks``,
    ``total_passed``, ``errored_tasks``, ``pass_rate`` + Wilson ``_lo``/``_hi``);
    weighted checks (``total_score``, ``total_max_score``, ``overall_rate`` + a
    task-clustered bootstrap ``_lo``/``_hi`` with ``n_boot`` resamples and ``seed``);
    tool calls (``total_tool_calls``, ``tool_calls_ok``, ``tool_calls_error``,
    ``tool_call_success_rate`` + Wilson ``_lo``/``_hi``); effort (``total_turns``,
    ``avg_turns_per_task``, ``avg_tool_calls_per_task``, ``natural_stop_rate``);
    tokens and time (``total_input_tokens``, ``total_output_tokens``,
    ``total_duration_ms``, ``avg_duration_ms``); ``cost_usd`` (null when any task's
    cost is unknown; ``prices`` defaults to the packaged price table); spec 002's
    layers for scenario runs (:data:`~evalnb.analysis.layers.LAYER_COLUMNS`, null
    for other runs).

    Example:
        >>> summary(Runs.empty()).height
        0
    """
    tasks = runs.tasks
    per_task = tasks.group_by("run_id").agg(
        pl.len().alias("total_tasks"),
        PASSED.sum().alias("total_passed"),
        pl.col("error").is_not_null().sum().alias("errored_tasks"),
        pl.col("score").sum().alias("total_score"),
        pl.col("max_score").sum().alias("total_max_score"),
        pl.col("turns").sum().alias("total_turns"),
        pl.col("total_input_tokens").sum(),
        pl.col("total_output_tokens").sum(),
        pl.col("duration_ms").sum().alias("total_duration_ms"),
        pl.col("natural_stop").mean().alias("natural_stop_rate"),
    )
    per_call = runs.tool_calls.group_by("run_id").agg(
        pl.len().alias("total_tool_calls"),
        (pl.col("exit_code") == 0).sum().alias("tool_calls_ok"),
    )
    counts = [
        "total_tasks",
        "total_passed",
        "errored_tasks",
        "total_turns",
        "total_input_tokens",
        "total_output_tokens",
        "total_tool_calls",
        "tool_calls_ok",
    ]
    totals = ["total_score", "total_max_score", "total_duration_ms"]
    pass_lo, pass_hi = wilson_expr("total_passed", "total_tasks")
    tool_lo, tool_hi = wilson_expr("tool_calls_ok", "total_tool_calls")
    out = (
        runs.runs.select(RUN_INFO)
        .join(per_task, on="run_id", how="left")
        .join(per_call, on="run_id", how="left")
        .with_columns(pl.col(counts).fill_null(0).cast(pl.Int64), pl.col(totals).fill_null(0.0))
        .with_columns(
            (pl.col("total_tool_calls") - pl.col("tool_calls_ok")).alias("tool_calls_error"),
            _ratio("total_passed", "total_tasks").alias("pass_rate"),
            pass_lo.alias("pass_rate_lo"),
            pass_hi.alias("pass_rate_hi"),
            _ratio("total_score", "total_max_score").alias("overall_rate"),
            _ratio("tool_calls_ok", "total_tool_calls").alias("tool_call_success_rate"),
            tool_lo.alias("tool_call_success_rate_lo"),
            tool_hi.alias("tool_call_success_rate_hi"),
            _ratio("total_turns", "total_tasks").alias("avg_turns_per_task"),
            _ratio("total_tool_calls", "total_tasks").alias("avg_tool_calls_per_task"),
            _ratio("total_duration_ms", "total_tasks").alias("avg_duration_ms"),
        )
        .join(_overall_rate_intervals(tasks, n_boot, seed), on="run_id", how="left")
        .join(_run_costs(runs, prices), on="run_id", how="left")
        .join(scenario_layers(runs), on="run_id", how="left")
    )
    return out.select(
        *RUN_INFO,
        "total_tasks",
        "total_passed",
        "errored_tasks",
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
        *LAYER_COLUMNS,
    )


def _overall_rate_intervals(tasks: pl.DataFrame, n_boot: int, seed: int) -> pl.DataFrame:
    """Per run: bootstrap interval of overall_rate, resampling tasks (epochs kept together)."""
    clusters = tasks.group_by("run_id", "task_id").agg(
        pl.col("score").fill_null(0.0).sum(), pl.col("max_score").fill_null(0.0).sum()
    )
    rows = []
    for (run_id,), part in clusters.partition_by("run_id", as_dict=True).items():
        lo, hi = cluster_bootstrap_rate(
            part.get_column("score").to_numpy(),
            part.get_column("max_score").to_numpy(),
            n_boot=n_boot,
            seed=seed,
        )
        rows.append((run_id, lo, hi))
    return pl.DataFrame(
        rows,
        schema={"run_id": pl.Utf8, "overall_rate_lo": pl.Float64, "overall_rate_hi": pl.Float64},
        orient="row",
    )


def _run_costs(runs: Runs, prices: Prices | None) -> pl.DataFrame:
    """Per run: total cost in USD, null when any task's cost is unknown."""
    return (
        task_cost(runs, prices)
        .group_by("run_id")
        .agg(
            pl.when(pl.col("cost_usd").null_count() == 0)
            .then(pl.col("cost_usd").sum())
            .alias("cost_usd")
        )
    )


def by_category(runs: Runs) -> pl.DataFrame:
    """One row per (run, category): spec 000's CategorySummary plus pass rate with Wilson 95%.

    ``rate = score / max_score`` (weighted checks); ``pass_rate = passed / tasks``.

    Example:
        >>> by_category(Runs.empty()).columns[:4]
        ['run_id', 'model', 'category', 'tasks']
    """
    lo, hi = wilson_expr("passed", "tasks")
    return (
        runs.tasks.group_by("run_id", "model", "category")
        .agg(
            pl.len().cast(pl.Int64).alias("tasks"),
            PASSED.sum().cast(pl.Int64).alias("passed"),
            pl.col("score").sum(),
            pl.col("max_score").sum(),
        )
        .with_columns(
            _ratio("score", "max_score").alias("rate"),
            _ratio("passed", "tasks").alias("pass_rate"),
            lo.alias("pass_rate_lo"),
            hi.alias("pass_rate_hi"),
        )
        .sort("run_id", "category", nulls_last=True)
    )


def epoch_variance(runs: Runs) -> pl.DataFrame:
    """Per (run, task): how stable the outcome is across epochs.

    Columns: ``epochs`` (attempts), ``passed`` (count), ``pass_share``
    (``passed / epochs``), ``rate_mean`` and ``rate_std`` (sample standard deviation
    of the per-attempt weighted rate; null with a single epoch).

    Example:
        >>> epoch_variance(Runs.empty()).columns
        ['run_id', 'model', 'task_id', 'epochs', 'passed', 'pass_share', 'rate_mean', 'rate_std']
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


def context_growth(runs: Runs, by: Literal["task", "run", "model"] = "task") -> pl.DataFrame:
    """Spec 003 context growth per task attempt, or aggregated per run or per model.

    Per task: ``calls`` (LLM calls recorded), ``has_call_tokens`` (whether the
    calls carry input token counts; bashkit-eval result files do not),
    ``base_context`` (call 1's input tokens), ``context_growth_avg``
    (``(input[N] - input[1]) / (N - 1)``, 0 for one call, may be negative) and
    ``final_cumulative_input`` (the sum of input tokens over the calls). The growth
    figures are the tasks table's own (:func:`evalnb.store.tables.with_context_growth`);
    all three are null without per-call tokens.

    Per run (``run_id``, ``model``) or per ``model``: ``tasks``,
    ``share_with_call_tokens``, ``calls_mean`` and the mean and median of the three
    token figures over the tasks that have them.

    Example:
        >>> context_growth(Runs.empty(), by="model").columns[:3]
        ['model', 'tasks', 'share_with_call_tokens']
    """
    tokens = pl.col("input_tokens")
    calls = runs.llm_calls.group_by(KEYS).agg(
        pl.len().cast(pl.Int64).alias("calls"),
        pl.when(tokens.is_not_null().any()).then(tokens.sum()).alias("final_cumulative_input"),
    )
    per_task = (
        runs.tasks.select(*KEYS, "base_context", "context_growth_avg")
        .join(calls, on=KEYS, how="left", nulls_equal=True)
        .with_columns(
            pl.col("calls").fill_null(0),
            pl.col("base_context").is_not_null().alias("has_call_tokens"),
        )
        .select(
            *KEYS,
            "calls",
            "has_call_tokens",
            "base_context",
            "context_growth_avg",
            "final_cumulative_input",
        )
    )
    if by == "task":
        return per_task.sort(KEYS)
    keys = {"run": ["run_id", "model"], "model": ["model"]}.get(by)
    if keys is None:
        raise ValueError(f"by must be 'task', 'run' or 'model', got {by!r}")
    figures = ["base_context", "context_growth_avg", "final_cumulative_input"]
    return (
        per_task.group_by(keys)
        .agg(
            pl.len().cast(pl.Int64).alias("tasks"),
            pl.col("has_call_tokens").mean().alias("share_with_call_tokens"),
            pl.col("calls").mean().alias("calls_mean"),
            *[pl.col(f).mean().alias(f"{f}_mean") for f in figures],
            *[pl.col(f).median().alias(f"{f}_median") for f in figures],
        )
        .sort(keys)
    )


@dataclass
class Comparison:
    """Two runs compared on the task attempts they share, ``(task_id, epoch)``.

    Pass rates: counts of the 2x2 table (``both_passed``, ``only_a``, ``only_b``,
    ``neither``), ``diff = pass_rate_a - pass_rate_b`` with Newcombe's paired 95%
    interval and the exact McNemar p-value. Weighted rates: ``rate_a``/``rate_b``
    are means of per-task rates (epochs averaged per task; tasks without checks
    left out) and ``rate_diff`` their paired difference with a bootstrap 95%
    interval and p-value, resampling tasks. ``per_task`` has one row per shared
    attempt.
    """

    a: str
    b: str
    model_a: str
    model_b: str
    n_shared: int
    both_passed: int
    only_a: int
    only_b: int
    neither: int
    pass_rate_a: float
    pass_rate_b: float
    diff: float
    diff_lo: float | None
    diff_hi: float | None
    mcnemar_p: float
    rate_tasks: int
    rate_a: float | None
    rate_b: float | None
    rate_diff: float | None
    rate_diff_lo: float | None
    rate_diff_hi: float | None
    rate_diff_p: float | None
    per_task: pl.DataFrame

    def as_frame(self) -> pl.DataFrame:
        """The figures (all but ``per_task``) as a one-row DataFrame.

        Example:
            >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
            >>> from evalnb.store.tables import tables_from_records
            >>> recs = [TaskRecord(task=Task(id="t", category="c", prompt="p"),
            ...     score=TaskScore(task_id="t", score=1, max_score=1))]
            >>> runs = Runs.concat([Runs(**tables_from_records(
            ...     RunMeta(run_id=r, provider="p", model=r), recs)) for r in ("x", "y")])
            >>> compare(runs, "x", "y").as_frame().select("n_shared", "diff", "mcnemar_p").row(0)
            (1, 0.0, 1.0)
        """
        return pl.DataFrame(
            [{f.name: getattr(self, f.name) for f in fields(self) if f.name != "per_task"}]
        )

    def __str__(self) -> str:
        pass_line = (
            f"pass rate     {self.pass_rate_a:.3f} vs {self.pass_rate_b:.3f}  "
            f"diff {self.diff:+.3f} {_ci(self.diff_lo, self.diff_hi)}  "
            f"McNemar exact p = {self.mcnemar_p:.3g} "
            f"(only A passed {self.only_a}, only B passed {self.only_b})"
        )
        rate_line = (
            f"weighted rate {_num(self.rate_a)} vs {_num(self.rate_b)}  "
            f"diff {_num(self.rate_diff, '+.3f')} {_ci(self.rate_diff_lo, self.rate_diff_hi)}  "
            f"bootstrap p = {_num(self.rate_diff_p, '.3g')} ({self.rate_tasks} tasks)"
        )
        head = (
            f"A = {self.model_a} ({self.a}) vs B = {self.model_b} ({self.b}): "
            f"{self.n_shared} shared task attempts"
        )
        return "\n".join([head, pass_line, rate_line])

    def _repr_markdown_(self) -> str:
        return "\n".join(
            [
                f"**A** = `{self.model_a}` ({self.a}), **B** = `{self.model_b}` ({self.b}); "
                f"{self.n_shared} shared task attempts",
                "",
                "| metric | A | B | A − B | 95% CI | p |",
                "|---|---|---|---|---|---|",
                f"| pass rate | {self.pass_rate_a:.3f} | {self.pass_rate_b:.3f} | "
                f"{self.diff:+.3f} | {_ci(self.diff_lo, self.diff_hi)} | "
                f"{self.mcnemar_p:.3g} (exact McNemar) |",
                f"| weighted rate | {_num(self.rate_a)} | {_num(self.rate_b)} | "
                f"{_num(self.rate_diff, '+.3f')} | {_ci(self.rate_diff_lo, self.rate_diff_hi)} | "
                f"{_num(self.rate_diff_p, '.3g')} (paired bootstrap) |",
                "",
                f"Only A passed {self.only_a}, only B passed {self.only_b}, "
                f"both {self.both_passed}, neither {self.neither}.",
            ]
        )


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _ci(lo: float | None, hi: float | None) -> str:
    return "[n/a]" if lo is None or hi is None else f"[{lo:+.3f}, {hi:+.3f}]"


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


def compare(runs: Runs, a: str, b: str, *, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Compare runs ``a`` and ``b`` (run_ids, or model names used by one run each), paired.

    Only the ``(task_id, epoch)`` attempts both runs have are used. See
    :class:`Comparison` for the figures.

    Example:
        >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore, ScoreResult
        >>> from evalnb.store.tables import tables_from_records
        >>> def run(model, outcomes):
        ...     recs = [TaskRecord(task=Task(id=f"t{i}", category="c", prompt="p"),
        ...         score=TaskScore(task_id=f"t{i}", score=ok, max_score=1,
        ...             results=[ScoreResult(check="exit_code:0", passed=ok)]))
        ...         for i, ok in enumerate(outcomes)]
        ...     return Runs(**tables_from_records(RunMeta(run_id=model, provider="p",
        ...         model=model), recs))
        >>> runs = Runs.concat([run("x", [1, 1, 1, 0]), run("y", [1, 0, 0, 0])])
        >>> c = compare(runs, "x", "y")
        >>> c.diff, c.only_a, c.only_b, c.mcnemar_p
        (0.5, 2, 0, 0.5)
    """
    run_a, model_a = resolve_run(runs, a)
    run_b, model_b = resolve_run(runs, b)

    def side(run_id: str) -> pl.DataFrame:
        return runs.tasks.filter(pl.col("run_id") == run_id).select(
            "task_id", "epoch", "category", PASSED.alias("passed"), "rate"
        )

    per_task = (
        side(run_a)
        .join(side(run_b).drop("category"), on=["task_id", "epoch"], suffix="_b")
        .rename({"passed": "passed_a", "rate": "rate_a"})
        .with_columns(
            pl.when(pl.col("passed_a") & pl.col("passed_b"))
            .then(pl.lit("both"))
            .when(pl.col("passed_a"))
            .then(pl.lit("only_a"))
            .when(pl.col("passed_b"))
            .then(pl.lit("only_b"))
            .otherwise(pl.lit("neither"))
            .alias("outcome"),
            (pl.col("rate_a") - pl.col("rate_b")).alias("rate_diff"),
        )
        .sort("task_id", "epoch")
    )
    if per_task.height == 0:
        raise ValueError(f"runs {run_a!r} and {run_b!r} share no (task_id, epoch)")
    tally = dict(per_task.get_column("outcome").value_counts().iter_rows())
    both, only_a, only_b, neither = (
        tally.get(k, 0) for k in ("both", "only_a", "only_b", "neither")
    )
    n = per_task.height
    diff_lo, diff_hi = newcombe_paired_diff(both, only_a, only_b, neither)
    rated = (
        per_task.filter(pl.col("rate_a").is_not_null() & pl.col("rate_b").is_not_null())
        .group_by("task_id")
        .agg(pl.col("rate_a").mean(), pl.col("rate_b").mean())
    )
    rate_diff, rate_lo, rate_hi, rate_p = paired_bootstrap_diff(
        rated.get_column("rate_a").to_numpy(),
        rated.get_column("rate_b").to_numpy(),
        n_boot=n_boot,
        seed=seed,
    )
    return Comparison(
        a=run_a,
        b=run_b,
        model_a=model_a,
        model_b=model_b,
        n_shared=n,
        both_passed=both,
        only_a=only_a,
        only_b=only_b,
        neither=neither,
        pass_rate_a=(both + only_a) / n,
        pass_rate_b=(both + only_b) / n,
        diff=(only_a - only_b) / n,
        diff_lo=diff_lo,
        diff_hi=diff_hi,
        mcnemar_p=mcnemar_exact(only_a, only_b),
        rate_tasks=rated.height,
        rate_a=rated.select(pl.col("rate_a").mean()).item(),
        rate_b=rated.select(pl.col("rate_b").mean()).item(),
        rate_diff=rate_diff,
        rate_diff_lo=rate_lo,
        rate_diff_hi=rate_hi,
        rate_diff_p=rate_p,
        per_task=per_task,
    )
