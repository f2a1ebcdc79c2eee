"""Altair charts of evaluation runs: one function per question, one theme, export by suffix.

Every chart function takes a :class:`~evalnb.analysis.runs.Runs` and returns an altair chart.
The figures come from :mod:`evalnb.analysis.metrics`, :mod:`evalnb.analysis.interaction` and
:mod:`evalnb.analysis.diagnostics`; large tables are aggregated in polars before anything
reaches altair, so a chart's data stays a few hundred rows whatever the input size.
Every rate is drawn with its 95% interval. Runs made by an offline persona
(``runs.simulated``) carry "(simulated)" in their label and the chart says so.

Example:
    >>> from evalnb.analysis.runs import Runs
    >>> chart = rates_by_model(Runs.empty())
    >>> chart.to_dict()["title"]["text"]
    'Pass rate and overall rate by model'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from evalnb.analysis import context, diagnostics, metrics, pass_at_k
from evalnb.analysis.guidance import METRICS as GUIDANCE_METRICS
from evalnb.analysis.guidance import compare_guidance
from evalnb.analysis.interaction import interaction as interaction_metrics
from evalnb.analysis.runs import Runs
from evalnb.extras import require
from evalnb.present import groups
from evalnb.present.offline import chart_html, html_page, spec_of
from evalnb.present.offline import enable_offline as enable_offline  # notebooks call it here
from evalnb.store.tables import KEYS

THEME = "evalnb"
HEALTHY_TOOL_SUCCESS = 0.8
"""Spec 000 healthy profile: tool call success rate above 80%."""
HEALTHY_AVG_TURNS = 5
"""Spec 000 healthy profile: fewer than 5 turns per task on average."""
MAX_MATRIX_TASKS = 120
"""The task matrix shows at most this many tasks (the most-failed first)."""

ALL_CATEGORIES = "all categories"
SIMULATED_NOTE = "(simulated) = an offline persona, not a real model"
PASS_LABEL = "pass rate (every check passed)"
PICK = "pick"
"""The click selection of the drill-down charts: a heatmap cell (``run_label`` and
``category``) or a rate bar (``run_label``). A click picks, shift-click adds, a double
click clears; :mod:`evalnb.present.widgets` lists the tasks behind the pick."""
OVERALL_LABEL = "overall rate (weighted checks)"
PASS_AT_K_MEASURES = {"pass@k (one of k passes)": "pass_at_k", "pass^k (all k pass)": "pass_hat_k"}
"""The two curves of :func:`pass_at_k_curves`: label: column."""
MAX_CONTEXT_ATTEMPTS = 8
""":func:`context_peaks` draws at most this many attempts."""
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
_NEUTRAL = ["#555555", "#b0b0b0"]
"""Greys for what is not a model (measures, token kinds): colour always means the model."""
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


@alt.theme.register(THEME, enable=False)
def theme() -> alt.theme.ThemeConfig:
    """The evalnb theme: white background, readable fonts, one colour palette.

    Registered (not enabled) when this module is imported, so importing evalnb changes
    no global state: :func:`enable_theme` turns it on for a session, :func:`save`
    always uses it.

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
            "axisQuantitative": {"labelOverlap": "greedy", "tickCount": 4},
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 260},
            "range": {"category": _PALETTE},
            "bar": {"color": _PALETTE[0]},
            "line": {"color": _PALETTE[0]},
        },
    }


def enable_theme() -> None:
    """Draw every altair chart of this session in the evalnb theme (opt-in).

    Example:
        >>> enable_theme()
        >>> alt.theme.active
        'evalnb'
        >>> _ = alt.theme.enable("default")  # back to altair's own
    """
    alt.theme.enable(THEME)


