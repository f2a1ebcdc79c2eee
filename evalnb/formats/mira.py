"""Read bashkit "mira" run folders: ``meta.json`` + ``report.json``.

The format supported (no sample was available; this is what the harness is known to
write):

- ``meta.json``: ``provider``, ``model``, ``timestamp`` (UTC, ISO 8601, read as the
  end of the run like the pre-mira file's), ``max_turns``; other keys are ignored.
- ``report.json``: ``results`` and ``summary`` with the pre-mira shape (see
  :mod:`evalnb.formats.bashkit_eval`), except that a result's ``score.results``
  (the per-check verdicts) may be absent.

The run id is the folder name. Everything else (partial runs, category renames,
per-call rows with null tokens) works as for the pre-mira file.

Missing check verdicts are never invented. A task without them has no ``checks``
rows, ``checks_available`` False in the ``tasks`` table, and ``passed`` decided by
``score == max_score`` (every weighted check passed; a failed zero-weight check
cannot be seen). The ``runs`` table gets a ``checks_available`` column (True only
when every task has its verdicts), also kept in ``RunMeta.settings``.

Example:
    >>> is_mira_folder("/")
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evalnb.formats.bashkit_eval import (
    CATEGORY_RENAMES,
    UNAVAILABLE,
    ResultsDoc,
    read_json,
    records_from_results,
    run_status,
    run_times,
    validate,
)
from evalnb.records import RunMeta, RunSettings, TaskRecord

META = "meta.json"
REPORT = "report.json"
SOURCE = "bashkit-mira"


class MiraMeta(BaseModel):
    """``meta.json``."""

    model_config = ConfigDict(strict=True)

    provider: str
    model: str
    timestamp: str
    max_turns: int


def is_mira_folder(path: str | Path) -> bool:
    """True when ``path`` is a folder holding ``meta.json`` and ``report.json``.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "meta.json").write_text("{}"); _ = (d / "report.json").write_text("{}")
        >>> is_mira_folder(d)
        True
    """
    path = Path(path)
    return (path / META).is_file() and (path / REPORT).is_file()


def read_mira(
    path: str | Path, rename_categories: Mapping[str, str] = CATEGORY_RENAMES
) -> tuple[RunMeta, list[TaskRecord]]:
    """Read one mira run folder as ``(RunMeta, task records)``.

    Example:
        >>> read_mira("no-such-folder")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-folder/meta.json: file not found
    """
    path = Path(path)
    meta_text, meta_doc = read_json(path / META)
    info = validate(path / META, meta_text, meta_doc, MiraMeta)
    report = path / REPORT
    text, doc = read_json(report)
    parsed = validate(report, text, doc, ResultsDoc)
    records = records_from_results(report, text, parsed, rename_categories, checks_required=False)
    checks_available = all(result.score.results is not None for result in parsed.results)
    for record, result in zip(records, parsed.results, strict=True):
        record.extra["checks_available"] = result.score.results is not None
    started, finished = run_times(path / META, meta_text, info.timestamp, records)
    meta = RunMeta(
        run_id=path.name,
        provider=info.provider,
        model=info.model,
        source=SOURCE,
        max_turns=info.max_turns,
        started_at=started,
        finished_at=finished,
        status=run_status(report, parsed, records),
        task_count=len(records),
        settings=RunSettings(
            source_files=[path.name], unavailable=UNAVAILABLE, checks_available=checks_available
        ),
    )
    return meta, records
