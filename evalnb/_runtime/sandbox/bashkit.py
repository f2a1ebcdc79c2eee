"""The bashkit sandbox: one ``bashkit.Bash`` per task attempt.

The interpreter runs as user ``eval`` on host ``bashkit-eval``, like bashkit-eval's
harness, with a per-call timeout and an output cap. Nothing touches the host.

Example:
    >>> import asyncio
    >>> box = BashkitSandbox()
    >>> r = asyncio.run(box.exec("whoami; exit 3"))
    >>> r.stdout, r.exit_code
    ('eval\\n', 3)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import bashkit

from evalnb._runtime.sandbox.base import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TIMEOUT_S,
    cap_output,
    decode_capped,
)
from evalnb._runtime.sandbox.recording import InvocationLog
from evalnb.records import ToolCallResult

USERNAME = "eval"
HOSTNAME = "bashkit-eval"
RESTART_NOTE = "\n[evalnb: sandbox restored from a snapshot after the timeout; jobs dropped]"


class BashkitSandbox:
    """A fresh bashkit interpreter holding a task's files.

    ``builtins`` registers Python callables as bash commands (the tool under test
    in a scenario); they read and write the same virtual filesystem. ``record`` names
    the builtin that is the tool under test: each call's runs of it are recorded in
    the result's ``invocations`` (:mod:`evalnb._runtime.sandbox.recording`).
    """

    name = "bashkit"
    version = bashkit.__version__

    def __init__(
        self,
        files: Mapping[str, str] | None = None,
        *,
        timeout_s: float | None = None,
        max_output_chars: int | None = None,
        builtins: Mapping[str, Callable[..., Any]] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        record: str | None = None,
    ) -> None:
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.workdir = cwd or f"/home/{USERNAME}"
        self.max_output_chars = max_output_chars or DEFAULT_MAX_OUTPUT_CHARS
        builtins = dict(builtins or {})
        self._log = InvocationLog() if record else None
        if self._log and record in builtins:
            builtins[record] = self._log.wrap(record, builtins[record])
        self._options: dict[str, Any] = {
            "username": USERNAME,
            "hostname": HOSTNAME,
            "timeout_seconds": self.timeout_s,
            "files": dict(files or {}),
            "custom_builtins": builtins,
            "env": dict(env or {}),
            "cwd": cwd,
        }
        self._bash = bashkit.Bash(**self._options)
        # bashkit 0.20 lists /home/eval but cannot create entries in it until it is
        # made explicitly when the task's files lie elsewhere; make it, as a home exists
        self._bash.fs().mkdir(f"/home/{USERNAME}", True)

    async def exec(self, commands: str) -> ToolCallResult:
        """Run ``commands``; a timeout or limit shows as exit 1 with the reason on stderr."""
        started = time.perf_counter()
        result = await self._bash.execute(commands)
        duration_ms = (time.perf_counter() - started) * 1000
        stdout, out_cut = cap_output(result.stdout, self.max_output_chars)
        stderr, err_cut = cap_output(result.stderr, self.max_output_chars)
        timed_out = "execution timeout" in (result.error or "")
        if timed_out:
            stderr += RESTART_NOTE
            self._restart()
        return ToolCallResult(
            commands=commands,
            stdout=stdout,
            stderr=stderr,
            exit_code=result.exit_code,
            duration_ms=duration_ms,
            stdout_truncated=out_cut or result.stdout_truncated,
            stderr_truncated=err_cut or result.stderr_truncated,
            timed_out=timed_out,
            invocations=self._log.take() if self._log else None,
        )

    def _restart(self) -> None:
        """Rebuild the interpreter from a snapshot of its state (files, variables, cwd).

        A background job (``sleep 100 &``) keeps a bashkit interpreter busy, so every
        later call would time out too; a fresh interpreter restored from a snapshot
        keeps the task's state and drops the job.
        """
        self._bash = bashkit.Bash.from_snapshot(self._bash.snapshot(), **self._options)

    def read_text(self, path: str) -> str | None:
        """The file's text (undecodable bytes replaced, cut after
        :data:`~evalnb._runtime.sandbox.base.MAX_READ_BYTES`), or None if it is not a file."""
        if self.file_type(path) != "file":
            return None
        return decode_capped(self._bash.fs().read_file(path))

    def file_type(self, path: str) -> str | None:
        """``"file"``, ``"directory"``, ``"symlink"`` or None."""
        try:
            return str(self._bash.stat(path)["file_type"])
        except Exception:  # bashkit raises for a missing path
            return None

    def close(self) -> None:
        """Cancel anything still running; the interpreter is freed with the object."""
        self._bash.cancel()