def save(chart: alt.TopLevelMixin, path: str | Path) -> Path:
    """Write a chart to ``path``: PNG, SVG, PDF or self-contained HTML, chosen by suffix.

    Rendering is offline (vl-convert, the ``export`` extra: without it this raises
    :class:`~evalnb.errors.SetupError` with the pip command); an HTML file carries the
    vega libraries inline (:func:`evalnb.present.offline.chart_html`) and loads nothing
    from the network. Parent folders are created. Any other suffix raises ValueError.

    Example:
        >>> import tempfile
        >>> from evalnb.analysis.runs import Runs
        >>> out = save(rates_by_model(Runs.empty()), Path(tempfile.mkdtemp()) / "a" / "r.svg")
        >>> "<svg" in out.read_text()
        True
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in {"png", "svg", "pdf", "html"}:
        raise ValueError(f"{path}: unknown chart format {path.suffix!r} (use .png .svg .pdf .html)")
    require("vl_convert", "export")
    path.parent.mkdir(parents=True, exist_ok=True)
    with alt.theme.enable(THEME):
        if fmt == "html":
            spec = chart.to_dict()
            title = spec.get("title", {})
            name = title.get("text", path.stem) if isinstance(title, dict) else str(title)
            path.write_text(html_page(str(name), chart_html(spec)), encoding="utf-8")
        elif fmt == "png":
            chart.save(path, format="png", scale_factor=2)
        else:
            chart.save(path, format="svg" if fmt == "svg" else "pdf")
    return path


def save_all(
    charts: Mapping[str, alt.TopLevelMixin | dict[str, Any]], folder: str | Path
) -> dict[str, Path]:
    """Write every chart to ``folder`` as ``<name>.svg`` and ``<name>.png`` (2x); return the
    SVG paths by name.

    A chart is an altair chart or its spec (``to_dict()``, drawn as it is). Each chart is
    drawn once: its spec is built and validated once, rendered to SVG by
    vega (vl-convert), and the PNG rasterised from that SVG, the way :func:`save`'s PNG
    is made, without running vega a second time. The charts are drawn on as many threads
    as there are cores (vl-convert releases the GIL). Needs the ``export`` extra.

    Example:
        >>> import tempfile
        >>> from evalnb.analysis.runs import Runs
        >>> done = save_all({"rates": rates_by_model(Runs.empty())}, tempfile.mkdtemp())
        >>> sorted(p.name for p in done["rates"].parent.iterdir())
        ['rates.png', 'rates.svg']
    """
    require("vl_convert", "export")
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with alt.theme.enable(THEME):
        specs = {name: spec_of(chart) for name, chart in charts.items()}
    vl_version = vl_version_for_vl_convert()

    def draw(name: str) -> Path:
        svg = vlc.vegalite_to_svg(specs[name], vl_version=vl_version)
        (folder / f"{name}.png").write_bytes(vlc.svg_to_png(svg, scale=2))
        (folder / f"{name}.svg").write_text(svg, encoding="utf-8")
        return folder / f"{name}.svg"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(zip(specs, pool.map(draw, specs), strict=True))


def labels(runs: Runs) -> pl.DataFrame:
    """One row per run: ``run_id``, ``model_label`` and ``run_label``.

    ``model_label`` is the model with " (simulated)" appended for simulated runs;
    ``run_label`` is the same, plus the run id where several runs share a model.

    Example:
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


def rates_by_model(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Pass rate and overall rate per run, side by side, each with its 95% interval.

    Pass rate counts tasks whose every check passed; overall rate is weighted check
    score over maximum score. Both, and their 95% intervals clustered by task, come from
    :func:`evalnb.analysis.metrics.summary`.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> rates_by_model(Runs.empty()).to_dict()["layer"][0]["mark"]["type"]
        'bar'
    """
    runs = groups.pooled(runs)
    s = _with_labels(metrics.summary(runs), runs)
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
    return _rate_bars(
        data,
        category=_run_y(runs),
        offset=alt.YOffset("measure:N", sort=order),
        color=alt.Color(
            "measure:N",
            title=None,
            sort=order,
            scale=alt.Scale(domain=order, range=_NEUTRAL),
            legend=_bottom_legend(),
        ),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("measure:N", title="measure"),
            *_rate_tooltip(),
            alt.Tooltip("count:N", title="from"),
        ],
    ).properties(
        title=_title(
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
    :func:`evalnb.analysis.metrics.by_category`.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> category_heatmap(Runs.empty()).to_dict()["layer"][1]["mark"]["type"]
        'text'
    """
    runs = groups.pooled(runs)
    data = _with_labels(metrics.by_category(runs), runs).with_columns(
        pl.format("{}/{}", "passed", "tasks").alias("cell")
    )
    base = alt.Chart(data).encode(
        x=alt.X(
            "run_label:N",
            title=None,
            sort=_run_order(runs),
            axis=_group_axis(),
        ),
        y=alt.Y("category:N", title="category", axis=alt.Axis(labelLimit=0)),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("category:N", title="category"),
            alt.Tooltip("cell:N", title="tasks passed"),
            alt.Tooltip("pass_rate:Q", title="pass rate", format=".1%"),
            alt.Tooltip("pass_rate_lo:Q", title="95% low", format=".1%"),
            alt.Tooltip("pass_rate_hi:Q", title="95% high", format=".1%"),
            alt.Tooltip("rate:Q", title="weighted check rate", format=".1%"),
        ],
    )
    pick = _pick("run_label", "category")
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
        title=_title(
            "Pass rate by category",
            runs,
            "Cell: tasks passed / tasks. Spec 000 healthy profile: no category below 70%.",
            "Hover a cell for its 95% interval and weighted check rate;"
            " in the explorer, click it for its tasks.",
        ),
        width=alt.Step(64),
        height=alt.Step(22),
    )


