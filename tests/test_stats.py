"""Intervals, paired tests and sample sizes (analysis.stats), pinned on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from evalnb.analysis.stats import (
    cluster_bootstrap_rate,
    mcnemar_exact,
    newcombe_paired_diff,
    paired_bootstrap_diff,
    tasks_needed,
    wilson,
    wilson_expr,
)


def test_wilson_matches_a_hand_computed_interval():
    # 19 of 25, z = 1.96: p = 0.76, z²/n = 0.153664, denominator 1.153664,
    # centre = (0.76 + 0.076832) / 1.153664 = 0.725369,
    # half = 1.96 / 1.153664 * sqrt(0.1824/25 + 3.8416/2500) = 0.159670.
    lo, hi = wilson(19, 25)
    assert lo == pytest.approx(0.725369 - 0.159670, abs=1e-5)
    assert hi == pytest.approx(0.725369 + 0.159670, abs=1e-5)


def test_wilson_with_no_successes_has_upper_limit_z2_over_n_plus_z2():
    lo, hi = wilson(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(1.96**2 / (10 + 1.96**2))


def test_wilson_of_nothing_is_null():
    assert wilson(0, 0) == (None, None)


def test_wilson_expression_agrees_with_the_scalar_form_and_is_null_for_n_zero():
    df = pl.DataFrame({"k": [0, 3, 19, 7, 0], "n": [10, 3, 25, 100, 0]})
    lo, hi = wilson_expr("k", "n")
    got = df.select(lo.alias("lo"), hi.alias("hi")).rows()
    assert got[-1] == (None, None)
    for (k, n), interval in zip(df.rows()[:-1], got[:-1], strict=True):
        assert interval == pytest.approx(wilson(k, n))


def test_mcnemar_exact_on_a_small_case_by_hand():
    # b=1, c=6: n=7, P(X <= 1) = (C(7,0) + C(7,1)) / 2**7 = 8/128; two-sided 16/128.
    assert mcnemar_exact(1, 6) == pytest.approx(0.125, rel=1e-12)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125, rel=1e-12)
    # b=0, c=5: 2 * 1/32.
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625, rel=1e-12)


def test_mcnemar_exact_is_one_without_evidence():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0


def test_mcnemar_exact_agrees_with_integer_arithmetic_and_handles_large_counts():
    b, c = 20, 40
    exact = 2 * sum(math.comb(60, k) for k in range(b + 1)) / 2**60
    assert mcnemar_exact(b, c) == pytest.approx(exact, rel=1e-9)
    assert mcnemar_exact(5000, 5000) == 1.0
    assert 0 <= mcnemar_exact(0, 3000) < 1e-300


def test_newcombe_interval_with_uncorrelated_outcomes_by_hand():
    # 1 both, 1 only A, 1 only B, 1 neither: phi = 0, p_a = p_b = 0.5, Wilson(2, 4) =
    # 0.5 ± 1.96/1.9604 * sqrt(0.0625 + 0.060025) = 0.5 ± 0.349966, so the interval
    # is ± sqrt(2) * 0.349966.
    lo, hi = newcombe_paired_diff(1, 1, 1, 1)
    assert lo == pytest.approx(-math.sqrt(2) * 0.349966, abs=1e-5)
    assert hi == pytest.approx(math.sqrt(2) * 0.349966, abs=1e-5)


def test_newcombe_interval_contains_the_difference_and_is_not_a_point_without_discordance():
    lo, hi = newcombe_paired_diff(10, 6, 1, 3)
    assert lo < (6 - 1) / 20 < hi
    lo, hi = newcombe_paired_diff(18, 0, 0, 2)
    assert lo < 0 < hi
    assert newcombe_paired_diff(0, 0, 0, 0) == (None, None)


def test_cluster_bootstrap_is_reproducible_with_a_seed_and_covers_the_estimate():
    rng = np.random.default_rng(7)
    max_scores = rng.integers(1, 6, 60).astype(float)
    scores = np.minimum(max_scores, rng.integers(0, 6, 60)).astype(float)
    first = cluster_bootstrap_rate(scores, max_scores, seed=3)
    assert first == cluster_bootstrap_rate(scores, max_scores, seed=3)
    assert first != cluster_bootstrap_rate(scores, max_scores, seed=4)
    lo, hi = first
    assert lo < scores.sum() / max_scores.sum() < hi


def test_cluster_bootstrap_resamples_whole_tasks():
    # Every task scores exactly half its weight, so every resample of whole tasks
    # has rate 0.5, however the weights differ.
    assert cluster_bootstrap_rate([1, 2, 3], [2, 4, 6]) == (0.5, 0.5)


def test_cluster_bootstrap_width_matches_the_binomial_standard_error():
    # 300 of 400 one-check tasks pass: SE = sqrt(0.75 * 0.25 / 400) = 0.02165, so the
    # 95% interval is about 0.75 ± 0.0424.
    scores = [1.0] * 300 + [0.0] * 100
    lo, hi = cluster_bootstrap_rate(scores, [1.0] * 400)
    assert lo == pytest.approx(0.75 - 0.0424, abs=0.008)
    assert hi == pytest.approx(0.75 + 0.0424, abs=0.008)


def test_cluster_bootstrap_of_nothing_is_null():
    assert cluster_bootstrap_rate([], []) == (None, None)
    assert cluster_bootstrap_rate([0.0], [0.0]) == (None, None)


def test_paired_bootstrap_diff_is_the_mean_difference_with_a_reproducible_interval():
    x = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0]
    y = [0.5, 1.0, 0.0, 0.5, 0.0, 1.0]
    diff, lo, hi, p = paired_bootstrap_diff(x, y, seed=1)
    assert diff == pytest.approx(1.5 / 6)
    assert lo <= diff <= hi
    assert paired_bootstrap_diff(x, y, seed=1) == (diff, lo, hi, p)


def test_paired_bootstrap_p_value_is_one_without_difference_and_minimal_for_a_clear_one():
    same = [0.2, 0.9, 1.0, 0.5]
    assert paired_bootstrap_diff(same, same)[3] == 1.0
    # 40 tasks better by 1, 20 equal: resampled means stay near 2/3, never near 0,
    # so only the "+1" of the p-value formula remains.
    x, y = [1.0] * 60, [0.0] * 40 + [1.0] * 20
    assert paired_bootstrap_diff(x, y, n_boot=500)[3] == pytest.approx(1 / 501)


def test_paired_bootstrap_of_no_pairs_is_null():
    assert paired_bootstrap_diff([], []) == (None, None, None, None)


def test_tasks_needed_unpaired_two_proportion_formula_by_hand():
    # p̄ = 0.85: (1.959964 * sqrt(2 * 0.85 * 0.15) + 0.841621 * sqrt(0.09 + 0.16))² / 0.01
    # = (0.989733 + 0.420811)² / 0.01 = 198.96 -> 199 per model.
    assert tasks_needed(0.9, 0.8, paired=False) == 199


def test_tasks_needed_paired_connor_formula_by_hand():
    # psi = 0.2, d = 0.1: (1.959964 * sqrt(0.2) + 0.841621 * sqrt(0.19))² / 0.01
    # = (0.876523 + 0.366854)² / 0.01 = 154.6 -> 155.
    assert tasks_needed(0.9, 0.8, discordant=0.2) == 155
    # Without a discordant share, independence: psi = 0.9*0.2 + 0.8*0.1 = 0.26,
    # (1.959964 * 0.509902 + 0.841621 * 0.5)² / 0.01 = 201.7 -> 202.
    assert tasks_needed(0.9, 0.8) == 202
    assert tasks_needed(0.8, 0.9) == 202


def test_tasks_needed_rejects_impossible_inputs():
    with pytest.raises(ValueError, match="zero difference"):
        tasks_needed(0.7, 0.7)
    with pytest.raises(ValueError, match="discordant"):
        tasks_needed(0.9, 0.7, discordant=0.1)
    with pytest.raises(ValueError, match="alpha"):
        tasks_needed(0.9, 0.7, alpha=0)
