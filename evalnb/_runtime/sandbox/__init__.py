"""Sandboxes the agent's bash commands run in.

A sandbox runs one task attempt: task files are written before the first turn and
state persists across the attempt's calls. Each call has a timeout and an output
cap; truncation is recorded on the :class:`~evalnb.records.ToolCallResult`.

- :class:`BashkitSandbox` (the default): bashkit's virtual filesystem, nothing on the host.

Example:
    >>> import asyncio
    >>> from evalnb._runtime.sandbox import BashkitSandbox
    >>> box = BashkitSandbox(files={"/data/a.txt": "hi\\n"})
    >>> asyncio.run(box.exec("cat /data/a.txt")).stdout
    'hi\\n'
"""

from evalnb._runtime.sandbox.base import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TIMEOUT_S,
    cap_output,
)
from evalnb._runtime.sandbox.bashkit import BashkitSandbox

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_TIMEOUT_S",
    "BashkitSandbox",
    "cap_output",
]
