"""Simulated coverage of the 95% intervals of pass@k and pass^k (:mod:`evalnb._analysis.pass_at_k`).

``python -m bench.pass_at_k_coverage`` prints a Markdown table (seeded; a few seconds).
Each replication draws tasks whose pass probabilities follow Beta(a, b), gives each
task ``n`` attempts, estimates pass@k and pass^k per task and takes evalnb's interval:
the per-task values as clusters of :func:`evalnb._analysis.stats.clustered_wilson_sums`,
each task weighing 1 (so Clopper-Pearson's interval of Σvalue in as many trials as
tasks), or at k = 1 weighing its attempts (the pass rate's own interval). The targets
are the population values ``1 - B(a, b + k) / B(a, b)`` (pass@k) and
``B(a + k, b) / B(a, b)`` (pass^k); a cell is the share of replications whose interval
holds its target. The last lines give the mean and the lowest cell, apart for k = n
(each task's value 0 or 1) and k < n, and the mean width of the intervals.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln

from evalnb._analysis.pass_at_k import estimates
from evalnb._analysis.stats import clustered_wilson_sums

TASKS = [5, 10, 25, 60]
EPOCHS_K = [(3, 1), (3, 3), (5, 2), (5, 5), (10, 3)]
RATES = [("near 0", 0.5, 4.5), ("middle", 1.2, 0.8), ("near 1", 4.5, 0.5)]
REPS = 2000


def _coverage(values: np.ndarray, target: float, weight: int) -> tuple[float, float]:
    """Share of replications (rows of per-task ``values``, each task weighing ``weight``)
    whose interval holds ``target``, and the intervals' mean width."""
    k = np.full(len(values), values.shape[1], dtype=float)
    y, m = values * weight, weight * k
    sums = (y.sum(1), m, (y * y).sum(1), y.sum(1) * weight, m * weight)
    limits = clustered_wilson_sums(k, *sums, counts=True)
    lo, hi = limits.get_column("lo").to_numpy(), limits.get_column("hi").to_numpy()
    return float(((lo <= target) & (target <= hi)).mean()), float((hi - lo).mean())


def main() -> None:
    """Print the coverage table."""
    rng = np.random.default_rng(29)
    print("| tasks | attempts n | k | task rates | pass@k | pass^k |")
    print("|---|---|---|---|---|---|")
    cells: dict[bool, list[float]] = {True: [], False: []}  # k == n: coverages
    widths = []
    for tasks in TASKS:
        for n, k in EPOCHS_K:
            for name, a, b in RATES:
                p = rng.beta(a, b, (REPS, tasks))
                c = rng.binomial(n, p)
                at, hat = estimates(np.full(c.shape, n), c, k)
                weight = n if k == 1 else 1  # at k = 1 the pass rate's clusters
                target_at = 1 - np.exp(betaln(a, b + k) - betaln(a, b))
                cover_at, width_at = _coverage(at, target_at, weight)
                cover_hat, width_hat = _coverage(
                    hat, np.exp(betaln(a + k, b) - betaln(a, b)), weight
                )
                cells[k == n] += [cover_at, cover_hat]
                widths += [width_at, width_hat]
                print(f"| {tasks} | {n} | {k} | {name} | {cover_at:.3f} | {cover_hat:.3f} |")
    every = cells[True] + cells[False]
    print(
        f"\nCoverage: mean {np.mean(every):.3f}, lowest cell {min(every):.3f} "
        f"({REPS} replications per cell); k = n: mean {np.mean(cells[True]):.3f}, "
        f"lowest {min(cells[True]):.3f}; k < n: mean {np.mean(cells[False]):.3f}, "
        f"lowest {min(cells[False]):.3f}. Mean width {np.mean(widths):.3f}."
    )


if __name__ == "__main__":
    main()
