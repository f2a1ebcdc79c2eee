"""Shards: a deterministic 1/N of a run's attempts, for running one run on many machines.

The attempts ``(task_id, epoch)`` are sorted by task id, then epoch; the k-th (from 0)
belongs to shard ``k % N + 1``. Every attempt is in exactly one shard, the shards
differ in size by at most one attempt, and the split does not depend on the order of
the dataset file. ``evalnb merge`` (:mod:`evalnb._store.merge`) puts the N runs back
together.

Example:
    >>> parse_shard("2/3")
    (2, 3)
    >>> in_shard([("b", 1), ("a", 1), ("a", 2)], (1, 2))
    [('b', 1), ('a', 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from evalnb.errors import InputError

Item = TypeVar("Item")


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/N"`` as ``(i, N)`` with ``1 <= i <= N``; anything else is an InputError.

    Example:
        >>> parse_shard("4/3")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: --shard: must be i/N with 1 <= i <= N, got '4/3'
    """
    index, _, total = text.partition("/")
    if index.isdigit() and total.isdigit() and 1 <= int(index) <= int(total):
        return int(index), int(total)
    raise InputError("--shard", None, None, f"must be i/N with 1 <= i <= N, got {text!r}")


def in_shard(
    attempts: Sequence[tuple[Item, int]], shard: tuple[int, int] | None
) -> list[tuple[Item, int]]:
    """The attempts of ``shard`` (all of them for None), in their given order.

    Each attempt is ``(case or task id, epoch)``; a case is identified by its
    ``task.id`` when it has one.

    Example:
        >>> in_shard([("a", 1), ("a", 2)], None)
        [('a', 1), ('a', 2)]
    """
    if shard is None:
        return list(attempts)
    index, total = shard
    ids = [(_task_id(item), epoch) for item, epoch in attempts]
    rank = {attempt: k for k, attempt in enumerate(sorted(set(ids)))}
    return [a for a, i in zip(attempts, ids, strict=True) if rank[i] % total == index - 1]


def _task_id(item: object) -> str:
    task = getattr(item, "task", None)
    return task.id if task is not None else str(item)
