"""Pausing Python's cyclic garbage collector while many long-lived objects are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while many acyclic objects are built.

    Reading a log, or building a run's tables from its records, builds hundreds of
    thousands of small objects that all stay alive; each automatic collection walks all
    of them again (in a profile of the bench's Inspect logs, a third of a load's time).
    Reference counting still frees everything as usual; collection resumes (if it was
    on) when the block ends, also on an error.

    Example:
        >>> import gc
        >>> with paused_gc():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
