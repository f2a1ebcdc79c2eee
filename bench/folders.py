"""Many run folders (issue 28 item 1): however many folders, one scan per table.

Real collections are many small runs, one per model, seed, guidance version and day
(bench/scale_data.py writes them so, with realistic, non-repeating texts). Measured, each
engine in fresh processes, ``REPEATS`` times alternating, the median kept, after every
file was read once (so none reads them cold):

- **1,000 folders of 1,000 attempts** (about 10M tool-call rows): evalnb's ``en.load`` +
  ``summary``, ``by_category``, ``context_growth(by="run")`` and ``interaction(by="run")``
  against DuckDB computing the same figures from the same parquet columns
  (bench/scale.py's script). Goal: at most 1.0x DuckDB.
- **1,000 and 10,000 folders of 59 attempts** (a 59-task dataset, one epoch): the same
  five steps; 10,000 against the 5 s limit; the fixed cost per folder, ``(t(10,000) -
  t(1,000)) / 9,000``, against the 1 ms limit; the 10,000 case step by step (``en.load``
  and each analysis, wall and CPU), so every second is accounted for.
- Beside each, polars' own lazy scan of every ``tasks.parquet`` computing summary's
  per-run totals (what a user would write by hand: no intervals, costs or checks).

Run: ``python -m bench.folders`` (``BENCH_SCALE_DATA=DIR`` keeps the data there; the
10,000 folders take a few minutes to write).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import scale, scale_data

REPEATS = 3
LIMIT_SMALL_S, LIMIT_PER_FOLDER_MS, GOAL_DUCKDB = 5.0, 1.0, 1.0
STEPS = ("load", "summary", "by_category", "context_growth", "interaction")
"""The steps bench/scale.py's evalnb script times, each in wall and CPU seconds."""

POLARS = """
import json, resource, sys, time
import polars as pl
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
cpu0, t0 = cpu(), time.perf_counter()
passed = pl.col("passed").fill_null(False) & pl.col("error").is_null()
totals = [pl.len(), passed.sum(), pl.col("error").count()] + [
    pl.col(c).sum() for c in ("score", "max_score", "turns", "total_input_tokens",
    "total_output_tokens", "duration_ms", "tool_call_count", "tool_calls_ok",
    "tool_calls_error")] + [pl.col("natural_stop").mean()]
pl.scan_parquet(sys.argv[1] + "/*/tasks.parquet").group_by("run_id").agg(totals).collect()
print(json.dumps({"total": time.perf_counter() - t0, "cpu_s": cpu() - cpu0,
                  "rss_mib": peak_mib()}))
"""


def _data(root: Path, name: str, runs: int, tasks: int) -> Path:
    """``runs`` run folders of ``tasks`` attempts under ``root/name`` (written once)."""
    folder, done = root / name, root / f"{name}.json"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        rows, _ = scale_data.write_store(runs * tasks * 10, folder, runs, tasks)
        done.write_text(json.dumps({"rows": rows}))
    return folder


def _subset(folder: Path, n: int, to: Path) -> Path:
    """A folder holding copies of the first ``n`` run folders of ``folder`` (written once).

    Copies, not symlinks: ``en.load`` resolves each symlinked folder, a cost the 10,000
    folders do not pay, which would shrink the fixed cost per folder measured."""
    done = to.with_name(f"{to.name}.json")
    if not done.exists():
        shutil.rmtree(to, ignore_errors=True)
        to.mkdir(parents=True)
        for run in sorted(folder.iterdir())[:n]:
            shutil.copytree(run, to / run.name)
        done.write_text(json.dumps({"runs": n}))
    return to


def _warm(folder: Path) -> None:
    """Read every parquet file once, so that no engine reads them cold."""
    for file in folder.rglob("*.parquet"):
        file.read_bytes()


