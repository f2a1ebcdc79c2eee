"""Synthetic evalnb run folders at scale, with realistic, non-repeating texts.

Each run has ``TASKS`` tasks x ``epochs`` attempts; an attempt makes 1-19 tool calls
(mean 10) and one LLM call more than it makes tool calls. Every ``stdout``, task
description and final answer is a fresh sequence of words plus numbers and paths,
so the parquet files compress like real output rather than like copies.

Tool-call scripts are drawn (skewed, like real agents repeating ``ls`` and ``cat``)
from a pool of ``SCRIPTS`` distinct scripts built from command templates. Each tasks
table stores its command counts as a run folder does when it is written
(:func:`evalnb._store.command_counts.with_command_counts`, the same code), so writing
the data includes that cost and ``interaction`` reads the stored counts; its figures
summed from the call rows come from :func:`evalnb._store.tables.with_call_figures`, as in
every run folder.

The ``messages`` table holds one block per attempt (the final answer), not one per
LLM call, to keep the 100M-row data within the disk of a shared machine; no metric
measured here reads it.

Run: ``python -m bench.scale_data ROWS OUT [RUNS [TASKS]]`` writes ~ROWS tool-call rows under
OUT, in RUNS run folders (default 20) of TASKS tasks (default 1,000).
"""

from __future__ import annotations

import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from evalnb._store.command_counts import with_command_counts
from evalnb._store.tables import SCHEMAS, conform, with_call_figures
from evalnb.records import RunMeta, RunSettings

TASKS = 1000
RUNS = 20
GUIDANCE = ["v1", "v2"]
SCRIPTS = 10_000
CATEGORIES = [
    "file_operations",
    "text_processing",
    "data_transformation",
    "archive_operations",
    "json_processing",
    "system_info",
    "pipelines",
    "error_recovery",
]
_SYLLABLES = ["ka", "to", "ri", "mon", "se", "lu", "ve", "dar", "pi", "nor", "el", "qua", "sti"]
COMMANDS = [
    "cat {p}",
    "ls -la {d}",
    "grep -n {w} {p}",
    "grep -c {w} {p} | sort -n",
    "wc -l {p}",
    "head -n {n} {p}",
    "tail -n {n} {p}",
    "jq '.{w}' {p}",
    "jq -r '.items[{n}].{w}' {p}",
    "sed -n '{n},{n}p' {p}",
    "awk -F, '{{print ${n}}}' {p} | sort | uniq -c",
    "find {d} -name '*.{w}'",
    "mkdir -p {d}/{w} && cp {p} {d}/{w}/",
    "tar -czf {w}.tar.gz {d}",
    "cut -d: -f{n} {p} | sort -u",
    "echo {w} >> {p}",
    "test -f {p} && echo ok || echo missing",
    'for f in {d}/*; do wc -c "$f"; done',
    "diff {p} {d}/{w}.bak",
    "sort -k{n} -t, {p} | head -n {n}",
]


