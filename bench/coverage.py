"""Simulated coverage and width of evalnb's 95% rate intervals against the former ones.

``python -m bench.coverage`` prints the Markdown of ``bench/COVERAGE.md`` (seeded; a few
minutes). The grid crosses:

- three rates: the pass rate (``m`` = a task's attempts), the overall rate (1-5 checks
  per attempt, the same number in every epoch of a task) and tool-call success (a
  Poisson(3) number of calls per attempt, so calls per task vary; a task without calls
  is not a cluster);
- task rates drawn from Beta(a, b): near 0, in the middle, near 1, at the ceiling,
  bimodal (tasks nearly always pass or nearly always fail) and bimodal with a high
  mean; each check, attempt or call passes with its task's rate;
- 5, 10, 25, 50 and 100 tasks; 1, 3, 5 and 10 epochs.

Methods: evalnb's interval (:func:`evalnb._analysis.stats.clustered_wilson_sums`:
Agresti-Coull at the effective sample size, a pseudo-task, CR1 on the effective
number of tasks; Clopper-Pearson's exact interval for one pass/fail trial per task)
and the former one (Wilson at the effective sample size, CR1 on the number of tasks,
no pseudo-task). The target is the population rate ``a / (a + b)``;
each cell is the share of replications whose interval holds it, and the mean width.
"""

from __future__ import annotations

import numpy as np
from scipy.special import stdtrit

from evalnb._analysis.stats import Z95, clustered_wilson_sums

REPS = 3000
TASKS = [5, 10, 25, 50, 100]
EPOCHS = [1, 3, 5, 10]
RATES = [
    ("near 0", 0.5, 9.5),
    ("middle", 1.2, 0.8),
    ("near 1", 9.5, 0.5),
    ("ceiling", 49.0, 1.0),
    ("bimodal", 0.1, 0.1),
    ("bimodal high", 0.3, 0.1),
]
METRICS = [("pass rate", True), ("overall rate", False), ("tool-call success", True)]
GOAL = 0.93


def draw(
    rng: np.random.Generator, metric: str, a: float, b: float, tasks: int, epochs: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(y, m)``: per replication (rows) and task (columns), successes and trials."""
    p = rng.beta(a, b, (REPS, tasks))
    if metric == "pass rate":
        m = np.full((REPS, tasks), float(epochs))
    elif metric == "overall rate":
        m = (rng.integers(1, 6, (REPS, tasks)) * epochs).astype(float)
    else:
        m = rng.poisson(3.0, (REPS, tasks, epochs)).sum(2).astype(float)
    return rng.binomial(m.astype(int), p).astype(float), m


def _sums(y: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, ...]:
    return ((m > 0).sum(1), y.sum(1), m.sum(1), (y * y).sum(1), (y * m).sum(1), (m * m).sum(1))


def evalnb_interval(y: np.ndarray, m: np.ndarray, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    limits = clustered_wilson_sums(*_sums(y, m), counts=counts)
    return limits["lo"].to_numpy(), limits["hi"].to_numpy()


def former_interval(y: np.ndarray, m: np.ndarray, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    """The interval evalnb had before issue 25 (Wilson, CR1 on k, no pseudo-task)."""
    k, sy, sm, syy, sym, smm = _sums(y, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sy / sm
        var = np.maximum(syy - 2 * r * sym + r * r * smm, 0.0) / (sm * sm)
        spread = r * (1 - r)
        ok = (spread > 0) & (var > 1e-15 * np.maximum(spread, 1e-300))
        n = np.where(ok, spread / np.where(ok, var, 1.0), sm * sm / smm)
        n = np.minimum(n, sm) if counts else n
        corrected = (k >= 2) & ~((smm <= sm) if counts else np.zeros(k.shape, bool))
        z = np.where(corrected, stdtrit(np.maximum(k - 1, 1), 0.975), Z95)
        n = np.where(corrected, n * (k - 1) / k, n)
        denom = 1 + z * z / n
        centre = (r + z * z / (2 * n)) / denom
        half = z / denom * np.sqrt(spread / n + z * z / (4 * n * n))
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def cells() -> list[tuple[str, str, int, int, float, float, float, float, float]]:
    """``(metric, rates, tasks, epochs, coverage, width, former coverage, former width,
    narrowest)`` for every cell of the grid, the narrowest being evalnb's least width."""
    rng = np.random.default_rng(25)
    out = []
    for metric, counts in METRICS:
        for label, a, b in RATES:
            for tasks in TASKS:
                for epochs in EPOCHS:
                    y, m = draw(rng, metric, a, b, tasks, epochs)
                    keep = m.sum(1) > 0
                    truth = a / (a + b)
                    figures: list[float] = []
                    for method in (evalnb_interval, former_interval):
                        lo, hi = (v[keep] for v in method(y, m, counts))
                        figures += [
                            float(np.mean((lo <= truth) & (truth <= hi))),
                            float(np.mean(hi - lo)),
                        ]
                        if method is evalnb_interval:
                            narrowest = float(np.min(hi - lo))
                    out.append((metric, label, tasks, epochs, *figures, narrowest))
    return out


def main() -> None:
    rows = cells()
    print("Command: `python -m bench.coverage` (seeded; the output of that command).\n")
    print("## Coverage of 95% rate intervals (simulated)\n")
    print(
        f"{REPS:,} replications per cell; the goal is at least {GOAL} in every cell, with "
        "no interval of zero width. evalnb: Agresti-Coull at the effective sample size "
        "with a pseudo-task and CR1 on the effective number of tasks (Clopper-Pearson for "
        "one pass/fail trial per task); former: Wilson at "
        "the effective sample size, CR1 on the number of tasks.\n"
    )
    print("### Summary by rate and task rates\n")
    print("| rate | task rates | evalnb lowest | evalnb mean | evalnb mean width "
          "| former lowest | former mean | former mean width |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for metric, _ in [*METRICS, ("all", False)]:
        for label, *_ in [*RATES, ("all",)]:
            chosen = [r for r in rows if metric in ("all", r[0]) and label in ("all", r[1])]
            if (metric == "all") != (label == "all"):
                continue
            cov, width, old, old_width = (np.array([r[i] for r in chosen]) for i in (4, 5, 6, 7))
            print(
                f"| {metric} | {label} | {cov.min():.3f} | {cov.mean():.3f} | {width.mean():.3f} "
                f"| {old.min():.3f} | {old.mean():.3f} | {old_width.mean():.3f} |"
            )
    below = [r for r in rows if r[4] < GOAL]
    before = [r for r in rows if r[6] < GOAL]
    print(
        f"\nCells below {GOAL}: evalnb {len(below)} of {len(rows)}, former {len(before)}. "
        f"Narrowest evalnb interval in any replication: {min(r[8] for r in rows):.4f}.\n"
    )
    for r in below:
        print(f"- evalnb below the goal: {r[0]}, {r[1]}, {r[2]} tasks x {r[3]} epochs: {r[4]:.3f}")
    print("\n### Every cell\n")
    print("| rate | task rates | tasks | epochs | evalnb | width | former | width |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        figures = " | ".join(f"{v:.3f}" for v in r[4:8])
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {figures} |")


if __name__ == "__main__":
    main()
