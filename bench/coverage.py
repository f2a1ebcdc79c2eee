"""Simulated coverage of evalnb's 95% intervals against the methods they replaced.

``python -m bench.coverage`` prints the Markdown of ``bench/COVERAGE.md`` (seeded; well
under a minute):

- pass rate over a grid of tasks (5-100), epochs (1-10) and task pass probabilities
  drawn from Beta(a, b) with a mean near 0, in the middle and near 1: evalnb's
  task-clustered Wilson interval (:func:`evalnb.analysis.stats.clustered_wilson_sums`,
  with its small-sample cluster correction), the same interval without that correction
  (Wilson at the effective sample size with the normal quantile, evalnb's interval
  before), and Wilson on attempts as if they were independent.
- overall rate (1-5 checks per task, each task's checks passing with a Beta(a, b)
  probability): the clustered interval, the uncorrected one and the percentile bootstrap
  of tasks (2,000 resamples), which collapses at the ceiling.

The target is the population rate ``a / (a + b)``. Each cell is the share of
replications whose interval holds the target.
"""

from __future__ import annotations

import numpy as np

from evalnb.analysis.stats import Z95, clustered_wilson_sums

TASKS = [5, 10, 25, 50, 100]
EPOCHS = [1, 2, 5, 10]
RATES = [("near 0", 0.5, 9.5), ("middle", 1.2, 0.8), ("near 1", 9.5, 0.5)]
OVERALL_CASES = [(5, 3.0, 2.0), (10, 3.0, 2.0), (25, 3.0, 2.0), (25, 9.0, 1.0),
                 (25, 49.0, 1.0), (59, 9.0, 1.0)]  # fmt: skip


def _sums(y: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, ...]:
    return (y.sum(1), m.sum(1), (y * y).sum(1), (y * m).sum(1), (m * m).sum(1))


def _wilson(p: np.ndarray, n: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 / denom * np.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return centre - half, centre + half


def _uncorrected(y: np.ndarray, m: np.ndarray, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    """The clustered Wilson interval as evalnb had it: effective sample size, normal quantile."""
    sy, sm, syy, sym, smm = _sums(y, m)
    r = sy / sm
    var = np.maximum(syy - 2 * r * sym + r * r * smm, 0.0) / (sm * sm)
    spread = r * (1 - r)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (spread > 0) & (var > 1e-15 * np.maximum(spread, 1e-300))
        n_eff = np.where(ok, spread / np.where(ok, var, 1.0), sm * sm / smm)
    return _wilson(r, np.minimum(n_eff, sm) if counts else n_eff)


def _clustered(y: np.ndarray, m: np.ndarray, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    k = np.full(y.shape[0], y.shape[1])
    limits = clustered_wilson_sums(k, *_sums(y, m), counts=counts)
    return limits["lo"].to_numpy(), limits["hi"].to_numpy()


def _covers(interval: tuple[np.ndarray, np.ndarray], truth: float) -> float:
    lo, hi = interval
    return float(np.mean((lo <= truth) & (hi >= truth)))


def _bootstrap(y: np.ndarray, m: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    w = rng.multinomial(y.size, np.full(y.size, 1 / y.size), size=2000)
    num, den = w @ y, w @ m
    rates = num[den > 0] / den[den > 0]
    lo, hi = np.quantile(rates, [0.025, 0.975])
    return float(lo), float(hi)


def pass_rate_table(reps: int = 4000) -> list[str]:
    """Coverage of the pass-rate intervals over the grid, with a summary row per method."""
    rng = np.random.default_rng(1)
    lines = [
        "| rates | Beta(a, b) | tasks | epochs | clustered Wilson | uncorrected (before) "
        "| attempt-level Wilson |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    cells: list[tuple[int, float, float, float]] = []
    for label, a, b in RATES:
        for tasks in TASKS:
            for epochs in EPOCHS:
                y = rng.binomial(epochs, rng.beta(a, b, (reps, tasks))).astype(float)
                m = np.full_like(y, epochs)
                truth = a / (a + b)
                new = _covers(_clustered(y, m, counts=True), truth)
                old = _covers(_uncorrected(y, m, counts=True), truth)
                naive = _covers(_wilson(y.sum(1) / (tasks * epochs), tasks * epochs), truth)
                cells.append((tasks, new, old, naive))
                lines.append(
                    f"| {label} | ({a:g}, {b:g}) | {tasks} | {epochs} | {new:.3f} | {old:.3f} "
                    f"| {naive:.3f} |"
                )
    lines += ["", "| tasks | method | lowest | mean | highest |", "|---:|---|---:|---:|---:|"]
    for tasks in [*TASKS, 0]:
        chosen = [c for c in cells if tasks in (0, c[0])]
        for i, name in enumerate(("clustered Wilson", "uncorrected (before)", "attempt-level")):
            col = np.array([c[1 + i] for c in chosen])
            lines.append(
                f"| {tasks or 'all'} | {name} | {col.min():.3f} | {col.mean():.3f} "
                f"| {col.max():.3f} |"
            )
    return lines


def overall_rate_table(reps: int = 1000) -> list[str]:
    """Coverage of the overall-rate intervals (checks per task, scores clustered by task)."""
    rng = np.random.default_rng(2)
    lines = [
        "| tasks | Beta(a, b) | clustered Wilson | uncorrected (before) "
        "| task bootstrap (percentile) |",
        "|---:|---|---:|---:|---:|",
    ]
    for tasks, a, b in OVERALL_CASES:
        m = rng.integers(1, 6, (reps, tasks)).astype(float)
        y = rng.binomial(m.astype(int), rng.beta(a, b, (reps, tasks))).astype(float)
        truth = a / (a + b)
        boot = np.array([_bootstrap(y[i], m[i], rng) for i in range(reps)])
        lines.append(
            f"| {tasks} | ({a:g}, {b:g}) | {_covers(_clustered(y, m, counts=False), truth):.3f} "
            f"| {_covers(_uncorrected(y, m, counts=False), truth):.3f} "
            f"| {_covers((boot[:, 0], boot[:, 1]), truth):.3f} |"
        )
    return lines


def main() -> None:
    print("Command: `python -m bench.coverage` (seeded; the output of that command).\n")
    print("## Coverage of 95% intervals (simulated)\n")
    print("### Pass rate with epochs (4,000 replications each)\n")
    print("\n".join(pass_rate_table()))
    print("\n### Overall rate (1,000 replications each)\n")
    print("\n".join(overall_rate_table()))


if __name__ == "__main__":
    main()
