"""The LLM judge, driven through the real Anthropic and OpenAI SDK clients over mocked HTTP.

Each test serves a realistic API response (``http_fixtures``) carrying a
``submit_judgement`` tool call and checks both what evalnb made of it and what the
SDK actually sent.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.scenario_case import load_scenario_cases
from evalnb._scoring.judge import (
    JUDGE_ENV,
    TRANSCRIPT_LIMIT,
    judge_expectation,
    judge_spec,
    refuse_self_judging,
    render_transcript,
    run_judge,
)
from evalnb.errors import InputError
from evalnb.records import AgentTrace, ContentBlock, Message, Task, ToolCallResult
from evalnb.records.scenario import Rubric
from tests.http_fixtures import (
    MockAPI,
    anthropic_error,
    anthropic_message,
    anthropic_ok,
    anthropic_text,
    openai_completion,
    openai_ok,
    openai_tool_call,
)

RUBRIC = Rubric(
    criteria=[
        {"id": "command_correctness", "weight": 0.3, "description": "Valid commands"},
        {"id": "task_completion", "weight": 0.4, "description": "Completes the task"},
        {"id": "efficiency", "weight": 0.3, "description": "No dead ends"},
    ]
)
TASK = Task(id="notes_capture", category="capture", prompt="Capture three notes about standup.")
LONG = "x" * 5000


@pytest.fixture(autouse=True)
def no_credentials_in_env(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", JUDGE_ENV):
        monkeypatch.delenv(name, raising=False)


def trace() -> AgentTrace:
    use = ContentBlock(type="tool_use", id="t1", name="bash", input={"commands": "notes ad x"})
    use2 = ContentBlock(type="tool_use", id="t2", name="bash", input={"commands": "notes list"})
    return AgentTrace(
        messages=[
            Message(role="user", content=[ContentBlock(type="text", text=TASK.prompt)]),
            Message(
                role="assistant",
                content=[ContentBlock(type="text", text="I'll add the notes."), use],
            ),
            Message(role="assistant", content=[use2]),
            Message(role="assistant", content=[ContentBlock(type="text", text="All done.")]),
        ],
        tool_calls=[
            ToolCallResult(commands="notes ad x", stderr="unknown command 'ad'", exit_code=2),
            ToolCallResult(commands="notes list", stdout=LONG, exit_code=0),
        ],
    )


def judgement_block(payload: dict) -> dict:
    return {
        "type": "tool_use",
        "id": "toolu_01JudgeKq7X000000000001",
        "name": "submit_judgement",
        "input": payload,
    }


def anthropic(*responses) -> tuple[AnthropicProvider, MockAPI]:
    api = MockAPI(*responses)
    provider = AnthropicProvider(
        "claude-haiku-4-5", api_key="test-key", http_client=api.client(), max_retries=0
    )
    return provider, api


def judged(payload: dict, threshold: float = 0.7):
    provider, api = anthropic(
        anthropic_ok(anthropic_message(judgement_block(payload), stop_reason="tool_use"))
    )
    return asyncio.run(run_judge(provider, RUBRIC, TASK, trace(), threshold)), api


FULL = {
    "scores": {"command_correctness": 1.0, "task_completion": 0.5, "efficiency": 0.0},
    "weighted_score": 0.5,
    "confidence": 0.8,
    "issues": ["Mistyped 'add' as 'ad'"],
    "highlights": ["Listed the notes to check"],
}


def test_the_request_offers_submit_judgement_and_shows_task_transcript_and_rubric():
    _, api = judged(FULL)
    [body] = api.bodies()
    [tool] = body["tools"]
    assert tool["name"] == "submit_judgement"
    schema = tool["input_schema"]
    assert schema["properties"]["scores"]["required"] == [
        "command_correctness",
        "task_completion",
        "efficiency",
    ]
    assert schema["required"] == ["scores", "weighted_score", "confidence", "issues", "highlights"]
    assert "You MUST answer by calling the tool `submit_judgement` exactly once" in body["system"]
    [message] = body["messages"]
    text = message["content"][0]["text"]
    for part in [
        "# Task given to the agent\n\nCapture three notes about standup.",
        "[assistant] I'll add the notes.",
        "[tool call 1] $ notes ad x\nexit code: 2\nstderr:\nunknown command 'ad'",
        "[tool call 2] $ notes list\nexit code: 0\nstdout:\n" + "x" * 1500,
        # 5000 characters shown as 2000: the first 1500 and the last 500
        "\n[... 3000 characters omitted ...]\n" + "x" * 500 + "\n\n[assistant] All done.",
        "- command_correctness (weight 0.3): Valid commands",
        "- task_completion (weight 0.4): Completes the task",
    ]:
        assert part in text
    assert "x" * 1501 not in text


def test_a_very_long_transcript_keeps_its_beginning_and_end():
    calls = [
        ToolCallResult(commands=f"notes show {i}", stdout=f"{i:03d}" * 600, exit_code=0)
        for i in range(40)
    ]  # 40 calls of 1800 characters each, shown in full: about 73,000 characters in all
    text = render_transcript(AgentTrace(tool_calls=calls))
    assert text.startswith("[tool call 1] $ notes show 0\nexit code: 0\nstdout:\n000000")
    assert text.endswith("039" * 600)
    head, note, tail = text.partition(" characters of the transcript omitted ...]")
    assert note and len(head.rsplit("[... ", 1)[0]) + len(tail) == TRANSCRIPT_LIMIT + 4


def test_the_weighted_score_is_recomputed_from_the_scores_and_weights():
    verdict, _ = judged({**FULL, "weighted_score": 0.8}, threshold=0.5)
    # 0.3 * 1.0 + 0.4 * 0.5 + 0.3 * 0.0
    assert verdict.score == pytest.approx(0.5)
    assert verdict.passed  # 0.5 >= 0.5
    assert verdict.flags == ["judge said weighted_score 0.8, recomputed 0.5"]
    rows = verdict.rows()
    # one row, the verdict: spec 002 has no per-criterion pass/fail (efficiency scored 0
    # fails nothing by itself), and weight 0 keeps the judge out of score/max_score
    assert [(r.check, r.passed, r.weight, r.kind, r.layer) for r in rows] == [
        ("judge: weighted_score >= 0.5", True, 0.0, "judge_verdict", "judge"),
    ]
    assert rows[-1].detail == (
        "weighted_score 0.500 | scores: command_correctness 1.00, task_completion 0.50, "
        "efficiency 0.00 | confidence 0.80 | issues: Mistyped 'add' as 'ad' | "
        "highlights: Listed the notes to check | "
        "flags: judge said weighted_score 0.8, recomputed 0.5"
    )


def test_a_missing_criterion_counts_zero_and_unknown_ones_are_ignored_both_flagged():
    payload = {**FULL, "scores": {"command_correctness": 1.0, "task_completion": 1.0, "tone": 1}}
    verdict, _ = judged({**payload, "weighted_score": 0.7})
    assert verdict.score == pytest.approx(0.7)  # efficiency counts 0
    assert verdict.passed
    assert verdict.flags == [
        "criterion efficiency not scored (counted 0)",
        "ignored scores for unknown criteria ['tone']",
    ]
    assert "scores: command_correctness 1.00, task_completion 1.00, efficiency not scored" in (
        verdict.rows()[0].detail
    )


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            anthropic_ok(anthropic_message(anthropic_text("Looks great, 0.9 overall."))),
            "the judge did not call submit_judgement (stop reason end_turn): "
            "Looks great, 0.9 overall.",
        ),
        (
            anthropic_ok(
                anthropic_message(
                    judgement_block({**FULL, "scores": {"efficiency": 1.5}}),
                    stop_reason="tool_use",
                )
            ),
            "invalid judgement: scores.efficiency: Input should be less than or equal to 1",
        ),
        (
            anthropic_ok(
                anthropic_message(
                    judgement_block({k: v for k, v in FULL.items() if k != "confidence"}),
                    stop_reason="tool_use",
                )
            ),
            "the judgement lacks ['confidence']",
        ),
    ],
)
def test_a_judge_that_does_not_deliver_fails_with_the_reason_and_never_raises(reply, error):
    provider, _ = anthropic(reply)
    verdict = asyncio.run(run_judge(provider, RUBRIC, TASK, trace(), 0.7))
    assert (verdict.passed, verdict.score, verdict.error) == (False, None, error)
    [row] = verdict.rows()
    assert (row.passed, row.detail) == (False, f"judge error: {error}")


def test_a_provider_error_becomes_a_failed_judgement():
    provider, _ = anthropic(anthropic_error(400, "invalid_request_error", "prompt is too long"))
    verdict = asyncio.run(run_judge(provider, RUBRIC, TASK, trace(), 0.7))
    assert not verdict.passed
    assert verdict.error.startswith(
        "anthropic claude-haiku-4-5: HTTP 400: invalid_request_error: prompt is too long"
    )


def test_the_openai_judge_answers_through_a_function_call():
    call = openai_tool_call(arguments=json.dumps(FULL))
    call["function"]["name"] = "submit_judgement"
    api = MockAPI(openai_ok(openai_completion(None, [call], finish_reason="tool_calls")))
    provider = OpenAIProvider("gpt-4.1-mini", api_key="k", http_client=api.client(), max_retries=0)
    verdict = asyncio.run(run_judge(provider, RUBRIC, TASK, trace(), 0.7))
    assert verdict.score == pytest.approx(0.5) and not verdict.passed
    [body] = api.bodies()
    assert body["tools"][0]["function"]["name"] == "submit_judgement"
    assert body["messages"][0]["role"] == "system"


def test_an_llm_judge_expectation_is_judged_for_real():
    payload = {**FULL, "scores": {"llm_judge": 0.5}, "weighted_score": 0.5}
    provider, api = anthropic(
        anthropic_ok(anthropic_message(judgement_block(payload), stop_reason="tool_use"))
    )
    prompt = "The notes mention standup"
    result = asyncio.run(judge_expectation(prompt, TASK, trace(), provider, 2.0))
    assert (result.check, result.passed, result.weight, result.kind, result.layer) == (
        "llm_judge:The notes mention standup",
        True,  # 0.5 reaches the expectation threshold of 0.5
        2.0,
        "llm_judge",
        "expectation",
    )
    schema = api.bodies()[0]["tools"][0]["input_schema"]
    assert schema["properties"]["scores"]["properties"]["llm_judge"]["description"] == prompt


def test_the_judge_model_comes_from_cli_then_scenario_then_environment(monkeypatch):
    assert judge_spec("openai/a", "openai/b") == "openai/a"
    assert judge_spec(None, "openai/b") == "openai/b"
    assert judge_spec(None, None) is None
    monkeypatch.setenv(JUDGE_ENV, "openai/c")
    assert judge_spec(None, None) == "openai/c"
    assert judge_spec(None, "openai/b") == "openai/b"


def test_the_judge_may_not_be_a_model_under_test():
    refuse_self_judging("openai/gpt-4o-mini", ["anthropic/claude-haiku-4-5"], "suite.yaml")
    with pytest.raises(InputError, match=r"suite\.yaml: --judge: .* is a model under test"):
        refuse_self_judging("openai/gpt-4o-mini", ["reference", "openai/gpt-4o-mini"], "suite.yaml")


# --- the judge inside a scenario ------------------------------------------------------

SCENARIO = """\
name: count_words
target: {binary: wc, mode: local}
task: Count the words in in.txt.
files: {in.txt: "one two three\\n"}
gates:
  - {type: command_output_contains, command: "wc -w < in.txt", substring: "3"}
