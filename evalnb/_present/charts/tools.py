"""Tool charts: tool call success per model and category, turns and tool calls per task.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> tool_success(Runs.empty()).to_dict()["title"]["text"]
    'Tool call success rate (exit code 0)'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb import _display as display
from evalnb._analysis.rates import clustered_interval
from evalnb._analysis.runs import Runs
from evalnb._analysis.thresholds import Thresholds
from evalnb._present import groups
from evalnb._present.charts.parts import (
    box,
    chart_title,
    group_axis,
    rate_tooltip,
    run_order,
    threshold_rule,
    with_labels,
)
from evalnb._store.tables import KEYS

HEALTHY = Thresholds()
"""Spec 000's healthy profile and friction signals, at their defaults: the reference
lines and frames the charts draw."""
ALL_CATEGORIES = "all categories"


def tool_success(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Tool call success rate (exit code 0): a cell per model and category, plus overall.

    Calls whose exit code is unknown (null) are left out of both counts, as in
    :func:`evalnb._analysis.summary.summary`.

    Counted from the tasks' ``tool_calls_ok`` and ``tool_calls_error`` (one row per
    attempt, summed from its tool calls: :func:`evalnb._store.tables.with_call_figures`,
    so a million calls cost nothing more here), with 95% intervals clustered by
    task (:func:`evalnb._analysis.rates.clustered_interval`) in the tooltip. Cells below
    spec 000's healthy 80% are framed. The "all categories"
    row equals :func:`evalnb._analysis.summary.summary`'s ``tool_call_success_rate``
    (of the pooled runs of a model). A grid, not bars, so 60 categories and 20 models
    stay a few hundred pixels wide.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.LayerChart | altair.FacetChart
        Three layers: the coloured cells (category, and "all categories", by model), the
        frames of the cells below 80%, and each cell's ``ok/calls`` text.

    See Also
    --------
    category_heatmap : The same grid of task pass rates.
    turns_and_calls : How many turns and calls each task took.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = tool_success(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['rect', 'rect', 'text'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.filter(pl.col("category") == "all categories").select(
    ...     "model_label", "cell", pl.col("value").round(2)
    ... ).sort("model_label")
    shape: (2, 3)
    ┌─────────────────────────┬───────────┬───────┐
    │ model_label             ┆ cell      ┆ value │
    │ ---                     ┆ ---       ┆ ---   │
    │ str                     ┆ str       ┆ f64   │
    ╞═════════════════════════╪═══════════╪═══════╡
    │ sim/careful (simulated) ┆ 23.0/23.0 ┆ 1.0   │
    │ sim/hasty (simulated)   ┆ 13.0/19.0 ┆ 0.68  │
    └─────────────────────────┴───────────┴───────┘
    """
    runs = groups.pooled(runs)
    ok = pl.col("tool_calls_ok").fill_null(0)
    with_cat = (
        runs.tasks.select(
            *KEYS, "category", ok=ok, calls=ok + pl.col("tool_calls_error").fill_null(0)
        )
        .filter(pl.col("calls") > 0)  # attempts with a known exit code
        .with_columns(pl.col("calls", "ok").cast(pl.Float64))
    )
    per_cat = with_cat.group_by("run_id", "category").agg(pl.col("calls", "ok").sum())
    overall = with_cat.group_by("run_id").agg(
        pl.lit(ALL_CATEGORIES).alias("category"), pl.col("calls", "ok").sum()
    )
    limits = pl.concat(
        [
            clustered_interval(with_cat, ["run_id"], "ok", "calls", "v", counts=True).with_columns(
                pl.lit(ALL_CATEGORIES).alias("category")
            ),
            clustered_interval(with_cat, ["run_id", "category"], "ok", "calls", "v", counts=True),
        ],
        how="diagonal",
    ).rename({"v_lo": "lo", "v_hi": "hi"})
    data = with_labels(
        pl.concat([overall, per_cat.select(overall.columns)])
        .with_columns(
            (pl.col("ok") / pl.col("calls")).alias("value"),
            pl.format("{}/{}", "ok", "calls").alias("cell"),
        )
        .join(limits, on=["run_id", "category"], how="left", nulls_equal=True),
        runs,
    )
    order = [ALL_CATEGORIES, *sorted(set(per_cat.get_column("category").drop_nulls()))]
    base = alt.Chart(data).encode(
        x=alt.X("run_label:N", title=None, sort=run_order(runs), axis=group_axis()),
        y=alt.Y("category:N", title=None, sort=order, axis=alt.Axis(labelLimit=0)),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("category:N", title="category"),
            *rate_tooltip(),
            alt.Tooltip("cell:N", title="calls ok / calls"),
        ],
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color(
            "value:Q",
            title="tool call success",
            scale=alt.Scale(scheme="redyellowgreen", domain=[0.5, 1], clamp=True),
            legend=alt.Legend(format="%", orient="right"),
        )
    )
    unhealthy = base.mark_rect(fill=None, stroke="#222", strokeWidth=1.5).transform_filter(
        alt.datum.value < HEALTHY.tool_call_success_min
    )
    text = base.mark_text(fontSize=11, color="#222").encode(text=alt.Text("value:Q", format=".0%"))
    return alt.layer(cells, unhealthy, text).properties(
        title=chart_title(
            "Tool call success rate (exit code 0)",
            runs,
            f"Spec 000: above {display.rate(HEALTHY.tool_call_success_min)} is healthy (framed"
            f" cells are below), below {display.rate(HEALTHY.friction_tool_call_success)}"
            " points at interpreter gaps.",
            "Hover a cell for its calls and 95% interval (clustered by task).",
        ),
        width=alt.Step(64),
        height=alt.Step(20),
    )


