"""Rate charts: pass rate and overall rate per model and category, natural stops, pass@k.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> rates_by_model(Runs.empty()).to_dict()["title"]["text"]
    'Pass rate and overall rate by model'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb import _display as fmt
from evalnb._analysis import pass_at_k
from evalnb._analysis.categories import by_category
from evalnb._analysis.rates import clustered_interval
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._present import groups
from evalnb._present.charts.parts import (
    OVERALL_LABEL,
    PASS_LABEL,
    bottom_legend,
    by_measure,
    chart_title,
    group_axis,
    nothing_to_draw,
    pick_selection,
    rate_bars,
    rate_tooltip,
    run_color,
    run_order,
    run_y,
    with_labels,
)
from evalnb._present.charts.style import NEUTRAL

PASS_AT_K_MEASURES = {"pass@k (one of k passes)": "pass_at_k", "pass^k (all k pass)": "pass_hat_k"}
"""The two curves of :func:`pass_at_k_curves`: label: column."""


def rates_by_model(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Pass rate and overall rate per run, side by side, each with its 95% interval.

    Pass rate counts tasks whose every check passed; overall rate is weighted check
    score over maximum score. Both, and their 95% intervals clustered by task, come from
    :func:`evalnb._analysis.summary.summary`.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.LayerChart | altair.FacetChart
        Horizontal bars (one per model group and measure) layered with black interval
        rules; a click on a bar picks its model (:data:`PICK`).

    See Also
    --------
    category_heatmap : The pass rate per category.
    evalnb.summary : The figures drawn.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = rates_by_model(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['bar', 'rule'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.select("run_label", "value", "count").with_columns(pl.col("value").round(2))
    shape: (4, 3)
    ┌─────────────────────────┬───────┬────────────────────────┐
    │ run_label               ┆ value ┆ count                  │
    │ ---                     ┆ ---   ┆ ---                    │
    │ str                     ┆ f64   ┆ str                    │
    ╞═════════════════════════╪═══════╪════════════════════════╡
    │ sim/careful (simulated) ┆ 1.0   ┆ 6/6 tasks passed       │
    │ sim/hasty (simulated)   ┆ 0.5   ┆ 3/6 tasks passed       │
    │ sim/careful (simulated) ┆ 1.0   ┆ 18.0/18.0 check weight │
    │ sim/hasty (simulated)   ┆ 0.67  ┆ 12.0/18.0 check weight │
    └─────────────────────────┴───────┴────────────────────────┘
    """
    runs = groups.pooled(runs)
    s = with_labels(summary(runs), runs)
    measures = [
        (PASS_LABEL, "pass_rate", pl.format("{}/{} tasks passed", "total_passed", "total_tasks")),
        (
            OVERALL_LABEL,
            "overall_rate",
            pl.format("{}/{} check weight", "total_score", "total_max_score"),
        ),
    ]
    data = pl.concat(
        [
            s.select(
                "run_label",
                pl.lit(name).alias("measure"),
                pl.col(col).alias("value"),
                pl.col(f"{col}_lo").alias("lo"),
                pl.col(f"{col}_hi").alias("hi"),
                count.alias("count"),
            )
            for name, col, count in measures
        ]
    )
    order = [PASS_LABEL, OVERALL_LABEL]
    return rate_bars(
        data,
        category=run_y(runs),
        offset=alt.YOffset("measure:N", sort=order),
        color=alt.Color(
            "measure:N",
            title=None,
            sort=order,
            scale=alt.Scale(domain=order, range=NEUTRAL),
            legend=bottom_legend(),
        ),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("measure:N", title="measure"),
            *rate_tooltip(),
            alt.Tooltip("count:N", title="from"),
        ],
    ).properties(
        title=chart_title(
            "Pass rate and overall rate by model",
            runs,
            "Bars: rate; black lines: 95% interval, clustered by task.",
        ),
        height=alt.Step(22),
    )


