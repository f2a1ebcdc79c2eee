"""Read run folders written before evalnb recorded ``cache_write_tokens``.

Such folders name the cache-write count ``cache_creation_tokens``, and their
``input_tokens`` for provider ``anthropic`` (evalnb's Anthropic provider and the
Claude Code importer) is the API's uncached part only. Today ``input_tokens`` is the
whole prompt (see :class:`~evalnb.records.LLMCall`), so on reading such a folder:

- ``cache_creation_tokens`` becomes ``cache_write_tokens``;
- for provider ``anthropic``, cache reads and writes are added to each call's
  ``input_tokens`` and to the task's ``total_input_tokens``, and ``cumulative_input``
  and the task's figures summed from its calls
  (:func:`~evalnb.store.tables.with_llm_call_figures`) are recomputed;
- other providers' counts already were the whole prompt (OpenAI's ``prompt_tokens``)
  or had no cache counts, and are kept.

Folders that never recorded cache counts load with nulls in both cache columns. The
same applies to the tables of an older ``report.json``.

Example:
    >>> import polars as pl
    >>> calls = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1],
    ...     "call_number": [1], "input_tokens": [3], "cache_read_tokens": [70_000],
    ...     "cache_creation_tokens": [400]})
    >>> tasks = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1],
    ...     "total_input_tokens": [3]})
    >>> runs = pl.DataFrame({"run_id": ["r"], "provider": ["anthropic"]})
    >>> new = upgrade_token_counts({"runs": runs, "llm_calls": calls, "tasks": tasks})
    >>> new["llm_calls"].select("input_tokens", "cache_write_tokens").row(0)
    (70403, 400)
    >>> new["tasks"].select("total_input_tokens", "base_context").row(0)
    (70403, 70403)
"""

from __future__ import annotations

import polars as pl

from evalnb.store.tables import KEYS, with_llm_call_figures

LEGACY_COLUMN = "cache_creation_tokens"
"""The name ``cache_write_tokens`` had before."""

UNCACHED_INPUT_PROVIDERS = ("anthropic",)
"""Providers whose legacy ``input_tokens`` left the cached part out."""


def is_legacy(llm_calls: pl.DataFrame) -> bool:
    """True when the LLM-call table still has the legacy cache column.

    Example:
        >>> is_legacy(pl.DataFrame({"cache_write_tokens": [1]}))
        False
    """
    return LEGACY_COLUMN in llm_calls.columns


def upgrade_token_counts(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The tables with legacy token columns brought to today's meaning (see the module).

    The provider of each run comes from the ``runs`` table.
    """
    calls = tables["llm_calls"]
    if LEGACY_COLUMN in calls.columns:
        calls = calls.drop([c for c in ("cache_write_tokens",) if c in calls.columns])
        calls = calls.rename({LEGACY_COLUMN: "cache_write_tokens"})
    runs = tables["runs"]
    uncached = runs.filter(pl.col("provider").is_in(UNCACHED_INPUT_PROVIDERS))
    if uncached.height == 0:
        return {**tables, "llm_calls": calls}
    ids = uncached.get_column("run_id").implode()
    cached = pl.col("cache_read_tokens").fill_null(0) + pl.col("cache_write_tokens").fill_null(0)
    calls = (
        calls.with_columns(
            pl.when(pl.col("run_id").is_in(ids)).then(cached).otherwise(0).alias("_cached")
        )
        .with_columns(pl.col("input_tokens") + pl.col("_cached"))
        .sort([*KEYS, "call_number"])
        .with_columns(pl.col("input_tokens").cum_sum().over(KEYS).alias("cumulative_input"))
    )
    per_task = calls.group_by(KEYS).agg(pl.col("_cached").sum())
    tasks = (
        tables["tasks"]
        .join(per_task, on=KEYS, how="left", nulls_equal=True)
        .with_columns(pl.col("total_input_tokens") + pl.col("_cached").fill_null(0))
        .drop("_cached")
    )
    calls = calls.drop("_cached")
    return {
        **tables,
        "llm_calls": calls,
        "tasks": with_llm_call_figures(tasks, calls),
    }
