"""Run summaries, per-category rates, epoch variance, context growth and paired comparisons.

Everything is recomputed from the per-task and per-tool-call rows of
:class:`evalnb.analysis.runs.Runs`, never copied from a stored summary, with spec 000's
formulas (micro-averaged: ``overall_rate = sum(score) / sum(max_score)``):

- ``pass_rate = total_passed / total_tasks``; a task passes when every check
  passed and it did not error. Errored tasks count as tasks (not passed).
- ``total_tool_calls`` is the sum of the tasks' ``tool_call_count`` (spec 000), so it
  includes calls a source counted without recording them (onetool-bench).
  ``tool_call_success_rate = tool_calls_ok / (tool_calls_ok + tool_calls_error)``; ok
  means exit code 0, error a non-zero one (the tasks' counts of their tool-call rows,
  :func:`evalnb.store.tables.with_call_figures`). A call whose exit code the source did
  not record (null: Terminal-Bench keystrokes, some Inspect tools, calls without rows)
  counts in ``total_tool_calls`` and ``tool_calls_unknown``, never as ok or as an error.
- A rate whose denominator is 0 is null. A NaN ``score`` or ``max_score`` counts as
  unknown (null), like a missing one; a task with a NaN in either adds to neither
  ``total_score`` nor ``total_max_score``.
- A scenario task's ``score``/``max_score`` are its gates passed / gates total (spec
  002 keeps the judge apart), so a scenario run's ``overall_rate`` is its share of
  gates passed; its layers are reported separately (:mod:`evalnb.analysis.layers`).
- ``natural_stop_rate`` is over the attempts whose ending is known (imported plain
  transcripts do not say how the agent ended: ``natural_stop`` null).

Intervals treat the task as the unit of analysis (Miller 2024): a task's epochs, checks
and tool calls form one cluster (:func:`evalnb.analysis.stats.clustered_wilson`).

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
from itertools import combinations
from typing import TYPE_CHECKING, Literal, TypeVar

import polars as pl

from evalnb.analysis.cost import Prices, judge_costs, run_costs
from evalnb.analysis.layers import LAYER_COLUMNS, scenario_layers
from evalnb.analysis.runs import AGGREGATE, Runs
from evalnb.analysis.stats import (
    EXACT_MAX,
    FLIP_DRAWS,
    SMALL_N,
    clustered_wilson_sums,
    detectable_difference,
    holm,
    mcnemar_exact,
    newcombe_paired_diff,
    paired_rate_diff,
    sign_flip_test,
)
from evalnb.store.tables import KEYS, RUN_KEY

if TYPE_CHECKING:
    import numpy as np

PASSED = pl.col("passed").fill_null(False) & pl.col("error").is_null()
"""A task attempt passed: every check passed and it did not error."""

SCORED = pl.col("passed").is_not_null() | pl.col("error").is_not_null()
"""A task attempt has a verdict: its checks passed or failed, or it errored (a failure).
Without one (an Inspect sample no scorer scored, an onetool-bench row with result
``-``) it is unscored: counted in ``total_tasks`` and ``unscored_tasks``, outside the
pass rate."""


Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

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


def _ratio(num: str, den: str | pl.Expr) -> pl.Expr:
    """``num / den``, null where ``den`` is 0."""
    denominator = pl.col(den) if isinstance(den, str) else den
    return pl.when(denominator > 0).then(pl.col(num) / denominator)


def summary(runs: Runs, *, prices: Prices | None = None) -> pl.DataFrame:
    """One row per run: spec 000's EvalSummary fields, 95% intervals, stop rate, cost.

    Columns: run identity (:data:`RUN_INFO`); tasks (``total_tasks``, spec 000's count of
    task attempts, ``distinct_tasks``, ``total_passed``, ``errored_tasks``,
    ``unscored_tasks`` (:data:`SCORED`), ``pass_rate`` = ``total_passed`` over the
    attempts with a verdict, null when none has one); weighted checks (``total_score``,
    ``total_max_score``, ``overall_rate``); tool calls (``total_tool_calls``, ``tool_calls_ok``,
    ``tool_calls_error``, ``tool_calls_unknown``, ``tool_call_success_rate``). The three
    rates come with 95%
    ``_lo``/``_hi`` limits clustered by task (a task's epochs, checks and calls
    together: :func:`evalnb.analysis.stats.clustered_wilson`); effort (``total_turns``,
    ``avg_turns_per_task``, ``avg_tool_calls_per_task``, ``natural_stop_rate``);
    tokens and time (``total_input_tokens``, ``total_output_tokens``,
    ``total_duration_ms`` over the attempts whose duration is known, null when none
    is, and ``avg_duration_ms`` over those); ``cost_usd`` (null when any task's
    cost is unknown; ``prices`` defaults to the packaged price table), the part of it
    the source recorded, ``recorded_cost_usd``, and every task at the price table's
    figure, ``priced_cost_usd`` (:func:`~evalnb.analysis.cost.run_costs`);
    what its judges cost, apart, ``judge_cost_usd`` (:func:`~evalnb.analysis.cost.judge_costs`,
    null without judge ratings); spec 002's
    layers for scenario runs (:data:`~evalnb.analysis.layers.LAYER_COLUMNS`, null
    for other runs).

    Example:
        >>> summary(Runs.empty()).height
        0
    """
    tasks = _known_scores(
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
            _cluster_sums(tasks, run_key, rates),
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
            _ratio("total_passed", pl.col("total_tasks") - pl.col("unscored_tasks")).alias(
                "pass_rate"
            ),
            _ratio("total_score", "total_max_score").alias("overall_rate"),
            _ratio("tool_calls_ok", pl.col("tool_calls_ok") + pl.col("tool_calls_error")).alias(
                "tool_call_success_rate"
            ),
            _ratio("total_turns", "total_tasks").alias("avg_turns_per_task"),
            _ratio("total_tool_calls", "total_tasks").alias("avg_tool_calls_per_task"),
            _ratio("total_duration_ms", "_timed").alias("avg_duration_ms"),
        )
        .join(_interval(sums, run_key, "pass_rate", counts=True), on="run_key", how="left")
        .join(_interval(sums, run_key, "overall_rate", counts=False), on="run_key", how="left")
        .join(
            _interval(sums, run_key, "tool_call_success_rate", counts=True),
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


def _known_scores(tasks: Frame) -> Frame:
    """The tasks table with NaN scores, maximum scores and rates made null (unknown).

    A NaN in either ``score`` or ``max_score`` makes both unknown: a score without
    its maximum (or the reverse) would skew the overall rate.
    """
    nan = pl.col("score").is_nan() | pl.col("max_score").is_nan()
    return tasks.with_columns(
        pl.when(~nan.fill_null(False)).then(pl.col(c)).alias(c) for c in ("score", "max_score")
    ).with_columns(pl.col("rate").fill_nan(None))


def clustered_interval(
    rows: pl.DataFrame | pl.LazyFrame,
    by: list[str],
    y: str,
    m: str,
    name: str,
    *,
    counts: bool = False,
) -> pl.DataFrame:
    """Per group of ``by``: the task-clustered 95% interval ``name_lo``/``name_hi`` of Σy/Σm.

    ``rows`` has a ``task_id`` column; all rows of one task (its epochs, checks or
    tool calls) are summed into one cluster, then
    :func:`evalnb.analysis.stats.clustered_wilson_sums` gives each group's interval
    (null where the group's ``Σm`` is 0). Nulls in ``y``/``m`` count as 0.

    Example:
        >>> rows = pl.DataFrame({"run_id": ["r"] * 4, "task_id": ["a", "a", "b", "b"],
        ...     "ok": [1.0, 1.0, 0.0, 0.0], "n": [1.0] * 4})
        >>> out = clustered_interval(rows, ["run_id"], "ok", "n", "rate", counts=True)
        >>> [round(v, 3) for v in out.row(0)[1:]]  # two tasks, not four attempts
        [0.002, 0.998]
    """
    sums = _cluster_sums(rows, by, {name: (y, m)}).collect(engine=AGGREGATE)
    return _interval(sums, by, name, counts=counts).collect()


def _cluster_sums(
    rows: pl.DataFrame | pl.LazyFrame, by: list[str], rates: dict[str, tuple[str, str]]
) -> pl.LazyFrame:
    """Per group of ``by``, for each rate ``name: (y, m)``: its clusters ``name_k`` and the
    sums ``name_sy``, ``name_sm``, ``name_syy``, ``name_sym``, ``name_smm`` over the
    per-task cluster totals (see :func:`clustered_interval`); ``_tasks`` counts the
    group's tasks. The rows are grouped by task once for all the rates."""
    per_task = (
        rows.lazy()
        .group_by(*by, "task_id")
        .agg(
            pl.col(c).fill_null(0).sum().alias(f"{name}_{part}")
            for name, pair in rates.items()
            for part, c in zip("ym", pair, strict=True)
        )
    )
    sums = []
    for name in rates:
        yc, mc = pl.col(f"{name}_y"), pl.col(f"{name}_m")
        sums += [
            (mc > 0).sum().alias(f"{name}_k"),
            yc.sum().alias(f"{name}_sy"),
            mc.sum().alias(f"{name}_sm"),
            (yc * yc).sum().alias(f"{name}_syy"),
            (yc * mc).sum().alias(f"{name}_sym"),
            (mc * mc).sum().alias(f"{name}_smm"),
        ]
    return per_task.group_by(by).agg(pl.len().alias("_tasks"), *sums)


def _interval(sums: pl.DataFrame, by: list[str], name: str, *, counts: bool) -> pl.LazyFrame:
    """``name_lo``/``name_hi`` per group from the sums of rate ``name`` (:func:`_cluster_sums`)."""
    parts = (sums.get_column(f"{name}_{c}") for c in ("k", "sy", "sm", "syy", "sym", "smm"))
    limits = clustered_wilson_sums(*parts, counts=counts)
    return pl.concat(
        [sums.select(by), limits.select(pl.all().name.prefix(f"{name}_"))], how="horizontal"
    ).lazy()


def by_category(runs: Runs) -> pl.DataFrame:
    """One row per (run, category): spec 000's CategorySummary plus pass rate, with 95% intervals.

    ``rate = score / max_score`` (weighted checks); ``pass_rate = passed / tasks``
    (``tasks`` counts attempts; unscored ones, :data:`SCORED`, are left out of the
    pass rate and counted in ``unscored_tasks``). Both intervals (``rate_lo``/``rate_hi``,
    ``pass_rate_lo``/``pass_rate_hi``) are clustered by task, as in :func:`summary`.

    Example:
        >>> by_category(Runs.empty()).columns[:4]
        ['run_id', 'model', 'category', 'tasks']
    """
    tasks = _known_scores(
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
            _cluster_sums(
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
            _ratio("score", "max_score").alias("rate"),
            _ratio("passed", "_scored").alias("pass_rate"),
        )
        .join(_interval(sums, keys, "rate", counts=False), on=keys, how="left", nulls_equal=True)
        .join(
            _interval(sums, keys, "pass_rate", counts=True), on=keys, how="left", nulls_equal=True
        )
        .with_columns((pl.col("tasks") - pl.col("_scored")).alias("unscored_tasks"))
        .drop("run_key", "_scored")
        .sort("run_id", "category", nulls_last=True)
        .collect()
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

    Per task: ``calls`` (LLM calls recorded), ``has_call_tokens`` (whether call 1
    carries its input token count, so ``base_context`` is known; bashkit-eval result
    files have no per-call counts), ``base_context`` (call 1's input tokens),
    ``context_growth_avg`` (``(input[N] - input[1]) / (N - 1)``, 0 for one call, may be
    negative) and ``final_cumulative_input`` (the sum of input tokens over the calls).
    All are the tasks table's own (:func:`evalnb.store.tables.with_llm_call_figures`,
    which gives the rule for unknown counts: a figure is null when its formula needs
    one), so this reads one row per attempt.

    Per run (``run_id``, ``model``) or per ``model``: ``tasks``,
    ``share_with_call_tokens``, ``calls_mean`` and the mean and median of the three
    token figures over the tasks that have them.

    Example:
        >>> context_growth(Runs.empty(), by="model").columns[:3]
        ['model', 'tasks', 'share_with_call_tokens']
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


@dataclass
class Comparison:
    """Two runs compared, paired on the tasks they share (per-task figures first).

    Coverage: ``tasks`` shared tasks used; ``tasks_only_a``/``tasks_only_b`` ran in one
    run only; ``tasks_errored`` shared tasks left out because every attempt on one side
    errored; ``errored_a``/``errored_b`` errored attempts left out of the paired figures
    (infrastructure errors are not model failures; with ``include_errored`` they count
    as failed attempts instead and these are 0); ``attempts_a``/``attempts_b`` the
    attempts used; ``tasks_unscored`` tasks used whose score is unknown (NaN) in every
    attempt on a side, left out of the weighted rate's test as they add nothing to its
    rates (an attempt with an unknown score counts in neither).

    Pass rates: ``pass_rate_a``/``pass_rate_b`` (passes / attempts used), ``diff`` =
    A - B, ``diff_lo``/``diff_hi`` its 95% interval and ``p`` its two-sided p-value,
    by ``test``: with one attempt per task on each side, Newcombe's method 10 and the
    exact McNemar test; with epochs, the task-clustered method 10 (MOVER) and the
    sign-flip test on per-task pass shares (exact up to 16 tasks that differ, else
    20,000 seeded random sign patterns). ``a_higher``/``b_higher``/``tied``: tasks
    whose pass share is higher in A, in B, or equal (with one attempt: only A passed,
    only B passed, both or neither).

    Weighted rates: ``rate_a``/``rate_b`` = Σscore / Σmax_score over the attempts used
    (the reports' overall rate when the runs share every task and nothing errored),
    ``rate_diff`` with its clustered interval, and ``rate_p`` the sign-flip test on
    per-task mean scores (over the attempts whose score is known). ``per_task``: one
    row per shared task used.

    Power: under :data:`~evalnb.analysis.stats.SMALL_N` (25) shared tasks,
    ``detectable`` is the smallest pass-rate difference the test detects at 80% power
    around the pooled pass rate (:func:`~evalnb.analysis.stats.detectable_difference`),
    and :meth:`power_note` says it; None from 25 tasks on.
    """

    a: str
    b: str
    model_a: str
    model_b: str
    tasks: int
    tasks_only_a: int
    tasks_only_b: int
    tasks_errored: int
    attempts_a: int
    attempts_b: int
    errored_a: int
    errored_b: int
    tasks_unscored: int
    include_errored: bool
    a_higher: int
    b_higher: int
    tied: int
    pass_rate_a: float
    pass_rate_b: float
    diff: float
    diff_lo: float | None
    diff_hi: float | None
    p: float
    test: str
    rate_a: float | None
    rate_b: float | None
    rate_diff: float | None
    rate_diff_lo: float | None
    rate_diff_hi: float | None
    rate_p: float | None
    detectable: float | None
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
            >>> compare(runs, "x", "y").as_frame().select("tasks", "diff", "p").row(0)
            (1, 0.0, 1.0)
        """
        p_holm, rate_p_holm = self.holm()
        return pl.DataFrame(
            [
                {f.name: getattr(self, f.name) for f in fields(self) if f.name != "per_task"}
                | {"p_holm": p_holm, "rate_p_holm": rate_p_holm}
            ]
        )

    def holm(self) -> tuple[float | None, float | None]:
        """Holm-adjusted ``(p, rate_p)``: the two metrics are two comparisons of one pair."""
        p_holm, rate_p_holm = holm([self.p, self.rate_p])
        return p_holm, rate_p_holm

    def coverage(self) -> str:
        """One sentence: tasks used, tasks and attempts left out (never dropped silently)."""
        parts = [f"{self.tasks} shared tasks ({self.attempts_a} vs {self.attempts_b} attempts)"]
        if self.tasks_only_a or self.tasks_only_b:
            parts.append(
                f"not shared: {self.tasks_only_a} tasks only in A, {self.tasks_only_b} only in B"
            )
        if self.errored_a or self.errored_b:
            parts.append(
                f"errored attempts left out: {self.errored_a} in A, {self.errored_b} in B"
                + (f" ({self.tasks_errored} tasks with none left)" if self.tasks_errored else "")
            )
        if self.tasks_unscored:
            parts.append(f"{self.tasks_unscored} tasks without a known score on a side")
        return "; ".join(parts)

    def power_note(self) -> str:
        """Under 25 shared tasks, what the pass-rate test could detect; else ``""``."""
        return power_note(self.tasks, (self.pass_rate_a + self.pass_rate_b) / 2, self.detectable)

    def _discordance(self) -> str:
        if self.test == "exact McNemar":
            return f"only A passed {self.a_higher}, only B passed {self.b_higher}"
        return f"A higher on {self.a_higher} tasks, B higher on {self.b_higher}"

    def __str__(self) -> str:
        head = f"A = {self.model_a} ({self.a}) vs B = {self.model_b} ({self.b}): {self.coverage()}"
        p_holm, rate_p_holm = self.holm()
        pass_line = (
            f"pass rate     {self.pass_rate_a:.3f} vs {self.pass_rate_b:.3f}  "
            f"diff {self.diff:+.3f} {_ci(self.diff_lo, self.diff_hi)}  "
            f"{self.test} p = {self.p:.3g}, Holm p = {_num(p_holm, '.3g')} "
            f"({self._discordance()})"
        )
        rate_line = (
            f"weighted rate {_num(self.rate_a)} vs {_num(self.rate_b)}  "
            f"diff {_num(self.rate_diff, '+.3f')} {_ci(self.rate_diff_lo, self.rate_diff_hi)}  "
            f"sign-flip p = {_num(self.rate_p, '.3g')}, Holm p = {_num(rate_p_holm, '.3g')}"
        )
        note = "Holm p adjusts for the two metrics compared; read a difference as real only there."
        return "\n".join([head, pass_line, rate_line, note, *filter(None, [self.power_note()])])

    def _repr_markdown_(self) -> str:
        p_holm, rate_p_holm = self.holm()
        return "\n".join(
            [
                f"**A** = `{self.model_a}` ({self.a}), **B** = `{self.model_b}` ({self.b}); "
                f"{self.coverage()}",
                "",
                "| metric | A | B | A − B | 95% CI | p | Holm p |",
                "|---|---|---|---|---|---|---|",
                f"| pass rate | {self.pass_rate_a:.3f} | {self.pass_rate_b:.3f} | "
                f"{self.diff:+.3f} | {_ci(self.diff_lo, self.diff_hi)} | "
                f"{self.p:.3g} ({self.test}) | {_num(p_holm, '.3g')} |",
                f"| weighted rate | {_num(self.rate_a)} | {_num(self.rate_b)} | "
                f"{_num(self.rate_diff, '+.3f')} | {_ci(self.rate_diff_lo, self.rate_diff_hi)} | "
                f"{_num(self.rate_p, '.3g')} (sign-flip) | {_num(rate_p_holm, '.3g')} |",
                "",
                f"{self._discordance().capitalize()}; tied on {self.tied}. Holm p adjusts for "
                "the two metrics compared." + (f" {note}" if (note := self.power_note()) else ""),
            ]
        )


def power_note(tasks: int, pooled: float, detectable: float | None) -> str:
    """The sentence a comparison on few shared tasks adds; ``""`` from SMALL_N tasks on.

    Example:
        >>> power_note(12, 0.5, 0.65).split(" are ")[0]
        'With 12 shared tasks only pass-rate differences of 0.65 or more'
        >>> power_note(30, 0.5, None)
        ''
    """
    if tasks >= SMALL_N:
        return ""
    basis = (
        f"(exact McNemar test at α = 0.05, around the pooled pass rate {pooled:.2f}, "
        "the runs' outcomes taken as independent)"
    )
    if detectable is None:
        return (
            f"With {tasks} shared tasks no pass-rate difference is detectable at 80% power {basis}."
        )
    return (
        f"With {tasks} shared tasks only pass-rate differences of {detectable:.2f} or more "
        f"are detectable at 80% power {basis}."
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


def compare(runs: Runs, a: str, b: str, *, include_errored: bool = False) -> Comparison:
    """Compare runs ``a`` and ``b`` (run_ids, or model names used by one run each), paired.

    Each task's attempts (epochs) are summed first; only tasks both runs have are
    paired, and the others are counted (see :class:`Comparison`). Errored attempts are
    left out unless ``include_errored`` (then they count as failed). Raises ValueError
    for a run compared with itself or for runs that share no task.

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
    tasks = _known_scores(
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
    different dataset hashes (``dataset_sha256``). One row per pair and metric
    (``pass rate``, ``weighted rate``): ``a``, ``b``, ``model_a``, ``model_b``,
    ``tasks`` (shared), ``tasks_only_a``, ``tasks_only_b``, ``errored_a``,
    ``errored_b``, ``metric``, ``value_a``, ``value_b``, ``diff`` (A - B), ``diff_lo``,
    ``diff_hi``, ``p``, ``test``, ``p_holm`` (Holm's adjustment over every p-value in
    the frame, because each is one of several comparisons) and ``detectable``
    (:attr:`Comparison.detectable`, on both rows of the pair).

    Example:
        >>> compare_all(Runs.empty()).height
        0
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
