"""Spec 000's expectation checks with bashkit-eval's semantics, against a real bashkit sandbox."""

from __future__ import annotations

import asyncio

import pytest

from evalnb._runtime.sandbox import BashkitSandbox
from evalnb._scoring.expectations import evaluate_check, score_task
from evalnb.records import AgentTrace, Expectation, Task, ToolCallResult


@pytest.fixture
def box() -> BashkitSandbox:
    sandbox = BashkitSandbox(files={"/data/in.txt": "alpha\nbeta: 2\n"})
    asyncio.run(sandbox.exec("mkdir -p /out/dir && printf 'key: value\\nx=1\\n' > /out/conf.txt"))
    return sandbox


def trace(*calls: tuple[str, str, int]) -> AgentTrace:
    return AgentTrace(
        tool_calls=[
            ToolCallResult(commands="c", stdout=out, stderr=err, exit_code=code, call_index=i)
            for i, (out, err, code) in enumerate(calls)
        ]
    )


def check(text: str, tr: AgentTrace, box=None) -> bool:
    return evaluate_check(Expectation(check=text), tr, box).passed


def test_exit_code_reads_the_last_call_only():
    tr = trace(("", "", 1), ("", "", 0))
    assert check("exit_code:0", tr)
    assert not check("exit_code:0", trace(("", "", 0), ("", "", 2)))
    assert check("exit_code:2", trace(("", "", 0), ("", "", 2)))


def test_exit_code_with_no_calls_is_minus_one_and_fails():
    result = evaluate_check(Expectation(check="exit_code:0"), AgentTrace(), None)
    assert not result.passed and result.detail == "expected 0, got -1"


def test_stdout_contains_is_a_case_sensitive_substring_of_any_call():
    tr = trace(("Hello World\n", "", 0), ("other\n", "", 1))
    assert check("stdout_contains:World", tr)
    assert not check("stdout_contains:world", tr)
    assert check("stdout_contains:other", tr)


def test_stdout_regex_searches_each_calls_stdout_separately():
    tr = trace(("total: 42\n", "", 0), ("x\n", "", 0))
    assert check(r"stdout_regex:total:\s+\d+", tr)
    assert not check(r"stdout_regex:^x\n.*total", tr)


def test_stderr_empty_passes_vacuously_and_fails_on_any_noise():
    assert check("stderr_empty", AgentTrace())
    assert check("stderr_empty", trace(("a", "", 0)))
    assert not check("stderr_empty", trace(("a", "", 0), ("", "warn", 0)))


def test_file_exists_is_true_for_directories_and_dir_exists_only_for_directories(box):
    assert check("file_exists:/out/conf.txt", AgentTrace(), box)
    assert check("file_exists:/out/dir", AgentTrace(), box)
    assert not check("file_exists:/out/missing", AgentTrace(), box)
    assert check("dir_exists:/out/dir", AgentTrace(), box)
    assert not check("dir_exists:/out/conf.txt", AgentTrace(), box)


def test_file_contains_splits_at_the_first_colon_after_the_path(box):
    assert check("file_contains:/out/conf.txt:key: value", AgentTrace(), box)
    assert not check("file_contains:/out/conf.txt:key: other", AgentTrace(), box)
    missing = evaluate_check(Expectation(check="file_contains:/nope.txt:x"), AgentTrace(), box)
    assert not missing.passed and missing.detail == "/nope.txt not found"


def test_file_line_regex_matches_any_single_line(box):
    assert check(r"file_line_regex:/out/conf.txt:^x=\d$", AgentTrace(), box)
    assert not check(r"file_line_regex:/out/conf.txt:value\nx", AgentTrace(), box)
    assert not check(r"file_line_regex:/out/dir:.*", AgentTrace(), box)


def test_tool_call_bounds_count_every_call():
    tr = trace(("", "", 0), ("", "", 1), ("", "", 0))
    assert check("tool_calls_min:3", tr) and not check("tool_calls_min:4", tr)
    assert check("tool_calls_max:3", tr) and not check("tool_calls_max:2", tr)


def test_llm_judge_without_a_judge_is_a_weight_zero_stub_that_passes():
    result = evaluate_check(
        Expectation(check="llm_judge:was it tidy?", weight=3), AgentTrace(), None
    )
    assert result.passed and result.weight == 0.0 and "stub" in result.detail


def test_score_is_the_sum_of_passed_weights_and_a_task_passes_only_if_all_pass(box):
    task = Task(
        id="t",
        category="c",
        prompt="p",
        expectations=[
            {"check": "file_exists:/out/conf.txt", "weight": 2.0},
            {"check": "stdout_contains:nothing", "weight": 1.5},
            {"check": "tool_calls_max:5"},
        ],
    )
    score = score_task(task, trace(("x", "", 0)), box)
    assert (score.score, score.max_score) == (3.0, 4.5)
    assert not score.all_passed()
    assert score.rate() == pytest.approx(3.0 / 4.5)
    assert [r.kind for r in score.results] == ["file_exists", "stdout_contains", "tool_calls_max"]
