"""``evalnb import <format>``: run folders that load exactly like the source they came from."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._cli import main

FIXTURES = Path(__file__).parents[2] / "shared" / "fixtures"
SOURCES = {
    "mira": "mira/20260626T043009Z-34f5",
    "terminal-bench": "terminal-bench",
    "onetool-bench": "onetool-bench/result-20260119.csv",
    "llm-tool-test": "llm-tool-test/create_smoke",
    "llm-tool-test-db": "llm-tool-test/results-llm_test_runs.jsonl",
}
COLUMNS = [
    "run_id",
    "task_id",
    "epoch",
    "passed",
    "error",
    "tool_call_count",
    "tool_calls_ok",
    "total_input_tokens",
    "base_context",
    "context_growth_avg",
    "gates_passed",
]


@pytest.mark.parametrize("key", sorted(SOURCES))
def test_an_imported_run_loads_like_its_source(key, tmp_path):
    source = FIXTURES / SOURCES[key]
    if not source.exists():
        pytest.skip(f"../shared/fixtures/{SOURCES[key]} is absent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["import", key, str(source), "--out", str(tmp_path)]) == 0
        imported, direct = load(tmp_path), load(source)
    keys = COLUMNS[:3]
    assert imported.tasks.select(COLUMNS).sort(keys).equals(direct.tasks.select(COLUMNS).sort(keys))
    runs = ["run_id", "status", "task_count", "source"]
    assert imported.runs.select(runs).sort("run_id").equals(direct.runs.select(runs).sort("run_id"))


def test_importing_the_wrong_format_names_what_it_is_and_writes_nothing(tmp_path, capsys):
    source = FIXTURES / "terminal-bench"
    if not source.exists():
        pytest.skip("../shared/fixtures/terminal-bench is absent")
    assert main(["import", "mira", str(source), "--out", str(tmp_path / "out")]) == 2
    assert "it looks like a Terminal-Bench run folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
