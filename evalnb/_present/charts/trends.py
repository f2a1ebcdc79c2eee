"""The trend chart: rates over the days a model family ran one dataset.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> trend(Runs.empty()).to_dict()["title"]["text"]
    'Rates over time, per model'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._present import groups
from evalnb._present.charts.parts import (
    OVERALL_LABEL,
    PASS_LABEL,
    bottom_legend,
    by_measure,
    chart_title,
    nothing_to_draw,
    rate_tooltip,
)


def trend(runs: Runs) -> alt.FacetChart | alt.Chart:
    """Pass rate, overall rate and tool call success over dates for each model family.

    A trend is drawn only across dates (UTC days) of one model on one dataset with one
    guidance version (else the change is the dataset's or the guidance's, not the
    model's over time): seeds and repeats started on the same day are one point, their
    attempts pooled (:func:`evalnb._present.groups.pooled`), so runs started seconds
    apart never make a line. Runs without a start time, and models run on a single day,
    are left out. Runs are joined by ``model_family`` (dated snapshots with their
    model); a line is one model family with one guidance version on one dataset (named
    in its label where it has guidance or the chart several datasets). Each point
    carries its 95% interval (from :func:`evalnb._analysis.summary.summary`); a point
    holding a partial run is drawn as a cross, with its task counts in the tooltip. A
    model keeps the colour it has in every other chart (that of its latest run's group).

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result, typically many days of them.

    Returns
    -------
    altair.FacetChart | altair.Chart
        One panel per measure, a line of points with interval rules per model family; or,
        when no model ran one dataset (and guidance) on several dates, a text chart
        saying so.

    See Also
    --------
    rates_by_model : The same rates, one bar per model.

    Examples
    --------
    Each example model ran once, so on a single day: no trend to draw.

    >>> from evalnb._examples import example_runs
    >>> chart = trend(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, spec["mark"].get("type")
    ('Chart', 'text')
    >>> rows = next(iter(spec["datasets"].values()))
    >>> rows[0].get("text")
    'No model ran the same dataset (and guidance) on several dates.'
    """
    family = pl.coalesce("model_family", "model")
    label = (
        pl.when(pl.col("simulated").fill_null(False))
        .then(family + " (simulated)")
        .otherwise(family)
    )
    day = pl.col("started_at").str.to_datetime(strict=False, time_zone="UTC").dt.date()
    labels = groups.group_labels(runs)
    order = sorted(set(labels.get_column("group")))
    colour_of = dict(zip(order, groups.colours(order), strict=True))  # as every chart has it
    dated = (
        runs.runs.select(
            "run_id",
            "started_at",
            "dataset",
            "guidance",
            "status",
            label.alias("model_label"),
            day.alias("day"),
        )
        .join(labels.select("run_id", "group"), on="run_id")
        .filter(pl.col("day").is_not_null())
        .filter(pl.col("day").n_unique().over("model_label", "dataset", "guidance") > 1)
    )
    title = "Rates over time, per model"
    if dated.height == 0:
        return nothing_to_draw(
            title, "No model ran the same dataset (and guidance) on several dates.", runs
        )
    several = dated.get_column("dataset").n_unique() > 1
    line = pl.concat_str(  # one line per model, guidance version and dataset
        "model_label",
        pl.lit(" · guidance ") + pl.col("guidance"),
        pl.lit(" · ") + pl.col("dataset").fill_null("?") if several else pl.lit(None),
        ignore_nulls=True,
    )
    dated = dated.with_columns(line.alias("model_label")).with_columns(
        pl.format("{} · {}", "model_label", "day").alias("point")
    )
    points = groups.pooled(
        runs.filter(pl.col("run_id").is_in(dated.get_column("run_id").implode())),
        by=dated.select("run_id", pl.col("point").alias("group")),
    )
    per_point = dated.group_by("point").agg(
        pl.col("model_label").first(),
        pl.col("day").first().alias("when"),
        pl.len().alias("runs_pooled"),
        pl.col("group").sort_by("started_at").last().alias("latest_group"),
        pl.when((pl.col("status") == "partial").any())
        .then(pl.lit("partial run"))
        .otherwise(pl.lit("complete run"))
        .alias("completeness"),
    )
    s = summary(points).rename({"run_id": "point"}).join(per_point, on="point")
    measures = {
        PASS_LABEL: "pass_rate",
        OVERALL_LABEL: "overall_rate",
        "tool call success rate": "tool_call_success_rate",
    }
    keep = [
        "model_label",
        "point",
        "runs_pooled",
        "when",
        "completeness",
        "total_tasks",
        "missing_tasks",
    ]
    data = by_measure(s, keep, measures)
    latest = s.sort("when").group_by("model_label", maintain_order=True).last()
    series = sorted(latest.get_column("model_label").to_list())
    colour = dict(latest.select("model_label", "latest_group").iter_rows())
    base = alt.Chart().encode(
        x=alt.X("when:T", title="day the runs started (UTC)", scale=alt.Scale(padding=14)),
        color=alt.Color(
            "model_label:N",
            title="model",
            scale=alt.Scale(domain=series, range=[colour_of[colour[m]] for m in series]),
            legend=bottom_legend(),
        ),
        tooltip=[
            alt.Tooltip("model_label:N", title="model"),
            alt.Tooltip("when:T", title="day", format="%Y-%m-%d"),
            alt.Tooltip("runs_pooled:Q", title="runs pooled"),
            alt.Tooltip("total_tasks:Q", title="tasks"),
            alt.Tooltip("completeness:N", title="run"),
            alt.Tooltip("missing_tasks:Q", title="tasks missing"),
            *rate_tooltip(),
        ],
    )
    y = alt.Y("value:Q", title="rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    shape = alt.Shape(
        "completeness:N",
        title=None,
        scale=alt.Scale(domain=["complete run", "partial run"], range=["circle", "cross"]),
        legend=bottom_legend(),
    )
    layered = alt.layer(
        base.mark_line().encode(y=y),
        base.mark_point(filled=True, size=60).encode(y=y, shape=shape),
        base.mark_rule(strokeWidth=2, opacity=0.5).encode(y="lo:Q", y2="hi:Q"),
        data=data,
    ).properties(width=240, height=200)
    return layered.facet(
        column=alt.Column("measure:N", title=None, sort=list(measures))
    ).properties(
        title=chart_title(
            title,
            runs,
            "Points: a model family's runs of one day, pooled; vertical lines: 95% interval.",
            "Crosses: partial runs (tasks missing): their rates cover only the tasks present.",
        )
    )
