"""Keep secrets off disk: API keys and anything shaped like one are redacted.

Values of secret-looking environment variables (names ending in ``_API_KEY``,
``_TOKEN``, ``_SECRET`` or ``_PASSWORD``, at least 8 characters long) are replaced
wherever they appear, and so are key-shaped strings (``sk-...``, ``sk-ant-...``,
``Bearer ...``) even when no such variable is set, masked key fragments as servers echo
them in 401 bodies (``sk-tes***cdef``), the user-info part of URLs
(``https://user:pass@host``) and the values of secret-looking URL query parameters
(``?api_key=...``, ``&token=...``). :func:`redact_url` redacts every query value of a
URL the user configured (a base URL), as it is stored in ``run.json``.

Example:
    >>> redact("auth: Bearer abcdefghijklmnop and sk-proj-0123456789abcdefghij")
    'auth: Bearer [REDACTED] and [REDACTED]'
    >>> redact("Incorrect API key provided: sk-tes***cdef. See https://u:p@h/v1?key=abc&x=1")
    'Incorrect API key provided: [REDACTED]. See https://[REDACTED]@h/v1?key=[REDACTED]&x=1'
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD|^API_KEY)$", re.IGNORECASE)
_SHAPES = [  # (marker that must be present, pattern, replacement)
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), REDACTED),
    ("Bearer", re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=\-]{8,}"), r"\1 " + REDACTED),
    ("***", re.compile(r"[A-Za-z0-9_\-]{2,}\*{3,}[A-Za-z0-9_\-]{2,}"), REDACTED),
    (
        "@",
        re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@", re.IGNORECASE),
        r"\1" + REDACTED + "@",
    ),
    (
        "=",
        re.compile(
            r"([?&;][A-Za-z0-9_.\-]*(?:key|token|secret|pass|auth|sig|credential|session)"
            r"[A-Za-z0-9_.\-]*=)[^&#\s\"']+",
            re.IGNORECASE,
        ),
        r"\1" + REDACTED,
    ),
]


def secret_values() -> list[str]:
    """The values of secret-looking environment variables, longest first.

    Example:
        >>> import os; os.environ["DEMO_API_KEY"] = "not-a-real-key-123"
        >>> "not-a-real-key-123" in secret_values()
        True
    """
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Replace every secret value and key-shaped string in ``text``.

    ``secrets`` defaults to :func:`secret_values`; a writer that redacts many lines
    passes the list it took once.

    Example:
        >>> redact("nothing secret here")
        'nothing secret here'
    """
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for marker, pattern, repl in _SHAPES:
        if marker in text:
            text = pattern.sub(repl, text)
    return text


def redact_url(url: str | None) -> str | None:
    """A configured URL with its user info and every query value redacted (None stays None).

    Example:
        >>> redact_url("http://admin:hunter2@10.0.0.5:8000/v1?tenant=a&sig=b")
        'http://[REDACTED]@10.0.0.5:8000/v1?tenant=[REDACTED]&sig=[REDACTED]'
        >>> redact_url("https://api.openai.com/v1")
        'https://api.openai.com/v1'
    """
    if url is None:
        return None
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{pair.partition('=')[0]}={REDACTED}" if "=" in pair else REDACTED
        for pair in parts.query.split("&")
        if pair
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
