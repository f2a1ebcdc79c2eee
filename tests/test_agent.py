"""The agent loop: turns, tool calls, natural stop, the turn limit, and what the model sees."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from evalnb._runtime.agent import run_agent
from evalnb._runtime.providers.offline import ScriptedProvider
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb.errors import ProviderError
from evalnb.records import Task, ToolCallResult
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse
from evalnb.records.trace import tool_result_text

TASK = Task(
    id="t",
    category="c",
    prompt="Count the lines of /data/in.txt",
    files={"/data/in.txt": "a\nb\nc\n"},
)


def script(tmp_path: Path, turns: list[dict]) -> ScriptedProvider:
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump({"turns": turns}))
    return ScriptedProvider(path)


def run(provider, task: Task = TASK, **kw):
    return asyncio.run(run_agent(task, provider, BashkitSandbox(files=task.files), **kw))


def test_every_tool_use_of_a_turn_runs_in_order_and_results_go_back_in_one_message(tmp_path):
    provider = script(
        tmp_path,
        [
            {
                "text": "Looking.",
                "commands": ["wc -l < /data/in.txt", "cat /nope"],
                "input_tokens": 100,
                "output_tokens": 10,
            },
            {"text": "There are 3 lines.", "input_tokens": 160, "output_tokens": 8},
        ],
    )
    trace = run(provider).trace
    assert trace.turns == 2
    assert trace.natural_stop is True
    assert [c.stdout for c in trace.tool_calls] == ["3\n", ""]
    assert [c.call_index for c in trace.tool_calls] == [0, 1]
    assert [c.call_number for c in trace.tool_calls] == [1, 1]
    roles = [m.role for m in trace.messages]
    assert roles == ["user", "assistant", "tool_result", "assistant"]
    results = trace.messages[2].content
    assert [b.type for b in results] == ["tool_result", "tool_result"]
    assert results[0].content == "3\n" and results[0].is_error is False
    assert results[1].is_error is True and "Exit code: 1" in results[1].content


def test_per_call_records_follow_spec_003(tmp_path):
    provider = script(
        tmp_path,
        [
            {"commands": ["true", "true"], "input_tokens": 100, "output_tokens": 10},
            {"commands": ["true"], "input_tokens": 150, "output_tokens": 12},
            {"text": "done", "input_tokens": 190, "output_tokens": 3},
        ],
    )
    trace = run(provider).trace
    calls = trace.llm_calls
    assert [c.call_number for c in calls] == [1, 2, 3]
    assert [c.cumulative_input for c in calls] == [100, 250, 440]
    assert [c.tool_calls_made for c in calls] == [2, 1, 0]
    assert [c.stop_reason for c in calls] == ["tool_use", "tool_use", "end_turn"]
    assert trace.total_input_tokens == 440 and trace.total_output_tokens == 25
    assert all(c.latency_ms is not None and c.latency_ms >= 0 for c in calls)


def test_the_running_input_total_is_unknown_from_an_unknown_count_on_issue_25_item_5(tmp_path):
    provider = script(
        tmp_path,
        [
            {"commands": ["true"], "input_tokens": 1000},
            {"commands": ["true"]},  # this reply reports no usage
            {"text": "done", "input_tokens": 1600},
        ],
    )
    calls = run(provider).trace.llm_calls
    assert [c.cumulative_input for c in calls] == [1000, None, None]


def test_turn_limit_runs_the_last_turns_tools_and_is_not_a_natural_stop(tmp_path):
    provider = script(tmp_path, [{"commands": [f"echo {i}"]} for i in range(1, 6)])
    trace = run(provider, max_turns=3).trace
    assert trace.turns == 3
    assert trace.natural_stop is False
    assert [c.stdout for c in trace.tool_calls] == ["1\n", "2\n", "3\n"]
    assert trace.messages[-1].role == "tool_result"


def test_sandbox_state_persists_across_calls_of_one_attempt(tmp_path):
    provider = script(
        tmp_path,
        [
            {"commands": ["mkdir -p /out && echo hi > /out/x"]},
            {"commands": ["cat /out/x"]},
        ],
    )
    assert run(provider).trace.tool_calls[1].stdout == "hi\n"


def test_tool_result_text_format():
    call = ToolCallResult
    assert tool_result_text(call(commands="x", stdout="out\n")) == "out\n"
    assert tool_result_text(call(commands="x", stderr="boom")) == "STDERR: boom"
    assert tool_result_text(call(commands="x", exit_code=3)) == "Exit code: 3"
    assert tool_result_text(call(commands="x", stdout="o", stderr="e", exit_code=1)) == (
        "o\nSTDERR: e\nExit code: 1"
    )
    assert tool_result_text(call(commands="x")) == "(no output)"
    # an imported call whose exit code the source did not record shows none
    assert tool_result_text(call(commands="x", stdout="o", exit_code=None)) == "o"


class OddProvider:
    """Asks for an unknown tool and for bash without commands, then stops."""

    provider, model, simulated, recording = "test", "odd", False, None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        if request.turn == 1:
            uses = [ToolUse("1", "python", {"code": "1"}), ToolUse("2", "bash", {"cmd": "ls"})]
            return ChatResponse("", uses, "tool_use", 5, 5)
        return ChatResponse("ok", [], "end_turn", 5, 5)

    def settings(self):
        return {}


def test_unknown_tools_and_bad_input_are_answered_with_errors_not_crashes():
    trace = run(OddProvider()).trace
    first, second = trace.tool_calls
    assert first.exit_code == 127 and "unknown tool 'python'" in first.stderr
    assert second.exit_code == 2 and "'commands'" in second.stderr
    assert trace.natural_stop is True


class FailingProvider(OddProvider):
    async def chat(self, request: ChatRequest) -> ChatResponse:
        if request.turn == 2:
            raise ProviderError("HTTP 500 after 3 retries")
        return ChatResponse("", [ToolUse("1", "bash", {"commands": "echo 1"})], "tool_use", 5, 5)


def test_a_provider_failure_keeps_the_trace_so_far_and_reports_the_error():
    outcome = run(FailingProvider())
    assert outcome.error == "provider error on turn 2: HTTP 500 after 3 retries"
    assert outcome.trace.turns == 1
    assert outcome.trace.tool_calls[0].stdout == "1\n"
