"""The local sandbox: real ``bash`` in a fresh temporary directory on this machine.

**This is NOT a security boundary.** It runs real programs on your machine. Use it
for tools that cannot run inside bashkit (a real executable, a compiled binary), with
models and scenarios you trust; use :class:`~evalnb.runtime.sandbox.BashkitSandbox` otherwise.

Where Linux namespaces are available (:func:`confinement`), each call is *confined*
as damage control, not as a guarantee: it runs under ``unshare`` in new mount, PID and
network namespaces, where every mount except the working directory is read-only,
``/tmp`` is an overlay whose writes are thrown away when the call ends (read-only where
the kernel has no overlayfs), there is no network, and processes are limited
(``ulimit -u 256``, files up to 1 GiB). As root it also drops to user ``nobody``,
keeping only the right to read and search any file (so tools under ``/root`` still run)
and no way to regain privileges (``no_new_privs``). So a tool on ``PATH`` must sit in
folders others can enter (bash's ``PATH`` search does not see through private folders);
a tool named by its absolute path runs from anywhere. When
bash exits, everything it started dies with its PID namespace. Without namespaces
(:func:`confinement` returns ``"none"``) commands run unconfined as your user, on your
real filesystem and network, and a warning says so.

What each call does:

- ``bash -c <commands>`` starts in the working directory (a new temporary folder, also
  ``$HOME``), in its own process group, with stdin closed.
- **Each call is a fresh bash**: ``cd``, variables, functions and aliases do not carry
  over from one call to the next; only the filesystem does.
- The environment is scrubbed: ``PATH`` (the ``path_dirs`` first, then this process's
  ``PATH``), ``HOME`` (the working directory), ``LANG=C.UTF-8``, and the scenario's
  ``env`` (which may override them). Nothing else, so API keys never reach the tool.
- A call that outlives ``timeout_s`` has its whole process group killed; it records exit
  code 124 and a note on stderr (:data:`TIMEOUT_NOTE`). When bash exits, whatever it left
  running in the background is killed too.
- Output: at most ``max_output_chars + 1`` bytes of each stream are kept; past that the
  process group is killed, the stream is cut and marked truncated (:data:`CUT_NOTE`).
  Bytes are decoded as UTF-8 with undecodable bytes replaced.
- :meth:`LocalSandbox.read_text` and :meth:`LocalSandbox.file_type` resolve a relative
  path against the working directory; an absolute path is taken as given.
- :meth:`LocalSandbox.close` removes the working directory.
- Confined, writes to ``/tmp`` last one call (only the working directory persists).

Example:
    >>> import asyncio
    >>> box = LocalSandbox({"in.txt": "hello\\n"})
    >>> r = asyncio.run(box.exec("tr a-z A-Z < in.txt > out.txt; cat out.txt; exit 3"))
    >>> r.stdout, r.exit_code, box.read_text("out.txt")
    ('HELLO\\n', 3, 'HELLO\\n')
    >>> box.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path

from evalnb.records import ToolCallResult
from evalnb.runtime.sandbox.base import DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_S
from evalnb.runtime.sandbox.recording import LocalRecorder, with_recording

CONFINE = r"""
set -e
ws=$1; drop=$2
mount --make-rprivate /
mount -t tmpfs -o size=256m,mode=755 tmpfs /mnt
mkdir /mnt/ws /mnt/upper /mnt/work
chmod 1777 /mnt/upper
mount --bind "$ws" /mnt/ws
overlay=0
if mount -t overlay overlay -o lowerdir=/tmp,upperdir=/mnt/upper,workdir=/mnt/work /tmp \
    2>/dev/null; then
  overlay=1
  mount --move /mnt/ws "$ws"
else
  mount --move /mnt/ws "$ws"
fi
while read -r _ mp _; do
  mp=$(printf '%b' "$mp")
  case "$mp" in "$ws"|/mnt|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  [ "$mp" = /tmp ] && [ "$overlay" = 1 ] && continue
  mount -o remount,bind,ro "$mp" 2>/dev/null || true
