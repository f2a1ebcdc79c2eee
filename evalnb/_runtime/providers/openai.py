"""OpenAI and OpenAI-compatible models (Ollama, vLLM, llama.cpp) through Chat Completions.

The neutral conversation (:class:`~evalnb.records.Message`) becomes Chat Completions
messages: the system prompt first, assistant turns with ``tool_calls`` (arguments as
a JSON string), and one ``tool`` message per tool result. Tool-call arguments that
are not a JSON object come back as ``{"_invalid_arguments": <raw string>}``, which
the agent loop answers with an error result, and are replayed verbatim.

Token counts: ``prompt_tokens`` is already the whole prompt, so it is recorded as
``input_tokens`` unchanged; ``prompt_tokens_details.cached_tokens`` (the part read
from the cache) is ``cache_read_tokens``, null when the server does not report it.
OpenAI caches without a write charge, so ``cache_write_tokens`` is 0. A reply without
usage, or with a count missing, not a whole number or negative, records that count as
unknown, ``usage_error`` saying why (:func:`~evalnb._runtime.providers.sdk.token_counts`).

``base_url`` (or ``OPENAI_BASE_URL``) points at any compatible server. ``OPENAI_API_KEY``
goes only to OpenAI's own host: another host gets a placeholder unless the key's variable
is named (``api_key_env``, see :mod:`evalnb._runtime.providers.endpoint`). Retries are the
SDK's own (``max_retries``), each request limited to ``timeout_s``; a call with all its
retries is cut at ``timeout_s * (max_retries + 1)`` (a server trickling bytes never ends
a request by itself). A failure becomes a :class:`~evalnb.errors.ProviderError` without
the key or the URL's secrets in its text.

Example:
    >>> p = OpenAIProvider("qwen2.5:7b", base_url="http://localhost:11434/v1")
    >>> p.provider, p.settings()["base_url"]
    ('openai', 'http://localhost:11434/v1')
"""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx2
import openai

from evalnb._runtime.providers.endpoint import is_default
from evalnb._runtime.providers.sdk import SDKProvider, plain_text, token_counts
from evalnb.records import Connection, Message
from evalnb.records.interfaces import (
    ChatRequest,
    ChatResponse,
    Provider,
    ToolSpec,
    ToolUse,
)

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_URL = "https://api.openai.com/v1"
INVALID_ARGUMENTS = "_invalid_arguments"
USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}
"""Each token count and its field in Chat Completions' ``usage``."""


class OpenAIProvider(SDKProvider[openai.AsyncOpenAI]):
    """Plays the assistant's turns with an OpenAI or OpenAI-compatible model.

    The output limit is sent as ``max_completion_tokens`` to OpenAI itself (its
    reasoning models reject ``max_tokens``) and as ``max_tokens`` to compatible
    servers, which widely support only that name.
    """

    provider = "openai"
    KEY_ENV = KEY_ENV
    BASE_URL_ENV = BASE_URL_ENV
    DEFAULT_URL = DEFAULT_URL
    API_ERROR = openai.APIError
    STATUS_ERROR = openai.APIStatusError
    AIOHTTP_CLIENT = openai.DefaultAioHttpClient

    def make_client(
        self, key: str, base_url: str, http_client: httpx2.AsyncClient | None
    ) -> openai.AsyncOpenAI:
        """An OpenAI SDK client with this provider's retries and timeout."""
        return openai.AsyncOpenAI(
            api_key=key,
            base_url=base_url,
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            http_client=http_client,
            default_query=self.default_query or None,
        )

    def status_parts(self, exc: openai.APIStatusError) -> list[object]:
        """The error type, code and message (or the plain-text body)."""
        body = exc.body
        return [
            exc.type,
            exc.code,
            plain_text(body.get("message") if isinstance(body, dict) else body),
        ]

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one Chat Completions request and translate the reply.

        Raises :class:`ProviderError` once the SDK's retries are used up, or when
        the server answers with no choice at all.
        """
        # The request and the reply are plain JSON: the SDK's own ``post`` sends the body as
        # it is (no per-request transformation of its TypedDict parameters) and hands back
        # the parsed reply (no response models), with its retries, timeouts and errors
        body = {
            "model": self.model,
            "messages": to_openai_messages(request.system, request.messages),
            "tools": [to_openai_tool(t) for t in request.tools],
            self._limit_name: self.max_tokens,
        }
        completion = await self.send(
            lambda client: client.post("/chat/completions", body=body, cast_to=object)
        )
        choices = _field(completion, "choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        reply = _field(choice, "message")
        if not isinstance(reply, dict):
            raise self.bad_response("the answer has no choices")
        uses = [
            ToolUse(
                id=_field(call, "id"),
                name=_field(_field(call, "function"), "name"),
                input=parse_arguments(_field(_field(call, "function"), "arguments")),
            )
            for call in _field(reply, "tool_calls") or []
        ]
        usage = _field(completion, "usage")
        counts, problems = token_counts(usage, USAGE)
        cached, cache_problems = token_counts(
            _field(usage, "prompt_tokens_details"), {"cache_read_tokens": "cached_tokens"}
        )
        cache_problems.pop("usage", None)  # servers that do not cache report no details
        return ChatResponse(
            text=_field(reply, "content") or _field(reply, "refusal") or "",
            tool_uses=uses,
            stop_reason=_field(choice, "finish_reason"),
            input_tokens=counts["input_tokens"],
            output_tokens=counts["output_tokens"],
            cache_read_tokens=cached["cache_read_tokens"],
            cache_write_tokens=0 if usage is not None else None,
            usage_error="; ".join({**problems, **cache_problems}.values()) or None,
        )

    @functools.cached_property
    def _limit_name(self) -> str:
        """The output limit's parameter: ``max_completion_tokens`` for OpenAI itself."""
        return "max_completion_tokens" if is_default(self.base_url, DEFAULT_URL) else "max_tokens"


