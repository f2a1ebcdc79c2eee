"""Rates over task rows: Σy/Σm per group, with its 95% interval clustered by task.

Intervals treat the task as the unit of analysis (Miller 2024): a task's epochs, checks
and tool calls form one cluster (:func:`evalnb._analysis.stats.clustered_wilson`).

Example:
    >>> pl.DataFrame({"y": [1, 3], "m": [2, 0]}).select(ratio("y", "m")).to_series().to_list()
    [0.5, None]
"""

from __future__ import annotations

import polars as pl

from evalnb._analysis.runs import AGGREGATE
from evalnb._analysis.stats import (
    clustered_wilson_sums,
)


def ratio(num: str, den: str | pl.Expr) -> pl.Expr:
    """``num / den``, null where ``den`` is 0."""
    denominator = pl.col(den) if isinstance(den, str) else den
    return pl.when(denominator > 0).then(pl.col(num) / denominator)


def clustered_interval(
    rows: pl.DataFrame | pl.LazyFrame,
    by: list[str],
    y: str,
    m: str,
    name: str,
    *,
    counts: bool = False,
) -> pl.DataFrame:
    """Per group of ``by``: the task-clustered 95% interval ``name_lo``/``name_hi`` of Σy/Σm.

    ``rows`` has a ``task_id`` column; all rows of one task (its epochs, checks or
    tool calls) are summed into one cluster, then
    :func:`evalnb._analysis.stats.clustered_wilson_sums` gives each group's interval
    (null where the group's ``Σm`` is 0). Nulls in ``y``/``m`` count as 0.

    Example:
        >>> rows = pl.DataFrame({"run_id": ["r"] * 4, "task_id": ["a", "a", "b", "b"],
        ...     "ok": [1.0, 1.0, 0.0, 0.0], "n": [1.0] * 4})
        >>> out = clustered_interval(rows, ["run_id"], "ok", "n", "rate", counts=True)
        >>> [round(v, 3) for v in out.row(0)[1:]]  # two tasks, not four attempts
        [0.002, 0.998]
    """
    sums = cluster_sums(rows, by, {name: (y, m)}).collect(engine=AGGREGATE)
    return interval_of_sums(sums, by, name, counts=counts).collect()


def cluster_sums(
    rows: pl.DataFrame | pl.LazyFrame, by: list[str], rates: dict[str, tuple[str, str]]
) -> pl.LazyFrame:
    """Per group of ``by``, for each rate ``name: (y, m)``: its clusters ``name_k`` and the
    sums ``name_sy``, ``name_sm``, ``name_syy``, ``name_sym``, ``name_smm`` over the
    per-task cluster totals (see :func:`clustered_interval`); ``_tasks`` counts the
    group's tasks. The rows are grouped by task once for all the rates."""
    per_task = (
        rows.lazy()
        .group_by(*by, "task_id")
        .agg(
            pl.col(c).fill_null(0).sum().alias(f"{name}_{part}")
            for name, pair in rates.items()
            for part, c in zip("ym", pair, strict=True)
        )
    )
    sums = []
    for name in rates:
        yc, mc = pl.col(f"{name}_y"), pl.col(f"{name}_m")
        sums += [
            (mc > 0).sum().alias(f"{name}_k"),
            yc.sum().alias(f"{name}_sy"),
            mc.sum().alias(f"{name}_sm"),
            (yc * yc).sum().alias(f"{name}_syy"),
            (yc * mc).sum().alias(f"{name}_sym"),
            (mc * mc).sum().alias(f"{name}_smm"),
        ]
    return per_task.group_by(by).agg(pl.len().alias("_tasks"), *sums)


def interval_of_sums(sums: pl.DataFrame, by: list[str], name: str, *, counts: bool) -> pl.LazyFrame:
    """``name_lo``/``name_hi`` per group from the sums of rate ``name`` (:func:`cluster_sums`)."""
    parts = (sums.get_column(f"{name}_{c}") for c in ("k", "sy", "sm", "syy", "sym", "smm"))
    limits = clustered_wilson_sums(*parts, counts=counts)
    return pl.concat(
        [sums.select(by), limits.select(pl.all().name.prefix(f"{name}_"))], how="horizontal"
    ).lazy()
