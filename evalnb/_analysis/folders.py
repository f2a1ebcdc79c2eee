"""The stored tables of complete run folders, any number of them, checked and scanned as one.

However many folders are read, each table is one ``pl.scan_parquet`` over the list of
their files (every stored row carries its ``run_id``), so a query over 1,000 folders is
one scan, not 1,000 scans joined. Each folder's ``run.json`` is read once, into one small
``runs`` frame. Each file's schema is read from its footer's key-value metadata (the
Arrow schema polars and pyarrow write there) and each distinct schema, usually one per
table, is checked once:

- a stored table lacking a key column (``run_id``, ``model``, ``task_id``, ``epoch``) or
  any other column of its schema (run-folder format 1 writes them all:
  :data:`~evalnb.records.run.RUN_FORMAT`), or holding a column whose type does not read as
  its schema's (:func:`readable_as`: ``passed`` of strings), is damaged, and so is a file
  that is missing or unreadable;
- a complete run whose tasks table holds another number of attempts than its
  ``run.json`` says (``task_count``) is damaged too: emptied, cut short, or a copy whose
  rows name another run.

:func:`read_stored` sorts the folders out and scans the intact ones (see
:class:`Stored`); :func:`evalnb._analysis.runs.read_run_folders` rebuilds the damaged
ones from their events or refuses them, and reads the others.

The tasks table, one row per attempt and read by every metric, is read into memory when
the intact folders hold at most :data:`HELD_ATTEMPTS` attempts in all: polars pays about
0.1-0.2 ms per file for every scan however small the file, so many small folders are
read once rather than once per metric. Larger collections stay lazy, and the metrics
aggregate their scans in batches.

Folders at a URL are reached through an :class:`Access` (:mod:`evalnb._analysis.remote`).

Example:
    >>> import tempfile
    >>> from evalnb.records import RunMeta
    >>> from evalnb._store import RunStore
    >>> meta = RunMeta(run_id="r1", provider="p", model="m", status="complete", task_count=0)
    >>> folder = RunStore.write_records(tempfile.mkdtemp(), meta, [])
    >>> stored = read_stored([folder])
    >>> stored.runs.get_column("run_id").to_list(), stored.tables["tasks"].height
    (['r1'], 0)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import Any, Final, TypeVar

import polars as pl
from polars.datatypes import DataType, DataTypeClass
from polars.io.plugins import register_io_source
from pydantic import ValidationError

from evalnb._store.folder import META, RunStore
from evalnb._store.tables import (
    KEYS,
    RUN_STRIDE,
    SCHEMAS,
    TABLES,
    conform,
    run_frames,
)
from evalnb.errors import EvalnbError, InputError
from evalnb.records import RunMeta

PolarsDataType = DataType | DataTypeClass
Item = TypeVar("Item")
Result = TypeVar("Result")

HELD_ATTEMPTS: Final = 1_000_000
"""Up to this many attempts in all, the tasks table is read into memory (see the module
docstring): about 0.4 GiB at the widest rows of the bench's data."""
HELD_BATCH: Final = 100_000
"""A tasks table held in memory is read this many attempts at a time (a few more when one
folder holds more), each batch put in one chunk at once: polars reads each file into a
chunk of its own, and 10,000 chunks of 59 rows take several times their rows' memory and
slow every later operation on them. In batches, the table is in at most
``HELD_ATTEMPTS / HELD_BATCH`` chunks (per stored schema), on which the metrics run as
fast as on one, and the files' chunks are never all in memory at once."""
_UNREADABLE: Final = (OSError, pl.exceptions.PolarsError)
"""What polars raises for a file it cannot read (missing, cut, damaged behind its footer)."""


@dataclass(frozen=True)
class Access:
    """How the files of some run folders are reached: on a local disk or at a URL.

    ``meta(folder)`` reads its ``run.json`` (None: not an evalnb one); ``parquet(file)``
    is what polars scans (a
    path, a URL polars reaches itself, or the file's bytes); ``threads``: how many
    files are read at once (1: one after another, in the calling thread); ``local``:
    whether the folders' files are on a local disk, so that their footers are read
    directly (:func:`read_footer`) and their events can be read (to rebuild a damaged
    run or read one in progress); ``checked``: the tables whose files are checked when the
    folders are read, the others' when each is first scanned (:func:`checked_on_use`);
    ``footers``: whether the checked files' footers are read before their tables (False:
    where each request costs a round trip, tasks files held in memory are read at once
    against the first one's schema, and their footers only when that read fails:
    :func:`_unchecked_tasks`).
    """

    meta: Callable[[str], RunMeta | None]
    parquet: Callable[[str], str | bytes]
    threads: int
    local: bool
    checked: tuple[str, ...] = TABLES[1:]
    footers: bool = True


