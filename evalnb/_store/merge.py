"""Merge shard runs (``evalnb run --shard i/N``) into one run folder, atomically and streaming.

The shards must be the N complete runs of one configuration: the same dataset (and
its sha256), provider, model, epochs, turn limit, guidance, sandbox, filters, model
spec and judges (``--judge``), with shard numbers 1..N each exactly once. The merged run holds every
shard's events and tables; its ``started_at`` is the earliest start, its
``finished_at`` the latest finish, ``task_count`` the attempts of all shards, and
``settings.shard`` is cleared.

**Atomic.** The merged run is built in a temporary sibling folder, ``.<name>.merging``
beside ``out``, and renamed to ``out`` only once complete (``run.json`` written last), so
a kill at any point leaves either no ``out`` or a complete one. The temporary folder is
never a run (:func:`~evalnb._store.folder.is_run_folder` is False for it, and loading
it is an error); the next merge into the same ``out`` removes one left by a killed merge,
with a warning. The shards and the temporary folder are held under their run locks
(:mod:`evalnb._store.lock`) throughout: nobody resumes a shard while it is read, and two
merges into one ``out`` do not run at once.

**Streaming.** Nothing holds every record: each shard's ``events.jsonl`` is copied line by
line (as written, so nothing new reaches the disk), and each table is one lazy scan over
the shards' parquet files (``run_id`` renamed, ``attempt_key`` renumbered after the
earlier shards' attempts, a standard column a shard lacks added as nulls) written by
polars' streaming engine. A shard whose tables are missing, unreadable or lack a key
column or ``attempt_key`` (an older evalnb's, or damaged) is refused, naming the file:
``evalnb run --resume SHARD`` rebuilds them from its events.

Example:
    >>> merge_shards([], "out")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: evalnb merge: give the shard run folders to merge
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import polars as pl

from evalnb._store.folder import EVENTS, RunStore, merging_folder
from evalnb._store.lock import LOCK, RunLock
from evalnb._store.tables import KEYS, TABLES, conform
from evalnb.errors import DamagedInputWarning, InputError, StoreError, warn
from evalnb.records import RunMeta

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
"""Run fields every shard must share (with ``settings.spec``, ``settings.filters`` and
``settings.judges``)."""
EXISTS = "already exists; merge into a new folder"


def merge_shards(shard_dirs: list[str | Path], out: str | Path) -> Path:
    """Check the shard runs belong together and write them as one run folder at ``out``.

    Raises InputError naming the folder and field: a shard not complete or not a
    shard, a setting that differs, a shard number given twice or missing, a shard's
    table missing or outdated, an existing ``out``, or a merge into ``out`` already
    running ("already running (pid N)").
    """
    if not shard_dirs:
        raise InputError("evalnb merge", None, None, "give the shard run folders to merge")
    target = Path(out)
    if target.exists():
        raise InputError(target, None, None, EXISTS)
    stores = [RunStore.open(d) for d in shard_dirs]
    with contextlib.ExitStack() as held:
        for store in {s.path.resolve(): s for s in stores}.values():  # a folder given twice
            held.enter_context(store.lock)  # is refused below, not here
        _check_shards(stores)
        scans = {name: _scans(stores, name) for name in TABLES[1:]}
        counts = [scan.select(pl.len()).collect().item() for scan in scans["tasks"]]
        meta = _merged_meta(stores, target.name, sum(counts))
        temp = merging_folder(target)
        try:
            temp.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(temp.parent, temp.name, exc) from None
        held.enter_context(RunLock(temp))  # a second merge into out: "already running"
        _clear(temp)
        try:
            _copy_events(stores, temp / EVENTS)
            for name, parts in scans.items():
                _write_table(parts, counts, meta.run_id, temp / f"{name}.parquet")
            RunStore(temp, meta).write_meta()  # last: the folder is whole from here on
            os.rename(temp, target)
        except OSError as exc:
            shutil.rmtree(temp, ignore_errors=True)
            if target.exists():  # another merge finished it first
                raise InputError(target, None, None, EXISTS) from None
            raise StoreError(temp, "", exc) from None
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
    return target


def _check_shards(stores: list[RunStore]) -> None:
    """Raise InputError unless ``stores`` are the N complete shards of one run."""
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
        for field in ("spec", "filters", "judges"):
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


def _scans(stores: list[RunStore], name: str) -> list[pl.LazyFrame]:
    """Each shard's table ``name`` as a lazy scan; a file missing, unreadable or lacking a
    column of today's schema is an InputError naming it."""
    scans = []
    for store in stores:
        path = store.path / f"{name}.parquet"
        try:
            scan = pl.scan_parquet(path)
            have = scan.collect_schema()
        except (OSError, pl.exceptions.PolarsError) as exc:
            problem = "missing" if not path.exists() else f"unreadable ({exc})"
            raise InputError(path, None, None, f"{problem}; {_rebuild(store)}") from None
        lacking = [c for c in [*KEYS, "attempt_key"] if c not in have]
        if lacking:
            msg = f"written by an older evalnb or damaged; {_rebuild(store)}"
            raise InputError(path, None, lacking[0], msg)
        scans.append(conform(scan, name))
    return scans


def _rebuild(store: RunStore) -> str:
    return f"`evalnb run --resume {store.path}` rebuilds the shard's tables from its events"


def _merged_meta(stores: list[RunStore], run_id: str, task_count: int) -> RunMeta:
    """The merged run's ``run.json``: the first shard's, with the shards' span and count."""
    meta = stores[0].meta.model_copy(deep=True)
    meta.run_id = run_id
    meta.settings.shard = None
    meta.task_count = task_count
    meta.status = "complete"
    meta.started_at = min((s.meta.started_at for s in stores if s.meta.started_at), default=None)
    meta.finished_at = max((s.meta.finished_at for s in stores if s.meta.finished_at), default=None)
    return meta


def _clear(temp: Path) -> None:
    """Empty a temporary merge folder that a killed merge left behind (with a warning)."""
    left = [p for p in temp.iterdir() if p.name != LOCK]
    if not left:
        return
    warn(f"{temp}: removed what an interrupted merge left there", DamagedInputWarning)
    for path in left:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _copy_events(stores: list[RunStore], out: Path) -> None:
    """Every shard's events, line by line; a shard's torn last line is left out (warning)."""
    with out.open("wb") as sink:
        for store in stores:
            source = store.path / EVENTS
            with source.open("rb") as lines:
                for line in lines:
                    if not line.endswith(b"\n"):
                        warn(f"{source}: torn last line discarded", DamagedInputWarning)
                        break
                    sink.write(line)


def _write_table(parts: list[pl.LazyFrame], counts: list[int], run_id: str, out: Path) -> None:
    """One table of every shard, the run renamed and the attempts numbered after the
    earlier shards' (``counts``: each shard's attempts), streamed to ``out``."""
    offsets = [sum(counts[:i]) for i in range(len(counts))]
    merged = pl.concat(
        [
            part.with_columns(
                pl.lit(run_id, dtype=pl.Utf8).alias("run_id"),
                pl.col("attempt_key") + offset,
            )
            for part, offset in zip(parts, offsets, strict=True)
        ],
        how="diagonal_relaxed",
    )
    merged.sink_parquet(out)
