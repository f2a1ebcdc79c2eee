"""Intervals, paired tests and sample sizes, with the task as the unit of analysis.

Following Miller (2024), "Adding Error Bars to Evals": attempts of one task (its epochs,
its checks, its tool calls) are not independent, so every interval is clustered by
task and every paired test works on per-task figures. Plain numeric functions: the
intervals and the paired tests with numpy (the intervals of many groups returned as a
polars frame), Student's t quantiles and the binomial law with scipy (numpy and scipy
imported inside the functions that use them, so ``import evalnb`` loads neither):

- :func:`wilson`: the Wilson score interval of a proportion (Newcombe's building block).
- :func:`agresti_coull`: Agresti and Coull's interval of a proportion.
- :func:`t_quantile`: Student's t quantile.
- :func:`clustered_wilson`: the interval of a ratio of per-task sums
  (``sum(y) / sum(m)``): Agresti-Coull's form on the effective sample size of the
  clustered data, with a pseudo-task and a small-sample cluster correction
  (:func:`clustered_wilson_sums` is the same from per-group sums, vectorised).
- :func:`mcnemar_exact`, :func:`newcombe_paired_diff`: one attempt per task, pass/fail:
  the exact McNemar test and Newcombe's (1998) method 10 interval for the difference.
- :func:`paired_rate_diff`: the clustered generalisation of method 10 (MOVER with
  :func:`clustered_wilson` limits and the correlation of the per-task residuals).
- :func:`sign_flip_test`: the exact (or, for many tasks, Monte Carlo) sign-flip
  permutation test of a mean paired difference.
- :func:`paired_mean_diff`: a mean paired difference of any per-task metric.
- :func:`holm`: Holm's step-down adjustment for several p-values.
- :func:`tasks_needed`: how many tasks reach the asked power with the test evalnb runs.

Example:
    >>> lo, hi = wilson(19, 25)
    >>> round(lo, 3), round(hi, 3)
    (0.566, 0.885)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import numpy as np

Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95% normal quantile, 1.959964."""

EXACT_MAX = 16
"""Sign-flip tests enumerate all ``2**k`` sign patterns up to this many non-zero differences."""

T_MIN_PAIRS = 10
"""Paired t intervals are given from this many pairs (tasks) on."""

FLIP_DRAWS = 20_000
"""Random sign patterns drawn by the Monte Carlo sign-flip test above :data:`EXACT_MAX`."""


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float | None, float | None]:
    """The Wilson score interval ``(lo, hi)`` of ``successes / n``; ``(None, None)`` if n is 0.

    ``centre = (p + z²/2n) / (1 + z²/n)``,
    ``half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)``. ``n`` may be an effective
    (non-integer) sample size.

    Example:
        >>> [round(v, 4) for v in wilson(0, 10)]
        [0.0, 0.2775]
        >>> wilson(0, 0)
        (None, None)
    """
    if n == 0:
        return None, None
    return _wilson(successes / n, n, z)


