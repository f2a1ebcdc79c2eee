"""Gemini CLI sessions: each reply with tokens is one LLM call, thinking counted as output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalnb._formats.gemini_cli import read_gemini_session
from evalnb.errors import InputError
from tests.trace_figures import figures, fixture, growth, quiet_load, span_ms


def _session_file() -> Path:
    return next(fixture("gemini-cli").glob("*.json"))


def test_a_session_counts_each_reply_with_tokens_once():
    path = _session_file()
    doc = json.loads(path.read_text())
    replies = [m for m in doc["messages"] if m["type"] == "gemini" and m.get("tokens")]
    tokens = [m["tokens"] for m in replies]
    # the whole prompt: promptTokenCount plus the tool-use prompt outside it
    inputs = [t["input"] + t["tool"] for t in tokens]
    calls = [c for m in doc["messages"] for c in m.get("toolCalls") or []]
    codes = []
    for call in calls:
        out = str(call["result"][0]["functionResponse"]["response"].get("output", ""))
        said = re.search(r"^Exit Code: (\d+)$", out, re.M)
        codes.append(int(said.group(1)) if said else {"success": 0, "error": 1}[call["status"]])
    times = [doc["startTime"], doc["lastUpdated"], *(m["timestamp"] for m in doc["messages"])]
    assert figures(quiet_load(path)) == {
        "tasks": 1,
        "passed": [None],
        "llm_calls": len(replies),
        "tool_calls": (codes.count(0), len(codes) - codes.count(0), 0),
        "total_input_tokens": [sum(inputs)],
        # thinking tokens are not in Gemini's output count but are generated output
        "total_output_tokens": [sum(t["output"] + t["thoughts"] for t in tokens)],
        "cache_read_tokens": [sum(t["cached"] for t in tokens)],
        "cache_write_tokens": [None],
        "base_context": [inputs[0]],
        "context_growth_avg": [growth(inputs)],
        "duration_ms": [span_ms(times)],
    }
    # Gemini's own total: input + output + thoughts + tool, which the figures add up to
    assert sum(t["total"] for t in tokens) == sum(inputs) + sum(
        t["output"] + t["thoughts"] for t in tokens
    )


def _write(tmp: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp / "session.json"
    path.write_text(json.dumps({"sessionId": "s", "projectHash": "h", "messages": messages}))
    return path


def _reply(mid: str, tokens: dict[str, int] | None = None, **more: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "gemini",
        "content": f"reply {mid}",
        "model": "gemini-x",
        **({"tokens": tokens} if tokens else {}),
        **more,
    }


TOKENS = {"input": 100, "output": 5, "cached": 60, "thoughts": 7, "tool": 3, "total": 115}


def test_a_message_written_twice_counts_once_and_one_without_tokens_is_no_call(tmp_path):
    shell = {
        "id": "c1",
        "name": "run_shell_command",
        "args": {"command": "make"},
        "status": "error",
        "result": [{"functionResponse": {"response": {"output": "Command: make\nExit Code: 2"}}}],
    }
    messages = [
        {"id": "u", "type": "user", "content": [{"text": "build it"}]},
        _reply("a", TOKENS, toolCalls=[shell]),
        _reply("a", TOKENS, toolCalls=[shell]),
        _reply("b"),
        _reply("c", {**TOKENS, "input": 150}),
    ]
    [(_, [rec])] = read_gemini_session(_write(tmp_path, messages))
    assert [(c.input_tokens, c.output_tokens) for c in rec.trace.llm_calls] == [
        (103, 12),
        (153, 12),
    ]
    assert [(t.commands, t.exit_code) for t in rec.trace.tool_calls] == [("make", 2)]
    assert rec.extra["exit_codes_inferred"] == 0 and rec.task.prompt == "build it"
    assert rec.trace.natural_stop is True


def test_a_session_ending_in_an_error_message_is_errored(tmp_path):
    messages = [_reply("a", TOKENS), {"id": "e", "type": "error", "content": "quota exceeded"}]
    [(_, [rec])] = read_gemini_session(_write(tmp_path, messages))
    assert rec.error == "quota exceeded" and not rec.passed


def test_a_session_cut_off_while_a_tool_ran_is_errored_with_that_call_unknown(tmp_path):
    """The file ends while a shell command runs: its call is ``executing``, no result."""
    running = {"id": "c2", "name": "run_shell_command", "args": {"command": "make test"}}
    messages = [
        {"id": "u", "type": "user", "content": [{"text": "test it"}]},
        _reply("a", TOKENS, toolCalls=[{**running, "status": "executing"}]),
    ]
    [(_, [rec])] = read_gemini_session(_write(tmp_path, messages))
    [call] = rec.trace.tool_calls
    assert (call.commands, call.exit_code, call.stdout) == ("make test", None, "")
    assert rec.extra["exit_codes_inferred"] == 0  # unknown, not guessed from the status
    assert rec.error is not None and "cut off" in rec.error and "executing" in rec.error
    assert rec.trace.natural_stop is False and rec.trace.turns == 1
    # the same call once it finished: no error
    finished = {**running, "status": "success", "result": [_result("Exit Code: 0")]}
    messages[1] = _reply("a", TOKENS, toolCalls=[finished])
    [(_, [rec])] = read_gemini_session(_write(tmp_path, messages))
    assert (rec.error, rec.trace.tool_calls[0].exit_code) == (None, 0)


def _result(output: str) -> dict[str, Any]:
    return {"functionResponse": {"response": {"output": output}}}


def test_a_session_without_tokens_has_unknown_usage(tmp_path):
    runs = quiet_load(_write(tmp_path, [_reply("a")]))
    assert figures(runs)["total_input_tokens"] == [None] and runs.llm_calls.height == 0


def test_an_invalid_session_names_the_file_line_and_field(tmp_path):
    path = _write(tmp_path, [_reply("a", {**TOKENS, "input": "many"})])
    with pytest.raises(InputError) as err:
        read_gemini_session(path)
    assert err.value.field == "messages.0.tokens.input" and err.value.line == 1
