"""Context an agent carries, peaks and compacts: per call and per attempt.

Spec 003's ``context_growth_avg`` is a straight slope from the first call to the last
(:func:`evalnb.analysis.metrics.context_growth`, unchanged); it hides the peak and the
drops where an agent compacts its history. Beside it, from the ``llm_calls`` rows:

- a call's context is its ``input_tokens`` (the whole prompt, cached or not);
- a call **drops** the context when its ``input_tokens`` is below the previous call's
  (both known), or when the source marks it ``compacted`` (Claude Code's
  ``compact_boundary``, Codex's ``compacted``: the history was summarised right before);
- per attempt: ``peak_context`` (the largest ``input_tokens``) and ``peak_call`` (its
  first call), ``drops`` and ``drop_calls`` (their call numbers), ``compactions`` (the
  calls marked ``compacted``), and ``tokens_reread``, the sum of ``input_tokens`` over
  the calls: every call re-reads its whole prompt, so this is what a long attempt pays
  for. Null when any call's count is unknown (a sum missing a call would understate it).

Example:
    >>> from evalnb.analysis.runs import Runs
    >>> context_peaks(Runs.empty()).columns[4:7]
    ['llm_call_count', 'peak_context', 'peak_call']
"""

from __future__ import annotations

import polars as pl

from evalnb.analysis.runs import AGGREGATE, Runs
from evalnb.store.tables import KEYS

DROPPED = pl.col("dropped")
"""Of :func:`context_calls`' rows: the call dropped the context."""


def context_calls(runs: Runs) -> pl.LazyFrame:
    """Per LLM call: keys, ``call_number``, ``input_tokens``, ``compacted`` and
    ``dropped`` (see the module docstring), in call order within each attempt.

    Example:
        >>> context_calls(Runs.empty()).collect().columns[-2:]
        ['compacted', 'dropped']
    """
    previous = pl.col("input_tokens").shift(1).over("attempt_key", order_by="call_number")
    return (
        runs.scan("llm_calls")
        .select(*KEYS, "attempt_key", "call_number", "input_tokens", "compacted")
        .sort("attempt_key", "call_number")
        .with_columns(
            (
                (pl.col("input_tokens") < previous).fill_null(False)
                | pl.col("compacted").fill_null(False)
            ).alias("dropped")
        )
    )


def context_peaks(runs: Runs) -> pl.DataFrame:
    """One row per task attempt with LLM calls: its peak, drops and tokens re-read.

    Columns: keys, ``llm_call_count``, ``peak_context``, ``peak_call``, ``drops``,
    ``drop_calls``, ``compactions``, ``tokens_reread`` (see the module docstring).

    Example:
        >>> from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb.store.tables import tables_from_records
        >>> calls = [LLMCall(call_number=i + 1, input_tokens=n, compacted=i == 3 or None)
        ...     for i, n in enumerate([1000, 5000, 9000, 2000, 4000])]
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...     trace=AgentTrace(llm_calls=calls), score=TaskScore(task_id="t"))
        >>> runs = Runs(**tables_from_records(RunMeta(run_id="r", provider="p", model="m"), [rec]))
        >>> context_peaks(runs).select("peak_context", "peak_call", "drop_calls",
        ...     "compactions", "tokens_reread").row(0)
        (9000, 3, [4], 1, 21000)
    """
    tokens = pl.col("input_tokens")
    return (
        context_calls(runs)
        .group_by(*KEYS, "attempt_key")
        .agg(
            pl.len().cast(pl.Int64).alias("llm_call_count"),
            tokens.max().alias("peak_context"),
            pl.col("call_number").filter(tokens == tokens.max()).min().alias("peak_call"),
            DROPPED.sum().cast(pl.Int64).alias("drops"),
            pl.col("call_number").filter(DROPPED).alias("drop_calls"),
            pl.col("compacted").fill_null(False).sum().cast(pl.Int64).alias("compactions"),
            pl.when(tokens.null_count() == 0).then(tokens.sum()).alias("tokens_reread"),
        )
        .sort("attempt_key")
        .drop("attempt_key")
        .collect(engine=AGGREGATE)
    )
