"""``Runs``: the tidy tables of one or more runs, as polars DataFrames backed by lazy scans.

A run folder is not read when it is loaded: each table is a ``pl.scan_parquet`` of its
file, collected the first time the table is used (``runs.tool_calls``) and kept from
then on. The metrics read :meth:`Runs.scan` instead, so a summary reads only the
columns it needs and never the text columns (``stdout``, ``stderr``, ``messages.text``).

Every attempt table carries ``attempt_key`` (``run_key * RUN_STRIDE + position``, see
:data:`evalnb._store.tables.RUN_STRIDE`) and the runs table ``run_key``: one integer per
attempt and per run, unique within a ``Runs``, so metrics group and join on integers.

Example:
    >>> Runs.empty().tasks.columns[:4]
    ['run_id', 'model', 'task_id', 'epoch']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple, overload

import polars as pl

from evalnb._analysis.folders import LOCAL, Access, Folder, read_stored, with_recorded
from evalnb._extras import require
from evalnb._store.folder import EVENTS, RunStore
from evalnb._store.tables import (
    CALL_FIGURES,
    KEYS,
    RUN_KEY,
    RUN_STRIDE,
    SCHEMAS,
    TABLES,
    conform,
    tables_from_records,
    with_call_figures,
)
from evalnb.errors import DamagedInputWarning, EvalnbError, InputError, warn
from evalnb.records import RunMeta, TaskRecord

Table = pl.DataFrame | pl.LazyFrame

AGGREGATE: Final = "streaming"
"""The polars engine the metrics aggregate scans with: it reads the files in batches, so
memory stays bounded by the groups rather than the rows (and it runs faster than
collecting the columns first: at 10M tool-call rows, 3x less CPU, 5x less memory)."""


class _Table:
    """A table attribute of :class:`Runs`: a DataFrame, collected from its scan on first use."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _Table: ...
    @overload
    def __get__(self, obj: Runs, objtype: type | None = None) -> pl.DataFrame: ...
    def __get__(self, obj: Runs | None, objtype: type | None = None) -> _Table | pl.DataFrame:
        return self if obj is None else obj.frame(self.name)

    def __set__(self, obj: Runs, value: pl.DataFrame) -> None:
        obj.set_table(self.name, value)


class LoadError(NamedTuple):
    """One input :func:`evalnb.load` could not read (with ``strict=False``).

    Example:
        >>> LoadError("a.json", "a.json:1: results: Field required").path
        'a.json'
    """

    path: str
    message: str


