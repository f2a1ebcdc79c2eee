"""Which key goes where: a provider's key is sent only to its own default host, unless named.

A base URL pointing anywhere else (a local server, a proxy) gets no key from the
environment: a placeholder is sent instead (such servers need none). To send one, name
its environment variable (``--api-key-env NAME``). An explicit ``api_key`` is always used.

Example:
    >>> import os; os.environ["DEMO_KEY"] = "k-123"
    >>> choose_key("OPENAI_API_KEY", "http://127.0.0.1:8000/v1", "https://api.openai.com/v1")
    'not-needed'
    >>> choose_key("OPENAI_API_KEY", "http://127.0.0.1:8000/v1", "https://api.openai.com/v1",
    ...            api_key_env="DEMO_KEY")
    'k-123'
"""

from __future__ import annotations

import os

from evalnb.errors import ProviderError

NO_KEY = "not-needed"
"""Sent to a non-default host when no key was named (the SDKs insist on some key)."""


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