def _local_meta(folder: str) -> RunMeta | None:
    try:  # the usual case, quickly; RunStore.open names what is wrong otherwise
        with open(f"{folder}/{META}", "rb") as fh:
            return RunMeta.model_validate_json(fh.read())
    except (OSError, ValidationError):
        pass
    try:
        return RunStore.open(folder).meta
    except InputError as exc:
        if "not an evalnb run.json" in exc.message:
            return None  # another harness's run.json: for the format readers
        raise


LOCAL: Final = Access(meta=_local_meta, parquet=str, threads=1, local=True)
"""Run folders on a local disk, read in the calling thread: a local read takes
microseconds, less than handing it to a thread pool costs."""


@dataclass
class Folder:
    """One run folder: its position among those given, path, ``run.json``, its table
    files and their schemas (those present, by table: files of one schema share one
    object), the bytes of those read whole (a local tasks file whose rows are held in
    memory, from its check until its rows are read) and, when damaged, the file at fault
    and why."""

    index: int
    path: str
    meta: RunMeta
    files: dict[str, str] = field(default_factory=dict)
    schemas: dict[str, pl.Schema] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)
    problem: tuple[str, str] | None = None

    def damage(self, file: str, reason: str) -> None:
        """Record the first damage found."""
        self.problem = self.problem or (file, reason)


@dataclass
class Stored:
    """The folders :func:`read_stored` sorted out.

    ``runs`` and ``tables``: the intact folders' ``runs`` frame (``run_key`` 0, 1, ... in
    the order given) and their tables (``attempt_key`` unique among them; tasks a
    DataFrame when held in memory, the others scans); ``intact`` those folders.
    ``damaged``: with their ``problem``;
    ``live``: runs not complete; ``failed``: folders whose ``run.json`` could not be read,
    by position; ``foreign``: positions whose ``run.json`` is another harness's.
    """

    runs: pl.DataFrame
    tables: dict[str, pl.DataFrame | pl.LazyFrame]
    intact: list[Folder] = field(default_factory=list)
    damaged: list[Folder] = field(default_factory=list)
    live: list[Folder] = field(default_factory=list)
    failed: list[tuple[int, EvalnbError]] = field(default_factory=list)
    foreign: list[int] = field(default_factory=list)


def read_stored(folders: Sequence[str | Path], access: Access = LOCAL) -> Stored:
    """Read the ``run.json`` of ``folders``, check their tables and scan the intact ones.

    Two folders of one ``run_id``: the later one fails (InputError, field ``run_id``).

    Example:
        >>> read_stored([]).runs.height
        0
    """
    found = Stored(pl.DataFrame(schema=SCHEMAS["runs"]), {})
    paths = [str(f).rstrip("/") for f in folders]
    complete: list[Folder] = []
    seen: dict[str, str] = {}
    for index, (path, meta) in enumerate(zip(paths, _metas(paths, access), strict=True)):
        if isinstance(meta, EvalnbError):
            found.failed.append((index, meta))
        elif meta is None:
            found.foreign.append(index)
        elif meta.run_id in seen:
            msg = f"run {meta.run_id!r} is also in {seen[meta.run_id]}; load only one of them"
            found.failed.append((index, InputError(path, None, "run_id", msg)))
        else:
            seen[meta.run_id] = path
            folder = Folder(index, path, meta)
            (complete if meta.status == "complete" else found.live).append(folder)
    read = None if access.footers else _unchecked_tasks(complete, access)
    if read is None:
        held, counts, intact = _checked_tasks(complete, access)
    else:
        (held, counts), intact = read, complete
    for folder in intact:
        planned, stored = folder.meta.task_count, counts.get(folder.meta.run_id, 0)
        if folder.meta.source == "evalnb" and planned is not None and stored != planned:
            reason = f"holds {stored} attempts where run.json's task_count is {planned}"
            folder.damage(folder.files["tasks"], reason)
    found.intact = [f for f in intact if not f.problem]
    found.damaged = [f for f in complete if f.problem]
    found.runs = run_frames(
        [f.meta for f in found.intact], [counts.get(f.meta.run_id, 0) for f in found.intact]
    )
    found.tables["tasks"] = _keyed_tasks(found.intact, counts, held, access)
    for name in TABLES[2:]:
        found.tables[name] = (
            _keyed(_scan(found.intact, name, access), found.runs)
            if name in access.checked
            else checked_on_use(found.intact, name, access, found.runs)
        )
    return found


