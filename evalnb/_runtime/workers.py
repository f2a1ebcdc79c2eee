"""Worker processes: one run's attempts spread over several processes on one machine.

Through a real SDK each model call costs milliseconds of CPU (the SDK, its connection
pool, JSON), so one Python process tops out near a hundred calls per second however
many attempts are in flight. With ``workers`` > 1 the runner deals its attempts, in
start order, round-robin into that many slices (:func:`deal`: deterministic, each
slice keeps the longest-first order) and runs the first slice itself and each other
slice in a child process (:func:`run_processes`). Every child appends to the same run folder's
``events.jsonl`` (each event one locked, whole-line append, see
:meth:`~evalnb._store.RunStore.append`); the parent alone writes ``run.json`` and builds
the tables once every child has ended. A child that fails stops the others; an
interrupt stops them all; either way the attempts without a ``task_finished`` event
are what ``--resume`` runs again.

Children are started with ``spawn`` (a fresh interpreter: no threads or event loop
inherited), so the cases and providers must pickle; SDK providers pickle as their
constructor call.

Children die with their parent (:func:`_die_with_parent`): on Linux the kernel kills a
child the moment its parent dies, however it dies (``PR_SET_PDEATHSIG``, SIGKILL), and
every child also checks every :data:`PARENT_CHECK_S` seconds that its parent is alive
and stops when it is not (the only guard where ``prctl`` is missing). So once the parent
is killed, no orphan keeps appending to the run, and the run lock (held by the parent)
is free for ``--resume``.

Example:
    >>> deal(["a", "b", "c", "d", "e"], 2)
    [['a', 'c', 'e'], ['b', 'd']]
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

from evalnb.errors import EvalnbError

Item = TypeVar("Item")

STOP_GRACE_S = 10.0
"""How long a child may take to stop after SIGTERM before it is killed."""
PARENT_CHECK_S = 0.5
"""How often a child checks that its parent is alive."""
PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): the signal a process gets when its parent dies."""


def deal(items: Sequence[Item], n: int) -> list[list[Item]]:
    """``items`` dealt round-robin into ``n`` slices (the k-th to slice ``k % n``)."""
    return [list(items[i::n]) for i in range(n)]


