"""report.html: one page with the computed sentences, the summary, paired comparisons, charts."""

from __future__ import annotations

import html
import re

import polars as pl
import pytest

from evalnb._analysis.baseline import baseline_runs
from evalnb._analysis.compare import compare_all
from evalnb._analysis.regression import task_diff
from evalnb._analysis.runs import Runs
from evalnb._present import charts, report_transcripts
from evalnb._present.report import PAIRED_NOTE, write_report
from evalnb._present.report_html import report_html
from evalnb._store.tables import TABLES
from tests.test_charts import make_runs
from tests.test_report import _record, _run

pytestmark = pytest.mark.filterwarnings("ignore:no price for model")


def test_report_html_holds_sentences_summary_comparisons_and_every_chart():
    runs = make_runs()
    page = report_html(runs)
    assert page.count('class="evalnb-chart"') == len(charts.CHARTS)
    assert "has the highest pass rate" in page  # a computed sentence
    assert "50.0% [" in page  # run a1's pass rate 2/4 with its interval
    # the baseline: the latest run of each model family, guidance version and simulated
    # or not: a1, b1 and a2: three pairs, two metrics each, in one table with Holm's
    # adjustment over all six comparisons
    assert baseline_runs(runs.runs) == ["a1", "b1", "a2"]
    pairs = compare_all(runs, ["a1", "b1", "a2"])
    assert pairs.height == 6 and "<th>Holm p</th>" in page
    for row in pairs.iter_rows(named=True):
        assert f"{row['model_a']} ({row['a']}) − {row['model_b']} ({row['b']})" in page
        assert f"<td>{row['p_holm']:.3g}</td>" in page
    # nothing loaded from the web (the spec's "$schema" URL is a name, never fetched)
    assert not re.search(r"<(?:script|link|img)[^>]+(?:src|href)=[\"']?(?:https?:)?//", page)


def _baseline_store() -> Runs:
    """Several runs per model and guidance version: a dated snapshot, a simulated run of
    the same model, two runs of one guidance version, another model; all on t1..t6."""
    outcomes = {
        # run_id: (model, guidance, simulated, started_at, tasks passed of t1..t6)
        "sim": ("claude-haiku-4-5", None, True, "2026-01-01", [1, 0, 0, 1, 0, 0]),
        "h-old": ("claude-haiku-4-5", None, False, "2026-01-02", [1, 1, 0, 0, 0, 0]),
        "v1-a": ("claude-haiku-4-5", "v1", False, "2026-01-02", [0, 0, 0, 0, 0, 1]),
        "h-snap": ("claude-haiku-4-5-20251001", None, False, "2026-01-05", [1, 1, 1, 1, 0, 1]),
        "v1-b": ("claude-haiku-4-5", "v1", False, "2026-01-03", [1, 0, 1, 0, 1, 0]),
        "v2": ("claude-haiku-4-5", "v2", False, "2026-01-03", [1, 1, 1, 1, 1, 1]),
        "opus": ("claude-opus-4-6", None, False, "2026-01-04", [0, 1, 1, 1, 1, 0]),
    }
    parts = []
    for run_id, (model, guidance, simulated, started, passed) in outcomes.items():
        recs = [_record(f"t{i}", [bool(ok), True]) for i, ok in enumerate(passed, 1)]
        parts.append(
            _run(run_id, model, recs, guidance=guidance, simulated=simulated, started_at=started)
        )
    return Runs.concat(parts)


def _md_comparisons(text: str) -> list[tuple[str, str, str]]:
    """(pair, metric, Holm p) of each row of comparison.md's paired table."""
    rows = [line for line in text.splitlines() if ") − " in line and line.startswith("| ")]
    return [(c[0].strip("| "), c[1], c[-1].rstrip(" |")) for c in (r.split(" | ") for r in rows)]


def _html_comparisons(page: str) -> list[tuple[str, str, str]]:
    """(pair, metric, Holm p) of each row of report.html's paired table."""
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", page)]
    return [(c[0], c[1], c[-1]) for c in cells if c and ") − " in c[0]]


