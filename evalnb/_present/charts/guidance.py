"""Guidance charts: spec 002 interaction metrics per guidance version, and paired differences.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> interaction_by_guidance(Runs.empty()).to_dict()["facet"]["field"]
    'metric'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.guidance import METRICS as GUIDANCE_METRICS
from evalnb._analysis.guidance import compare_guidance
from evalnb._analysis.interaction import interaction as interaction_metrics
from evalnb._analysis.rates import clustered_interval
from evalnb._analysis.runs import Runs
from evalnb._present import groups
from evalnb._present.charts.parts import (
    bottom_legend,
    chart_title,
    labels,
    nothing_to_draw,
    run_color,
    run_y,
    with_labels,
)


def interaction_by_guidance(runs: Runs, pattern: str | None = None) -> alt.FacetChart:
    """Spec 002 layer 1 metrics per guidance version, side by side per model.

    One bar per model group (guidance versions are separate groups, and each group's
    label names its version), from the per-task counts of
    :func:`evalnb._analysis.interaction.interaction` summed per run: error rate, retry
    rate, first-try success rate, iteration ratio and completion rate with 95% intervals
    clustered by task (:func:`evalnb._analysis.rates.clustered_interval`: a task's
    commands and epochs count as one unit, over tasks whose completion is known for
    completion), and ``--help`` invocations and command count per task. ``pattern``
    picks the target tool's commands (spec 002 ``command_pattern``); None counts every
    bash command.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; a model group's runs are pooled
        into one (:func:`evalnb._present.groups.pooled`), each guidance version its own group.
    pattern : str | None, default None
        The target tool's commands (spec 002 ``command_pattern``): a regex in the Rust
        dialect matched at the start of a command; None counts every bash command.

    Returns
    -------
    altair.FacetChart
        One panel per metric, a bar per model group with its interval rule.

    Raises
    ------
    ValueError
        When ``pattern`` is not a valid regex of the Rust dialect.

    See Also
    --------
    guidance_differences : The paired differences between the versions.
    evalnb.interaction : The counts drawn.

    Examples
    --------
    >>> from evalnb._examples import example_guidance_runs
    >>> chart = interaction_by_guidance(example_guidance_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, spec["facet"].get("field")
    ('FacetChart', 'metric')
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.filter(pl.col("metric").is_in(["error rate", "retry rate"])).select(
    ...     "guidance", "metric", pl.col("value").round(2), "count"
    ... ).sort("metric", "guidance")
    shape: (4, 4)
    ┌──────────┬────────────┬───────┬─────────┐
    │ guidance ┆ metric     ┆ value ┆ count   │
    │ ---      ┆ ---        ┆ ---   ┆ ---     │
    │ str      ┆ str        ┆ f64   ┆ str     │
    ╞══════════╪════════════╪═══════╪═════════╡
    │ v1       ┆ error rate ┆ 0.18  ┆ 7 of 40 │
    │ v2       ┆ error rate ┆ 0.04  ┆ 1 of 27 │
    │ v1       ┆ retry rate ┆ 0.05  ┆ 2 of 40 │
    │ v2       ┆ retry rate ┆ 0.04  ┆ 1 of 27 │
    └──────────┴────────────┴───────┴─────────┘
    """
    runs = groups.pooled(runs)
    per_task = interaction_metrics(runs, pattern, by="task").with_columns(
        pl.col("completed").cast(pl.Float64).fill_null(0).alias("_completed"),
        pl.col("completed").is_not_null().cast(pl.Float64).alias("_known"),
    )
    per_run = (
        per_task.group_by("run_id", maintain_order=True)
        .agg(
            pl.len().alias("tasks"),
            pl.col("total_commands", "unique_commands", "error_count", "first_try_successes").sum(),
            pl.col("help_invocations").sum(),
            pl.col("_completed").sum().cast(pl.Int64).alias("completed_tasks"),
            pl.col("_known").sum().cast(pl.Int64).alias("known_completion"),
        )
        .join(runs.runs.select("run_id", pl.col("guidance").fill_null("(none)")), on="run_id")
    )
    rates: list[tuple[str, pl.Expr, pl.Expr]] = [
        ("error rate", pl.col("error_count"), pl.col("total_commands")),
        (
            "retry rate",
            pl.col("total_commands") - pl.col("unique_commands"),
            pl.col("total_commands"),
        ),
        ("first-try success rate", pl.col("first_try_successes"), pl.col("total_commands")),
        ("iteration ratio", pl.col("unique_commands"), pl.col("total_commands")),
        ("completion rate", pl.col("_completed"), pl.col("_known")),
    ]
    parts = []
    for name, num, den in rates:
        clusters = per_task.select(
            "run_id", "task_id", num.cast(pl.Float64).alias("_y"), den.cast(pl.Float64).alias("_m")
        )
        interval = clustered_interval(clusters, ["run_id"], "_y", "_m", "x", counts=True)
        totals = clusters.group_by("run_id").agg(pl.col("_y", "_m").sum())
        parts.append(
            per_run.select("run_id", "guidance")
            .join(totals, on="run_id", how="left")
            .join(interval, on="run_id", how="left")
            .select(
                "run_id",
                "guidance",
                pl.lit(name).alias("metric"),
                pl.when(pl.col("_m") > 0).then(pl.col("_y") / pl.col("_m")).alias("value"),
                pl.col("x_lo").alias("lo"),
                pl.col("x_hi").alias("hi"),
                pl.format(
                    "{} of {}", pl.col("_y").cast(pl.Int64), pl.col("_m").cast(pl.Int64)
                ).alias("count"),
            )
        )
    for name, col in (
        ("--help per task", "help_invocations"),
        ("commands per task", "total_commands"),
    ):
        parts.append(
            per_run.select(
                "run_id",
                "guidance",
                pl.lit(name).alias("metric"),
                pl.when(pl.col("tasks") > 0).then(pl.col(col) / pl.col("tasks")).alias("value"),
                pl.lit(None, pl.Float64).alias("lo"),
                pl.lit(None, pl.Float64).alias("hi"),
                pl.format("{} in {} tasks", col, "tasks").alias("count"),
            )
        )
    data = with_labels(pl.concat(parts), runs)
    metric_order = [name for name, *_ in rates] + ["--help per task", "commands per task"]
    base = alt.Chart().encode(
        y=run_y(runs, axis=alt.Axis(labelLimit=360)),  # a row per group, named with its version
        tooltip=[
            alt.Tooltip("guidance:N", title="guidance"),
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("metric:N", title="metric"),
            alt.Tooltip("value:Q", title="value", format=".3~f"),
            alt.Tooltip("lo:Q", title="95% low", format=".3~f"),
            alt.Tooltip("hi:Q", title="95% high", format=".3~f"),
            alt.Tooltip("count:N", title="from"),
        ],
    )
    layered = alt.layer(
        base.mark_bar().encode(
            x=alt.X("value:Q", title=None),
            color=run_color(runs),
        ),
        base.mark_rule(color="#222", strokeWidth=1.5).encode(x="lo:Q", x2="hi:Q"),
        data=data,
    ).properties(width=190, height=alt.Step(16))
    chart: alt.FacetChart = (
        layered.facet(
            facet=alt.Facet("metric:N", title=None, sort=metric_order),
            columns=4,
        )
        .resolve_scale(x="independent")
        .properties(
            title=chart_title(
                "Interaction quality by guidance version (spec 002 layer 1)",
                runs,
                "Lower error and retry rates and higher first-try success mean the guidance works.",
                "Lines: 95% intervals clustered by task (a task's commands and epochs"
                " count as one unit).",
            )
        )
    )
    return chart


def guidance_differences(
    runs: Runs, pattern: str | None = None
) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Paired differences between guidance versions (b minus a, in order of appearance).

    From :func:`evalnb._analysis.guidance.compare_guidance`: each metric's mean per-task
    difference on the tasks both versions ran, with a paired t 95% interval (from 10
    shared tasks on; none below) and, in the tooltip, the exact sign-flip p-value and
    its Holm adjustment over every metric and pair shown. Read a difference as real
    where the Holm-adjusted p is at most 0.05.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; a model group's runs are pooled
        into one (:func:`evalnb._present.groups.pooled`), each guidance version its own group.
    pattern : str | None, default None
        The target tool's commands (spec 002 ``command_pattern``): a regex in the Rust
        dialect matched at the start of a command; None counts every bash command.

    Returns
    -------
    altair.LayerChart | altair.FacetChart | altair.Chart
        A zero rule, the interval rules and a point per metric and version pair; or, when
        no two guidance versions share a task, a text chart saying so.

    Raises
    ------
    ValueError
        When ``pattern`` is not a valid regex of the Rust dialect.

    See Also
    --------
    interaction_by_guidance : Each version's metrics side by side.
    evalnb.compare_guidance : The differences drawn.

    Examples
    --------
    >>> from evalnb._examples import example_guidance_runs
    >>> chart = guidance_differences(example_guidance_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['rule', 'rule', 'point'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[1])
    >>> rows.filter(pl.col("metric").is_in(["pass rate", "error rate", "help per attempt"])).select(
    ...     "metric", "n_shared", pl.col("diff").round(2), "p_value", "p_holm"
    ... ).sort("metric")
    shape: (3, 5)
    ┌──────────────────┬──────────┬───────┬─────────┬────────┐
    │ metric           ┆ n_shared ┆ diff  ┆ p_value ┆ p_holm │
    │ ---              ┆ ---      ┆ ---   ┆ ---     ┆ ---    │
    │ str              ┆ i64      ┆ f64   ┆ f64     ┆ f64    │
    ╞══════════════════╪══════════╪═══════╪═════════╪════════╡
    │ error rate       ┆ 6        ┆ -0.13 ┆ 0.03125 ┆ 0.25   │
    │ help per attempt ┆ 6        ┆ -1.0  ┆ 0.03125 ┆ 0.25   │
    │ pass rate        ┆ 6        ┆ 0.67  ┆ 0.125   ┆ 0.5    │
    └──────────────────┴──────────┴───────┴─────────┴────────┘

    With 6 shared tasks (fewer than 10) the differences carry no interval; and none of them
    is real at the 0.05 level once Holm-adjusted.
    """
    title = "Guidance version differences, paired on shared tasks (spec 002)"
    paired = compare_guidance(runs, pattern).paired.filter(pl.col("diff").is_not_null())
    if paired.height == 0:
        return nothing_to_draw(title, "Fewer than two guidance versions ran the same tasks.", runs)
    model_labels = (
        labels(runs)
        .join(runs.runs.select("run_id", "model"), on="run_id")
        .group_by("model")
        .agg(pl.col("model_label").first())
    )
    data = paired.join(model_labels, on="model", how="left").with_columns(
        pl.format("{}: {} − {}", "model_label", "version_b", "version_a").alias("comparison"),
        pl.col("metric").str.replace_all("_", " ").alias("metric"),
    )
    metric_order = [m.replace("_", " ") for m in GUIDANCE_METRICS]
    base = alt.Chart(data).encode(
        y=alt.Y("metric:N", title=None, sort=metric_order),
        yOffset=alt.YOffset("comparison:N"),
        color=alt.Color(
            "comparison:N", title="model: version b − version a", legend=bottom_legend()
        ),
        tooltip=[
            alt.Tooltip("comparison:N", title="comparison"),
            alt.Tooltip("metric:N", title="metric"),
            alt.Tooltip("mean_a:Q", title="version a", format=".3~f"),
            alt.Tooltip("mean_b:Q", title="version b", format=".3~f"),
            alt.Tooltip("diff:Q", title="difference", format="+.3~f"),
            alt.Tooltip("diff_lo:Q", title="95% low", format="+.3~f"),
            alt.Tooltip("diff_hi:Q", title="95% high", format="+.3~f"),
            alt.Tooltip("p_value:Q", title="p (exact sign-flip)", format=fmt.P_VALUE_FORMAT),
            alt.Tooltip("p_holm:Q", title="p, Holm-adjusted", format=fmt.P_VALUE_FORMAT),
            alt.Tooltip("n_shared:Q", title="shared tasks"),
        ],
    )
    zero = alt.Chart(pl.DataFrame({"zero": [0.0]})).mark_rule(color="#888").encode(x="zero:Q")
    return alt.layer(
        zero,
        base.mark_rule(strokeWidth=2).encode(
            x=alt.X("diff_lo:Q", title="difference (b − a), 95% interval"),
            x2="diff_hi:Q",
        ),
        base.mark_point(filled=True, size=60).encode(x="diff:Q"),
    ).properties(
        title=chart_title(
            title,
            runs,
            "Rates are shares (0-1); help and commands are per attempt. Intervals from"
            " 10 shared tasks; the tooltip's Holm-adjusted p says which differences"
            " the shared tasks support.",
        ),
        width=420,
        height=alt.Step(16),
    )
