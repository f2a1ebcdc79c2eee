"""Read back a ``report.json`` written by :func:`evalnb._present.report.write_report`.

The document is ``{"format": "evalnb-report", "version": 1, "summary": [...],
"by_category": [...], "tables": {"runs": [...], "tasks": [...], ...}}``; its six tidy
tables are what :func:`runs_from_report` rebuilds.

Example:
    >>> REPORT_FORMAT, REPORT_VERSION
    ('evalnb-report', 1)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._store.tables import SCHEMAS, TABLES
from evalnb.errors import InputError

REPORT_FORMAT = "evalnb-report"
REPORT_VERSION = 1


def runs_from_report(path: str | Path, doc: dict[str, Any]) -> Runs:
    """Rebuild :class:`Runs` from a parsed report.json (its ``tables``).

    Example:
        >>> runs_from_report("r.json", {"format": "evalnb-report", "version": 1})
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: r.json: tables: missing or not an object
    """
    if doc.get("version") != REPORT_VERSION:
        msg = f"unsupported report version {doc.get('version')!r} (expected {REPORT_VERSION})"
        raise InputError(path, None, "version", msg)
    tables = doc.get("tables")
    if not isinstance(tables, dict):
        raise InputError(path, None, "tables", "missing or not an object")
    frames = {}
    for name in TABLES:
        rows = tables.get(name)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise InputError(path, None, f"tables.{name}", "missing or not a list of objects")
        frames[name] = _frame(path, name, rows)
    return Runs.concat([Runs(*(frames[name] for name in TABLES))])


def _frame(path: str | Path, name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    schema = SCHEMAS[name]
    if not rows:
        return pl.DataFrame(schema=schema)
    present = {k for row in rows for k in row}
    try:
        return pl.DataFrame(
            rows,
            schema_overrides={c: schema[c] for c in present & set(schema)},
            infer_schema_length=None,
        )
    except (TypeError, ValueError, pl.exceptions.PolarsError) as exc:
        raise InputError(path, None, f"tables.{name}", f"wrong value types: {exc}") from None
