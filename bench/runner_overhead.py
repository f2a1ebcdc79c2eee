"""Runner overhead and concurrency scaling (issue 2 benchmark).

1. The reference agent over 200 trivial tasks at concurrency 1: wall time per task,
   and the runner's own share of it (wall time minus the time spent inside sandbox
   calls), against a target of 5 ms per task.
2. A provider that sleeps a fixed latency per call, 200 tasks x 2 calls: wall time at
   concurrency 1 and 16 against the ideal ``latency x calls / concurrency``.

Run: ``python -m bench.runner_overhead``
"""

from __future__ import annotations

import asyncio
import tempfile
import time

import polars as pl

from evalnb._analysis.runs import read_run_folder
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb.records import Task
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse

N_TASKS = 200
LATENCY_S = 0.05


def tasks(n: int = N_TASKS) -> list[BashCase]:
    """Trivial tasks: one quick command and two checks."""
    return [
        BashCase(
            Task(
                id=f"t{i:03d}",
                category=f"c{i % 5}",
                prompt="p",
                solution=f"echo {i} > /tmp/out.txt && cat /tmp/out.txt",
                expectations=[{"check": "exit_code:0"}, {"check": f"stdout_contains:{i}"}],
            )
        )
        for i in range(n)
    ]


class SleepingProvider:
    """Turn 1 asks for one tool call, turn 2 stops; each call sleeps LATENCY_S."""

    provider, model, simulated, recording = "bench", "sleeping", False, None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(LATENCY_S)
        if request.turn == 1:
            return ChatResponse("", [ToolUse("1", "bash", {"commands": "true"})], "tool_use", 10, 1)
        return ChatResponse("done", [], "end_turn", 12, 1)

    def settings(self) -> dict:
        return {"latency_s": LATENCY_S}


def _timed_run(cases, models, concurrency) -> tuple[float, list]:
    out = tempfile.mkdtemp()
    started = time.perf_counter()
    paths = asyncio.run(run_cases(cases, models, out, concurrency=concurrency, progress=False))
    return time.perf_counter() - started, paths


def overhead() -> dict[str, float]:
    """Per-task wall time and runner overhead with the reference agent (concurrency 1)."""
    wall, [path] = _timed_run(tasks(), ["reference"], 1)
    sandbox_s = read_run_folder(path).tool_calls.select(pl.col("duration_ms").sum()).item() / 1000
    return {
        "tasks": N_TASKS,
        "wall_ms_per_task": wall / N_TASKS * 1000,
        "sandbox_ms_per_task": sandbox_s / N_TASKS * 1000,
        "runner_overhead_ms_per_task": (wall - sandbox_s) / N_TASKS * 1000,
    }


def scaling() -> list[dict[str, float]]:
    """Wall time with a sleeping provider at concurrency 1 and 16 against the ideal."""
    rows = []
    for concurrency in (1, 16):
        wall, _ = _timed_run(tasks(), [SleepingProvider()], concurrency)
        ideal = LATENCY_S * 2 * N_TASKS / concurrency
        row = {"concurrency": concurrency, "wall_s": wall, "ideal_s": ideal}
        rows.append(row | {"ratio": wall / ideal})
    return rows


def main() -> None:
    """Print both figures."""
    o = overhead()
    print(f"reference agent, {o['tasks']} tasks, concurrency 1:")
    print(f"  wall time per task      {o['wall_ms_per_task']:7.2f} ms")
    print(f"  inside sandbox calls    {o['sandbox_ms_per_task']:7.2f} ms")
    print(f"  runner overhead         {o['runner_overhead_ms_per_task']:7.2f} ms  (target < 5 ms)")
    print(f"sleeping provider ({LATENCY_S * 1000:.0f} ms/call, 2 calls/task, {N_TASKS} tasks):")
    for row in scaling():
        print(
            f"  concurrency {row['concurrency']:>2}: {row['wall_s']:6.2f} s  ideal "
            f"{row['ideal_s']:6.2f} s  ratio {row['ratio']:.3f}  (target at 16: <= 1.10)"
        )


if __name__ == "__main__":
    main()
