"""Altair charts of evaluation runs: one function per question, one theme, export by suffix.

Every chart function takes a :class:`~evalnb.frames.Runs` and returns an altair chart.
The figures come from :mod:`evalnb.metrics`, :mod:`evalnb.interaction` and
:mod:`evalnb.diagnostics`; large tables are aggregated in polars before anything
reaches altair, so a chart's data stays a few hundred rows whatever the input size.
Every rate is drawn with its 95% interval. Runs made by an offline persona
(``runs.simulated``) carry "(simulated)" in their label and the chart says so.

Example:
    >>> from evalnb.frames import Runs
    >>> chart = rates_by_model(Runs.empty())
    >>> chart.to_dict()["title"]["text"]
    'Pass rate and overall rate by model'
"""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl

from evalnb import metrics
from evalnb.frames import Runs

THEME = "evalnb"
HEALTHY_TOOL_SUCCESS = 0.8
"""Spec 000 healthy profile: tool call success rate above 80%."""
HEALTHY_AVG_TURNS = 5
"""Spec 000 healthy profile: fewer than 5 turns per task on average."""
MAX_MATRIX_TASKS = 120
"""The task matrix shows at most this many tasks (the most-failed first)."""

SIMULATED_NOTE = "(simulated) = an offline persona, not a real model"
PASS_LABEL = "pass rate (every check passed)"
OVERALL_LABEL = "overall rate (weighted checks)"
_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
_PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#B279A2",
    "#E45756",
    "#72B7B2",
    "#9D755D",
    "#EECA3B",
    "#FF9DA6",
    "#BAB0AC",
]


@alt.theme.register(THEME, enable=True)
def theme() -> alt.theme.ThemeConfig:
    """The evalnb theme: white background, readable fonts, one colour palette.

    Registered and enabled when this module is imported; :func:`save` always uses it.

    Example:
        >>> theme()["config"]["range"]["category"][0]
        '#4C78A8'
    """
    return {
        "background": "white",
        "padding": 12,
        "config": {
            "font": _FONT,
            "view": {"stroke": None, "continuousWidth": 360, "continuousHeight": 240},
            "title": {
                "fontSize": 15,
                "subtitleFontSize": 11,
                "subtitleColor": "#555",
                "anchor": "start",
                "offset": 10,
            },
            "axis": {
                "labelFontSize": 11,
                "titleFontSize": 12,
                "titleFontWeight": "normal",
                "gridColor": "#e6e6e6",
                "labelLimit": 220,
            },
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 260},
            "range": {"category": _PALETTE},
            "bar": {"color": _PALETTE[0]},
            "line": {"color": _PALETTE[0]},
        },
    }


def save(chart: alt.TopLevelMixin, path: str | Path) -> Path:
    """Write a chart to ``path``: PNG, SVG, PDF or self-contained HTML, chosen by suffix.

    Rendering is offline (vl-convert); parent folders are created. Any other
    suffix raises ValueError.

    Example:
        >>> import tempfile
        >>> from evalnb.frames import Runs
        >>> out = save(rates_by_model(Runs.empty()), Path(tempfile.mkdtemp()) / "a" / "r.svg")
        >>> "<svg" in out.read_text()
        True
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in {"png", "svg", "pdf", "html"}:
        raise ValueError(f"{path}: unknown chart format {path.suffix!r} (use .png .svg .pdf .html)")
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = {"scale_factor": 2} if fmt == "png" else {"inline": True} if fmt == "html" else {}
    with alt.theme.enable(THEME):
        chart.save(path, format=fmt, **extra)
    return path


def labels(runs: Runs) -> pl.DataFrame:
    """One row per run: ``run_id``, ``model_label`` and ``run_label``.

    ``model_label`` is the model with " (simulated)" appended for simulated runs;
    ``run_label`` is the same, plus the run id where several runs share a model.

    Example:
        >>> runs = pl.DataFrame({"run_id": ["a", "b", "c"], "model": ["m", "m", "s"],
        ...                      "simulated": [False, False, True]})
        >>> labels(Runs(runs, *[pl.DataFrame()] * 5)).get_column("run_label").to_list()
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
    return base.with_columns(
        pl.when(shared)
        .then(pl.col("model_label") + " · " + pl.col("run_id"))
        .otherwise(pl.col("model_label"))
        .alias("run_label")
    )


def rates_by_model(runs: Runs) -> alt.LayerChart:
    """Pass rate and overall rate per run, side by side, each with its 95% interval.

    Pass rate counts tasks whose every check passed (Wilson interval); overall rate is
    weighted check score over maximum score (task-clustered bootstrap interval).

    Example:
        >>> from evalnb.frames import Runs
        >>> rates_by_model(Runs.empty()).to_dict()["layer"][0]["mark"]["type"]
        'bar'
    """
    s = _with_labels(metrics.summary(runs), runs)
    passes = s.select(
        "run_label",
        pl.lit(PASS_LABEL).alias("measure"),
        pl.col("pass_rate").alias("value"),
        pl.col("pass_rate_lo").alias("lo"),
        pl.col("pass_rate_hi").alias("hi"),
        pl.format("{}/{} tasks passed", "total_passed", "total_tasks").alias("count"),
    )
    overall = s.select(
        "run_label",
        pl.lit(OVERALL_LABEL).alias("measure"),
        pl.col("overall_rate").alias("value"),
        pl.col("overall_rate_lo").alias("lo"),
        pl.col("overall_rate_hi").alias("hi"),
        pl.format("{}/{} check weight", "total_score", "total_max_score").alias("count"),
    )
    data = pl.concat([passes, overall])
    x = alt.X("run_label:N", title="model", sort=None, axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("measure:N", sort=[PASS_LABEL, OVERALL_LABEL])
    tooltip = [
        alt.Tooltip("run_label:N", title="model"),
        alt.Tooltip("measure:N", title="measure"),
        alt.Tooltip("value:Q", title="rate", format=".1%"),
        alt.Tooltip("lo:Q", title="95% low", format=".1%"),
        alt.Tooltip("hi:Q", title="95% high", format=".1%"),
        alt.Tooltip("count:N", title="from"),
    ]
    base = alt.Chart(data).encode(x=x, xOffset=offset, tooltip=tooltip)
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title="rate (95% interval)", scale=alt.Scale(domain=[0, 1])).axis(
            format="%"
        ),
        color=alt.Color(
            "measure:N",
            title=None,
            sort=[PASS_LABEL, OVERALL_LABEL],
            legend=alt.Legend(orient="bottom"),
        ),
    )
    whiskers = base.mark_rule(color="#222", strokeWidth=1.5).encode(y="lo:Q", y2="hi:Q")
    return alt.layer(bars, whiskers).properties(
        title=_title("Pass rate and overall rate by model", runs),
        width=alt.Step(46),
        height=260,
    )


def _with_labels(frame: pl.DataFrame, runs: Runs) -> pl.DataFrame:
    """Join the run and model labels onto a frame with a ``run_id`` column."""
    return frame.join(labels(runs), on="run_id", how="left")


def _title(text: str, runs: Runs, *notes: str) -> alt.Title:
    """A chart title whose subtitle holds ``notes`` and, if needed, the simulated note."""
    sim = runs.runs.get_column("simulated").fill_null(False).any() if runs.runs.height else False
    subtitle = [*notes, *([SIMULATED_NOTE] if sim else [])]
    return alt.Title(text, subtitle=subtitle) if subtitle else alt.Title(text)
