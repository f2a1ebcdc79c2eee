"""Simulated coverage of the 95% intervals of pass@k and pass^k (:mod:`evalnb._analysis.pass_at_k`).

``python -m bench.pass_at_k_coverage`` prints a Markdown table (seeded; a few seconds).
Each replication draws tasks whose pass probabilities follow Beta(a, b), gives each
task ``n`` attempts, estimates pass@k and pass^k per task and takes evalnb's interval:
the per-task values as clusters of :func:`evalnb._analysis.stats.clustered_wilson_sums`
(each task weighing 1). The targets are the population values
``1 - B(a, b + k) / B(a, b)`` (pass@k) and ``B(a + k, b) / B(a, b)`` (pass^k); a cell is
the share of replications whose interval holds its target.
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


def _coverage(values: np.ndarray, target: float) -> float:
    """Share of replications (rows of per-task ``values``) whose interval holds ``target``."""
    k = np.full(len(values), values.shape[1], dtype=float)
    sums = (values.sum(1), k, (values * values).sum(1), values.sum(1), k)
    limits = clustered_wilson_sums(k, *sums, counts=True)
    lo, hi = limits.get_column("lo").to_numpy(), limits.get_column("hi").to_numpy()
    return float(((lo <= target) & (target <= hi)).mean())


def main() -> None:
    """Print the coverage table."""
    rng = np.random.default_rng(29)
    print("| tasks | attempts n | k | task rates | pass@k | pass^k |")
    print("|---|---|---|---|---|---|")
    lowest = 1.0
    for tasks in TASKS:
        for n, k in EPOCHS_K:
            for name, a, b in RATES:
                p = rng.beta(a, b, (REPS, tasks))
                c = rng.binomial(n, p)
                at, hat = estimates(np.full(c.shape, n), c, k)
                cover_at = _coverage(at, 1 - np.exp(betaln(a, b + k) - betaln(a, b)))
                cover_hat = _coverage(hat, np.exp(betaln(a + k, b) - betaln(a, b)))
                lowest = min(lowest, cover_at, cover_hat)
                print(f"| {tasks} | {n} | {k} | {name} | {cover_at:.3f} | {cover_hat:.3f} |")
    print(f"\nLowest cell: {lowest:.3f} ({REPS} replications per cell).")


if __name__ == "__main__":
    main()