def agresti_coull(successes: float, n: float, z: float = Z95) -> tuple[float | None, float | None]:
    """Agresti and Coull's interval ``(lo, hi)`` of ``successes / n``; ``(None, None)`` if n is 0.

    ``z²/2`` pseudo-successes and pseudo-failures: ``ñ = n + z²``,
    ``p̃ = (successes + z²/2) / ñ``, ``p̃ ± z sqrt(p̃(1-p̃)/ñ)``, clipped to [0, 1]. Its
    coverage does not dip near 0 and 1 as Wilson's does (0.91 at 10 trials and
    ``p = 0.05``, where this covers 0.99); ``n`` may be an effective sample size.

    Example:
        >>> [round(v, 4) for v in agresti_coull(0, 10)]
        [0.0, 0.3209]
    """
    if n == 0:
        return None, None
    n_tilde = n + z * z
    centre = (successes + z * z / 2) / n_tilde
    half = z * math.sqrt(centre * (1 - centre) / n_tilde)
    return max(0.0, centre - half), min(1.0, centre + half)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    scipy's ``stdtrit``, imported on first use (``import evalnb`` does not load scipy);
    ``df`` infinite gives the normal quantile.

    Example:
        >>> round(t_quantile(0.975, 4), 6), round(t_quantile(0.025, 4), 6)
        (2.776445, -2.776445)
    """
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


PSEUDO_TASK = 0.05
"""Weight of the pseudo-task at rate 1/2 in the clustered variance (:func:`clustered_wilson`)."""


def clustered_wilson_sums(
    k: Sequence[float] | np.ndarray | pl.Series,
    sy: Sequence[float] | np.ndarray | pl.Series,
    sm: Sequence[float] | np.ndarray | pl.Series,
    syy: Sequence[float] | np.ndarray | pl.Series,
    sym: Sequence[float] | np.ndarray | pl.Series,
    smm: Sequence[float] | np.ndarray | pl.Series,
    *,
    counts: bool = False,
    z: float = Z95,
) -> pl.DataFrame:
    """:func:`clustered_wilson` from per-group sums over the clusters: one row per group.

    ``k`` clusters (those with ``m > 0``), ``sy = Σy``, ``sm = Σm``, ``syy = Σy²``,
    ``sym = Σym``, ``smm = Σm²``, one element per group. Returns the columns ``lo`` and
    ``hi``, null for a group without clusters, with ``sm == 0`` or with a NaN sum.

    Example:
        >>> # two groups: 3 tasks passing 2, 1, 0 of 2 epochs; 2 tasks passing 2 of 2
        >>> out = clustered_wilson_sums([3, 2], [3, 4], [6, 4], [5, 8], [6, 8], [12, 8],
        ...                             counts=True)
        >>> out.select(pl.all().round(3)).rows()
        [(0.036, 0.964), (0.005, 1.0)]
    """
    import numpy as np
    from scipy.special import stdtrit

    # per-group sums: numpy on a few elements costs microseconds per step, polars about a
    # millisecond per frame (summary, by_category and compare call this several times)
    k_, sy_, sm_, syy_, sym_, smm_ = (
        pl.Series(values, dtype=pl.Float64).to_numpy() for values in (k, sy, sm, syy, sym, smm)
    )
    with np.errstate(all="ignore"):
        # Wherever the variance is estimated from k >= 2 clusters, the pseudo-task and the
        # small-sample correction apply; not for one pass/fail trial per task (Σm² = Σm),
        # whose variance p(1-p)/n the binomial fixes, nor for a single cluster.
        binomial = smm_ <= sm_ * (1 + 1e-12) if counts else np.zeros(sm_.shape, dtype=bool)
        corrected = (k_ >= 2) & ~binomial
        # Degrees of freedom: the effective number of tasks (Σm)²/Σm² (k when they weigh
        # the same) less one, at least one (one where it is unknown).
        df = np.fmax(sm_ * sm_ / smm_ - 1, 1.0)
        t = stdtrit(df, NormalDist().cdf(z))
        exact_lo, exact_hi = _clopper_pearson(sy_, sm_, z, binomial)
        known = ~np.isnan(np.stack([k_, sy_, sm_, syy_, sym_, smm_])).any(axis=0)
        valid = (k_ > 0) & (sm_ > 0) & known
        r = sy_ / sm_
        # Ratio-estimator variance of r, Σ(y - r m)² / (Σm)², plus PSEUDO_TASK of a task of
        # the mean size Σm²/Σm at rate 1/2 where it is estimated from the clusters.
        pseudo = PSEUDO_TASK * (smm_ / sm_ * (0.5 - r)) ** 2
        residual = np.maximum(syy_ - 2 * r * sym_ + r * r * smm_, 0.0)
        var = (residual + np.where(corrected, pseudo, 0.0)) / (sm_ * sm_)
        spread = r * (1 - r)
        ok = (spread > 0) & (var > 1e-15 * np.maximum(spread, 1e-300))
        n_eff = np.where(ok, spread / var, sm_ * sm_ / smm_)
        if counts:
            n_eff = np.where(binomial, sm_, np.minimum(n_eff, sm_))
        # Small-sample cluster correction (CR1 with df degrees of freedom): the variance
        # times (df+1)/df and t(df) for z.
        q = np.where(corrected, t, z)
        n_eff = np.where(corrected, n_eff * df / (df + 1), n_eff)
        # Agresti-Coull at n_eff: q²/2 pseudo-successes and pseudo-failures.
        n_tilde = n_eff + q * q
        centre = (r * n_eff + q * q / 2) / n_tilde
        half = q * np.sqrt(centre * (1 - centre) / n_tilde)
        # One pass/fail trial per task: the exact (Clopper-Pearson) interval.
        lo = np.where(binomial, exact_lo, np.maximum(centre - half, 0.0))
        hi = np.where(binomial, exact_hi, np.minimum(centre + half, 1.0))
    return pl.DataFrame(
        [
            pl.Series("lo", np.where(valid, lo, np.nan), nan_to_null=True),
            pl.Series("hi", np.where(valid, hi, np.nan), nan_to_null=True),
        ]
    )


def _clopper_pearson(
    x: np.ndarray, n: np.ndarray, z: float, needed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper and Pearson's exact interval of ``x`` successes in ``n`` trials, at the
    two-sided level of the normal quantile ``z``, where ``needed`` is true (NaN elsewhere,
    and where ``n`` is 0).

    The inverse beta function costs microseconds per value, so it is computed once per
    distinct ``(x, n)`` pair: thousands of runs or categories share a few dozen.

    Example:
        >>> import numpy as np
        >>> lo, hi = _clopper_pearson(np.array([3.0, 0, 3]), np.array([4.0, 4, 4]), 1.96,
        ...                           np.array([True, True, False]))
        >>> np.round(lo, 3).tolist(), np.round(hi, 3).tolist()
        ([0.194, 0.0, nan], [0.994, 0.602, nan])
    """
    import numpy as np
    from scipy.special import betaincinv

    lo, hi = np.full(len(x), np.nan), np.full(len(x), np.nan)
    if not needed.any():
        return lo, hi
    pairs, inverse = np.unique(np.stack([x[needed], n[needed]]), axis=1, return_inverse=True)
    x, n = pairs
    tail = 1 - NormalDist().cdf(z)
    lo[needed] = np.where(x > 0, betaincinv(np.maximum(x, 1e-300), n - x + 1, tail), 0.0)[inverse]
    hi[needed] = np.where(x < n, betaincinv(x + 1, np.maximum(n - x, 1e-300), 1 - tail), 1.0)[
        inverse
    ]
    return lo, hi