def _median(engines: dict[str, str], folder: Path) -> dict[str, dict[str, float]]:
    """Each engine's run with the median total of ``REPEATS``, alternating, with the load
    average before its runs."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    load = os.getloadavg()[0]
    for _ in range(REPEATS):
        for name, code in engines.items():
            runs[name].append(scale._run(code, folder))
    out = {name: sorted(r, key=lambda x: x["total"])[len(r) // 2] for name, r in runs.items()}
    for result in out.values():
        result["load_average"] = statistics.mean([load, os.getloadavg()[0]])
    return out


def measure(root: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Every figure of the module docstring, by case and engine."""
    wide = _data(root, "folders-1000x1000", 1000, 1000)
    small = _data(root, "folders-10000x59", 10_000, 59)
    cases = {
        "1000x1000": (wide, {"evalnb": scale.EVALNB, "duckdb": scale.DUCKDB, "polars": POLARS}),
        "1000x59": (_subset(small, 1000, root / "folders-1000x59"), {"evalnb": scale.EVALNB}),
        "10000x59": (small, {"evalnb": scale.EVALNB, "polars": POLARS}),
    }
    out = {}
    for case, (folder, engines) in cases.items():
        _warm(folder)
        out[case] = _median(engines, folder)
    return out


def lines() -> list[str]:
    """Markdown lines for bench/RESULTS.md."""
    kept = os.environ.get("BENCH_SCALE_DATA")
    with tempfile.TemporaryDirectory() as tmp:
        m = measure(Path(kept or tmp))
    wide, one, ten = m["1000x1000"], m["1000x59"], m["10000x59"]
    rows = [
        "| folders x attempts | engine | wall (s) | CPU (s) | peak RSS (MiB) | load average |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for case, engines in m.items():
        for name, r in engines.items():
            rows.append(
                f"| {case.replace('x', ' x ')} | {name} | {r['total']:.2f} | {r['cpu_s']:.2f} "
                f"| {r['rss_mib']:.0f} | {r['load_average']:.1f} |"
            )
    e, d = wide["evalnb"], wide["duckdb"]
    per_folder_ms = (ten["evalnb"]["total"] - one["evalnb"]["total"]) / 9000 * 1000
    per_folder_cpu_ms = (ten["evalnb"]["cpu_s"] - one["evalnb"]["cpu_s"]) / 9000 * 1000
    steps = "en.load + summary, by_category, context_growth, interaction"
    return [
        *rows,
        "",
        f"- 1,000 folders x 1,000 attempts, {steps}: evalnb {e['total']:.2f} s "
        f"({e['cpu_s']:.2f} s CPU), DuckDB {d['total']:.2f} s ({d['cpu_s']:.2f} s CPU): "
        f"**{e['total'] / d['total']:.2f}x DuckDB** ({e['cpu_s'] / d['cpu_s']:.2f}x in CPU; "
        f"goal <= {GOAL_DUCKDB:.1f}x)",
        f"- 10,000 folders x 59 attempts, the same: {ten['evalnb']['total']:.2f} s "
        f"({ten['evalnb']['cpu_s']:.2f} s CPU): **{ten['evalnb']['total'] / LIMIT_SMALL_S:.2f}x "
        f"the {LIMIT_SMALL_S:.0f} s limit**",
        "  - by step (the median run): "
        + ", ".join(
            f"{step} {ten['evalnb'][step]:.2f} s ({ten['evalnb'][f'{step}_cpu']:.2f} s CPU)"
            for step in STEPS
        ),
        f"- fixed cost per folder, (t(10,000) - t(1,000)) / 9,000: {per_folder_ms:.2f} ms "
        f"({per_folder_cpu_ms:.2f} ms CPU): **{per_folder_ms / LIMIT_PER_FOLDER_MS:.2f}x the "
        f"{LIMIT_PER_FOLDER_MS:.0f} ms limit**",
        f"- polars' own lazy scan of summary's per-run totals (no intervals, costs or checks): "
        f"{wide['polars']['total']:.2f} s for 1,000 x 1,000 (evalnb's five steps "
        f"{e['total'] / wide['polars']['total']:.1f}x it), {ten['polars']['total']:.2f} s for "
        f"10,000 x 59 ({ten['evalnb']['total'] / ten['polars']['total']:.1f}x)",
    ]


if __name__ == "__main__":
    started = time.perf_counter()
    print("\n".join(lines()))
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)
