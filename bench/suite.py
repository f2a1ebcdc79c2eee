"""The benchmark suite: every figure the README quotes, measured side by side in one run.

- runner scheduling: 3 models x 100 tasks whose per-call latencies come from the
  recorded bashkit-eval runs (task duration / turns, scaled down 100x), at
  concurrency 1, 8 and 32, against the ideal bound max(longest task, work / c);
- sandbox: per-call time of bashkit against ``subprocess`` bash for the same 50
  commands, and the cost of creating a sandbox;
- analysis: load + summaries on ~1M tool-call rows against a naive pandas version,
  and scaling at 10k / 100k / 1M rows (bench/frames.py);
- notebooks: wall time of the notebook suite under nbmake;
- memory: peak RSS of a 1,000-task run and of loading 1M rows (each in a fresh process);
- import time: ``import evalnb`` against ``import polars`` (bench/import_time.py).

Run: ``python -m bench`` (prints Markdown; bench/RESULTS.md holds a recorded run).
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from bench import frames as frames_bench
from bench import import_time, runner_overhead
from evalnb.records import Task
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse
from evalnb.runtime.bash_case import BashCase
from evalnb.runtime.runner import run_cases
from evalnb.runtime.sandbox import BashkitSandbox

ROOT = Path(__file__).resolve().parents[1]
SCALE = 100


def machine() -> str:
    """A one-paragraph description of this machine and the versions measured."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem_kb = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_kb / 2**20:.0f} GiB; Python "
        f"{platform.python_version()}; evalnb {version('evalnb')}, bashkit {version('bashkit')}, "
        f"polars {version('polars')}"
    )


class RecordedLatencyProvider:
    """Plays a recorded task's turns: each call sleeps the recorded duration / turns / SCALE."""

    provider, simulated, recorded = "bench", False, False

    def __init__(self, model: str, plans: dict[str, tuple[int, float]]) -> None:
        self.model = model
        self.plans = plans  # task id -> (turns, seconds per call)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        turns, per_call = self.plans[request.task.id]
        await asyncio.sleep(per_call)
        if request.turn < turns:
            return ChatResponse(
                "", [ToolUse(str(request.turn), "bash", {"commands": "true"})], "tool_use", 1, 1
            )
        return ChatResponse("done", [], "end_turn", 1, 1)

    def settings(self) -> dict:
        return {}


def scheduling() -> list[str]:
    """Wall time at concurrency 1, 8, 32 against the ideal bound, and the recorded total."""
    base = frames_bench.base_runs().tasks.select("model", "task_id", "turns", "duration_ms")
    providers, work, longest, recorded_ms = [], 0.0, 0.0, 0.0
    cases = [BashCase(Task(id=f"t{i:03d}", category="bench", prompt="p")) for i in range(100)]
    for (model,), group in base.group_by("model", maintain_order=True):
        rows = group.rows(named=True)
        plans = {}
        for i, case in enumerate(cases):
            row = rows[i % len(rows)]
            turns = max(1, row["turns"])
            seconds = row["duration_ms"] / 1000 / SCALE
            plans[case.task.id] = (turns, seconds / turns)
            work += seconds
            longest = max(longest, seconds)
            recorded_ms += row["duration_ms"]
        providers.append(RecordedLatencyProvider(model, plans))
    lines = [
        "| concurrency | wall (s) | ideal bound (s) | wall / bound |",
        "|---:|---:|---:|---:|",
    ]
    wall = {}
    for concurrency in (1, 8, 32):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            asyncio.run(run_cases(cases, providers, out, concurrency=concurrency, progress=False))
            wall[concurrency] = time.perf_counter() - started
        bound = max(longest, work / concurrency)
        lines.append(
            f"| {concurrency} | {wall[concurrency]:.2f} | {bound:.2f} | "
            f"{wall[concurrency] / bound:.3f} |"
        )
    speedup = recorded_ms / 1000 / (wall[32] * SCALE)
    lines.append("")
    lines.append(
        f"The recordings ran these 300 tasks one after another in {recorded_ms / 60000:.1f} min; "
        f"at concurrency 32 the same latencies (scaled back up) take "
        f"{wall[32] * SCALE / 60:.1f} min: a {speedup:.0f}x speed-up."
    )
    return lines


