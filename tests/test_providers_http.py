"""The Anthropic and OpenAI providers, driven through the real SDK clients offline.

Each test hands the SDK an ``httpx2`` client whose mock transport serves realistic
API responses (see ``http_fixtures``) and records the requests, then checks both
the recorded trace and what the SDK actually sent.
"""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from evalnb._runtime.agent import AgentOutcome, bash_tool_spec, default_system_prompt, run_agent
from evalnb._runtime.providers import anthropic as anthropic_provider
from evalnb._runtime.providers import openai as openai_provider
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb.errors import ProviderError
from evalnb.records import Connection, Task
from tests.http_fixtures import (
    MockAPI,
    anthropic_error,
    anthropic_message,
    anthropic_ok,
    anthropic_text,
    anthropic_tool_use,
    openai_completion,
    openai_error,
    openai_ok,
    openai_tool_call,
)

TASK = Task(
    id="list_data",
    category="file_operations",
    prompt="Which files are in /data?",
    files={"/data/notes.txt": "alpha\nbeta\n"},
)
LS_OUTPUT = "notes.txt\n"  # what `ls /data` prints for TASK.files
FAKE_KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789"


@pytest.fixture(autouse=True)
def no_credentials_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def run(provider, task: Task = TASK) -> AgentOutcome:
    return asyncio.run(run_agent(task, provider, BashkitSandbox(files=task.files)))


def anthropic(api: MockAPI, **kwargs) -> AnthropicProvider:
    kwargs.setdefault("api_key", "test-key")
    return AnthropicProvider("claude-haiku-4-5", http_client=api.client(), **kwargs)


def openai(api: MockAPI, **kwargs) -> OpenAIProvider:
    kwargs.setdefault("api_key", "test-key")
    return OpenAIProvider("gpt-4.1-mini", http_client=api.client(), **kwargs)


# --- Anthropic ---------------------------------------------------------------------------


def test_anthropic_two_turn_task_records_trace_and_sends_messages_api_requests():
    use = anthropic_tool_use("ls /data", tool_id="toolu_01A09q90qw90lq917835lq9")
    api = MockAPI(
        anthropic_ok(
            anthropic_message(
                anthropic_text("Let me list the directory."),
                use,
                stop_reason="tool_use",
                input_tokens=1913,
                output_tokens=75,
            )
        ),
        anthropic_ok(
            anthropic_message(
                anthropic_text("/data holds one file: notes.txt."),
                input_tokens=2011,
                output_tokens=21,
            )
        ),
    )
    outcome = run(anthropic(api))

    trace = outcome.trace
    assert outcome.error is None
    assert (trace.turns, trace.tool_call_count, trace.natural_stop) == (2, 1, True)
    assert trace.tool_calls[0].commands == "ls /data"
    assert trace.tool_calls[0].stdout == LS_OUTPUT
    calls = trace.llm_calls
    assert [(c.input_tokens, c.output_tokens) for c in calls] == [(1913, 75), (2011, 21)]
    assert [c.cumulative_input for c in calls] == [1913, 1913 + 2011]
    assert [c.stop_reason for c in calls] == ["tool_use", "end_turn"]
    assert [c.tool_calls_made for c in calls] == [1, 0]
    assert [c.cache_read_tokens for c in calls] == [0, 0]
    assert (trace.total_input_tokens, trace.total_output_tokens) == (1913 + 2011, 75 + 21)
    assert trace.messages[-1].content[0].text == "/data holds one file: notes.txt."

    assert [str(r.url) for r in api.requests] == ["https://api.anthropic.com/v1/messages"] * 2
    first, second = api.bodies()
    tool = bash_tool_spec()
    assert first["model"] == "claude-haiku-4-5"
    assert first["max_tokens"] == 4096
    assert first["system"] == default_system_prompt()
    assert first["tools"] == [
        {"name": "bash", "description": tool.description, "input_schema": tool.input_schema}
    ]
    prompt = {"role": "user", "content": [{"type": "text", "text": TASK.prompt}]}
    assert first["messages"] == [prompt]
    assert second["messages"] == [
        prompt,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me list the directory."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "bash",
                    "input": {"commands": "ls /data"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": LS_OUTPUT,
                    "is_error": False,
                }
            ],
        },
    ]


