"""``Runs``: the tidy tables of one or more runs, as polars DataFrames.

Example:
    >>> Runs.empty().tasks.columns[:4]
    ['run_id', 'model', 'task_id', 'epoch']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from evalnb.extras import require
from evalnb.records import RunMeta, TaskRecord
from evalnb.store.folder import RunStore
from evalnb.store.tables import RUN_COLUMNS, SCHEMAS, TABLES, conform, tables_from_records


class LoadError(NamedTuple):
    """One input :func:`evalnb.load` could not read (with ``strict=False``).

    Example:
        >>> LoadError("a.json", "a.json:1: results: Field required").path
        'a.json'
    """

    path: str
    message: str


@dataclass
class Runs:
    """The tidy tables of one or more runs (polars DataFrames).

    Example:
        >>> Runs.empty().tasks.columns[:4]
        ['run_id', 'model', 'task_id', 'epoch']
    """

    runs: pl.DataFrame
    tasks: pl.DataFrame
    llm_calls: pl.DataFrame
    tool_calls: pl.DataFrame
    checks: pl.DataFrame
    messages: pl.DataFrame
    tool_invocations: pl.DataFrame

    errors: list[LoadError] = field(default_factory=list)

    @classmethod
    def empty(cls) -> Runs:
        """Runs with every table empty but fully typed."""
        tables: dict[str, Any] = {name: pl.DataFrame(schema=SCHEMAS[name]) for name in TABLES}
        return cls(**tables)

    @classmethod
    def concat(cls, parts: list[Runs]) -> Runs:
        """Stack several Runs (tables aligned to the standard schemas).

        Example:
            >>> Runs.concat([Runs.empty(), Runs.empty()]).tasks.height
            0
        """
        if not parts:
            return cls.empty()
        return cls(
            **{
                name: pl.concat(
                    [conform(getattr(p, name), name) for p in parts], how="diagonal_relaxed"
                )
                for name in TABLES
            },
            errors=[e for p in parts for e in p.errors],
        )

    def to_pandas(self) -> PandasRuns:
        """The same tables as pandas DataFrames.

        Example:
            >>> type(Runs.empty().to_pandas().tasks).__name__
            'DataFrame'
        """
        require("pandas", "pandas")
        require("pyarrow", "pandas")
        tables = {name: getattr(self, name).to_pandas() for name in TABLES}
        return PandasRuns(**tables, errors=list(self.errors))

    def filter(self, expr: pl.Expr) -> Runs:
        """Keep the runs whose ``runs`` row matches ``expr`` (and all their rows).

        Example:
            >>> Runs.empty().filter(pl.col("model") == "x").runs.height
            0
        """
        ids = self.runs.filter(expr).get_column("run_id").implode()
        return Runs(
            **{name: getattr(self, name).filter(pl.col("run_id").is_in(ids)) for name in TABLES},
            errors=list(self.errors),
        )


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
    errors: list[LoadError] = field(default_factory=list)


def read_run_folder(path: str | Path) -> Runs:
    """Read one evalnb run folder: parquet when complete, else rebuilt from events.

    Example:
        >>> import tempfile
        >>> from evalnb.store import RunStore
        >>> from evalnb.records import RunMeta
        >>> s = RunStore.create(tempfile.mkdtemp(), RunMeta(run_id="r", provider="p", model="m"))
        >>> read_run_folder(s.path).runs.get_column("status").to_list()
        ['running']
    """
    store = RunStore.open(path)
    parquet = {name: Path(path) / f"{name}.parquet" for name in TABLES if name != "runs"}
    if store.meta.status == "complete" and all(p.exists() for p in parquet.values()):
        tables = {name: pl.read_parquet(p) for name, p in parquet.items()}
        run_row = {c: getattr(store.meta, c, None) for c in RUN_COLUMNS}
        run_row["task_count"] = tables["tasks"].height
        tables["runs"] = pl.DataFrame([run_row], schema=SCHEMAS["runs"])
    else:
        tables = tables_from_records(store.meta, store.records())
    return _finish(store.meta, tables)


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
    return _finish(meta, tables_from_records(meta, records))


def _finish(meta: RunMeta, tables: dict[str, pl.DataFrame]) -> Runs:
    """Apply what a foreign format recorded beyond the per-call rows.

    - ``recorded`` (a task's ``extra``): task figures the source recorded but evalnb
      cannot rebuild from per-call rows (no rows, or only some), such as a bench
      CSV's ``tool_call_count`` or ``base_context``. Each key replaces that standard
      column, nulls included (a null ``passed``: the source gave no pass/fail verdict).
    - ``RunMeta.settings.skipped``: the ``skipped`` column of ``runs``.
    """
    tasks = tables["tasks"]
    if "recorded" in tasks.columns and tasks.height:
        recorded = tasks.get_column("recorded")
        keys = (
            [f.name for f in recorded.dtype.fields] if isinstance(recorded.dtype, pl.Struct) else []
        )
        schema = SCHEMAS["tasks"]
        tasks = tasks.with_columns(
            pl.col("recorded").struct.field(k).cast(schema.get(k, pl.Float64)).alias(k)
            for k in keys
        ).drop("recorded")
    tables = {**tables, "tasks": tasks}
    if meta.settings.skipped is not None:
        tables["runs"] = tables["runs"].with_columns(
            pl.lit(meta.settings.skipped, dtype=pl.Int64).alias("skipped")
        )
    conformed: dict[str, Any] = {name: conform(tables[name], name) for name in TABLES}
    return Runs(**conformed)
