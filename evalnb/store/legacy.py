"""Read run folders written before evalnb recorded ``cache_write_tokens``, or before
command patterns were in the Rust dialect (:func:`upgrade_command_pattern`).

Such folders name the cache-write count ``cache_creation_tokens``, and their
``input_tokens`` for provider ``anthropic`` (evalnb's Anthropic provider and the
Claude Code importer) is the API's uncached part only. Today ``input_tokens`` is the
whole prompt (see :class:`~evalnb.records.LLMCall`), so on reading such a folder:

- ``cache_creation_tokens`` becomes ``cache_write_tokens``;
- for provider ``anthropic``, cache reads and writes are added to each call's
  ``input_tokens`` (a call without an input count keeps it unknown and adds nothing;
  ``cumulative_input`` is unknown from it on)
  and to the task's ``total_input_tokens``, and ``cumulative_input``
  and the task's figures summed from its calls
  (:func:`~evalnb.store.tables.with_llm_call_figures`) are recomputed;
- other providers' counts already were the whole prompt (OpenAI's ``prompt_tokens``)
  or had no cache counts, and are kept.

Two readers apply this: :func:`upgrade_record` to each ``task_finished`` record of
``events.jsonl`` as it is read (a resumed run may mix old and new lines; an LLM call
is old when it names ``cache_creation_tokens``), and :func:`upgrade_token_counts` to
the parquet tables of an old complete run or an older ``report.json``. Folders that
never recorded cache counts load with nulls in both cache columns.

Example:
    >>> import polars as pl
    >>> calls = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1],
    ...     "call_number": [1], "input_tokens": [3], "cache_read_tokens": [70_000],
    ...     "cache_creation_tokens": [400]})
    >>> tasks = pl.DataFrame({"run_id": ["r"], "model": ["m"], "task_id": ["t"], "epoch": [1],
    ...     "total_input_tokens": [3]})
    >>> runs = pl.DataFrame({"run_id": ["r"], "provider": ["anthropic"]})
    >>> new = upgrade_token_counts({"runs": runs, "llm_calls": calls, "tasks": tasks})
    >>> new["llm_calls"].select("input_tokens", "cache_write_tokens").collect().row(0)
    (70403, 400)
    >>> new["tasks"].select("total_input_tokens", "base_context").collect().row(0)
    (70403, 70403)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from evalnb.records import cumulative_inputs
from evalnb.records.scenario import default_command_pattern
from evalnb.store.tables import KEYS, with_llm_call_figures

LEGACY_COLUMN = "cache_creation_tokens"
"""The name ``cache_write_tokens`` had before."""

UNCACHED_INPUT_PROVIDERS = ("anthropic",)
"""Providers whose legacy ``input_tokens`` left the cached part out."""


def is_legacy(llm_calls: pl.DataFrame | pl.LazyFrame) -> bool:
    """True when the LLM-call table (or its scan) still has the legacy cache column.

    Example:
        >>> is_legacy(pl.DataFrame({"cache_write_tokens": [1]}))
        False
    """
    return LEGACY_COLUMN in llm_calls.collect_schema().names()


def upgrade_token_counts(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
) -> dict[str, pl.DataFrame | pl.LazyFrame]:
    """The tables with legacy token columns brought to today's meaning (see the module).

    The provider of each run comes from the ``runs`` table. ``llm_calls`` comes back as
    a LazyFrame (a scan stays a scan), in its rows' order, and so does ``tasks`` when a
    run's tokens change; the other tables as they were given.
    """
    calls = tables["llm_calls"].lazy()
    if LEGACY_COLUMN in calls.collect_schema().names():
        calls = calls.drop("cache_write_tokens", strict=False)
        calls = calls.rename({LEGACY_COLUMN: "cache_write_tokens"})
    uncached = (
        tables["runs"].lazy().filter(pl.col("provider").is_in(UNCACHED_INPUT_PROVIDERS)).collect()
    )
    if uncached.height == 0:
        return {**tables, "llm_calls": calls}
    ids = uncached.get_column("run_id").implode()
    cached = pl.col("cache_read_tokens").fill_null(0) + pl.col("cache_write_tokens").fill_null(0)

    def running(values: pl.Expr) -> pl.Expr:
        return values.cum_sum().over(KEYS, order_by="call_number")

    calls = (
        calls.with_columns(
            pl.when(pl.col("run_id").is_in(ids) & pl.col("input_tokens").is_not_null())
            .then(cached)
            .otherwise(0)
            .alias("_cached")
        )
        .with_columns(pl.col("input_tokens") + pl.col("_cached"))
        .with_columns(
            # spec 003's running total, unknown from the first unknown count on
            # (:func:`evalnb.records.cumulative_inputs`)
            pl.when(running(pl.col("input_tokens").is_null()) == 0)
            .then(running(pl.col("input_tokens")))
            .alias("cumulative_input")
        )
    )
    per_task = calls.group_by(KEYS).agg(pl.col("_cached").sum())
    tasks = (
        tables["tasks"]
        .lazy()
        .join(per_task, on=KEYS, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col("total_input_tokens") + pl.col("_cached").fill_null(0))
        .drop("_cached")
    )
    calls = calls.drop("_cached")
    return {**tables, "llm_calls": calls, "tasks": with_llm_call_figures(tasks, calls)}


def upgrade_record(record: Any, provider: str) -> Any:
    """A ``task_finished`` record (parsed JSON) with its legacy LLM calls in today's meaning.

    For provider ``anthropic``, each call that names ``cache_creation_tokens`` gets its
    cache reads and writes added to ``input_tokens``, ``cumulative_input`` is the running
    total of the new counts (:func:`evalnb.records.cumulative_inputs`), and the
    additions are added to the trace's ``total_input_tokens``. The name itself is read as
    ``cache_write_tokens`` when the record is validated. Anything else, wrong types
    included, is returned as it was (validation then names what is wrong).

    Example:
        >>> old = {"trace": {"total_input_tokens": 3, "llm_calls": [{"input_tokens": 3,
        ...     "cache_read_tokens": 70, "cache_creation_tokens": 400, "cumulative_input": 3}]}}
        >>> new = upgrade_record(old, "anthropic")["trace"]
        >>> new["total_input_tokens"], new["llm_calls"][0]["input_tokens"]
        (473, 473)
        >>> upgrade_record(old, "openai") is old
        True
    """
    if provider not in UNCACHED_INPUT_PROVIDERS or not isinstance(record, dict):
        return record
    trace = record.get("trace")
    calls = trace.get("llm_calls") if isinstance(trace, dict) else None
    if not isinstance(trace, dict) or not isinstance(calls, list):
        return record
    if not any(isinstance(c, dict) and LEGACY_COLUMN in c for c in calls):
        return record
    added = 0
    new_calls = []
    for call in calls:
        if isinstance(call, dict) and LEGACY_COLUMN in call:
            parts = (call.get("cache_read_tokens"), call.get(LEGACY_COLUMN))
            cached = sum(p for p in parts if isinstance(p, int))
            if _plus(call, "input_tokens", 0):  # an unknown prompt stays unknown, adds nothing
                added += cached
                call = {**call, **_plus(call, "input_tokens", cached)}
        new_calls.append(call)
    if all(isinstance(c, dict) for c in new_calls):
        inputs = [c.get("input_tokens") for c in new_calls]
        known = [i if isinstance(i, int) and not isinstance(i, bool) else None for i in inputs]
        totals = cumulative_inputs(known)
        new_calls = [{**c, "cumulative_input": t} for c, t in zip(new_calls, totals, strict=True)]
    total = _plus(trace, "total_input_tokens", added)
    return {**record, "trace": {**trace, **total, "llm_calls": new_calls}}


def _plus(row: dict[str, Any], name: str, amount: int) -> dict[str, Any]:
    """``{name: row[name] + amount}`` when ``row[name]`` is an integer, else nothing."""
    value = row.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return {name: value + amount}
    return {}


_OLD_BOUNDARY = r"(?<![\w./-])"
"""The lookbehind evalnb's command patterns began with before the Rust dialect."""
_OLD_DEFAULT_END = r"(?![\w.-])(?:\s+([^\s;&|)]+))?"
"""How the old default command pattern ended (a lookahead)."""


