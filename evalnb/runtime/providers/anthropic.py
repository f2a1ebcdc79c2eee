"""Anthropic models through the Messages API, with the ``bash`` tool.

The neutral conversation (:class:`~evalnb.records.Message`) is translated to the
Messages API: ``tool_result`` blocks travel in a ``user`` message, the system
prompt goes in ``system``. Retries on 429, 5xx, timeouts and connection errors are
the SDK's own (``max_retries``, with backoff honouring ``retry-after``); once it
gives up the failure becomes a :class:`~evalnb.errors.ProviderError`
whose text names the status, error type and request id, never the API key.

Token counts: the API's ``input_tokens`` counts only the uncached part of the
prompt, so the recorded ``input_tokens`` (the whole prompt, as spec 003 means it)
adds ``cache_read_input_tokens`` and ``cache_creation_input_tokens``; those two are
recorded apart as ``cache_read_tokens`` and ``cache_write_tokens``.

The key comes from the constructor or ``ANTHROPIC_API_KEY``, nowhere else.

Example:
    >>> p = AnthropicProvider("claude-haiku-4-5", api_key="test-key")
    >>> p.provider, p.model, p.settings()["max_tokens"]
    ('anthropic', 'claude-haiku-4-5', 4096)
"""

from __future__ import annotations

import os
from typing import Any

import anthropic
import httpx2

from evalnb.errors import ProviderError
from evalnb.records import ContentBlock, Message
from evalnb.records.interfaces import ChatRequest, ChatResponse, Provider, ToolSpec, ToolUse
from evalnb.redact import REDACTED, redact

KEY_ENV = "ANTHROPIC_API_KEY"
MAX_BODY_CHARS = 300


class AnthropicProvider:
    """Plays the assistant's turns with an Anthropic model.

    ``http_client`` replaces the SDK's HTTP client (tests pass one with a mock
    transport). A missing key raises :class:`ProviderError` at construction.
    """

    provider = "anthropic"
    simulated = False
    recording = None

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 120,
        max_tokens: int = 4096,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        key = api_key or os.environ.get(KEY_ENV)
        if not key:
            raise ProviderError(f"{KEY_ENV} is not set: export it or pass api_key")
        self.model = model
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self._key = key
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
            http_client=http_client,
        )

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one Messages API request and translate the reply.

        Raises :class:`ProviderError` once the SDK's retries are used up.
        """
        try:
            message = await self._client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=request.system,
                messages=[to_anthropic_message(m) for m in request.messages],
                tools=[to_anthropic_tool(t) for t in request.tools],
            )
        except anthropic.APIError as exc:
            raise ProviderError(self._reason(exc)) from None
        texts = [block.text for block in message.content if block.type == "text"]
        uses = [
            ToolUse(id=block.id, name=block.name, input=dict(block.input))
            for block in message.content
            if block.type == "tool_use"
        ]
        usage = message.usage
        read, write = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        return ChatResponse(
            text="\n".join(texts),
            tool_uses=uses,
            stop_reason=message.stop_reason,
            input_tokens=usage.input_tokens + (read or 0) + (write or 0),
            output_tokens=usage.output_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
        )

    def settings(self) -> dict[str, Any]:
        """Model, endpoint and limits; never the key.

        Example:
            >>> AnthropicProvider("claude-haiku-4-5", api_key="k", max_retries=1).settings()
            ... # doctest: +NORMALIZE_WHITESPACE
            {'model': 'claude-haiku-4-5', 'base_url': 'https://api.anthropic.com',
             'max_tokens': 4096, 'max_retries': 1, 'timeout_s': 120}
        """
        return {
            "model": self.model,
            "base_url": str(self._client.base_url).rstrip("/"),
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
        }

    def _reason(self, exc: anthropic.APIError) -> str:
        """A one-line, secret-free description of a failed call."""
        if isinstance(exc, anthropic.APIStatusError):
            plain = exc.body[:MAX_BODY_CHARS] if isinstance(exc.body, str) else None
            parts = [f"HTTP {exc.status_code}", exc.type, exc.api_message or plain]
            if exc.request_id:
                parts.append(f"request id {exc.request_id}")
            detail = ": ".join(p for p in parts if p)
        else:
            url = str(self._client.base_url).rstrip("/")
            detail = f"{type(exc).__name__}: {exc.message} (base URL {url})"
        text = f"anthropic {self.model}: {detail} (max_retries={self.max_retries})"
        return redact(text.replace(self._key, REDACTED))


def to_anthropic_message(message: Message) -> dict[str, Any]:
    """One neutral message as a Messages API message (tool results go as ``user``).

    Example:
        >>> from evalnb.records import ContentBlock
        >>> done = ContentBlock(type="tool_result", tool_use_id="toolu_1", content="ok")
        >>> m = Message(role="tool_result", content=[done])
        >>> to_anthropic_message(m)
        {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1', \
'content': 'ok'}]}
    """
    role = "assistant" if message.role == "assistant" else "user"
    return {"role": role, "content": [_block(b) for b in message.content]}


def _block(block: ContentBlock) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text or ""}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input or {}}
    out: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content or "",
    }
    if block.is_error is not None:
        out["is_error"] = block.is_error
    return out


def to_anthropic_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool as the Messages API declares it.

    Example:
        >>> to_anthropic_tool(ToolSpec("bash", "Run bash", {"type": "object"}))
        {'name': 'bash', 'description': 'Run bash', 'input_schema': {'type': 'object'}}
    """
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def from_spec(model: str, base_url: str | None) -> Provider:
    """The provider for ``anthropic/<model>`` (key from ``ANTHROPIC_API_KEY``).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"ANTHROPIC_API_KEY": "sk-ant-example"}):
        ...     from_spec("claude-haiku-4-5", None).model
        'claude-haiku-4-5'
    """
    return AnthropicProvider(model, base_url=base_url)
