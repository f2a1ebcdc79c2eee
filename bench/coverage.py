"""Simulated coverage of evalnb's 95% intervals against the methods they replaced.

``python -m bench.coverage`` prints two Markdown tables (seeded; about a minute):

- pass rate with epochs: the task-clustered Wilson interval
  (:func:`evalnb.analysis.stats.clustered_wilson_sums`) against Wilson on attempts as if
  they were independent; task pass probabilities drawn from Beta(a, b).
- overall rate (1-5 checks per task, each task's checks passing with a Beta(a, b)
  probability): the clustered Wilson interval against the percentile bootstrap of
  tasks (2,000 resamples) evalnb used before, which collapses at the ceiling.

The target is the population rate ``a / (a + b)``.
"""

from __future__ import annotations

import numpy as np

from evalnb.analysis.stats import Z95, clustered_wilson_sums

PASS_CASES = [(5, 5, 1.0, 1.0), (10, 5, 0.6, 0.4), (25, 5, 0.6, 0.4), (25, 5, 9.0, 1.0),
              (59, 5, 1.2, 0.8), (25, 1, 3.0, 2.0)]  # fmt: skip
OVERALL_CASES = [(10, 3.0, 2.0), (25, 3.0, 2.0), (25, 9.0, 1.0), (25, 49.0, 1.0),
                 (59, 9.0, 1.0)]  # fmt: skip


def _clustered(y: np.ndarray, m: np.ndarray, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    k = np.full(y.shape[0], y.shape[1])
    sums = (y.sum(1), m.sum(1), (y * y).sum(1), (y * m).sum(1), (m * m).sum(1))
    return clustered_wilson_sums(k, *sums, counts=counts)


def _attempt_wilson(k: np.ndarray, n: float) -> tuple[np.ndarray, np.ndarray]:
    p = k / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 / denom * np.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return centre - half, centre + half


def _bootstrap(y: np.ndarray, m: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    w = rng.multinomial(y.size, np.full(y.size, 1 / y.size), size=2000)
    num, den = w @ y, w @ m
    rates = num[den > 0] / den[den > 0]
    lo, hi = np.quantile(rates, [0.025, 0.975])
    return float(lo), float(hi)


def pass_rate_table(reps: int = 4000) -> list[str]:
    rng = np.random.default_rng(1)
    lines = [
        "| tasks | epochs | Beta(a, b) | clustered Wilson | attempt-level Wilson |",
        "|---:|---:|---|---:|---:|",
    ]
    for tasks, epochs, a, b in PASS_CASES:
        y = rng.binomial(epochs, rng.beta(a, b, (reps, tasks))).astype(float)
        truth = a / (a + b)
        lo, hi = _clustered(y, np.full_like(y, epochs), counts=True)
        n_lo, n_hi = _attempt_wilson(y.sum(1), tasks * epochs)
        lines.append(
            f"| {tasks} | {epochs} | ({a:g}, {b:g}) | {np.mean((lo <= truth) & (hi >= truth)):.3f} "
            f"| {np.mean((n_lo <= truth) & (n_hi >= truth)):.3f} |"
        )
    return lines


def overall_rate_table(reps: int = 1000) -> list[str]:
    rng = np.random.default_rng(2)
    lines = [
        "| tasks | Beta(a, b) | clustered Wilson | task bootstrap (percentile) |",
        "|---:|---|---:|---:|",
    ]
    for tasks, a, b in OVERALL_CASES:
        m = rng.integers(1, 6, (reps, tasks)).astype(float)
        y = rng.binomial(m.astype(int), rng.beta(a, b, (reps, tasks))).astype(float)
        truth = a / (a + b)
        lo, hi = _clustered(y, m, counts=False)
        boot = np.array([_bootstrap(y[i], m[i], rng) for i in range(reps)])
        lines.append(
            f"| {tasks} | ({a:g}, {b:g}) | {np.mean((lo <= truth) & (hi >= truth)):.3f} "
            f"| {np.mean((boot[:, 0] <= truth) & (boot[:, 1] >= truth)):.3f} |"
        )
    return lines


def main() -> None:
    print("## Coverage of 95% intervals (simulated)\n")
    print("### Pass rate with epochs (4,000 replications each)\n")
    print("\n".join(pass_rate_table()))
    print("\n### Overall rate (1,000 replications each)\n")
    print("\n".join(overall_rate_table()))


if __name__ == "__main__":
    main()