def shares(total: int, n: int) -> list[int]:
    """``total`` split into ``n`` near-equal whole parts, each at least 1.

    Example:
        >>> shares(10, 4)
        [3, 3, 2, 2]
    """
    return [max(1, total // n + (i < total % n)) for i in range(n)]


def check_picklable(what: str, value: object) -> None:
    """Raise ValueError naming ``what`` when it cannot go to a worker process.

    Example:
        >>> check_picklable("the model", lambda: 1)
        Traceback (most recent call last):
        ...
        ValueError: --workers: the model cannot be sent to a worker process (...)
    """
    try:
        pickle.dumps(value)
    except Exception as exc:  # pickling raises many types (PicklingError, TypeError, ...)
        reason = f"{type(exc).__name__}: {exc}"
        raise ValueError(
            f"--workers: {what} cannot be sent to a worker process ({reason[:200]})"
        ) from None


async def first_failure(*steps: Awaitable[None]) -> None:
    """Run ``steps`` together; the first to fail cancels the others and its error is raised.

    Example:
        >>> async def fail():
        ...     raise ValueError("no")
        >>> asyncio.run(first_failure(asyncio.sleep(9), fail()))
        Traceback (most recent call last):
        ...
        ValueError: no
    """
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            error = task.exception()
            if error is not None:
                raise error
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _child(
    target: Callable[..., None], payload: Any, messages: Any, index: int, parent: int
) -> None:
    """A worker's body: run ``target(payload, send)``, then report how it ended.

    SIGTERM (from the parent, or from the child itself once the ``parent`` pid is gone)
    stops it like Ctrl-C: the attempts in flight are cancelled.
    """
    signal.signal(signal.SIGTERM, _interrupt)
    _die_with_parent(parent)
    outcome: BaseException | None = None
    try:
        target(payload, messages.put)
    except KeyboardInterrupt:
        outcome = EvalnbError("interrupted")
    except BaseException as exc:
        outcome = exc
    if outcome is not None:
        try:  # the parent must be able to rebuild the exception
            pickle.loads(pickle.dumps(outcome))
        except Exception:
            outcome = EvalnbError(f"{type(outcome).__name__}: {outcome}")
    messages.put(("ended", index, outcome))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_stoppable(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)`` in a worker process (see :func:`_child`), SIGTERM stopping it
    as Ctrl-C stops ``asyncio.run``: its main task is cancelled from the event loop, and
    with it the attempts in flight, then KeyboardInterrupt is raised here.

    The signal handler never raises. A KeyboardInterrupt raised wherever the signal lands
    could land inside a task's step (that task then ends holding the interrupt, which
    asyncio prints as "Task exception was never retrieved", with a traceback) or inside
    the event loop's construction (whose half-built loop then fails as it is collected).
    SIGTERM before the loop runs ``main`` stops it before ``main`` starts; once ``main``
    has finished, there is nothing left to stop.

    Example:
        >>> async def work():
        ...     return None
        >>> run_stoppable(work())
    """
    stopped: list[bool] = []
    cancel: list[Callable[[], object]] = []

    def stop(signum: int, frame: object) -> None:
        stopped.append(True)
        if cancel:
            with contextlib.suppress(RuntimeError):  # the loop is closed: main has ended
                cancel[0]()

    async def stoppable() -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        cancel.append(lambda: loop.call_soon_threadsafe(task.cancel))
        if stopped:  # SIGTERM came before the loop ran
            main.close()
            raise asyncio.CancelledError
        await main

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        asyncio.run(stoppable())
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _die_with_parent(parent: int) -> None:
    """Make this process die with ``parent`` (see the module docstring): SIGKILL from the
    kernel on Linux, and a thread that stops it (SIGTERM to itself) once ``parent`` is no
    longer its parent."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="evalnb-parent-watch", daemon=True).start()


async def run_processes(
    target: Callable[[Any, Callable[[Any], None]], None],
    payloads: Sequence[Any],
    on_message: Callable[[Any], None],
) -> None:
    """Run ``target(payload, send)`` in one child process per payload; wait for them all.

    ``send`` hands a picklable message to ``on_message`` in the parent. The first child
    that fails (or dies) stops the others and its exception is raised here; a
    cancellation (an interrupt) stops them all too. Children ignore SIGINT (a Ctrl-C
    reaches the whole process group: the parent alone handles it); the parent stops them
    with SIGTERM (each cancels its attempts in flight), then kills those still running
    after :data:`STOP_GRACE_S`.
    """
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    children = [
        context.Process(
            target=_child, args=(target, payload, messages, i, os.getpid()), daemon=True
        )
        for i, payload in enumerate(payloads)
    ]
    with _sigint_ignored():  # inherited by the children, from their first instruction
        for child in children:
            child.start()
    ended: set[int] = set()
    try:
        while len(ended) < len(children):
            try:
                message = await asyncio.to_thread(messages.get, True, 0.2)
            except queue.Empty:
                dead = [c for c in children if c.exitcode not in (None, 0)]
                if dead and messages.empty():
                    raise EvalnbError(
                        f"a worker process died (exit code {dead[0].exitcode})"
                    ) from None
                continue
            if isinstance(message, tuple) and message and message[0] == "ended":
                ended.add(message[1])
                if message[2] is not None:
                    raise message[2]
            else:
                on_message(message)
    finally:
        await asyncio.to_thread(_stop, children, ended)
        messages.close()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored for the duration (only the main thread may change it; elsewhere the
    children keep the default)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop(children: list[Any], ended: set[int]) -> None:
    """Let the children that ended exit; ask the others to stop (SIGTERM), then kill
    those that do not."""
    for i in ended:
        children[i].join(STOP_GRACE_S)
    for child in children:
        if child.is_alive():
            child.terminate()
    for child in children:
        child.join(STOP_GRACE_S)
        if child.is_alive():
            child.kill()
            child.join()
