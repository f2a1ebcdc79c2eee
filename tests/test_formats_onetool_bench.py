"""onetool-mcp bench CSV: tasks with aggregates only; the per-call tables stay empty."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from evalnb._analysis.cost import task_cost
from evalnb._analysis.load import load
from evalnb._analysis.summary import summary
from evalnb._present.report import terminal_report
from evalnb.errors import InputError

CSV = Path(__file__).parents[2] / "shared" / "fixtures" / "onetool-bench" / "result-20260119.csv"
HEADER = (
    "scenario,task,model,server,result,total_input,total_output,llm_calls,tool_calls,"
    "duration_s,cost_usd,base_context,context_growth_avg"
)


@pytest.fixture
def bench() -> Path:
    if not CSV.is_file():
        pytest.skip("../shared/fixtures/onetool-bench is absent")
    return CSV


def test_every_figure_matches_a_recount_of_the_csv(bench):
    with bench.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    runs = load(bench)
    tasks = runs.tasks.sort("task_id")
    rows.sort(key=lambda r: r["task"])
    rows.sort(key=lambda r: f"{r['scenario']}/{r['task']}")
    assert tasks.get_column("task_id").to_list() == [f"{r['scenario']}/{r['task']}" for r in rows]
    assert tasks.get_column("description").to_list() == [r["task"] for r in rows]
    assert tasks.get_column("passed").to_list() == [r["result"] == "PASS" for r in rows]
    assert tasks.get_column("tool_call_count").to_list() == [int(r["tool_calls"]) for r in rows]
    assert tasks.get_column("turns").to_list() == [int(r["llm_calls"]) for r in rows]
    assert tasks.get_column("total_input_tokens").to_list() == [int(r["total_input"]) for r in rows]
    assert tasks.get_column("base_context").to_list() == [int(r["base_context"]) for r in rows]
    assert tasks.get_column("context_growth_avg").to_list() == [
        float(r["context_growth_avg"]) for r in rows
    ]
    assert tasks.get_column("recorded_cost_usd").to_list() == [float(r["cost_usd"]) for r in rows]
    assert tasks.get_column("tool_calls_ok").null_count() == len(rows)  # no exit codes recorded


def test_the_recorded_costs_are_the_cost_and_the_prices_only_shown_beside_them(bench):
    with bench.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    runs = load(bench)
    costs = task_cost(runs)
    assert set(costs.get_column("cost_source")) == {"recorded"}
    by_task = dict(costs.select("task_id", "cost_usd").rows())
    assert by_task == {f"{r['scenario']}/{r['task']}": float(r["cost_usd"]) for r in rows}
    row = summary(runs).row(0, named=True)
    recorded = sum(sorted(float(r["cost_usd"]) for r in rows))
    assert row["cost_usd"] == row["recorded_cost_usd"] == recorded
    # the prices give the same cents: nothing is shown beside the recorded cost
    assert row["priced_cost_usd"] == pytest.approx(recorded, abs=5e-3)
    cost = [line.strip() for line in terminal_report(runs).splitlines() if "Cost:" in line]
    assert cost == [f"Cost: ${recorded:.2f} recorded"]


def test_the_per_call_tables_stay_empty_and_the_run_says_so(bench, tmp_path):
    runs = load(bench)
    assert (runs.llm_calls.height, runs.tool_calls.height, runs.messages.height) == (0, 0, 0)
    from evalnb._formats.onetool_bench import read_onetool_bench

    (meta, _), *_ = read_onetool_bench(bench)
    assert {"llm_calls", "tool_calls", "messages"} <= set(meta.settings.unavailable)


def _csv(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "result-x.csv"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_error_scored_and_unevaluated_results(tmp_path):
    path = _csv(
        tmp_path,
        "S,t:err,m/a,-,ERROR,1,1,1,0,1.0,0,1,0.0",
        "S,t:score,m/a,-,7.5,1,1,1,0,1.0,0,1,0.0",
        "S,t:none,m/a,-,-,1,1,1,0,1.0,0,1,0.0",
        "S,t:pass,other,-,PASS,1,1,2,1,1.0,0,1,4.0",
    )
    runs = load(path)
    assert sorted(runs.runs.get_column("model")) == ["m/a", "other"]
    rows = runs.tasks.sort("task_id").select("task_id", "passed", "error", "eval_score").rows()
    assert rows[0][:2] == ("S/t:err", False) and rows[0][2].startswith("ERROR")
    assert rows[1] == ("S/t:none", None, None, None)  # no verdict recorded: passed is null
    assert rows[2] == ("S/t:pass", True, None, None)
    assert rows[3] == ("S/t:score", None, None, 7.5)


def test_the_same_task_in_two_scenarios_is_two_tasks_and_a_repeated_row_an_epoch(tmp_path):
    path = _csv(
        tmp_path,
        "Base,compare:packages,m/a,-,PASS,10,1,1,0,1.0,0.1,10,0.0",
        "With MCP,compare:packages,m/a,srv,FAIL,20,2,2,1,2.0,0.2,10,10.0",
        "Base,compare:packages,m/a,-,FAIL,11,1,1,0,1.0,0.1,11,0.0",
    )
    tasks = load(path).tasks.sort("task_id", "epoch")
    assert tasks.select("task_id", "epoch", "category", "passed").rows() == [
        ("Base/compare:packages", 1, "Base", True),
        ("Base/compare:packages", 2, "Base", False),
        ("With MCP/compare:packages", 1, "With MCP", False),
    ]
    assert tasks.select("task_id", "epoch").is_duplicated().sum() == 0


def test_a_malformed_row_names_file_line_and_column(tmp_path):
    path = _csv(
        tmp_path, "S,t,m,-,PASS,1,1,1,0,1.0,0,1,0.0", "S,t2,m,-,PASS,lots,1,1,0,1.0,0,1,0.0"
    )
    with pytest.raises(InputError, match=r"result-x\.csv:3: total_input: not a number: 'lots'"):
        load(path)
    path.write_text("scenario,task\nS,t\n")
    with pytest.raises(InputError, match="a CSV file"):  # not the bench's header
        load(path)


def test_a_rows_llm_calls_is_the_attempts_call_count_and_its_ending_is_unknown(tmp_path):
    """Found by the differential tests (issue 25, "each import"): a task of 3 LLM calls had
    ``llm_call_count`` 0 (the empty llm_calls table counted instead of the row's
    ``llm_calls``), and ``natural_stop`` True, which no column of the row says."""
    path = _csv(tmp_path, "S,t,m/a,-,FAIL,30,3,3,2,1.0,0,10,5.0")
    runs = load(path)
    row = runs.tasks.select("llm_call_count", "turns", "natural_stop").row(0)
    assert row == (3, 3, None)
    assert summary(runs).get_column("natural_stop_rate").to_list() == [None]
