"""The parts every chart shares: run labels, rate bars with their intervals, boxes, titles.

A chart draws pooled model groups (:func:`evalnb._present.groups.pooled`): its
``run_label`` is the group, coloured the same in every chart (:func:`run_color`), and
its title carries the notes and, for simulated runs, :data:`SIMULATED_NOTE`.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> chart_title("Pass rate", Runs.empty(), "a note").subtitle
    ['a note']
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.runs import Runs
from evalnb._present import groups

SIMULATED_NOTE = "(simulated) = an offline persona, not a real model"
PASS_LABEL = "pass rate (every check passed)"
OVERALL_LABEL = "overall rate (weighted checks)"
PICK = "pick"
"""The click selection of the drill-down charts: a heatmap cell (``run_label`` and
``category``) or a rate bar (``run_label``). A click picks, shift-click adds, a double
click clears; :mod:`evalnb._present.widgets` lists the tasks behind the pick."""


def labels(runs: Runs) -> pl.DataFrame:
    """One row per run: ``run_id``, ``model_label`` and ``run_label``.

    ``model_label`` is the model with " (simulated)" appended for simulated runs;
    ``run_label`` is the same, plus the run id where several runs share a model.

    Parameters
    ----------
    runs : Runs
        The runs to label; only their ``runs`` table (``run_id``, ``model``,
        ``simulated``) is read.

    Returns
    -------
    polars.DataFrame
        Columns ``run_id``, ``model_label`` and ``run_label`` (strings), one row per run
        in the order of ``runs.runs``.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> labels(example_runs())
    shape: (2, 3)
    ┌─────────┬─────────────────────────┬─────────────────────────┐
    │ run_id  ┆ model_label             ┆ run_label               │
    │ ---     ┆ ---                     ┆ ---                     │
    │ str     ┆ str                     ┆ str                     │
    ╞═════════╪═════════════════════════╪═════════════════════════╡
    │ careful ┆ sim/careful (simulated) ┆ sim/careful (simulated) │
    │ hasty   ┆ sim/hasty (simulated)   ┆ sim/hasty (simulated)   │
    └─────────┴─────────────────────────┴─────────────────────────┘

    Two runs of one model are told apart by their run ids:

    >>> runs = pl.DataFrame({"run_id": ["a", "b", "c"], "model": ["m", "m", "s"],
    ...                      "simulated": [False, False, True]})
    >>> labels(Runs(runs, *[pl.DataFrame()] * 6)).get_column("run_label").to_list()
    ['m · a', 'm · b', 's (simulated)']
    """
    base = runs.runs.select(
        "run_id",
        pl.when(pl.col("simulated").fill_null(False))
        .then(pl.col("model") + " (simulated)")
        .otherwise(pl.col("model"))
        .alias("model_label"),
    )
    shared = pl.col("model_label").count().over("model_label") > 1
    return base.sort("model_label", "run_id").with_columns(
        pl.when(shared)
        .then(pl.col("model_label") + " · " + pl.col("run_id"))
        .otherwise(pl.col("model_label"))
        .alias("run_label")
    )


def rate_bars(
    data: pl.DataFrame,
    *,
    category: alt.Y,
    offset: alt.YOffset | None,
    color: alt.Color,
    tooltip: list[alt.Tooltip],
) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars of ``value`` (0-100%) with a black ``lo``-``hi`` interval line.

    A click on a bar picks its ``run_label`` (:data:`PICK`); the other bars fade.
    """
    enc: dict[str, Any] = {"y": category, "tooltip": tooltip}
    if offset:
        enc["yOffset"] = offset
    base = alt.Chart(data).encode(**enc)
    pick = pick_selection("run_label")
    bars = (
        base.mark_bar()
        .encode(
            x=alt.X("value:Q", title="rate (95% interval)", scale=alt.Scale(domain=[0, 1])).axis(
                format="%"
            ),
            color=color,
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.55)),
        )
        .add_params(pick)
    )
    whiskers = base.mark_rule(color="#222", strokeWidth=1.5).encode(x="lo:Q", x2="hi:Q")
    return alt.layer(bars, whiskers).properties(width=380)


def pick_selection(*fields: str) -> alt.Parameter:
    """The :data:`PICK` point selection on ``fields``; nothing is picked until a click."""
    return alt.selection_point(name=PICK, fields=list(fields))


def rate_tooltip() -> list[alt.Tooltip]:
    return [
        alt.Tooltip("value:Q", title="rate", format=fmt.RATE_FORMAT),
        alt.Tooltip("lo:Q", title="95% low", format=fmt.RATE_FORMAT),
        alt.Tooltip("hi:Q", title="95% high", format=fmt.RATE_FORMAT),
    ]


def threshold_rule(value: float, text: str, fmt: str = "%") -> alt.LayerChart | alt.FacetChart:
    """A dashed vertical reference line at ``value`` with a label at the top."""
    ref = alt.Chart(pl.DataFrame({"value": [value], "text": [text]}))
    return alt.layer(
        ref.mark_rule(color="#C0392B", strokeDash=[5, 3], strokeWidth=1.5).encode(x="value:Q"),
        ref.mark_text(
            align="left", baseline="top", dx=4, dy=2, color="#C0392B", fontSize=10
        ).encode(x="value:Q", y=alt.value(0), text="text:N"),
    )


