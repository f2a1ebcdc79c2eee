"""Analysis speed on about 1,000,000 tool-call rows (issue 4 benchmark).

Builds a store by replicating the three published bashkit-eval runs (from
``../shared/fixtures``) under new run ids and epochs, writes it as evalnb run folders
(parquet), then times ``en.load`` + ``en.summary``, ``en.by_category``,
``en.context_growth`` and ``en.interaction``, and the same summary written naively in
pandas with per-task Python loops. Also prints how load + summaries scale at
10k / 100k / 1M rows.

Run: ``python -m bench.frames``
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pandas as pd
import polars as pl

import evalnb as en
from evalnb._analysis.runs import Runs
from evalnb._store.tables import TABLES
from evalnb.records import RunMeta

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "bashkit-eval"
TARGET_ROWS = 1_000_000
RUNS_PER_MODEL = 10


def base_runs() -> Runs:
    """The three real runs, loaded once."""
    files = sorted(FIXTURES.glob("*.json"))
    if not files:
        raise SystemExit(f"bench needs the shared fixtures at {FIXTURES}")
    return en.load(*files)


def replicate(base: Runs, target_rows: int, out: Path) -> int:
    """Write ``RUNS_PER_MODEL`` run folders per model whose tool calls total ~target_rows."""
    per_replica = base.tool_calls.height * RUNS_PER_MODEL
    epochs = max(1, round(target_rows / per_replica))
    epoch_frame = pl.DataFrame({"_e": pl.int_range(1, epochs + 1, eager=True)})
    total = 0
    for run in base.runs.iter_rows(named=True):
        for copy in range(RUNS_PER_MODEL):
            run_id = f"{run['run_id']}-copy{copy:02d}"
            folder = out / run_id
            folder.mkdir(parents=True)
            for name in TABLES[1:]:
                frame = getattr(base, name).filter(pl.col("run_id") == run["run_id"])
                frame = (
                    frame.join(epoch_frame, how="cross")
                    .with_columns(pl.lit(run_id).alias("run_id"), pl.col("_e").alias("epoch"))
                    .drop("_e")
                )
                frame.write_parquet(folder / f"{name}.parquet")
                total += frame.height if name == "tool_calls" else 0
            meta = {  # the runs table also holds derived columns (run_key, model_family)
                k: v for k, v in run.items() if v is not None and k in RunMeta.model_fields
            } | {
                "run_id": run_id,
                "status": "complete",
                "epochs": epochs,
            }
            (folder / "run.json").write_text(RunMeta(**meta).model_dump_json())
    return total


def analyse(path: Path) -> dict[str, float]:
    """Time load and the four analysis calls."""
    times: dict[str, float] = {}
    started = time.perf_counter()
    runs = en.load(path)
    times["load"] = time.perf_counter() - started
    for name, fn in [
        ("summary", en.summary),
        ("by_category", en.by_category),
        ("context_growth", en.context_growth),
        ("interaction", en.interaction),
    ]:
        t = time.perf_counter()
        fn(runs)
        times[name] = time.perf_counter() - t
    times["total"] = time.perf_counter() - started
    times["tool_call_rows"] = runs.tool_calls.height
    return times


def naive_summary(path: Path) -> float:
    """The same per-run summary in pandas with per-task Python loops (the slow way)."""
    started = time.perf_counter()
    runs = en.load(path).to_pandas()
    tasks, calls = runs.tasks, runs.tool_calls
    out = []
    for run_id in tasks["run_id"].unique():
        run_tasks = tasks[tasks["run_id"] == run_id]
        score = max_score = passed = turns = 0.0
        ok = n_calls = 0
        for _, task in run_tasks.iterrows():
            score += task["score"]
            max_score += task["max_score"]
            passed += bool(task["passed"])
            turns += task["turns"]
            mine = calls[
                (calls["run_id"] == run_id)
                & (calls["task_id"] == task["task_id"])
                & (calls["epoch"] == task["epoch"])
            ]
            n_calls += len(mine)
            ok += int((mine["exit_code"] == 0).sum())
        out.append(
            {
                "run_id": run_id,
                "overall_rate": score / max_score,
                "pass_rate": passed / len(run_tasks),
                "tool_call_success_rate": ok / n_calls,
                "avg_turns_per_task": turns / len(run_tasks),
            }
        )
    pd.DataFrame(out)
    return time.perf_counter() - started


def main() -> None:
    """Print the 1M-row figures, the naive comparison, and the scaling table."""
    base = base_runs()
    with tempfile.TemporaryDirectory() as tmp:
        scale_rows = []
        for target in (10_000, 100_000, TARGET_ROWS):
            folder = Path(tmp) / str(target)
            rows = replicate(base, target, folder)
            times = analyse(folder)
            scale_rows.append((rows, times))
        rows, times = scale_rows[-1]
        print(f"analysis on {rows:,} tool-call rows ({RUNS_PER_MODEL * 3} runs):")
        for name in ("load", "summary", "by_category", "context_growth", "interaction", "total"):
            print(f"  {name:<15} {times[name]:7.3f} s")
        print("  target: load + all four < 3 s")
        # the naive version loops per task: time it on the 100k store and scale linearly
        naive_rows, fast = scale_rows[1]
        naive = naive_summary(Path(tmp) / "100000")
        fast_summary = fast["load"] + fast["summary"]
        print(
            f"naive pandas summary on {naive_rows:,} rows: {naive:.2f} s; evalnb load + summary "
            f"{fast_summary:.3f} s; ratio {naive / fast_summary:.0f}x (target >= 10x)"
        )
        print("scaling (load + summary + by_category + context_growth + interaction):")
        for n, t in scale_rows:
            print(f"  {n:>9,} rows  {t['total']:7.3f} s  ({t['total'] / n * 1e6:.2f} us/row)")


if __name__ == "__main__":
    main()
