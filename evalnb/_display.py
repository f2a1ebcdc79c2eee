"""Numbers as people read them: one rendering per quantity, in every report, table and message.

``report.md``, ``report.html``, the notebook tables (:func:`evalnb._present.tables.show`),
the CLI, the story, the widgets, the charts' tooltips and the analysis' messages all
render their figures here, so a figure reads the same wherever it is shown:

==================== ============================ =======================================
quantity             function                     90 s, 12.3%, … as shown
==================== ============================ =======================================
missing value        :data:`MISSING`              ``–`` (an en dash, never an empty cell)
duration (ms)        :func:`duration`             ``850 ms``, ``90.0 s``, ``4.2 min``
rate, share          :func:`rate`                 ``12.3%``
rate with interval   :func:`rate_interval`        ``12.3% [8.0–17.1%]``
difference of rates  :func:`points`               ``+4.2 pp``
count                :func:`count`                ``1,234``
p-value              :func:`p_value`              ``0.0123``
tokens               :func:`tokens`               ``850``, ``12K``, ``1.2M``
cost (USD)           :func:`cost`                 ``$1.50``, ``$0.0042`` below a cent
other number         :func:`number`               ``2``, ``2.5``, ``0.33``
==================== ============================ =======================================

Durations are in seconds below two minutes (so 90 s reads "90.0 s", not "1.5 min").
An interval that reaches below zero (a difference's can) reads "-12.0% [-30.0% to 5.0%]".
A NaN is missing, as null is. Charts format in the browser with d3's format strings:
:data:`RATE_FORMAT` is :func:`rate`'s and :data:`P_VALUE_FORMAT` :func:`p_value`'s.

Example:
    >>> duration(90_000), rate(0.123), rate(None), rate_interval(0.5, 0.2, 0.8)
    ('90.0 s', '12.3%', '–', '50.0% [20.0–80.0%]')
"""

from __future__ import annotations

import math
from typing import TypeGuard

MISSING = "–"
"""A value that is not known (null or NaN)."""

RATE_FORMAT = ".1%"
""":func:`rate` as a d3 format string, for altair's tooltips and axes."""

P_VALUE_FORMAT = ".3g"
""":func:`p_value` as a d3 format string."""


def known(value: float | None) -> TypeGuard[float]:
    """Whether ``value`` is known: neither null nor NaN.

    Example:
        >>> known(None), known(float("nan")), known(0.0)
        (False, False, True)
    """
    return value is not None and not math.isnan(value)


def duration(ms: float | None) -> str:
    """A duration in milliseconds: ms below 1 s, seconds below 2 min, else minutes.

    Example:
        >>> duration(850), duration(12_340), duration(252_000), duration(None)
        ('850 ms', '12.3 s', '4.2 min', '–')
    """
    if not known(ms):
        return MISSING
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def rate(value: float | None) -> str:
    """A rate or share (0..1) as a percentage with one decimal.

    Example:
        >>> rate(0.123), rate(1.0), rate(None)
        ('12.3%', '100.0%', '–')
    """
    return MISSING if not known(value) else f"{value:.1%}"


def rate_interval(value: float | None, lo: float | None, hi: float | None) -> str:
    """A rate with its 95% interval; the rate alone when the interval is unknown.

    Example:
        >>> rate_interval(0.625, 0.401, 0.802), rate_interval(0.5, None, None)
        ('62.5% [40.1–80.2%]', '50.0%')
        >>> rate_interval(-0.12, -0.3, 0.05)
        '-12.0% [-30.0% to 5.0%]'
    """
    if not known(value):
        return MISSING
    if not (known(lo) and known(hi)):
        return rate(value)
    if lo < 0:
        return f"{value:.1%} [{lo:.1%} to {hi:.1%}]"
    return f"{value:.1%} [{lo * 100:.1f}–{hi:.1%}]"


def number_interval(value: float | None, lo: float | None, hi: float | None) -> str:
    """A figure that is not a rate (Krippendorff's alpha, from -1 to 1) with its 95%
    interval; the figure alone when the interval is unknown.

    Example:
        >>> number_interval(0.62, 0.4, 0.8), number_interval(-0.1, None, None)
        ('0.62 [0.4 to 0.8]', '-0.1')
    """
    if not (known(value) and known(lo) and known(hi)):
        return number(value)
    return f"{number(value)} [{number(lo)} to {number(hi)}]"


def points(diff: float | None) -> str:
    """A difference of two rates in percentage points, signed.

    Example:
        >>> points(0.042), points(-0.1), points(None)
        ('+4.2 pp', '-10.0 pp', '–')
    """
    return MISSING if not known(diff) else f"{diff * 100:+.1f} pp"


def p_value(p: float | None) -> str:
    """A p-value, to three significant digits.

    Example:
        >>> p_value(0.012345), p_value(1.0), p_value(None)
        ('0.0123', '1', '–')
    """
    return MISSING if not known(p) else f"{p:.3g}"


def count(n: int | None) -> str:
    """A count, with thousands separated.

    Example:
        >>> count(1234), count(0), count(None)
        ('1,234', '0', '–')
    """
    return MISSING if n is None else f"{n:,}"


def tokens(n: int | float | None) -> str:
    """A token count, rounded: as is below 1,000, in thousands below a million, else millions.

    Example:
        >>> tokens(850), tokens(12_345), tokens(1_234_567), tokens(None)
        ('850', '12K', '1.2M', '–')
    """
    if not known(n):
        return MISSING
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1000:.0f}K" if n >= 1000 else f"{n:.0f}"


def cost(usd: float | None) -> str:
    """A cost in US dollars: cents, or four decimals below a cent.

    Example:
        >>> cost(1.5), cost(1234.5), cost(0.0042), cost(0), cost(None)
        ('$1.50', '$1,234.50', '$0.0042', '$0.00', '–')
    """
    if not known(usd):
        return MISSING
    return f"${usd:,.2f}" if abs(usd) >= 0.01 or usd == 0 else f"${usd:.4f}"


def number(value: float | None, digits: int = 2) -> str:
    """Any other number: whole numbers as integers, else at most ``digits`` decimals.

    Example:
        >>> number(2.0), number(2.5), number(1 / 3), number(1 / 3, 1), number(None)
        ('2', '2.5', '0.33', '0.3', '–')
    """
    if not known(value):
        return MISSING
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")
