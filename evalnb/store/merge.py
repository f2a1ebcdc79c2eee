"""Merge shard runs (``evalnb run --shard i/N``) into one run folder.

The shards must be the N complete runs of one configuration: the same dataset (and
its sha256), provider, model, epochs, turn limit, guidance, sandbox, filters and
model spec, with shard numbers 1..N each exactly once. The merged run holds every
shard's finished records (as ``task_finished`` events, so it can be re-scored and
replayed) and the rebuilt parquet tables; its ``started_at`` is the earliest start,
its ``finished_at`` the latest finish, and ``settings.shard`` is cleared.

Example:
    >>> merge_shards([], "out")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: evalnb merge: give the shard run folders to merge
"""

from __future__ import annotations

from pathlib import Path

from evalnb.errors import InputError
from evalnb.records import TaskRecord
from evalnb.store.folder import RunStore

SAME = (
    "dataset",
    "dataset_sha256",
    "provider",
    "model",
    "epochs",
    "max_turns",
    "guidance",
    "sandbox",
    "simulated",
)
"""Run fields every shard must share (with ``settings.spec`` and ``settings.filters``)."""


def merge_shards(shard_dirs: list[str | Path], out: str | Path) -> Path:
    """Check the shard runs belong together and write them as one run folder at ``out``.

    Raises InputError naming the folder and field: a shard not complete or not a
    shard, a setting that differs, a shard number given twice or missing, or an
    existing ``out``.
    """
    if not shard_dirs:
        raise InputError("evalnb merge", None, None, "give the shard run folders to merge")
    target = Path(out)
    if target.exists():
        raise InputError(target, None, None, "already exists; merge into a new folder")
    stores = [RunStore.open(d) for d in shard_dirs]
    numbers: dict[int, Path] = {}
    totals = set()
    first = stores[0]
    for store in stores:
        meta = store.meta
        if meta.status != "complete":
            raise InputError(store.path, None, "status", f"shard is {meta.status}, not complete")
        if not meta.settings.shard:
            raise InputError(store.path, None, "settings.shard", "not a shard (run --shard i/N)")
        index, total = (int(x) for x in meta.settings.shard.split("/"))
        totals.add(total)
        if index in numbers:
            msg = f"shard {index}/{total} given twice (also {numbers[index]})"
            raise InputError(store.path, None, "settings.shard", msg)
        numbers[index] = store.path
        for field in SAME:
            if getattr(meta, field) != getattr(first.meta, field):
                msg = (
                    f"{getattr(meta, field)!r} differs from {getattr(first.meta, field)!r} "
                    f"in {first.path}"
                )
                raise InputError(store.path, None, field, msg)
        for field in ("spec", "filters"):
            if getattr(meta.settings, field) != getattr(first.meta.settings, field):
                raise InputError(
                    store.path, None, f"settings.{field}", f"differs from {first.path}"
                )
    if len(totals) > 1:
        raise InputError("evalnb merge", None, "settings.shard", f"shard counts differ: {totals}")
    total = totals.pop()
    missing = [f"{i}/{total}" for i in range(1, total + 1) if i not in numbers]
    if missing:
        raise InputError("evalnb merge", None, "settings.shard", f"missing: {', '.join(missing)}")
    records: list[TaskRecord] = [r for store in stores for r in store.records()]
    meta = first.meta.model_copy(deep=True)
    meta.run_id = target.name
    meta.settings.shard = None
    meta.task_count = len(records)
    meta.started_at = min((s.meta.started_at for s in stores if s.meta.started_at), default=None)
    meta.finished_at = max((s.meta.finished_at for s in stores if s.meta.finished_at), default=None)
    return RunStore.write_records(target.parent, meta, records)
