"""Reports: terminal text, report.md, report.json (reloadable) and comparison.md."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.categories import by_category
from evalnb._analysis.load import load
from evalnb._analysis.runs import Runs
from evalnb._present.report import terminal_report, write_report
from evalnb._store.tables import TABLES
from evalnb.errors import InputError
from evalnb.records import AgentTrace, ScoreResult, Task, TaskRecord, TaskScore
from tests.factories import run_of

SPEC_ROWS = [
    "Tasks passed",
    "Overall rate",
    "Tool calls (ok/err)",
    "Tool call success",
    "Avg turns/task",
    "Tokens (in/out)",
    "Duration",
]
"""The row labels of spec 000's "Current Baseline" table."""


def _record(task_id: str, verdicts: list[bool], error: str | None = None) -> TaskRecord:
    checks = [
        ScoreResult(check=f"stdout_contains:v{i}", passed=ok, detail=f"detail {i}", weight=1)
        for i, ok in enumerate(verdicts)
    ]
    return TaskRecord(
        task=Task(id=task_id, category="cat", prompt="p"),
        trace=AgentTrace(turns=2, natural_stop=True, duration_ms=1000),
        score=TaskScore.from_results(task_id, checks),
        error=error,
    )


def _run(run_id: str, model: str, records: list[TaskRecord], **meta) -> Runs:
    return run_of(records, run_id, model, "sim", **meta)


def _by_hand(path: Path) -> tuple[int, int, int, int]:
    """(tasks passed, tasks, tool calls ok, tool calls) counted straight from a result file."""
    results = json.loads(path.read_text())["results"]
    passed = sum(all(c["passed"] for c in r["score"]["results"]) for r in results)
    calls = [c["exit_code"] for r in results for c in r["trace"]["tool_calls"]]
    return passed, len(results), calls.count(0), len(calls)


def test_terminal_report_lists_tasks_then_the_run_summary(bashkit_eval_files):
    text = terminal_report(load(bashkit_eval_files[0]))  # Haiku
    lines = [line.strip() for line in text.splitlines()]
    # from the file: text_sed_config passed 1 of its 4 weighted checks
    assert any(line.startswith("FAIL  text_sed_config") and line.endswith("1/4") for line in lines)
    assert sum(line.startswith(("PASS", "FAIL")) for line in lines) == 25
    assert "Tasks passed: 19/25" in lines  # the fixtures README: Haiku 19/25
    assert any(line.startswith("Pass rate: 76.0% [") for line in lines)  # 19/25
    assert any(line.startswith("Overall rate: 91.5% [") for line in lines)  # 97/106 = 91.5%
    assert "Tool calls (ok/err): 116 (93/23)" in lines
    assert any(line.startswith("Tool call success: 80.2% [") for line in lines)  # 93/116
    assert "text_processing: 50.0%  1/3 passed" in lines  # score 4 of 8, one task of three


def test_terminal_report_shows_errors_and_simulated_models():
    runs = _run("r", "persona", [_record("t1", [True]), _record("t2", [True], "boom\nmore")])
    runs.runs = runs.runs.with_columns(simulated=pl.lit(True))
    text = terminal_report(runs)
    assert "== persona (simulated) · run r ==" in text
    assert "FAIL  t2  1/1  error: boom more" in text  # an errored task never passes
    assert "Tasks passed: 1/2" in text