evaluation:
  judge: {rubric: rubric.yaml, pass_threshold: 0.7JUDGE_MODEL}
  composite: {gate_weight: 0.5, judge_weight: 0.5, interaction_weight: 0}
"""


def scenario(tmp_path, model: str = "") -> str:
    (tmp_path / "rubric.yaml").write_text(
        "criteria:\n"
        "  - {id: task_completion, weight: 0.5, description: Done}\n"
        "  - {id: efficiency, weight: 0.5, description: Direct}\n"
    )
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("JUDGE_MODEL", f", model: {model}" if model else ""))
    return path


def test_an_enabled_judge_needs_a_judge_model(tmp_path):
    with pytest.raises(InputError, match="the judge is enabled but no judge model is set"):
        load_scenario_cases(scenario(tmp_path))


def test_the_judge_is_resolved_once_at_load_and_refused_if_under_test(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000000000")
    monkeypatch.setenv(JUDGE_ENV, "anthropic/claude-haiku-4-5")
    [case] = load_scenario_cases(scenario(tmp_path))
    assert (case.judge.provider, case.judge.model) == ("anthropic", "claude-haiku-4-5")
    [case] = load_scenario_cases(scenario(tmp_path, "anthropic/claude-sonnet-4-5"))
    assert case.judge.model == "claude-sonnet-4-5"
    with pytest.raises(InputError, match=r"s\.yaml: --judge: .* is a model under test"):
        load_scenario_cases(
            scenario(tmp_path), judge="openai/gpt-4o-mini", models=["openai/gpt-4o-mini"]
        )


@pytest.mark.parametrize(
    ("scores", "outcome", "reason", "passed"),
    [
        # 0.5 * 0.9 + 0.5 * 0.6 = 0.75 >= 0.7: the outcome passes, and so do the task's
        # checks: efficiency's 0.6 < 0.7 alone fails nothing (spec 002 has no
        # per-criterion threshold)
        ({"task_completion": 0.9, "efficiency": 0.6}, "pass", None, True),
        (
            {"task_completion": 0.6, "efficiency": 0.6},
            "fail",
            "judge weighted_score 0.600 < 0.7",
            False,
        ),
        ({"task_completion": 1.0, "efficiency": 0.8}, "pass", None, True),
    ],
)
def test_a_scenario_outcome_needs_the_gates_and_the_judge(
    tmp_path, scores, outcome, reason, passed
):
    from evalnb._formats.scenario import load_scenario
    from evalnb._runtime.scenario_case import ScenarioCase

    payload = {**FULL, "scores": scores, "weighted_score": None}
    provider, _ = anthropic(
        anthropic_ok(anthropic_message(judgement_block(payload), stop_reason="tool_use"))
    )
    case = ScenarioCase(load_scenario(scenario(tmp_path)), judge=provider)
    box = asyncio.run(case.sandbox())
    try:
        scored = asyncio.run(case.score(trace(), box))
    finally:
        box.close()
    weighted = 0.5 * scores["task_completion"] + 0.5 * scores["efficiency"]
    result = scored.scenario
    assert (result.outcome, result.outcome_reason) == (outcome, reason)
    assert result.judge_score == pytest.approx(weighted)
    assert result.judge_model == "anthropic/claude-haiku-4-5"
    assert result.composite_score == pytest.approx(0.5 * 1 + 0.5 * weighted)
    assert [(r.layer, r.weight) for r in scored.score.results] == [("gate", 1), ("judge", 0)]
    assert scored.score.all_passed() is passed
    # score/max_score count the one gate only; the judge score has its own column
    assert (scored.score.score, scored.score.max_score) == (1, 1)


def test_a_bash_tasks_llm_judge_check_uses_the_judge_through_a_run(tmp_path):
    from evalnb._analysis.runs import read_run_folder
    from evalnb._runtime.bash_case import BashCase
    from evalnb._runtime.runner import run_cases

    bash_task = Task(
        id="tidy",
        category="c",
        prompt="p",
        solution="echo report",
        expectations=[
            {"check": "stdout_contains:report"},
            {"check": "llm_judge:The answer is tidy", "weight": 2},
        ],
    )
    low = {**FULL, "scores": {"llm_judge": 0.2}, "weighted_score": 0.2}
    provider, api = anthropic(
        anthropic_ok(anthropic_message(judgement_block(low), stop_reason="tool_use"))
    )
    judged_case, stub_case = BashCase(bash_task, judge=provider), BashCase(bash_task)
    [with_judge] = asyncio.run(
        run_cases([judged_case], ["reference"], tmp_path / "a", progress=False)
    )
    [without] = asyncio.run(run_cases([stub_case], ["reference"], tmp_path / "b", progress=False))
    judged_row = read_run_folder(with_judge).checks.filter(kind="llm_judge").row(0, named=True)
    assert (judged_row["passed"], judged_row["weight"]) == (False, 2.0)
    assert read_run_folder(with_judge).tasks.select("score", "max_score", "passed").row(0) == (
        1.0,
        3.0,
        False,
    )
    stub_row = read_run_folder(without).checks.filter(kind="llm_judge").row(0, named=True)
    assert (stub_row["passed"], stub_row["weight"]) == (True, 0.0)
    assert len(api.requests) == 1  # the judge was asked once, for the judged run only
