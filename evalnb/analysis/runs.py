"""``Runs``: the tidy tables of one or more runs, as polars DataFrames.

Example:
    >>> Runs.empty().tasks.columns[:4]
    ['run_id', 'model', 'task_id', 'epoch']
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import polars as pl

from evalnb.extras import require
from evalnb.store.folder import RunStore
from evalnb.store.tables import RUN_COLUMNS, SCHEMAS, TABLES, conform, tables_from_records


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

    @classmethod
    def empty(cls) -> Runs:
        """Runs with every table empty but fully typed."""
        return cls(**{name: pl.DataFrame(schema=SCHEMAS[name]) for name in TABLES})

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
            }
        )

    def to_pandas(self) -> PandasRuns:
        """The same tables as pandas DataFrames.

        Example:
            >>> type(Runs.empty().to_pandas().tasks).__name__
            'DataFrame'
        """
        require("pandas", "pandas")
        require("pyarrow", "pandas")
        return PandasRuns(**{f.name: getattr(self, f.name).to_pandas() for f in fields(self)})

    def filter(self, expr: pl.Expr) -> Runs:
        """Keep the runs whose ``runs`` row matches ``expr`` (and all their rows).

        Example:
            >>> Runs.empty().filter(pl.col("model") == "x").runs.height
            0
        """
        ids = self.runs.filter(expr).get_column("run_id").implode()
        return Runs(
            **{name: getattr(self, name).filter(pl.col("run_id").is_in(ids)) for name in TABLES}
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
    return Runs(**{name: conform(tables[name], name) for name in TABLES})
