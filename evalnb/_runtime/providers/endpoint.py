"""Where requests go and which key goes with them.

A base URL must be an ``http://`` or ``https://`` URL with a host (:func:`split_base_url`);
its query string, if any, is sent with every request, after the API's path. A provider's
key is sent only to its own default host, unless named: a base URL pointing anywhere else
(a local server, a proxy) gets no key from the environment: a placeholder is sent instead
(such servers need none). To send one, name its environment variable (``--api-key-env
NAME``). An explicit ``api_key`` is always used.

Example:
    >>> import os; os.environ["DEMO_KEY"] = "k-123"
    >>> choose_key("OPENAI_API_KEY", "http://127.0.0.1:8000/v1", "https://api.openai.com/v1")
    'not-needed'
    >>> choose_key("OPENAI_API_KEY", "http://127.0.0.1:8000/v1", "https://api.openai.com/v1",
    ...            api_key_env="DEMO_KEY")
    'k-123'
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from evalnb.errors import ProviderError

Client = TypeVar("Client")

NO_KEY = "not-needed"
"""Sent to a non-default host when no key was named (the SDKs insist on some key)."""


def split_base_url(url: str) -> tuple[str, dict[str, str]]:
    """A base URL without its query string, and the query's parameters.

    Both SDKs append the API's path (``chat/completions``, ``v1/messages``) to the base
    URL's text, so a query in it would end up before that path; the parameters go to the
    SDK's ``default_query`` instead, which puts them after it. Raises ValueError unless
    ``url`` is an ``http://`` or ``https://`` URL with a host and no ``#fragment``.

    Example:
        >>> split_base_url("http://127.0.0.1:8000/v1/?api-key=abc")
        ('http://127.0.0.1:8000/v1/', {'api-key': 'abc'})
        >>> split_base_url("ftp://example.com/v1")
        Traceback (most recent call last):
        ...
        ValueError: base URL 'ftp://example.com/v1' is not an http:// or https:// URL with a host
    """
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:  # e.g. a port that is not a number
        host = None
    if parts.scheme.lower() not in ("http", "https") or not host or parts.fragment:
        raise ValueError(f"base URL {url!r} is not an http:// or https:// URL with a host")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(query="")), query


def is_default(base_url: str | None, default_url: str) -> bool:
    """Whether ``base_url`` is unset or the provider's own default host.

    Example:
        >>> is_default("https://api.anthropic.com/", "https://api.anthropic.com")
        True
        >>> is_default("http://localhost:4000", "https://api.anthropic.com")
        False
    """
    return base_url is None or base_url.rstrip("/") == default_url.rstrip("/")


def choose_key(
    key_env: str,
    base_url: str | None,
    default_url: str,
    *,
    api_key: str | None = None,
    api_key_env: str | None = None,
) -> str:
    """The key to send: ``api_key``, else ``$api_key_env``, else ``$key_env`` for the default
    host only, else (a non-default host) :data:`NO_KEY`.

    Raises :class:`ProviderError` when the needed variable is unset.

    Example:
        >>> choose_key("NO_SUCH_VAR_X", None, "https://api.openai.com/v1")
        Traceback (most recent call last):
        ...
        evalnb.errors.ProviderError: NO_SUCH_VAR_X is not set: export it, or point a base URL \
at a server that needs no key
    """
    if api_key:
        return api_key
    if api_key_env:
        value = os.environ.get(api_key_env)
        if not value:
            raise ProviderError(f"{api_key_env} (named by --api-key-env) is not set")
        return value
    if not is_default(base_url, default_url):
        return NO_KEY
    value = os.environ.get(key_env)
    if not value:
        raise ProviderError(
            f"{key_env} is not set: export it, or point a base URL at a server that needs no key"
        )
    return value


class PerLoop(Generic[Client]):
    """An SDK client per event loop, closed on that loop when the loop ends.

    A client's connection pool belongs to the loop that opened it. A provider outlives
    an event loop when it is used by several ``asyncio.run`` calls (the judge of a run
    with several guidance versions, a notebook running twice); the first loop's client
    would then fail with "Event loop is closed". :meth:`get` builds a fresh client
    whenever the running loop is not the one the current client serves.

    Each loop's client is closed by ``close`` on that loop as the loop ends: :meth:`get`
    starts a task that waits until ``asyncio.run`` (or an ``asyncio.Runner``) cancels the
    tasks still pending at its end, and then closes the client. Left open, a client
    would be garbage-collected later, its connections trying to close on a closed loop
    ("Event loop is closed", unclosed sockets). A loop that never ends (Jupyter's) keeps
    its client open.

    Example:
        >>> closed = []
        >>> async def close(client):
        ...     closed.append(client)
        >>> clients = PerLoop(object, close)
        >>> async def get():
        ...     return clients.get()
        >>> first, again = asyncio.run(get()), asyncio.run(get())
        >>> first is clients.first, again is first, closed == [first, again]
        (True, False, True)
    """

    def __init__(
        self, make: Callable[[], Client], close: Callable[[Client], Awaitable[None]]
    ) -> None:
        self._make = make
        self._close = close
        self.first = make()  # built now, so a bad setting fails at construction
        self._client = self.first
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closers: set[asyncio.Task[None]] = set()  # the loop keeps only weak references

    def get(self) -> Client:
        """The client for the running event loop."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            if self._loop is not None:
                self._client = self._make()
            self._loop = loop
            closer = loop.create_task(self._close_at_end(self._client))
            self._closers.add(closer)
            closer.add_done_callback(self._closers.discard)
        return self._client

    async def _close_at_end(self, client: Client) -> None:
        """Wait for the cancellation that ends the loop, then close ``client``."""
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            await self._close(client)