def _checked_tasks(
    folders: list[Folder], access: Access
) -> tuple[dict[int, pl.DataFrame] | None, dict[str, int], list[Folder]]:
    """:func:`_tasks` of the folders whose checked tables (``access.checked``) are intact,
    and those folders.

    The tasks files are checked first; polars then reads them in a thread of its own
    (it releases the GIL) while this one checks the other tables' files, so the checks
    (in Python, one core) and the read (polars' threads) overlap. Should a folder be found
    damaged by those checks, that read is not used and the tasks are read again without
    it: the figures (and any error) are those of reading the intact folders alone.

    Local tasks files whose rows are held in memory are read whole when checked, so that
    polars reads their rows from those bytes: one read of each file, and polars' cost per
    file is lower from memory than from a path. They are checked and read in batches
    (:func:`_batches`), each read as soon as it is checked, so that polars reads while
    the next batch is checked.
    """
    held = _holds(folders)
    others = [name for name in access.checked if name != "tasks"]
    if not others:
        _check_files(folders, access, ["tasks"], whole=held)
        return _intact_tasks([f for f in folders if not f.problem], access)
    readable = []
    with ThreadPoolExecutor(1) as pool:
        reads = []
        for batch in _batches(folders) if held and access.local else [folders]:
            _check_files(batch, access, ["tasks"], whole=held)
            checked = [f for f in batch if not f.problem]
            readable += checked
            reads.append(pool.submit(_tasks, checked, access))
        _check_files(readable, access, others)
        intact = [f for f in readable if not f.problem]
        try:
            parts = [read.result() for read in reads] if len(intact) == len(readable) else None
        except _UNREADABLE:
            parts = None  # a file whose rows polars cannot read: found by _intact_tasks
        if parts is not None:
            counts = {run_id: n for _, part in parts for run_id, n in part.items()}
            if not held:
                return parts[0][0], counts, intact
            return (
                {key: frame for part, _ in parts for key, frame in (part or {}).items()},
                counts,
                intact,
            )
    return _intact_tasks(intact, access)  # those reads unused


def _intact_tasks(
    folders: list[Folder], access: Access
) -> tuple[dict[int, pl.DataFrame] | None, dict[str, int], list[Folder]]:
    """:func:`_tasks` of ``folders``, and those folders; where polars cannot read a tasks
    file's rows (its footer intact, its data damaged), that folder is damaged, naming the
    file and polars' error, and the others are read again without it."""
    try:
        return (*_tasks(folders, access), folders)
    except _UNREADABLE:
        for folder in folders:  # which file it was: polars' error does not say
            try:
                _tasks([folder], access)
            except _UNREADABLE as exc:
                folder.damage(folder.files["tasks"], _rows_unreadable(exc))
        intact = [f for f in folders if not f.problem]
        return (*_tasks(intact, access), intact)


def _metas(paths: list[str], access: Access) -> list[RunMeta | EvalnbError | None]:
    """Each folder's ``run.json`` (see :class:`Access`), or the error reading it."""

    def meta(path: str) -> RunMeta | EvalnbError | None:
        try:
            return access.meta(path)
        except EvalnbError as exc:
            return exc

    return _each(meta, paths, access.threads)


def _each(function: Callable[[Item], Result], items: Sequence[Item], threads: int) -> list[Result]:
    """``function`` of each item, in order: in a pool of ``threads`` threads, or in this
    thread when ``threads`` is 1.

    Example:
        >>> _each(len, ["ab", "c"], 1), _each(len, ["ab", "c"], 2)
        ([2, 1], [2, 1])
    """
    if threads <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(function, items))


