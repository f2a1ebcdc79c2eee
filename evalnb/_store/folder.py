"""Run folders: ``run.json`` + append-only ``events.jsonl`` in, parquet tables out.

Layout of ``runs/<run_id>/``:

- ``run.json``: the :class:`~evalnb.records.RunMeta` (rewritten atomically).
- ``events.jsonl``: one JSON object per line, appended and flushed as it happens:
  ``task_started``, ``llm_call``, ``tool_call`` and ``task_finished`` (whose
  ``record`` is the whole :class:`~evalnb.records.TaskRecord`). Every event carries
  ``task_id``, ``epoch`` and ``attempt`` (a fresh id per attempt), so the calls of
  an attempt that was interrupted are never mistaken for a finished one's.
- ``tasks.parquet``, ``llm_calls.parquet``, ``tool_calls.parquet``,
  ``checks.parquet``, ``messages.parquet``: written when the run completes.

Everything written goes through :func:`evalnb._redact.redact` first. A write that fails
(read-only folder, full disk) is undone (no temp file, no partial line is left) and raises
:class:`~evalnb.errors.StoreError` naming the file.

Example:
    >>> import tempfile
    >>> from evalnb.records import RunMeta
    >>> store = RunStore.create(tempfile.mkdtemp(), RunMeta(run_id="r1", provider="p", model="m"))
    >>> store.append({"event": "task_started", "task_id": "t", "epoch": 1, "attempt": "a"})
    >>> store.finished_keys()
    set()
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

try:
    import fcntl
except ImportError:  # pragma: no cover - not Unix
    fcntl = None  # type: ignore[assignment]

from evalnb._redact import redact, secret_values
from evalnb._store.lock import RunLock, holder
from evalnb.errors import (
    DamagedInputWarning,
    InputError,
    StoreError,
    from_validation_error,
    read_input,
    warn,
)
from evalnb.records import RunMeta, TaskRecord

EVENTS = "events.jsonl"
META = "run.json"
MERGING = ".merging"
"""The suffix of the hidden folder ``evalnb merge`` builds a run in (:func:`merging_folder`)."""


def utc_now() -> str:
    """The current UTC time as an ISO 8601 string (seconds).

    Example:
        >>> utc_now().endswith("Z")
        True
    """
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class RunStore:
    """One run folder. Create it with :meth:`create`, reopen it with :meth:`open`."""

    def __init__(self, path: str | Path, meta: RunMeta) -> None:
        self.path = Path(path)
        self.meta = meta
        self._events = self.path / EVENTS
        self._secrets = secret_values()
        self._writer: BinaryIO | None = None

    @functools.cached_property
    def lock(self) -> RunLock:
        """The folder's run lock (:mod:`evalnb._store.lock`): whoever runs, resumes, merges
        or finalizes the run holds it (``with store.lock: ...``; reentrant)."""
        return RunLock(self.path)

    @classmethod
    def create(cls, root: str | Path, meta: RunMeta) -> RunStore:
        """Make ``root/<run_id>/`` with its ``run.json``; refuse an existing folder."""
        path = Path(root) / meta.run_id
        try:
            path.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StoreError(root, meta.run_id, exc) from None
        store = cls(path, meta)
        try:
            store.write_meta()
            store._events.touch()
        except (OSError, StoreError) as exc:
            with contextlib.suppress(OSError):  # nothing half-made is left behind
                (path / META).unlink(missing_ok=True)
                path.rmdir()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(path, EVENTS, exc) from None
        return store

    @classmethod
    def open(cls, path: str | Path) -> RunStore:
        """Reopen a run folder to read it or resume it (reading never modifies it)."""
        path = Path(path)
        meta_path = path / META
        if _merging(path):
            msg = "an unfinished `evalnb merge` (stopped before it ended), not a run: merge again"
            raise InputError(path, None, None, msg)
        if not meta_path.is_file():
            raise InputError(path, None, None, f"not an evalnb run folder (no {META})")
        meta = _read_meta(meta_path)
        return cls(path, meta)

    def write_meta(self) -> None:
        """Write ``run.json`` atomically (temp file + rename)."""
        text = redact(self.meta.model_dump_json(indent=2), self._secrets)
        tmp = self.path / f".{META}.tmp"
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path / META)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise StoreError(self.path, META, exc) from None

    def append(self, event: dict[str, Any]) -> None:
        """Append one event as a JSON line and hand it to the OS (it survives a kill).

        The line is written whole, in one ``write`` on the file opened for appending,
        under an exclusive ``flock`` of the events file itself (two system calls, no lock
        file), so worker processes appending to one run never interleave. A failed write
        is cut back off, so the file never ends in part of a line.
        """
        line = redact(json.dumps(event, ensure_ascii=False, default=str), self._secrets)
        data = (line + "\n").encode("utf-8")
        try:
            if self._writer is None:
                self._writer = self._events.open("ab", buffering=0)
            fd = self._writer.fileno()
            _lock(fd)
        except OSError as exc:
            raise StoreError(self.path, EVENTS, exc) from None
        start = None
        try:
            start = self._writer.seek(0, os.SEEK_END)  # the end now, other writers included
            written = 0
            while written < len(data):
                written += self._writer.write(data[written:]) or 0
        except OSError as exc:
            if start is not None:
                with contextlib.suppress(OSError):
                    self._writer.truncate(start)
            raise StoreError(self.path, EVENTS, exc) from None
        finally:
            _unlock(fd)

    def close(self) -> None:
        """Close the events file (appending reopens it)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def events(self) -> Iterator[dict[str, Any]]:
        """Every complete event, in order; a torn last line is skipped with a warning.

        A line that is not a JSON object raises :class:`~evalnb.errors.InputError`
        naming the file and line.
        """
        for _, event in self._numbered_events():
            yield event

    def _numbered_events(self) -> Iterator[tuple[int, dict[str, Any]]]:
        if not self._events.exists():
            return
        with self._events.open(encoding="utf-8", newline="\n") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.endswith("\n"):
                    warn(
                        f"{self._events}:{lineno}: torn last line discarded",
                        DamagedInputWarning,
                    )
                    return
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    raise InputError(self._events, lineno, None, f"not JSON: {exc}") from None
                if not isinstance(event, dict):
                    raise InputError(self._events, lineno, None, "an event must be a JSON object")
                yield lineno, event

    def _finished(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """The ``task_finished`` events with their line numbers, their keys checked."""
        for lineno, event in self._numbered_events():
            if event.get("event") != "task_finished":
                continue
            if not isinstance(event.get("task_id"), str):
                raise InputError(self._events, lineno, "task_id", "missing or not a string")
            if not isinstance(event.get("epoch"), int):
                raise InputError(self._events, lineno, "epoch", "missing or not an integer")
            if not isinstance(event.get("record"), dict):
                raise InputError(self._events, lineno, "record", "missing or not an object")
            yield lineno, event

    def records(self) -> list[TaskRecord]:
        """The finished task records, one per (task_id, epoch): the last one written wins.

        Every line is checked (see :meth:`_finished`); a record that does not validate
        raises :class:`~evalnb.errors.InputError` naming the file, line and field.
        """
        latest: dict[tuple[str, int], TaskRecord] = {}
        for lineno, event in self._finished():
            try:
                record = TaskRecord.model_validate(event["record"])
            except ValidationError as exc:
                raise from_validation_error(self._events, lineno, exc, "record") from None
            latest[(record.task.id, record.epoch)] = record
        return list(latest.values())

    def observed(self, finished: int) -> RunMeta:
        """The run as a reader sees it, given its ``finished`` attempts.

        A complete run is as ``run.json`` says. Any other is ``running`` while a process
        holds its run lock (:func:`~evalnb._store.lock.holder`) and ``partial`` when none
        does (it was stopped, or killed before it could say so), and its
        ``missing_tasks`` are the attempts it planned (``task_count``) and has not
        finished, ``finished`` being those it holds: still to come while running,
        lacking when partial.

        Example:
            >>> import tempfile
            >>> meta = RunMeta(run_id="r", provider="p", model="m", task_count=177)
            >>> store = RunStore.create(tempfile.mkdtemp(), meta)  # run.json says running
            >>> seen = store.observed(97)
            >>> seen.status, seen.missing_tasks
            ('partial', 80)
            >>> with store.lock:
            ...     store.observed(97).status
            'running'
        """
        if self.meta.status == "complete":
            return self.meta
        status = "running" if holder(self.path) is not None else "partial"
        count = self.meta.task_count
        missing = max(count - finished, 0) if count is not None else self.meta.missing_tasks
        return self.meta.model_copy(update={"status": status, "missing_tasks": missing})

    def finished_keys(self) -> set[tuple[str, int]]:
        """The (task_id, epoch) pairs that have a ``task_finished`` event."""
        return {(e["task_id"], e["epoch"]) for _, e in self._finished()}

    @classmethod
    def write_records(cls, root: str | Path, meta: RunMeta, records: list[TaskRecord]) -> Path:
        """Write imported records as a complete run folder (an existing one is an error).

        Each record becomes a ``task_finished`` event, so the run can be re-scored and
        replayed; ``meta.status`` and ``meta.finished_at`` (when set) are kept.

        Example:
            >>> import tempfile
            >>> meta = RunMeta(run_id="r", provider="p", model="m", status="complete")
            >>> RunStore.write_records(tempfile.mkdtemp(), meta, []).name
            'r'
        """
        target = Path(root) / meta.run_id
        if target.exists():
            raise InputError(target, None, None, "run folder already exists; remove it first")
        store = cls.create(root, meta)
        latest = {(r.task.id, r.epoch): r for r in records}
        with store.lock:
            for n, record in enumerate(records, start=1):
                store.append(
                    {
                        "event": "task_finished",
                        "task_id": record.task.id,
                        "epoch": record.epoch,
                        "attempt": f"import-{n}",
                        "ts": meta.finished_at,
                        "record": record.model_dump(mode="json"),
                    }
                )
            store.finalize(
                meta.status if meta.status != "running" else "complete",
                finished_at=meta.finished_at,
                records=list(latest.values()),
            )
        return store.path

    def _redacted(self, record: TaskRecord) -> TaskRecord:
        """``record`` as its event was written: validated again only when a secret was cut."""
        text = record.model_dump_json()
        cut = redact(text, self._secrets)
        return record if cut == text else TaskRecord.model_validate_json(cut)

    def finalize(
        self,
        status: str = "complete",
        finished_at: str | None = None,
        records: list[TaskRecord] | None = None,
    ) -> None:
        """Write the parquet tables from the finished records and mark the run's status.

        ``finished_at`` defaults to now (an importer passes the recording's time).
        ``records``: every finished record of the run when the caller holds them all in
        memory (then events.jsonl is not re-read); by default they are read from it.
        The run lock is held throughout (the caller's hold, or taken here).
        """
        with self.lock:
            self._finalize(status, finished_at, records)

    def _finalize(
        self, status: str, finished_at: str | None, records: list[TaskRecord] | None
    ) -> None:
        from polars.exceptions import ComputeError

        from evalnb._store.command_counts import with_command_counts
        from evalnb._store.tables import conform, tables_from_records

        self.close()
        self.meta.status = status  # type: ignore[assignment]
        self.meta.finished_at = finished_at or utc_now()
        # read back from events.jsonl (redacted when written), or redacted here as they were
        records = self.records() if records is None else [self._redacted(r) for r in records]
        tables = tables_from_records(self.meta, records)
        counted = with_command_counts(
            tables["tasks"], tables["tool_calls"], tables["tool_invocations"]
        )
        tables["tasks"] = conform(counted, "tasks")
        for name, frame in tables.items():
            if name == "runs":
                continue
            tmp = self.path / f".{name}.parquet.tmp"
            try:
                frame.write_parquet(tmp)
                os.replace(tmp, self.path / f"{name}.parquet")
            except (OSError, ComputeError) as exc:  # polars reports a failed write as ComputeError
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
                self.meta.status = "partial"  # the events hold everything: --resume finishes it
                with contextlib.suppress(StoreError):
                    self.write_meta()
                raise StoreError(self.path, f"{name}.parquet", exc) from None
        self.write_meta()

    def repair_torn_tail(self) -> None:
        """Cut a partial last line (left by a kill mid-write) so appends stay whole.

        Called before resuming; readers skip such a line instead (see :meth:`events`).
        """
        if not self._events.exists():
            return
        data = self._events.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            warn(
                f"{self._events}: torn last line ({len(data) - keep} bytes) discarded",
                DamagedInputWarning,
            )
            with self._events.open("r+b") as fh:
                fh.truncate(keep)


def _lock(fd: int) -> None:
    """Take an exclusive ``flock`` on the open file ``fd`` (waiting for it); where there
    is no ``flock`` (not Unix) a line is still one ``write`` in append mode."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    """Release :func:`_lock`."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _read_meta(path: Path) -> RunMeta:
    """``run.json`` as a RunMeta; someone else's or a damaged one is an InputError naming the
    file and field (and saying to upgrade when a newer evalnb wrote it). One of a run-folder
    format this evalnb cannot read is an InputError on ``format`` (:class:`RunMeta`)."""
    from evalnb._version import __version__

    text = read_input(path)
    try:
        return RunMeta.model_validate_json(text)
    except ValidationError as exc:
        error = from_validation_error(path, None, exc)
    if error.field == "format":
        raise error
    msg = f"not an evalnb run.json ({error.field}: {error.message})"
    try:
        written_by = json.loads(text).get("evalnb_version")
    except (ValueError, AttributeError, RecursionError):
        written_by = None
    if isinstance(written_by, str) and _newer(written_by, __version__):
        msg += f"; written by evalnb {written_by}, this is {__version__}: upgrade"
    raise InputError(path, None, None, msg)


def _newer(version: str, than: str) -> bool:
    """Whether dotted ``version`` is above ``than`` (non-numeric parts count as 0).

    Example:
        >>> _newer("0.10.0", "0.9.1"), _newer("0.3", "0.3.0")
        (True, False)
    """

    def parts(v: str) -> list[int]:
        return [int(p) if p.isdigit() else 0 for p in v.split(".")]

    return parts(version) > parts(than)


def is_run_folder(path: str | Path) -> bool:
    """True when ``path`` is an evalnb run folder (it has a ``run.json``, and it is no
    unfinished merge: :func:`merging_folder`).

    Example:
        >>> is_run_folder("/")
        False
    """
    text = os.fspath(path)  # os.path: this runs once per folder of thousands
    return os.path.isfile(os.path.join(text, META)) and not _merging_name(
        os.path.basename(text.rstrip("/"))
    )


def merging_folder(target: Path) -> Path:
    """The hidden sibling folder in which ``evalnb merge`` builds the run it then renames
    to ``target`` (:mod:`evalnb._store.merge`); never read as a run.

    Example:
        >>> merging_folder(Path("runs/haiku")).as_posix()
        'runs/.haiku.merging'
    """
    return target.parent / f".{target.name}{MERGING}"


def _merging(path: Path) -> bool:
    return _merging_name(path.name)


def _merging_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(MERGING)