def tool_success(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Tool call success rate (exit code 0): a cell per model and category, plus overall.

    Calls whose exit code is unknown (null) are left out of both counts, as in
    :func:`evalnb.analysis.metrics.summary`.

    Counted from the tasks' ``tool_calls_ok`` and ``tool_calls_error`` (one row per
    attempt, summed from its tool calls: :func:`evalnb.store.tables.with_call_figures`,
    so a million calls cost nothing more here), with 95% intervals clustered by
    task (:func:`evalnb.analysis.metrics.clustered_interval`) in the tooltip. Cells below
    spec 000's healthy 80% are framed. The "all categories"
    row equals :func:`evalnb.analysis.metrics.summary`'s ``tool_call_success_rate``
    (of the pooled runs of a model). A grid, not bars, so 60 categories and 20 models
    stay a few hundred pixels wide.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> len(tool_success(Runs.empty()).to_dict()["layer"])  # cells, frames, text
        3
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
            metrics.clustered_interval(
                with_cat, ["run_id"], "ok", "calls", "v", counts=True
            ).with_columns(pl.lit(ALL_CATEGORIES).alias("category")),
            metrics.clustered_interval(
                with_cat, ["run_id", "category"], "ok", "calls", "v", counts=True
            ),
        ],
        how="diagonal",
    ).rename({"v_lo": "lo", "v_hi": "hi"})
    data = _with_labels(
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
        x=alt.X("run_label:N", title=None, sort=_run_order(runs), axis=_group_axis()),
        y=alt.Y("category:N", title=None, sort=order, axis=alt.Axis(labelLimit=0)),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("category:N", title="category"),
            *_rate_tooltip(),
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
        alt.datum.value < HEALTHY_TOOL_SUCCESS
    )
    text = base.mark_text(fontSize=11, color="#222").encode(text=alt.Text("value:Q", format=".0%"))
    return alt.layer(cells, unhealthy, text).properties(
        title=_title(
            "Tool call success rate (exit code 0)",
            runs,
            "Spec 000: above 80% is healthy (framed cells are below),"
            " below 75% points at interpreter gaps.",
            "Hover a cell for its calls and 95% interval (clustered by task).",
        ),
        width=alt.Step(64),
        height=alt.Step(20),
    )


def turns_and_calls(runs: Runs) -> alt.HConcatChart:
    """Per-task turns and tool calls, as a box per model (min-max whiskers, mean as a diamond).

    The turns panel marks spec 000's healthy average of fewer than 5 turns per task.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> len(turns_and_calls(Runs.empty()).to_dict()["hconcat"])
        2
    """
    runs = groups.pooled(runs)
    tasks = _with_labels(runs.tasks.select("run_id", "turns", "tool_call_count"), runs)
    turns = alt.layer(
        _box(tasks, "turns", "turns per task", runs),
        _threshold_rule(HEALTHY_AVG_TURNS, "healthy avg < 5", fmt="d"),
    ).properties(title="Turns (LLM calls) per task")
    calls = _box(tasks, "tool_call_count", "tool calls per task", runs).properties(
        title="Tool calls per task"
    )
    return alt.hconcat(turns, calls).properties(
        title=_title(
            "How much work each task took",
            runs,
            "Box: middle half of tasks; white tick: median; diamond: mean; line: min to max.",
        )
    )


def natural_stop(runs: Runs) -> alt.LayerChart | alt.FacetChart:
    """Share of task attempts the model ended itself (``natural_stop``), 95% clustered by task.

    Spec 000: a frequent ``natural_stop == false`` means the turn limit was reached
    without converging. The bar equals ``summary``'s ``natural_stop_rate``.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> natural_stop(Runs.empty()).to_dict()["layer"][0]["mark"]["type"]
        'bar'
    """
    runs = groups.pooled(runs)
    counts = runs.tasks.group_by("run_id").agg(
        pl.col("natural_stop").sum().alias("stops"), pl.col("natural_stop").count().alias("tasks")
    )
    rows = runs.tasks.filter(pl.col("natural_stop").is_not_null()).with_columns(
        pl.col("natural_stop").cast(pl.Float64).alias("_stop"), pl.lit(1.0).alias("_one")
    )
    limits = metrics.clustered_interval(rows, ["run_id"], "_stop", "_one", "v", counts=True)
    data = _with_labels(
        counts.with_columns((pl.col("stops") / pl.col("tasks")).alias("value")).join(
            limits.rename({"v_lo": "lo", "v_hi": "hi"}), on="run_id", how="left"
        ),
        runs,
    )
    return _rate_bars(
        data,
        category=_run_y(runs),
        offset=None,
        color=_run_color(runs, legend=False),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            *_rate_tooltip(),
            alt.Tooltip("stops:Q", title="natural stops"),
            alt.Tooltip("tasks:Q", title="tasks"),
        ],
    ).properties(
        title=_title(
            "Natural stop: the model ended the task itself",
            runs,
            "The rest hit the turn limit (or errored); lines: 95% interval, clustered by task.",
        ),
        height=alt.Step(24),
    )