COMMANDS = [
    "echo hello",
    "printf '%s\\n' a b c",
    "ls /work",
    "ls -la /work",
    "cat /work/data.csv",
    "wc -l /work/data.csv",
    "head -3 /work/data.csv",
    "tail -2 /work/data.csv",
    "grep -c a /work/data.csv",
    "grep -n b /work/data.csv",
    "sort /work/words.txt",
    "sort -u /work/words.txt",
    "sort /work/words.txt | uniq -c",
    "cut -d, -f1 /work/data.csv",
    "awk -F, '{s+=$2} END {print s}' /work/data.csv",
    "sed 's/a/A/g' /work/words.txt",
    "tr a-z A-Z < /work/words.txt",
    "tr -d '\\n' < /work/words.txt",
    "rev /work/words.txt",
    "basename /work/data.csv",
    "dirname /work/data.csv",
    "date +%Y",
    "x=$((6*7)); echo $x",
    "for i in 1 2 3; do echo $i; done",
    "seq 1 100 | tail -1",
    "mkdir -p /work/d/e",
    "touch /work/d/f",
    "cp /work/data.csv /work/copy.csv",
    "mv /work/copy.csv /work/moved.csv",
    "rm -f /work/moved.csv",
    "test -f /work/data.csv && echo yes",
    "[ -d /work/d ] && echo dir",
    "find /work -name '*.csv'",
    "du -s /work",
    "echo a,b | cut -d, -f2",
    "paste -sd, /work/words.txt",
    "nl /work/words.txt",
    "fold -w 3 /work/words.txt",
    "echo $HOME",
    "env | wc -l",
    "tee /work/t.txt < /work/words.txt",
    "cat /work/words.txt | grep -v x | wc -l",
    "echo 'a b c' | awk '{print $2}'",
    "printf 'b\\na\\n' | sort",
    "expr 3 + 4",
    "echo abc | od -c | head -1",
    "true",
    "false; echo $?",
    "md5sum /work/data.csv",
    "sha256sum /work/words.txt",
]
FILES = {"/work/data.csv": "a,1\nb,2\nc,3\nab,4\n", "/work/words.txt": "pear\napple\nfig\napple\n"}


def sandbox() -> list[str]:
    """Median per-call time, bashkit against subprocess bash, and sandbox creation cost."""
    assert len(COMMANDS) == 50
    box = BashkitSandbox(files=FILES)
    bashkit_ms = []
    for command in COMMANDS:
        started = time.perf_counter()
        asyncio.run(box.exec(command))
        bashkit_ms.append((time.perf_counter() - started) * 1000)
    with tempfile.TemporaryDirectory() as tmp:
        for path, text in FILES.items():
            target = Path(tmp) / path.removeprefix("/work/")
            target.write_text(text)
        bash_ms = []
        for command in COMMANDS:
            real = command.replace("/work", tmp)
            started = time.perf_counter()
            subprocess.run(["bash", "-c", real], capture_output=True, cwd=tmp, check=False)
            bash_ms.append((time.perf_counter() - started) * 1000)
    create_ms = []
    for _ in range(200):
        started = time.perf_counter()
        BashkitSandbox(files=FILES)
        create_ms.append((time.perf_counter() - started) * 1000)
    kit, sub = statistics.median(bashkit_ms), statistics.median(bash_ms)
    return [
        "| | median per call (ms) |",
        "|---|---:|",
        f"| bashkit sandbox | {kit:.3f} |",
        f"| subprocess bash | {sub:.3f} |",
        f"| ratio (subprocess / bashkit) | {sub / kit:.1f}x |",
        f"| bashkit sandbox creation (with 2 files) | {statistics.median(create_ms):.3f} |",
    ]