def test_anthropic_retries_a_429_then_completes():
    api = MockAPI(
        anthropic_error(429, "rate_limit_error", "Number of requests exceeded", retry_after="0"),
        anthropic_ok(anthropic_message(anthropic_tool_use("ls /data"), stop_reason="tool_use")),
        anthropic_ok(anthropic_message(anthropic_text("Done."))),
    )
    outcome = run(anthropic(api, max_retries=2))

    assert outcome.error is None
    assert outcome.trace.natural_stop
    assert outcome.trace.turns == 2
    assert len(api.requests) == 3  # the 429, then one request per turn


def test_anthropic_gives_up_after_bounded_retries_on_500s():
    errors = [anthropic_error(500, "api_error", "Internal server error") for _ in range(2)]
    last_request_id = errors[-1].headers["request-id"]
    api = MockAPI(*errors)
    outcome = run(anthropic(api, max_retries=1))

    assert len(api.requests) == 2  # the first try and one retry
    assert outcome.trace.turns == 0
    assert outcome.trace.llm_calls == []
    assert outcome.error is not None
    assert outcome.error.startswith("provider error on turn 1: anthropic claude-haiku-4-5:")
    assert "HTTP 500: api_error: Internal server error" in outcome.error
    assert f"request id {last_request_id}" in outcome.error
    assert "max_retries=1" in outcome.error


def test_anthropic_input_tokens_are_the_whole_prompt_with_cache_parts_apart():
    # The API's input_tokens is only the uncached tail; the model saw all three parts.
    api = MockAPI(
        anthropic_ok(
            anthropic_message(
                anthropic_tool_use("ls /data"),
                stop_reason="tool_use",
                input_tokens=12,
                output_tokens=9,
                cache_read=0,
                cache_creation=69_440,
            )
        ),
        anthropic_ok(
            anthropic_message(
                anthropic_text("Done."),
                input_tokens=3,
                output_tokens=5,
                cache_read=69_440,
                cache_creation=419,
            )
        ),
    )
    trace = run(anthropic(api)).trace
    first, second = trace.llm_calls

    assert (first.input_tokens, first.output_tokens) == (12 + 69_440, 9)
    assert (first.cache_read_tokens, first.cache_write_tokens) == (0, 69_440)
    assert (second.input_tokens, second.uncached_input_tokens) == (3 + 69_440 + 419, 3)
    assert (second.cache_read_tokens, second.cache_write_tokens) == (69_440, 419)
    assert second.cumulative_input == first.input_tokens + second.input_tokens
    assert trace.total_input_tokens == second.cumulative_input


def test_anthropic_refusal_is_a_normal_final_turn():
    api = MockAPI(anthropic_ok(anthropic_message(stop_reason="refusal", output_tokens=3)))
    outcome = run(anthropic(api))

    assert outcome.error is None
    assert outcome.trace.natural_stop
    assert outcome.trace.llm_calls[0].stop_reason == "refusal"


def test_anthropic_key_from_env_is_sent_but_never_shown(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    # A misbehaving proxy that echoes the key back in its error message.
    api = MockAPI(anthropic_error(401, "authentication_error", f"invalid x-api-key {FAKE_KEY}"))
    provider = AnthropicProvider("claude-haiku-4-5", http_client=api.client())
    outcome = run(provider)

    assert any(FAKE_KEY in value for value in api.requests[0].headers.values())
    assert len(api.requests) == 1  # a 401 is not retried
    assert outcome.error is not None
    assert "HTTP 401: authentication_error" in outcome.error
    assert FAKE_KEY not in outcome.error
    assert FAKE_KEY not in repr(provider.settings())


def test_anthropic_without_a_key_is_refused_up_front():
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicProvider("claude-haiku-4-5")


@pytest.mark.parametrize(
    "failure", [httpx2.ConnectError("connection refused"), httpx2.ReadTimeout("timed out")]
)
def test_anthropic_connection_failures_become_provider_errors(failure: Exception):
    api = MockAPI(failure)
    outcome = run(anthropic(api, max_retries=0, base_url="http://127.0.0.1:9"))

    assert len(api.requests) == 1
    assert outcome.error is not None
    assert "http://127.0.0.1:9" in outcome.error
    expected = "APITimeoutError" if isinstance(failure, httpx2.TimeoutException) else "Connection"
    assert expected in outcome.error


# --- OpenAI and compatible servers --------------------------------------------------------


def test_openai_two_turn_task_records_trace_and_sends_chat_completions_requests():
    call = openai_tool_call("ls /data")
    api = MockAPI(
        openai_ok(
            openai_completion(
                None,
                [call],
                finish_reason="tool_calls",
                prompt_tokens=1650,
                completion_tokens=18,
            )
        ),
        openai_ok(
            openai_completion("/data contains notes.txt.", prompt_tokens=1702, completion_tokens=9)
        ),
    )
    outcome = run(openai(api))

    trace = outcome.trace
    assert outcome.error is None
    assert (trace.turns, trace.tool_call_count, trace.natural_stop) == (2, 1, True)
    assert trace.tool_calls[0].stdout == LS_OUTPUT
    calls = trace.llm_calls
    assert [(c.input_tokens, c.output_tokens) for c in calls] == [(1650, 18), (1702, 9)]
    assert [c.cumulative_input for c in calls] == [1650, 1650 + 1702]
    assert [c.stop_reason for c in calls] == ["tool_calls", "stop"]
    assert (trace.total_input_tokens, trace.total_output_tokens) == (1650 + 1702, 18 + 9)

    url = "https://api.openai.com/v1/chat/completions"
    assert [str(r.url) for r in api.requests] == [url, url]
    first, second = api.bodies()
    tool = bash_tool_spec()
    assert first["model"] == "gpt-4.1-mini"
    assert first["max_completion_tokens"] == 4096
    assert "max_tokens" not in first
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
    ]
    system = {"role": "system", "content": default_system_prompt()}
    prompt = {"role": "user", "content": TASK.prompt}
    assert first["messages"] == [system, prompt]
    assert second["messages"] == [
        system,
        prompt,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"commands": "ls /data"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": LS_OUTPUT},
    ]