class Runs:
    """The tidy tables of one or more runs (polars DataFrames, read on first use).

    Build one from DataFrames or LazyFrames, one per table of
    :data:`evalnb._store.tables.TABLES`. Missing ``run_key``/``attempt_key`` values are
    assigned (runs in row order; attempts matched to the tasks table on the four keys).
    A tasks table without some of the figures summed from its calls
    (:data:`~evalnb._store.tables.CALL_FIGURES`: a table built by hand) gets them from the
    ``llm_calls`` and ``tool_calls`` tables given with it, also when set later; replacing a
    call table later does not recompute the tasks' figures.

    Parameters
    ----------
    runs, tasks, llm_calls, tool_calls, checks, messages : DataFrame or LazyFrame
        The tables of the same names, each conformed to its schema.
    tool_invocations : DataFrame or LazyFrame, optional
        The tool invocations table; empty by default.
    errors : list of LoadError, optional
        The inputs that could not be read (see :func:`load`); none by default.

    Attributes
    ----------
    runs, tasks, llm_calls, tool_calls, checks, messages, tool_invocations : DataFrame
        Each table, collected from its scan the first time it is used.
    errors : list of LoadError
        The inputs :func:`load` could not read with ``strict=False``.

    See Also
    --------
    load : Runs read from run folders, result files and trace formats.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> runs = example_runs()
    >>> runs.tasks.filter(epoch=1).select("run_id", "task_id", "passed").sort("run_id", "task_id")
    shape: (6, 3)
    ┌─────────┬────────────────────┬────────┐
    │ run_id  ┆ task_id            ┆ passed │
    │ ---     ┆ ---                ┆ ---    │
    │ str     ┆ str                ┆ bool   │
    ╞═════════╪════════════════════╪════════╡
    │ careful ┆ smoke_count_words  ┆ true   │
    │ careful ┆ smoke_jq_fields    ┆ true   │
    │ careful ┆ smoke_make_project ┆ true   │
    │ hasty   ┆ smoke_count_words  ┆ false  │
    │ hasty   ┆ smoke_jq_fields    ┆ false  │
    │ hasty   ┆ smoke_make_project ┆ true   │
    └─────────┴────────────────────┴────────┘
    """

    runs = _Table()
    tasks = _Table()
    llm_calls = _Table()
    tool_calls = _Table()
    checks = _Table()
    messages = _Table()
    tool_invocations = _Table()

    def __init__(
        self,
        runs: Table,
        tasks: Table,
        llm_calls: Table,
        tool_calls: Table,
        checks: Table,
        messages: Table,
        tool_invocations: Table | None = None,
        *,
        errors: list[LoadError] | None = None,
    ) -> None:
        self.errors: list[LoadError] = list(errors or [])
        self._frames: dict[str, pl.DataFrame] = {}
        self._scans: dict[str, pl.LazyFrame] = {}
        self._pieces: list[Runs] = []
        if tool_invocations is None:
            tool_invocations = pl.DataFrame(schema=SCHEMAS["tool_invocations"])
        given = (runs, tasks, llm_calls, tool_calls, checks, messages, tool_invocations)
        for name, table in zip(TABLES, given, strict=True):
            self.set_table(name, table)
        self._sum_up(tasks)

    def __repr__(self) -> str:
        loaded = ", ".join(self._frames) or "none"
        return f"Runs({self.runs.height} runs; tables loaded: {loaded})"

    def frame(self, name: str) -> pl.DataFrame:
        """Table ``name`` as a DataFrame (collected from its scan once, then kept).

        Parameters
        ----------
        name : str
            A table of :data:`evalnb._store.tables.TABLES` (``"tasks"``, ``"checks"``...).

        Returns
        -------
        DataFrame
            The table.

        Examples
        --------
        >>> Runs.empty().frame("checks").height
        0
        """
        if name not in self._frames:
            self._frames[name] = self._scans[name].collect()
        return self._frames[name]

    def scan(self, name: str) -> pl.LazyFrame:
        """Table ``name`` as a LazyFrame: select the columns you need, then collect.

        Parameters
        ----------
        name : str
            A table of :data:`evalnb._store.tables.TABLES` (``"tasks"``, ``"tool_calls"``...).

        Returns
        -------
        LazyFrame
            The table's scan.

        Examples
        --------
        >>> Runs.empty().scan("tool_calls").select("exit_code").collect().height
        0
        """
        return self._scans[name]

    def set_table(self, name: str, table: Table) -> None:
        """Replace table ``name`` (conformed to its schema, keys assigned when missing).

        Parameters
        ----------
        name : str
            A table of :data:`evalnb._store.tables.TABLES`.
        table : DataFrame or LazyFrame
            Its new content.

        Raises
        ------
        ValueError
            ``name`` is not a table.

        Examples
        --------
        >>> r = Runs.empty()
        >>> r.set_table("runs", pl.DataFrame({"run_id": ["a"], "model": ["m"]}))
        >>> r.runs.select("run_id", "run_key").row(0)
        ('a', 0)
        """
        if name not in TABLES:
            raise ValueError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        given = table
        # one call per type: conform's type variable takes a DataFrame or a LazyFrame
        table = conform(table, name) if isinstance(table, pl.DataFrame) else conform(table, name)  # noqa: RUF034
        self._pieces = []
        if name == "runs":
            runs = table if isinstance(table, pl.DataFrame) else table.collect()
            if runs.get_column("run_key").null_count():
                runs = runs.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("run_key"))
            self._hold("runs", runs)
            return
        if isinstance(table, pl.DataFrame) and table.get_column("attempt_key").null_count():
            table = self._assign_attempt_keys(name, table)
        self._hold(name, table)
        if name == "tasks" and "tool_calls" in self._scans:  # replaced after construction
            self._sum_up(given)

    def _hold(self, name: str, table: Table) -> None:
        """Keep ``table`` as table ``name``, as it is (conformed and keyed)."""
        if isinstance(table, pl.DataFrame):
            self._frames[name], self._scans[name] = table, table.lazy()
        else:
            self._frames.pop(name, None)
            self._scans[name] = table

    @classmethod
    def _holding(cls, tables: dict[str, Table], errors: list[LoadError]) -> Runs:
        """Runs holding ``tables`` as they are: each one conformed and keyed already (the
        tables of other Runs, stacked or with their keys renumbered), so not conformed again."""
        runs = cls.__new__(cls)
        runs.errors, runs._frames, runs._scans, runs._pieces = errors, {}, {}, []
        for name, table in tables.items():
            runs._hold(name, table)
        return runs

    def _sum_up(self, given: Table) -> None:
        """Sum up the :data:`~evalnb._store.tables.CALL_FIGURES` the given tasks table
        lacks (a table built by hand) from the call tables."""
        have = given.collect_schema()
        absent = [c for c in CALL_FIGURES if c not in have]
        if absent:
            scan = self.scan
            tasks = with_call_figures(scan("tasks"), scan("llm_calls"), scan("tool_calls"), absent)
            self._frames.pop("tasks", None)
            self._scans["tasks"] = conform(tasks, "tasks")

    def _assign_attempt_keys(self, name: str, table: pl.DataFrame) -> pl.DataFrame:
        """Keys for a hand-built table: tasks numbered per run; other rows matched on KEYS.

        Rows whose attempt is not in the tasks table share one key per run (the last).
        """
        run_keys = self.runs.select("run_id", "run_key")
        if name == "tasks":
            return (
                table.drop("attempt_key")
                .join(run_keys, on="run_id", how="left", maintain_order="left")
                .with_columns(
                    (
                        pl.col("run_key").fill_null(0) * RUN_STRIDE
                        + pl.int_range(pl.len()).over("run_id")
                    ).alias("attempt_key")
                )
                .drop("run_key")
                .pipe(conform, name)
            )
        keys = self.tasks.select(*KEYS, "attempt_key").unique(KEYS)
        return (
            table.drop("attempt_key")
            .join(keys, on=KEYS, how="left", nulls_equal=True, maintain_order="left")
            .join(run_keys, on="run_id", how="left", maintain_order="left")
            .with_columns(
                pl.coalesce(
                    "attempt_key", pl.col("run_key").fill_null(0) * RUN_STRIDE + RUN_STRIDE - 1
                ).alias("attempt_key")
            )
            .drop("run_key")
            .pipe(conform, name)
        )

    @classmethod
    def empty(cls) -> Runs:
        """Runs with every table empty but fully typed.

        Returns
        -------
        Runs
            No run, every table with its full schema.

        Examples
        --------
        >>> Runs.empty().runs.height
        0
        """
        return cls(*(pl.DataFrame(schema=SCHEMAS[name]) for name in TABLES))

    @classmethod
    def concat(cls, parts: list[Runs]) -> Runs:
        """Stack several Runs; run and attempt keys are renumbered to stay unique.

        Parameters
        ----------
        parts : list of Runs
            The Runs to stack, in order (their ``errors`` are kept).

        Returns
        -------
        Runs
            Every run of every part; empty for no part.

        Examples
        --------
        >>> Runs.concat([Runs.empty(), Runs.empty()]).tasks.height
        0
        """
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        pieces: list[Runs] = []
        offset = 0
        for piece in (p for part in parts for p in part.pieces()):
            old = piece.runs.get_column("run_key").to_list()
            new = list(range(offset, offset + len(old)))
            offset += len(old)
            run_key = pl.Series("run_key", new, dtype=pl.Int64)
            tables: dict[str, Table] = {"runs": piece.runs.with_columns(run_key)}
            for name in TABLES[1:]:
                tables[name] = piece.source(name).with_columns(_rekey(old, new))
            pieces.append(cls._holding(tables, []))
        stacked = {name: _stack([p.source(name) for p in pieces]) for name in TABLES}
        out = cls._holding(stacked, [e for p in parts for e in p.errors])
        out._pieces = pieces
        return out

    def source(self, name: str) -> Table:
        """Table ``name`` as held: the DataFrame when loaded, else its scan.

        Parameters
        ----------
        name : str
            A table of :data:`evalnb._store.tables.TABLES`.

        Returns
        -------
        DataFrame or LazyFrame
            The table, not collected.

        Examples
        --------
        >>> type(Runs.empty().source("tasks")).__name__
        'DataFrame'
        """
        return self._frames.get(name, self._scans[name])

    def pieces(self) -> list[Runs]:
        """The inputs this Runs was stacked from (itself when it was not stacked).

        Metrics that work per attempt process one piece at a time, so memory stays
        bounded by the largest input rather than the whole collection.

        Returns
        -------
        list of Runs
            The pieces, in order.

        Examples
        --------
        >>> len(Runs.concat([Runs.empty(), Runs.empty()]).pieces())
        2
        """
        return self._pieces or [self]

    def to_pandas(self) -> PandasRuns:
        """The same tables as pandas DataFrames.

        Returns
        -------
        PandasRuns
            Each table as a pandas DataFrame, with the same ``errors``.

        Raises
        ------
        SetupError
            pandas or pyarrow is not installed.

        Examples
        --------
        >>> from evalnb._examples import example_runs
        >>> example_runs().to_pandas().runs[["run_id", "model"]]
            run_id        model
        0  careful  sim/careful
        1    hasty    sim/hasty
        """
        require("pandas", "pandas")
        require("pyarrow", "pandas")
        return PandasRuns(
            *(self.frame(name).to_pandas() for name in TABLES), errors=list(self.errors)
        )

    def filter(self, expr: pl.Expr) -> Runs:
        """Keep the runs whose ``runs`` row matches ``expr`` (and all their rows).

        Parameters
        ----------
        expr : Expr
            A polars predicate on the ``runs`` table's columns.

        Returns
        -------
        Runs
            The runs kept, with every row of each table that belongs to them.

        Examples
        --------
        >>> from evalnb._examples import example_runs
        >>> example_runs().filter(pl.col("model") == "sim/hasty").runs.select("run_id", "model")
        shape: (1, 2)
        ┌────────┬───────────┐
        │ run_id ┆ model     │
        │ ---    ┆ ---       │
        │ str    ┆ str       │
        ╞════════╪═══════════╡
        │ hasty  ┆ sim/hasty │
        └────────┴───────────┘
        """
        runs = self.runs.filter(expr)
        kept = runs.get_column("run_key").implode()
        in_kept = RUN_KEY.is_in(kept)
        out = Runs(
            runs,
            *(self.source(name).filter(in_kept) for name in TABLES[1:]),
            errors=list(self.errors),
        )
        if self._pieces:
            out._pieces = [p.filter(expr) for p in self._pieces]
            out._pieces = [p for p in out._pieces if p.runs.height]
        return out


