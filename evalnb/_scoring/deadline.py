"""Scoring with a deadline: what can really take long is cut at it.

An attempt's checks and gates share one deadline (:class:`Deadline`). What they wait
for, a gate's command and a ``script`` gate running in the sandbox, is awaited within
it and cancelled at it (:meth:`Deadline.run`). Everything else runs in place, between
two awaits: substrings, counts, exit codes, file types and JSON, and every regular
expression (a check's, a gate's, and the command pattern that ``no_transcript_errors``
and the interaction score apply), which is in the Rust dialect and matched by RE2 in
time linear in its text (:mod:`evalnb.records.rust_regex`), a text bounded by the output
cap and :data:`~evalnb._runtime.sandbox.base.MAX_READ_BYTES`. So ``^(a+)+$`` against 34
``a`` and a ``b``, exponential in a backtracking engine, is answered at once, and
nothing blocks the event loop for long.

At the deadline the command being awaited is cancelled, and past it no check starts
(:meth:`Deadline.start_check`): that check and every one after it fail with a detail
beginning ``timed out`` (:meth:`Deadline.why`); the attempt's ``error`` says how many
(``scoring timeout: ...``, :meth:`Deadline.error`). The judge is not under this
deadline: each of its calls is bounded by the provider's request timeout and retries.

Example:
    >>> import asyncio
    >>> async def main():
    ...     deadline, details = Deadline(0.1), []
    ...     for step in (asyncio.sleep(0), asyncio.sleep(5), asyncio.sleep(0)):
    ...         try:
    ...             await deadline.run(step)
    ...             details.append("ran")
    ...         except ScoringTimeout as exc:
    ...             details.append(deadline.stop(exc))
    ...     return details, deadline.error()
    >>> details, error = asyncio.run(main())
    >>> details[0], details[1], details[2] == details[1]
    ('ran', 'timed out: scoring ran past its 0.1s deadline', True)
    >>> error
    'scoring timeout: 2 check(s) stopped at the 0.1s deadline'
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class ScoringTimeout(Exception):
    """The scoring deadline passed."""


class Deadline:
    """One attempt's scoring budget of ``seconds`` from now (None: no limit); see the
    module docstring. Made inside the event loop that scores the attempt."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        loop = asyncio.get_running_loop()
        self._at = None if seconds is None else loop.time() + seconds
        self.expired = False
        self.stopped = 0
        """How many checks the deadline stopped (counted by :meth:`stop`)."""

    def why(self) -> str:
        """The detail of a check the deadline stopped."""
        return f"timed out: scoring ran past its {self.seconds:g}s deadline"

    def stop(self, exc: ScoringTimeout) -> str:
        """Count one check stopped by the deadline; its detail (``exc``'s text)."""
        self.stopped += 1
        return str(exc)

    def error(self) -> str | None:
        """The attempt's ``error`` when the deadline stopped checks, else None."""
        if not self.stopped:
            return None
        return f"scoring timeout: {self.stopped} check(s) stopped at the {self.seconds:g}s deadline"

    def start_check(self) -> None:
        """Raise :class:`ScoringTimeout` when the deadline has passed: no check starts."""
        if self._at is not None and asyncio.get_running_loop().time() >= self._at:
            self.expired = True
        if self.expired:
            raise ScoringTimeout(self.why())

    async def run(self, step: Awaitable[T]) -> T:
        """Await ``step`` (a gate's command) within the deadline; past it, cancel it and
        raise :class:`ScoringTimeout`."""
        try:
            self.start_check()
            async with asyncio.timeout_at(self._at):
                return await step
        except TimeoutError:
            self.expired = True
            raise ScoringTimeout(self.why()) from None
        finally:
            if asyncio.iscoroutine(step):
                step.close()  # never started: no "never awaited" warning
