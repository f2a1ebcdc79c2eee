"""What a provider's reply may not do to a record, through the real SDK clients offline.

A reply cut by the output limit is a cut, not a natural stop; negative token usage is a
bad response (the trace so far is kept); a huge reply's text is capped before it is
recorded or sent back.
"""

from __future__ import annotations

import asyncio

from evalnb.records import Task
from evalnb.runtime.agent import MAX_REPLY_CHARS, run_agent
from evalnb.runtime.providers.anthropic import AnthropicProvider
from evalnb.runtime.providers.openai import OpenAIProvider
from evalnb.runtime.sandbox import BashkitSandbox
from tests.http_fixtures import (
    MockAPI,
    anthropic_message,
    anthropic_ok,
    anthropic_text,
    openai_completion,
    openai_ok,
    openai_tool_call,
)

TASK = Task(id="t", category="c", prompt="Write a long essay.")


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


def test_negative_usage_ends_the_attempt_as_a_bad_response_keeping_earlier_turns():
    provider, _ = openai(
        openai_completion(tool_calls=[openai_tool_call("echo hi")], finish_reason="tool_calls"),
        openai_completion("Done.", prompt_tokens=-5, completion_tokens=12),
    )
    out = run(provider)
    assert out.error == "bad provider response on turn 2: negative usage: input_tokens -5"
    assert out.trace.turns == 1 and out.trace.total_input_tokens == 1200
    assert out.trace.tool_calls[0].stdout == "hi\n"


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