def token_economics(runs: Runs) -> alt.HConcatChart:
    """Input and output tokens, cost, and tokens per passed task, per model.

    Cost is :func:`evalnb.analysis.metrics.summary`'s ``cost_usd``; a model without a known
    price shows "unknown" rather than 0.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> len(token_economics(Runs.empty()).to_dict()["hconcat"])
        3
    """
    runs = groups.pooled(runs)
    s = _with_labels(metrics.summary(runs), runs)
    tokens = pl.concat(
        [
            s.select(
                "run_label", pl.lit(kind).alias("kind"), pl.col(f"total_{kind}_tokens").alias("n")
            )
            for kind in ("input", "output")
        ]
    )
    y = _run_y(runs)
    token_bars = (
        alt.Chart(tokens)
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("n:Q", title="tokens", axis=alt.Axis(format="~s")),
            color=alt.Color(
                "kind:N",
                title=None,
                sort=["input", "output"],
                scale=alt.Scale(domain=["input", "output"], range=_NEUTRAL),
                legend=_bottom_legend(),
            ),
            order=alt.Order("kind:N"),
            tooltip=[
                alt.Tooltip("run_label:N", title="model"),
                alt.Tooltip("kind:N", title="tokens"),
                alt.Tooltip("n:Q", title="count", format=","),
            ],
        )
        .properties(title="Tokens (input + output)")
    )
    cost = s.select(
        "run_label",
        "cost_usd",
        pl.col("cost_usd").fill_null(0.0).alias("text_at"),
        pl.col("cost_usd")
        .map_elements(lambda v: f"${v:,.2f}", return_dtype=pl.Utf8)
        .fill_null("unknown")
        .alias("cost_text"),
    )
    cost_base = alt.Chart(cost).encode(
        y=y.axis(None),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("cost_text:N", title="cost"),
        ],
    )
    cost_chart = alt.layer(
        cost_base.mark_bar(color=_NEUTRAL[0]).encode(
            x=alt.X("cost_usd:Q", title="cost (USD)", axis=alt.Axis(format="$,.2~f"))
        ),
        cost_base.mark_text(align="left", dx=4, color="#444").encode(
            x="text_at:Q", text="cost_text:N"
        ),
    ).properties(title="Cost", width=160)
    per_pass = s.select(
        "run_label",
        "total_passed",
        pl.when(pl.col("total_passed") > 0)
        .then(
            (pl.col("total_input_tokens") + pl.col("total_output_tokens")) / pl.col("total_passed")
        )
        .alias("per_pass"),
    )
    per_pass_chart = (
        alt.Chart(per_pass)
        .mark_bar(color=_NEUTRAL[0])
        .encode(
            y=y.axis(None),
            x=alt.X("per_pass:Q", title="tokens per passed task", axis=alt.Axis(format="~s")),
            tooltip=[
                alt.Tooltip("run_label:N", title="model"),
                alt.Tooltip("per_pass:Q", title="tokens per passed task", format=",.0f"),
                alt.Tooltip("total_passed:Q", title="tasks passed"),
            ],
        )
        .properties(title="Tokens per passed task", width=160)
    )
    return (
        alt.hconcat(token_bars.properties(width=220), cost_chart, per_pass_chart)
        .resolve_scale(color="independent")
        .properties(
            title=_title(
                "Token economics",
                runs,
                "Spec 000: high token use with a low pass rate signals retry loops;"
                " same pass rate with fewer tokens is a cost-efficiency edge.",
            )
        )
    )


