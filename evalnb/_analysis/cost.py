"""Dollar cost of task attempts from token counts and a user-editable price table.

Prices live in ``data/prices.yaml``, shipped with the package (US dollars per million
tokens, with the date each was taken and its source). A model without an entry has an
unknown cost: null, with a warning naming it, never 0. Offline agents (reference,
scripted, simulated, replay) cost 0 only through an explicit ``free: true`` entry.

Per task attempt, with token counts from the tasks table: ``cache_read_tokens`` and
``cache_write_tokens`` are its calls' sums (:func:`evalnb._store.tables.with_call_figures`),
or the per-task totals of a source that records only those (a mira case); absent
counts are 0. ``total_input_tokens`` is the whole
prompt, cache included (see :class:`~evalnb.records.LLMCall`), so::

    uncached = total_input_tokens - cache_read - cache_write
    cost_usd = (uncached * input + cache_read * cached_input
                + cache_write * (cache_write price or input) + total_output_tokens * output) / 1e6

Where the provider charges more for some calls, a price says so, and the attempt's
cost adds the difference per LLM call (from the ``llm_calls`` rows):

- ``cache_write_1h``: 1-hour cache writes (a call's ``cache_write_1h_tokens``, part of
  its cache writes) at this price instead of ``cache_write``;
- ``long_context`` (``above`` and its own rates): a call whose whole prompt
  (``input_tokens``) is above ``above`` tokens is charged at these rates, every token
  of it, input and output (rates it does not list stay the base ones).

A cost the source recorded is the task's cost: the ``recorded_cost_usd`` column
(Claude Code's ``total_cost_usd``, onetool-bench's per-row ``cost_usd``, mira's
``usage.cost_usd``, llm-tool-test's ``cost_estimate_usd``/``cost_usd``; a recorded
0.0 included) is its ``cost_usd``; prices fill in only the tasks without one.
``cost_source`` says which it is (``recorded`` or ``prices``), and both figures are
shown: :func:`task_cost` gives ``recorded_cost_usd`` and ``priced_cost_usd`` (what the
price table says) beside it, and a run's summary (:func:`run_costs`) its
``recorded_cost_usd`` (the part of its ``cost_usd`` the source recorded) and its
``priced_cost_usd`` (every attempt at the price table's figure).

Example:
    >>> prices = load_prices()
    >>> price_for("anthropic/claude-haiku-4-5", "anthropic", prices).output
    5.0
    >>> price_for("persona", "sim", prices).free
    True
"""

from __future__ import annotations

import datetime as dt
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import polars as pl
from pydantic import ConfigDict, Field, field_validator, model_validator

from evalnb._analysis.runs import Runs
from evalnb._resources import data_path
from evalnb._store.tables import KEYS, RUN_KEY
from evalnb.errors import MissingPriceWarning, warn
from evalnb.records.base import Record

DEFAULT_PRICES = data_path("prices.yaml")
"""The price table shipped inside the package."""

_RATES = ("input", "output", "cached_input")
_TIER_RATES = (*_RATES, "cache_write", "cache_write_1h")


class LongContext(Record):
    """The rates of a call whose prompt is above ``above`` tokens (USD per million)."""

    model_config = ConfigDict(extra="forbid")

    above: int = Field(gt=0)
    input: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    cache_write_1h: float | None = Field(default=None, ge=0)


class Price(Record):
    """One model's prices in USD per million tokens (or ``free: true``)."""

    model_config = ConfigDict(extra="forbid")

    free: bool = False
    input: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    cache_write_1h: float | None = Field(default=None, ge=0)
    long_context: LongContext | None = None
    as_of: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}(-\d{2})?$")
    source: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _no_input_includes_cached(cls, data: object) -> object:
        if isinstance(data, dict) and "input_includes_cached" in data:
            raise ValueError(
                "input_includes_cached is no longer used (input token counts always include "
                "cached tokens now): remove it"
            )
        return data

    @field_validator("as_of", mode="before")
    @classmethod
    def _date_to_text(cls, value: object) -> object:
        return value.isoformat() if isinstance(value, dt.date) else value

    @model_validator(mode="after")
    def _priced_or_free(self) -> Price:
        rates = {name: getattr(self, name) for name in (*_TIER_RATES, "long_context")}
        if self.free and any(v is not None for v in rates.values()):
            raise ValueError("a free entry must not list prices")
        if not self.free:
            missing = [name for name in (*_RATES, "as_of") if getattr(self, name) is None]
            if missing:
                raise ValueError(f"missing {', '.join(missing)} (or set free: true)")
        return self


