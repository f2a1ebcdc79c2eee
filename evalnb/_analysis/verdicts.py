"""A task attempt's verdict in the tasks table: passed, scored, and its known scores.

Example:
    >>> frame = pl.DataFrame({"passed": [True, True, None], "error": [None, "boom", None]})
    >>> frame.select(PASSED.alias("passed"), SCORED.alias("scored")).rows()
    [(True, True), (False, True), (False, False)]
"""

from __future__ import annotations

import polars as pl

from evalnb._store.tables import Frame

PASSED = pl.col("passed").fill_null(False) & pl.col("error").is_null()
"""A task attempt passed: every check passed and it did not error."""

SCORED = pl.col("passed").is_not_null() | pl.col("error").is_not_null()
"""A task attempt has a verdict: its checks passed or failed, or it errored (a failure).
Without one (an Inspect sample no scorer scored, an onetool-bench row with result
``-``) it is unscored: counted in ``total_tasks`` and ``unscored_tasks``, outside the
pass rate."""


def known_scores(tasks: Frame) -> Frame:
    """The tasks table with NaN scores, maximum scores and rates made null (unknown).

    A NaN in either ``score`` or ``max_score`` makes both unknown: a score without
    its maximum (or the reverse) would skew the overall rate.
    """
    nan = pl.col("score").is_nan() | pl.col("max_score").is_nan()
    return tasks.with_columns(
        pl.when(~nan.fill_null(False)).then(pl.col(c)).alias(c) for c in ("score", "max_score")
    ).with_columns(pl.col("rate").fill_nan(None))