def box(
    frame: pl.DataFrame, column: str, axis_title: str, runs: Runs
) -> alt.LayerChart | alt.FacetChart:
    """A horizontal box per ``run_label`` of ``column``, summarised in polars first."""
    value = pl.col(column)
    stats = (
        frame.filter(value.is_not_null())
        .group_by("run_label")
        .agg(
            pl.len().alias("n"),
            value.min().alias("min"),
            value.quantile(0.25, "linear").alias("q1"),
            value.median().alias("median"),
            value.quantile(0.75, "linear").alias("q3"),
            value.max().alias("max"),
            value.mean().alias("mean"),
        )
        .sort("run_label")
    )
    base = alt.Chart(stats).encode(
        y=run_y(runs),
        color=run_color(runs, legend=False),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("n:Q", title="tasks"),
            *[
                alt.Tooltip(f"{k}:Q", title=k, format=",.4~f")
                for k in ("min", "q1", "median", "q3", "max", "mean")
            ],
        ],
    )
    x = alt.X("min:Q", title=axis_title, scale=alt.Scale(zero=False), axis=alt.Axis(format="~s"))
    return alt.layer(
        base.mark_rule(strokeWidth=1.5).encode(x=x, x2="max:Q"),
        base.mark_bar(size=16).encode(x="q1:Q", x2="q3:Q"),
        base.mark_tick(color="white", thickness=2, size=16).encode(x="median:Q"),
        base.mark_point(shape="diamond", filled=True, color="#222", size=40).encode(x="mean:Q"),
    ).properties(width=200, height=alt.Step(26))


def by_measure(frame: pl.DataFrame, keep: list[str], measures: dict[str, str]) -> pl.DataFrame:
    """``frame`` long by measure: the ``keep`` columns, ``measure`` (a label of
    ``measures``), and its column's ``value`` with ``lo``/``hi`` (``<column>_lo``/``_hi``)."""
    return pl.concat(
        [
            frame.select(
                *keep,
                pl.lit(name).alias("measure"),
                pl.col(col).alias("value"),
                pl.col(f"{col}_lo").alias("lo"),
                pl.col(f"{col}_hi").alias("hi"),
            )
            for name, col in measures.items()
        ]
    )


def nothing_to_draw(title: str, text: str, runs: Runs) -> alt.Chart:
    """A chart that only says why there is nothing to draw."""
    chart: alt.Chart = (
        alt.Chart(pl.DataFrame({"text": [text]}))
        .mark_text(fontSize=13, color="#555")
        .encode(text="text:N")
        .properties(title=chart_title(title, runs), width=420, height=60)
    )
    return chart


def run_order(runs: Runs) -> list[str]:
    """The group labels of pooled ``runs`` in display order (sorted)."""
    return sorted(runs.runs.get_column("run_id").to_list())


def run_y(runs: Runs, **kwargs: Any) -> alt.Y:
    return alt.Y("run_label:N", title=None, sort=run_order(runs), **kwargs)


def run_color(runs: Runs, legend: bool = True, data: pl.DataFrame | None = None) -> alt.Color:
    """Colour by group with a fixed palette: a model keeps its colour in every chart.

    With ``data``, the legend lists only the groups that have rows in it.
    """
    order = run_order(runs)
    colour = dict(zip(order, groups.colours(order), strict=True))
    shown = order if data is None else [g for g in order if g in set(data.get_column("run_label"))]
    return alt.Color(
        "run_label:N",
        title="model",
        scale=alt.Scale(domain=shown, range=[colour[g] for g in shown]),
        legend=bottom_legend() if legend else None,
    )


def group_axis() -> alt.Axis:
    """A model axis on top, labels slanted so long model names neither widen nor get cut."""
    return alt.Axis(orient="top", labelAngle=-35, labelLimit=0, labelAlign="left")


def bottom_legend() -> alt.Legend:
    return alt.Legend(orient="bottom", direction="vertical")


def longest(frame: pl.DataFrame, column: str) -> int:
    """Length of the longest string in ``column`` (0 for an empty frame)."""
    return (
        int(frame.select(pl.col(column).str.len_chars().max()).item() or 0) if frame.height else 0
    )


def with_labels(frame: pl.DataFrame, runs: Runs) -> pl.DataFrame:
    """Add ``run_label`` (the run id: a group label once pooled) and ``model_label``."""
    model_label = (
        pl.when(pl.col("simulated").fill_null(False))
        .then(pl.col("model") + " (simulated)")
        .otherwise(pl.col("model"))
    )
    named = runs.runs.select("run_id", model_label.alias("model_label"))
    return frame.join(named, on="run_id", how="left").with_columns(
        pl.col("run_id").alias("run_label")
    )


def chart_title(text: str, runs: Runs, *notes: str) -> alt.Title:
    """A chart title whose subtitle holds ``notes`` and, if needed, the simulated note."""
    sim = runs.runs.get_column("simulated").fill_null(False).any() if runs.runs.height else False
    subtitle = [*notes, *([SIMULATED_NOTE] if sim else [])]
    return alt.Title(text, subtitle=subtitle) if subtitle else alt.Title(text)
