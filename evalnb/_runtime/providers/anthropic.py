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
recorded apart as ``cache_read_tokens`` and ``cache_write_tokens``. A reply without
usage, or with a count missing, not a whole number or negative, records that count (and
the whole prompt, when a part of it is) as unknown, ``usage_error`` saying why
(:func:`~evalnb._runtime.providers.sdk.token_counts`).

The key comes from the constructor or ``ANTHROPIC_API_KEY``, nowhere else, and goes
only to Anthropic's own host: a ``base_url`` (or ``ANTHROPIC_BASE_URL``) elsewhere gets
a placeholder unless the key's variable is named (``api_key_env``, see
:mod:`evalnb._runtime.providers.endpoint`). Each request is limited to ``timeout_s``;
a call with all its retries is cut at ``timeout_s * (max_retries + 1)``.

Example:
    >>> p = AnthropicProvider("claude-haiku-4-5", api_key="test-key")
    >>> p.provider, p.model, p.settings()["max_tokens"]
    ('anthropic', 'claude-haiku-4-5', 4096)
"""

from __future__ import annotations

from typing import Any, cast

import anthropic
import httpx2

from evalnb._runtime.providers.sdk import SDKProvider, plain_text, token_counts
from evalnb.records import Connection, ContentBlock, Message
from evalnb.records.interfaces import (
    ChatRequest,
    ChatResponse,
    Provider,
    ToolSpec,
    ToolUse,
)

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_URL = "https://api.anthropic.com"
USAGE = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cache_read_input_tokens",
    "cache_write_tokens": "cache_creation_input_tokens",
}
"""Each token count and its field in the Messages API's ``usage``."""


class AnthropicProvider(SDKProvider[anthropic.AsyncAnthropic]):
    """Plays the assistant's turns with an Anthropic model.

    ``http_client`` replaces the SDK's HTTP client (tests pass one with a mock
    transport). A missing key raises :class:`ProviderError` at construction.
    """

    provider = "anthropic"
    KEY_ENV = KEY_ENV
    BASE_URL_ENV = BASE_URL_ENV
    DEFAULT_URL = DEFAULT_URL
    API_ERROR = anthropic.APIError
    STATUS_ERROR = anthropic.APIStatusError
    AIOHTTP_CLIENT = anthropic.DefaultAioHttpClient

    def make_client(
        self, key: str, base_url: str, http_client: httpx2.AsyncClient | None
    ) -> anthropic.AsyncAnthropic:
        """An Anthropic SDK client with this provider's retries and timeout."""
        return anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            http_client=http_client,
            default_query=self.default_query or None,
        )

    def status_parts(self, exc: anthropic.APIStatusError) -> list[object]:
        """The error type and message (or the plain-text body)."""
        return [exc.type, exc.api_message or plain_text(exc.body)]

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one Messages API request and translate the reply.

        Raises :class:`ProviderError` once the SDK's retries are used up.
        """
        message = await self.send(
            lambda client: client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=request.system,
                # plain dicts in the API's shape (the SDK's TypedDicts, unnamed)
                messages=cast(Any, [to_anthropic_message(m) for m in request.messages]),
                tools=cast(Any, [to_anthropic_tool(t) for t in request.tools]),
            )
        )
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise self.bad_response("the answer has no content list")
        texts = [block.text for block in content if block.type == "text"]
        uses = [
            ToolUse(id=block.id, name=block.name, input=dict(block.input))
            for block in content
            if block.type == "tool_use"
        ]
        counts, problems = token_counts(getattr(message, "usage", None), USAGE)
        read, write = counts["cache_read_tokens"], counts["cache_write_tokens"]
        # the whole prompt is unknown when its uncached part or a cached part is
        whole = counts["input_tokens"]
        if whole is not None and not {"cache_read_tokens", "cache_write_tokens"} & set(problems):
            whole += (read or 0) + (write or 0)
        else:
            whole = None
        return ChatResponse(
            text="\n".join(texts),
            tool_uses=uses,
            stop_reason=getattr(message, "stop_reason", None),
            input_tokens=whole,
            output_tokens=counts["output_tokens"],
            cache_read_tokens=read,
            cache_write_tokens=write,
            usage_error="; ".join(problems.values()) or None,
        )


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


def from_spec(model: str, connection: Connection) -> Provider:
    """The provider for ``anthropic/<model>``; ``connection.anthropic_base_url`` selects
    another server (``connection.base_url`` is for OpenAI-compatible servers only).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"ANTHROPIC_API_KEY": "sk-ant-example"}):
        ...     from_spec("claude-haiku-4-5", Connection()).model
        'claude-haiku-4-5'
    """
    return AnthropicProvider(
        model,
        base_url=connection.anthropic_base_url,
        api_key_env=connection.api_key_env,
        max_retries=connection.max_retries,
        timeout_s=connection.request_timeout_s,
    )