done < /proc/self/mounts
cd "$ws"
unset OLDPWD
ulimit -u 256 -f 1048576
set +e
if [ "$drop" = 1 ]; then
  caps=-all,+dac_read_search
  setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --bounding-set=$caps \
    --inh-caps=$caps --ambient-caps=$caps bash -c "$3"
else
  bash -c "$3"
fi
"""
"""Run as root inside the new namespaces: make the host read-only, then run the command."""
_UNSHARE = ["unshare", "--mount", "--pid", "--net", "--fork", "--kill-child", "--mount-proc"]
NOBODY = 65534
TIMEOUT_EXIT = 124
TIMEOUT_NOTE = "[evalnb: timed out after {seconds:g}s; process group killed]"
"""Appended to stderr of a call that timed out (its exit code is :data:`TIMEOUT_EXIT`)."""
CUT_NOTE = "\n[... output truncated: more than {limit} bytes; the command was stopped]"
"""Appended to a stream that went over the output cap."""
_CHUNK = 65_536


@cache
def confinement() -> str:
    """How local commands can be confined here: ``"root"``, ``"userns"`` or ``"none"``.

    ``"root"``: namespaces as root, commands run as ``nobody``; ``"userns"``: an
    unprivileged user namespace, commands run as you; ``"none"``: no confinement.

    Example:
        >>> confinement() in {"root", "userns", "none"}
        True
    """
    if shutil.which("unshare") is None:
        return "none"
    for mode, extra in (("root", []), ("userns", ["--map-root-user"])):
        if mode == "root" and (os.geteuid() != 0 or shutil.which("setpriv") is None):
            continue
        probe = [
            *_UNSHARE,
            *extra,
            "bash",
            "-c",
            CONFINE,
            "confine",
            tempfile.gettempdir(),
            "0",
            "true",
        ]
        done = subprocess.run(probe, capture_output=True, check=False, timeout=30)
        if done.returncode == 0:
            return mode
    return "none"


@cache
def bash_version() -> str:
    """The first line of ``bash --version`` (recorded as the sandbox version).

    Example:
        >>> bash_version().startswith("GNU bash")
        True
    """
    out = subprocess.run(["bash", "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


class LocalSandbox:
    """Real bash in a fresh temporary working directory (see the module docstring).

    ``workdir_files`` maps paths relative to the working directory to text or bytes;
    an absolute path or one that leaves the directory raises ValueError. ``record``
    names the tool under test: each call's runs of it are recorded in the result's
    ``invocations`` (:mod:`evalnb.runtime.sandbox.recording`).
    """

    name = "local"

    def __init__(
        self,
        workdir_files: Mapping[str, str | bytes] | None = None,
        *,
        path_dirs: Sequence[str | Path] = (),
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        max_output_chars: int | None = None,
        confine: bool = True,
        record: str | None = None,
    ) -> None:
        self.version = bash_version()
        self.confinement = confinement() if confine else "none"
        if confine and self.confinement == "none":
            warnings.warn(
                "no Linux namespaces here: the local sandbox runs commands unconfined",
                stacklevel=2,
            )
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.max_output_chars = max_output_chars or DEFAULT_MAX_OUTPUT_CHARS
        self.workdir = tempfile.mkdtemp(prefix="evalnb-local-")
        self._recorder: LocalRecorder | None = None
        try:
            for rel, content in (workdir_files or {}).items():
                target = self._inside(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                data = content.encode("utf-8") if isinstance(content, str) else content
                target.write_bytes(data)
            if self.confinement == "root":  # commands run as nobody: let them write here
                for folder, dirs, files in os.walk(self.workdir):
                    for name in [folder, *(Path(folder, n) for n in dirs + files)]:
                        os.chown(name, NOBODY, NOBODY)
        except BaseException:
            self.close()
            raise
        search = [str(Path(d).resolve()) for d in path_dirs]
        self.env = {
            "PATH": os.pathsep.join([*search, os.environ.get("PATH", os.defpath)]),
            "HOME": self.workdir,
            "LANG": "C.UTF-8",
            **dict(env or {}),
        }
        self._recorder = LocalRecorder(record, self.env["PATH"]) if record else None
        if self._recorder:
            self.env = with_recording(self.env, self._recorder)

    async def exec(self, commands: str) -> ToolCallResult:
        """Run ``commands`` with ``bash -c`` in the working directory; never raises for them."""
        started = time.perf_counter()
        if "\0" in commands:  # no program can take a NUL byte in its arguments
            return ToolCallResult(
                commands=commands.replace("\0", "\\0"),
                stderr="bash: the command contains a NUL byte",
                exit_code=2,
                duration_ms=(time.perf_counter() - started) * 1000,
                invocations=[] if self._recorder else None,
            )
        argv = ["bash", "-c", commands]
        if self.confinement != "none":
            userns = ["--map-root-user"] if self.confinement == "userns" else []
            drop = "1" if self.confinement == "root" else "0"
            argv = [
                *_UNSHARE,
                *userns,
                "bash",
                "-c",
                CONFINE,
                "confine",
                self.workdir,
                drop,
                commands,
            ]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.workdir,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=(self._recorder.fd,) if self._recorder else (),
        )

        def stop() -> None:
            _kill_group(proc.pid)

        readers = [
            asyncio.create_task(_read_capped(stream, self.max_output_chars, stop))
            for stream in (proc.stdout, proc.stderr)
        ]
        timed_out = False
        try:
            await asyncio.wait_for(_exited(proc), self.timeout_s)
        except TimeoutError:
            timed_out = True
        finally:
            stop()  # the timed-out command, or what bash left running in the background
        code = await proc.wait()
        (out, out_cut), (err, err_cut) = await asyncio.gather(*readers)
        if timed_out:
            code = TIMEOUT_EXIT
            err += ("\n" if err and not err.endswith("\n") else "") + TIMEOUT_NOTE.format(
                seconds=self.timeout_s
            )
        elif code < 0:
            code = 128 - code  # killed by signal N: the shell's 128 + N
        return ToolCallResult(
            commands=commands,
            stdout=out,
            stderr=err,
            exit_code=code,
            duration_ms=(time.perf_counter() - started) * 1000,
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
            timed_out=timed_out,
            invocations=self._recorder.take() if self._recorder else None,
        )

    def read_text(self, path: str) -> str | None:
        """The file's text (undecodable bytes replaced), or None if it is not a file."""
        target = self._resolve(path)
        if not target.is_file():
            return None
        return target.read_bytes().decode("utf-8", errors="replace")

    def file_type(self, path: str) -> str | None:
        """``"file"``, ``"directory"``, ``"symlink"`` or None when nothing is there."""
        target = self._resolve(path)
        if target.is_symlink():
            return "symlink"
        if target.is_dir():
            return "directory"
        return "file" if target.exists() else None

    def close(self) -> None:
        """Remove the working directory and everything in it."""
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self._recorder:
            self._recorder.close()
            self._recorder = None

    def _resolve(self, path: str) -> Path:
        return Path(path) if os.path.isabs(path) else Path(self.workdir) / path

    def _inside(self, rel: str) -> Path:
        root = Path(self.workdir).resolve()
        target = (root / rel).resolve()
        if os.path.isabs(rel) or not target.is_relative_to(root) or target == root:
            raise ValueError(f"workspace file {rel!r} must be a relative path inside the workdir")
        return target


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait for bash itself to exit.

    ``Process.wait()`` (Python 3.11) also waits for the pipes to close, which a
    background child holding stdout would delay; ``returncode`` is set at exit.
    """
    delay = 0.001
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.02)


async def _read_capped(
    stream: asyncio.StreamReader | None, limit: int, on_overflow: Callable[[], None]
) -> tuple[str, bool]:
    """Read a stream to EOF keeping ``limit + 1`` bytes at most; return ``(text, cut)``."""
    if stream is None:
        return "", False
    kept = bytearray()
    cut = False
    while chunk := await stream.read(_CHUNK):
        if cut:
            continue  # drain what a stopped command still had in flight
        kept += chunk
        if len(kept) > limit:
            cut = True
            del kept[limit + 1 :]
            on_overflow()
    if not cut:
        return kept.decode("utf-8", errors="replace"), False
    return kept[:limit].decode("utf-8", errors="replace") + CUT_NOTE.format(limit=limit), True


def _kill_group(pgid: int) -> None:
    """SIGKILL a process group; nothing left in it is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
