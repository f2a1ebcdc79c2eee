"""Intervals, paired tests and sample sizes for pass rates and weighted check rates.

Plain numeric functions (numpy and the standard library; no scipy):

- :func:`wilson` / :func:`wilson_expr`: the Wilson score interval of a proportion
  (pass rate, tool-call success rate), as numbers or as polars expressions.
- :func:`cluster_bootstrap_rate`: a percentile bootstrap interval of a ratio of sums
  (the spec-000 ``overall_rate``) that resamples whole tasks.
- :func:`mcnemar_exact`, :func:`newcombe_paired_diff`: paired comparison of two pass
  rates on the same tasks (exact test, and an interval for the difference).
- :func:`paired_bootstrap_diff`: mean paired difference with interval and p-value.
- :func:`tasks_needed`: how many tasks (or task x epoch pairs) a comparison needs.

Example:
    >>> lo, hi = wilson(19, 25)
    >>> round(lo, 3), round(hi, 3)
    (0.566, 0.885)
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import numpy as np


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    """The Wilson score interval ``(lo, hi)`` of ``successes / n``; ``(None, None)`` if n is 0.

    ``centre = (p + z²/2n) / (1 + z²/n)``,
    ``half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)``.

    Example:
        >>> [round(v, 4) for v in wilson(0, 10)]
        [0.0, 0.2775]
        >>> wilson(0, 0)
        (None, None)
    """
    if n == 0:
        return None, None
    return _wilson(successes, n, z)


def _wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_expr(
    successes: str | pl.Expr, n: str | pl.Expr, z: float = 1.96
) -> tuple[pl.Expr, pl.Expr]:
    """:func:`wilson` as two polars expressions ``(lo, hi)``; null where ``n`` is 0.

    Example:
        >>> df = pl.DataFrame({"k": [19, 0], "n": [25, 0]})
        >>> lo, hi = wilson_expr("k", "n")
        >>> df.select(lo.round(3).alias("lo"), hi.round(3).alias("hi")).rows()
        [(0.566, 0.885), (None, None)]
    """
    k = pl.col(successes) if isinstance(successes, str) else successes
    total = pl.col(n) if isinstance(n, str) else n
    p = k / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z / denom * (p * (1 - p) / total + z * z / (4 * total * total)).sqrt()
    valid = total > 0
    lo = pl.when(valid).then(pl.max_horizontal(centre - half, pl.lit(0.0)))
    hi = pl.when(valid).then(pl.min_horizontal(centre + half, pl.lit(1.0)))
    return lo, hi


def _resample_counts(counts: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """How often each distinct unit appears in each of ``n_boot`` resamples of all units.

    Drawing ``n`` units with replacement and counting them per distinct value is a
    multinomial draw, so ``(n_boot, K)`` counts replace a ``(n_boot, n)`` index matrix:
    the same distribution, far less work when values repeat (scores usually do). When
    most units are distinct (``n < 8 K``) drawing the indices and counting them is the
    cheaper route to the same distribution.
    """
    import numpy as np

    n, k = int(counts.sum()), counts.size
    if n >= 8 * k:
        return rng.multinomial(n, counts / n, size=n_boot)
    unit = np.repeat(np.arange(k), counts)[rng.integers(0, n, size=(n_boot, n))]
    unit += np.arange(n_boot)[:, None] * k
    return np.bincount(unit.ravel(), minlength=n_boot * k).reshape(n_boot, k)


def cluster_bootstrap_rate(
    scores: np.ndarray | list[float],
    max_scores: np.ndarray | list[float],
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap 95% interval of ``sum(scores) / sum(max_scores)``, resampling tasks.

    Each element is one cluster (a task; with several epochs, pass the task's sums
    over its epochs), so the interval reflects that checks within a task are not
    independent. Resamples whose ``max_scores`` sum to 0 are dropped. Returns
    ``(None, None)`` for no tasks or a zero total ``max_score``. The same seed gives
    the same interval.

    Example:
        >>> lo, hi = cluster_bootstrap_rate([4, 3, 0, 5], [4, 4, 4, 5])
        >>> lo <= 12 / 17 <= hi
        True
    """
    import numpy as np

    s = np.asarray(scores, dtype=float)
    m = np.asarray(max_scores, dtype=float)
    if s.size == 0 or m.sum() == 0:
        return None, None
    pairs, counts = np.unique(np.column_stack([s, m]), axis=0, return_counts=True)
    weights = _resample_counts(counts, n_boot, np.random.default_rng(seed))
    num, den = weights @ pairs[:, 0], weights @ pairs[:, 1]
    rates = num[den > 0] / den[den > 0]
    lo, hi = np.quantile(rates, [0.025, 0.975])
    return float(lo), float(hi)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts ``b`` and ``c``.

    Under the null each of the ``n = b + c`` discordant pairs goes either way with
    probability 1/2, so ``p = min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Bin(n, 1/2)``.
    The binomial tail is summed in log space (``log C(n, k)`` built by cumulative
    sums), which stays exact to ~1e-12 and fast for any ``n``.

    Example:
        >>> mcnemar_exact(1, 6)  # 2 * (C(7,0) + C(7,1)) / 2**7 = 16/128
        0.125
        >>> mcnemar_exact(0, 0)
        1.0
    """
    import numpy as np

    n, m = b + c, min(b, c)
    if n == 0:
        return 1.0
    k = np.arange(1, m + 1)
    log_comb = np.concatenate([[0.0], np.cumsum(np.log(n - k + 1) - np.log(k))])
    top = log_comb.max()
    log_tail = top + math.log(np.exp(log_comb - top).sum()) - n * math.log(2)
    return float(min(1.0, 2 * math.exp(log_tail)))


def newcombe_paired_diff(
    both: int, only_a: int, only_b: int, neither: int, z: float = 1.96
) -> tuple[float | None, float | None]:
    """Interval for ``p_a - p_b`` of two pass rates on the same tasks (Newcombe 1998, method 10).

    ``p_a = (both + only_a) / n`` and ``p_b = (both + only_b) / n``. With the Wilson
    limits ``l, u`` of each and ``phi`` the correlation of the 2x2 table (0 when a
    margin is empty): ``lo = d - sqrt((p_a-l_a)² - 2 phi (p_a-l_a)(u_b-p_b) + (u_b-p_b)²)``,
    ``hi = d + sqrt((u_a-p_a)² - 2 phi (u_a-p_a)(p_b-l_b) + (p_b-l_b)²)``. Unlike a
    bootstrap, it does not collapse to a point when no pair is discordant.

    Example:
        >>> lo, hi = newcombe_paired_diff(20, 0, 0, 5)
        >>> lo < 0 < hi
        True
        >>> newcombe_paired_diff(0, 0, 0, 0)
        (None, None)
    """
    n = both + only_a + only_b + neither
    if n == 0:
        return None, None
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    l_a, u_a = _wilson(both + only_a, n, z)
    l_b, u_b = _wilson(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins else 0.0
    d = p_a - p_b
    lo = d - math.sqrt(
        max(0.0, (p_a - l_a) ** 2 - 2 * phi * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2)
    )
    hi = d + math.sqrt(
        max(0.0, (u_a - p_a) ** 2 - 2 * phi * (u_a - p_a) * (p_b - l_b) + (p_b - l_b) ** 2)
    )
    return lo, hi


def paired_bootstrap_diff(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None, float | None, float | None]:
    """Mean paired difference ``mean(x - y)`` with a bootstrap interval and p-value.

    Pairs (tasks) are resampled together. The 95% interval is the percentile interval of
    the resampled means. The two-sided p-value tests ``mean difference = 0`` by
    shifting the bootstrap distribution to the null (Efron & Tibshirani 1993, §16.4):
    ``p = (1 + #{|mean* - diff| >= |diff|}) / (n_boot + 1)``. Returns four Nones for
    no pairs. The same seed gives the same result.

    Example:
        >>> diff, lo, hi, p = paired_bootstrap_diff([1.0, 1.0, 0.5, 1.0], [0.5, 1.0, 0.0, 0.5])
        >>> diff, lo <= diff <= hi, 0 < p <= 1
        (0.375, True, True)
    """
    import numpy as np

    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    if d.size == 0:
        return None, None, None, None
    values, counts = np.unique(d, return_counts=True)
    means = _resample_counts(counts, n_boot, np.random.default_rng(seed)) @ values / d.size
    diff = float(d.mean())
    lo, hi = np.quantile(means, [0.025, 0.975])
    extreme = np.abs(means - diff) >= abs(diff) - 1e-12
    p = (1 + int(extreme.sum())) / (n_boot + 1)
    return diff, float(lo), float(hi), p


def tasks_needed(
    p_a: float,
    p_b: float,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    discordant: float | None = None,
) -> int:
    """How many tasks (or task x epoch pairs) detect ``p_a`` vs ``p_b`` at ``alpha`` and ``power``.

    With ``z_a = Φ⁻¹(1 - alpha/2)``, ``z_b = Φ⁻¹(power)`` and ``d = p_a - p_b``:

    - ``paired=True`` (both models on the same tasks, McNemar test), Connor's (1987)
      formula ``n = (z_a sqrt(ψ) + z_b sqrt(ψ - d²))² / d²`` where ``ψ`` is the share
      of discordant tasks (one model passes, the other fails). Give ``discordant``
      when known (e.g. from a pilot run: ``(only_a + only_b) / n``); otherwise it is
      taken as ``p_a(1-p_b) + p_b(1-p_a)``, its value if the models' outcomes were
      independent, which is conservative when they tend to pass the same tasks.
    - ``paired=False`` (each model on its own tasks), the two-proportion normal
      approximation ``n = (z_a sqrt(2 p̄ q̄) + z_b sqrt(p_a q_a + p_b q_b))² / d²``
      per model, with ``p̄ = (p_a + p_b) / 2``.

    The result is rounded up.

    Example:
        >>> tasks_needed(0.9, 0.8, paired=False)  # the textbook 199 per group
        199
        >>> tasks_needed(0.9, 0.8, discordant=0.2)
        155
    """
    for name, value in (("p_a", p_a), ("p_b", p_b), ("alpha", alpha), ("power", power)):
        if not 0 < value < 1:
            raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    d = p_a - p_b
    if d == 0:
        raise ValueError("p_a equals p_b: no number of tasks detects a zero difference")
    z_a = NormalDist().inv_cdf(1 - alpha / 2)
    z_b = NormalDist().inv_cdf(power)
    if paired:
        psi = p_a * (1 - p_b) + p_b * (1 - p_a) if discordant is None else discordant
        if not abs(d) <= psi <= 1:
            raise ValueError(f"discordant share must lie in [|p_a - p_b|, 1], got {psi}")
        n = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - d * d)) ** 2 / (d * d)
    else:
        p_bar = (p_a + p_b) / 2
        n = (
            z_a * math.sqrt(2 * p_bar * (1 - p_bar))
            + z_b * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
        ) ** 2 / (d * d)
    return math.ceil(n - 1e-9)