def turns_and_calls(runs: Runs) -> alt.HConcatChart:
    """Per-task turns and tool calls, as a box per model (min-max whiskers, mean as a diamond).

    The turns panel marks spec 000's healthy average of fewer than 5 turns per task.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.HConcatChart
        Two panels side by side: turns per task (with the healthy-average rule) and tool
        calls per task, each a box per model group summarised in polars.

    See Also
    --------
    tool_success : Which of those calls succeeded.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = turns_and_calls(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, len(spec["hconcat"])
    ('HConcatChart', 2)
    >>> turns = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> turns.select("run_label", "min", "median", "max", "mean").sort("run_label")
    shape: (2, 5)
    ┌─────────────────────────┬─────┬────────┬─────┬──────┐
    │ run_label               ┆ min ┆ median ┆ max ┆ mean │
    │ ---                     ┆ --- ┆ ---    ┆ --- ┆ ---  │
    │ str                     ┆ i64 ┆ f64    ┆ i64 ┆ f64  │
    ╞═════════════════════════╪═════╪════════╪═════╪══════╡
    │ sim/careful (simulated) ┆ 3   ┆ 4.0    ┆ 5   ┆ 4.0  │
    │ sim/hasty (simulated)   ┆ 2   ┆ 3.0    ┆ 4   ┆ 3.0  │
    └─────────────────────────┴─────┴────────┴─────┴──────┘
    """
    runs = groups.pooled(runs)
    tasks = with_labels(runs.tasks.select("run_id", "turns", "tool_call_count"), runs)
    turns = alt.layer(
        box(tasks, "turns", "turns per task", runs),
        threshold_rule(
            HEALTHY.avg_turns_max,
            f"healthy avg < {display.number(HEALTHY.avg_turns_max)}",
            fmt="d",
        ),
    ).properties(title="Turns (LLM calls) per task")
    calls = box(tasks, "tool_call_count", "tool calls per task", runs).properties(
        title="Tool calls per task"
    )
    return alt.hconcat(turns, calls).properties(
        title=chart_title(
            "How much work each task took",
            runs,
            "Box: middle half of tasks; white tick: median; diamond: mean; line: min to max.",
        )
    )
