"""``model_family``: one name for a model and its dated snapshots and provider prefixes.

Rules, applied in order to the ``model`` name:

1. a ``provider/`` prefix is dropped (``anthropic/claude-haiku-4-5``);
2. a snapshot suffix is dropped: ``-YYYYMMDD`` (Anthropic), ``-YYYY-MM-DD`` (OpenAI)
   or ``-latest``;
3. the result is looked up in :data:`FAMILY_ALIASES` (older spellings of the same
   model, such as ``claude-4-sonnet`` for ``claude-sonnet-4``).

So ``claude-haiku-4-5``, ``claude-haiku-4-5-20251001`` and
``anthropic/claude-haiku-4-5`` are all family ``claude-haiku-4-5``, while
``gpt-5.2`` and ``gpt-5.3-codex`` stay apart. Comparisons across dates (the trend
table) group runs by family.

Example:
    >>> import polars as pl
    >>> names = ["claude-haiku-4-5", "claude-haiku-4-5-20251001", "openai/gpt-4o-mini-2024-07-18"]
    >>> pl.select(model_family(pl.Series(names))).to_series().to_list()
    ['claude-haiku-4-5', 'claude-haiku-4-5', 'gpt-4o-mini']
"""

from __future__ import annotations

import polars as pl

FAMILY_ALIASES: dict[str, str] = {
    "claude-4-sonnet": "claude-sonnet-4",
    "claude-4-opus": "claude-opus-4",
    "claude-3-5-sonnet": "claude-sonnet-3-5",
    "claude-3-7-sonnet": "claude-sonnet-3-7",
}
"""Other spellings of a family name (after prefixes and snapshot dates are dropped)."""

_PREFIX = r"^[^/]+/"
_SNAPSHOT = r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$"


def model_family(model: pl.Expr | pl.Series) -> pl.Expr:
    """The family of each model name (see the module docstring), as a polars expression."""
    expr = model if isinstance(model, pl.Expr) else pl.lit(model)
    base = expr.str.replace(_PREFIX, "").str.replace(_SNAPSHOT, "")
    return base.replace(FAMILY_ALIASES).alias("model_family")
