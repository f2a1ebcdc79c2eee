"""Recording the tool under test: one :class:`ToolInvocation` per run (spec 002 events).

Spec 002 prefers structured events with explicit exit codes over reading the command
text. Each scenario sandbox records every run of its target tool:

- **Builtin mode** (bashkit): :meth:`InvocationLog.wrap` wraps the tool's callable,
  so each call is timed and logged with its argv, exit code and output sizes. Only
  the name runs a bashkit builtin (``./notes`` or ``/x/notes`` is a file lookup), so
  these are all the runs there are.
- **Local mode** (real bash): :class:`LocalRecorder` writes a thin recording wrapper
  named after the tool into a folder put first on the sandbox's ``PATH``. The wrapper
  (Python, run with evalnb's own interpreter) starts the real executable, passes its
  stdin through and forwards its stdout and stderr as they arrive while counting the
  bytes, and exits with its exit code (128 + N when signal N killed it). Calls by
  absolute path of the real executable (as found on ``PATH``, and its resolved path)
  reach the wrapper too: ``BASH_ENV`` names a file, sourced by every non-interactive
  bash, that defines shell functions with those paths as names (bash looks functions
  up before running a path). Each run appends two JSON lines (start, end) to a log
  file that the sandbox opened and handed down as file descriptor :attr:`fd`, so it
  is written however the sandbox confines the call (read-only mounts, another user);
  a run with a start and no end was killed before it finished: its exit code is None.

Not recorded in local mode: a relative path to the executable (``./notes``,
``../bin/notes``), ``command /x/bin/notes`` and ``env notes`` (they bypass functions
or look ``PATH`` up without bash; ``env notes`` does find the wrapper first on PATH),
and runs by a program that clears the environment. The wrapper forwards the two
streams through pipes, so the tool sees pipes, not the caller's files; their bytes
arrive in order per stream.

Example:
    >>> log = InvocationLog()
    >>> tool = log.wrap("echo2", lambda ctx: _Result("hi\\n", "", 3))
    >>> _ = tool(type("Ctx", (), {"argv": ["a", "b"]})())
    >>> [(i.argv, i.exit_code, i.stdout_bytes) for i in log.take()]
    [(['echo2', 'a', 'b'], 3, 3)]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from evalnb.records import ToolInvocation

_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/+-]+$")

WRAPPER = r"""#!{python} -S
import json, os, selectors, subprocess, sys, time
REAL, NAME, FD = {real!r}, {name!r}, {fd}
def log(**event):
    try:
        os.write(FD, (json.dumps(event) + "\n").encode())
    except OSError:
        pass
