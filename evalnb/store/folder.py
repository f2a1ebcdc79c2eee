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

Everything written goes through :func:`evalnb.redact.redact` first.

Example:
    >>> import tempfile
    >>> from evalnb.records import RunMeta
    >>> store = RunStore.create(tempfile.mkdtemp(), RunMeta(run_id="r1", provider="p", model="m"))
    >>> store.append({"event": "task_started", "task_id": "t", "epoch": 1, "attempt": "a"})
    >>> store.finished_keys()
    set()
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from evalnb.records import RunMeta, TaskRecord
from evalnb.redact import redact, secret_values

EVENTS = "events.jsonl"
META = "run.json"


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
        self._writer: TextIO | None = None

    @classmethod
    def create(cls, root: str | Path, meta: RunMeta) -> RunStore:
        """Make ``root/<run_id>/`` with its ``run.json``; refuse an existing folder."""
        path = Path(root) / meta.run_id
        path.mkdir(parents=True, exist_ok=False)
        store = cls(path, meta)
        store.write_meta()
        store._events.touch()
        return store

    @classmethod
    def open(cls, path: str | Path) -> RunStore:
        """Reopen a run folder to read it or resume it (reading never modifies it)."""
        path = Path(path)
        meta_path = path / META
        if not meta_path.is_file():
            from evalnb.errors import InputError

            raise InputError(path, None, None, f"not an evalnb run folder (no {META})")
        meta = _read_meta(meta_path)
        return cls(path, meta)

    def write_meta(self) -> None:
        """Write ``run.json`` atomically (temp file + rename)."""
        tmp = self.path / f".{META}.tmp"
        tmp.write_text(redact(self.meta.model_dump_json(indent=2), self._secrets), encoding="utf-8")
        os.replace(tmp, self.path / META)

    def append(self, event: dict[str, Any]) -> None:
        """Append one event as a JSON line and flush it to the OS (it survives a kill)."""
        line = redact(json.dumps(event, ensure_ascii=False, default=str), self._secrets)
        if self._writer is None:
            self._writer = self._events.open("a", encoding="utf-8")
        self._writer.write(line + "\n")
        self._writer.flush()

    def close(self) -> None:
        """Close the events file (appending reopens it)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def events(self) -> Iterator[dict[str, Any]]:
        """Every complete event, in order; a torn last line is skipped with a warning."""
        if not self._events.exists():
            return
        with self._events.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.endswith("\n"):
                    warnings.warn(
                        f"{self._events}:{lineno}: torn last line discarded", stacklevel=2
                    )
                    return
                yield json.loads(line)

    def records(self) -> list[TaskRecord]:
        """The finished task records, one per (task_id, epoch): the last one written wins."""
        latest: dict[tuple[str, int], TaskRecord] = {}
        for event in self.events():
            if event.get("event") == "task_finished":
                record = TaskRecord.model_validate(event["record"])
                latest[(record.task.id, record.epoch)] = record
        return list(latest.values())

    def finished_keys(self) -> set[tuple[str, int]]:
        """The (task_id, epoch) pairs that have a ``task_finished`` event."""
        return {
            (e["task_id"], e["epoch"]) for e in self.events() if e.get("event") == "task_finished"
        }

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
            from evalnb.errors import InputError

            raise InputError(target, None, None, "run folder already exists; remove it first")
        store = cls.create(root, meta)
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
            meta.status if meta.status != "running" else "complete", finished_at=meta.finished_at
        )
        return store.path

    def finalize(self, status: str = "complete", finished_at: str | None = None) -> None:
        """Write the parquet tables from the finished records and mark the run's status.

        ``finished_at`` defaults to now (an importer passes the recording's time).
        """
        from evalnb.store.tables import tables_from_records

        self.close()
        self.meta.status = status  # type: ignore[assignment]
        self.meta.finished_at = finished_at or utc_now()
        tables = tables_from_records(self.meta, self.records())
        for name, frame in tables.items():
            if name == "runs":
                continue
            tmp = self.path / f".{name}.parquet.tmp"
            frame.write_parquet(tmp)
            os.replace(tmp, self.path / f"{name}.parquet")
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
            warnings.warn(
                f"{self._events}: torn last line ({len(data) - keep} bytes) discarded",
                stacklevel=2,
            )
            with self._events.open("r+b") as fh:
                fh.truncate(keep)


def _read_meta(meta_path: Path) -> RunMeta:
    """``run.json`` as RunMeta; someone else's ``run.json`` is an InputError naming the file."""
    from pydantic import ValidationError

    from evalnb.errors import InputError, from_validation_error, read_input

    text = read_input(meta_path)
    try:
        return RunMeta.model_validate_json(text)
    except ValidationError as exc:
        error = from_validation_error(meta_path, None, exc)
        msg = f"not an evalnb run.json ({error.field}: {error.message})"
        raise InputError(meta_path, None, None, msg) from None


def is_run_folder(path: str | Path) -> bool:
    """True when ``path`` is an evalnb run folder (it has a ``run.json``).

    Example:
        >>> is_run_folder("/")
        False
    """
    return (Path(path) / META).is_file()
