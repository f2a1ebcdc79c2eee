"""Partial runs: runs that lack tasks they should have, found across the runs loaded together.

A result file whose harness dropped tasks (bashkit-eval dropped a task when its
provider call failed) can look complete: its own summary may count only the tasks
present. Each importer marks what its format tells (``RunMeta.status`` ``partial``
and ``missing_tasks``: bashkit-eval's ``summary.total_tasks`` above the results
present). :func:`mark_partial` adds what only a sibling run can tell:

    An imported run (``source`` other than ``evalnb``) is partial when another
    loaded run of the same ``source``, ``dataset`` and day has a task set that
    strictly contains its own. ``missing_tasks`` is the most tasks any such sibling
    has beyond it. Two runs are of the same day when they share a UTC calendar day:
    a run covers every day from its ``started_at`` to its ``finished_at`` (either
    alone when the other is unknown; a UTC offset is honoured, a time without one is
    UTC), so a long run that started before midnight is still a sibling of a short
    one of the next day. The rule compares every pair of runs, so what is marked does
    not depend on the order the runs were loaded in.

:func:`mark_missing_from_dataset` adds what the dataset tells:

    An imported run is a run of a dataset when every task it holds is one of the
    dataset's tasks. Given a dataset (``evalnb.load(..., dataset=...)``, ``evalnb
    summary --dataset``: a built-in name or a tasks file), every imported run of it
    that lacks some of its tasks is partial, ``missing_tasks`` = the dataset's tasks
    it lacks. Without one, an imported run whose tasks all belong to a packaged
    dataset (``smoke``, ``bash``: the smallest that holds them all) is checked
    against that one. A run holding a task outside the dataset is not a run of it and
    is left alone.

evalnb's own runs are left alone: the runner records their status, and a run made
with ``--tag``/``--task`` filters is a deliberate subset. :func:`evalnb.load` applies
these rules to everything it loads, with a warning per run it marks.

Example:
    >>> import polars as pl
    >>> from evalnb._analysis.runs import Runs
    >>> runs = Runs.empty()
    >>> mark_partial(runs).runs.height
    0
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from pathlib import Path

import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._formats.tasks import load_tasks
from evalnb._resources import DATASETS, data_path, dataset_path
from evalnb._store.tables import TABLES
from evalnb.errors import PartialRunWarning, warn

PACKAGED = ("smoke", "bash")
"""The packaged task datasets an imported run is checked against, smallest first."""


def mark_partial(runs: Runs) -> Runs:
    """``runs`` with sibling-detected partial runs marked (see the module docstring)."""
    days = _run_days(runs.runs)
    if days.is_empty():  # evalnb's own runs record their missing tasks themselves
        return runs
    pairs = (
        days.join(days, on=["source", "dataset", "day"], suffix="_b", nulls_equal=True)
        .filter(pl.col("run_id") != pl.col("run_id_b"))
        .select("run_id", "run_id_b")
        .unique()
    )
    tasks = (
        runs.scan("tasks")
        .select("run_id", "task_id")
        .filter(pl.col("run_id").is_in(days.get_column("run_id").unique().implode()))
        .unique()
        .collect()
    )
    sizes = tasks.group_by("run_id").len("_n")
    # only a pair whose second run holds more tasks can be a strict superset: compare those
    candidates = (
        pairs.join(sizes, on="run_id", how="left")
        .join(sizes.rename({"run_id": "run_id_b", "_n": "_n_b"}), on="run_id_b", how="left")
        .with_columns(pl.col("_n", "_n_b").fill_null(0))
        .filter(pl.col("_n_b") > pl.col("_n"))
    )
    shared = (
        candidates.select("run_id", "run_id_b")
        .join(tasks, on="run_id")
        .join(tasks.rename({"run_id": "run_id_b"}), on=["run_id_b", "task_id"])
        .group_by("run_id", "run_id_b")
        .len("_shared")
    )
    found = (
        candidates.join(shared, on=["run_id", "run_id_b"], how="left")
        .filter(pl.col("_shared").fill_null(0) == pl.col("_n"))
        .with_columns((pl.col("_n_b") - pl.col("_n")).alias("_missing"))
        .sort("run_id", "_missing", "run_id_b", descending=[False, True, False])
        .unique("run_id", keep="first", maintain_order=True)
    )
    for run_id, other, count in found.select("run_id", "run_id_b", "_missing").iter_rows():
        warn(
            f"run {run_id!r} looks partial: sibling run {other!r} of the same source and day "
            f"has {count} task(s) it lacks; it is marked partial (missing_tasks={count})",
            PartialRunWarning,
        )
    return _marked(runs, dict(found.select("run_id", "_missing").iter_rows()))


def _run_days(table: pl.DataFrame) -> pl.DataFrame:
    """Each imported run's UTC days (``run_id``, ``source``, ``dataset``, ``day``)."""
    rows = table.select("run_id", "source", "dataset", "started_at", "finished_at").filter(
        pl.col("source").fill_null("evalnb") != "evalnb"
    )
    out = [
        (run_id, source, dataset, day)
        for run_id, source, dataset, start, end in rows.iter_rows()
        for day in _days(start, end)
    ]
    schema = {"run_id": pl.Utf8, "source": pl.Utf8, "dataset": pl.Utf8, "day": pl.Date}
    return pl.DataFrame(out, schema=schema, orient="row")


