"""The sandbox contract shared by every sandbox, and the output cap."""

from __future__ import annotations

from typing import Protocol

from evalnb.schema import ToolCallResult

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 65_536


class Sandbox(Protocol):
    """What the agent loop and the scorers need from a sandbox."""

    name: str
    version: str

    async def exec(self, commands: str) -> ToolCallResult:
        """Run a bash script; return its bounded, recorded result."""
        ...

    def read_text(self, path: str) -> str | None:
        """A file's text, or None when it does not exist or is not a file."""
        ...

    def file_type(self, path: str) -> str | None:
        """``"file"``, ``"directory"``, ``"symlink"`` or None when the path does not exist."""
        ...

    def close(self) -> None:
        """Release the sandbox's resources."""
        ...


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
