"""One writer per run folder: the run lock.

A process that runs, resumes, merges or finalizes a run holds the folder's run lock: an
exclusive OS lock (``filelock``, ``flock`` on Linux) on the hidden ``.run.lock`` file in
the folder, into which the holder writes its pid. A second process is refused with
"already running (pid N)" (:class:`~evalnb.errors.InputError`, exit 2) before it touches
the folder. The operating system drops the lock when its holder dies, however it dies
(SIGKILL included), so a killed run never blocks its resume.

Readers take no lock; :func:`holder` tells them whether a process holds it (a run still
``running`` in ``run.json`` is running when it does, else partial: see
:meth:`~evalnb._store.RunStore.observed`).

The lock covers processes of one machine sharing the folder's filesystem: ``flock`` on a
network filesystem is only as good as that filesystem's support for it.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with RunLock(folder):
    ...     holder(folder) == os.getpid()
    True
    >>> holder(folder) is None
    True
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from evalnb.errors import InputError, StoreError

LOCK = ".run.lock"
"""The lock file's name inside a run folder."""
WAIT_S = 1.0
"""How long :meth:`RunLock.acquire` waits for a lock held elsewhere before refusing: a
reader's :func:`holder` probe holds it for microseconds, a writer for the whole run."""


class RunLock:
    """The run lock of ``folder`` (see the module docstring); reentrant in one process.

    Example:
        >>> import tempfile
        >>> lock = RunLock(tempfile.mkdtemp())
        >>> with lock, lock:
        ...     lock.held
        True
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._path = self.folder / LOCK
        # not thread-local: finalize runs in a worker thread while the runner holds the lock
        self._lock = FileLock(self._path, timeout=WAIT_S, thread_local=False)

    @property
    def held(self) -> bool:
        """Whether this process holds the lock through this object."""
        return self._lock.is_locked

    def acquire(self) -> None:
        """Take the lock, or raise InputError "already running (pid N)" naming the folder."""
        if self._lock.is_locked:
            self._lock.acquire()  # one more level of this process's own hold
            return
        try:
            self._lock.acquire()
        except Timeout:
            pid = holder(self.folder)
            who = f"pid {pid}" if pid else "another process"
            raise InputError(self.folder, None, None, f"already running ({who})") from None
        except OSError as exc:
            raise StoreError(self.folder, LOCK, exc) from None
        # the pid names the holder in messages; written only where flock holds the lock
        # (where it does not, filelock falls back to a marker file of its own in it)
        if holder(self.folder) is not None:
            with contextlib.suppress(OSError):
                self._path.write_text(f"{os.getpid()}\n", encoding="utf-8")

    def release(self) -> None:
        """Give up one level of the hold; the last one releases the lock."""
        self._lock.release()

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def holder(folder: str | Path) -> int | None:
    """The pid of the process holding ``folder``'s run lock; None when no process holds it.

    Reads without writing: the probe is a shared, non-blocking ``flock`` on the lock file,
    released at once (0 when the holder's pid cannot be read). Where ``flock`` is missing
    (not Unix) nothing can be told: None.

    Example:
        >>> holder("/") is None
        True
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not Unix
        return None
    path = Path(folder) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(OSError, ValueError):
                return int(os.read(fd, 32).decode("ascii").strip() or 0)
            return 0
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
