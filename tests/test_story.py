"""The computed sentences of the reports (present.story): no lead claimed without a test."""

from __future__ import annotations

from evalnb._analysis.runs import Runs
from evalnb._present import story
from evalnb.records import (
    AgentTrace,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from tests.factories import run_of
from tests.test_diagnostics import cross_model_runs


def run(model: str, outcomes: list[int]) -> Runs:
    recs = [
        TaskRecord(
            task=Task(id=f"t{i}", category="c", prompt="p"),
            score=TaskScore(
                task_id=f"t{i}",
                score=ok,
                max_score=1,
                results=[ScoreResult(check="exit_code:0", passed=bool(ok))],
            ),
        )
        for i, ok in enumerate(outcomes)
    ]
    return run_of(recs, model, model)


def test_a_lead_the_paired_test_does_not_support_is_not_called_better():
    # x passes 3 of 4, y 1 of 4: two tasks differ, both for x; exact McNemar p = 0.5.
    text = story.overview(Runs.concat([run("x", [1, 1, 1, 0]), run("y", [1, 0, 0, 0])]))
    assert "**x** has the highest pass rate" in text
    assert "paired exact McNemar test gives p = 0.5" in text
    assert "do not show it is better than **y**" in text and "ahead" not in text


def test_a_lead_the_paired_test_supports_is_stated_with_its_p_value():
    # 12 tasks: x passes all, y none; exact McNemar p = 2 / 2**12.
    text = story.overview(Runs.concat([run("x", [1] * 12), run("y", [0] * 12)]))
    assert f"p = {2 / 2**12:.3g}" in text
    assert "so it is ahead of **y** on these tasks" in text


def guided(version: str, calls: list[tuple[str, int]], passes: list[bool]) -> Runs:
    """Model ``m`` with guidance ``version``: every task runs ``calls``; task i passes as given."""
    trace = AgentTrace(
        tool_calls=[
            ToolCallResult(commands=cmd, exit_code=code, call_index=i)
            for i, (cmd, code) in enumerate(calls)
        ]
    )
    recs = [
        TaskRecord(
            task=Task(id=f"t{i}", category="c", prompt="p"),
            trace=trace,
            score=TaskScore(
                task_id=f"t{i}",
                score=int(ok),
                max_score=1,
                results=[ScoreResult(check="exit_code:0", passed=ok)],
            ),
        )
        for i, ok in enumerate(passes)
    ]
    return run_of(recs, f"m-{version}", guidance=version)


def test_the_guidance_story_prints_each_change_from_the_first_version_to_the_last():
    # Per task, v1: 5 commands, x1 and x4 fail: error rate 2/5, first-try success 3/5;
    # v2: x2 fails and x5 asks for --help: 1/5, 4/5, one help per attempt. Pass rates:
    # 2 of 5 tasks, then 4 of 5.
    v1 = guided("v1", [("x1", 1), ("x2", 0), ("x3", 0), ("x4", 1), ("x5", 0)], [1, 1, 0, 0, 0])
    v2 = guided(
        "v2", [("x1", 0), ("x2", 1), ("x3", 0), ("x4", 0), ("x5 --help", 0)], [1, 1, 1, 1, 0]
    )
    assert story.guidance(Runs.concat([v1, v2])) == (
        "- **m**, v1 → v2: error rate 40.0% → 20.0%, first-try success 60.0% → 80.0%, "
        "--help per attempt 0 → 1, pass rate 40.0% → 80.0% (5 tasks)."
    )


def test_the_guidance_story_says_when_a_model_ran_one_version_only():
    v1 = guided("v1", [("x1", 0)], [1, 0])
    assert story.guidance(v1) == "- **m** ran one guidance version only: nothing to compare."


def test_cross_model_names_the_flaky_tasks_and_their_models():
    text = story.cross_model(cross_model_runs())
    # only "epochs" has attempts that disagree: m1 passed 2 of 3, m2 1 of 2
    assert "1 task(s) were flaky, a model's attempts there disagreeing: epochs (m1, m2)." in text
    steady = story.cross_model(Runs.concat([run("x", [1, 0]), run("y", [0, 1])]))
    assert "flaky" not in steady
