"""Limits shared by every sandbox: the per-call timeout and the output cap."""

from __future__ import annotations

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 65_536


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
