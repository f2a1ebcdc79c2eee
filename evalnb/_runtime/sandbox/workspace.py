"""The confined local sandbox's workspace: a tmpfs of a fixed size, in a mount namespace
of its own.

A workspace on the host disk has no total size: a command could fill the disk (each
file is capped at 1 GiB, their number is not). Here the workspace folder is a ``tmpfs``
of :data:`QUOTA_BYTES`, mounted by a small holder process (``unshare --mount``, plus
``--user --map-root-user`` when evalnb is not root) in a private mount namespace, so the
host never sees the mount and nothing is left mounted when evalnb dies: the holder dies
with it (``--pdeathsig``) and the namespace, and its tmpfs, go with the holder. Each
command enters that namespace first (:attr:`HeldWorkspace.enter`, ``nsenter``) and is
confined from there; evalnb itself reaches the files through the holder's root
(:attr:`HeldWorkspace.host_path`, ``/proc/<pid>/root/<workspace>``). A write past the
quota fails with ENOSPC ("No space left on device"); :meth:`HeldWorkspace.full` tells
the sandbox to say so in the call's record.

Example:
    >>> import os, tempfile
    >>> space = HeldWorkspace(tempfile.mkdtemp(), owner=None, quota=1 << 20)
    >>> _ = open(os.path.join(space.host_path, "a.txt"), "w").write("x" * 100)
    >>> size = os.statvfs(space.host_path)
    >>> size.f_blocks * size.f_frsize, space.full()
    (1048576, False)
    >>> space.close()
"""

from __future__ import annotations

import os
import signal
import subprocess

QUOTA_BYTES = 1 << 30
"""The most bytes the files of one workspace may hold together (1 GiB)."""

HOLD = r"""
mount -t tmpfs -o "size=$1,mode=0700${2:+,uid=$2,gid=$2}" evalnb-workspace "$0" || exit 1
echo ready
exec sleep infinity
"""
"""The holder: mount the workspace's tmpfs (``$0``; size ``$1``; owner ``$2`` if given),
say so, and wait to be killed."""


class HeldWorkspace:
    """The tmpfs at ``path`` held in a private mount namespace (see the module docstring).

    ``owner`` (a uid, as root: ``nobody``) owns the tmpfs's root; None leaves it to the
    user creating it. Raises OSError when the namespace or the mount cannot be made.
    """

    def __init__(self, path: str, *, owner: int | None, quota: int = QUOTA_BYTES) -> None:
        userns = ["--user", "--map-root-user"] if os.geteuid() != 0 else []
        argv = ["setpriv", "--pdeathsig=KILL", "unshare", *userns, "--mount"]
        argv += ["--propagation", "private", "sh", "-c", HOLD, path, str(quota)]
        argv += [str(owner)] if owner is not None else []
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C meant for evalnb's process group spares it
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        ready = self._proc.stdout.readline() == b"ready\n"
        self._proc.stdout.close()
        if not ready:
            problem = self._proc.stderr.read().decode(errors="replace").strip()
            self._proc.stderr.close()
            self.close()
            raise OSError(f"cannot hold the workspace's tmpfs at {path}: {problem}")
        self._proc.stderr.close()
        pid = self._proc.pid
        self.quota = quota
        self.host_path = f"/proc/{pid}/root{path}"
        """Where evalnb reaches the workspace's files."""
        spaces = [f"--user=/proc/{pid}/ns/user"] if userns else []
        self.enter = ["nsenter", *spaces, f"--mount=/proc/{pid}/ns/mnt", "--"]
        """The argv prefix that runs a command in the holder's mount namespace."""

    def full(self) -> bool:
        """Whether the quota is used up (no block left)."""
        return os.statvfs(self.host_path).f_bavail == 0

    def close(self) -> None:
        """Kill the holder: its namespace and the tmpfs, with every file, are gone."""
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
