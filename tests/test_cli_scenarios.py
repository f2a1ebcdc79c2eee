"""`evalnb run` on scenarios: one run folder per model and guidance version."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SCENARIO = DATA / "scenarios" / "notes_capture.yaml"
AGENT = ROOT / "tests" / "scripts" / "notes_capture.good.yaml"
V1, V2 = (DATA / "tools" / "notes" / f"AGENTS.{v}.md" for v in ("v1", "v2"))


def test_each_guidance_version_gets_its_own_run_and_a_guidance_column(tmp_path, capsys):
    code = main(
        [
            "run",
            str(SCENARIO),
            "--model",
            f"scripted:{AGENT}",
            "--out",
            str(tmp_path),
            "--guidance",
            f"v1={V1}",
            "--guidance",
            f"v2={V2}",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    runs = load(tmp_path)
    assert sorted(runs.runs["guidance"].to_list()) == ["v1", "v2"]
    assert sorted(runs.tasks.select("guidance", "task_id").rows()) == [
        ("v1", "notes_capture"),
        ("v2", "notes_capture"),
    ]
    assert set(runs.tasks["outcome"]) == {"pass"}
    assert runs.runs["sandbox"].to_list() == ["bashkit", "bashkit"]


def test_guidance_needs_scenarios_and_a_name(tmp_path, capsys):
    tasks = DATA / "tasks" / "smoke.jsonl"
    assert (
        main(
            [
                "run",
                str(tasks),
                "--model",
                "reference",
                "--guidance",
                f"v1={V1}",
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 2
    )
    assert "guidance versions apply to scenarios only" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                str(SCENARIO),
                "--model",
                "reference",
                "--guidance",
                str(V1),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 2
    )
    assert "expected NAME=FILE" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_judge_may_not_be_the_model_under_test(tmp_path, capsys):
    judged = DATA / "scenarios" / "notes_export_report.yaml"
    code = main(
        [
            "run",
            str(judged),
            "--model",
            "openai/gpt-4o-mini",
            "--judge",
            "openai/gpt-4o-mini",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "is a model under test" in capsys.readouterr().err
    assert not tmp_path.joinpath("runs").exists() and not any(tmp_path.iterdir())


@pytest.fixture
def no_keys(monkeypatch):
    """No API key, base URL or judge in the environment: nothing paid can be reached."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "EVALNB_JUDGE"):
        monkeypatch.delenv(name, raising=False)


def test_a_judge_is_resolved_only_for_the_tasks_selected(tmp_path, capsys, no_keys):
    # an OpenAI judge without a key: fine, since no task selected has a judge
    argv = ["run", "notes", "--task", "notes_capture", "--task", "notes_search"]
    argv += ["--model", "sim/careful", "--judge", "openai/gpt-4o-mini", "--out", str(tmp_path)]
    assert main([*argv, "--quiet"]) == 0, capsys.readouterr().err
    assert sorted(load(tmp_path).tasks["task_id"]) == ["notes_capture", "notes_search"]
    # selecting the judged scenario needs the judge's key, and says so
    argv[2:6] = ["--task", "notes_export_report", "--task", "notes_export_report"]
    assert main([*argv, "--quiet"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_the_reference_agent_is_refused_where_no_selected_task_has_a_solution(
    tmp_path, capsys, no_keys
):
    # scenarios have no solution for it to run: every attempt would only error
    assert main(["run", "notes", "--model", "reference", "--out", str(tmp_path)]) == 2
    assert "none of the 7 selected tasks has one" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_task_id_the_dataset_lacks_is_refused_not_dropped(tmp_path, capsys, no_keys):
    argv = ["run", "notes", "--model", "sim/careful", "--out", str(tmp_path)]
    assert main([*argv, "--task", "notes_capture", "--task", "notes_captrue"]) == 2
    assert "--task: no task 'notes_captrue' in this dataset" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_bundled_suite_runs_offline_its_judged_scenario_without_its_judge(
    tmp_path, capsys, no_keys
):
    agent = ROOT / "tests" / "scripts" / "notes_export_report.good.yaml"
    argv = ["run", "notes", "--task", "notes_export_report", "--model", f"scripted:{agent}"]
    with pytest.warns(UserWarning, match="runs without its judge; its outcome is its gates'"):
        assert main([*argv, "--out", str(tmp_path), "--quiet"]) == 0, capsys.readouterr().err
    runs = load(tmp_path)
    [task] = runs.tasks.rows(named=True)
    assert (task["outcome"], task["judge_score"], task["judge_model"]) == ("pass", None, None)
    assert set(runs.checks["layer"]) == {"gate"}
    # the whole suite with a simulated agent: every scenario runs, no key asked for
    with pytest.warns(UserWarning, match="runs without its judge"):
        assert main(["run", "notes", "--model", "sim/careful", "--out", str(tmp_path / "all")]) == 0
    assert load(tmp_path / "all").tasks.height == 7