def _field(obj: object, name: str) -> Any:
    """``obj[name]`` of a JSON object, None for a missing field or anything but an object."""
    return obj.get(name) if isinstance(obj, dict) else None


def parse_arguments(raw: str) -> dict[str, Any]:
    """A tool call's arguments as a dict; anything but a JSON object is kept raw.

    Example:
        >>> parse_arguments('{"commands": "ls"}')
        {'commands': 'ls'}
        >>> parse_arguments('{"commands": "ls"')
        {'_invalid_arguments': '{"commands": "ls"'}
    """
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS: raw}


def to_openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The neutral conversation as Chat Completions messages, system prompt first.

    Example:
        >>> from evalnb.records import ContentBlock
        >>> use = ContentBlock(type="tool_use", id="call_1", name="bash", input={"commands": "ls"})
        >>> done = ContentBlock(type="tool_result", tool_use_id="call_1", content="a.txt")
        >>> convo = [Message(role="assistant", content=[use]),
        ...          Message(role="tool_result", content=[done])]
        >>> msgs = to_openai_messages("Be brief.", convo)
        >>> [m["role"] for m in msgs], msgs[1]["tool_calls"][0]["function"]["arguments"]
        (['system', 'assistant', 'tool'], '{"commands": "ls"}')
    """
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        texts = [b.text or "" for b in message.content if b.type == "text"]
        if message.role == "user":
            out.append({"role": "user", "content": "\n".join(texts)})
        elif message.role == "assistant":
            turn: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
            calls = [
                _tool_call(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"
            ]
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
        else:
            out += [
                {"role": "tool", "tool_call_id": b.tool_use_id, "content": b.content or ""}
                for b in message.content
                if b.type == "tool_result"
            ]
    return out


def _tool_call(
    call_id: str | None, name: str | None, args: dict[str, Any] | None
) -> dict[str, Any]:
    args = args or {}
    raw = args[INVALID_ARGUMENTS] if list(args) == [INVALID_ARGUMENTS] else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def to_openai_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool as a Chat Completions function tool.

    Example:
        >>> to_openai_tool(ToolSpec("bash", "Run bash", {"type": "object"}))
        {'type': 'function', 'function': {'name': 'bash', 'description': 'Run bash', \
'parameters': {'type': 'object'}}}
    """
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


def from_spec(model: str, connection: Connection) -> Provider:
    """The provider for ``openai/<model>``; ``connection.base_url`` selects a compatible server.

    Example:
        >>> from_spec("llama3.2", Connection(base_url="http://localhost:11434/v1")).model
        'llama3.2'
    """
    return OpenAIProvider(
        model,
        base_url=connection.base_url,
        api_key_env=connection.api_key_env,
        max_retries=connection.max_retries,
        timeout_s=connection.request_timeout_s,
    )
