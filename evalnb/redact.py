"""Keep secrets off disk: API keys and anything shaped like one are redacted.

Values of secret-looking environment variables (names ending in ``_API_KEY``,
``_TOKEN``, ``_SECRET`` or ``_PASSWORD``, at least 8 characters long) are replaced
wherever they appear, and so are key-shaped strings (``sk-...``, ``sk-ant-...``,
``Bearer ...``) even when no such variable is set.

Example:
    >>> redact("auth: Bearer abcdefghijklmnop and sk-proj-0123456789abcdefghij")
    'auth: Bearer [REDACTED] and [REDACTED]'
"""

from __future__ import annotations

import os
import re

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD|^API_KEY)$", re.IGNORECASE)
_SHAPES = [  # (marker that must be present, pattern, replacement)
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), REDACTED),
    ("Bearer", re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=\-]{8,}"), r"\1 " + REDACTED),
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