def clustered_wilson(
    y: np.ndarray | Sequence[float],
    m: np.ndarray | Sequence[float],
    *,
    counts: bool = False,
    z: float = Z95,
) -> tuple[float | None, float | None]:
    """95% interval of ``r = Σy / Σm`` where each element is one task (a cluster).

    ``y`` is a task's total (passes, ok tool calls, check score) and ``m`` its maximum
    (attempts, tool calls, max score) over all its epochs. The variance of ``r`` is the
    ratio estimator's, ``V = Σ(y - r m)² / (Σm)²``, which lets a task's epochs (or
    calls, or checks) be correlated however they are, and the interval is
    Agresti-Coull's at the effective sample size ``n_eff = r(1-r) / V``: with
    ``ñ = n_eff + q²`` and ``p̃ = (r n_eff + q²/2) / ñ``, ``p̃ ± q sqrt(p̃(1-p̃)/ñ)``,
    clipped to [0, 1] (``q`` is 1.96, or ``t(df)`` below). When ``V`` is 0 (every task
    at the same rate, in particular ``r`` of 0 or 1) ``n_eff`` is the effective number
    of tasks ``(Σm)² / Σm²`` (the number of tasks when they weigh the same), so the
    interval never collapses to a point. With ``counts`` (``y`` counts successes out
    of ``m`` trials) ``n_eff`` is at most ``Σm``.

    Wherever ``V`` is estimated from ``k >= 2`` tasks, two small-sample corrections:
    ``V`` also holds :data:`PSEUDO_TASK` (a twentieth) of a pseudo-task of the mean
    size ``Σm²/Σm`` at rate 1/2, ``PSEUDO_TASK (Σm²/Σm)² (1/2 - r)² / (Σm)²`` (Agresti
    and Coull's pseudo-observations, at the level of tasks: without it a few tasks that
    happen to agree near 0% or 100% give a variance near 0 and an interval far too
    narrow); and the standard cluster correction CR1 on the effective number of tasks
    ``k_eff = (Σm)²/Σm²`` (``k`` when the tasks weigh the same), with
    ``df = max(k_eff - 1, 1)`` degrees of freedom: ``n_eff`` times ``df/(df+1)`` and the
    ``t(df)`` quantile for ``q``. Chosen by simulated coverage (``python -m
    bench.coverage``, ``bench/COVERAGE.md``) over 5-100 tasks, 1-10 epochs and task
    rates near 0, in the middle, near 1 and bimodal, for pass rates (attempts per
    task), overall rates (1-5 checks per attempt) and tool-call success (a Poisson
    number of calls per attempt): at least 0.93 in every cell, where the former Wilson
    form fell to 0.90. One pass/fail trial per task (``counts`` with every ``m`` 1) is
    a binomial count, and gets Clopper and Pearson's exact interval, whose coverage is
    at least 95% for every rate and number of tasks (Agresti-Coull's fell to 0.91 with
    5 tasks at a 98% pass rate, Wilson's to 0.91 at 10 tasks near 0 or 1). A single
    task is not corrected. ``(None, None)`` for no tasks or ``Σm == 0``.

    Example:
        >>> lo, hi = clustered_wilson([5, 5, 5, 5, 5], [5, 5, 5, 5, 5], counts=True)
        >>> round(lo, 3), hi  # 5 tasks (4 corrected, with t(4)), not 25 attempts
        (0.29, 1.0)
        >>> # one attempt per task: the exact binomial interval of 2 passes in 3
        >>> [round(v, 3) for v in clustered_wilson([1, 0, 1], [1, 1, 1], counts=True)]
        [0.094, 0.992]
    """
    tasks = pl.DataFrame([pl.Series("y", y, dtype=pl.Float64), pl.Series("m", m, dtype=pl.Float64)])
    y_, m_ = pl.col("y"), pl.col("m")
    sums = tasks.select(
        k=(m_ > 0).sum(),
        sy=y_.sum(),
        sm=m_.sum(),
        syy=(y_ * y_).sum(),
        sym=(y_ * m_).sum(),
        smm=(m_ * m_).sum(),
    ).row(0)
    if sums[2] == 0:
        return None, None
    return clustered_wilson_sums(*([v] for v in sums), counts=counts, z=z).row(0)


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


