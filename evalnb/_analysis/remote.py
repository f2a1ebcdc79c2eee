"""Run folders at a URL (object storage, HTTP, any fsspec filesystem).

:func:`evalnb.load` reads an input that starts with a scheme (``s3://``, ``gs://``,
``az://``, ``https://``, ``memory://``...) with this module: typically the merged parquet
of a sharded run (``evalnb merge``) copied to a bucket. The URL names

- a run folder (it holds ``run.json``),
- a folder whose direct subfolders are run folders, or
- a glob of either (``s3://bucket/runs/*``).

Only complete runs are read from a URL: their tables are the parquet files (a run in
progress has only ``events.jsonl``; load it from its folder); they are checked as a local
folder's are (:mod:`evalnb._analysis.folders`), but a damaged one is refused, not rebuilt.

Object storage (:data:`OBJECT_STORES`) is read by polars itself, nothing else: the run
folders are found by globbing their ``run.json`` files, which the same polars call reads
(``pl.scan_lines``: one listing, each file fetched once), and the tables are scanned
lazily. Only the tasks files are checked when the runs are loaded (the tasks table is
read by every metric; held in memory, it is read in one scan that polars checks against
the first file's schema, and the footers are read only to name a damaged file); each
other table's files are checked when the table is first used, so a summary fetches
nothing but ``run.json`` and ``tasks.parquet``, and a damaged file of another table
raises InputError naming it only when that table is used (with ``strict=False`` too: its
run is not left out). Credentials and endpoints come from the
environment as for any client of that store (``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL``...; a server reached over plain HTTP also needs
``AWS_ALLOW_HTTP=true``). Other filesystems (``https://``, ``memory://``) are listed and
read through fsspec (the ``remote`` extra: ``pip install 'evalnb[remote]'``; a scheme's
own package is named when it is missing), and hand polars each file's bytes, fetched
once, when the run is loaded. A ``file://`` URL is a local folder.

Example:
    >>> is_url("s3://bucket/runs"), is_url("runs/r1"), is_url("C:/runs")
    (True, False, False)
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Mapping
from functools import cache, partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import polars as pl
from pydantic import ValidationError

from evalnb._analysis.folders import Access
from evalnb._extras import require
from evalnb.errors import InputError, SetupError, from_validation_error
from evalnb.records import RunMeta

OBJECT_STORES: Final = ("s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "abfs", "abfss", "adl")
"""URL schemes polars reads itself (object storage), with projection and predicate
pushdown; other schemes are read through fsspec."""

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")


def is_url(item: object) -> bool:
    """True when ``item`` is a string that starts with a URL scheme (``s3://``...)."""
    return isinstance(item, str) and _SCHEME.match(item) is not None


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path in it (SetupError naming what is missing)."""
    fsspec = require("fsspec", "remote")
    try:
        found: tuple[Any, str] = fsspec.core.url_to_fs(url)
        return found
    except ImportError as exc:  # the scheme's own package (s3fs, gcsfs...) is missing
        raise SetupError(f"{url}: {exc}") from None
    except ValueError as exc:  # an unknown scheme
        raise InputError(url, None, None, str(exc)) from None


def expand_url(url: str, texts: dict[str, bytes] | None = None) -> list[str]:
    """The run folders ``url`` names (see the module docstring), as URLs, in order.

    In object storage the listing reads their ``run.json`` files too: they go to
    ``texts`` (by URL) when given, for :func:`url_access` to use rather than fetch again.

    Example:
        >>> import fsspec
        >>> fs = fsspec.filesystem("memory")
        >>> fs.pipe({"/doc/runs/a/run.json": b"{}", "/doc/runs/b/run.json": b"{}"})
        >>> expand_url("memory://doc/runs")
        ['memory:///doc/runs/a', 'memory:///doc/runs/b']
    """
    if urlsplit(url).scheme in OBJECT_STORES:
        return _stored_runs(url, {} if texts is None else texts)
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
        runs = sorted(p.rsplit("/", 1)[0] for p in fs.glob(f"{match}/*/run.json"))  # one listing
        if not runs:
            raise InputError(fs.unstrip_protocol(match), None, None, _NO_RUN)
        out += runs
    return [fs.unstrip_protocol(p) for p in out]


_NO_RUN: Final = "not a run folder (run.json and parquet tables) or a folder of run folders"


def _stored_runs(url: str, texts: dict[str, bytes]) -> list[str]:
    """The run folders at an object-storage URL, found by polars: those the URL (or its
    glob) names that hold a ``run.json``, else their subfolders that do, in order. The
    ``run.json`` files are read by the same listing, each once: they go to ``texts``, by
    URL. One listing finds both (``**``: any depth; a ``run.json`` deeper down, in no run
    folder evalnb writes, is read and left out), without first asking for the URL's own
    ``run.json``, which a folder of runs does not have."""
    root = url.rstrip("/")
    found = _run_jsons(f"{root}/**/run.json")
    depth = root.count("/")
    direct = {file: text for file, text in found.items() if file.count("/") == depth + 1}
    tops = {file.rsplit("/", 1)[0] for file in direct}  # what the URL names that is a run
    nested = {file: text for file, text in found.items() if file.count("/") == depth + 2}
    kept = {**direct, **{f: t for f, t in nested.items() if f.rsplit("/", 2)[0] not in tops}}
    if not kept:
        raise InputError(url, None, None, f"no run folders here: {_NO_RUN}")
    texts.update(kept)
    # each match of the URL in order, then its runs (a match that is a run is that run)
    return sorted(
        (file.rsplit("/", 1)[0] for file in kept),
        key=lambda f: (f if f in tops else f.rsplit("/", 1)[0], f),
    )


def _run_jsons(pattern: str) -> dict[str, bytes]:
    """The ``run.json`` files ``pattern`` (a URL, perhaps a glob) names, read by polars in
    one call (``pl.scan_lines``), by URL: none when it names nothing. Each file's lines
    are joined again (JSON's meaning does not depend on how its whitespace is split)."""
    try:
        found = (
            pl.scan_lines(pattern, include_file_paths="file")
            .group_by("file", maintain_order=True)
            .agg(pl.col("line").str.join("\n"))
            .collect()
        )
    except FileNotFoundError:
        return {}
    return {file: text.encode() for file, text in found.iter_rows()}


def local_path(url: str) -> Path | None:
    """The local path a ``file://`` URL names (None for any other URL).

    Example:
        >>> local_path("file:///data/runs%201"), local_path("s3://bucket/runs")
        (PosixPath('/data/runs 1'), None)
    """
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


def url_access(url: str, texts: Mapping[str, bytes] | None = None) -> Access:
    """How to read the run folders :func:`expand_url` gives for ``url`` (see the module
    docstring); ``texts``: the ``run.json`` files :func:`expand_url` read, by URL (others
    are fetched).

    Example:
        >>> url_access("memory://doc/runs").local
        False
    """
    if urlsplit(url).scheme in OBJECT_STORES:
        return Access(
            meta=lambda folder: read_meta(folder, partial(_stored_text, texts or {})),
            parquet=lambda file: file,
            threads=16,
            local=False,
            checked=("tasks",),
            footers=False,
        )
    fs, _ = _filesystem(url)

    @cache
    def fetched(file: str) -> bytes:
        return bytes(fs.cat_file(file))

    return Access(
        meta=lambda folder: read_meta(folder, fetched),
        parquet=fetched,
        threads=16,
        local=False,
    )


def _stored_text(texts: Mapping[str, bytes], file: str) -> bytes:
    """A ``run.json`` in object storage: from ``texts`` when the listing read it, else read
    by polars (b"" when it is missing or empty)."""
    return texts[file] if file in texts else _run_jsons(file).get(file, b"")


def read_meta(folder: str, read: Callable[[str], bytes]) -> RunMeta:
    """The ``run.json`` of the run folder at URL ``folder``, ``read`` fetching its bytes.

    Example:
        >>> import fsspec
        >>> fsspec.filesystem("memory").pipe("/doc/bad/run.json", b'{"run_id": 1}')
        >>> read_meta("memory:///doc/bad", lambda url: fsspec.open(url).open().read())
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: memory:///doc/bad/run.json: run_id: Input should be a valid string
    """
    url = f"{folder}/run.json"
    try:
        return RunMeta.model_validate_json(read(url))
    except ValidationError as exc:
        raise from_validation_error(url, None, exc) from None