def test_write_report_writes_three_files_atomically(bashkit_eval_files, tmp_path):
    paths = write_report(load(*bashkit_eval_files), tmp_path / "out")
    assert sorted(paths) == ["comparison.md", "report.json", "report.md"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(paths)


def test_report_md_has_labelled_rates_categories_and_every_check(bashkit_eval_files, tmp_path):
    text = write_report(load(*bashkit_eval_files), tmp_path)["report.md"].read_text()
    assert text.count("\n| Pass rate | ") == 3
    assert text.count("\n| Overall rate | ") == 3
    assert "| Tasks passed | 19/25 |" in text
    assert "### By category" in text
    assert "| text_processing | 3 | 1/3 | 33.3% [" in text  # Haiku: 1 of 3 passed
    assert "### Friction signals" in text
    assert text.count("\n| friction | low_tool_call_success | ") == 3  # one row per run
    assert text.count("#### ") == 75
    for result in json.loads(bashkit_eval_files[0].read_text())["results"]:
        for check in result["score"]["results"]:
            assert check["check"] in text


def test_comparison_md_follows_the_spec_baseline_layout(bashkit_eval_files, tmp_path):
    runs = load(*bashkit_eval_files)
    text = write_report(runs, tmp_path)["comparison.md"].read_text()
    assert "| Metric | claude-haiku-4-5 | claude-opus-4-6 | gpt-5.2 |" in text
    for label in SPEC_ROWS:
        assert f"\n| {label} | " in text
    counts = [_by_hand(p) for p in bashkit_eval_files]
    assert "| Tasks passed | " + " | ".join(f"{p}/{n}" for p, n, _, _ in counts) + " |" in text
    calls = " | ".join(f"{t} ({ok}/{t - ok})" for _, _, ok, t in counts)
    assert f"| Tool calls (ok/err) | {calls} |" in text
    assert "| Tool calls (ok/err) | 116 (93/23) |" in text  # Haiku, as in the file's summary
    row = next(line for line in text.splitlines() if line.startswith("| Overall rate |"))
    assert row.split(" | ")[1].startswith("91.5% [")  # Haiku 97/106
    row = next(line for line in text.splitlines() if line.startswith("| Tool call success |"))
    shown = [c.split(" ")[0] for c in row.split(" | ")[1:]]
    assert shown == [f"{ok / t:.1%}" for _, _, ok, t in counts]
    assert shown[0] == "80.2%"  # Haiku 93/116
    assert "### Per-Category Rates" in text
    assert "| text_processing | 50.0% [" in text  # Haiku: 4/8 weighted, with its interval,
    assert "%] (1/3) |" in text  # and 1 of 3 passed
    assert "### Trend" not in text  # all three runs are from one date


def test_comparison_md_gives_each_category_rate_its_interval(tmp_path):
    recs = [_record("t1", [True, True]), _record("t2", [True, False]), _record("t3", [False])]
    runs = _run("r", "m", recs)
    text = write_report(runs, tmp_path)["comparison.md"].read_text()
    [cat] = by_category(runs).iter_rows(named=True)
    lo, hi = cat["rate_lo"], cat["rate_hi"]
    assert f"| cat | 60.0% [{lo * 100:.1f}–{hi:.1%}] (1/3) |" in text  # 3 of 5 checks, 1 of 3 tasks
    assert 0 < lo < 0.6 < hi < 1


def test_comparison_md_says_what_a_pair_on_few_tasks_could_detect(tmp_path):
    a = _run("a", "ma", [_record(f"t{i}", [i < 8]) for i in range(12)])
    b = _run("b", "mb", [_record(f"t{i}", [i < 4]) for i in range(12)])
    text = write_report(Runs.concat([a, b]), tmp_path)["comparison.md"].read_text()
    assert "- ma (a) − mb (b): With 12 shared tasks only pass-rate differences of " in text


def test_comparison_md_adds_a_trend_for_a_model_run_on_several_dates(tmp_path):
    day1 = _run("a", "m", [_record("t1", [True]), _record("t2", [False])], started_at="2026-02-07")
    day2 = _run("b", "m", [_record("t1", [True]), _record("t2", [True])], started_at="2026-02-08")
    text = write_report(Runs.concat([day1, day2]), tmp_path)["comparison.md"].read_text()
    assert "| Metric | m |" in text  # the baseline column is the latest run
    assert "| Tasks passed | 2/2 |" in text
    assert "| Metric | 2026-02-07 | 2026-02-08 |" in text
    assert "| m pass rate | 50.0% | 100.0% |" in text
    assert "| m overall rate | 50.0% | 100.0% |" in text


def test_simulated_models_are_labelled_everywhere(tmp_path):
    runs = _run("r", "persona", [_record("t1", [True, False])], simulated=True)
    paths = write_report(runs, tmp_path)
    assert "## persona (simulated)" in paths["report.md"].read_text()
    comparison = paths["comparison.md"].read_text()
    assert "| Metric | persona (simulated) |" in comparison
    assert "| Category | persona (simulated) |" in comparison
    for text in (comparison, paths["report.md"].read_text(), terminal_report(runs)):
        assert all("persona (simulated)" in line for line in text.splitlines() if "persona" in line)


def test_report_md_lists_each_check_verdict_with_its_detail(tmp_path):
    runs = _run("r", "m", [_record("t1", [True, False], error="sandbox died")])
    text = write_report(runs, tmp_path)["report.md"].read_text()
    assert "#### FAIL t1 (epoch 1, cat): 1/2" in text
    assert "- pass [expectation] `stdout_contains:v0` (weight 1): detail 0" in text
    assert "- FAIL [expectation] `stdout_contains:v1` (weight 1): detail 1" in text
    assert "Error: `sandbox died`" in text


def test_report_json_loads_back_into_the_same_tables(bashkit_eval_files, tmp_path):
    runs = load(*bashkit_eval_files)
    path = write_report(runs, tmp_path)["report.json"]
    again = load(path)
    for name in TABLES:
        assert getattr(again, name).equals(getattr(runs, name)), name
    doc = json.loads(path.read_text())
    assert [r["total_passed"] for r in doc["summary"]] == [
        _by_hand(p)[0] for p in bashkit_eval_files
    ]


def test_a_bad_report_json_names_the_field(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({"format": "evalnb-report", "version": 1, "tables": {"runs": []}}))
    with pytest.raises(InputError, match=r"report\.json: tables\.tasks: missing"):
        load(bad)
    bad.write_text(json.dumps({"format": "evalnb-report", "version": 99, "tables": {}}))
    with pytest.raises(InputError, match="version: unsupported report version 99"):
        load(bad)


def test_comparison_md_pairs_every_model_on_the_shared_tasks(bashkit_eval_files, tmp_path):
    runs = load(*bashkit_eval_files)
    text = write_report(runs, tmp_path)["comparison.md"].read_text()
    assert "### Paired comparisons" in text
    rows = [line for line in text.splitlines() if ") − " in line and line.startswith("| ")]
    assert len(rows) == 3 * 2  # 3 pairs of models x (pass rate, weighted rate)
    haiku_opus = next(r for r in rows if "| claude-haiku-4-5" in r and "opus" in r)
    # Haiku 19/25 vs Opus 17/25 on the same 25 tasks, one attempt each: exact McNemar.
    assert "| 25 (+0/+0 unshared, 0/0 errored left out) | 76.0% vs 68.0% | +8.0 pp |" in haiku_opus
    assert "(exact McNemar)" in haiku_opus
    cells = haiku_opus.split(" | ")
    raw, adjusted = float(cells[-2].split(" ")[0]), float(cells[-1].rstrip(" |"))
    assert adjusted >= raw  # Holm over the six comparisons
    assert "better" not in text.lower()


def test_nan_scores_never_print_as_nan(bashkit_eval_files, tmp_path):
    doc = json.loads(bashkit_eval_files[0].read_text())
    doc["results"][0]["score"]["max_score"] = float("nan")
    doc["results"][1]["score"]["score"] = float("nan")
    path = tmp_path / "odd-scores.json"
    path.write_text(json.dumps(doc))
    text = terminal_report(load(path))
    assert "nan" not in text.lower()
    assert any(line.strip().startswith("Overall rate: ") for line in text.splitlines())
