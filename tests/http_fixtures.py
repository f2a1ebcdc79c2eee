"""Realistic Anthropic and OpenAI HTTP responses, and a mock API that records requests.

The SDKs talk through ``httpx2``; a :class:`MockAPI` gives them an ``httpx2.AsyncClient``
whose transport serves queued responses in order and keeps every request, so
tests can drive the real SDK clients offline and inspect what they sent.

Bodies follow the shapes the live APIs return (ids such as ``msg_01...``,
``toolu_01...``, ``chatcmpl-...``, ``call_...``; full usage blocks; error
envelopes with request ids).

Example:
    >>> api = MockAPI(anthropic_ok(anthropic_message(anthropic_text("hi"))))
    >>> api.responses[0].status_code
    200
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx2

ANTHROPIC_MODEL = "claude-haiku-4-5-20251001"
OPENAI_MODEL = "gpt-4.1-mini-2025-04-14"

_ids = itertools.count(1)


def _suffix(width: int) -> str:
    """A fresh id tail of mixed letters and digits, like the APIs' ids."""
    return f"Kq7X{next(_ids):0{width - 4}d}"


class MockAPI:
    """Serves ``responses`` (``httpx2.Response`` or an exception to raise) in order.

    Every request is kept in ``requests``; a request beyond the queue gets a
    non-retryable 418 so the test fails loudly instead of hanging.
    """

    def __init__(self, *responses: httpx2.Response | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.responses:
            return httpx2.Response(418, json={"error": {"message": "no more scripted responses"}})
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def client(self) -> httpx2.AsyncClient:
        """An ``httpx2.AsyncClient`` to pass to the SDK as ``http_client``."""
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self._handle))

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received, in order."""
        return [json.loads(r.content) for r in self.requests]


# --- Anthropic Messages API -------------------------------------------------------------


def anthropic_text(text: str) -> dict[str, Any]:
    """A ``text`` content block."""
    return {"type": "text", "text": text}


def anthropic_tool_use(commands: str, tool_id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` block calling ``bash`` with ``commands``."""
    return {
        "type": "tool_use",
        "id": tool_id or f"toolu_01{_suffix(22)}",
        "name": "bash",
        "input": {"commands": commands},
    }


def anthropic_message(
    *content: dict[str, Any],
    stop_reason: str = "end_turn",
    input_tokens: int = 1500,
    output_tokens: int = 40,
    cache_read: int = 0,
    cache_creation: int = 0,
) -> dict[str, Any]:
    """A Messages API response body (usage as the live API reports it)."""
    return {
        "id": f"msg_01{_suffix(22)}",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC_MODEL,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": cache_creation,
            "cache_read_input_tokens": cache_read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache_creation,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        },
    }


def _anthropic_headers() -> dict[str, str]:
    return {
        "request-id": f"req_011C{_suffix(20)}",
        "anthropic-organization-id": "5f0c6c2a-3c7e-4a59-9a43-0d7c2b1e9f10",
        "content-type": "application/json",
    }


def anthropic_ok(body: dict[str, Any]) -> httpx2.Response:
    """A 200 response carrying ``body``."""
    return httpx2.Response(200, json=body, headers=_anthropic_headers())


def anthropic_error(
    status: int, error_type: str, message: str, *, retry_after: str | None = None
) -> httpx2.Response:
    """An error response in the Messages API envelope, with a ``request-id`` header."""
    headers = _anthropic_headers()
    if retry_after is not None:
        headers["retry-after"] = retry_after
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": headers["request-id"],
    }
    return httpx2.Response(status, json=body, headers=headers)


# --- OpenAI Chat Completions ------------------------------------------------------------


def openai_tool_call(commands: str | None = None, *, arguments: str | None = None) -> dict:
    """A ``bash`` function tool call; ``arguments`` overrides the JSON built from ``commands``."""
    return {
        "id": f"call_{_suffix(24)}",
        "type": "function",
        "function": {
            "name": "bash",
            "arguments": arguments if arguments is not None else json.dumps({"commands": commands}),
        },
    }


def openai_completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 1200,
    completion_tokens: int = 30,
    cached_tokens: int | None = 0,
    model: str = OPENAI_MODEL,
) -> dict[str, Any]:
    """A Chat Completions response body.

    ``cached_tokens=None`` leaves out ``prompt_tokens_details``, as compatible
    servers such as Ollama do.
    """
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens, "audio_tokens": 0}
        usage["completion_tokens_details"] = {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
    return {
        "id": f"chatcmpl-{_suffix(29)}",
        "object": "chat.completion",
        "created": 1747900000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_6f2eabb9a5",
    }


def _openai_headers() -> dict[str, str]:
    return {
        "x-request-id": f"req_{_suffix(32)}",
        "openai-processing-ms": "412",
        "content-type": "application/json",
    }


def openai_ok(body: dict[str, Any]) -> httpx2.Response:
    """A 200 response carrying ``body``."""
    return httpx2.Response(200, json=body, headers=_openai_headers())


def openai_error(
    status: int,
    message: str,
    *,
    error_type: str,
    code: str | None = None,
    retry_after: str | None = None,
) -> httpx2.Response:
    """An error response in OpenAI's ``{"error": {...}}`` envelope, with ``x-request-id``."""
    headers = _openai_headers()
    if retry_after is not None:
        headers["retry-after"] = retry_after
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return httpx2.Response(status, json=body, headers=headers)