def category_heatmap(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Pass rate per model and category, each cell annotated ``passed/total``.

    Colour is the category pass rate; the tooltip adds its 95% interval and the
    weighted check rate (spec 000 ``CategorySummary.rate``). From
    :func:`evalnb._analysis.categories.by_category`.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.LayerChart | altair.FacetChart
        A grid of coloured cells (category by model) layered with their
        ``passed/total`` text.

    See Also
    --------
    evalnb.by_category : The figures drawn.
    tool_success : The same grid of tool call success.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = category_heatmap(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['rect', 'text'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.select("model", "category", "cell", "pass_rate").sort("model", "category")
    shape: (6, 4)
    ┌─────────────┬─────────────────┬──────┬───────────┐
    │ model       ┆ category        ┆ cell ┆ pass_rate │
    │ ---         ┆ ---             ┆ ---  ┆ ---       │
    │ str         ┆ str             ┆ str  ┆ f64       │
    ╞═════════════╪═════════════════╪══════╪═══════════╡
    │ sim/careful ┆ file_operations ┆ 2/2  ┆ 1.0       │
    │ sim/careful ┆ json_processing ┆ 2/2  ┆ 1.0       │
    │ sim/careful ┆ text_processing ┆ 2/2  ┆ 1.0       │
    │ sim/hasty   ┆ file_operations ┆ 2/2  ┆ 1.0       │
    │ sim/hasty   ┆ json_processing ┆ 0/2  ┆ 0.0       │
    │ sim/hasty   ┆ text_processing ┆ 1/2  ┆ 0.5       │
    └─────────────┴─────────────────┴──────┴───────────┘
    """
    runs = groups.pooled(runs)
    data = with_labels(by_category(runs), runs).with_columns(
        pl.format("{}/{}", "passed", "tasks").alias("cell")
    )
    base = alt.Chart(data).encode(
        x=alt.X(
            "run_label:N",
            title=None,
            sort=run_order(runs),
            axis=group_axis(),
        ),
        y=alt.Y("category:N", title="category", axis=alt.Axis(labelLimit=0)),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("category:N", title="category"),
            alt.Tooltip("cell:N", title="tasks passed"),
            alt.Tooltip("pass_rate:Q", title="pass rate", format=fmt.RATE_FORMAT),
            alt.Tooltip("pass_rate_lo:Q", title="95% low", format=fmt.RATE_FORMAT),
            alt.Tooltip("pass_rate_hi:Q", title="95% high", format=fmt.RATE_FORMAT),
            alt.Tooltip("rate:Q", title="weighted check rate", format=fmt.RATE_FORMAT),
        ],
    )
    pick = pick_selection("run_label", "category")
    cells = (
        base.mark_rect(strokeWidth=2)
        .encode(
            stroke=alt.condition(pick, alt.value("#222"), alt.value("white"), empty=False),
            color=alt.Color(
                "pass_rate:Q",
                title="pass rate",
                scale=alt.Scale(scheme="blues", domain=[0, 1]),
                legend=alt.Legend(format="%", orient="right"),
            ),
        )
        .add_params(pick)
    )
    text = base.mark_text(fontSize=12).encode(
        text="cell:N",
        color=alt.condition(alt.datum.pass_rate > 0.55, alt.value("white"), alt.value("#222")),
    )
    return alt.layer(cells, text).properties(
        title=chart_title(
            "Pass rate by category",
            runs,
            "Cell: tasks passed / tasks. Spec 000 healthy profile: no category below 70%.",
            "Hover a cell for its 95% interval and weighted check rate;"
            " in the explorer, click it for its tasks.",
        ),
        width=alt.Step(64),
        height=alt.Step(22),
    )


def natural_stop(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Share of task attempts the model ended itself (``natural_stop``), 95% clustered by task.

    Spec 000: a frequent ``natural_stop == false`` means the turn limit was reached
    without converging. The bar equals ``summary``'s ``natural_stop_rate``.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.LayerChart | altair.FacetChart
        A horizontal bar per model group layered with its black interval rule.

    See Also
    --------
    evalnb.summary : Its ``natural_stop_rate``.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = natural_stop(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['bar', 'rule'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.select("run_label", "stops", "tasks", "value").sort("run_label")
    shape: (2, 4)
    ┌─────────────────────────┬───────┬───────┬───────┐
    │ run_label               ┆ stops ┆ tasks ┆ value │
    │ ---                     ┆ ---   ┆ ---   ┆ ---   │
    │ str                     ┆ i64   ┆ i64   ┆ f64   │
    ╞═════════════════════════╪═══════╪═══════╪═══════╡
    │ sim/careful (simulated) ┆ 6     ┆ 6     ┆ 1.0   │
    │ sim/hasty (simulated)   ┆ 6     ┆ 6     ┆ 1.0   │
    └─────────────────────────┴───────┴───────┴───────┘
    """
    runs = groups.pooled(runs)
    counts = runs.tasks.group_by("run_id").agg(
        pl.col("natural_stop").sum().alias("stops"), pl.col("natural_stop").count().alias("tasks")
    )
    rows = runs.tasks.filter(pl.col("natural_stop").is_not_null()).with_columns(
        pl.col("natural_stop").cast(pl.Float64).alias("_stop"), pl.lit(1.0).alias("_one")
    )
    limits = clustered_interval(rows, ["run_id"], "_stop", "_one", "v", counts=True)
    data = with_labels(
        counts.with_columns((pl.col("stops") / pl.col("tasks")).alias("value")).join(
            limits.rename({"v_lo": "lo", "v_hi": "hi"}), on="run_id", how="left"
        ),
        runs,
    )
    return rate_bars(
        data,
        category=run_y(runs),
        offset=None,
        color=run_color(runs, legend=False),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            *rate_tooltip(),
            alt.Tooltip("stops:Q", title="natural stops"),
            alt.Tooltip("tasks:Q", title="tasks"),
        ],
    ).properties(
        title=chart_title(
            "Natural stop: the model ended the task itself",
            runs,
            "The rest hit the turn limit (or errored); lines: 95% interval, clustered by task.",
        ),
        height=alt.Step(24),
    )


def pass_at_k_curves(runs: Runs) -> alt.FacetChart | alt.Chart:
    """pass@k and pass^k over k per model (:func:`evalnb._analysis.pass_at_k.pass_at_k`).

    For k from 1 to the most attempts any task has in a model group: pass@k (at least
    one of k attempts passes) rises with k, pass^k (all k pass: reliability) falls;
    the gap between them is the model's inconsistency. Each point carries its 95%
    interval. Groups whose tasks have a single attempt give a point at k = 1 only; with
    no task attempted twice the chart says so.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.FacetChart | altair.Chart
        One panel per measure (:data:`PASS_AT_K_MEASURES`), a line per model group with
        interval rules; or, with no task attempted twice, a text chart saying so.

    See Also
    --------
    evalnb.pass_at_k : The figures drawn.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = pass_at_k_curves(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["spec"].get("layer")]
    ('FacetChart', ['line', 'rule'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.filter(pl.col("model_label").str.starts_with("sim/hasty")).select(
    ...     "measure", "k", pl.col("value").round(2)
    ... ).sort("measure", "k")
    shape: (4, 3)
    ┌──────────────────────────┬─────┬───────┐
    │ measure                  ┆ k   ┆ value │
    │ ---                      ┆ --- ┆ ---   │
    │ str                      ┆ i64 ┆ f64   │
    ╞══════════════════════════╪═════╪═══════╡
    │ pass@k (one of k passes) ┆ 1   ┆ 0.5   │
    │ pass@k (one of k passes) ┆ 2   ┆ 0.67  │
    │ pass^k (all k pass)      ┆ 1   ┆ 0.5   │
    │ pass^k (all k pass)      ┆ 2   ┆ 0.33  │
    └──────────────────────────┴─────┴───────┘
    """
    runs = groups.pooled(runs)
    title = "pass@k and pass^k over k"
    most = runs.tasks.group_by("run_id", "task_id").len().get_column("len").max()
    if not isinstance(most, int) or most < 2:
        return nothing_to_draw(title, "No task was attempted more than once: k = 1 only.", runs)
    frame = pass_at_k.pass_at_k(runs, k=range(1, most + 1)).filter(pl.col("tasks") > 0)
    data = with_labels(by_measure(frame, ["run_id", "k", "tasks"], PASS_AT_K_MEASURES), runs)
    base = alt.Chart().encode(
        x=alt.X("k:Q", title="k (attempts)", axis=alt.Axis(values=list(range(1, most + 1)))),
        color=run_color(runs, data=data),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("measure:N"),
            alt.Tooltip("k:Q"),
            alt.Tooltip("tasks:Q", title="tasks with k or more attempts"),
            *rate_tooltip(),
        ],
    )
    y = alt.Y("value:Q", title="rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    layered = alt.layer(
        base.mark_line(point=True).encode(y=y),
        base.mark_rule(strokeWidth=2, opacity=0.5).encode(y="lo:Q", y2="hi:Q"),
        data=data,
    ).properties(width=260, height=220)
    return layered.facet(
        column=alt.Column("measure:N", title=None, sort=list(PASS_AT_K_MEASURES))
    ).properties(
        title=chart_title(
            title,
            runs,
            "pass@k: at least one of k attempts passes; pass^k: all k pass. Vertical lines: "
            "95% interval, clustered by task.",
        )
    )