def test_both_reports_compare_the_same_baseline_runs_with_the_same_holm_p(tmp_path):
    runs = _baseline_store()
    # the latest run of each model family (the snapshot joins its model), guidance
    # version and simulated or not, in the order loaded
    assert baseline_runs(runs.runs) == ["sim", "h-snap", "v1-b", "v2", "opus"]
    comparison = write_report(runs, tmp_path)["comparison.md"].read_text()
    page = report_html(runs)
    pairs = compare_all(runs, ["sim", "h-snap", "v1-b", "v2", "opus"])
    assert pairs.height == 10 * 2  # ten pairs, two metrics each
    expected = [
        (
            f"{r['model_a']} ({r['a']}) − {r['model_b']} ({r['b']})",
            r["metric"],
            f"{r['p_holm']:.3g}",
        )
        for r in pairs.iter_rows(named=True)
    ]
    assert _md_comparisons(comparison) == expected
    assert _html_comparisons(page) == expected
    # the paragraph explaining Holm's adjustment is the same text in both
    assert comparison.count(PAIRED_NOTE) == 1
    assert page.count(html.escape(PAIRED_NOTE)) == 1
    # comparison.md's baseline columns are the runs compared
    for run_id in ("sim", "h-snap", "v1-b", "v2", "opus"):
        assert f": run {run_id} (" in comparison
    assert ": run h-old (" not in comparison and ": run v1-a (" not in comparison


def test_report_html_holds_every_failed_attempt_collapsed_and_searchable():
    runs = make_runs()
    page = report_html(runs)
    failed = runs.tasks.filter(~(pl.col("passed").fill_null(False) & pl.col("error").is_null()))
    attempts = re.findall(r'<details class="evalnb-attempt"><summary>([^<]*)</summary>', page)
    transcripts = page[page.index("<h2>Transcripts of failed attempts</h2>") :]
    assert transcripts.count('<details class="evalnb-attempt">') == failed.height
    for run_id, task_id, epoch in failed.select("run_id", "task_id", "epoch").iter_rows():
        assert any(f"run {run_id} · {task_id} #{epoch}" in s for s in attempts)
    assert "<details open" not in page  # collapsed by default
    assert 'id="evalnb-search"' in page and "function evalnbSearch" in page


def test_report_html_shows_the_flipped_tasks_of_each_compared_pair_side_by_side():
    runs = make_runs()
    page = report_html(runs)
    flipped = page[page.index("<h2>Tasks that flipped</h2>") : page.index("<h2>Consistency")]
    for a, b in compare_all(runs, baseline_runs(runs.runs)).select("a", "b").unique().iter_rows():
        flips = task_diff(runs, a, b)
        assert f"A = {a}, B = {b}: " in flipped
        for task_id, flip in flips.select("task_id", "flip").iter_rows():
            assert f"{html.escape(flip)} · {task_id} · " in flipped
    assert "display: flex" in flipped  # both transcripts side by side


def test_report_html_headers_are_words_and_guidance_charts_need_guidance():
    runs = make_runs()
    page = report_html(runs)
    assert "<th>pass rate</th>" in page and "<th>pass_rate</th>" not in page
    unguided = Runs(**{n: getattr(runs, n) for n in TABLES})
    unguided.runs = unguided.runs.with_columns(pl.lit(None, pl.Utf8).alias("guidance"))
    plain = report_html(unguided)
    assert "<h3>interaction by guidance</h3>" in page
    assert "<h3>interaction by guidance</h3>" not in plain
    assert "<h3>guidance differences</h3>" not in plain


def test_report_html_says_how_many_failed_transcripts_it_leaves_out(monkeypatch):
    monkeypatch.setattr(report_transcripts, "MAX_FAILED", 2)
    runs = make_runs()
    failed = runs.tasks.filter(~(pl.col("passed").fill_null(False) & pl.col("error").is_null()))
    section = "\n".join(report_transcripts.failed_section(runs))
    assert f"the first 2 of {failed.height} failed attempts" in section
    assert section.count('<details class="evalnb-attempt">') == 2
