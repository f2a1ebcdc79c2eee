"""What the Anthropic and OpenAI providers share: key, client per loop, deadline, errors.

Each event loop gets its own SDK client, closed on that loop as the loop ends
(:class:`~evalnb._runtime.providers.endpoint.PerLoop`); an ``http_client`` passed in is
the caller's and is never closed here. Without one, the client sends its requests over
aiohttp (the SDK's own ``DefaultAioHttpClient``): HTTPX's connection pool checks every
one of its connections each time it hands one out or takes one back, and with the
request and response handling around it cost the runner about twice aiohttp's CPU per
call at 128 in flight (bench/runner_throughput.py). A base URL with credentials in it
(``https://user:pass@host``) keeps HTTPX, since aiohttp refuses them beside the SDK's own
authorization header.

Both SDKs retry 429, 5xx, timeouts and connection errors themselves (``max_retries``,
with backoff honouring ``retry-after``) and limit each request to ``timeout_s``;
:meth:`SDKProvider.send` cuts a call with all its retries at
``timeout_s * (max_retries + 1)`` (a server trickling bytes never ends a request by
itself). Once the SDK gives up, the failure becomes a
:class:`~evalnb.errors.ProviderError` (``kind`` ``"status"`` for an HTTP error answer,
``"connection"`` otherwise) whose text names the model, status, error type and request
id, never the key or a URL's secrets.

A reply both providers read the same way: one that is not JSON (a proxy's ``text/html``
page with status 200) is a ``"response"`` ProviderError quoting its start (a ``bad
provider response``); token counts are read by :func:`token_counts`, so a missing usage
block, a missing count, one that is not a whole number or a negative one is an unknown
(null) count with ``usage_error`` saying why, and the rest of the reply is used.

A provider pickles as the arguments it was built with (its SDK clients are rebuilt),
so worker processes (:mod:`evalnb._runtime.workers`) can run it; a key read from the
environment is read there again, never pickled.

Example:
    >>> from evalnb._runtime.providers.openai import OpenAIProvider
    >>> import pickle
    >>> p = pickle.loads(pickle.dumps(OpenAIProvider("m", base_url="http://127.0.0.1:9/v1")))
    >>> p.settings()["base_url"], p.max_retries
    ('http://127.0.0.1:9/v1', 2)
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx2

from evalnb._redact import REDACTED, redact, redact_url
from evalnb._runtime.providers.endpoint import PerLoop, choose_key, split_base_url
from evalnb.errors import InputError, ProviderError
from evalnb.records.interfaces import Recording
from evalnb.records.run import DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_S


class Closable(Protocol):
    """An SDK client: :meth:`close` closes its connections."""

    async def close(self) -> None:
        """Close the client's connections (on the loop that opened them)."""


Client = TypeVar("Client", bound=Closable)
Reply = TypeVar("Reply")

MAX_BODY_CHARS = 300
"""How much of a plain-text error body an error message quotes."""


