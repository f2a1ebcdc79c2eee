"""bashkit scripting-eval result JSON (mock tools): read, recounted, and never silently empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._formats.scripting_eval import read_scripting_eval
from evalnb.errors import InputError

FOLDER = Path(__file__).parents[2] / "shared" / "fixtures" / "bashkit-scripting-eval"


@pytest.fixture
def scripting() -> Path:
    files = sorted(FOLDER.glob("*.json")) if FOLDER.is_dir() else []
    if not files:
        pytest.skip("../shared/fixtures/bashkit-scripting-eval is absent")
    return files[0]


def test_every_figure_matches_a_recount_of_the_file(scripting):
    doc = json.loads(scripting.read_text())
    runs = load(scripting)
    results = doc["results"]
    calls = [c for r in results for c in r["trace"]["tool_calls"]]
    assert runs.tasks.height == len(results)
    passed = sum(all(c["passed"] for c in r["score"]["results"]) for r in results)
    assert runs.tasks.get_column("passed").sum() == passed
    assert runs.tool_calls.height == len(calls)
    assert (runs.tool_calls.get_column("exit_code") == 0).sum() == sum(
        c["exit_code"] == 0 for c in calls
    )
    assert runs.tasks.get_column("total_input_tokens").sum() == sum(
        r["trace"]["total_input_tokens"] for r in results
    )
    assert runs.tasks.get_column("total_output_tokens").sum() == sum(
        r["trace"]["total_output_tokens"] for r in results
    )
    assert runs.checks.height == sum(len(r["score"]["results"]) for r in results)
    assert runs.runs.get_column("source").to_list() == ["bashkit-scripting-eval"]


def test_a_mock_tool_call_is_its_name_and_input_with_the_output_as_stdout(scripting):
    doc = json.loads(scripting.read_text())
    first = doc["results"][0]["trace"]["tool_calls"][0]
    row = load(scripting).tool_calls.row(0, named=True)
    assert (
        row["commands"]
        == f"{first['tool_name']} {json.dumps(first['input'], separators=(',', ':'))}"
    )
    assert row["stdout"] == first["output"]
    assert row["call_number"] == 1


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "scripting-eval-x.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_an_empty_result_file_is_an_error_not_a_zero_task_run(tmp_path):
    doc = {
        "provider": "p",
        "model": "m",
        "timestamp": "2026-03-14T17:45:21Z",
        "max_turns": 10,
        "baseline": True,
        "results": [],
        "summary": {"total_tasks": 4},
    }
    path = _write(tmp_path, doc)
    with pytest.raises(
        InputError, match=r":\d+: results: no results \(the summary says total_tasks=4\)"
    ):
        read_scripting_eval(path)
    with pytest.raises(InputError, match="no results"):
        load(path)


def test_a_file_with_fewer_results_than_its_summary_is_a_partial_run(scripting, tmp_path):
    doc = json.loads(scripting.read_text())
    assert doc["summary"]["total_tasks"] == len(doc["results"])
    del doc["results"][0]
    with pytest.warns(UserWarning, match="partial run: .* total_tasks="):
        meta, records = read_scripting_eval(_write(tmp_path, doc))
    assert (meta.status, meta.task_count, meta.missing_tasks) == ("partial", len(records), 1)
    assert read_scripting_eval(scripting)[0].missing_tasks is None  # the whole file


def test_a_bad_tool_call_names_its_line_and_field(scripting, tmp_path):
    doc = json.loads(scripting.read_text())
    del doc["results"][1]["trace"]["tool_calls"][0]["output"]
    path = _write(tmp_path, doc)
    with pytest.raises(
        InputError, match=r":\d+: results\.1\.trace\.tool_calls\.0\.output: Field required"
    ):
        read_scripting_eval(path)