def _days(start: str | None, end: str | None) -> list[dt.date]:
    """The UTC days from ``start`` to ``end`` (ISO 8601; either alone when the other is
    unknown or unreadable; none when both are).

    Example:
        >>> [d.isoformat() for d in _days("2026-02-16T23:55:00Z", "2026-02-17T00:20:00+00:00")]
        ['2026-02-16', '2026-02-17']
        >>> _days("2026-02-17T01:00:00+02:00", None)[0].isoformat()  # 23:00 UTC the day before
        '2026-02-16'
    """
    moments = [m for m in map(_utc, (start, end)) if m is not None]
    if not moments:
        return []
    first, last = min(moments).date(), max(moments).date()
    return [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]


def _utc(text: str | None) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text or "")
    except ValueError:
        return None
    return moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def dataset_task_ids(dataset: str | Path) -> set[str]:
    """The task ids of a dataset: a built-in name (``bash``, ``smoke``) or a tasks file.

    Example:
        >>> len(dataset_task_ids("smoke"))
        3
    """
    return {task.id for task in load_tasks(dataset_path(dataset))}


@cache
def _packaged_ids(name: str) -> frozenset[str]:
    return frozenset(dataset_task_ids(data_path(*DATASETS[name])))


def mark_missing_from_dataset(runs: Runs, dataset: str | Path | None = None) -> Runs:
    """``runs`` with imported runs lacking tasks of their dataset marked partial.

    See the module docstring: ``dataset`` given, every imported run of it is checked;
    else each imported run whose tasks all belong to a packaged dataset.

    Example:
        >>> mark_missing_from_dataset(Runs.empty(), "smoke").runs.height
        0
    """
    imported = runs.runs.filter(pl.col("source").fill_null("evalnb") != "evalnb")
    if imported.height == 0:
        return runs
    if dataset is not None:
        candidates = [(str(dataset), frozenset(dataset_task_ids(dataset)))]
    else:
        candidates = [(name, _packaged_ids(name)) for name in PACKAGED]
    task_sets = _task_sets(runs, imported.get_column("run_id"))
    missing: dict[str, int] = {}
    for run_id in imported.get_column("run_id").to_list():
        own = task_sets.get(run_id, set())
        for name, ids in candidates:
            if own and own <= ids:
                if len(ids - own):
                    missing[run_id] = len(ids - own)
                    warn(
                        f"run {run_id!r} is partial: it holds {len(own)} of the "
                        f"{len(ids)} tasks of dataset {name!r} (missing_tasks="
                        f"{len(ids - own)})",
                        PartialRunWarning,
                    )
                break
    return _marked(runs, missing)


def _marked(runs: Runs, missing: dict[str, int]) -> Runs:
    """``runs`` with each run of ``missing`` partial, ``missing_tasks`` at least its count."""
    if not missing:
        return runs
    found = pl.DataFrame(
        {"run_id": list(missing), "_missing": list(missing.values())},
        schema={"run_id": pl.Utf8, "_missing": pl.Int64},
    )
    table = (
        runs.runs.join(found, on="run_id", how="left")
        .with_columns(
            pl.when(pl.col("_missing").is_not_null())
            .then(pl.lit("partial"))
            .otherwise(pl.col("status"))
            .alias("status"),
            pl.max_horizontal("missing_tasks", "_missing").alias("missing_tasks"),
        )
        .drop("_missing")
    )
    return Runs(table, *(runs.source(name) for name in TABLES[1:]), errors=runs.errors)


def _task_sets(runs: Runs, run_ids: pl.Series) -> dict[str, set[str]]:
    """The task ids of each of ``run_ids`` (reading only those two columns of their rows)."""
    task_ids = (
        runs.scan("tasks")
        .select("run_id", "task_id")
        .filter(pl.col("run_id").is_in(run_ids.implode()))
        .group_by("run_id")
        .agg(pl.col("task_id").unique())
        .collect()
    )
    return {run_id: set(ids) for run_id, ids in task_ids.iter_rows()}
