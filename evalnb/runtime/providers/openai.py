"""OpenAI and OpenAI-compatible models (Ollama, vLLM, llama.cpp) through Chat Completions.

The neutral conversation (:class:`~evalnb.records.Message`) becomes Chat Completions
messages: the system prompt first, assistant turns with ``tool_calls`` (arguments as
a JSON string), and one ``tool`` message per tool result. Tool-call arguments that
are not a JSON object come back as ``{"_invalid_arguments": <raw string>}``, which
the agent loop answers with an error result, and are replayed verbatim.

``base_url`` (or ``OPENAI_BASE_URL``) points at any compatible server. ``OPENAI_API_KEY``
goes only to OpenAI's own host: another host gets a placeholder unless the key's variable
is named (``api_key_env``, see :mod:`evalnb.runtime.providers.endpoint`). Retries are the
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

import asyncio
import json
import os
from typing import Any, cast

import httpx2
import openai

from evalnb.errors import ProviderError
from evalnb.records import Connection, Message
from evalnb.records.interfaces import (
    ChatRequest,
    ChatResponse,
    Provider,
    Recording,
    ToolSpec,
    ToolUse,
)
from evalnb.records.run import DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_S
from evalnb.redact import REDACTED, redact, redact_url
from evalnb.runtime.providers.endpoint import choose_key, is_default

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_URL = "https://api.openai.com/v1"
INVALID_ARGUMENTS = "_invalid_arguments"
MAX_BODY_CHARS = 300


class OpenAIProvider:
    """Plays the assistant's turns with an OpenAI or OpenAI-compatible model.

    The output limit is sent as ``max_completion_tokens`` to OpenAI itself (its
    reasoning models reject ``max_tokens``) and as ``max_tokens`` to compatible
    servers, which widely support only that name.
    """

    provider = "openai"
    simulated = False
    recording: Recording | None = None

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        max_tokens: int = 4096,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        key = choose_key(KEY_ENV, base_url, DEFAULT_URL, api_key=api_key, api_key_env=api_key_env)
        self.model = model
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self._compatible = not is_default(base_url, DEFAULT_URL)
        self._key = key
        self._client = openai.AsyncOpenAI(
            api_key=key,
            base_url=base_url or DEFAULT_URL,
            max_retries=max_retries,
            timeout=timeout_s,
            http_client=http_client,
        )
        self._url = str(self._client.base_url).rstrip("/")

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one Chat Completions request and translate the reply.

        Raises :class:`ProviderError` once the SDK's retries are used up, or when
        the server answers with no choice at all.
        """
        limit: dict[str, Any] = {
            "max_tokens" if self._compatible else "max_completion_tokens": self.max_tokens
        }
        deadline = self.timeout_s * (self.max_retries + 1)
        try:
            async with asyncio.timeout(deadline):
                completion = await self._client.chat.completions.create(
                    model=self.model,
                    # plain dicts in the API's shape (the SDK's TypedDicts, unnamed)
                    messages=cast(Any, to_openai_messages(request.system, request.messages)),
                    tools=cast(Any, [to_openai_tool(t) for t in request.tools]),
                    **limit,
                )
        except TimeoutError:
            detail = f"no complete answer within {deadline:g}s (base URL {self._url})"
            raise ProviderError(self._clean(detail), kind="connection") from None
        except openai.APIError as exc:
            kind = "status" if isinstance(exc, openai.APIStatusError) else "connection"
            raise ProviderError(self._reason(exc), kind=kind) from None
        if not completion.choices:
            raise ProviderError(f"openai {self.model}: the response had no choices")
        choice = completion.choices[0]
        reply = choice.message
        uses = [
            ToolUse(
                id=call.id, name=call.function.name, input=parse_arguments(call.function.arguments)
            )
            for call in reply.tool_calls or []
        ]
        usage = completion.usage
        details = usage.prompt_tokens_details if usage else None
        return ChatResponse(
            text=reply.content or reply.refusal or "",
            tool_uses=uses,
            stop_reason=choice.finish_reason,
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            cache_read_tokens=details.cached_tokens if details else None,
        )

    def settings(self) -> dict[str, Any]:
        """Model, endpoint and limits; never the key.

        Example:
            >>> OpenAIProvider("gpt-4.1-mini", api_key="k").settings()
            ... # doctest: +NORMALIZE_WHITESPACE
            {'model': 'gpt-4.1-mini', 'base_url': 'https://api.openai.com/v1',
             'max_tokens': 4096, 'max_retries': 2, 'timeout_s': 60.0}
        """
        return {
            "model": self.model,
            "base_url": redact_url(self._url),
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
        }

    def _reason(self, exc: openai.APIError) -> str:
        """A one-line, secret-free description of a failed call."""
        if isinstance(exc, openai.APIStatusError):
            body = exc.body
            message = body.get("message") if isinstance(body, dict) else body
            plain = message[:MAX_BODY_CHARS] if isinstance(message, str) else None
            parts = [f"HTTP {exc.status_code}", exc.type, exc.code, plain]
            if exc.request_id:
                parts.append(f"request id {exc.request_id}")
            detail = ": ".join(str(p) for p in parts if p)
        else:
            detail = f"{type(exc).__name__}: {exc.message} (base URL {self._url})"
        return self._clean(detail)

    def _clean(self, detail: str) -> str:
        """The error text with the model named and no key or URL secret in it."""
        text = f"openai {self.model}: {detail} (max_retries={self.max_retries})"
        text = text.replace(self._url, redact_url(self._url) or "")
        return redact(text.replace(self._key, REDACTED))


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


def _tool_call(call_id: str | None, name: str | None, args: dict[str, Any] | None) -> dict:
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
