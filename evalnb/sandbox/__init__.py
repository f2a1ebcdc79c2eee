"""Sandboxes the agent's bash commands run in.

A sandbox runs one task attempt: task files are written before the first turn and
state persists across the attempt's calls. Each call has a timeout and an output
cap; truncation is recorded on the :class:`~evalnb.schema.ToolCallResult`.

- :class:`BashkitSandbox` (the default): bashkit's virtual filesystem, nothing on the host.

Example:
    >>> import asyncio
    >>> from evalnb.sandbox import BashkitSandbox
    >>> box = BashkitSandbox(files={"/data/a.txt": "hi\\n"})
    >>> asyncio.run(box.exec("cat /data/a.txt")).stdout
    'hi\\n'
"""

from evalnb.sandbox.base import DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_S, Sandbox, cap_output
from evalnb.sandbox.bashkit import BashkitSandbox

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_TIMEOUT_S",
    "BashkitSandbox",
    "Sandbox",
    "cap_output",
]