def _mover(
    d: float,
    a: tuple[float, float, float],
    b: tuple[float, float, float],
    corr: float,
) -> tuple[float, float]:
    """Newcombe's square-and-add limits of ``d = p_a - p_b`` from each rate's (p, lo, hi)."""
    (p_a, l_a, u_a), (p_b, l_b, u_b) = a, b
    lo = d - math.sqrt(
        max(0.0, (p_a - l_a) ** 2 - 2 * corr * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2)
    )
    hi = d + math.sqrt(
        max(0.0, (u_a - p_a) ** 2 - 2 * corr * (u_a - p_a) * (p_b - l_b) + (p_b - l_b) ** 2)
    )
    return max(-1.0, float(lo)), min(1.0, float(hi))


def newcombe_paired_diff(
    both: int, only_a: int, only_b: int, neither: int, z: float = Z95
) -> tuple[float | None, float | None]:
    """Interval for ``p_a - p_b`` of two pass rates on the same tasks (Newcombe 1998, method 10).

    ``p_a = (both + only_a) / n`` and ``p_b = (both + only_b) / n``. With the Wilson
    limits ``l, u`` of each, ``lo = d - sqrt((p_a-l_a)² - 2φ(p_a-l_a)(u_b-p_b) + (u_b-p_b)²)``
    and ``hi = d + sqrt((u_a-p_a)² - 2φ(u_a-p_a)(p_b-l_b) + (p_b-l_b)²)``, where φ is
    the table's correlation with Newcombe's continuity correction: with
    ``B = both * neither - only_a * only_b``, the numerator is ``B - n/2`` when
    ``B > n/2``, ``B`` when ``B < 0`` and 0 otherwise (φ = 0 when a margin is empty).
    It does not collapse to a point when no pair is discordant.

    Example:
        >>> [round(v, 4) for v in newcombe_paired_diff(27, 0, 0, 27)]
        [-0.0351, 0.0351]
        >>> newcombe_paired_diff(0, 0, 0, 0)
        (None, None)
    """
    n = both + only_a + only_b + neither
    if n == 0:
        return None, None
    k_a, k_b = both + only_a, both + only_b
    p_a, p_b = k_a / n, k_b / n
    margins = k_a * (only_b + neither) * k_b * (only_a + neither)
    cross = both * neither - only_a * only_b
    corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
    phi = corrected / math.sqrt(margins) if margins else 0.0
    return _mover(p_a - p_b, (p_a, *_wilson(p_a, n, z)), (p_b, *_wilson(p_b, n, z)), phi)