started = time.monotonic()
log(id=os.getpid(), argv=[NAME, *sys.argv[1:]])
try:
    proc = subprocess.Popen([REAL, *sys.argv[1:]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
except OSError as exc:
    sys.stderr.write(f"{{NAME}}: {{exc.strerror}}\n")
    log(id=os.getpid(), exit_code=126, stdout_bytes=0, stderr_bytes=0,
        duration_ms=(time.monotonic() - started) * 1000)
    sys.exit(126)
sizes = {{1: 0, 2: 0}}
sel = selectors.DefaultSelector()
sel.register(proc.stdout, selectors.EVENT_READ, 1)
sel.register(proc.stderr, selectors.EVENT_READ, 2)
while sel.get_map():
    for key, _ in sel.select():
        chunk = os.read(key.fileobj.fileno(), 65536)
        if not chunk:
            sel.unregister(key.fileobj)
            continue
        sizes[key.data] += len(chunk)
        try:
            os.write(key.data, chunk)
        except OSError:
            pass
code = proc.wait()
code = 128 - code if code < 0 else code
log(id=os.getpid(), exit_code=code, stdout_bytes=sizes[1], stderr_bytes=sizes[2],
    duration_ms=(time.monotonic() - started) * 1000)
sys.exit(code)
"""
"""The local-mode wrapper (a Python script; ``{python}``, ``{real}``, ``{name}``, ``{fd}``)."""


class _Result(NamedTuple):
    stdout: str
    stderr: str
    exit_code: int


class InvocationLog:
    """The runs of a bashkit builtin, collected as they happen (builtin mode)."""

    def __init__(self) -> None:
        self._runs: list[ToolInvocation] = []

    def wrap(self, name: str, tool: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``tool`` (a bashkit custom builtin) that logs each call under ``name``.

        A call that raises is logged with exit code None and the exception goes on.
        """

        def recorded(ctx: Any) -> Any:
            started = time.perf_counter()
            entry = ToolInvocation(argv=[name, *ctx.argv])
            self._runs.append(entry)
            result = tool(ctx)
            entry.exit_code = result.exit_code
            entry.stdout_bytes = len(result.stdout.encode("utf-8"))
            entry.stderr_bytes = len(result.stderr.encode("utf-8"))
            entry.duration_ms = (time.perf_counter() - started) * 1000
            return result

        return recorded

    def take(self) -> list[ToolInvocation]:
        """The runs logged since the last call, numbered in the order they started."""
        runs, self._runs = self._runs, []
        for index, run in enumerate(runs):
            run.invocation_index = index
        return runs


class LocalRecorder:
    """The recording wrapper of one local sandbox (see the module docstring).

    ``name`` is the tool's command name, looked up on ``path`` (the sandbox's
    ``PATH``). When it is not there, nothing is wrapped and every call records no
    runs. Give :attr:`env` to the sandbox's bash, hand down :attr:`fd` to it, read
    each call's runs with :meth:`take`, and :meth:`close` at the end.
    """

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.folder = tempfile.mkdtemp(prefix="evalnb-record-")
        os.chmod(self.folder, 0o755)  # a confined call may run as another user
        log = Path(self.folder, "invocations.jsonl")
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._reader = open(log, encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.env: dict[str, str] = {}
        real = shutil.which(name, path=path)
        if real is None:
            return
        wrapper = Path(self.folder, "bin", name)
        wrapper.parent.mkdir(mode=0o755)
        python = os.path.realpath(sys.executable)
        wrapper.write_text(WRAPPER.format(python=python, real=real, name=name, fd=self.fd))
        wrapper.chmod(0o755)
        paths = sorted({os.path.abspath(real), os.path.realpath(real)})
        functions = "".join(
            f'{p}() {{ "{wrapper}" "$@"; }}\n' for p in paths if _SAFE_PATH.match(p)
        )
        bash_env = Path(self.folder, "bash_env")
        bash_env.write_text(functions)
        bash_env.chmod(0o644)
        self.env = {"PATH": f"{wrapper.parent}{os.pathsep}{path}", "BASH_ENV": str(bash_env)}

    def take(self) -> list[ToolInvocation]:
        """The runs logged since the last call, in the order they started."""
        starts: dict[int, ToolInvocation] = {}
        for line in self._reader.read().splitlines():
            event = json.loads(line)
            if "argv" in event:
                starts[event["id"]] = ToolInvocation(
                    argv=event["argv"], invocation_index=len(starts)
                )
            elif event["id"] in starts:
                run = starts[event["id"]]
                run.exit_code = event["exit_code"]
                run.stdout_bytes = event["stdout_bytes"]
                run.stderr_bytes = event["stderr_bytes"]
                run.duration_ms = event["duration_ms"]
        return list(starts.values())

    def close(self) -> None:
        """Close the log and remove the wrapper folder."""
        self._reader.close()
        os.close(self.fd)
        shutil.rmtree(self.folder, ignore_errors=True)


def with_recording(env: Mapping[str, str], recorder: LocalRecorder) -> dict[str, str]:
    """``env`` with the recorder's ``PATH`` and ``BASH_ENV`` (a scenario's own win).

    Example:
        >>> rec = LocalRecorder("sh", "/usr/bin:/bin")
        >>> env = with_recording({"PATH": "/usr/bin:/bin", "BASH_ENV": "mine"}, rec)
        >>> env["PATH"].startswith(rec.folder), env["BASH_ENV"]
        (True, 'mine')
        >>> rec.close()
    """
    return {**env, **{k: v for k, v in recorder.env.items() if k == "PATH" or k not in env}}
