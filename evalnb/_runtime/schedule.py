"""Start order of attempts: longest first where durations are known.

With many attempts in flight, the run ends when its last attempt does; starting the
long ones first (the LPT rule) keeps one long attempt from starting last and running
alone. An attempt's expected duration is, in order of preference, its task's mean
duration in a previous run (``durations``, task id -> ms, e.g. from
:func:`durations_from`; ``evalnb run --durations-from RUN_DIR``), or its task's
difficulty tag (``easy`` 1, ``medium`` 2, ``hard`` 3, relative units). Attempts whose
duration is unknown count as the mean of the known ones; with nothing known the order
is left as given. The sort is stable.

Example:
    >>> from evalnb.records import Task
    >>> tasks = [Task(id=i, category="c", prompt="p", tags=[t])
    ...          for i, t in [("a", "easy"), ("b", "hard"), ("c", "medium")]]
    >>> [t.id for t in longest_first(tasks, key=lambda t: t)]
    ['b', 'c', 'a']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from evalnb.records import Task

DIFFICULTY = {"easy": 1.0, "medium": 2.0, "hard": 3.0}
"""Relative durations of the difficulty tags."""

Item = TypeVar("Item")


def expected(task: Task, durations: Mapping[str, float] | None) -> float | None:
    """The task's expected duration: from ``durations``, else its difficulty tag, else None.

    Example:
        >>> expected(Task(id="t", category="c", prompt="p", tags=["hard"]), None)
        3.0
    """
    if durations:
        return durations.get(task.id)
    return next((DIFFICULTY[t] for t in task.tags if t in DIFFICULTY), None)


def longest_first(
    items: Sequence[Item],
    key: Callable[[Item], Task],
    durations: Mapping[str, float] | None = None,
) -> list[Item]:
    """``items`` ordered by the expected duration of ``key(item)``, longest first (stable)."""
    known = [e for e in (expected(key(i), durations) for i in items) if e is not None]
    if not known:
        return list(items)
    default = sum(known) / len(known)

    def rank(item: Item) -> float:
        value = expected(key(item), durations)
        return -(default if value is None else value)

    return sorted(items, key=rank)


def durations_from(run_dir: str | Path) -> dict[str, float]:
    """Mean ``duration_ms`` per task id in a previous run folder (for ``durations``).

    Example:
        >>> durations_from("no-such-run")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-run: not an evalnb run folder (no run.json)
    """
    from evalnb._store.folder import RunStore

    store = RunStore.open(run_dir)
    sums: dict[str, list[float]] = {}
    for record in store.records():
        if record.trace.duration_ms is not None:
            sums.setdefault(record.task.id, []).append(record.trace.duration_ms)
    return {task: sum(v) / len(v) for task, v in sums.items()}
