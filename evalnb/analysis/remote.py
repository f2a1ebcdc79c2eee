"""Run folders at a URL (object storage, HTTP, any fsspec filesystem), read through fsspec.

:func:`evalnb.load` reads an input that starts with a scheme (``s3://``, ``gs://``,
``az://``, ``https://``, ``memory://``, ``file://``...) with this module: typically the
merged parquet of a sharded run (``evalnb merge``) copied to a bucket. The URL names

- a run folder (it holds ``run.json``),
- a folder whose direct subfolders are run folders, or
- a glob of either (``s3://bucket/runs/*``).

Only complete runs are read from a URL: their tables are the parquet files (a run in
progress has only ``events.jsonl``; load it from its folder), also as an older evalnb
wrote them (see :func:`evalnb.analysis.runs.runs_from_scans`); a table lacking a key
column is an error. Each table's file is fetched whole when the run is loaded and
decoded lazily, column by column, as with a local folder. fsspec is the ``remote``
extra (``pip install 'evalnb[remote]'``); a scheme's own package (``s3fs``, ``gcsfs``,
``adlfs``) is named when it is missing.

Example:
    >>> is_url("s3://bucket/runs"), is_url("runs/r1"), is_url("C:/runs")
    (True, False, False)
"""

from __future__ import annotations

import glob
import re
from typing import Any

import polars as pl
from pydantic import ValidationError

from evalnb.analysis.runs import Runs, lacking_keys, runs_from_scans
from evalnb.errors import InputError, SetupError, from_validation_error
from evalnb.extras import require
from evalnb.records import RunMeta
from evalnb.store.tables import SCHEMAS, TABLES

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")


def is_url(item: object) -> bool:
    """True when ``item`` is a string that starts with a URL scheme (``s3://``...)."""
    return isinstance(item, str) and _SCHEME.match(item) is not None


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path in it (SetupError naming what is missing)."""
    fsspec = require("fsspec", "remote")
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:  # the scheme's own package (s3fs, gcsfs...) is missing
        raise SetupError(f"{url}: {exc}") from None
    except ValueError as exc:  # an unknown scheme
        raise InputError(url, None, None, str(exc)) from None


def expand_url(url: str) -> list[str]:
    """The run folders ``url`` names (see the module docstring), as URLs, in order.

    Example:
        >>> import fsspec
        >>> fs = fsspec.filesystem("memory")
        >>> fs.pipe({"/doc/runs/a/run.json": b"{}", "/doc/runs/b/run.json": b"{}"})
        >>> expand_url("memory://doc/runs")
        ['memory:///doc/runs/a', 'memory:///doc/runs/b']
    """
    fs, root = _filesystem(url)
    root = root.rstrip("/")
    matches = sorted(fs.glob(root)) if glob.has_magic(root) else [root] if fs.exists(root) else []
    if not matches:
        raise InputError(url, None, None, "no file or folder matches")
    out: list[str] = []
    for match in matches:
        if fs.isfile(f"{match}/run.json"):
            out.append(match)
            continue
        inside = (
            sorted(p.rstrip("/") for p in fs.ls(match, detail=False) if fs.isdir(p))
            if fs.isdir(match)
            else []
        )
        runs = [p for p in inside if fs.isfile(f"{p}/run.json")]
        if not runs:
            msg = "not a run folder (run.json and parquet tables) or a folder of run folders"
            raise InputError(fs.unstrip_protocol(match), None, None, msg)
        out += runs
    return [fs.unstrip_protocol(p) for p in out]


def read_run_url(url: str) -> Runs:
    """The complete run folder at ``url`` (see the module docstring).

    Example:
        >>> import fsspec
        >>> fsspec.filesystem("memory").pipe("/doc/bad/run.json", b'{"run_id": 1}')
        >>> read_run_url("memory://doc/bad")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: memory:///doc/bad/run.json: run_id: Input should be a valid string
    """
    fs, root = _filesystem(url)
    root = root.rstrip("/")
    meta_url = fs.unstrip_protocol(f"{root}/run.json")
    try:
        meta = RunMeta.model_validate_json(fs.cat_file(f"{root}/run.json"))
    except ValidationError as exc:
        raise from_validation_error(meta_url, None, exc) from None
    if meta.status != "complete":
        raise InputError(
            meta_url,
            None,
            "status",
            f"the run is {meta.status!r}: only complete runs (parquet tables) are read from a "
            "URL; load a run in progress from its folder",
        )
    scans: dict[str, pl.LazyFrame] = {}
    for name in TABLES[1:]:
        path = f"{root}/{name}.parquet"
        if name == "tool_invocations" and not fs.exists(path):
            scans[name] = pl.LazyFrame(schema=SCHEMAS[name])
            continue
        if not fs.exists(path):
            raise InputError(fs.unstrip_protocol(path), None, None, "missing")
        try:
            scan = pl.scan_parquet(fs.cat_file(path))
            columns = scan.collect_schema()
        except pl.exceptions.PolarsError as exc:
            raise InputError(fs.unstrip_protocol(path), None, None, f"unreadable: {exc}") from None
        lacking = lacking_keys(columns)
        if lacking:
            msg = f"lacks key columns {lacking}"
            raise InputError(fs.unstrip_protocol(path), None, None, msg)
        scans[name] = scan
    return runs_from_scans(meta, scans)
