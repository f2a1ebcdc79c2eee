"""Harbor job and trial folders: trials are task attempts, the reward is the verdict,
errored trials count as failed, and Harbor's own stats are checked against the recount."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalnb as en
from evalnb._analysis.load import load
from evalnb._formats.detect import recognise
from evalnb.errors import InputError
from tests.trace_figures import figures, fixture, quiet_load, span_ms

JOB = (
    "atif",
    "xdotli-tbench",
    "fix_async_worker_queue",
    "example_runs",
    "partial_success_2025-11-19",
)


def test_a_job_folder_reads_its_trials_with_their_trajectories_and_rewards():
    job = fixture(*JOB)
    trial = next(p for p in job.iterdir() if (p / "result.json").is_file())
    result = json.loads((trial / "result.json").read_text())
    config = json.loads((job / "config.json").read_text())
    runs = quiet_load(job)
    alone = quiet_load(trial / "agent" / "trajectory.json")  # its own test recounts it
    reward = float((trial / "verifier" / "reward.txt").read_text())
    execution = result["agent_execution"]
    expected = figures(alone) | {
        "passed": [reward >= 1],
        "duration_ms": [span_ms([execution["started_at"], execution["finished_at"]])],
    }
    assert figures(runs) == expected
    run = runs.runs.row(0, named=True)
    provider, model = config["agents"][0]["model_name"].split("/")
    assert (run["provider"], run["model"], run["sandbox"]) == (provider, model, "claude-code")
    assert run["dataset"] == "adhoc"  # from stats.evals' "<agent>__<model>__<dataset>" key
    task = runs.tasks.row(0, named=True)
    assert (task["task_id"], task["score"], task["max_score"]) == (result["task_name"], reward, 1)
    assert task["harbor_input_tokens"] == result["agent_result"]["n_input_tokens"]
    assert task["local_times"] is True  # the trial's times have no zone
    assert runs.checks.select("check", "kind", "passed").rows() == [("reward", "reward", False)]


def test_the_job_and_one_of_its_trials_are_the_same_run():
    job = fixture(*JOB)
    trial = next(p for p in job.iterdir() if p.is_dir())
    assert (
        quiet_load(trial).runs.get_column("run_id").to_list()
        == quiet_load(job).runs.get_column("run_id").to_list()
    )
    with pytest.raises(InputError, match="load only one"):
        quiet_load(job, trial)


def test_a_wrapper_that_keeps_the_trial_layout_loads_as_a_trial():
    runs_dir = fixture("atif", "raidar", "results_codex_d6ac35d", "runs")
    folder = next(runs_dir.iterdir())
    assert recognise(folder).name == "a Harbor trial folder"  # no file of its own inside
    job = json.loads((folder / "harbor" / "job" / "result.json").read_text())
    trial = json.loads((folder / "harbor" / "trial" / "result.json").read_text())
    runs = quiet_load(runs_dir)  # the folder of wrapped runs, as a user points at it
    assert runs.runs.get_column("run_id").to_list() == [
        f"harbor-{job['id']}-codex-{trial['agent_info']['model_info']['name']}"
    ]
    task = runs.tasks.row(0, named=True)
    # raidar's reward is its composite score, 0 when a gate fails, whatever the quality
    assert (task["passed"], task["reward"]) == (
        False,
        float((folder / "verifier" / "reward.txt").read_text()),
    )
    assert task["total_input_tokens"] == trial["agent_result"]["n_input_tokens"]
    assert task["cache_read_tokens"] == trial["agent_result"]["n_cache_tokens"]


AGENT = {"name": "terminus-2", "model_name": "openai/gpt-x"}


def _trial(
    job: Path,
    name: str,
    task: str,
    started: str,
    reward: float | None = None,
    exception: dict[str, str] | None = None,
    result: bool = True,
    config: bool = True,
) -> None:
    """A trial folder: Harbor writes its config.json at the start, result.json at the end."""
    folder = job / name
    (folder / "agent").mkdir(parents=True)
    trial_config = {"trial_name": name, "agent": AGENT, "job_id": "J"}
    if config:
        (folder / "config.json").write_text(json.dumps(trial_config))
    if reward is not None:
        (folder / "verifier").mkdir()
        (folder / "verifier" / "reward.txt").write_text(f"{reward}\n")
    if not result:
        return
    doc: dict[str, Any] = {
        "task_name": task,
        "trial_name": name,
        "started_at": started,
        "finished_at": started.replace(":00Z", ":30Z"),
        "config": trial_config,
        "agent_info": {
            "name": "terminus-2",
            "version": "2.0",
            "model_info": {"name": "gpt-x", "provider": "openai"},
        },
        "agent_result": {"n_input_tokens": 1000, "n_cache_tokens": 400, "n_output_tokens": 50},
        "verifier_result": None,
        "exception_info": exception,
    }
    (folder / "result.json").write_text(json.dumps(doc))


def _job(tmp: Path, stats: dict[str, Any], cancelled_config: bool = True) -> Path:
    job = tmp / "job"
    job.mkdir()
    (job / "config.json").write_text(json.dumps({"job_name": "J", "agents": [AGENT]}))
    (job / "result.json").write_text(
        json.dumps(
            {
                "id": "J",
                "started_at": "2026-01-01T00:00:00Z",
                "finished_at": "2026-01-01T01:00:00Z",
                "n_total_trials": 5,
                "stats": {"n_trials": 5, "n_errors": 1, "evals": {"terminus-2__gpt-x__tb2": stats}},
            }
        )
    )
    _trial(job, "a__2", "a", "2026-01-01T00:20:00Z", reward=0.0)
    _trial(job, "a__1", "a", "2026-01-01T00:10:00Z", reward=1.0)
    _trial(job, "b__1", "b", "2026-01-01T00:10:00Z", reward=0.5)
    _trial(
        job,
        "c__1",
        "c",
        "2026-01-01T00:10:00Z",
        exception={"exception_type": "AgentTimeoutError", "exception_message": "900 s"},
    )
    _trial(  # cancelled: no result
        job, "d__1", "d", "2026-01-01T00:10:00Z", result=False, config=cancelled_config
    )
    return job


def test_trials_are_epochs_rewards_are_verdicts_and_failures_are_errored(tmp_path):
    stats = {
        "n_trials": 5,
        "n_errors": 1,
        "reward_stats": {"reward": {"1.0": ["a__1"], "0.0": ["a__2"], "0.5": ["b__1"]}},
    }
    runs = load(_job(tmp_path, stats))
    tasks = runs.tasks.sort("task_id", "epoch")
    assert tasks.select("task_id", "epoch", "passed", "score", "max_score").rows() == [
        ("a", 1, True, 1.0, 1.0),
        ("a", 2, False, 0.0, 1.0),
        ("b", 1, False, 0.5, 1.0),
        ("c", 1, False, 0.0, 0.0),
        ("d", 1, False, 0.0, 0.0),
    ]
    errors = tasks.get_column("error").to_list()
    assert errors[:3] == [None] * 3
    assert errors[3] == "AgentTimeoutError: 900 s" and "did not finish" in errors[4]
    # without a trajectory the trial's agent_result is the attempt's token total
    assert tasks.get_column("total_input_tokens").to_list()[:4] == [1000] * 4
    assert tasks.get_column("cache_read_tokens").to_list()[0] == 400
    assert runs.runs.row(0, named=True)["dataset"] == "tb2"


@pytest.mark.parametrize("trial_config", [True, False], ids=["trial-config", "job-config"])
def test_a_cancelled_trial_without_a_result_joins_its_run_as_an_errored_attempt(
    tmp_path, trial_config
):
    """Found by an audit: a trial without result.json became a run of its own,
    ``harbor-J-unknown-unknown``. Its agent and model come from the trial's
    config.json, else from the job's config.json when the job ran one agent."""
    stats = {"n_trials": 5, "n_errors": 1}
    runs = load(_job(tmp_path, stats, cancelled_config=trial_config))
    assert runs.runs.select("run_id", "sandbox", "provider", "model").rows() == [
        ("harbor-J-terminus-2-gpt-x", "terminus-2", "openai", "gpt-x")
    ]
    row = en.summary(runs).row(0, named=True)
    # 5 attempts: a__1 passed; c__1 timed out and d__1 was cancelled, both errored
    assert (row["total_tasks"], row["total_passed"], row["errored_tasks"]) == (5, 1, 2)
    assert row["pass_rate"] == pytest.approx(1 / 5)


def test_stats_that_disagree_with_the_trials_are_warned_about(tmp_path):
    stats = {"n_trials": 4, "n_errors": 1, "reward_stats": {"reward": {"1.0": ["a__2"]}}}
    with pytest.warns(UserWarning, match=r"4 trials, 5 read.*a__2: stats say reward 1\.0"):
        load(_job(tmp_path, stats))


def test_a_reward_that_is_not_a_number_names_the_file(tmp_path):
    job = _job(tmp_path, {})
    (job / "a__1" / "verifier" / "reward.txt").write_text("passed\n")
    with pytest.raises(InputError, match=r"reward.txt:1: not a number"):
        load(job)