def context_growth(runs: Runs) -> alt.VConcatChart | alt.Chart:
    """Spec 003 context growth: input tokens by LLM call number, and per-task figures.

    Top: the median input tokens of call N per model, with the band between the
    25th and 75th percentile of tasks. Bottom: per task, the base context (call 1's
    input), the average growth per call (the slope) and the cumulative input, each
    as a box per model (from :func:`evalnb.analysis.metrics.context_growth`). Runs without
    per-call token counts (bashkit-eval result files) are left out, and a chart with
    none says so.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> context_growth(Runs.empty()).to_dict()["mark"]["type"]
        'text'
    """
    runs = groups.pooled(runs)
    calls = runs.llm_calls.filter(pl.col("input_tokens").is_not_null())
    title = "Context growth (spec 003)"
    if calls.height == 0:
        return _message(title, "No per-LLM-call token counts in these runs.", runs)
    per_call = _with_labels(
        calls.group_by("run_id", "call_number").agg(
            pl.len().alias("tasks"),
            pl.col("input_tokens").median().alias("median"),
            pl.col("input_tokens").quantile(0.25, "linear").alias("q1"),
            pl.col("input_tokens").quantile(0.75, "linear").alias("q3"),
        ),
        runs,
    )
    x = alt.X("call_number:Q", title="LLM call number", axis=alt.Axis(tickMinStep=1, format="d"))
    color = _run_color(runs).legend(
        orient="bottom",
        direction="vertical",
        symbolType="stroke",
        symbolStrokeWidth=3,
        symbolOpacity=1,
    )
    tooltip = [
        alt.Tooltip("run_label:N", title="model"),
        alt.Tooltip("call_number:Q", title="call"),
        alt.Tooltip("median:Q", title="median input tokens", format=",.0f"),
        alt.Tooltip("q1:Q", title="25th percentile", format=",.0f"),
        alt.Tooltip("q3:Q", title="75th percentile", format=",.0f"),
        alt.Tooltip("tasks:Q", title="tasks reaching this call"),
    ]
    base = alt.Chart(per_call).encode(x=x, color=color, tooltip=tooltip)
    curve = alt.layer(
        base.mark_area(opacity=0.18).encode(
            y=alt.Y("q1:Q", title="input tokens of the call", axis=alt.Axis(format="~s")),
            y2="q3:Q",
        ),
        base.mark_line(point=True).encode(y="median:Q"),
    ).properties(
        title="Input tokens by call number (line: median task; band: middle half)",
        width=560,
        height=240,
    )
    per_task = _with_labels(
        metrics.context_growth(runs, by="task").filter(pl.col("has_call_tokens")), runs
    )
    panels = [
        _box(per_task, "base_context", "tokens", runs).properties(title="Base context (call 1)"),
        _box(per_task, "context_growth_avg", "tokens per call", runs).properties(
            title="Growth per call (slope)"
        ),
        _box(per_task, "final_cumulative_input", "tokens", runs).properties(
            title="Cumulative input per task"
        ),
    ]
    for i in (1, 2):
        panels[i] = panels[i].encode(y=_run_y(runs, axis=None))
    return alt.vconcat(curve, alt.hconcat(*panels)).properties(
        title=_title(
            title,
            runs,
            "Base context = system prompt + tools; slope = (input[N] - input[1]) / (N - 1);"
            " cumulative = the input tokens billed for the task.",
        )
    )


def context_peaks(runs: Runs) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Context per LLM call of the attempts that dropped it (or peaked highest), drops marked.

    From :func:`evalnb.analysis.context.context_calls`: one line per attempt, its input
    tokens by call number; a red triangle marks each call where the context dropped
    (below the call before it, or a compaction the source marked). Shown: up to
    :data:`MAX_CONTEXT_ATTEMPTS` attempts, shared out among the model groups, in each
    those with the most drops first, then the highest peaks; coloured by model (its
    group's colour, as in every chart). Spec 003's straight slope
    (:func:`context_growth`) hides both the peak and the drops.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> context_peaks(Runs.empty()).to_dict()["mark"]["type"]
        'text'
    """
    runs = groups.pooled(runs)
    title = "Context per call: peaks and drops"
    peaks = context.context_peaks(runs).filter(pl.col("peak_context").is_not_null())
    if peaks.height == 0:
        return _message(title, "No per-LLM-call token counts in these runs.", runs)
    each = max(1, MAX_CONTEXT_ATTEMPTS // peaks.get_column("run_id").n_unique())
    shown = (
        peaks.sort(
            "drops", "peak_context", "run_id", "task_id", descending=[True, True, False, False]
        )
        .group_by("run_id", maintain_order=True)
        .head(each)
        .head(MAX_CONTEXT_ATTEMPTS)
    )
    calls = (
        context.context_calls(runs)
        .collect()
        .join(shown.select(*KEYS), on=KEYS, how="semi")
        .with_columns(pl.format("{} · {} #{}", "run_id", "task_id", "epoch").alias("attempt"))
    )
    calls = _with_labels(calls, runs)
    base = alt.Chart(calls).encode(
        x=alt.X("call_number:Q", title="LLM call number", axis=alt.Axis(tickMinStep=1, format="d")),
        y=alt.Y("input_tokens:Q", title="context (input tokens)", axis=alt.Axis(format="~s")),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("task_id:N", title="task"),
            alt.Tooltip("epoch:Q", title="epoch"),
            alt.Tooltip("call_number:Q", title="call"),
            alt.Tooltip("input_tokens:Q", title="input tokens", format=","),
            alt.Tooltip("dropped:N", title="context dropped"),
            alt.Tooltip("compacted:N", title="compaction marked"),
        ],
    )
    lines = base.mark_line(point=True, opacity=0.8).encode(
        color=_run_color(runs, data=calls), detail="attempt:N"
    )
    drops = base.transform_filter(alt.datum.dropped).mark_point(
        shape="triangle-down", size=120, filled=True, color="#E45756"
    )
    return alt.layer(lines, drops).properties(
        width=560,
        height=260,
        title=_title(
            title,
            runs,
            f"Up to {MAX_CONTEXT_ATTEMPTS} attempts: per model, those with most drops, then "
            "the highest peaks.",
            "Red triangles: calls where the context dropped (a compaction).",
        ),
    )


def pass_at_k_curves(runs: Runs) -> alt.FacetChart | alt.Chart:
    """pass@k and pass^k over k per model (:func:`evalnb.analysis.pass_at_k.pass_at_k`).

    For k from 1 to the most attempts any task has in a model group: pass@k (at least
    one of k attempts passes) rises with k, pass^k (all k pass: reliability) falls;
    the gap between them is the model's inconsistency. Each point carries its 95%
    interval. Groups whose tasks have a single attempt give a point at k = 1 only; with
    no task attempted twice the chart says so.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> pass_at_k_curves(Runs.empty()).to_dict()["mark"]["type"]
        'text'
    """
    runs = groups.pooled(runs)
    title = "pass@k and pass^k over k"
    most = runs.tasks.group_by("run_id", "task_id").len().get_column("len").max()
    if not isinstance(most, int) or most < 2:
        return _message(title, "No task was attempted more than once: k = 1 only.", runs)
    frame = pass_at_k.pass_at_k(runs, k=range(1, most + 1)).filter(pl.col("tasks") > 0)
    data = _with_labels(_by_measure(frame, ["run_id", "k", "tasks"], PASS_AT_K_MEASURES), runs)
    base = alt.Chart().encode(
        x=alt.X("k:Q", title="k (attempts)", axis=alt.Axis(values=list(range(1, most + 1)))),
        color=_run_color(runs, data=data),
        tooltip=[
            alt.Tooltip("run_label:N", title="model"),
            alt.Tooltip("measure:N"),
            alt.Tooltip("k:Q"),
            alt.Tooltip("tasks:Q", title="tasks with k or more attempts"),
            *_rate_tooltip(),
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
        title=_title(
            title,
            runs,
            "pass@k: at least one of k attempts passes; pass^k: all k pass. Vertical lines: "
            "95% interval, clustered by task.",
        )
    )


def task_matrix(runs: Runs) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Task x model pass/fail, coloured by spec 000's cross-model diagnosis of the task.

    Straight from :func:`evalnb.analysis.diagnostics.diagnose` (the latest run of each model; a
    model passes a task when it passed most of its attempts). Failed cells are solid,
    passed cells faded. Tasks are sorted by how many models passed them, so tasks that
    every model failed come first (spec 000: likely sandbox limitations); at most
    :data:`MAX_MATRIX_TASKS` are shown.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> task_matrix(Runs.empty()).to_dict()["mark"]["type"]
        'text'
    """
    title = "Task outcomes by model"
    diagnosed = diagnostics.diagnose(runs)
    if diagnosed.height == 0:
        return _message(title, "No tasks in these runs.", runs)
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
        title=_title(title, runs, *notes),
        width=alt.Step(max(80, 8 * _longest(cells, "model_label"))),
        height=alt.Step(18),
    )


