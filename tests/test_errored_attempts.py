"""Errored attempts (issue 25 item 4): checks are not run when the work never ran.

An attempt errored before its work ran when it ended with an error and none of its
tool calls ran. Its checks are recorded as not run (``passed`` null), it scores 0 of its
max and it fails; every reader shows "not run", never a pass. An attempt that errored
after some tool calls is scored on what they left. Expected values are worked out by
hand from the checks of each test.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalnb as en
from evalnb._analysis.runs import read_run_folder
from evalnb._formats.inspect_write import write_inspect_log
from evalnb._formats.scenario import load_scenario
from evalnb._present.report import write_report
from evalnb._present.widgets import task_html
from evalnb._resources import data_path
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb._store import RunStore
from evalnb.records import Task
from tests.played import PlayedAgent, Turn

# the checks of issue 25's example: the first three pass when nothing ran at all
CHECKS = [
    {"check": "exit_code:-1"},
    {"check": "stderr_empty"},
    {"check": "tool_calls_max:0"},
    {"check": "stdout_contains:hello"},
    {"check": "file_exists:/out.txt"},
    {"check": "exit_code:0", "weight": 2.0},
]
NOTES = data_path("tools", "notes")


def run(tmp_path: Path, cases, agent: PlayedAgent, **options):
    [folder] = asyncio.run(run_cases(cases, [agent], tmp_path / "runs", progress=False, **options))
    return folder


def bash_case(task_id: str = "t") -> BashCase:
    return BashCase(Task(id=task_id, category="c", prompt="p", expectations=CHECKS))


def test_an_attempt_the_model_never_reached_scores_0_of_its_max_issue_25_item_4(tmp_path):
    agent = PlayedAgent("m", {("t", 1): (Turn(error="HTTP 500"),)})
    runs = read_run_folder(run(tmp_path, [bash_case()], agent))
    task = runs.tasks.row(0, named=True)
    assert (task["score"], task["max_score"], task["passed"]) == (0.0, 7.0, False)
    assert task["error"].startswith("provider error on turn 1")
    checks = runs.checks
    assert checks.get_column("passed").to_list() == [None] * 6  # neither passed nor failed
    assert checks.get_column("weight").to_list() == [1.0] * 5 + [2.0]
    assert all(d.startswith("not run: the attempt errored") for d in checks["detail"])
    row = en.summary(runs).row(0, named=True)
    assert (row["overall_rate"], row["pass_rate"], row["errored_tasks"]) == (0.0, 0.0, 1)


def test_a_time_limit_before_the_first_command_is_an_attempt_whose_work_never_ran(tmp_path):
    agent = PlayedAgent("m", {("t", 1): (Turn(hang=True),)})
    runs = read_run_folder(run(tmp_path, [bash_case()], agent, task_timeout_s=0.5))
    assert runs.tasks.get_column("error").item().startswith("task timeout")
    assert runs.checks.get_column("passed").to_list() == [None] * 6


def test_an_attempt_that_errored_after_a_tool_call_is_scored_on_what_it_left(tmp_path):
    play = (Turn(commands=("echo hello > /out.txt; echo hello",)), Turn(error="HTTP 500"))
    runs = read_run_folder(run(tmp_path, [bash_case()], PlayedAgent("m", {("t", 1): play})))
    verdicts = dict(runs.checks.select("check", "passed").rows())
    assert verdicts == {
        "exit_code:-1": False,
        "stderr_empty": True,
        "tool_calls_max:0": False,
        "stdout_contains:hello": True,
        "file_exists:/out.txt": True,
        "exit_code:0": True,
    }
    task = runs.tasks.row(0, named=True)
    assert (task["score"], task["max_score"], task["passed"]) == (5.0, 7.0, False)  # errored


SCENARIO = f"""\
name: broken_setup
target:
  binary: notes
  builtin: {NOTES / "notes.py"}:bashkit_builtin
task: List the notes.
setup: {{commands: ["notes init", "false"]}}
gates:
  - {{type: command_succeeds, command: notes list}}
  - {{type: no_transcript_errors}}
evaluation:
  judge: {{rubric: rubric.yaml, pass_threshold: 0.5}}
"""


class Judge(PlayedAgent):
    """A judge that records whether anyone asked it."""

    asked: int = 0

    async def chat(self, request):
        self.asked += 1
        return await super().chat(request)


def test_a_scenario_whose_setup_failed_has_its_gates_and_judge_not_run(tmp_path):
    (tmp_path / "rubric.yaml").write_text(
        "criteria:\n  - {id: done, weight: 1.0, description: Done}\n"
    )
    (tmp_path / "s.yaml").write_text(SCENARIO)
    judge, second = Judge("judge"), Judge("second judge")
    case = ScenarioCase(load_scenario(tmp_path / "s.yaml"), judge=judge, extra_judges=[second])
    folder = run(tmp_path, [case], PlayedAgent("m"))
    runs = read_run_folder(folder)
    task = runs.tasks.row(0, named=True)
    assert task["error"].startswith("SetupError")
    assert (task["outcome"], task["gates_passed"], task["gates_total"]) == ("fail", 0, 2)
    assert (task["score"], task["max_score"], task["judge_score"]) == (0.0, 2.0, None)
    assert task["outcome_reason"].startswith("not run: the attempt errored")
    layers = runs.checks.select("layer", "passed").rows()
    assert layers == [("gate", None), ("gate", None), ("judge", None)]
    assert judge.asked == second.asked == 0
    [record] = RunStore.open(folder).records()
    assert record.scenario.judges == []  # no judge rated it


@pytest.fixture
def mixed(tmp_path) -> Path:
    """One attempt whose work never ran (``early``) beside one that failed a check (``late``)."""
    plays = {
        ("early", 1): (Turn(error="HTTP 500"),),
        ("late", 1): (Turn(commands=("echo hi",)),),
    }
    return run(tmp_path, [bash_case("early"), bash_case("late")], PlayedAgent("m", plays))


def test_readers_say_not_run_and_never_count_it_as_a_failed_check(mixed, tmp_path):
    runs = en.load(mixed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no price for model m
        report = write_report(runs, tmp_path / "report")["report.md"].read_text()
    assert report.count("- not run [expectation]") == 6
    html = task_html(runs, runs.runs["run_id"].item(), "early", 1)
    assert html.count("not run</span>") == 6 and ">fail<" not in html
    # the Inspect log keeps them as not run (value N, outside Inspect's accuracy)
    again = en.load(write_inspect_log(mixed, tmp_path / "logs"))
    assert (
        again.checks.sort("task_id")
        .get_column("passed")
        .equals(runs.checks.sort("task_id").get_column("passed"))
    )


def test_a_replay_compares_only_checks_that_ran_on_both_sides(mixed, tmp_path):
    [replayed] = asyncio.run(
        run_cases(
            [bash_case("early"), bash_case("late")],
            [f"replay:{mixed}"],
            tmp_path / "replay",
            progress=False,
        )
    )
    tasks = read_run_folder(replayed).tasks.sort("task_id")
    # "early" ran nothing in the recording: none of its checks has a verdict to compare
    agreement = tasks.select("task_id", "replay_checks_compared").rows()
    assert agreement == [("early", 0), ("late", 6)]
    assert tasks.filter(pl.col("task_id") == "late")["replay_checks_agree"].item() == 6