class Prices(Record):
    """The price table: ``models`` maps a model name (or ``*`` pattern) to its :class:`Price`."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, Price]

    @field_validator("models")
    @classmethod
    def _unique_names(cls, models: dict[str, Price]) -> dict[str, Price]:
        seen: dict[str, str] = {}
        for key, price in models.items():
            for name in (key, *price.aliases):
                if name in seen and seen[name] != key:
                    raise ValueError(f"name {name!r} is used by both {seen[name]!r} and {key!r}")
                seen[name] = key
        return models


def load_prices(path: str | Path | None = None) -> Prices:
    """Load and validate a price table (default: the shipped ``data/prices.yaml``).

    Raises :class:`evalnb.errors.InputError` naming file, line and field.

    Example:
        >>> {"claude-haiku-4-5", "gpt-5.2"} <= set(load_prices().models)
        True
    """
    from evalnb._formats.yamlio import load_model  # YAML loads only when prices are read

    return load_model(DEFAULT_PRICES if path is None else path, Prices)


@cache
def _shipped_prices() -> Prices:
    """The shipped price table, read once per process: what the figures price with when
    given no table (only read, never handed out, so no caller can change it)."""
    return load_prices()


def price_for(model: str, provider: str | None, prices: Prices) -> Price | None:
    """The price entry of ``model`` (run by ``provider``), or None when it has none.

    Tried in order: the model name, ``provider/model``, the name without a
    ``provider/`` prefix; exact names and aliases first, then ``*`` patterns in
    file order.

    Example:
        >>> p = Prices(models={"m": Price(input=1, output=2, cached_input=0.5,
        ...     as_of="2026-02", source="s", aliases=["acme/m"])})
        >>> price_for("m", None, p).input, price_for("x/m", "x", p).input
        (1.0, 1.0)
        >>> price_for("other", "acme", p) is None
        True
    """
    names = [model]
    if provider:
        names.append(f"{provider}/{model}")
    if "/" in model:
        names.append(model.split("/", 1)[1])
    entries = [(key, price, [key, *price.aliases]) for key, price in prices.models.items()]
    for name in names:
        for _key, price, labels in entries:
            if name in labels:
                return price
    for name in names:
        for _key, price, labels in entries:
            if any("*" in label and fnmatchcase(name, label) for label in labels):
                return price
    return None


def task_cost(runs: Runs, prices: Prices | None = None) -> pl.DataFrame:
    """Cost in USD of every task attempt: keys, token counts, ``cost_usd``, ``cost_source``,
    ``recorded_cost_usd`` and ``priced_cost_usd``.

    ``cost_usd`` is the source's own ``recorded_cost_usd`` where there is one
    (``cost_source`` "recorded"), else ``priced_cost_usd``, priced from the tokens
    ("prices"). A priced cost is null for a model without a price entry (one warning
    lists such models, when a task needs the price) and for a task whose token counts
    were not recorded.

    Example:
        >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb._store.tables import tables_from_records
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...     trace=AgentTrace(total_input_tokens=2_000_000, total_output_tokens=100_000),
        ...     score=TaskScore(task_id="t"))
        >>> runs = Runs(**tables_from_records(
        ...     RunMeta(run_id="r", provider="anthropic", model="claude-haiku-4-5"), [rec]))
        >>> task_cost(runs).get_column("cost_usd").to_list()  # 2 x $1 + 0.1 x $5
        [2.5]
    """
    columns = [*KEYS, "total_input_tokens", "cache_read_tokens", "cache_write_tokens"]
    return (
        _attempt_costs(runs, prices, KEYS)
        .select(
            *columns,
            "total_output_tokens",
            "cost_usd",
            "cost_source",
            "recorded_cost_usd",
            "priced_cost_usd",
        )
        .collect()
    )


_CACHE = ("cache_read_tokens", "cache_write_tokens")
_TOKENS = ("total_input_tokens", "total_output_tokens", *_CACHE)


def _priced(suffix: str = "") -> pl.Expr:
    """The cost of token counts (one attempt's, or a run's sums: the token columns named
    with ``suffix``) at the joined price columns."""
    inp, out, read, write = (pl.col(c + suffix) for c in _TOKENS)
    return (
        pl.when(pl.col("_free"))
        .then(pl.lit(0.0))
        .otherwise(
            (
                (inp - read - write) * pl.col("_input")
                + read * pl.col("_cached_input")
                + write * pl.coalesce("_cache_write", "_input")
                + out * pl.col("_output")
            )
            / 1e6
        )
    )


def _attempt_costs(runs: Runs, prices: Prices | None, keys: list[str]) -> pl.LazyFrame:
    """:func:`task_cost` as a lazy frame with ``attempt_key`` and the columns ``keys``.

    Reads only the token columns of the tasks scan (one row per attempt).
    """
    table, recorded = _run_prices(runs, prices)
    tokens = (
        runs.scan("tasks")
        .select(*keys, "attempt_key", *_TOKENS, recorded.alias("_rec"))
        .with_columns(RUN_KEY, *(pl.col(c).fill_null(0) for c in _CACHE))
        .join(table, on="run_key", how="left", maintain_order="left")
        .join(_call_extras(runs, table), on="attempt_key", how="left", maintain_order="left")
    )
    priced = _priced() + pl.col("_extra").fill_null(0.0)
    return tokens.with_columns(
        pl.coalesce("_rec", priced).alias("cost_usd"),
        pl.col("_rec").alias("recorded_cost_usd"),
        priced.alias("priced_cost_usd"),
        pl.when(pl.col("_rec").is_not_null())
        .then(pl.lit("recorded"))
        .when(_priced().is_not_null())
        .then(pl.lit("prices"))
        .alias("cost_source"),
    )


def _run_prices(runs: Runs, prices: Prices | None) -> tuple[pl.LazyFrame, pl.Expr]:
    """Each run's price (``run_key`` and the ``_``-prefixed price columns), and the
    expression of an attempt's recorded cost (null where there is none). Warns once
    about models without a price among runs with an attempt that needs one."""
    prices = _shipped_prices() if prices is None else prices
    rows = runs.runs.select("run_key", "model", "provider").rows()
    price = {(m, p): price_for(m, p, prices) for m, p in {(m, p) for _, m, p in rows}}
    found = [(run_key, model, price[model, provider]) for run_key, model, provider in rows]
    has_recorded = "recorded_cost_usd" in runs.scan("tasks").collect_schema().names()
    unknown_runs = {run_key for run_key, _, p in found if p is None}
    if unknown_runs and has_recorded:  # a recorded cost needs no price
        unpriced = pl.col("recorded_cost_usd").is_null()
        unknown_runs &= set(
            runs.scan("tasks").filter(unpriced).select(RUN_KEY.unique()).collect().to_series()
        )
    unknown = sorted({m for run_key, m, p in found if run_key in unknown_runs})
    if unknown:
        warn(
            f"no price for model(s) {', '.join(unknown)}: cost_usd is null "
            f"(add them to {DEFAULT_PRICES.name})",
            MissingPriceWarning,
        )
    table = _price_table(
        pl.Series("run_key", [run_key for run_key, _, _ in found], pl.Int64),
        [p for _, _, p in found],
    ).lazy()
    recorded = (
        pl.col("recorded_cost_usd").cast(pl.Float64)
        if has_recorded
        else pl.lit(None, dtype=pl.Float64)
    )
    return table, recorded


def _price_table(key: pl.Series, found: list[Price | None]) -> pl.DataFrame:
    """The price of each ``key`` value as ``_``-prefixed columns (``_free``, the rates,
    ``_above`` and the ``_long_`` rates; nulls where ``found`` has no price)."""
    long = [p.long_context if p else None for p in found]
    return pl.DataFrame(
        {
            key.name: key,
            **{
                f"_{f}": [getattr(p, f) if p else None for p in found]
                for f in ("free", *_TIER_RATES)
            },
            "_above": [lc.above if lc else None for lc in long],
            **{f"_long_{f}": [getattr(lc, f) if lc else None for lc in long] for f in _TIER_RATES},
        },
        schema_overrides={
            **{f"_{f}": pl.Float64 for f in _TIER_RATES},
            **{f"_long_{f}": pl.Float64 for f in _TIER_RATES},
            "_above": pl.Int64,
            "_free": pl.Boolean,
        },
    )


def run_costs(runs: Runs, prices: Prices | None = None) -> pl.LazyFrame:
    """Per run (``run_key``): total cost in USD (``cost_usd``, null when any task's cost
    is unknown), the part of it the source recorded (``recorded_cost_usd``, null
    when no task has a recorded cost), and what the price table says for every task,
    recorded or not (``priced_cost_usd``, shown beside a recorded cost; null when the
    model has no price or a task lacks its token counts; ``cost_usd`` when nothing was
    recorded).

    The total is each task's :func:`task_cost` summed, in a way that does not depend on
    row order: the recorded costs are summed in sorted order, and the other tasks'
    token counts are summed first (integers, exact) and priced once, at the run's
    price (``priced_cost_usd`` likewise, over all tasks). Lazy, so that
    :func:`evalnb._analysis.summary.summary` collects it with its other per-run figures
    in one pass.

    Example:
        >>> from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
        >>> from evalnb._store.tables import tables_from_records
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
        ...     trace=AgentTrace(total_input_tokens=2_000_000, total_output_tokens=100_000),
        ...     score=TaskScore(task_id="t"))
        >>> runs = Runs(**tables_from_records(
        ...     RunMeta(run_id="r", provider="anthropic", model="claude-haiku-4-5"), [rec, rec]))
        >>> run_costs(runs).collect().get_column("cost_usd").to_list()
        [5.0]
    """
    table, recorded = _run_prices(runs, prices)
    priced = pl.col("_rec").is_null()
    # a task to price without its token counts has an unknown cost (unless free)
    untold = pl.any_horizontal(pl.col(_TOKENS[:2]).is_null())
    token_sums = (
        runs.scan("tasks")
        .select(RUN_KEY, "attempt_key", *_TOKENS, recorded.alias("_rec"))
        .join(_call_extras(runs, table), on="attempt_key", how="left")
        .group_by("run_key")
        .agg(
            (priced & untold).any().alias("_unknown"),
            untold.any().alias("_unknown_all"),
            priced.any().alias("_any_priced"),
            pl.col("_rec").drop_nulls().sort().cum_sum().last().alias("recorded_cost_usd"),
            *(pl.col(c).filter(priced).fill_null(0).sum() for c in _TOKENS),
            pl.col("_extra").filter(priced).fill_null(0.0).sort().sum(),
            *(pl.col(c).fill_null(0).sum().name.suffix("_all") for c in _TOKENS),
            pl.col("_extra").fill_null(0.0).sort().sum().name.suffix("_all"),
        )
    )
    priced_total = _priced() + pl.col("_extra")
    total = pl.col("recorded_cost_usd").fill_null(0.0) + pl.when(pl.col("_any_priced")).then(
        priced_total
    ).otherwise(0.0)
    return token_sums.join(table, on="run_key", how="left").select(
        "run_key",
        pl.when(~pl.col("_unknown") | pl.col("_free")).then(total).alias("cost_usd"),
        "recorded_cost_usd",
        pl.when(~pl.col("_unknown_all") | pl.col("_free"))
        .then(_priced("_all") + pl.col("_extra_all"))
        .alias("priced_cost_usd"),
    )


def judge_costs(runs: Runs, prices: Prices | None = None) -> pl.LazyFrame:
    """Per run (``run_key``): ``judge_cost_usd``, what its judges' calls cost, apart from
    the ``cost_usd`` of the model under test.

    Each judge's rating of an attempt (the tasks' ``judges`` column) holds its call's
    token counts (a count the provider did not report adds 0, as for the agent's
    calls). They are summed per judge (exact integers), priced once at that judge's
    price (:func:`price_for` of its ``judge_model``; the base rates: a judge prompt,
    its transcript cut at 60,000 characters, stays far below any long-context tier) and
    the judges' costs summed in sorted order. Null for a run without ratings, and when
    a judge has no price (one warning names such judges).

    Example:
        >>> import polars as pl
        >>> runs = Runs.empty()
        >>> runs.set_table("runs", pl.DataFrame({"run_id": ["r"], "model": ["m"]}))
        >>> ratings = [{"judge_model": "openai/gpt-4o-mini", "input_tokens": 1_000_000,
        ...             "output_tokens": 100_000},
        ...            {"judge_model": "sim/careful", "input_tokens": 5000, "output_tokens": 40}]
        >>> runs.set_table("tasks", pl.DataFrame({"run_id": ["r"], "model": ["m"],
        ...     "task_id": ["t"], "epoch": [1], "judge_model": ["openai/gpt-4o-mini"],
        ...     "judges": [ratings]}))
        >>> judge_costs(runs).collect().get_column("judge_cost_usd").to_list()  # $0.15 + $0.06
        [0.21]
    """
    rating = pl.col("judges").struct.field
    tokens = {
        "total_input_tokens": "input_tokens",
        "total_output_tokens": "output_tokens",
        **{c: c for c in _CACHE},
    }
    judged = runs.scan("tasks").filter(pl.col("judge_model").is_not_null())
    if not judged.select(pl.len()).collect().item():  # no ratings: leave the judges unread
        return pl.LazyFrame(schema={"run_key": pl.Int64, "judge_cost_usd": pl.Float64})
    sums = (
        judged.select(RUN_KEY, "judges")
        .explode("judges")
        .filter(pl.col("judges").is_not_null())
        .group_by("run_key", rating("judge_model"))
        .agg(rating(field).fill_null(0).sum().alias(name) for name, field in tokens.items())
        .collect()
    )
    judges = sorted(set(sums.get_column("judge_model")))
    prices = _shipped_prices() if prices is None else prices
    found = {judge: price_for(judge, None, prices) for judge in judges}
    unknown = [judge for judge, price in found.items() if price is None]
    if unknown:
        warn(
            f"no price for judge(s) {', '.join(unknown)}: judge_cost_usd is null "
            f"(add them to {DEFAULT_PRICES.name})",
            MissingPriceWarning,
        )
    table = _price_table(pl.Series("judge_model", judges, pl.Utf8), list(found.values()))
    cost = _priced().alias("_cost")
    return (
        sums.join(table, on="judge_model", how="left")
        .select("run_key", cost)
        .group_by("run_key")
        .agg(
            pl.when(pl.col("_cost").is_not_null().all())
            .then(pl.col("_cost").sort().sum())
            .alias("judge_cost_usd")
        )
        .lazy()
    )


def _call_extras(runs: Runs, table: pl.LazyFrame) -> pl.LazyFrame:
    """Per attempt (``attempt_key``), ``_extra``: what its LLM calls cost above the base
    rates, for 1-hour cache writes and long-context calls (module docstring); 0 for runs
    whose price has neither, and a call's missing count adds 0."""
    tiered = pl.col("_cache_write_1h").is_not_null() | pl.col("_above").is_not_null()
    if not table.select(tiered.any()).collect().item():  # no call to read
        return pl.LazyFrame(schema={"attempt_key": pl.Int64, "_extra": pl.Float64})
    tokens = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    calls = (
        runs.scan("llm_calls")
        .select("attempt_key", *tokens, "cache_write_1h_tokens")
        .with_columns(RUN_KEY, pl.col(*tokens, "cache_write_1h_tokens").fill_null(0))
        .join(table.filter(tiered), on="run_key", how="inner")
    )
    long = pl.col("input_tokens") > pl.col("_above").fill_null(2**62)
    rate = {f: pl.col(f"_{f}") for f in _TIER_RATES}
    rate["cache_write"] = pl.coalesce("_cache_write", "_input")
    rate["cache_write_1h"] = pl.coalesce("_cache_write_1h", rate["cache_write"])
    tier = {
        f: pl.when(long).then(pl.coalesce(f"_long_{f}", r)).otherwise(r) for f, r in rate.items()
    }
    write_1h, write = pl.col("cache_write_1h_tokens"), pl.col("cache_write_tokens")
    uncached = pl.col("input_tokens") - pl.col("cache_read_tokens") - write
    charged = (
        uncached * tier["input"]
        + pl.col("cache_read_tokens") * tier["cached_input"]
        + (write - write_1h) * tier["cache_write"]
        + write_1h * tier["cache_write_1h"]
        + pl.col("output_tokens") * tier["output"]
    )
    base = (
        uncached * rate["input"]
        + pl.col("cache_read_tokens") * rate["cached_input"]
        + write * rate["cache_write"]
        + pl.col("output_tokens") * rate["output"]
    )
    return calls.group_by("attempt_key").agg(((charged - base) / 1e6).sum().alias("_extra"))
