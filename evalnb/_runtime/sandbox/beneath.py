"""Open a path beneath a folder, never through a link that leaves it (Linux ``openat2``).

The local sandbox's gates and checks read the workspace on the host, outside the
confinement, as evalnb's own user (root, often). A command can leave symlinks there
(``leak.txt -> /etc/shadow``, ``root -> /``, ``up -> ../..``): following them would read
the host. :func:`open_beneath` asks the kernel to resolve every component beneath the
folder (``RESOLVE_BENEATH``: an absolute link or a ``..`` that climbs out fails with
EXDEV) and never through ``/proc`` magic links (``RESOLVE_NO_MAGICLINKS``), so a link
that stays inside works and one that leaves fails, without a race between checking a
path and opening it. ``openat2`` needs Linux 5.6; elsewhere it raises OSError (ENOSYS).

Example:
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> _ = open(os.path.join(root, "a.txt"), "w").write("hi")
    >>> os.symlink("a.txt", os.path.join(root, "inside"))
    >>> os.symlink("/etc/passwd", os.path.join(root, "leak"))
    >>> fd = open_beneath(root, "inside")
    >>> os.read(fd, 10), os.close(fd)
    (b'hi', None)
    >>> open_beneath(root, "leak")
    Traceback (most recent call last):
    ...
    OSError: [Errno 18] Invalid cross-device link: 'leak'
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every architecture (added after the tables merged)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True) if platform.system() == "Linux" else None


def open_beneath(root: str, path: str, flags: int = os.O_RDONLY) -> int:
    """A file descriptor for ``path`` (relative) resolved beneath the folder ``root``.

    ``flags`` are ``open(2)``'s (``O_CLOEXEC`` is added); with ``O_NOFOLLOW`` the last
    component is not followed, so a symlink itself can be looked at (with ``O_PATH``).
    Raises OSError: EXDEV for a path that leaves ``root``, ENOENT, ENOTDIR, ELOOP, ... as
    ``open`` would, ENOSYS where ``openat2`` does not exist.
    """
    if _libc is None:
        raise OSError(errno.ENOSYS, "openat2 is Linux-only", path)
    how = _OpenHow(flags | os.O_CLOEXEC, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _libc.syscall(
            _SYS_OPENAT2, root_fd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how)
        )
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return int(fd)
    finally:
        os.close(root_fd)
