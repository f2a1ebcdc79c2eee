"""Several judges (``--judge`` repeated): what they add to scoring time and to ``summary``.

1. Scoring one scenario attempt with each of three simulated judges that sleep their
   latency (``sim/careful``, ``sim/hasty``, ``sim/flailing``) alone, then with all
   three: the judges are asked at once, so the three together should take about the
   slowest one's time, not the sum.
2. ``en.summary`` on ~1,000,000 tool-call rows without any judge (the replicated
   bashkit-eval runs of :mod:`bench.frames`), with its ``judge_cost_usd`` and without it
   (the peer, measured in the same run, the two alternating): what pricing the judges
   costs runs that have none. Median of :data:`ROUNDS`, wall and CPU.

Run: ``python -m bench.judges``
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import warnings
from pathlib import Path

import polars as pl

import evalnb as en
from evalnb._analysis import summary as summary_module
from evalnb._formats.scenario import load_scenario
from evalnb._resources import dataset_path
from evalnb._runtime.providers.sim import SimProvider
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb.records import AgentTrace, ToolCallResult

PERSONAS = ("careful", "hasty", "flailing")
ROUNDS = 15


def scoring() -> None:
    """Section 1: scoring time with each sleeping simulated judge alone, then all three."""
    scenario = load_scenario(dataset_path("notes") / "notes_export_report.yaml")
    trace = AgentTrace(tool_calls=[ToolCallResult(commands="notes list", exit_code=0)])
    judges = [SimProvider(p, sleep=True) for p in PERSONAS]
    print("| judges | scoring wall (s) | CPU (s) |")
    print("|---|---|---|")
    alone = []
    for chosen in [[j] for j in judges] + [judges]:
        case = ScenarioCase(scenario, judge=chosen[0], extra_judges=chosen[1:])
        box = asyncio.run(case.sandbox())
        wall, cpu = time.perf_counter(), time.process_time()
        asyncio.run(case.score(trace, box))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        box.close()
        alone += [wall] if len(chosen) == 1 else []
        print(f"| {', '.join(j.model for j in chosen)} | {wall:.2f} | {cpu:.2f} |")
    print(f"\nalone: slowest {max(alone):.2f} s, sum {sum(alone):.2f} s")


def summary_overhead() -> None:
    """Section 2: summary with and without judge_costs on runs without judges."""
    from bench.frames import base_runs, replicate

    real = summary_module.judge_costs

    def none(runs: en.Runs, prices: object = None) -> pl.LazyFrame:
        return pl.LazyFrame(schema={"run_key": pl.Int64, "judge_cost_usd": pl.Float64})

    variants = {"with judge_cost_usd": real, "without (peer)": none}
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the replicated models have no price
        rows = replicate(base_runs(), 1_000_000, Path(folder))
        runs = en.load(folder)
        print(f"\n{rows:,} tool calls, {runs.tasks.height:,} attempts, no judge:\n")
        for _ in range(ROUNDS):  # alternating, so that neither variant runs warmer
            for label, judge_costs in variants.items():
                summary_module.judge_costs = judge_costs  # type: ignore[assignment]
                wall, cpu = time.perf_counter(), time.process_time()
                en.summary(runs)
                times[label].append((time.perf_counter() - wall, time.process_time() - cpu))
        summary_module.judge_costs = real
    print(f"| summary (median of {ROUNDS}) | wall (ms) | CPU (ms) |")
    print("|---|---|---|")
    for label, pairs in times.items():
        walls, cpus = (sorted(x) for x in zip(*pairs, strict=True))
        print(f"| {label} | {walls[ROUNDS // 2] * 1000:.0f} | {cpus[ROUNDS // 2] * 1000:.0f} |")


if __name__ == "__main__":
    scoring()
    summary_overhead()
