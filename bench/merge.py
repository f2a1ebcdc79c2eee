"""``evalnb merge`` at scale: 1,000,000 attempts merged, peak memory against the 2 GiB goal.

Writes ``SHARDS`` shard run folders holding ``ATTEMPTS`` attempts in all (the
``BENCH_MERGE_ATTEMPTS`` environment variable changes it), each attempt a copy of one
real attempt of the reference agent on the ``smoke`` dataset under its own task id: its
events (``task_started``, LLM calls, tool calls, ``task_finished`` with the whole
record) and its rows of every table, its texts (:data:`TEXTS`) made distinct. Then merges them with
:func:`evalnb._store.merge.merge_shards` in a fresh process and reports its wall time,
CPU seconds and peak RSS (VmHWM), the peak as a ratio to the 2 GiB limit, with the load
average beside them. The data is deleted afterwards.

Run: ``python -m bench.merge`` (also the ``merge`` section of ``python -m bench``).
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from evalnb._resources import dataset_path
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import run_cases
from evalnb._store.tables import TABLES
from evalnb.records import RunMeta

ROOT = Path(__file__).resolve().parents[1]
ATTEMPTS = 1_000_000
SHARDS = 4
LIMIT_MIB = 2048
TEXTS = ("stdout", "text", "commands", "detail")
"""Text columns made distinct per attempt (the attempt's id appended)."""
PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
MERGE = f"""
import sys, time
from evalnb._store.merge import merge_shards
started = time.perf_counter()
merge_shards(sys.argv[2:], sys.argv[1])
print(time.perf_counter() - started, {PEAK})
"""


def template(root: Path) -> tuple[RunMeta, str, list[str], dict[str, pl.DataFrame]]:
    """One real attempt: its run's meta, task id, event lines and table rows."""
    cases = load_cases(dataset_path("smoke"))[:1]
    [path] = asyncio.run(run_cases(cases, ["reference"], root, shard=(1, 1), progress=False))
    meta = RunMeta.model_validate_json((path / "run.json").read_text())
    task_id = cases[0].task.id
    lines = (path / "events.jsonl").read_text().splitlines(keepends=True)
    tables = {name: pl.read_parquet(path / f"{name}.parquet") for name in TABLES[1:]}
    return meta, task_id, lines, tables


def write_shards(root: Path, attempts: int, shards: int) -> list[Path]:
    """``shards`` complete shard folders of ``attempts`` attempts in all."""
    meta, task_id, lines, tables = template(root / "template")
    text = "".join(lines)
    folders = []
    for s in range(1, shards + 1):
        n = attempts // shards + (s <= attempts % shards)
        folder = root / f"shard{s}"
        folder.mkdir()
        ids = [f"m{s}-{a:07d}" for a in range(n)]
        with (folder / "events.jsonl").open("w", encoding="utf-8") as out:
            for new_id in ids:
                out.write(text.replace(task_id, new_id))
        index = pl.DataFrame({"_a": range(n), "_id": ids})
        for name, rows in tables.items():
            texts = [c for c in TEXTS if c in rows.columns]  # no two attempts' texts alike
            copied = index.join(rows, how="cross").with_columns(
                pl.lit(folder.name).alias("run_id"),
                pl.col("_id").alias("task_id"),
                pl.col("_a").cast(pl.Int64).alias("attempt_key"),
                *(pl.concat_str(pl.col(c), pl.lit(" "), pl.col("_id")).alias(c) for c in texts),
            )
            copied.select(rows.columns).write_parquet(folder / f"{name}.parquet")
        shard = meta.model_copy(deep=True)
        shard.run_id, shard.task_count = folder.name, n
        shard.settings.shard = f"{s}/{shards}"
        (folder / "run.json").write_text(shard.model_dump_json(indent=2))
        folders.append(folder)
    return folders


def measure(attempts: int = ATTEMPTS, shards: int = SHARDS) -> dict[str, float]:
    """Write the shards, merge them in a fresh process; the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        folders = write_shards(root, attempts, shards)
        written_s = time.perf_counter() - started
        events = sum((f / "events.jsonl").stat().st_size for f in folders)
        parquet = sum(p.stat().st_size for f in folders for p in f.glob("*.parquet"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        out = subprocess.run(
            [sys.executable, "-c", MERGE, str(root / "merged"), *map(str, folders)],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        ).stdout.split()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        merged = pl.scan_parquet(root / "merged" / "tasks.parquet").select(pl.len()).collect()
        return {
            "attempts": attempts,
            "shards": shards,
            "merged_attempts": merged.item(),
            "events_gib": events / 2**30,
            "parquet_mib": parquet / 2**20,
            "write_s": written_s,
            "wall_s": float(out[0]),
            "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "peak_mib": int(out[1]) / 1024,
            "load": load,
        }


def lines() -> list[str]:
    """The figures as Markdown."""
    attempts = int(float(os.environ.get("BENCH_MERGE_ATTEMPTS", ATTEMPTS)))
    r = measure(attempts)
    return [
        f"{r['attempts']:,} attempts in {r['shards']} shards ({r['events_gib']:.2f} GiB of "
        f"events, {r['parquet_mib']:.0f} MiB of parquet; written in {r['write_s']:.0f} s), "
        f"merged by `merge_shards` in a fresh process into {r['merged_attempts']:,} attempts:",
        "",
        "| wall (s) | CPU (s) | peak RSS (MiB) | peak / 2 GiB limit | load average (1 min) |",
        "|---:|---:|---:|---:|---:|",
        f"| {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_mib']:.0f} | "
        f"**{r['peak_mib'] / LIMIT_MIB:.2f}x** | {r['load']:.1f} |",
    ]


if __name__ == "__main__":
    print("\n".join(lines()))