def test_openai_sends_one_tool_message_per_tool_call():
    calls = [openai_tool_call("ls /data"), openai_tool_call("cat /data/notes.txt")]
    api = MockAPI(
        openai_ok(openai_completion("Two looks.", calls, finish_reason="tool_calls")),
        openai_ok(openai_completion("Done.")),
    )
    outcome = run(openai(api))

    assert [c.tool_calls_made for c in outcome.trace.llm_calls] == [2, 0]
    sent = api.bodies()[1]["messages"]
    assert sent[2]["content"] == "Two looks."
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": calls[0]["id"], "content": LS_OUTPUT},
        {"role": "tool", "tool_call_id": calls[1]["id"], "content": "alpha\nbeta\n"},
    ]


def test_openai_compatible_server_needs_no_key():
    api = MockAPI(
        openai_ok(
            openai_completion(
                "",
                [openai_tool_call("ls /data")],
                finish_reason="tool_calls",
                prompt_tokens=640,
                completion_tokens=25,
                cached_tokens=None,
                model="qwen2.5:7b",
            )
        ),
        openai_ok(openai_completion("notes.txt", cached_tokens=None, model="qwen2.5:7b")),
    )
    provider = OpenAIProvider(
        "qwen2.5:7b", base_url="http://localhost:11434/v1", http_client=api.client()
    )
    outcome = run(provider)

    assert outcome.error is None
    assert outcome.trace.tool_calls[0].stdout == LS_OUTPUT
    first_call = outcome.trace.llm_calls[0]
    assert (first_call.input_tokens, first_call.output_tokens) == (640, 25)
    assert first_call.cache_read_tokens is None  # the server reported no details
    assert str(api.requests[0].url) == "http://localhost:11434/v1/chat/completions"
    assert api.requests[0].headers["authorization"] == "Bearer not-needed"
    body = api.bodies()[0]
    assert body["max_tokens"] == 4096
    assert "max_completion_tokens" not in body
    assert provider.settings()["base_url"] == "http://localhost:11434/v1"


def test_openai_base_url_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    api = MockAPI(openai_ok(openai_completion("Done.")))
    run(OpenAIProvider("meta-llama/Llama-3.1-8B-Instruct", http_client=api.client()))

    assert str(api.requests[0].url) == "http://localhost:8000/v1/chat/completions"


def test_openai_without_key_or_base_url_is_refused_up_front():
    with pytest.raises(ProviderError, match="OPENAI_API_KEY is not set"):
        OpenAIProvider("gpt-4.1-mini")


def test_openai_records_cached_prompt_tokens():
    api = MockAPI(
        openai_ok(
            openai_completion("Done.", prompt_tokens=2304, completion_tokens=11, cached_tokens=1920)
        )
    )
    call = run(openai(api)).trace.llm_calls[0]

    # prompt_tokens already includes the cached part: it is the whole prompt as it is.
    assert (call.input_tokens, call.cache_read_tokens) == (2304, 1920)
    assert (call.cache_write_tokens, call.uncached_input_tokens) == (0, 2304 - 1920)


