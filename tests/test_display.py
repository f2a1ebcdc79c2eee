"""One rendering per quantity: report.md, report.html and the notebook tables agree."""

from __future__ import annotations

import html

import polars as pl
import pytest

from evalnb import _display as display
from evalnb._analysis.summary import summary
from evalnb._present.report import write_report
from evalnb._present.report_html import report_html
from evalnb._present.tables import table_html
from tests.test_charts import make_runs

pytestmark = pytest.mark.filterwarnings("ignore:no price for model")


def test_report_md_and_report_html_render_a_run_s_rates_and_cost_alike(tmp_path):
    runs = make_runs()
    md = write_report(runs, tmp_path)["report.md"].read_text()
    page = html.unescape(report_html(runs))
    row = summary(runs).filter(run_id="a1").row(0, named=True)
    pass_rate = display.rate_interval(row["pass_rate"], row["pass_rate_lo"], row["pass_rate_hi"])
    assert pass_rate.startswith("50.0% [")  # 2 of 4 tasks
    assert f"| Pass rate | {pass_rate} |" in md and f"<td>{pass_rate}</td>" in page


def test_a_table_shows_a_missing_value_as_a_dash_and_a_cost_in_dollars():
    frame = pl.DataFrame(
        {"error_rate": [None, 0.123], "avg_duration_ms": [90_000.0, None], "cost_usd": [0.5, None]}
    )
    cells = html.unescape(table_html(frame))
    assert "<td>–</td><td>90.0 s</td><td>$0.50</td>" in cells
    assert "<td>12.3%</td><td>–</td><td>–</td>" in cells


def test_a_judge_agreement_alpha_reads_as_a_number_not_a_percentage():
    frame = pl.DataFrame({"alpha": [0.62, -0.1], "alpha_lo": [0.4, None], "alpha_hi": [0.8, None]})
    cells = html.unescape(table_html(frame))
    assert "<td>0.62 [0.4 to 0.8]</td>" in cells and "<td>-0.1</td>" in cells
