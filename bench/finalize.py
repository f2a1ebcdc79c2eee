"""Finalize and reading a run in progress (issue 18).

Writes a run of ``ATTEMPTS`` finished attempts (10 tool calls and 11 LLM calls each,
with their messages), then times, on the same events.jsonl:

- ``RunStore.records()``: every line parsed, each ``task_finished`` record brought to
  today's token meaning and validated (after an untimed warm-up that builds the record
  validator, which pydantic defers to first use);
- building the tables from the records already in memory (what finalize does instead
  of re-reading the file), then counting the commands it stores with the tasks, and
  ``en.load`` of the run while in progress.

Counting commands is measured on realistic scripts, every one distinct (so each is
parsed): one to three commands from the bench's templates (bench/scale_data.py: pipes,
quoted awk and jq programs, redirections, loops), against the 5 us per tool call goal,
with the share split as plain scripts (evalnb/_store/plain_scripts.py) rather than by
bashkit's parser one by one: the median of ``COUNTS_RUNS`` runs, wall and CPU, with the load
average.

Run: ``python -m bench.finalize``
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import tempfile
import time

import numpy as np

import evalnb as en
from bench import scale_data
from evalnb._store import RunStore
from evalnb._store.command_counts import with_command_counts
from evalnb._store.plain_scripts import plain_target_commands
from evalnb._store.tables import tables_from_records
from evalnb.records import (
    AgentTrace,
    LLMCall,
    RunMeta,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)

ATTEMPTS = 2000
GOAL_US = 5.0
COUNTS_RUNS = 7


def scripts(n: int) -> list[str]:
    """``n`` distinct realistic scripts (bench/scale_data.py's templates)."""
    rng = np.random.default_rng(7)
    pool = scale_data.script_pool(rng, scale_data.words(rng, 5000), n)
    return list(rng.permutation(pool))


def records(n: int) -> list[TaskRecord]:
    """``n`` finished attempts with distinct outputs and distinct realistic scripts."""
    texts = scripts(10 * n)
    out = []
    for i in range(n):
        calls = [
            ToolCallResult(
                commands=texts[10 * i + j],
                stdout=f"{i * 31 + j} matches in file{i} line {j}",
                exit_code=j % 3,
                call_index=j,
                call_number=j + 1,
            )
            for j in range(10)
        ]
        llm = [LLMCall(call_number=j + 1, input_tokens=1000 + 90 * j) for j in range(11)]
        trace = AgentTrace(tool_calls=calls, llm_calls=llm, turns=11, natural_stop=True)
        task = Task(id=f"t{i % 500}", category="c", prompt=f"prompt {i}")
        out.append(
            TaskRecord(task=task, epoch=i // 500 + 1, trace=trace, score=TaskScore(task_id=task.id))
        )
    return out


def main() -> list[str]:
    """Markdown lines with the figures."""
    recs = records(ATTEMPTS)
    with tempfile.TemporaryDirectory() as tmp:
        meta = RunMeta(run_id="fin", provider="bench", model="m")
        path = RunStore.write_records(tmp, meta, recs)
        store = RunStore.open(path)
        built = tables_from_records(meta, recs)
        TaskRecord.model_validate_json(recs[0].model_dump_json())  # builds the validator
        times, cpu = {}, {}
        for name, fn in [
            ("records", store.records),
            ("tables", lambda: tables_from_records(meta, recs)),
        ]:
            started, cpu0 = time.perf_counter(), _cpu()
            fn()
            times[name], cpu[name] = time.perf_counter() - started, _cpu() - cpu0
        load = os.getloadavg()[0]
        counts: list[tuple[float, float]] = []
        for _ in range(COUNTS_RUNS):
            started, cpu0 = time.perf_counter(), _cpu()
            with_command_counts(built["tasks"], built["tool_calls"], built["tool_invocations"])
            counts.append((time.perf_counter() - started, _cpu() - cpu0))
        times["counts"] = statistics.median(wall for wall, _ in counts)
        cpu["counts"] = statistics.median(used for _, used in counts)
        load = (load + os.getloadavg()[0]) / 2
        meta_doc = json.loads((path / "run.json").read_text())
        meta_doc["status"] = "running"
        (path / "run.json").write_text(json.dumps(meta_doc))
        started = time.perf_counter()
        en.load(path)
        times["load_running"] = time.perf_counter() - started
    size = ATTEMPTS
    calls = 10 * size
    per_call, per_call_cpu = times["counts"] / calls * 1e6, cpu["counts"] / calls * 1e6
    plain, _ = plain_target_commands(built["tool_calls"].get_column("commands"))
    return [
        f"{size:,} attempts (10 tool calls, 11 LLM calls each) in events.jsonl:",
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| read the finished records (RunStore.records) | {times['records']:.2f} |",
        f"| build the tables from the records in memory | {times['tables']:.2f} |",
        f"| count the commands stored with the tasks ({calls:,} distinct realistic scripts) "
        f"| {times['counts']:.2f} ({cpu['counts']:.2f} CPU) |",
        f"| en.load of the run while in progress | {times['load_running']:.2f} |",
        "",
        f"Finalize does not read the file again: it builds the tables from the records in "
        f"memory and counts their commands ({times['tables'] + times['counts']:.2f} s) in a "
        "worker thread, so the event loop is not blocked.",
        "",
        f"Counting commands: {per_call:.1f} us per tool call ({per_call_cpu:.1f} us CPU) on "
        f"distinct scripts (median of {COUNTS_RUNS} runs, load average {load:.1f}), "
        f"{plain.mean():.0%} of them plain: **{per_call / GOAL_US:.2f}x the {GOAL_US:.0f} us "
        "goal**.",
    ]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    print("\n".join(main()))
