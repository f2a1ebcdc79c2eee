"""SWE-agent ``.traj`` files: the attempt's totals, its actions as tool calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalnb._formats.swe_agent import read_swe_agent
from evalnb.errors import InputError
from tests.trace_figures import figures, fixture, quiet_load


def test_a_trajectory_gives_its_run_totals_and_actions():
    path = next(fixture("swe-agent").rglob("*.traj"))
    doc = json.loads(path.read_text())
    stats = doc["info"]["model_stats"]
    runs = quiet_load(path)
    assert figures(runs) == {
        "tasks": 1,
        "passed": [None],  # the SWE-bench evaluation is not in the file
        "llm_calls": 0,  # tokens are totals only
        "tool_calls": (0, 0, len(doc["trajectory"])),  # SWE-agent records no exit codes
        "total_input_tokens": [stats["tokens_sent"]],
        "total_output_tokens": [stats["tokens_received"]],
        "cache_read_tokens": [None],
        "cache_write_tokens": [None],
        "base_context": [None],
        "context_growth_avg": [None],
        "duration_ms": [None],
    }
    task = runs.tasks.row(0, named=True)
    assert task["turns"] == stats["api_calls"]
    assert task["recorded_cost_usd"] == stats["instance_cost"]
    assert task["natural_stop"] is (doc["info"]["exit_status"] == "submitted")
    assert runs.runs.row(0, named=True)["model"] == doc["replay_config"]["agent"]["model"]["name"]
    durations = runs.tool_calls.get_column("duration_ms").to_list()
    assert durations == [float(s["execution_time"]) * 1000 for s in doc["trajectory"]]


def _write(tmp: Path, info: dict, folder: str = "gpt4__repo__default") -> Path:
    path = tmp / folder / "i1.traj"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {"trajectory": [{"action": "ls", "observation": "a"}], "history": [], "info": info}
        )
    )
    return path


def test_the_model_comes_from_args_yaml_else_the_folder_name(tmp_path):
    path = _write(tmp_path, {"exit_status": "submitted"})
    assert read_swe_agent(path)[0][0].model == "gpt4"
    (path.parent / "args.yaml").write_text("agent:\n  model:\n    model_name: gpt-4-0613\n")
    assert read_swe_agent(path)[0][0].model == "gpt-4-0613"


def test_an_error_exit_status_errors_the_task_and_a_limit_does_not(tmp_path):
    [(_, [rec])] = read_swe_agent(_write(tmp_path, {"exit_status": "exit_environment_error"}))
    assert rec.error == "swe-agent exit status exit_environment_error"
    [(_, [rec])] = read_swe_agent(_write(tmp_path, {"exit_status": "exit_cost"}, "b"))
    assert (rec.error, rec.trace.natural_stop) == (None, False)


def test_missing_stats_stay_unknown_and_bad_ones_name_the_field(tmp_path):
    runs = quiet_load(_write(tmp_path, {}))
    assert figures(runs)["total_input_tokens"] == [None]
    assert runs.tasks.row(0, named=True)["turns"] is None
    path = _write(tmp_path, {"model_stats": {"tokens_sent": -3}}, "c")
    with pytest.raises(InputError) as err:
        read_swe_agent(path)
    assert err.value.field == "info.model_stats.tokens_sent"