def _check_files(
    folders: list[Folder], access: Access, tables: Sequence[str], *, whole: bool = False
) -> None:
    """Find each folder's files of ``tables`` and check their schemas, each distinct one
    once. ``whole``: local files are read whole, in the read that finds their footer, and
    kept in their folder's ``data`` (see :class:`Folder`)."""
    files = [(f, name, f"{f.path}/{name}.parquet") for f in folders for name in tables]
    whole = whole and access.local
    footers = _each(lambda job: _footer(job[2], access, whole), files, access.threads)
    schemas: dict[tuple[str, str | bytes], pl.Schema | str] = {}
    for (folder, name, file), footer in zip(files, footers, strict=True):
        if isinstance(footer, FileNotFoundError):
            folder.damage(file, "missing")
            continue
        if isinstance(footer, Exception):
            folder.damage(file, f"unreadable ({footer})")
            continue
        arrow, data = footer
        key = (name, arrow or file)  # a file without an Arrow schema is read on its own
        schema = schemas.get(key)
        if schema is None:
            schema = schemas[key] = _schema(file, access)
        if isinstance(schema, str):
            folder.damage(file, schema)
            continue
        folder.files[name], folder.schemas[name] = file, schema
        if data is not None:
            folder.data[name] = data


def checked_on_use(
    folders: list[Folder], name: str, access: Access, runs: pl.DataFrame
) -> pl.LazyFrame:
    """Table ``name`` of ``folders`` (keyed to ``runs``), its files checked
    (:func:`_check_files`) only when it is first scanned, then scanned with the query's
    projection and predicate: a query that never reads the table never fetches its files.
    A damaged file raises InputError naming it and why, when the table is scanned; so does
    a file whose footer reads but whose rows polars cannot (its pages damaged), when a
    query reads them: polars' own error names no file, so the files are then read alone,
    with the query's columns, to find it.

    Example:
        >>> checked_on_use([], "checks", LOCAL, read_stored([]).runs).collect().height
        0
    """

    @cache
    def table() -> pl.LazyFrame:
        _check_files(folders, access, [name])
        for folder in folders:
            if folder.problem:
                raise InputError(folder.problem[0], None, None, folder.problem[1])
        return _keyed(_scan(folders, name, access), runs)

    def source(
        columns: list[str] | None, predicate: pl.Expr | None, rows: int | None, _batch: int | None
    ) -> Iterator[pl.DataFrame]:
        scan = table() if columns is None else table().select(columns)
        scan = scan if predicate is None else scan.filter(predicate)
        try:
            yield from (scan if rows is None else scan.head(rows)).collect_batches()
        except _UNREADABLE as exc:
            raise _unreadable_file(folders, name, access, columns) or exc from None

    return register_io_source(source, schema=SCHEMAS[name])


def _unreadable_file(
    folders: list[Folder], name: str, access: Access, columns: list[str] | None
) -> InputError | None:
    """The first of the folders' files of table ``name`` whose ``columns`` polars cannot
    read, as InputError naming it and polars' error (None when each reads alone)."""
    for folder in folders:
        if name in folder.files:
            scan = _scan([folder], name, access)
            try:
                (scan if columns is None else scan.select(columns)).collect()
            except _UNREADABLE as exc:
                return InputError(folder.files[name], None, None, _rows_unreadable(exc))
    return None


def _rows_unreadable(exc: Exception) -> str:
    """Why a file whose footer reads is damaged, polars' error being ``exc``.

    Example:
        >>> _rows_unreadable(pl.exceptions.ComputeError("parquet: bad data\\nmore"))
        'its rows cannot be read (parquet: bad data)'
    """
    return f"its rows cannot be read ({str(exc).splitlines()[0]})"


def _footer(file: str, access: Access, whole: bool) -> tuple[str | bytes, bytes | None] | Exception:
    """The Arrow schema in a file's footer (empty when it has none) and, when ``whole``,
    the file's bytes (:func:`read_footer`), or the error reading it."""
    if access.local:
        return read_footer(file, whole=whole)
    try:
        return pl.read_parquet_metadata(access.parquet(file)).get("ARROW:schema", ""), None
    except _UNREADABLE as exc:
        return exc


_ARROW_SCHEMA: Final = b"\x18\x0cARROW:schema\x18"
"""A footer's key-value entry ``ARROW:schema`` in Thrift's compact encoding, up to its
value's length: field 1 (binary) of 12 bytes, the key, then field 2 (binary)."""
_TAIL: Final = 16_384
"""How many bytes at the end of a file are read at once, in the hope they hold its footer
(a tasks table's footer, the longest, is about 9 KB at 43 columns)."""