def interaction_by_guidance(runs: Runs, pattern: str | None = None) -> alt.FacetChart:
    """Spec 002 layer 1 metrics per guidance version, side by side per model.

    One bar per model group (guidance versions are separate groups, and each group's
    label names its version), from the per-task counts of
    :func:`evalnb.analysis.interaction.interaction` summed per run: error rate, retry
    rate, first-try success rate, iteration ratio and completion rate with 95% intervals
    clustered by task (:func:`evalnb.analysis.metrics.clustered_interval`: a task's
    commands and epochs count as one unit, over tasks whose completion is known for
    completion), and ``--help`` invocations and command count per task. ``pattern``
    picks the target tool's commands (spec 002 ``command_pattern``); None counts every
    bash command.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> interaction_by_guidance(Runs.empty()).to_dict()["facet"]["field"]
        'metric'
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
        interval = metrics.clustered_interval(clusters, ["run_id"], "_y", "_m", "x", counts=True)
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
    data = _with_labels(pl.concat(parts), runs)
    metric_order = [name for name, *_ in rates] + ["--help per task", "commands per task"]
    base = alt.Chart().encode(
        y=_run_y(runs, axis=alt.Axis(labelLimit=360)),  # a row per group, named with its version
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
            color=_run_color(runs),
        ),
        base.mark_rule(color="#222", strokeWidth=1.5).encode(x="lo:Q", x2="hi:Q"),
        data=data,
    ).properties(width=190, height=alt.Step(16))
    return (
        layered.facet(
            facet=alt.Facet("metric:N", title=None, sort=metric_order),
            columns=4,
        )
        .resolve_scale(x="independent")
        .properties(
            title=_title(
                "Interaction quality by guidance version (spec 002 layer 1)",
                runs,
                "Lower error and retry rates and higher first-try success mean the guidance works.",
                "Lines: 95% intervals clustered by task (a task's commands and epochs"
                " count as one unit).",
            )
        )
    )


def guidance_differences(
    runs: Runs, pattern: str | None = None
) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Paired differences between guidance versions (b minus a, in order of appearance).

    From :func:`evalnb.analysis.guidance.compare_guidance`: each metric's mean per-task
    difference on the tasks both versions ran, with a paired t 95% interval (from 10
    shared tasks on; none below) and, in the tooltip, the exact sign-flip p-value and
    its Holm adjustment over every metric and pair shown. Read a difference as real
    where the Holm-adjusted p is at most 0.05.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> guidance_differences(Runs.empty()).to_dict()["mark"]["type"]
        'text'
    """
    title = "Guidance version differences, paired on shared tasks (spec 002)"
    paired = compare_guidance(runs, pattern).paired.filter(pl.col("diff").is_not_null())
    if paired.height == 0:
        return _message(title, "Fewer than two guidance versions ran the same tasks.", runs)
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
            "comparison:N", title="model: version b − version a", legend=_bottom_legend()
        ),
        tooltip=[
            alt.Tooltip("comparison:N", title="comparison"),
            alt.Tooltip("metric:N", title="metric"),
            alt.Tooltip("mean_a:Q", title="version a", format=".3~f"),
            alt.Tooltip("mean_b:Q", title="version b", format=".3~f"),
            alt.Tooltip("diff:Q", title="difference", format="+.3~f"),
            alt.Tooltip("diff_lo:Q", title="95% low", format="+.3~f"),
            alt.Tooltip("diff_hi:Q", title="95% high", format="+.3~f"),
            alt.Tooltip("p_value:Q", title="p (exact sign-flip)", format=".3g"),
            alt.Tooltip("p_holm:Q", title="p, Holm-adjusted", format=".3g"),
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
        title=_title(
            title,
            runs,
            "Rates are shares (0-1); help and commands are per attempt. Intervals from"
            " 10 shared tasks; the tooltip's Holm-adjusted p says which differences"
            " the shared tasks support.",
        ),
        width=420,
        height=alt.Step(16),
    )


