"""The task matrix: each task's outcome per model, coloured by spec 000's diagnosis.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> task_matrix(Runs.empty()).to_dict()["title"]["text"]
    'Task outcomes by model'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb._analysis import diagnostics
from evalnb._analysis.runs import Runs
from evalnb._present.charts.parts import (
    chart_title,
    labels,
    longest,
    nothing_to_draw,
)

MAX_MATRIX_TASKS = 120
"""The task matrix shows at most this many tasks (the most-failed first)."""
_DIAGNOSIS_COLOURS = {
    "tool limitation": "#E45756",
    "all models fail": "#F58518",
    "model capability difference": "#B279A2",
    "not enough attempts": "#BAB0AC",
    "reasoning efficiency gap": "#72B7B2",
    "cost efficiency gap": "#EECA3B",
    "consistent": "#54A24B",
    "single model": "#9D755D",
    "tool missing builtins for domain": "#4C78A8",
}


def task_matrix(runs: Runs) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Task x model pass/fail, coloured by spec 000's cross-model diagnosis of the task.

    Straight from :func:`evalnb._analysis.diagnostics.diagnose` (the latest run of each model; a
    model passes a task when it passed most of its attempts). Failed cells are solid,
    passed cells faded. Tasks are sorted by how many models passed them, so tasks that
    every model failed come first (spec 000: likely sandbox limitations); at most
    :data:`MAX_MATRIX_TASKS` are shown.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; only the latest run of each
        model is read.

    Returns
    -------
    altair.LayerChart | altair.FacetChart | altair.Chart
        A grid of cells (task by model) coloured by diagnosis, layered with its text; or,
        when the runs hold no task, a text chart saying so.

    See Also
    --------
    evalnb.diagnose : The diagnosis drawn.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = task_matrix(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['rect', 'text'])
    >>> rows = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> rows.select("task_id", "model", "outcome", "diagnosis").sort("task_id", "model")
    shape: (6, 4)
    ┌────────────────────┬─────────────┬─────────┬─────────────────────┐
    │ task_id            ┆ model       ┆ outcome ┆ diagnosis           │
    │ ---                ┆ ---         ┆ ---     ┆ ---                 │
    │ str                ┆ str         ┆ str     ┆ str                 │
    ╞════════════════════╪═════════════╪═════════╪═════════════════════╡
    │ smoke_count_words  ┆ sim/careful ┆ pass    ┆ not enough attempts │
    │ smoke_count_words  ┆ sim/hasty   ┆ fail    ┆ not enough attempts │
    │ smoke_jq_fields    ┆ sim/careful ┆ pass    ┆ not enough attempts │
    │ smoke_jq_fields    ┆ sim/hasty   ┆ fail    ┆ not enough attempts │
    │ smoke_make_project ┆ sim/careful ┆ pass    ┆ consistent          │
    │ smoke_make_project ┆ sim/hasty   ┆ pass    ┆ consistent          │
    └────────────────────┴─────────────┴─────────┴─────────────────────┘
    """
    title = "Task outcomes by model"
    diagnosed = diagnostics.diagnose(runs)
    if diagnosed.height == 0:
        return nothing_to_draw(title, "No tasks in these runs.", runs)
    diagnosed = diagnosed.with_columns(
        pl.col("passed_by").list.len().alias("models_passed"),
        pl.col("evidence").list.join("; ").alias("evidence"),
    ).sort("models_passed", "task_id")
    shown = diagnosed.head(MAX_MATRIX_TASKS)
    model_labels = labels(runs).join(runs.runs.select("run_id", "model"), on="run_id")
    model_labels = model_labels.group_by("model").agg(pl.col("model_label").first())
    cells = (
        pl.concat(
            [
                shown.select("task_id", "diagnosis", "evidence", pl.col(side).alias("model"))
                .explode("model")
                .with_columns(pl.lit(outcome).alias("outcome"))
                for side, outcome in (("passed_by", "pass"), ("failed_by", "fail"))
            ]
        )
        .drop_nulls("model")
        .join(model_labels, on="model", how="left")
    )
    diagnoses = [d for d in diagnostics.DIAGNOSES if d in set(cells.get_column("diagnosis"))]
    base = alt.Chart(cells).encode(
        x=alt.X(
            "model_label:N",
            title=None,
            sort=sorted(set(cells.get_column("model_label"))),
            axis=alt.Axis(orient="top", labelAngle=0),
        ),
        y=alt.Y("task_id:N", title=None, sort=shown.get_column("task_id").to_list()),
        tooltip=[
            alt.Tooltip("task_id:N", title="task"),
            alt.Tooltip("model_label:N", title="model"),
            alt.Tooltip("outcome:N", title="outcome"),
            alt.Tooltip("diagnosis:N", title="diagnosis"),
            alt.Tooltip("evidence:N", title="evidence"),
        ],
    )
    rects = base.mark_rect(stroke="white", strokeWidth=1.5).encode(
        color=alt.Color(
            "diagnosis:N",
            title="diagnosis (spec 000)",
            scale=alt.Scale(domain=diagnoses, range=[_DIAGNOSIS_COLOURS[d] for d in diagnoses]),
            legend=alt.Legend(orient="bottom", columns=2, labelLimit=320),
        ),
        opacity=alt.condition(alt.datum.outcome == "pass", alt.value(0.35), alt.value(1.0)),
    )
    text = base.mark_text(fontSize=10, color="#222").encode(text="outcome:N")
    notes = [
        "Latest run of each model; solid = failed, faded = passed."
        " Tasks every model failed come first (spec 000: likely sandbox limitations)."
    ]
    if diagnosed.height > shown.height:
        notes.append(f"Showing the {shown.height} most-failed of {diagnosed.height} tasks.")
    return alt.layer(rects, text).properties(
        title=chart_title(title, runs, *notes),
        width=alt.Step(max(80, 8 * longest(cells, "model_label"))),
        height=alt.Step(18),
    )
