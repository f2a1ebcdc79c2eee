"""Token charts: token economics and cost, spec 003 context growth, context peaks and drops.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> token_economics(Runs.empty()).to_dict()["title"]["text"]
    'Token economics'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from evalnb import _display as fmt
from evalnb._analysis import context
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._present import groups
from evalnb._present.charts.parts import (
    bottom_legend,
    box,
    chart_title,
    nothing_to_draw,
    run_color,
    run_y,
    with_labels,
)
from evalnb._present.charts.style import NEUTRAL
from evalnb._store.tables import KEYS

MAX_CONTEXT_ATTEMPTS = 8
""":func:`context_peaks` draws at most this many attempts."""


def token_economics(runs: Runs) -> alt.HConcatChart:
    """Input and output tokens, cost, and tokens per passed task, per model.

    Cost is :func:`evalnb._analysis.summary.summary`'s ``cost_usd``; a model without a known
    price shows "unknown" rather than 0.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.HConcatChart
        Three panels side by side: tokens (input + output), cost, and tokens per passed
        task, a bar per model group in each.

    See Also
    --------
    context_growth : How the input grows call by call.
    evalnb.summary : The figures drawn.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = token_economics(example_runs())
    >>> spec = chart.to_dict()
    >>> tuple(panel["title"] for panel in spec["hconcat"])
    ('Tokens (input + output)', 'Cost', 'Tokens per passed task')
    >>> per_pass = pl.DataFrame(list(spec["datasets"].values())[2])
    >>> per_pass.select("run_label", "total_passed", pl.col("per_pass").round()).sort("run_label")
    shape: (2, 3)
    ┌─────────────────────────┬──────────────┬──────────┐
    │ run_label               ┆ total_passed ┆ per_pass │
    │ ---                     ┆ ---          ┆ ---      │
    │ str                     ┆ i64          ┆ f64      │
    ╞═════════════════════════╪══════════════╪══════════╡
    │ sim/careful (simulated) ┆ 6            ┆ 6159.0   │
    │ sim/hasty (simulated)   ┆ 3            ┆ 8190.0   │
    └─────────────────────────┴──────────────┴──────────┘
    """
    runs = groups.pooled(runs)
    s = with_labels(summary(runs), runs)
    tokens = pl.concat(
        [
            s.select(
                "run_label", pl.lit(kind).alias("kind"), pl.col(f"total_{kind}_tokens").alias("n")
            )
            for kind in ("input", "output")
        ]
    )
    y = run_y(runs)
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
                scale=alt.Scale(domain=["input", "output"], range=NEUTRAL),
                legend=bottom_legend(),
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
        .map_elements(fmt.cost, return_dtype=pl.Utf8)
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
        cost_base.mark_bar(color=NEUTRAL[0]).encode(
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
        .mark_bar(color=NEUTRAL[0])
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
    chart: alt.HConcatChart = (
        alt.hconcat(token_bars.properties(width=220), cost_chart, per_pass_chart)
        .resolve_scale(color="independent")
        .properties(
            title=chart_title(
                "Token economics",
                runs,
                "Spec 000: high token use with a low pass rate signals retry loops;"
                " same pass rate with fewer tokens is a cost-efficiency edge.",
            )
        )
    )
    return chart


def context_growth(runs: Runs) -> alt.VConcatChart | alt.Chart:
    """Spec 003 context growth: input tokens by LLM call number, and per-task figures.

    Top: the median input tokens of call N per model, with the band between the
    25th and 75th percentile of tasks. Bottom: per task, the base context (call 1's
    input), the average growth per call (the slope) and the cumulative input, each
    as a box per model (from :func:`evalnb._analysis.context.context_growth`). Runs without
    per-call token counts (bashkit-eval result files) are left out, and a chart with
    none says so.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.VConcatChart | altair.Chart
        The curve (a band and a line per model group) above the three boxes side by side;
        or, when no run has per-call token counts, a text chart saying so.

    See Also
    --------
    context_peaks : The attempts whose context peaked or dropped.
    evalnb.context_growth : The per-task figures.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = context_growth(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, len(spec["vconcat"])
    ('VConcatChart', 2)
    >>> curve = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> curve.filter(pl.col("model_label").str.starts_with("sim/hasty")).select(
    ...     "call_number", "tasks", "median"
    ... ).sort("call_number")
    shape: (4, 3)
    ┌─────────────┬───────┬────────┐
    │ call_number ┆ tasks ┆ median │
    │ ---         ┆ ---   ┆ ---    │
    │ i64         ┆ i64   ┆ f64    │
    ╞═════════════╪═══════╪════════╡
    │ 1           ┆ 6     ┆ 1286.0 │
    │ 2           ┆ 6     ┆ 1339.5 │
    │ 3           ┆ 4     ┆ 1380.0 │
    │ 4           ┆ 2     ┆ 1406.0 │
    └─────────────┴───────┴────────┘
    """
    runs = groups.pooled(runs)
    calls = runs.llm_calls.filter(pl.col("input_tokens").is_not_null())
    title = "Context growth (spec 003)"
    if calls.height == 0:
        return nothing_to_draw(title, "No per-LLM-call token counts in these runs.", runs)
    per_call = with_labels(
        calls.group_by("run_id", "call_number").agg(
            pl.len().alias("tasks"),
            pl.col("input_tokens").median().alias("median"),
            pl.col("input_tokens").quantile(0.25, "linear").alias("q1"),
            pl.col("input_tokens").quantile(0.75, "linear").alias("q3"),
        ),
        runs,
    )
    x = alt.X("call_number:Q", title="LLM call number", axis=alt.Axis(tickMinStep=1, format="d"))
    color = run_color(runs).legend(
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
    per_task = with_labels(
        context.context_growth(runs, by="task").filter(pl.col("has_call_tokens")), runs
    )
    panels = [
        box(per_task, "base_context", "tokens", runs).properties(title="Base context (call 1)"),
        box(per_task, "context_growth_avg", "tokens per call", runs).properties(
            title="Growth per call (slope)"
        ),
        box(per_task, "final_cumulative_input", "tokens", runs).properties(
            title="Cumulative input per task"
        ),
    ]
    for i in (1, 2):
        panels[i] = panels[i].encode(y=run_y(runs, axis=None))
    return alt.vconcat(curve, alt.hconcat(*panels)).properties(
        title=chart_title(
            title,
            runs,
            "Base context = system prompt + tools; slope = (input[N] - input[1]) / (N - 1);"
            " cumulative = the input tokens billed for the task.",
        )
    )


def context_peaks(runs: Runs) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Context per LLM call of the attempts that dropped it (or peaked highest), drops marked.

    From :func:`evalnb._analysis.context.context_calls`: one line per attempt, its input
    tokens by call number; a red triangle marks each call where the context dropped
    (below the call before it, or a compaction the source marked). Shown: up to
    :data:`MAX_CONTEXT_ATTEMPTS` attempts, shared out among the model groups, in each
    those with the most drops first, then the highest peaks; coloured by model (its
    group's colour, as in every chart). Spec 003's straight slope
    (:func:`context_growth`) hides both the peak and the drops.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result; the runs of each model group
        are pooled into one (:func:`evalnb._present.groups.pooled`).

    Returns
    -------
    altair.LayerChart | altair.FacetChart | altair.Chart
        A line per attempt layered with the triangles of its drops; or, when no run has
        per-call token counts, a text chart saying so.

    See Also
    --------
    context_growth : The median curve and per-task figures.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> chart = context_peaks(example_runs())
    >>> spec = chart.to_dict()
    >>> type(chart).__name__, [layer["mark"].get("type") for layer in spec["layer"]]
    ('LayerChart', ['line', 'point'])
    >>> calls = pl.DataFrame(list(spec["datasets"].values())[0])
    >>> calls.group_by("model_label").agg(
    ...     attempts=pl.col("attempt").n_unique(), drops=pl.col("dropped").sum()
    ... ).sort("model_label")
    shape: (2, 3)
    ┌─────────────────────────┬──────────┬───────┐
    │ model_label             ┆ attempts ┆ drops │
    │ ---                     ┆ ---      ┆ ---   │
    │ str                     ┆ u32      ┆ u32   │
    ╞═════════════════════════╪══════════╪═══════╡
    │ sim/careful (simulated) ┆ 4        ┆ 0     │
    │ sim/hasty (simulated)   ┆ 4        ┆ 0     │
    └─────────────────────────┴──────────┴───────┘
    """
    runs = groups.pooled(runs)
    title = "Context per call: peaks and drops"
    peaks = context.context_peaks(runs).filter(pl.col("peak_context").is_not_null())
    if peaks.height == 0:
        return nothing_to_draw(title, "No per-LLM-call token counts in these runs.", runs)
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
    calls = with_labels(calls, runs)
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
        color=run_color(runs, data=calls), detail="attempt:N"
    )
    drops = base.transform_filter(alt.datum.dropped).mark_point(
        shape="triangle-down", size=120, filled=True, color="#E45756"
    )
    return alt.layer(lines, drops).properties(
        width=560,
        height=260,
        title=chart_title(
            title,
            runs,
            f"Up to {MAX_CONTEXT_ATTEMPTS} attempts: per model, those with most drops, then "
            "the highest peaks.",
            "Red triangles: calls where the context dropped (a compaction).",
        ),
    )