def _rekey(old: list[int], new: list[int]) -> pl.Expr:
    """``attempt_key`` with its run part mapped from ``old`` run keys to ``new`` ones."""
    key = pl.col("attempt_key")
    if old == list(range(len(old))):
        return (key + new[0] * RUN_STRIDE).alias("attempt_key") if new else key
    run = (key // RUN_STRIDE).replace_strict(old, new, return_dtype=pl.Int64)
    return (run * RUN_STRIDE + key % RUN_STRIDE).alias("attempt_key")


def _stack(parts: list[Table]) -> Table:
    if all(isinstance(p, pl.DataFrame) for p in parts):
        return pl.concat([p for p in parts if isinstance(p, pl.DataFrame)], how="diagonal_relaxed")
    return pl.concat([p.lazy() for p in parts], how="diagonal_relaxed")


@dataclass
class PandasRuns:
    """The tables of :class:`Runs` as pandas DataFrames."""

    runs: Any
    tasks: Any
    llm_calls: Any
    tool_calls: Any
    checks: Any
    messages: Any
    tool_invocations: Any
    errors: list[LoadError] = field(default_factory=list, kw_only=True)


class FolderRead(NamedTuple):
    """What :func:`read_run_folders` read: every run read, each run's position among the
    folders given (by ``run_id``), the folders that failed (by position) and those whose
    ``run.json`` is another harness's (positions)."""

    runs: Runs
    positions: dict[str, int]
    failed: list[tuple[int, EvalnbError]]
    foreign: list[int]


def read_run_folders(folders: Sequence[str | Path], access: Access = LOCAL) -> FolderRead:
    """Run folders, any number: the complete ones from their parquet tables, one scan per
    table over all of them (:mod:`evalnb._analysis.folders`), the others from their events.

    - A complete folder is not read here beyond each file's footer: its tables are
      scanned lazily (see the module docstring).
    - A run in progress is built from ``events.jsonl`` in memory
      (:meth:`~evalnb._store.RunStore.records`); its status is ``running``
      while a process holds its run lock, else ``partial``, with the attempts it lacks as
      ``missing_tasks`` (:meth:`~evalnb._store.RunStore.observed`).
    - The events are the source of truth: a complete run whose parquet tables are
      damaged (:mod:`evalnb._analysis.folders`) is rebuilt from them, with a warning
      naming the file and the damage, when they hold the run's attempts, and refused
      (InputError naming the file and the reason) when they do not, or at a URL.

    Example:
        >>> read_run_folders([]).runs.runs.height
        0
    """
    stored = read_stored(folders, access)
    parts, failed = [], list(stored.failed)
    positions = {f.meta.run_id: f.index for f in stored.intact}
    if stored.intact:
        parts.append(Runs(stored.runs, *(stored.tables[name] for name in TABLES[1:])))
    for folder in [*stored.damaged, *stored.live]:
        try:
            parts.append(_read_alone(folder, access))
        except EvalnbError as exc:
            failed.append((folder.index, exc))
        else:
            positions[folder.meta.run_id] = folder.index
    failed.sort(key=lambda failure: failure[0])
    return FolderRead(Runs.concat(parts), positions, failed, stored.foreign)


def read_run_folder(path: str | Path) -> Runs:
    """One evalnb run folder (see :func:`read_run_folders`); its errors are raised.

    Example:
        >>> import tempfile
        >>> from evalnb._store import RunStore
        >>> from evalnb.records import RunMeta
        >>> s = RunStore.create(tempfile.mkdtemp(), RunMeta(run_id="r", provider="p", model="m"))
        >>> read_run_folder(s.path).runs.get_column("status").to_list()  # nobody runs it
        ['partial']
    """
    read = read_run_folders([path])
    if read.failed:
        raise read.failed[0][1]
    if read.foreign:
        RunStore.open(path)  # raises the InputError naming what is wrong with its run.json
    return read.runs


def _read_alone(folder: Folder, access: Access) -> Runs:
    """A folder not scanned with the others: a damaged one (rebuilt from its events) or a
    run in progress (from its events)."""
    meta = folder.meta
    if not access.local:
        if folder.problem:
            raise InputError(*folder.problem[:1], None, None, folder.problem[1])
        msg = (
            f"the run is {meta.status!r}: only complete runs (parquet tables) are read from a "
            "URL; load a run in progress from its folder"
        )
        raise InputError(f"{folder.path}/run.json", None, "status", msg)
    store = RunStore(folder.path, meta)
    records = store.records()
    if not folder.problem:  # running while a process holds its run lock, else partial
        meta = store.observed(len(records))
    else:
        file, reason = folder.problem
        if meta.source == "evalnb" and meta.task_count not in (None, len(records)):
            msg = (
                f"{reason}; and {EVENTS} holds {len(records)} finished attempts where "
                f"run.json's task_count is {meta.task_count}, so the run cannot be rebuilt"
            )
            raise InputError(file, None, None, msg)
        warn(f"{file}: {reason}; tables rebuilt from {EVENTS}", DamagedInputWarning)
    return _finish(dict(tables_from_records(meta, records)))


def runs_from_tables(tables: dict[str, pl.DataFrame]) -> Runs:
    """The tables of one run read by a format reader column by column (see :func:`_finish`).

    Example:
        >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...     score=TaskScore(task_id="t"))
        >>> meta = RunMeta(run_id="r", provider="p", model="m")
        >>> runs_from_tables(tables_from_records(meta, [rec])).tasks.height
        1
    """
    return _finish(dict(tables))


def runs_from_records(meta: RunMeta, records: list[TaskRecord]) -> Runs:
    """The tables of one run read by a format reader (see :func:`_finish` for the extras).

    Example:
        >>> from evalnb.records import Task, TaskScore
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...     score=TaskScore(task_id="t"), extra={"recorded": {"tool_call_count": 4}})
        >>> runs = runs_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec])
        >>> runs.tasks.get_column("tool_call_count").to_list()
        [4]
    """
    return _finish(dict(tables_from_records(meta, records)))


def _finish(tables: dict[str, Table]) -> Runs:
    """Runs of one run's tables, with the task figures a foreign format recorded beyond
    its per-call rows in their columns (:func:`~evalnb._analysis.folders.with_recorded`).

    A scanned tasks table stays lazy.
    """
    tables["tasks"] = with_recorded(tables["tasks"])
    return Runs(*(tables[name] for name in TABLES))