def paired_rate_diff(
    y_a: np.ndarray | Sequence[float],
    m_a: np.ndarray | Sequence[float],
    y_b: np.ndarray | Sequence[float],
    m_b: np.ndarray | Sequence[float],
    *,
    counts: bool = False,
    z: float = Z95,
) -> tuple[float | None, float | None, float | None]:
    """``(d, lo, hi)``: ``d = Σy_a/Σm_a - Σy_b/Σm_b`` over the same tasks, with a 95% interval.

    Element ``i`` of the four arrays is task ``i`` (its totals over its epochs) in runs A
    and B. The interval is Newcombe's method 10 generalised to clustered data (the
    MOVER construction): each rate's :func:`clustered_wilson` limits, combined with
    the correlation of the per-task residuals ``e = y - r m`` of the two runs,
    ``Σe_a e_b / sqrt(Σe_a² Σe_b²)``, with Newcombe's continuity correction: the cross
    product ``Σe_a e_b`` less 1/2 when above 1/2, kept when negative and 0 in between
    (``y`` in attempts, or in score). For one pass/fail attempt per task this is the
    2x2 table's corrected φ of :func:`newcombe_paired_diff` (which combines Wilson
    limits; here each rate's limits are :func:`clustered_wilson`'s); with epochs, two
    runs with identical per-task results get a correlation below 1 and an interval
    around 0 that does not collapse, as one attempt per task gets.
    ``counts`` as in :func:`clustered_wilson`. Three Nones for no tasks or a zero
    denominator.

    Example:
        >>> d, lo, hi = paired_rate_diff([3, 2, 3, 1], [3, 3, 3, 3], [1, 2, 0, 1], [3, 3, 3, 3],
        ...     counts=True)
        >>> round(d, 3), lo < d < hi
        (0.417, True)
        >>> same = [3, 2, 0, 1] * 6
        >>> [round(v, 3) for v in paired_rate_diff(same, [3] * 24, same, [3] * 24, counts=True)]
        [0.0, -0.028, 0.028]
    """
    import numpy as np

    ya, ma, yb, mb = (np.asarray(v, dtype=float) for v in (y_a, m_a, y_b, m_b))
    if ya.size == 0 or ma.sum() == 0 or mb.sum() == 0:
        return None, None, None
    r_a, r_b = ya.sum() / ma.sum(), yb.sum() / mb.sum()
    l_a, u_a = clustered_wilson(ya, ma, counts=counts, z=z)
    l_b, u_b = clustered_wilson(yb, mb, counts=counts, z=z)
    e_a, e_b = ya - r_a * ma, yb - r_b * mb
    scale = math.sqrt(float((e_a * e_a).sum() * (e_b * e_b).sum()))
    cross = float((e_a * e_b).sum())
    cross = cross - 0.5 if cross > 0.5 else min(cross, 0.0)
    corr = cross / scale if scale > 0 else 0.0
    assert l_a is not None and u_a is not None and l_b is not None and u_b is not None
    lo, hi = _mover(r_a - r_b, (r_a, l_a, u_a), (r_b, l_b, u_b), corr)
    return float(r_a - r_b), lo, hi


