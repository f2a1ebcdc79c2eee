"""Real-API throughput: calls per second through the real OpenAI SDK at 1, 2 and 4 workers.

A local OpenAI-compatible server (bench/chat_server.py, its own process, real sockets on
127.0.0.1) answers every call after a fixed delay. The runner plays ``openai/bench-model``
against it, every call going through the real SDK: ``TASKS`` tasks of two calls each (a
tool call, then a final answer) at concurrency ``CONCURRENCY``, in 1, 2 and 4 worker
processes (``evalnb run --workers N``). The zero-overhead limit is what the server's
delay allows: ``CONCURRENCY`` calls in flight, each taking ``DELAY_S``. Wall time is the
whole run: starting the workers, every attempt, building the tables. The median call
latency (as the runner recorded it) shows the queueing inside a saturated process: the
server's own share of it is ``DELAY_S``.

Run: ``python -m bench.workers`` (or ``python -m bench workers``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time

import polars as pl

from evalnb._analysis.runs import read_run_folder
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb.records import Connection, Task

TASKS = 600
CONCURRENCY = 256
DELAY_S = 0.2
WORKERS = (1, 2, 4)


def cases(n: int = TASKS) -> list[BashCase]:
    """Tasks the server's script solves: one ``echo ok``, checked on its output."""
    return [
        BashCase(
            Task(
                id=f"w{i:04d}",
                category="bench",
                prompt="Print ok.",
                expectations=[{"check": "stdout_contains:ok"}],
            )
        )
        for i in range(n)
    ]


def measure(port: int, workers: int) -> dict[str, float]:
    """One run at ``workers`` processes: wall time, calls, errors."""
    connection = Connection(base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        [path] = asyncio.run(
            run_cases(
                cases(),
                ["openai/bench-model"],
                out,
                concurrency=CONCURRENCY,
                connection=connection,
                workers=workers,
                progress=False,
            )
        )
        wall = time.perf_counter() - started
        runs = read_run_folder(path)
        calls = runs.llm_calls.height
        errors = runs.tasks.select(pl.col("error").is_not_null().sum()).item()
        passed = runs.tasks.select(pl.col("passed").sum()).item()
        latency = runs.llm_calls.select(pl.col("latency_ms").median()).item()
    return {
        "workers": workers,
        "wall": wall,
        "calls": calls,
        "errors": errors,
        "passed": passed,
        "latency": latency,
    }


def lines() -> list[str]:
    """The section: calls/s at each worker count, against one worker and the limit."""
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.chat_server", str(DELAY_S)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        rows = [measure(port, n) for n in WORKERS]
    finally:
        server.terminate()
        server.wait()
    limit = CONCURRENCY / DELAY_S
    one = rows[0]["calls"] / rows[0]["wall"]
    out = [
        f"{TASKS} tasks x 2 calls through the real OpenAI SDK to a local server answering "
        f"after {DELAY_S * 1000:.0f} ms, concurrency {CONCURRENCY} (zero-overhead limit "
        f"{CONCURRENCY} / {DELAY_S:g} s = {limit:.0f} calls/s); {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| workers | wall (s) | calls | errored tasks | passed | median call (ms) "
        "| calls/s | vs 1 worker | vs limit |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rate = r["calls"] / r["wall"]
        out.append(
            f"| {r['workers']} | {r['wall']:.2f} | {r['calls']:.0f} | {r['errors']:.0f} | "
            f"{r['passed']:.0f} | {r['latency']:.0f} | {rate:.0f} | {rate / one:.2f}x | "
            f"{rate / limit:.2f} |"
        )
    return out


if __name__ == "__main__":
    print("\n".join(lines()))
