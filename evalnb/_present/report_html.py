"""``report.html``: one self-contained page a person can mail, charts inline, offline.

The page holds the computed sentences of :mod:`evalnb._present.story`, the summary
table (rates with their 95% intervals), the paired comparisons of every two models on
the same dataset (:func:`evalnb._analysis.compare.compare_all` on the baseline runs of
:func:`evalnb._analysis.baseline.baseline_runs`, as comparison.md: one table, with
Holm-adjusted p-values over every comparison in it), the tasks that flipped in those
pairs with both transcripts side by side, each run's consistency and flaky tasks
(:mod:`evalnb._analysis.flaky`), the judges' agreement where two or more judges scored
the same attempts, and each judge's with a person's labels where they are given
(:func:`evalnb._analysis.judge_agreement.judge_agreement`), every chart
of :func:`evalnb._present.charts.all_charts`, drawn in the reader's browser from the vega
libraries carried inside the page (once), and the transcripts of every failed attempt,
collapsed and searchable (:mod:`evalnb._present.report_transcripts`) — nothing is fetched
from the network. Needs the ``export`` extra (vl-convert).

Example:
    >>> import tempfile
    >>> from evalnb._analysis.runs import Runs
    >>> page = write_report_html(Runs.empty(), tempfile.mkdtemp()).read_text()
    >>> "No runs." in page and "https://" not in page
    True
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from evalnb._analysis.baseline import baseline_runs
from evalnb._analysis.compare import compare_all
from evalnb._analysis.flaky import consistency, flaky_tasks
from evalnb._analysis.judge_agreement import HUMAN, judge_agreement, judge_scores
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._present import charts, story
from evalnb._present.offline import chart_html, html_page
from evalnb._present.report import PAIRED_NOTE
from evalnb._present.report_transcripts import failed_section, flipped_section
from evalnb._present.tables import STYLE, table_html
from evalnb._present.transcripts import TASK_STYLE
from evalnb.errors import SetupError

MAX_PAIRS = 10
"""At most this many model pairs are compared (the first in label order)."""
MAX_FLAKY = 30
"""The flaky-task table shows at most this many tasks (those nearest a coin flip first)."""

SUMMARY_COLUMNS = [
    "run_id",
    "model",
    "guidance",
    "status",
    "missing_tasks",
    "total_tasks",
    "total_passed",
    "pass_rate",
    "pass_rate_lo",
    "pass_rate_hi",
    "overall_rate",
    "overall_rate_lo",
    "overall_rate_hi",
    "tool_call_success_rate",
    "tool_call_success_rate_lo",
    "tool_call_success_rate_hi",
    "avg_turns_per_task",
    "avg_duration_ms",
    "cost_usd",
]


def report_html(
    runs: Runs,
    drawn: Mapping[str, alt.TopLevelMixin | dict[str, Any]] | None = None,
    *,
    labels: str | Path | None = None,
) -> str:
    """The text of report.html (see the module docstring); ``drawn`` is
    :func:`~evalnb._present.charts.all_charts` of ``runs`` when the caller has it already
    (charts or their specs); ``labels`` a person's labels (a CSV of ``task_id, epoch,
    label``; :func:`~evalnb._analysis.judge_agreement.read_labels`), whose agreement with
    each judge the judge-agreement section adds. Bad labels raise InputError.

    Example:
        >>> from evalnb._analysis.runs import Runs
        >>> "<h1>evalnb report</h1>" in report_html(Runs.empty())
        True
    """
    parts = ["<h1>evalnb report</h1>"]
    if runs.runs.height == 0:
        return html_page("evalnb report", *parts, "<p>No runs.</p>")
    pairs = _pairs(runs)
    parts += [
        "<h2>What the runs say</h2>",
        _markdown(story.overview(runs)),
        _markdown(story.cross_model(runs)),
        "<h2>Summary</h2>",
        table_html(summary(runs).select(SUMMARY_COLUMNS)),
        "<h2>Paired comparisons</h2>",
        *_comparisons(pairs),
        "<h2>Tasks that flipped</h2>",
        *flipped_section(runs, pairs.head(2 * MAX_PAIRS)),
        "<h2>Consistency and flaky tasks</h2>",
        *_flaky(runs),
        *_judges(runs, labels),
        "<h2>Charts</h2>",
    ]
    with alt.theme.enable(charts.THEME):
        for i, (name, chart) in enumerate((drawn or charts.all_charts(runs)).items()):
            parts.append(f"<h3>{html.escape(name.replace('_', ' '))}</h3>")
            parts.append(chart_html(chart, bundle=i == 0))
    parts += ["<h2>Transcripts of failed attempts</h2>", *failed_section(runs)]
    style = "".join(
        css.removeprefix("<style>").removesuffix("</style>") for css in (STYLE, TASK_STYLE)
    )
    return html_page("evalnb report", *parts, style=style)


def write_report_html(
    runs: Runs,
    out_dir: str | Path,
    drawn: Mapping[str, alt.TopLevelMixin | dict[str, Any]] | None = None,
    *,
    labels: str | Path | None = None,
) -> Path:
    """Write ``report.html`` into ``out_dir`` atomically (temp file + rename); return its path.

    ``drawn`` and ``labels`` as for :func:`report_html`."""
    page = report_html(runs, drawn, labels=labels)
    path = Path(out_dir) / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _markdown(text: str) -> str:
    """The little Markdown :mod:`evalnb._present.story` writes: paragraphs, "- " items, bold."""
    blocks = []
    for line in text.strip().splitlines():
        body = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(line.removeprefix("- ")))
        blocks.append(f"<li>{body}</li>" if line.startswith("- ") else f"<p>{body}</p>")
    return "\n".join(blocks)


def _pairs(runs: Runs) -> pl.DataFrame:
    """:func:`evalnb._analysis.compare.compare_all` of the baseline runs (those of
    comparison.md: :func:`evalnb._analysis.baseline.baseline_runs`); none with fewer than two."""
    baseline = baseline_runs(runs.runs)
    return compare_all(runs, baseline if len(baseline) >= 2 else [])


def _comparisons(pairs: pl.DataFrame) -> list[str]:
    """The paired comparisons of every two baseline runs (:func:`_pairs`) as one table:
    pass rate and weighted rate per pair, with shared and unshared task counts, the
    difference, its interval, p and Holm's p over every comparison in the table (the
    first :data:`MAX_PAIRS` pairs are shown; Holm's adjustment counts them all).
    """
    if pairs.height == 0:
        return [
            "<p>No two baseline runs ran the same tasks of one dataset: nothing to compare.</p>"
        ]
    shown = pairs.head(2 * MAX_PAIRS)
    table = shown.select(
        pl.format("{} ({}) − {} ({})", "model_a", "a", "model_b", "b").alias("pair (A − B)"),
        "metric",
        pl.col("tasks").alias("shared tasks"),
        pl.format("+{}/+{}", "tasks_only_a", "tasks_only_b").alias("unshared (A/B)"),
        pl.format("{}/{}", "errored_a", "errored_b").alias("errored left out (A/B)"),
        pl.col("value_a").alias("A_rate"),
        pl.col("value_b").alias("B_rate"),
        pl.col("diff").alias("A_minus_B_rate"),
        pl.col("diff_lo").alias("A_minus_B_rate_lo"),
        pl.col("diff_hi").alias("A_minus_B_rate_hi"),
        "p",
        "test",
        pl.col("p_holm").alias("Holm p"),
    )
    out = [f"<p>{html.escape(PAIRED_NOTE)}</p>", table_html(table)]
    if pairs.height > shown.height:
        out.append(f"<p>Showing {shown.height} of {pairs.height} comparisons.</p>")
    return out


def _flaky(runs: Runs) -> list[str]:
    """Each run's consistency, then the flaky tasks per model (:mod:`evalnb._analysis.flaky`)."""
    flaky = flaky_tasks(runs)
    out = [
        "<p>Consistency: the share of a run's tasks attempted more than once whose attempts "
        "all agree (95% Wilson interval). A flaky task passed some attempts and failed "
        "others.</p>",
        table_html(consistency(runs)),
    ]
    if flaky.height == 0:
        return [*out, "<p>No flaky tasks.</p>"]
    return [*out, f"<p>{flaky.height} flaky tasks.</p>", table_html(flaky, max_rows=MAX_FLAKY)]


def _judges(runs: Runs, labels: str | Path | None) -> list[str]:
    """Krippendorff's alpha of the judges, where two or more scored the same attempts, and
    of each judge with a person's ``labels`` where they are given."""
    judges = judge_scores(runs).get_column("judge_model").n_unique()
    if judges < 2 and labels is None:
        return []
    try:
        agreement = judge_agreement(runs, labels)
    except SetupError as exc:
        return ["<h2>Judge agreement</h2>", f"<p>{html.escape(str(exc))}</p>"]
    if agreement.height == 0:
        return ["<h2>Judge agreement</h2>", "<p>No judge scored these runs' attempts.</p>"]
    people = f" Rows named {HUMAN!r} set a judge against the labels given." if labels else ""
    return [
        "<h2>Judge agreement</h2>",
        "<p>Krippendorff's alpha (interval) over the attempts two or more raters scored, "
        "with a 95% bootstrap interval: 1 is perfect agreement, 0 what chance gives."
        f"{html.escape(people)}</p>",
        table_html(agreement),
    ]