def sign_flip_test(
    d: np.ndarray | Sequence[float], *, draws: int = FLIP_DRAWS, seed: int = 0
) -> float:
    """Two-sided sign-flip permutation p-value of ``mean(d) = 0`` for paired differences ``d``.

    Under the null (the two runs exchangeable within a task) each per-task difference
    is as likely negated. The p-value is the share of sign patterns whose
    ``|Σ ±d|`` reaches the observed ``|Σd|``. Zero differences do not move the sum and
    are left out; so are NaN differences (a figure unknown on one side: the caller
    counts them). No difference left, or none but zeros, gives ``p = 1``. Up to
    :data:`EXACT_MAX` non-zero differences every pattern is enumerated (exact); above,
    ``draws`` random patterns are drawn with ``seed`` and ``p = (1 + hits) / (1 +
    draws)``, which never rejects more often than the nominal level. On ±1 differences
    (one pass/fail attempt per task) the exact test is the exact McNemar test.

    Example:
        >>> sign_flip_test([1, 1, 1, 1, 1, 1])  # 2 of 64 patterns as extreme
        0.03125
        >>> sign_flip_test([1, -1, 1, 1, 1, 1, -1]) == mcnemar_exact(5, 2)
        True
        >>> sign_flip_test([0.0, 0.0]), sign_flip_test([0.5, float("nan"), 0.2])
        (1.0, 0.5)
    """
    import numpy as np

    known = np.asarray(d, dtype=float)
    known = known[~np.isnan(known)]
    observed = abs(float(known.sum()))
    values = np.abs(known[known != 0])
    if values.size == 0:
        return 1.0
    tol = 1e-9 * max(1.0, float(values.sum()))
    if values.size <= EXACT_MAX:
        patterns = np.arange(2**values.size)[:, None] >> np.arange(values.size) & 1
        sums = (2 * patterns - 1) @ values
        return float(np.mean(np.abs(sums) >= observed - tol))
    rng = np.random.default_rng(seed)
    hits, left = 0, draws
    while left:
        batch = min(left, 4096)
        signs = 2 * rng.integers(0, 2, (batch, values.size), dtype=np.int8) - 1
        hits += int(np.sum(np.abs(signs @ values) >= observed - tol))
        left -= batch
    return (1 + hits) / (1 + draws)


