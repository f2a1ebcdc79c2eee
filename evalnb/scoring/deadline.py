"""Scoring with a deadline, off the event loop.

An attempt's checks and gates share one deadline (:class:`Deadline`). What they wait for
(a gate's command, a ``script`` gate) is awaited within it and cancelled at it. What they
compute runs in one of two places:

- a **regular expression** (``stdout_regex``, ``file_line_regex``, ``command_output_matches``,
  ``file_matches``, and the command pattern that ``no_transcript_errors`` and the
  interaction score apply) runs in a **scorer process** (:meth:`Deadline.call`): a
  backtracking engine can take exponential time (``^(a+)+$`` against 34 ``a`` and a
  ``b``), holding the GIL, so no thread could keep the event loop free or stop it; a
  process is killed at the deadline. Scorer processes come from the ``forkserver`` (they
  share nothing with evalnb's threads) and are kept for the next attempt, so an attempt
  pays a round trip per regex check, not a process start;
- everything else (substrings, counts, exit codes, file types, JSON) is linear in its
  bounded input (the output cap, :data:`~evalnb.runtime.sandbox.base.MAX_READ_BYTES`)
  and runs in place.

The time taken to start a scorer process is not counted. Past the deadline no check
starts: the one running is stopped, and it and every check after it fail with a detail
beginning ``timed out`` (:meth:`Deadline.why`); the attempt's ``error`` says how many
(``scoring timeout: ...``). The judge is not under this deadline: each of its calls is
bounded by the provider's request timeout and retries.

Example:
    >>> import asyncio, re
    >>> async def main():
    ...     deadline = Deadline(1)
    ...     try:
    ...         found = await deadline.call(re.findall, "b+", "aabb")
    ...         try:
    ...             await deadline.call(re.search, "^(a+)+$", "a" * 34 + "b")
    ...         except ScoringTimeout:
    ...             return found, deadline.expired, deadline.why()
    ...     finally:
    ...         deadline.close()
    >>> asyncio.run(main())
    (['bb'], True, 'timed out: scoring ran past its 1s deadline')
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

_PRELOAD = ["evalnb.scoring.expectations", "evalnb.scoring.gates", "evalnb.scoring.outcome"]
"""Imported once by the forkserver, so a scorer process starts with them loaded."""


class ScoringTimeout(Exception):
    """The scoring deadline passed."""


class _Scorer:
    """One scorer process: calls ``fn(*args)`` for each request on its pipe."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_PRELOAD)
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs,), daemon=True)
        self.process.start()
        theirs.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


_IDLE: list[_Scorer] = []
"""Scorer processes waiting for the next attempt (at most one per attempt scored at once)."""


class Deadline:
    """One attempt's scoring budget of ``seconds`` from now (None: no limit), with the
    scorer process its regular expressions run in (see the module docstring). Call
    :meth:`close` when scoring ends."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        loop = asyncio.get_running_loop()
        self._at = None if seconds is None else loop.time() + seconds
        self._scorer: _Scorer | None = None
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

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the scorer process (``fn`` and ``args`` must pickle), within
        the deadline: past it the process is killed and :class:`ScoringTimeout` raised.
        An exception ``fn`` raises is raised here."""
        self.start_check()
        loop = asyncio.get_running_loop()
        if self._scorer is None and _IDLE:
            self._scorer = _IDLE.pop()
        elif self._scorer is None:
            started = loop.time()
            self._scorer = await asyncio.to_thread(_Scorer)
            if self._at is not None:  # starting a process is evalnb's time, not the checks'
                self._at += loop.time() - started
        scorer = self._scorer
        ready = loop.create_future()
        fd = scorer.conn.fileno()
        try:
            scorer.conn.send((fn, args))
            loop.add_reader(fd, _wake, ready)
            try:
                async with asyncio.timeout_at(self._at):
                    await ready
            finally:
                loop.remove_reader(fd)
            failed, value = scorer.conn.recv()
        except BaseException as exc:  # past the deadline, cancelled, or the process died
            self._scorer = None
            scorer.kill()
            if isinstance(exc, TimeoutError):
                self.expired = True
                raise ScoringTimeout(self.why()) from None
            if isinstance(exc, EOFError | OSError):
                raise RuntimeError("the scorer process died") from exc
            raise
        if failed:
            raise value
        return value

    def close(self) -> None:
        """Give the scorer process back for the next attempt."""
        if self._scorer is not None and self._scorer.process.is_alive():
            _IDLE.append(self._scorer)
        self._scorer = None


def _wake(ready: asyncio.Future[None]) -> None:
    """The scorer's answer is there to read."""
    if not ready.done():
        ready.set_result(None)


def _serve(conn: Connection) -> None:
    """A scorer process: answer ``(failed, result or exception)`` to each ``(fn, args)``
    until evalnb closes the pipe."""
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            answer: tuple[bool, Any] = (False, fn(*args))
        except Exception as exc:
            answer = (True, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # an answer that does not pickle
            conn.send((True, RuntimeError(f"the scorer's answer cannot be sent: {exc}")))