def read_footer(file: str, *, whole: bool = False) -> tuple[bytes, bytes | None] | Exception:
    """The Arrow schema a local parquet file's footer holds, undecoded (b"" when there is
    none or it cannot be found), with the file's bytes when ``whole`` (read in the same
    read: a file polars then reads from memory, not again from disk), or the error
    reading the file (a ValueError when it has no parquet footer).

    Read directly, in one read of the file's end (or all of it; two reads when the footer
    is longer than :data:`_TAIL`): its last 8 bytes give the footer's length, and the
    footer is searched for the entry. ``pl.read_parquet_metadata`` gives the same value,
    at several times the cost per file; here it is one of a folder's fixed costs, paid for
    every table of every folder loaded. The value is only compared, never decoded: a file
    whose value is not found has its schema read by polars on its own.

    Example:
        >>> import tempfile
        >>> file = tempfile.mktemp(suffix=".parquet")
        >>> pl.DataFrame({"a": [1]}).write_parquet(file)
        >>> schema, data = read_footer(file, whole=True)
        >>> schema.decode() == pl.read_parquet_metadata(file)["ARROW:schema"]
        True
        >>> data == open(file, "rb").read(), read_footer(file)[1]
        (True, None)
        >>> _ = open(file, "wb").write(b"not parquet")
        >>> read_footer(file)
        ValueError('no parquet footer')
    """
    try:
        fd = os.open(file, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            want = size if whole else min(size, _TAIL)
            tail = os.pread(fd, want, size - want)  # the footer, mostly
            length = int.from_bytes(tail[-8:-4], "little")
            if size < 12 or tail[-4:] != b"PAR1" or length > size - 12:
                return ValueError("no parquet footer")
            if length + 8 > len(tail):
                tail = os.pread(fd, length + 8, size - length - 8)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    data = tail if whole and len(tail) == size else None
    footer = tail[-length - 8 : -8]
    at = footer.rfind(_ARROW_SCHEMA)
    if at < 0:
        return b"", data
    begin, count, shift = at + len(_ARROW_SCHEMA), 0, 0
    for end in range(begin, min(begin + 5, len(footer))):  # the value's length (a varint)
        count |= (footer[end] & 0x7F) << shift
        shift += 7
        if footer[end] < 0x80:
            value = footer[end + 1 : end + 1 + count]
            return (value if len(value) == count else b""), data
    return b"", data


def _schema(file: str, access: Access) -> pl.Schema | str:
    """A stored table's schema, or what makes it damaged (see the module docstring)."""
    name = Path(file).stem
    try:
        schema = pl.scan_parquet(access.parquet(file)).collect_schema()
    except _UNREADABLE as exc:
        return f"unreadable ({exc})"
    lacking = lacking_keys(schema)
    if lacking:
        return f"lacks key columns {lacking}"
    lacking = sorted(set(SCHEMAS[name]) - set(schema))
    if lacking:
        return f"lacks columns {lacking}"
    wrong = [
        f"{c} is {schema[c]}, not {dtype}"
        for c, dtype in SCHEMAS[name].items()
        if c in schema and not readable_as(schema[c], dtype)
    ]
    return f"wrong column types: {'; '.join(wrong)}" if wrong else schema


def lacking_keys(columns: Collection[str]) -> list[str]:
    """The key columns (:data:`~evalnb._store.tables.KEYS`) a stored table lacks.

    A stored table lacking one cannot be read (its rows belong to no attempt).

    Example:
        >>> lacking_keys(["run_id", "model", "task_id", "passed"])
        ['epoch']
    """
    return [c for c in KEYS if c not in columns]


def readable_as(stored: PolarsDataType, wanted: PolarsDataType) -> bool:
    """Whether a stored column of type ``stored`` reads as the schema's ``wanted`` type
    without losing or inventing values: the same type, an all-null column, an integer as
    a wider integer or as a float, a float as a float, text as text, a list of such.

    Example:
        >>> readable_as(pl.Int32, pl.Int64), readable_as(pl.String, pl.Boolean)
        (True, False)
    """
    if stored == wanted or stored == pl.Null:
        return True
    if isinstance(stored, pl.List) and isinstance(wanted, pl.List):
        return readable_as(stored.inner, wanted.inner)
    if wanted.is_integer() or wanted.is_float():
        return stored.is_integer() or (wanted.is_float() and stored.is_float())
    return wanted == pl.String and isinstance(stored, pl.String | pl.Categorical | pl.Enum)


def _tasks(
    folders: list[Folder], access: Access
) -> tuple[dict[int, pl.DataFrame] | None, dict[str, int]]:
    """The tasks rows read into memory, by schema group (see :func:`_groups`), when the
    folders hold at most :data:`HELD_ATTEMPTS` attempts (else None), and each run's count
    of stored attempts."""
    if _holds(folders):
        held = {
            key: _read_held(schema, group, access)
            for key, (schema, group) in _groups(folders, "tasks").items()
        }
        counts = [frame.group_by("run_id").len() for frame in held.values()]
    else:
        held = None
        counts = [
            _scan(folders, "tasks", access).group_by("run_id").len().collect(engine="streaming")
        ]
    return held, {run_id: n for frame in counts for run_id, n in frame.iter_rows()}


def _read_held(schema: pl.Schema, folders: list[Folder], access: Access) -> pl.DataFrame:
    """The tasks rows of ``folders`` (all of one stored ``schema``) read into memory, in
    batches of :data:`HELD_BATCH` attempts, each in one chunk; the bytes their files were
    read into (see :class:`Folder`) go as each batch is read."""
    batches: list[pl.DataFrame] = []
    for batch in _batches(folders):
        batches.append(_group_scan(schema, batch, "tasks", access).collect().rechunk())
        for done in batch:
            done.data.pop("tasks", None)
    return pl.concat(batches)


def _batches(folders: list[Folder]) -> Iterator[list[Folder]]:
    """``folders`` in order, in batches of :data:`HELD_BATCH` attempts (as their
    ``run.json`` files say; a few more when one folder holds more).

    Example:
        >>> [len(batch) for batch in _batches([])]
        []
    """
    start, attempts = 0, 0
    for end, folder in enumerate(folders, 1):
        attempts += folder.meta.task_count or 0
        if attempts >= HELD_BATCH or end == len(folders):
            yield folders[start:end]
            start, attempts = end, 0


def _holds(folders: list[Folder]) -> bool:
    """Whether the tasks rows of ``folders`` are read into memory: at most
    :data:`HELD_ATTEMPTS` attempts in all, as their ``run.json`` files say."""
    planned = [f.meta.task_count for f in folders]
    return None not in planned and sum(p or 0 for p in planned) <= HELD_ATTEMPTS


def _unchecked_tasks(
    folders: list[Folder], access: Access
) -> tuple[dict[int, pl.DataFrame] | None, dict[str, int]] | None:
    """:func:`_tasks` of ``folders`` whose tasks rows are held in memory, their files' footers
    unread: all read in one scan against the first file's schema (checked:
    :func:`_schema`), in which polars refuses a file that is missing or unreadable, lacks a
    column, has one more or holds one of another type. None when that read fails (without
    naming the file) or the rows are not held (a scan of a few columns would not check the
    others), for the footers to be checked first.

    Example:
        >>> _unchecked_tasks([], LOCAL) is None
        True
    """
    if not folders or not _holds(folders):
        return None
    files = [f"{f.path}/tasks.parquet" for f in folders]
    schema = _schema(files[0], access)
    if isinstance(schema, str):
        return None
    for folder, file in zip(folders, files, strict=True):
        folder.files["tasks"], folder.schemas["tasks"] = file, schema
    try:
        return _tasks(folders, access)
    except _UNREADABLE:
        for folder in folders:
            del folder.files["tasks"], folder.schemas["tasks"]
        return None


def _keyed_tasks(
    folders: list[Folder],
    counts: dict[str, int],
    held: dict[int, pl.DataFrame] | None,
    access: Access,
) -> pl.DataFrame | pl.LazyFrame:
    """The tasks table of ``folders`` (held in memory or scanned), ``attempt_key`` made
    unique among them: ``run_key * RUN_STRIDE + position``.

    A tasks file holds its run's attempts, ``counts[run_id]`` rows (checked), so a row's
    run is found from its position in the scan, without a join: each schema group's
    rows come folder by folder, and a row belongs to the last folder starting at or
    before it.
    """
    run_key = {f.meta.run_id: key for key, f in enumerate(folders)}
    parts: list[pl.DataFrame | pl.LazyFrame] = []
    for key, (schema, group) in _groups(folders, "tasks").items():
        rows = [counts.get(f.meta.run_id, 0) for f in group]
        starts = pl.Series([0, *accumulate(rows[:-1])], dtype=pl.Int64)
        if held is None:
            table: pl.DataFrame | pl.LazyFrame = _group_scan(schema, group, "tasks", access)
        elif held[key].height == sum(rows):
            table = held[key]
        else:  # some of its folders were found damaged: their rows go
            ids = pl.Series([f.meta.run_id for f in group])
            table = held[key].filter(pl.col("run_id").is_in(ids.implode()))
        keys = pl.Series([run_key[f.meta.run_id] for f in group], dtype=pl.Int64)
        owner = pl.lit(keys).gather(pl.lit(starts).search_sorted(pl.col("_row"), "right") - 1)
        parts.append(
            table.with_row_index("_row")
            .with_columns((owner * RUN_STRIDE + pl.col("attempt_key")).alias("attempt_key"))
            .drop("_row")
        )
    if not parts:
        return pl.DataFrame(schema=SCHEMAS["tasks"])
    return parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")  # type: ignore[type-var]


def _groups(folders: list[Folder], name: str) -> dict[int, tuple[pl.Schema, list[Folder]]]:
    """The folders holding table ``name``, grouped by its stored schema (usually one
    group), in the order given."""
    groups: dict[int, tuple[pl.Schema, list[Folder]]] = {}
    for folder in folders:
        if name in folder.files:
            schema = folder.schemas[name]
            groups.setdefault(id(schema), (schema, []))[1].append(folder)
    return groups


def _group_scan(
    schema: pl.Schema, folders: list[Folder], name: str, access: Access
) -> pl.LazyFrame:
    """One ``scan_parquet`` of the files of ``folders`` (all of one stored ``schema``),
    conformed to the table's schema: from their bytes when every one was read whole
    (see :class:`Folder`)."""
    data = [f.data.get(name) for f in folders]
    files: Any = (  # paths, URLs or bytes
        data if all(data) else [access.parquet(f.files[name]) for f in folders]
    )
    return with_recorded(conform(pl.scan_parquet(files, schema=schema), name)).lazy()


def _scan(folders: list[Folder], name: str, access: Access) -> pl.LazyFrame:
    """One scan of table ``name`` over the folders' files, conformed to its schema: one
    ``scan_parquet`` per distinct stored schema (usually one), stacked.

    Example:
        >>> _scan([], "checks", LOCAL).collect().height
        0
    """
    scans = [
        _group_scan(schema, group, name, access)
        for schema, group in _groups(folders, name).values()
    ]
    if not scans:
        return pl.LazyFrame(schema=SCHEMAS[name])
    return scans[0] if len(scans) == 1 else pl.concat(scans, how="diagonal_relaxed")


def with_recorded(tasks: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """A tasks table with the figures its ``recorded`` column holds in their own columns.

    ``recorded`` (a struct, from a task record's ``extra``) holds task figures a foreign
    format recorded but evalnb cannot rebuild from per-call rows (no rows, or only
    some), such as a bench CSV's ``tool_call_count`` or ``base_context``: each key
    replaces that standard column, nulls included (a null ``passed``: the source gave no
    pass/fail verdict). Other tables come back as they are.

    Example:
        >>> tasks = pl.DataFrame({"passed": [True], "recorded": [{"passed": None}]})
        >>> with_recorded(tasks).to_dicts()
        [{'passed': None}]
    """
    recorded = tasks.collect_schema().get("recorded")
    if recorded is None:
        return tasks
    keys = [f.name for f in recorded.fields] if isinstance(recorded, pl.Struct) else []
    schema = SCHEMAS["tasks"]
    fields_ = [
        pl.col("recorded").struct.field(k).cast(schema.get(k, pl.Float64)).alias(k) for k in keys
    ]
    return tasks.with_columns(fields_).drop("recorded")


def _keyed(table: pl.LazyFrame, runs: pl.DataFrame) -> pl.LazyFrame:
    """A call or check table with each row's stored ``attempt_key`` (its attempt's
    position in its run) made unique among the runs: ``run_key * RUN_STRIDE +
    position``, the run found by ``run_id``. A table of one run keeps its keys."""
    if runs.height <= 1:
        return table
    keys = runs.lazy().select("run_id", "run_key")
    return (
        table.join(keys, on="run_id", how="inner", maintain_order="left")
        .with_columns((pl.col("run_key") * RUN_STRIDE + pl.col("attempt_key")).alias("attempt_key"))
        .drop("run_key")
    )
