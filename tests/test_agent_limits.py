"""What a provider's reply may not do to a record, through the real SDK clients offline.

A reply cut by the output limit is a cut, not a natural stop; usage that is missing or
negative leaves the tokens unknown with the reason, the same way for both providers, and
the attempt goes on; an answer that is not JSON is a bad response with a readable
reason (the trace so far is kept); a huge reply's text is capped before it is recorded
or sent back.
"""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from evalnb._analysis.runs import read_run_folder
from evalnb._runtime.agent import MAX_REPLY_CHARS, run_agent
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.runner import run_cases
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb.records import Task
from tests.http_fixtures import (
    MockAPI,
    anthropic_message,
    anthropic_ok,
    anthropic_text,
    anthropic_tool_use,
    openai_completion,
    openai_ok,
    openai_tool_call,
)

TASK = Task(id="t", category="c", prompt="Write a long essay.")
CLAUDE = "claude-haiku-4-5"


def run(provider):
    return asyncio.run(run_agent(TASK, provider, BashkitSandbox()))


def openai(*bodies) -> tuple[OpenAIProvider, MockAPI]:
    api = MockAPI(*[openai_ok(b) for b in bodies])
    return OpenAIProvider("gpt-4.1-mini", api_key="k", http_client=api.client()), api


def test_a_reply_cut_by_the_length_limit_is_not_a_natural_stop():
    provider, _ = openai(openai_completion("The essay begins and then", finish_reason="length"))
    out = run(provider)
    assert out.error is None
    assert out.trace.natural_stop is False
    assert [c.stop_reason for c in out.trace.llm_calls] == ["length"]


def test_an_anthropic_reply_cut_at_max_tokens_is_not_a_natural_stop():
    api = MockAPI(anthropic_ok(anthropic_message(anthropic_text("Half"), stop_reason="max_tokens")))
    out = run(AnthropicProvider("claude-haiku-4-5", api_key="k", http_client=api.client()))
    assert out.trace.natural_stop is False
    assert out.trace.llm_calls[0].stop_reason == "max_tokens"


def test_a_finished_reply_is_a_natural_stop():
    provider, _ = openai(openai_completion("Done.", finish_reason="stop"))
    assert run(provider).trace.natural_stop is True


def anthropic_reply(usage: dict | None, *content) -> httpx2.Response:
    body = anthropic_message(*content, stop_reason="tool_use" if len(content) > 1 else "end_turn")
    if usage is None:
        del body["usage"]
    else:
        body["usage"].update(usage)
    return anthropic_ok(body)


def openai_reply(usage: dict | None, tool: bool) -> httpx2.Response:
    body = (
        openai_completion(tool_calls=[openai_tool_call("echo hi")], finish_reason="tool_calls")
        if tool
        else openai_completion("Done.")
    )
    if usage is None:
        del body["usage"]
    else:
        body["usage"].update(usage)
    return openai_ok(body)


def both(kind: str, usage: dict | None) -> dict:
    """The two providers, whose turn 2 reply has ``usage`` (None: no usage block)."""
    tool = anthropic_tool_use("echo hi")
    claude = MockAPI(
        anthropic_reply({}, anthropic_text("Looking."), tool),
        anthropic_reply(usage, anthropic_text("Done.")),
    )
    gpt = MockAPI(openai_reply({}, tool=True), openai_reply(usage, tool=False))
    return {
        "anthropic": AnthropicProvider(
            "claude-haiku-4-5", api_key="k", http_client=claude.client()
        ),
        "openai": OpenAIProvider("gpt-4.1-mini", api_key="k", http_client=gpt.client()),
    }[kind]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("usage", "reason"),
    [
        (None, "the reply had no usage"),
        ({"input_tokens": -5, "prompt_tokens": -5}, "negative {input} (-5)"),
        ({"output_tokens": 12.5, "completion_tokens": 12.5}, "{output} is not a count ('12.5')"),
    ],
    ids=["no usage", "negative", "not a count"],
)
def test_unusable_token_counts_are_unknown_with_the_reason_and_the_attempt_goes_on(
    kind, usage, reason
):
    out = run(both(kind, usage))
    assert out.error is None  # the reply itself was fine: the attempt finished
    assert out.trace.natural_stop and out.trace.turns == 2
    first, second = out.trace.llm_calls
    assert first.usage_error is None and first.input_tokens is not None
    fields = {"input": "input_tokens", "output": "output_tokens"}
    if kind == "openai":
        fields = {"input": "prompt_tokens", "output": "completion_tokens"}
    assert second.usage_error == reason.format(**fields)
    lost = "output_tokens" if "output" in reason else "input_tokens"
    assert getattr(second, lost) is None
    if usage is None:
        assert (second.input_tokens, second.output_tokens) == (None, None)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_an_html_page_with_status_200_is_a_bad_response_with_a_readable_reason(tmp_path, kind):
    page = (
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
        "<body>nginx</body></html>"
    )
    html = httpx2.Response(200, text=page, headers={"content-type": "text/html; charset=utf-8"})
    api = MockAPI(html)
    provider = {
        "anthropic": AnthropicProvider("claude-haiku-4-5", api_key="k", http_client=api.client()),
        "openai": OpenAIProvider("gpt-4.1-mini", api_key="k", http_client=api.client()),
    }[kind]
    [path] = asyncio.run(run_cases([BashCase(TASK)], [provider], tmp_path, progress=False))
    [error] = read_run_folder(path).tasks["error"].to_list()
    assert error.startswith(f"bad provider response on turn 1: {kind} ")
    assert "the answer is not JSON: '<!DOCTYPE html> <html><head><title>502 Bad Gateway" in error


def test_the_reason_for_unknown_tokens_is_a_column_of_the_llm_calls_table(tmp_path):
    [path] = asyncio.run(
        run_cases([BashCase(TASK)], [both("openai", None)], tmp_path, progress=False)
    )
    calls = read_run_folder(path).llm_calls
    assert calls["usage_error"].to_list() == [None, "the reply had no usage"]
    assert calls["input_tokens"].to_list() == [1200, None]


def test_a_huge_reply_is_capped_in_the_record_and_in_what_is_sent_back():
    huge = "y" * (MAX_REPLY_CHARS * 3)
    provider, api = openai(
        openai_completion(
            huge, tool_calls=[openai_tool_call("echo hi")], finish_reason="tool_calls"
        ),
        openai_completion("Done."),
    )
    out = run(provider)
    [text] = [b.text for b in out.trace.messages[1].content if b.type == "text"]
    cut = MAX_REPLY_CHARS * 2
    assert text == "y" * MAX_REPLY_CHARS + f"[... {cut} characters of this reply cut by evalnb ...]"
    sent_back = api.bodies()[1]["messages"][2]["content"]  # after system and user
    assert sent_back == text
