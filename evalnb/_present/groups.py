"""Runs pooled by model: the unit every chart draws, with one colour per model.

Seeds and repeated runs of one model are one *group*: the same model (with
" (simulated)" for offline personas), the same guidance version and the same dataset.
A chart draws one bar, box or line per group and names how many runs it pools, so 21
runs of three models give three bars, not 21. Pooled figures treat every attempt of
every run as one more attempt of the task (every interval is clustered by task, so
repeated attempts of a task stay together).

:func:`colours` gives each group a fixed colour (from a 20-colour palette, in label
order), and every chart that colours by model uses it, so a model keeps its colour
across charts.

Example:
    >>> runs = pl.DataFrame({"run_id": ["a", "b", "c"], "model": ["m", "m", "s"],
    ...                      "simulated": [False, False, True], "guidance": [None] * 3,
    ...                      "dataset": ["d"] * 3})
    >>> some = Runs.empty()
    >>> some.runs = runs
    >>> group_labels(some).get_column("group").to_list()
    ['m · 2 runs', 'm · 2 runs', 's (simulated)']
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._store.tables import TABLES

PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#E45756",
    "#72B7B2",
    "#B279A2",
    "#EECA3B",
    "#9D755D",
    "#FF9DA6",
    "#BAB0AC",
    "#1F4E79",
    "#A0522D",
    "#2CA02C",
    "#8C564B",
    "#17BECF",
    "#7F7F7F",
    "#BCBD22",
    "#D62728",
    "#9467BD",
    "#FFBF79",
]
"""Group colours in label order; more than 20 groups reuse them."""


def group_labels(runs: Runs) -> pl.DataFrame:
    """One row per run: ``run_id``, ``model_label``, ``group`` (with its run count) and ``runs``.

    ``model_label`` is the model, with " (simulated)" for offline personas. ``group``
    adds " · guidance <name>" for runs made with guidance, " · <dataset>" when the runs
    cover several datasets, and " · N runs" when it pools several runs.

    Example:
        >>> runs = pl.DataFrame({"run_id": ["a", "b"], "model": ["m", "m"],
        ...     "simulated": [False, False], "guidance": ["v1", "v2"], "dataset": ["d", "d"]})
        >>> some = Runs.empty()
        >>> some.runs = runs
        >>> group_labels(some).get_column("group").to_list()
        ['m · guidance v1', 'm · guidance v2']
    """
    table = runs.runs
    several_datasets = table.get_column("dataset").n_unique() > 1 if table.height else False
    model_label = (
        pl.when(pl.col("simulated").fill_null(False))
        .then(pl.col("model") + " (simulated)")
        .otherwise(pl.col("model"))
    )
    base = pl.concat_str(
        model_label,
        pl.when(pl.col("guidance").is_not_null()).then(pl.lit(" · guidance ") + pl.col("guidance")),
        pl.lit(" · ") + pl.col("dataset").fill_null("?") if several_datasets else pl.lit(None),
        ignore_nulls=True,
    )
    return (
        table.select("run_id", model_label.alias("model_label"), base.alias("key"))
        .with_columns(pl.len().over("key").alias("runs"))
        .with_columns(
            pl.when(pl.col("runs") > 1)
            .then(pl.format("{} · {} runs", "key", "runs"))
            .otherwise(pl.col("key"))
            .alias("group")
        )
        .drop("key")
        .sort("group", "run_id")
    )


def pooled(runs: Runs, by: pl.DataFrame | None = None) -> Runs:
    """``runs`` with the runs of each group merged into one run whose ``run_id`` is the group.

    The groups are :func:`group_labels`' unless ``by`` (``run_id``, ``group``) gives
    others (the trend chart pools a model's runs of one day).

    Attempts keep their own rows: a pooled run's ``epoch`` numbers the (run, epoch)
    pairs of the group, so no two attempts share a key, and every attempt is keyed
    anew to its group (``attempt_key``), so the metrics count every run's attempts. The
    runs table keeps one row per group (the latest ``started_at``, ``task_count`` summed).

    Example:
        >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb._store.tables import tables_from_records
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...                  score=TaskScore(task_id="t"))
        >>> parts = [Runs(**tables_from_records(RunMeta(run_id=r, provider="p", model="m"), [rec]))
        ...          for r in ("a", "b")]
        >>> both = pooled(Runs.concat(parts))
        >>> both.runs.get_column("run_id").to_list(), both.tasks.get_column("epoch").to_list()
        (['m · 2 runs'], [1, 2])
    """
    groups = group_labels(runs).select("run_id", "group") if by is None else by
    attempts = (
        runs.tasks.select("run_id", "epoch")
        .unique()
        .join(groups, on="run_id")
        .sort("group", "run_id", "epoch")
        .with_columns(pl.int_range(1, pl.len() + 1).over("group").cast(pl.Int64).alias("new"))
    )
    tables = {}
    for name in TABLES:
        if name == "runs":
            continue
        frame = getattr(runs, name)
        if frame.height == 0 or "epoch" not in frame.columns:
            tables[name] = frame
            continue
        tables[name] = (
            frame.join(attempts, on=["run_id", "epoch"], how="left", nulls_equal=True)
            .with_columns(
                pl.col("group").alias("run_id"),
                pl.col("new").alias("epoch"),
                pl.lit(None, dtype=pl.Int64).alias("attempt_key"),  # keyed anew, per group
            )
            .drop("group", "new")
        )
    table = runs.runs.join(groups, on="run_id")
    first = [c for c in table.columns if c not in {"run_id", "group", "started_at", "task_count"}]
    merged = (
        table.sort("started_at", nulls_last=False)
        .group_by("group", maintain_order=True)
        .agg(
            pl.col(first).first(),
            pl.col("started_at").last(),
            pl.col("task_count").sum(),
        )
        .rename({"group": "run_id"})
        .select(runs.runs.columns)
        .sort("run_id")
    )
    return Runs(runs=merged, **tables)


def colours(labels: list[str]) -> list[str]:
    """The colour of each group label, by its place in sorted order (fixed palette).

    Example:
        >>> colours(["n", "m"])
        ['#F58518', '#4C78A8']
    """
    rank = {name: i for i, name in enumerate(sorted(set(labels)))}
    return [PALETTE[rank[name] % len(PALETTE)] for name in labels]


def suite(runs: Runs, *, guidance: bool = False, dataset: str | None = None) -> Runs:
    """The runs one notebook analyses: one dataset, with guidance versions or without.

    A notebook that mixes the 59-task bash suite with the notes scenarios compares
    unlike things, so each notebook picks its suite: runs made without guidance (or,
    with ``guidance=True``, the runs made with a guidance version), of ``dataset``
    (default: the dataset with the most such runs, then the most tasks).

    Example:
        >>> runs = pl.DataFrame({"run_id": ["a", "b", "c"], "dataset": ["bash", "bash", "notes"],
        ...     "guidance": [None, None, "v1"], "task_count": [59, 59, 6]})
        >>> some = Runs.empty()
        >>> some.runs = runs
        >>> suite(some).runs.get_column("run_id").to_list()
        ['a', 'b']
        >>> some = Runs.empty()
        >>> some.runs = runs
        >>> suite(some, guidance=True).runs.get_column("run_id")[0]
        'c'
    """
    guided = pl.col("guidance").is_not_null()
    candidates = runs.runs.filter(guided if guidance else ~guided)
    if dataset is None and candidates.height:
        ranked = (
            candidates.group_by("dataset")
            .agg(pl.len().alias("n"), pl.col("task_count").sum().alias("tasks"))
            .sort("n", "tasks", "dataset", descending=[True, True, False], nulls_last=True)
        )
        dataset = ranked.get_column("dataset")[0]
    ids = candidates.filter(pl.col("dataset").eq_missing(dataset)).get_column("run_id")
    return runs.filter(pl.col("run_id").is_in(ids.implode()))