def trend(runs: Runs) -> alt.FacetChart | alt.Chart:
    """Pass rate, overall rate and tool call success over dates for each model family.

    A trend is drawn only across dates (UTC days) of one model on one dataset with one
    guidance version (else the change is the dataset's or the guidance's, not the
    model's over time): seeds and repeats started on the same day are one point, their
    attempts pooled (:func:`evalnb.present.groups.pooled`), so runs started seconds
    apart never make a line. Runs without a start time, and models run on a single day,
    are left out. Runs are joined by ``model_family`` (dated snapshots with their
    model); a line is one model family with one guidance version on one dataset (named
    in its label where it has guidance or the chart several datasets). Each point
    carries its 95% interval (from :func:`evalnb.analysis.metrics.summary`); a point
    holding a partial run is drawn as a cross, with its task counts in the tooltip. A
    model keeps the colour it has in every other chart (that of its latest run's group).

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> trend(Runs.empty()).to_dict()["mark"]["type"]
        'text'
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
        return _message(
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
    s = metrics.summary(points).rename({"run_id": "point"}).join(per_point, on="point")
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
    data = _by_measure(s, keep, measures)
    latest = s.sort("when").group_by("model_label", maintain_order=True).last()
    series = sorted(latest.get_column("model_label").to_list())
    colour = dict(latest.select("model_label", "latest_group").iter_rows())
    base = alt.Chart().encode(
        x=alt.X("when:T", title="day the runs started (UTC)", scale=alt.Scale(padding=14)),
        color=alt.Color(
            "model_label:N",
            title="model",
            scale=alt.Scale(domain=series, range=[colour_of[colour[m]] for m in series]),
            legend=_bottom_legend(),
        ),
        tooltip=[
            alt.Tooltip("model_label:N", title="model"),
            alt.Tooltip("when:T", title="day", format="%Y-%m-%d"),
            alt.Tooltip("runs_pooled:Q", title="runs pooled"),
            alt.Tooltip("total_tasks:Q", title="tasks"),
            alt.Tooltip("completeness:N", title="run"),
            alt.Tooltip("missing_tasks:Q", title="tasks missing"),
            *_rate_tooltip(),
        ],
    )
    y = alt.Y("value:Q", title="rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    shape = alt.Shape(
        "completeness:N",
        title=None,
        scale=alt.Scale(domain=["complete run", "partial run"], range=["circle", "cross"]),
        legend=_bottom_legend(),
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
        title=_title(
            title,
            runs,
            "Points: a model family's runs of one day, pooled; vertical lines: 95% interval.",
            "Crosses: partial runs (tasks missing): their rates cover only the tasks present.",
        )
    )


CHARTS: dict[str, Callable[[Runs], alt.TopLevelMixin]] = {
    "rates_by_model": rates_by_model,
    "category_heatmap": category_heatmap,
    "tool_success": tool_success,
    "turns_and_calls": turns_and_calls,
    "natural_stop": natural_stop,
    "token_economics": token_economics,
    "context_growth": context_growth,
    "context_peaks": context_peaks,
    "pass_at_k_curves": pass_at_k_curves,
    "task_matrix": task_matrix,
    "interaction_by_guidance": interaction_by_guidance,
    "guidance_differences": guidance_differences,
    "trend": trend,
}
"""Every chart, by name, in the order the report shows them."""


GUIDANCE_CHARTS = ("interaction_by_guidance", "guidance_differences")
"""The charts of guidance versions: drawn only of the runs that used one."""


def all_charts(runs: Runs) -> dict[str, alt.TopLevelMixin]:
    """Every chart of :data:`CHARTS` that applies to ``runs``, by name: the
    :data:`GUIDANCE_CHARTS` of the runs made with a guidance version only, and none
    when no run used one.

    Example:
        >>> from evalnb.analysis.runs import Runs
        >>> list(all_charts(Runs.empty()))[:2]
        ['rates_by_model', 'category_heatmap']
    """
    guided = runs.filter(pl.col("guidance").is_not_null())
    return {
        name: make(guided if name in GUIDANCE_CHARTS else runs)
        for name, make in CHARTS.items()
        if guided.runs.height or name not in GUIDANCE_CHARTS
    }


def _rate_bars(
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
    pick = _pick("run_label")
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


def _pick(*fields: str) -> alt.Parameter:
    """The :data:`PICK` point selection on ``fields``; nothing is picked until a click."""
    return alt.selection_point(name=PICK, fields=list(fields))


def _rate_tooltip() -> list[alt.Tooltip]:
    return [
        alt.Tooltip("value:Q", title="rate", format=".1%"),
        alt.Tooltip("lo:Q", title="95% low", format=".1%"),
        alt.Tooltip("hi:Q", title="95% high", format=".1%"),
    ]


def _threshold_rule(value: float, text: str, fmt: str = "%") -> alt.LayerChart | alt.FacetChart:
    """A dashed vertical reference line at ``value`` with a label at the top."""
    ref = alt.Chart(pl.DataFrame({"value": [value], "text": [text]}))
    return alt.layer(
        ref.mark_rule(color="#C0392B", strokeDash=[5, 3], strokeWidth=1.5).encode(x="value:Q"),
        ref.mark_text(
            align="left", baseline="top", dx=4, dy=2, color="#C0392B", fontSize=10
        ).encode(x="value:Q", y=alt.value(0), text="text:N"),
    )


def _box(
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
        y=_run_y(runs),
        color=_run_color(runs, legend=False),
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


def _by_measure(frame: pl.DataFrame, keep: list[str], measures: dict[str, str]) -> pl.DataFrame:
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


def _message(title: str, text: str, runs: Runs) -> alt.Chart:
    """A chart that only says why there is nothing to draw."""
    return (
        alt.Chart(pl.DataFrame({"text": [text]}))
        .mark_text(fontSize=13, color="#555")
        .encode(text="text:N")
        .properties(title=_title(title, runs), width=420, height=60)
    )


def _run_order(runs: Runs) -> list[str]:
    """The group labels of pooled ``runs`` in display order (sorted)."""
    return sorted(runs.runs.get_column("run_id").to_list())


def _run_y(runs: Runs, **kwargs: Any) -> alt.Y:
    return alt.Y("run_label:N", title=None, sort=_run_order(runs), **kwargs)


def _run_color(runs: Runs, legend: bool = True, data: pl.DataFrame | None = None) -> alt.Color:
    """Colour by group with a fixed palette: a model keeps its colour in every chart.

    With ``data``, the legend lists only the groups that have rows in it.
    """
    order = _run_order(runs)
    colour = dict(zip(order, groups.colours(order), strict=True))
    shown = order if data is None else [g for g in order if g in set(data.get_column("run_label"))]
    return alt.Color(
        "run_label:N",
        title="model",
        scale=alt.Scale(domain=shown, range=[colour[g] for g in shown]),
        legend=_bottom_legend() if legend else None,
    )


def _group_axis() -> alt.Axis:
    """A model axis on top, labels slanted so long model names neither widen nor get cut."""
    return alt.Axis(orient="top", labelAngle=-35, labelLimit=0, labelAlign="left")


def _bottom_legend() -> alt.Legend:
    return alt.Legend(orient="bottom", direction="vertical")


def _longest(frame: pl.DataFrame, column: str) -> int:
    """Length of the longest string in ``column`` (0 for an empty frame)."""
    return (
        int(frame.select(pl.col(column).str.len_chars().max()).item() or 0) if frame.height else 0
    )


def _with_labels(frame: pl.DataFrame, runs: Runs) -> pl.DataFrame:
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


def _title(text: str, runs: Runs, *notes: str) -> alt.Title:
    """A chart title whose subtitle holds ``notes`` and, if needed, the simulated note."""
    sim = runs.runs.get_column("simulated").fill_null(False).any() if runs.runs.height else False
    subtitle = [*notes, *([SIMULATED_NOTE] if sim else [])]
    return alt.Title(text, subtitle=subtitle) if subtitle else alt.Title(text)