def words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` distinct-looking pseudo-words (syllable combinations)."""
    parts = rng.integers(0, len(_SYLLABLES), size=(n, 3))
    syl = np.array(_SYLLABLES)
    return np.char.add(np.char.add(syl[parts[:, 0]], syl[parts[:, 1]]), syl[parts[:, 2]])


def text(rng: np.random.Generator, vocab: pl.Series, n: int, n_words: int) -> pl.Series:
    """``n`` texts of ``n_words`` random vocabulary words with numbers: no two alike."""
    cols = [vocab.gather(rng.integers(0, vocab.len(), n)) for _ in range(n_words)]
    nums = pl.Series(rng.integers(0, 10**9, n)).cast(pl.Utf8)
    parts = [*cols[: n_words // 2], nums, *cols[n_words // 2 :]]
    return pl.select(pl.concat_str(parts, separator=" ")).to_series()


def script_pool(rng: np.random.Generator, vocab: np.ndarray, n: int = SCRIPTS) -> list[str]:
    """``n`` distinct scripts (one to three commands joined by ``&&`` or ``;``)."""
    out: set[str] = set()
    while len(out) < n:
        parts = []
        for _ in range(int(rng.integers(1, 4))):
            template = COMMANDS[int(rng.integers(0, len(COMMANDS)))]
            w = str(vocab[int(rng.integers(0, len(vocab)))])
            parts.append(
                template.format(
                    p=f"/data/{w}_{int(rng.integers(0, 50))}.txt",
                    d=f"/work/{vocab[int(rng.integers(0, len(vocab)))]!s}",
                    w=w,
                    n=int(rng.integers(1, 9)),
                )
            )
        out.add(" && ".join(parts) if rng.random() < 0.7 else "; ".join(parts))
    return sorted(out)


def write_run(
    folder: Path,
    run_no: int,
    epochs: int,
    pool: pl.Series,
    vocab: pl.Series,
    tasks_per_run: int = TASKS,
) -> tuple[int, float]:
    """One complete run folder; returns its tool-call rows and the seconds spent counting
    their commands (what finalizing a real run of that size adds).

    Run ``run_no`` is one model (of 4), guidance version (of 2), seed and day, as a
    user's many small runs are."""
    rng = np.random.default_rng(run_no)
    run_id, model = f"scale-run-{run_no:05d}", f"model-{run_no % 4}"
    n = tasks_per_run * epochs
    key = np.arange(n, dtype=np.int64)
    task_no, epoch = key % tasks_per_run, key // tasks_per_run + 1
    calls = rng.integers(1, 20, n)
    score_max = rng.integers(1, 6, n).astype(float)
    score = np.floor(score_max * rng.random(n) ** 0.5 + 0.3).clip(0, score_max)
    failed = rng.random(n) < 0.02
    base = rng.integers(800, 3000, n)
    growth = rng.integers(50, 900, n)
    input_total = calls * base + growth * calls * (calls + 1) // 2 + base
    tasks = pl.DataFrame(
        {
            "run_id": run_id,
            "model": model,
            "task_id": pl.Series([f"task-{t:04d}" for t in range(tasks_per_run)]).gather(task_no),
            "epoch": epoch,
            "category": pl.Series(CATEGORIES).gather(task_no % len(CATEGORIES)),
            "guidance": GUIDANCE[run_no // 4 % len(GUIDANCE)],
            "description": text(rng, vocab, n, 12),
            "turns": calls + 1,
            "natural_stop": rng.random(n) < 0.93,
            "total_input_tokens": input_total,
            "total_output_tokens": rng.integers(100, 4000, n),
            "duration_ms": rng.gamma(2.0, 4000.0, n),
            "score": score,
            "max_score": score_max,
            "rate": score / score_max,
            "passed": (score == score_max) & ~failed,
            "error": pl.select(
                pl.when(pl.Series(failed)).then(pl.lit("provider error on turn 3: rate limited"))
            ).to_series(),
            "attempt_key": key,
        }
    )
    rows = int(calls.sum())
    owner = np.repeat(key, calls)
    starts = np.repeat(np.cumsum(calls) - calls, calls)
    index = np.arange(rows) - starts
    pick = np.minimum(rng.zipf(1.3, rows) - 1, SCRIPTS - 1)
    tool_calls = pl.DataFrame(
        {
            "run_id": run_id,
            "model": model,
            "task_id": tasks.get_column("task_id").gather(owner),
            "epoch": epoch[owner],
            "call_index": index,
            "call_number": index + 1,
            "commands": pool.gather(pick),
            "stdout": text(rng, vocab, rows, 14),
            "stderr": "",
            "exit_code": np.where(rng.random(rows) < 0.8, 0, rng.integers(1, 3, rows)),
            "duration_ms": rng.gamma(1.5, 20.0, rows),
            "stdout_truncated": False,
            "stderr_truncated": False,
            "timed_out": False,
            "attempt_key": owner,
        }
    )
    llm_n = calls + 1
    llm_owner = np.repeat(key, llm_n)
    llm_index = np.arange(int(llm_n.sum())) - np.repeat(np.cumsum(llm_n) - llm_n, llm_n)
    llm_calls = pl.DataFrame(
        {
            "run_id": run_id,
            "model": model,
            "task_id": tasks.get_column("task_id").gather(llm_owner),
            "epoch": epoch[llm_owner],
            "call_number": llm_index + 1,
            "input_tokens": base[llm_owner] + growth[llm_owner] * llm_index,
            "output_tokens": rng.integers(20, 600, llm_owner.size),
            "cache_read_tokens": rng.integers(0, 800, llm_owner.size),
            "cache_write_tokens": rng.integers(0, 100, llm_owner.size),
            "latency_ms": rng.gamma(2.0, 600.0, llm_owner.size),
            "tool_calls_made": np.where(llm_index < calls[llm_owner], 1, 0),
            "stop_reason": np.where(llm_index < calls[llm_owner], "tool_use", "end_turn"),
            "attempt_key": llm_owner,
        }
    )
    check_owner = np.repeat(key, 3)
    checks = pl.DataFrame(
        {
            "run_id": run_id,
            "model": model,
            "task_id": tasks.get_column("task_id").gather(check_owner),
            "epoch": epoch[check_owner],
            "layer": "expectation",
            "check": pl.Series(["exit_code:0", "stdout_contains", "file_exists"] * n),
            "kind": "check",
            "passed": rng.random(3 * n) < 0.8,
            "weight": 1.0,
            "attempt_key": check_owner,
        }
    )
    messages = pl.DataFrame(
        {
            "run_id": run_id,
            "model": model,
            "task_id": tasks.get_column("task_id"),
            "epoch": epoch,
            "message_index": 2 * calls + 1,
            "role": "assistant",
            "block_index": 0,
            "type": "text",
            "text": text(rng, vocab, n, 40),
            "attempt_key": key,
        }
    )
    invocations = pl.DataFrame(schema=SCHEMAS["tool_invocations"])
    # what a run folder stores, by evalnb's own code (see tables_from_records, RunStore.finalize)
    tool_calls, llm_calls = conform(tool_calls, "tool_calls"), conform(llm_calls, "llm_calls")
    tasks = with_call_figures(tasks, llm_calls, tool_calls)
    started = time.perf_counter()
    tasks = with_command_counts(tasks, tool_calls, invocations)
    counting = time.perf_counter() - started
    folder.mkdir(parents=True)
    for name, frame in [
        ("tasks", tasks),
        ("tool_calls", tool_calls),
        ("llm_calls", llm_calls),
        ("checks", checks),
        ("messages", messages),
        ("tool_invocations", invocations),
    ]:
        conform(frame, name).write_parquet(folder / f"{name}.parquet")
    day = date(2026, 1, 1) + timedelta(days=run_no // 8)
    meta = RunMeta(
        run_id=run_id,
        provider="bench",
        model=model,
        status="complete",
        epochs=epochs,
        guidance=GUIDANCE[run_no // 4 % len(GUIDANCE)],
        started_at=f"{day.isoformat()}T09:00:00Z",
        task_count=n,
        settings=RunSettings(seed=run_no),
    )
    (folder / "run.json").write_text(meta.model_dump_json())
    return rows, counting


def write_store(
    rows: int, out: Path, runs: int = RUNS, tasks_per_run: int = TASKS
) -> tuple[int, float]:
    """``runs`` run folders of ``tasks_per_run`` tasks under ``out`` holding about ``rows``
    tool-call rows in total (``rows / (runs * tasks_per_run * 10)`` epochs, at least 1);
    returns the rows written and the seconds spent counting their commands."""
    rng = np.random.default_rng(0)
    vocab_np = words(rng, 5000)
    vocab = pl.Series(vocab_np)
    pool = pl.Series(script_pool(rng, vocab_np))
    epochs = max(1, round(rows / (runs * tasks_per_run * 10)))
    written = [
        write_run(out / f"run-{r:05d}", r, epochs, pool, vocab, tasks_per_run) for r in range(runs)
    ]
    return sum(r for r, _ in written), sum(s for _, s in written)


if __name__ == "__main__":
    print(write_store(int(float(sys.argv[1])), Path(sys.argv[2]), *map(int, sys.argv[3:5])))