class SDKProvider(Generic[Client]):
    """The common part of a provider that talks to a model through a vendor SDK.

    A subclass names its ``provider``, ``KEY_ENV``, ``BASE_URL_ENV`` and ``DEFAULT_URL``,
    the SDK's base error (``API_ERROR``), status error (``STATUS_ERROR``) and aiohttp
    client (``AIOHTTP_CLIENT``), and
    implements :meth:`make_client` and :meth:`status_parts`.
    """

    provider: str
    KEY_ENV: ClassVar[str]
    BASE_URL_ENV: ClassVar[str]
    DEFAULT_URL: ClassVar[str]
    API_ERROR: ClassVar[type[Exception]]
    STATUS_ERROR: ClassVar[type[Exception]]
    AIOHTTP_CLIENT: ClassVar[type[httpx2.AsyncClient]]
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
        self._given: dict[str, Any] = {
            "model": model,
            "api_key": api_key,
            "base_url": base_url,
            "api_key_env": api_key_env,
            "max_retries": max_retries,
            "timeout_s": timeout_s,
            "max_tokens": max_tokens,
            "http_client": http_client,
        }
        self.base_url = base_url or os.environ.get(self.BASE_URL_ENV) or None
        self.default_query: dict[str, str] = {}
        if self.base_url is not None:
            try:
                self.base_url, self.default_query = split_base_url(self.base_url)
            except ValueError as exc:
                if base_url:  # the caller's argument (the CLI checks its flags as it parses)
                    raise
                raise InputError(f"${self.BASE_URL_ENV}", None, None, str(exc)) from None
        self._key = choose_key(
            self.KEY_ENV, self.base_url, self.DEFAULT_URL, api_key=api_key, api_key_env=api_key_env
        )
        self.model = model
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        base_url = self.base_url or self.DEFAULT_URL
        self._clients = PerLoop(
            lambda: self.make_client(self._key, base_url, self._http_client()), self._close
        )
        self._url = str(getattr(self._clients.first, "base_url", "")).rstrip("/")

    def _http_client(self) -> httpx2.AsyncClient | None:
        """The caller's ``http_client``, else a new aiohttp one unless the base URL holds
        credentials (None: the SDK's HTTPX client); see the module docstring."""
        given: httpx2.AsyncClient | None = self._given["http_client"]
        if given is not None or urlsplit(self.base_url or "").username is not None:
            return given
        return self.AIOHTTP_CLIENT()

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        """Pickle as the constructor call (see the module docstring)."""
        return functools.partial(type(self), **self._given), ()

    def make_client(
        self, key: str, base_url: str, http_client: httpx2.AsyncClient | None
    ) -> Client:
        """A new SDK client (called once per event loop)."""
        raise NotImplementedError

    async def _close(self, client: Client) -> None:
        """Close a client as its event loop ends (:class:`PerLoop`); an ``http_client``
        given to the constructor is the caller's to close."""
        if self._given["http_client"] is None:
            await client.close()

    def status_parts(self, exc: Any) -> list[object]:
        """The parts of an HTTP error answer worth naming, after its status code."""
        raise NotImplementedError

    async def send(self, call: Callable[[Client], Awaitable[Reply]]) -> Reply:
        """Run ``call`` with the running loop's client within the deadline; SDK failures
        become :class:`ProviderError`."""
        deadline = self.timeout_s * (self.max_retries + 1)
        client = self._clients.get()
        try:
            async with asyncio.timeout(deadline):
                reply = await call(client)
        except TimeoutError:
            detail = f"no complete answer within {deadline:g}s (base URL {self._url})"
            raise ProviderError(self._clean(detail), kind="connection") from None
        except self.API_ERROR as exc:
            raise ProviderError(self._reason(exc), kind=self._kind(exc)) from None
        if isinstance(reply, str | bytes):  # the SDK hands back a body that is not JSON as is
            text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply
            raise self.bad_response(f"the answer is not JSON: {quoted(text)}")
        return reply

    def bad_response(self, detail: str) -> ProviderError:
        """A ``bad provider response`` error: an answer that came but cannot be used."""
        return ProviderError(self._clean(detail), kind="response")

    def _kind(self, exc: Exception) -> str:
        return "status" if isinstance(exc, self.STATUS_ERROR) else "connection"

    def settings(self) -> dict[str, Any]:
        """Model, endpoint and limits; never the key.

        Example:
            >>> from evalnb._runtime.providers.anthropic import AnthropicProvider
            >>> AnthropicProvider("claude-haiku-4-5", api_key="k", max_retries=1).settings()
            ... # doctest: +NORMALIZE_WHITESPACE
            {'model': 'claude-haiku-4-5', 'base_url': 'https://api.anthropic.com',
             'max_tokens': 4096, 'max_retries': 1, 'timeout_s': 60.0}
        """
        return {
            "model": self.model,
            "base_url": redact_url(self._url),
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
        }

    def _reason(self, exc: Any) -> str:
        """A one-line, secret-free description of a failed call."""
        if isinstance(exc, self.STATUS_ERROR):
            answer: Any = exc
            parts = [f"HTTP {answer.status_code}", *self.status_parts(answer)]
            if answer.request_id:
                parts.append(f"request id {answer.request_id}")
            detail = ": ".join(str(p) for p in parts if p)
        else:
            detail = f"{type(exc).__name__}: {exc.message} (base URL {self._url})"
        return self._clean(detail)

    def _clean(self, detail: str) -> str:
        """The error text with the model named and no key or URL secret in it."""
        text = f"{self.provider} {self.model}: {detail} (max_retries={self.max_retries})"
        text = text.replace(self._url, redact_url(self._url) or "")
        return redact(text.replace(self._key, REDACTED))


def quoted(text: str) -> str:
    """The start of an unreadable answer, on one line, quoted.

    Example:
        >>> quoted("<html>\\n  <body>Bad gateway</body>\\n</html>")
        "'<html> <body>Bad gateway</body> </html>'"
    """
    return repr(" ".join(text.split())[:MAX_BODY_CHARS])


def token_counts(
    usage: object, names: dict[str, str]
) -> tuple[dict[str, int | None], dict[str, str]]:
    """The token counts of a reply's usage block, and what was wrong with them.

    ``names`` maps each count wanted to its field in ``usage`` (an SDK object or a JSON
    object, or None when the reply had no usage block). A count is None when its field
    is missing or null, not a whole number, or negative; the second value says why, per
    count (for the required counts, ``input_tokens`` and ``output_tokens``, also when
    missing: a null cache count only means the server does not report caching), or
    under ``usage`` when there was no usage block.

    Example:
        >>> from types import SimpleNamespace as Usage
        >>> counts, problems = token_counts(Usage(prompt_tokens=-5, completion_tokens=12),
        ...     {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"})
        >>> counts
        {'input_tokens': None, 'output_tokens': 12}
        >>> problems
        {'input_tokens': 'negative prompt_tokens (-5)'}
        >>> token_counts(None, {"input_tokens": "input_tokens"})
        ({'input_tokens': None}, {'usage': 'the reply had no usage'})
    """
    if usage is None:
        return dict.fromkeys(names), {"usage": "the reply had no usage"}
    counts: dict[str, int | None] = {}
    problems: dict[str, str] = {}
    for count, field in names.items():
        value: Any = usage.get(field) if isinstance(usage, dict) else getattr(usage, field, None)
        whole = isinstance(value, int) and not isinstance(value, bool)
        counts[count] = value if whole and value >= 0 else None
        if value is None:
            if count in REQUIRED_COUNTS:
                problems[count] = f"no {field}"
        elif not whole:
            problems[count] = f"{field} is not a count ({str(value)[:40]!r})"
        elif value < 0:
            problems[count] = f"negative {field} ({value})"
    return counts, problems


REQUIRED_COUNTS = ("input_tokens", "output_tokens")
"""The counts every usage block should have (see :func:`token_counts`)."""


def plain_text(body: object) -> str | None:
    """The first :data:`MAX_BODY_CHARS` characters of an error body that is plain text.

    Example:
        >>> plain_text("Bad Gateway"), plain_text({"message": "x"})
        ('Bad Gateway', None)
    """
    return body[:MAX_BODY_CHARS] if isinstance(body, str) else None
