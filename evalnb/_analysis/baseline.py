"""The baseline: the runs the reports put side by side and compare in pairs.

spec 000's "Current Baseline" table has one column per model. With several runs of a
model, the reports (comparison.md's baseline and paired comparisons, report.html's paired
comparisons) use one run per *baseline key*: the model family
(:func:`evalnb._store.families.model_family`, so a dated snapshot joins its model), the
guidance version and whether the run was simulated, i.e. one run per label a report
prints ("claude-haiku-4-5 · v2 (simulated)"). Of a key's runs the latest is used:
the last by ``started_at`` as an instant (offsets such as Inspect's ``-04:00`` are
honoured; a time without an offset is UTC; a run with no or an unreadable start time
counts as the oldest; on equal times, the one loaded last wins). The runs keep the
order they were loaded in, and :func:`evalnb._analysis.compare.compare_all` pairs them in
that order, so both reports show the same pairs, each the same way round, with the same
Holm-adjusted p-values (report.html lists the first ten).

Example:
    >>> import polars as pl
    >>> table = pl.DataFrame({
    ...     "run_id": ["old", "snap", "v2", "sim"],
    ...     "model": ["haiku", "haiku-20251001", "haiku", "haiku"],
    ...     "model_family": ["haiku", "haiku", "haiku", "haiku"],
    ...     "guidance": [None, None, "v2", None],
    ...     "simulated": [False, False, False, True],
    ...     "started_at": ["2026-01-01", "2026-02-01", "2026-01-01", None]})
    >>> baseline_runs(table)
    ['snap', 'v2', 'sim']
"""

from __future__ import annotations

import datetime as dt

import polars as pl

BASELINE_KEY = ["model_family", "guidance", "simulated"]
"""The columns that tell baseline runs apart (see the module docstring)."""


def baseline_runs(table: pl.DataFrame) -> list[str]:
    """The run_ids of the baseline (the latest run of each :data:`BASELINE_KEY`), in
    ``table``'s order.

    ``table`` is the runs table (``runs.runs``) or :func:`evalnb._analysis.summary.summary`
    of it: rows with ``run_id``, ``model``, ``started_at`` and the key columns (a null
    ``model_family`` falls back to ``model``, a null ``simulated`` counts as not).

    Example:
        >>> from evalnb._analysis.runs import Runs
        >>> baseline_runs(Runs.empty().runs)
        []
    """
    return (
        table.with_columns(
            pl.coalesce("model_family", "model").alias("model_family"),
            pl.col("simulated").fill_null(False),
        )
        .with_row_index("_order")
        .with_columns(
            pl.Series("_at", [_instant(t) for t in table.get_column("started_at")], pl.Float64)
        )
        .sort("_at", maintain_order=True)
        .unique(BASELINE_KEY, keep="last", maintain_order=True)
        .sort("_order")
        .get_column("run_id")
        .to_list()
    )


def _instant(text: str | None) -> float:
    """``text`` (ISO 8601) as seconds since the epoch; unknown is the oldest possible.

    Example:
        >>> _instant("2025-05-12T20:28:13-04:00") > _instant("2025-05-13T00:00:00Z")
        True
    """
    try:
        moment = dt.datetime.fromisoformat(text or "")
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()
