"""Limits shared by every sandbox: the per-call timeout, the output cap, and the most of a
file that a check or gate reads."""

from __future__ import annotations

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 65_536
MAX_READ_BYTES = 16 * 2**20
"""The most bytes of one file that ``read_text`` gives a check or gate (16 MiB); the rest
of a longer file is not read, and the cut is marked at the end of the text
(:data:`READ_CUT_NOTE`), so a text found only past it is not found."""
READ_CUT_NOTE = "\n[... file cut by evalnb: only its first {limit} bytes were read ...]"


def cap_output(text: str, limit: int) -> tuple[str, bool]:
    """Cut ``text`` to ``limit`` characters, marking the cut; return ``(text, truncated)``.

    Example:
        >>> cap_output("abcdef", 3)
        ('abc\\n[... output truncated: 3 more characters]', True)
        >>> cap_output("ab", 3)
        ('ab', False)
    """
    if len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n[... output truncated: {len(text) - limit} more characters]", True


def decode_capped(data: bytes) -> str:
    """A file's bytes as text for a check: decoded as UTF-8 (undecodable bytes replaced),
    cut after :data:`MAX_READ_BYTES` with the cut marked.

    Example:
        >>> decode_capped(b"caf\\xe9")
        'caf\ufffd'
        >>> decode_capped(b"x" * (MAX_READ_BYTES + 1)).endswith("bytes were read ...]")
        True
    """
    text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    return text + READ_CUT_NOTE.format(limit=MAX_READ_BYTES) if len(data) > MAX_READ_BYTES else text