def test_openai_invalid_tool_arguments_get_an_error_result_and_are_replayed_verbatim():
    raw = '{"commands": "ls /data'  # truncated JSON, as small models sometimes produce
    call = openai_tool_call(arguments=raw)
    api = MockAPI(
        openai_ok(openai_completion(None, [call], finish_reason="tool_calls")),
        openai_ok(openai_completion("Sorry, let me stop.")),
    )
    outcome = run(openai(api))

    assert outcome.error is None
    result = outcome.trace.tool_calls[0]
    assert result.exit_code == 2
    assert "'commands' (a string) is required" in result.stderr
    assistant, tool_message = api.bodies()[1]["messages"][2:]
    assert assistant["tool_calls"][0]["function"]["arguments"] == raw
    assert tool_message["tool_call_id"] == call["id"]
    assert "'commands' (a string) is required" in tool_message["content"]


def test_openai_retries_a_429_then_completes():
    api = MockAPI(
        openai_error(
            429,
            "Rate limit reached for gpt-4.1-mini on requests per min (RPM)",
            error_type="requests",
            code="rate_limit_exceeded",
            retry_after="0",
        ),
        openai_ok(openai_completion("Done.")),
    )
    outcome = run(openai(api, max_retries=2))

    assert outcome.error is None
    assert outcome.trace.turns == 1
    assert len(api.requests) == 2


def test_openai_gives_up_after_bounded_retries_on_500s():
    errors = [
        openai_error(500, "The server had an error", error_type="server_error") for _ in range(2)
    ]
    last_request_id = errors[-1].headers["x-request-id"]
    api = MockAPI(*errors)
    outcome = run(openai(api, max_retries=1))

    assert len(api.requests) == 2
    assert outcome.trace.turns == 0
    assert outcome.error is not None
    assert "openai gpt-4.1-mini: HTTP 500: server_error: The server had an error" in outcome.error
    assert f"request id {last_request_id}" in outcome.error


def test_openai_content_filter_stop_is_a_normal_final_turn():
    api = MockAPI(openai_ok(openai_completion(None, finish_reason="content_filter")))
    outcome = run(openai(api))

    assert outcome.error is None
    assert outcome.trace.llm_calls[0].stop_reason == "content_filter"


def test_openai_key_from_env_never_shown(monkeypatch: pytest.MonkeyPatch):
    key = "sk-proj-FAKEfakeFAKEfake0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    api = MockAPI(
        openai_error(401, f"Incorrect API key provided: {key}.", error_type="invalid_request_error")
    )
    provider = OpenAIProvider("gpt-4.1-mini", http_client=api.client())
    outcome = run(provider)

    assert api.requests[0].headers["authorization"] == f"Bearer {key}"
    assert outcome.error is not None
    assert "HTTP 401" in outcome.error
    assert key not in outcome.error
    assert key not in repr(provider.settings())


# --- factories ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", [AnthropicProvider, OpenAIProvider])
def test_requests_go_over_aiohttp_unless_the_base_url_holds_credentials(provider):
    def transport(base_url: str) -> str:
        sdk_client = provider("m", base_url=base_url)._clients.first
        return type(sdk_client._client._transport).__name__

    assert transport("http://127.0.0.1:9/v1") == "AiohttpTransport"
    # aiohttp refuses credentials in the URL beside the SDK's authorization header
    assert transport("http://user:pw@127.0.0.1:9/v1") == "AsyncHTTPTransport"


def test_from_spec_builds_each_provider(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    claude = anthropic_provider.from_spec("claude-sonnet-4-5", Connection())
    local = openai_provider.from_spec(
        "llama3.2", Connection(base_url="http://localhost:11434/v1", max_retries=4)
    )

    assert (claude.provider, claude.model, claude.simulated, claude.recording) == (
        "anthropic",
        "claude-sonnet-4-5",
        False,
        None,
    )
    assert (local.provider, local.model) == ("openai", "llama3.2")
    assert local.settings() == {
        "model": "llama3.2",
        "base_url": "http://localhost:11434/v1",
        "max_tokens": 4096,
        "max_retries": 4,
        "timeout_s": 60.0,
    }
