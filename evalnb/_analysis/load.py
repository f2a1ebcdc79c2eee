"""``load()``: any supported input, as one :class:`~evalnb._analysis.runs.Runs`.

Each path (or glob) may be:

- an evalnb run folder (it has an evalnb ``run.json``),
- a ``report.json`` written by :func:`evalnb._present.report.write_report`,
- a file or folder of a foreign trace format that :mod:`evalnb._formats.detect` recognises
  (bashkit-eval and scripting-eval result JSON, bashkit mira run folders, llm-tool-test
  artifact folders and results.jsonl, Terminal-Bench run folders, onetool-mcp bench CSV,
  Inspect AI logs, Claude Code sessions, plain-text transcripts); readers' declared
  options go in ``options`` (``load("t/*.txt", options={"target": "notes"})``), and
  the files of a format that gathers (Claude Code, transcripts: a file is one task
  attempt) form their runs together, as ``evalnb import`` does,
- any other folder: stands for the run folders, recognised inputs and ``*.json`` files
  directly inside it,
- a URL (``s3://``, ``https://``, ``memory://``...): complete run folders read through
  fsspec (:mod:`evalnb._analysis.remote`).

Runs that lack tasks a sibling run of the same source and day has are marked
partial (:func:`~evalnb._analysis.completeness.mark_partial`), and so are imported
runs that lack tasks of their dataset (``dataset=`` a built-in name or a tasks file;
without it, a packaged dataset holding all their tasks:
:func:`~evalnb._analysis.completeness.mark_missing_from_dataset`).

A pattern that matches nothing, a folder with nothing loadable and a file of an
unknown format raise :class:`~evalnb.errors.InputError`; a recognised format evalnb
cannot read is named ("an Inspect AI .eval log: not supported yet"). The same file
reached twice (say by two overlapping globs) is read once. Two different inputs
holding the same ``run_id`` raise InputError (field ``run_id``): that nearly always
means one run reached by two routes (a run folder and the report.json that contains
it, or a result file and its imported folder), and keeping both would count every
task twice.

With ``strict=False`` none of these stop the load: every input that can be read is,
and each failure becomes a :class:`~evalnb._analysis.runs.LoadError` ``(path, message)``
in ``runs.errors`` (a warning says how many), so one bad file among thirty does not
stop an analysis.

Example:
    >>> load("/nonexistent/*.json")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: /nonexistent/*.json: no file or folder matches
    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     runs = load("/nonexistent/*.json", strict=False)
    >>> runs.errors[0].message
    '/nonexistent/*.json: no file or folder matches'
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl

from evalnb._analysis.completeness import mark_missing_from_dataset, mark_partial
from evalnb._analysis.folders import LOCAL
from evalnb._analysis.remote import expand_url, is_url, local_path, url_access
from evalnb._analysis.report_file import REPORT_FORMAT, runs_from_report
from evalnb._analysis.runs import (
    LoadError,
    Runs,
    read_run_folder,
    read_run_folders,
    runs_from_records,
    runs_from_tables,
)
from evalnb._formats.detect import Format, Run, check_options, read_gathered, recognise
from evalnb._formats.json_file import read_json
from evalnb._gc import paused_gc
from evalnb._store import RunStore, is_run_folder
from evalnb.errors import DamagedInputWarning, EvalnbError, InputError, warn


def load(
    *paths_or_globs: str | Path,
    strict: bool = True,
    dataset: str | Path | None = None,
    options: Mapping[str, str] | None = None,
) -> Runs:
    """Load run folders, result files and foreign trace formats together.

    Every analysis function takes the polars-backed :class:`Runs` this returns; for pandas
    frames, ``load(...).to_pandas()`` (the tables only: the analysis functions read polars).

    Parameters
    ----------
    *paths_or_globs : str or Path
        Run folders, result files, trace files, folders holding them, glob patterns or
        URLs, any number, read together.
    strict : bool, default True
        Raise the first input that cannot be read. With ``strict=False``, return what
        could be read, with the failures in ``.errors`` (and a warning).
    dataset : str or Path, optional
        The dataset the runs were made on: the attempts a run lacks from it are marked
        missing.
    options : Mapping[str, str], optional
        Readers' declared options (``{"target": "notes"}``); a name no reader declares
        is a ValueError.

    Returns
    -------
    Runs
        The tidy tables of every run read, in the order of the inputs.

    Raises
    ------
    InputError
        With ``strict=True``: an input that matches nothing or cannot be read, or a run
        found in two inputs.
    ValueError
        An option no reader declares.
    TypeError
        An argument of the wrong type.

    See Also
    --------
    summary : One row per run.

    Examples
    --------
    >>> import tempfile
    >>> from evalnb.records import RunMeta
    >>> from evalnb._store import RunStore
    >>> root = tempfile.mkdtemp()
    >>> _ = RunStore.create(root, RunMeta(run_id="r1", provider="p", model="m"))
    >>> load(root).runs.select("run_id", "provider", "model")
    shape: (1, 3)
    ┌────────┬──────────┬───────┐
    │ run_id ┆ provider ┆ model │
    │ ---    ┆ ---      ┆ ---   │
    │ str    ┆ str      ┆ str   │
    ╞════════╪══════════╪═══════╡
    │ r1     ┆ p        ┆ m     │
    └────────┴──────────┴───────┘
    """
    options = options or {}
    check_options(options)
    errors: list[LoadError] = []
    texts: dict[str, bytes] = {}  # the run.json files listing object storage read
    inputs = _expand(paths_or_globs, errors, strict, texts)
    parts, failed = _read_all(inputs, options, texts)  # inputs gain the formats read together
    owner: dict[str, int] = {}  # run_id -> the input it is read from
    for run_id, position in sorted(
        ((run_id, pos) for _, origin in parts for run_id, pos in origin.items()),
        key=lambda item: item[1],
    ):
        if owner.setdefault(run_id, position) != position:
            msg = f"run {run_id!r} is also in {inputs[owner[run_id]]}; load only one of them"
            failed.append((position, InputError(inputs[position], None, "run_id", msg)))
    failed.sort(key=lambda failure: failure[0])
    if strict and failed:
        raise failed[0][1]
    refused = {position for position, _ in failed}
    errors += [LoadError(str(inputs[position]), str(exc)) for position, exc in failed]
    kept = [
        runs.filter(~pl.col("run_id").is_in([r for r, pos in origin.items() if pos in refused]))
        if refused & set(origin.values())
        else runs
        for runs, origin in parts
    ]
    order = {run_id: pos for run_id, pos in owner.items() if pos not in refused}
    runs = mark_missing_from_dataset(mark_partial(_in_order(Runs.concat(kept), order)), dataset)
    runs.errors = errors
    if errors:
        warn(
            f"{len(errors)} input(s) could not be read (see .errors); first: {errors[0].message}",
            DamagedInputWarning,
        )
    return runs


def _expand(
    items: tuple[str | Path, ...], errors: list[LoadError], strict: bool, texts: dict[str, bytes]
) -> list[Path | str]:
    """:func:`expand_inputs` of each item, failures kept in ``errors`` unless ``strict``."""
    if strict:
        return expand_inputs(*items, texts=texts)
    out: dict[Path | str, None] = {}
    for item in items:
        try:
            out.update(dict.fromkeys(expand_inputs(item, texts=texts)))
        except EvalnbError as exc:
            errors.append(LoadError(str(item), str(exc)))
    return list(out)


def _read_all(
    inputs: list[Path | str], options: Mapping[str, str], texts: Mapping[str, bytes]
) -> tuple[list[tuple[Runs, dict[str, int]]], list[tuple[int, EvalnbError]]]:
    """Read every input: the run folders together, one batch per filesystem
    (:func:`~evalnb._analysis.runs.read_run_folders`; ``texts``: the ``run.json`` files
    read while listing object storage, by URL), the rest one by one
    (:func:`read_input`), the runs of a format that gathers formed together at the end
    (each such format then appended to ``inputs``, by name). Gives each part read with
    the input each of its runs came from (by position), and the inputs that failed."""
    batches: dict[str, list[int]] = {}
    alone: list[int] = []
    for position, item in enumerate(inputs):
        if is_url(item):
            parts = urlsplit(str(item))
            batches.setdefault(f"{parts.scheme}://{parts.netloc}", []).append(position)
        elif is_run_folder(item):
            batches.setdefault("", []).append(position)
        else:
            alone.append(position)
    read: list[tuple[Runs, dict[str, int]]] = []
    failed: list[tuple[int, EvalnbError]] = []
    for filesystem, positions in batches.items():
        access = url_access(str(inputs[positions[0]]), texts) if filesystem else LOCAL
        found = read_run_folders([inputs[p] for p in positions], access)
        read.append((found.runs, {r: positions[i] for r, i in found.positions.items()}))
        failed += [(positions[i], exc) for i, exc in found.failed]
        alone += [positions[i] for i in found.foreign]
    gathered: dict[Format, list[Run]] = {}
    readers = [(p, partial(read_input, inputs[p], gathered, options)) for p in sorted(alone)]
    for position, reader in readers:
        try:
            part = reader()
        except EvalnbError as exc:
            failed.append((position, exc))
            continue
        read.append((part, dict.fromkeys(part.runs.get_column("run_id").to_list(), position)))
    for fmt, runs in gathered.items():
        position = len(inputs)
        inputs.append(fmt.name)
        try:
            part = _formed(fmt, runs)
        except EvalnbError as exc:
            failed.append((position, exc))
            continue
        read.append((part, dict.fromkeys(part.runs.get_column("run_id").to_list(), position)))
    return read, failed


def _in_order(runs: Runs, order: dict[str, int]) -> Runs:
    """``runs`` with its runs in the order of the inputs they came from (``order``: run_id
    -> position; the runs of one input keep their order)."""
    position = pl.col("run_id").replace_strict(order, default=None, return_dtype=pl.Int64)
    if runs.runs.select(position).to_series().is_sorted():
        return runs
    runs.set_table("runs", runs.runs.sort(position, maintain_order=True))
    return runs


def expand_inputs(
    *paths_or_globs: str | Path, texts: dict[str, bytes] | None = None
) -> list[Path | str]:
    """Expand globs and plain folders into the inputs to read, each once, in order.

    A URL stands for the run folders it names (:func:`~evalnb._analysis.remote.expand_url`,
    which puts the ``run.json`` files it reads in ``texts`` when given); a ``file://`` URL
    is its local path.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "b.json").write_text("{}"); _ = (root / "a.json").write_text("{}")
        >>> [p.name for p in expand_inputs(root, root / "a.json")]
        ['a.json', 'b.json']
    """
    out: dict[Path | str, None] = {}
    for item in paths_or_globs:
        item = local_path(str(item)) or item if is_url(item) else item
        if is_url(item):
            out.update(dict.fromkeys(expand_url(str(item), texts)))
            continue
        matches = sorted(glob.glob(str(item))) or ([str(item)] if Path(item).exists() else [])
        if not matches:
            raise InputError(item, None, None, "no file or folder matches")
        for match in map(Path, matches):
            if match.is_dir() and not _is_run(match):
                inside = _inside(match)
                if not inside:
                    msg = "no run folders, recognised trace files or .json files in this folder"
                    raise InputError(match, None, None, msg)
                out.update(dict.fromkeys(inside))
            else:
                out[match.resolve()] = None
    return list(out)


def _inside(folder: Path) -> list[Path]:
    """The run folders, recognised inputs and ``.json`` files directly inside ``folder``,
    by name, resolved (the folder once: each entry is resolved only when a symlink)."""
    base = folder.resolve()
    with os.scandir(folder) as entries:
        found = sorted(
            (entry.name, entry)
            for entry in entries
            if (entry.is_dir() and _is_run(entry.path))
            or (entry.is_file() and _loadable_file(Path(entry.path)))
        )
    return [
        Path(entry.path).resolve() if entry.is_symlink() else base / name for name, entry in found
    ]


def read_input(
    path: str | Path,
    gathered: dict[Format, list[Run]] | None = None,
    options: Mapping[str, str] | None = None,
) -> Runs:
    """Read one input: a recognised format, an evalnb run folder, a report.json or a URL.

    The runs of a format that gathers go to ``gathered`` (by format) to be formed
    together (:func:`~evalnb._formats.detect.read_gathered`), and nothing is returned for
    them; without ``gathered`` they are formed at once, from this input alone.

    Example:
        >>> read_input("/")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: /: not a run folder or a folder of a recognised format
    """
    if is_url(path):
        found = read_run_folders([path], url_access(str(path)))
        if found.failed:
            raise found.failed[0][1]
        return found.runs
    path = Path(path)
    if _evalnb_run(path) is not None:
        return read_run_folder(path)
    fmt = recognise(path)
    if fmt is not None:
        with paused_gc():  # its records, then its tables: many small objects, all alive
            return _read_format(fmt, path, gathered, options)
    if path.is_dir():
        if is_run_folder(path):
            return read_run_folder(path)
        raise InputError(path, None, None, "not a run folder or a folder of a recognised format")
    _, doc = read_json(path)
    if isinstance(doc, dict) and doc.get("format") == REPORT_FORMAT:
        return runs_from_report(path, doc)
    keys = ", ".join(sorted(doc)[:8]) if isinstance(doc, dict) else type(doc).__name__
    raise InputError(
        path,
        None,
        None,
        f"unknown format (JSON with {keys}): expected an evalnb report.json or a format "
        "evalnb reads (see the README's formats table)",
    )


def _read_format(
    fmt: Format,
    path: Path,
    gathered: dict[Format, list[Run]] | None,
    options: Mapping[str, str] | None,
) -> Runs:
    """:func:`read_input` of a recognised format: its records are freed on return, before
    the garbage collector resumes (it would otherwise walk them all once more)."""
    if fmt.tables is not None:  # read column by column, no record per attempt
        return Runs.concat([runs_from_tables(tables) for _, tables in fmt.tables(path)])
    read = fmt.read_one(path, options or {})
    if gathered is None or fmt.gather is None:
        return _formed(fmt, read)
    gathered.setdefault(fmt, []).extend(read)
    return Runs.empty()


def _formed(fmt: Format, read: list[Run]) -> Runs:
    """The runs read from inputs of ``fmt``, gathered when it gathers, as tables."""
    return Runs.concat([runs_from_records(meta, recs) for meta, recs in read_gathered(fmt, read)])


def _evalnb_run(path: Path) -> RunStore | None:
    """The run folder at ``path`` when its ``run.json`` is evalnb's, else None.

    Such a folder is no foreign format (``RunMeta`` allows no other keys, so an
    llm-tool-test ``run.json`` is not one), so the formats need not be tried; a damaged
    ``run.json`` is left for :func:`read_input`'s other routes to name.
    """
    if not is_run_folder(path):
        return None
    try:
        return RunStore.open(path)
    except EvalnbError:
        return None


def _is_run(path: str | Path) -> bool:
    """A folder :func:`read_input` reads as runs: a run folder (its ``run.json`` found
    first: one look per folder of thousands) or a folder of a recognised format."""
    return is_run_folder(path) or (os.path.isdir(path) and recognise(path) is not None)


def _loadable_file(path: Path) -> bool:
    if not path.is_file():
        return False
    if path.suffix == ".json":
        return True
    fmt = recognise(path)
    return fmt is not None and fmt.read is not None