def upgrade_command_pattern(pattern: str) -> str:
    """A command pattern recorded by an older evalnb (a run's ``command_pattern``) in
    today's Rust dialect: the lookbehind it began with (the bundled scenarios' and the
    default one's word boundary, now checked in code,
    :func:`~evalnb.scoring.commands.pattern_matches`) is dropped, and the old default
    pattern's lookahead end becomes today's
    (:func:`~evalnb.records.scenario.default_command_pattern`). Any other pattern is
    kept as it is.

    Example:
        >>> print(upgrade_command_pattern(r"(?<![\\w./-])notes\\s+(\\S+)"))
        notes\\s+(\\S+)
        >>> old = r"(?<![\\w./-])notes(?![\\w.-])(?:\\s+([^\\s;&|)]+))?"
        >>> from evalnb.records.scenario import default_command_pattern
        >>> upgrade_command_pattern(old) == default_command_pattern("notes")
        True
    """
    if not pattern.startswith(_OLD_BOUNDARY):
        return pattern
    pattern = pattern.removeprefix(_OLD_BOUNDARY)
    if pattern.endswith(_OLD_DEFAULT_END):  # the binary's name, as re.escape wrote it
        return default_command_pattern(re.sub(r"\\(.)", r"\1", pattern[: -len(_OLD_DEFAULT_END)]))
    return pattern
