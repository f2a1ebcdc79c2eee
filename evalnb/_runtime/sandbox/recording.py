"""Recording the tool under test: one :class:`ToolInvocation` per run (spec 002 events).

Spec 002 prefers structured events with explicit exit codes over reading the command
text. Each scenario sandbox records every run of its target tool:

- **Builtin mode** (bashkit): :meth:`InvocationLog.wrap` wraps the tool's callable,
  so each call is timed and logged with its argv, exit code and output sizes. Only
  the name runs a bashkit builtin (``./notes`` or ``/x/notes`` is a file lookup), so
  these are all the runs there are.
- **Local mode** (real bash): :class:`LocalRecorder` writes a thin recording wrapper
  (Python, run with evalnb's own interpreter) for the tool's executable. The wrapper
  starts the real executable with the wrapper's own ``argv``, passes its stdin through,
  forwards its stdout and stderr as they arrive while counting the bytes, and exits
  with its exit code (128 + N when signal N killed it). Each run appends two JSON lines
  (start, end) to a log file that the sandbox opened and handed down as file descriptor
  :attr:`LocalRecorder.fd`, so it is written however the sandbox confines the call
  (read-only mounts, another user); a run with a start and no end was killed before it
  finished: its exit code is None. How calls reach the wrapper depends on confinement:

  - **Confined** (bubblewrap, or namespaces made with ``unshare``): the wrapper is
    bind-mounted, read-only, over the real executable (the one ``PATH`` finds, by its
    resolved path) and over each executable copy of it among the workspace files the
    sandbox was given (same name, e.g. ``tool/bin/notes``), so every path to that file
    runs the wrapper: ``notes``, ``./notes``, ``../bin/notes``, ``/x/bin/notes``, a
    symlink to it, ``command``, ``env``, ``exec``, ``xargs``, ``find -exec``, a script
    or another program running it. The wrapper runs the real file at a hidden path:
    the folder around it (the folder holding its folder, so a script finding its files
    as ``$(dirname "$0")/../lib`` still works) is mounted first, read-only, inside the
    recorder's folder. A wrapped workspace copy cannot be removed, renamed or written
    while it is wrapped (the mount is busy and read-only).
  - **Unconfined** (no namespaces: nothing can be mounted): the wrapper goes first on
    the sandbox's ``PATH``, and ``BASH_ENV`` names a file, sourced by every
    non-interactive bash, that defines shell functions named after the executable's
    absolute paths (bash looks functions up before running a path). Recorded: calls by
    name (bash, ``env notes``, ``exec notes``, ``xargs notes``) and by absolute path
    from bash.

Not recorded in local mode: a copy of the executable that the sandbox was not given
(made by a setup command or by the agent) or that is not executable when the call
starts; a run of the real file through the hidden path itself; a different executable
with the same name elsewhere. A tool that is evalnb's own Python interpreter (the
wrappers run on it) is recorded as unconfined. The sandbox's own runs of a tool are
recorded too (``bash``, when the tool under test is bash). Unconfined, also: a relative
path (``./notes``, ``../bin/notes``), ``command /x/bin/notes``, ``env /x/bin/notes``,
``exec /x/bin/notes`` (they bypass functions), and programs that clear the environment.
The wrapper forwards the two streams through pipes, so the tool sees pipes, not the
caller's files; their bytes arrive in order per stream.

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
from collections.abc import Callable, Mapping, Sequence
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
    proc = subprocess.Popen(sys.argv, executable=REAL, stdout=subprocess.PIPE,
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
    """The recording wrappers of one local sandbox (see the module docstring).

    ``name`` is the tool's command name, looked up on ``path`` (the sandbox's ``PATH``).
    ``overlay`` (a confined sandbox, which can mount): every path of the executable
    reaches a wrapper through the read-only mounts of :meth:`mounts` (unless the tool is
    evalnb's own Python, which the wrappers run on); otherwise a wrapper goes first on
    ``PATH`` and ``BASH_ENV`` defines functions named after the executable's absolute
    paths (:attr:`env`). When the tool is neither on ``path`` nor among the ``copies``,
    nothing is wrapped and every call records no runs. Hand down :attr:`fd` to the
    sandbox's bash, read each call's runs with :meth:`take`, and :meth:`close` at the
    end.
    """

    def __init__(self, name: str, path: str, *, overlay: bool) -> None:
        self.name = name
        self.folder = tempfile.mkdtemp(prefix="evalnb-record-")
        os.chmod(self.folder, 0o755)  # a confined call may run as another user
        log = Path(self.folder, "invocations.jsonl")
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._reader = open(log, encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.env: dict[str, str] = {}
        self._wrapped: dict[str, tuple[str, str, str]] = {}
        found = shutil.which(name, path=path)
        self.real = os.path.realpath(found) if found else None
        # the wrappers run on evalnb's Python: a wrapper must not cover it
        self.overlay = overlay and self.real != os.path.realpath(sys.executable)
        if found is None or self.overlay:
            return
        wrapper = Path(self.folder, "bin", name)
        wrapper.parent.mkdir(mode=0o755)
        _write_wrapper(wrapper, found, name, self.fd)
        paths = sorted({os.path.abspath(found), os.path.realpath(found)})
        functions = "".join(
            f'{p}() {{ "{wrapper}" "$@"; }}\n' for p in paths if _SAFE_PATH.match(p)
        )
        bash_env = Path(self.folder, "bash_env")
        bash_env.write_text(functions)
        bash_env.chmod(0o644)
        self.env = {"PATH": f"{wrapper.parent}{os.pathsep}{path}", "BASH_ENV": str(bash_env)}

    def mounts(self, copies: Sequence[str] = (), top: str = "") -> list[tuple[str, str]]:
        """The read-only bind mounts, ``(source, destination)`` in order, of one call.

        For the executable found on ``PATH`` and each of ``copies`` (executable files in
        the workspace ``top``, as commands see them: the caller checked them) two mounts:
        first the folder around it (the folder holding its folder, or its own folder
        when that is ``/``, a temporary folder's root or outside ``top``) at a hidden
        path in :attr:`folder`, where its wrapper runs it; then the wrapper over the
        executable itself. All hidden mounts come before any wrapper, so a hidden folder
        shows the real files. Empty without
        ``overlay``.
        """
        if not self.overlay:
            return []
        reals = {self.real: ""} if self.real else {}
        reals |= dict.fromkeys(copies, top)
        hidden, wrappers = [], []
        for real, inside in reals.items():
            if real not in self._wrapped:
                self._wrapped[real] = self._wrap(real, inside)
            holder, shown, wrapper = self._wrapped[real]
            hidden.append((holder, shown))
            wrappers.append((wrapper, real))
        return hidden + wrappers

    def _wrap(self, real: str, top: str) -> tuple[str, str, str]:
        """(folder around ``real``, its hidden mount point, the wrapper that runs it there).

        ``top``: the folder ``real`` is a copy in (the workspace), or "" for the tool on
        ``PATH``.
        """
        folder, grand = os.path.dirname(real), os.path.dirname(os.path.dirname(real))
        inside = not top or Path(grand).is_relative_to(top)
        holder = folder if grand in ("/", tempfile.gettempdir()) or not inside else grand
        index = len(self._wrapped)
        shown = Path(self.folder, f"real{index}")
        shown.mkdir(mode=0o755)
        wrapper = Path(self.folder, f"wrapper{index}")
        _write_wrapper(wrapper, str(shown / os.path.relpath(real, holder)), self.name, self.fd)
        return holder, str(shown), str(wrapper)

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


def _write_wrapper(wrapper: Path, real: str, name: str, fd: int) -> None:
    """Write the recording wrapper of ``real`` (logged as ``name`` to ``fd``) at ``wrapper``."""
    python = os.path.realpath(sys.executable)
    wrapper.write_text(WRAPPER.format(python=python, real=real, name=name, fd=fd))
    wrapper.chmod(0o755)


def with_recording(env: Mapping[str, str], recorder: LocalRecorder) -> dict[str, str]:
    """``env`` with the recorder's ``PATH`` and ``BASH_ENV`` (a scenario's own win).

    Example:
        >>> rec = LocalRecorder("sh", "/usr/bin:/bin", overlay=False)
        >>> env = with_recording({"PATH": "/usr/bin:/bin", "BASH_ENV": "mine"}, rec)
        >>> env["PATH"].startswith(rec.folder), env["BASH_ENV"]
        (True, 'mine')
        >>> rec.close()
    """
    return {**env, **{k: v for k, v in recorder.env.items() if k == "PATH" or k not in env}}