def paired_mean_diff(
    x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float], *, seed: int = 0
) -> tuple[float | None, float | None, float | None, float | None]:
    """``(diff, lo, hi, p)`` for the mean paired difference ``mean(x - y)``, one pair per task.

    A pair with a NaN on either side is left out (the caller counts it). The p-value
    is :func:`sign_flip_test`'s, exact for few tasks (no normal approximation behind
    it); it is 1 when every difference is 0. The interval is the paired t interval
    ``diff ± t(0.975, n-1) s / sqrt(n)``, given only from :data:`T_MIN_PAIRS` pairs on
    (below, the t interval's coverage rests on a normality few tasks cannot show) and
    only when the differences vary (``s`` above rounding): when every task differs by the same
    amount, the sample shows no spread to build an interval from, and a point
    ``[diff, diff]`` would claim a certainty no sample of tasks gives. In both cases
    ``lo`` and ``hi`` are None and the exact p-value is the evidence. Four Nones for no
    pairs.

    Example:
        >>> diff, lo, hi, p = paired_mean_diff([1.0, 1.0, 0.5, 1.0], [0.5, 1.0, 0.0, 0.5])
        >>> diff, lo, hi, p  # 3 tasks differ, all one way: 2 of 8 patterns
        (0.375, None, None, 0.25)
        >>> paired_mean_diff([0.5] * 12, [0.25] * 12)  # no spread: no interval
        (0.25, None, None, 0.00048828125)
    """
    import numpy as np

    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return None, None, None, None
    diff = float(d.mean())
    p = sign_flip_test(d, seed=seed)
    spread = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if d.size < T_MIN_PAIRS or spread <= 1e-12 * max(1.0, float(np.abs(d).max())):
        return diff, None, None, p
    half = t_quantile(0.975, d.size - 1) * spread / math.sqrt(d.size)
    return diff, diff - half, diff + half, p


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values, in the input order; None stays None.

    Sorted ascending, the ``j``-th of ``m`` p-values becomes ``min(1, (m - j + 1) p)``,
    made non-decreasing (each is at least the one before it). Rejecting the adjusted
    p-values at ``alpha`` keeps the chance of any false positive among the ``m`` at or
    below ``alpha``.

    Example:
        >>> holm([0.01, 0.04, 0.03, None])
        [0.03, 0.06, 0.06, None]
    """
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for j, (p, i) in enumerate(present):
        running = max(running, min(1.0, (len(present) - j) * p))
        out[i] = running
    return out


def _mcnemar_power(
    n: np.ndarray, psi: float | np.ndarray, share_a: float | np.ndarray, alpha: float
) -> np.ndarray:
    """Power of the two-sided exact McNemar test at ``alpha`` for each number of tasks ``n``.

    A task is discordant with probability ``psi``; a discordant task favours A with
    probability ``share_a``. Given ``k`` discordant tasks the test rejects when the
    smaller count is at most ``c_k``, the largest ``c`` with ``2 P(X <= c) <= alpha``,
    ``X ~ Bin(k, 1/2)``; the power sums that over ``k ~ Bin(n, psi)``. ``n``, ``psi`` and
    ``share_a`` broadcast together: several ``n`` at one ``(psi, share_a)``, or one ``n``
    at several.
    """
    import numpy as np
    from scipy.stats import binom

    k = np.arange(int(np.max(n)) + 1)
    c = binom.ppf(alpha / 2, k, 0.5)
    c = np.where(binom.cdf(c, k, 0.5) <= alpha / 2 * (1 + 1e-9), c, c - 1)
    share = np.asarray(share_a, dtype=float)[..., None]
    reject = np.where(c >= 0, binom.cdf(c, k, share) + binom.sf(k - c - 1, k, share), 0.0)
    discordant = binom.pmf(k, np.asarray(n)[..., None], np.asarray(psi, dtype=float)[..., None])
    power: np.ndarray = (discordant * reject).sum(axis=-1)
    return power


SMALL_N = 25
"""Below this many shared tasks a comparison says what its test could detect."""


def detectable_difference(
    n: int, p: float, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest difference of pass rates the exact McNemar test detects with ``n`` tasks.

    The difference ``d`` is taken around ``p`` (``p + d/2`` against ``p - d/2``, e.g. the
    pooled pass rate of the two runs), with the two runs' outcomes independent (the
    discordant share ``ψ`` :func:`tasks_needed` assumes by default, conservative when
    the runs tend to pass the same tasks). The power at exactly ``n`` tasks is computed
    as :func:`tasks_needed` computes it (the binomial law of the discordant count, then
    the exact test's rejection region at ``alpha``); the result is the smallest ``d`` on
    a grid of 0.01 whose power reaches ``power``, or None when no difference that keeps
    both rates within [0, 1] does. One attempt per task: with epochs the sign-flip test
    can detect somewhat smaller differences, as epochs average away the within-task
    variance.

    Example:
        >>> detectable_difference(12, 0.5)
        0.65
        >>> detectable_difference(2, 0.5) is None
        True
    """
    import numpy as np

    if not 0 < p < 1 or n < 1:
        return None
    d = np.arange(1, round(200 * min(p, 1 - p))) / 100  # the grid, all at once
    p_a, p_b = p + d / 2, p - d / 2
    psi = p_a * (1 - p_b) + p_b * (1 - p_a)
    reached = np.flatnonzero(
        _mcnemar_power(np.array(n), psi, (psi + d) / (2 * psi), alpha) >= power
    )
    return float(d[reached[0]]) if reached.size else None


def _flip_n(q_alpha: float, q_power: float, var: float, d: float) -> float:
    """Tasks for a sign-flip test of mean ``d``: its null variance is ``E[dᵢ²] = var + d²``."""
    return (q_alpha * math.sqrt(var + d * d) + q_power * math.sqrt(var)) ** 2 / (d * d)


