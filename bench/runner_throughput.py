"""Runner throughput (issue 28 item 5): evalnb and Inspect AI against one local server.

A local OpenAI-compatible server (bench/chat_server.py, its own process, real sockets on
127.0.0.1) answers every call after ``DELAY_S``: a ``bash`` tool call first, then a final
answer, so each task makes two calls. At concurrency 8, 32 and 128, each side runs
``ROUNDS`` x concurrency tasks through the real OpenAI SDK, in one process each, fresh:

- evalnb: ``run_cases`` of bash tasks (bashkit runs the ``echo ok``), one worker;
- Inspect AI: ``eval`` of as many samples whose solver offers a ``bash`` tool (returning
  ``ok`` without a sandbox) and generates until the model stops, ``max_connections``
  the concurrency.

Each side imports the OpenAI SDK before its clock starts (a start-up cost of about
0.5 s CPU, not throughput); the rest of its work is timed: building the provider and
the run, every call, writing the results.

The ideal is what the server allows: concurrency / ``DELAY_S`` calls per second. Printed:
calls/s, the share of the ideal, CPU seconds per call, and evalnb against Inspect.
Goals at concurrency 128: at least 0.5 of the ideal, and at least 5x Inspect.

Run: ``python -m bench.runner_throughput`` (needs the ``inspect`` extra for Inspect's side).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

DELAY_S = 0.2
CONCURRENCIES = (8, 32, 128)
ROUNDS = 5
GOAL_IDEAL, GOAL_INSPECT = 0.5, 5.0
ROOT = Path(__file__).resolve().parents[1]

EVALNB = """
import asyncio, json, os, resource, sys, tempfile, time
import openai  # the SDK's import is start-up, not throughput: before the clock, both sides
from bench.workers import cases
from evalnb.records import Connection
from evalnb._runtime.runner import run_cases
port, concurrency, tasks = (int(a) for a in sys.argv[1:4])
connection = Connection(base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
with tempfile.TemporaryDirectory() as out:
    cpu0, t0 = cpu(), time.perf_counter()
    asyncio.run(run_cases(cases(tasks), ["openai/bench-model"], out, concurrency=concurrency,
                          connection=connection, progress=False))
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": cpu() - cpu0}))
"""

INSPECT = """
import json, resource, sys, tempfile, time
import openai
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool
port, concurrency, tasks = (int(a) for a in sys.argv[1:4])

@tool
def bash():
    async def execute(commands: str) -> str:
        \"\"\"Run a bash script.

        Args:
            commands: The script.
        \"\"\"
        return "ok"
    return execute

task = Task(dataset=[Sample(input="Print ok.", target="ok") for _ in range(tasks)],
            solver=[use_tools([bash()]), generate()])
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
with tempfile.TemporaryDirectory() as logs:
    cpu0, t0 = cpu(), time.perf_counter()
    [log] = eval(task, model="openai/bench-model", model_base_url=f"http://127.0.0.1:{port}/v1",
                 max_connections=concurrency, max_samples=concurrency, log_dir=logs,
                 display="none", max_retries=0, model_args={"responses_api": False})
    wall = time.perf_counter() - t0
    calls = sum(len([e for e in s.events if e.event == "model"]) for s in log.samples or [])
    print(json.dumps({"wall": wall, "cpu": cpu() - cpu0, "calls": calls,
                      "status": log.status}))
"""


def _run(code: str, port: int, concurrency: int, tasks: int) -> dict[str, float]:
    env = os.environ | {"PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-bench"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(port), str(concurrency), str(tasks)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure() -> list[dict[str, float]]:
    """One row per concurrency: each side's calls/s and CPU per call."""
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.chat_server", str(DELAY_S)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    inspect = importlib.util.find_spec("inspect_ai") is not None
    rows = []
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        for concurrency in CONCURRENCIES:
            tasks = ROUNDS * concurrency
            row: dict[str, float] = {"concurrency": concurrency, "calls": 2 * tasks}
            row["load"] = os.getloadavg()[0]
            e = _run(EVALNB, port, concurrency, tasks)
            row["evalnb"], row["evalnb_cpu"] = 2 * tasks / e["wall"], e["cpu"] / (2 * tasks)
            if inspect:
                i = _run(INSPECT, port, concurrency, tasks)
                row["inspect"], row["inspect_cpu"] = i["calls"] / i["wall"], i["cpu"] / i["calls"]
            rows.append(row)
    finally:
        server.terminate()
        server.wait()
    return rows


def lines() -> list[str]:
    """Markdown lines for bench/RESULTS.md."""
    rows = measure()
    out = [
        f"A local OpenAI-compatible server answering after {DELAY_S * 1000:.0f} ms; "
        f"{ROUNDS} x concurrency tasks of 2 calls; one process each side; ideal = "
        f"concurrency / {DELAY_S:g} s.",
        "",
        "| concurrency | ideal (calls/s) | evalnb (calls/s) | of ideal | CPU ms/call "
        "| Inspect (calls/s) | of ideal | CPU ms/call | evalnb / Inspect | load average |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ideal = r["concurrency"] / DELAY_S
        inspect = (
            f"{r['inspect']:.0f} | {r['inspect'] / ideal:.2f} | {r['inspect_cpu'] * 1000:.2f} "
            f"| {r['evalnb'] / r['inspect']:.1f}x"
            if "inspect" in r
            else "not installed | | |"
        )
        out.append(
            f"| {r['concurrency']:.0f} | {ideal:.0f} | {r['evalnb']:.0f} | "
            f"{r['evalnb'] / ideal:.2f} | {r['evalnb_cpu'] * 1000:.2f} | {inspect} "
            f"| {r['load']:.1f} |"
        )
    last = rows[-1]
    ideal = last["concurrency"] / DELAY_S
    out += [
        "",
        f"- concurrency {last['concurrency']:.0f}: evalnb at **{last['evalnb'] / ideal:.2f} of the "
        f"ideal** (goal >= {GOAL_IDEAL})"
        + (
            f", **{last['evalnb'] / last['inspect']:.1f}x Inspect** (goal >= {GOAL_INSPECT:.0f}x)"
            if "inspect" in last
            else ""
        ),
    ]
    return out


if __name__ == "__main__":
    print("\n".join(lines()))