def analysis() -> list[str]:
    """The analysis benchmark of bench/frames.py, as a table."""
    base = frames_bench.base_runs()
    lines = [
        "| tool-call rows | load (s) | summary | by_category | context_growth | "
        "interaction | total (s) | us/row |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for target in (10_000, 100_000, 1_000_000):
            folder = Path(tmp) / str(target)
            rows = frames_bench.replicate(base, target, folder)
            t = frames_bench.analyse(folder)
            results[target] = (rows, t)
            lines.append(
                f"| {rows:,} | {t['load']:.3f} | {t['summary']:.3f} | {t['by_category']:.3f} | "
                f"{t['context_growth']:.3f} | {t['interaction']:.3f} | {t['total']:.3f} | "
                f"{t['total'] / rows * 1e6:.2f} |"
            )
        naive = frames_bench.naive_summary(Path(tmp) / "100000")
        rows, t = results[100_000]
        fast = t["load"] + t["summary"]
    lines += [
        "",
        f"Naive pandas summary (per-task Python loops) on {rows:,} rows: {naive:.2f} s; "
        f"evalnb load + summary: {fast:.3f} s; {naive / fast:.0f}x faster.",
    ]
    return lines


def notebooks() -> list[str]:
    """Wall time of the notebook suite under nbmake (demo runs created first if missing)."""
    from evalnb.demo import ensure_demo_runs

    ensure_demo_runs(str(ROOT / "runs" / "demo" / "*"))
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--nbmake",
            str(ROOT / "evalnb" / "notebooks"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    wall = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-200:]
    return [
        f"{len(list((ROOT / 'evalnb' / 'notebooks').glob('*.ipynb')))} notebooks under nbmake: "
        f"{wall:.1f} s ({last})"
    ]


# Peak RSS is read from VmHWM: getrusage's ru_maxrss survives execve, so a child
# started from this (large) process would report the parent's peak.
PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
MEMORY_RUN = f"""
import asyncio, tempfile
from bench.runner_overhead import tasks
from evalnb.runtime.runner import run_cases
asyncio.run(run_cases(tasks(1000), ["reference"], tempfile.mkdtemp(), progress=False))
print({PEAK})
"""
MEMORY_LOAD = f"""
import sys, evalnb as en
runs = en.load(sys.argv[1])
print(runs.tool_calls.height, {PEAK})
"""


def memory() -> list[str]:
    """Peak RSS of a 1,000-task run and of loading ~1M tool-call rows, each in a fresh process."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    run_kb = int(
        subprocess.run(
            [sys.executable, "-c", MEMORY_RUN], capture_output=True, text=True, check=True, env=env
        ).stdout.split()[-1]
    )
    with tempfile.TemporaryDirectory() as tmp:
        frames_bench.replicate(frames_bench.base_runs(), 1_000_000, Path(tmp))
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_LOAD, tmp],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout.split()
    rows, load_kb = int(out[0]), int(out[1])
    return [
        "| | peak RSS (MiB) |",
        "|---|---:|",
        f"| reference agent, 1,000 tasks | {run_kb / 1024:.0f} |",
        f"| en.load of {rows:,} tool-call rows | {load_kb / 1024:.0f} |",
    ]


def main() -> None:
    """Print every section as Markdown."""
    print(f"# Benchmark results\n\nMachine: {machine()}.\n\nCommand: `python -m bench`.\n")
    sections = [
        ("Runner scheduling (latencies from the recorded runs, scaled down 100x)", scheduling),
        ("Sandbox", sandbox),
        ("Analysis", analysis),
        ("Notebooks", notebooks),
        ("Memory", memory),
        ("Import time", import_time.lines),
    ]
    for title, fn in sections:
        started = time.perf_counter()
        body = fn()
        print(f"## {title}\n")
        print("\n".join(body))
        print(f"\n(section took {time.perf_counter() - started:.0f} s)\n", flush=True)
    row = runner_overhead.overhead()
    scale = runner_overhead.scaling()
    print("## Runner overhead (issue 2)\n")
    print(
        f"Reference agent, {row['tasks']} tasks: {row['wall_ms_per_task']:.2f} ms per task, "
        f"of which {row['runner_overhead_ms_per_task']:.2f} ms outside sandbox calls.\n"
    )
    for r in scale:
        print(
            f"- sleeping provider at concurrency {r['concurrency']}: {r['wall_s']:.2f} s "
            f"(ideal {r['ideal_s']:.2f} s, ratio {r['ratio']:.3f})"
        )


if __name__ == "__main__":
    main()