def tasks_needed(
    p_a: float,
    p_b: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    discordant: float | None = None,
    epochs: int = 1,
    within: float = 0.0,
) -> int:
    """How many tasks, both models on each, detect pass rates ``p_a`` vs ``p_b`` at ``alpha``.

    ``discordant`` is the share ψ of tasks on which one model passes and the other
    fails (e.g. from a pilot run, ``(only_a + only_b) / n``); by default
    ``p_a(1-p_b) + p_b(1-p_a)``, its value if the models' outcomes were independent,
    which is conservative when they tend to pass the same tasks.

    - One epoch (``epochs=1``): the test evalnb runs is the exact McNemar test. Its
      power at ``n`` tasks is computed exactly (the binomial law of the discordant
      count, then the exact test's rejection region), and the result is the smallest
      ``n`` from which on the power stays at or above ``power`` (exact power zigzags
      in ``n``; the search window reaches twice the normal-approximation estimate).
    - Several epochs: the test is the sign-flip test on per-task pass shares. Epochs
      only average away the within-task variance, never the variance between tasks,
      so they cannot stand in for tasks. ``within`` is the mean within-task variance of
      one attempt's pass/fail difference, ``mean(π_a(1-π_a) + π_b(1-π_b))`` over tasks
      (a pilot run's epochs estimate it). With per-task difference variance
      ``σ² = ψ - d² - within (1 - 1/epochs)``, the sign-flip test's null variance is
      ``E[dᵢ²] = σ² + d²``, and the result is the smallest ``n`` with
      ``n >= (t(1-alpha/2, n-1) sqrt(σ² + d²) + t(power, n-1) σ)² / d²`` (Connor's
      formula on per-task shares, with t quantiles for small ``n``). ``within=0`` (the
      default) assumes every task's outcome is fixed: epochs then repeat the same
      outcome and the answer is the one-epoch answer.

    Parameters
    ----------
    p_a, p_b : float
        The two models' expected pass rates, strictly between 0 and 1, and different.
    alpha : float, default 0.05
        The two-sided significance level, strictly between 0 and 1.
    power : float, default 0.8
        The power wanted, strictly between 0 and 1.
    discordant : float, optional
        The discordant share ψ, in ``(|p_a - p_b|, 1]``; by default its value under
        independence (above).
    epochs : int, default 1
        Attempts per task and model, at least 1.
    within : float, default 0.0
        The mean within-task variance of one attempt's pass/fail difference, in
        ``[0, ψ - (p_a - p_b)²]``.

    Returns
    -------
    int
        The number of tasks.

    Raises
    ------
    ValueError
        An argument outside its range, ``p_a`` equal to ``p_b``, or (one epoch) a power
        the exact McNemar test does not reach in the search window.

    See Also
    --------
    compare : The paired comparison whose test this sizes.

    Examples
    --------
    >>> tasks_needed(0.9, 0.8, discordant=0.2)  # Connor's normal approximation: 155
    168
    >>> tasks_needed(0.9, 0.8, discordant=0.2, epochs=5, within=0.1)
    94

    The tasks needed shrink fast as the difference grows:

    >>> import polars as pl
    >>> pl.DataFrame({"p_b": [0.8, 0.7, 0.6]}).with_columns(
    ...     tasks=pl.col("p_b").map_elements(lambda p: tasks_needed(0.9, p), return_dtype=pl.Int64)
    ... )
    shape: (3, 2)
    ┌─────┬───────┐
    │ p_b ┆ tasks │
    │ --- ┆ ---   │
    │ f64 ┆ i64   │
    ╞═════╪═══════╡
    │ 0.8 ┆ 215   │
    │ 0.7 ┆ 71    │
    │ 0.6 ┆ 37    │
    └─────┴───────┘
    """
    import numpy as np

    for name, value in (("p_a", p_a), ("p_b", p_b), ("alpha", alpha), ("power", power)):
        if not 0 < value < 1:
            raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    d = p_a - p_b
    if d == 0:
        raise ValueError("p_a equals p_b: no number of tasks detects a zero difference")
    psi = p_a * (1 - p_b) + p_b * (1 - p_a) if discordant is None else discordant
    if not abs(d) < psi <= 1:
        raise ValueError(f"discordant share must lie in (|p_a - p_b|, 1], got {psi}")
    if not 0 <= within <= psi - d * d:
        raise ValueError(f"within must lie in [0, discordant - (p_a - p_b)²], got {within}")
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    if epochs > 1 and within > 0:
        var = psi - d * d - within * (1 - 1 / epochs)
        n = 2
        while n < _flip_n(t_quantile(1 - alpha / 2, n - 1), t_quantile(power, n - 1), var, d):
            n += 1
        return n
    guess = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - d * d)) ** 2 / (d * d)
    grid = np.arange(1, int(2 * guess) + 50)
    below = np.flatnonzero(_mcnemar_power(grid, psi, (psi + d) / (2 * psi), alpha) < power)
    if below.size == 0:
        return 1
    if below[-1] == grid.size - 1:
        raise ValueError("the exact McNemar test does not reach that power in the search window")
    return int(grid[below[-1] + 1])
