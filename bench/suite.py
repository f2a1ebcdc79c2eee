"""The benchmark suite: every figure the README quotes, measured side by side in one run.

Each figure is printed with its peer or limit, measured in the same run (shared
machines are noisy: compare the ratios):

- scheduling: 3 models x 100 tasks whose per-call latencies come from the recorded
  bashkit-eval runs (scaled down 100x), at concurrency 1, 8 and 32, against the
  zero-overhead makespan of the same start order;
- sandbox: bashkit against ``subprocess`` bash for the same 50 commands;
- analysis: load + summaries on ~1M tool-call rows against a naive pandas version;
- scale: the lazy path at 1M / 10M / 100M rows against DuckDB and the 10 s / 4 GiB
  limits (bench/scale.py; sizes from ``--scale-rows``);
- finalize: reading events before / now (bench/finalize.py);
- workers: calls/s through the real OpenAI SDK to a local server at 1, 2, 4 worker
  processes, against one worker and the server's zero-overhead limit (bench/workers.py);
- merge: ``evalnb merge`` of 1,000,000 attempts, peak memory against 2 GiB (bench/merge.py);
- runner: the runner's own cost per task against 5 ms, a sleeping provider against the
  ideal (bench/runner_overhead.py);
- notebooks: the notebook suite under nbmake against as many import-only notebooks;
- memory: peak RSS of a 1,000-task run against importing the runner, and of loading
  ~1M rows against polars reading the same parquet files (fresh processes);
- import time: ``import evalnb`` against ``import polars`` (bench/import_time.py);
- demo: ``evalnb demo`` in an empty folder against the 25 s target;
- inspect: evalnb against Inspect AI's dataframes on the same logs, where installed;
- folders: 1,000 folders of 1,000 attempts against DuckDB, 10,000 small folders against
  5 s and the fixed cost per folder against 1 ms (bench/folders.py);
- remote: run folders in a local S3 server against polars reading the same columns, and
  a file:// URL's memory against the path's (bench/remote.py);
- throughput: calls/s at concurrency 8, 32, 128 against the ideal and Inspect AI
  (bench/runner_throughput.py);
- traces: 80,000 trajectories as Inspect logs against 60 s / 4 GiB and Inspect's
  ``samples_df`` (bench/trace_sets.py).

Every section ends with its wall and CPU seconds and the load average at its start and
end: a figure from a busy machine is not one to quote.

Run: ``python -m bench [SECTION ...] [--scale-rows 1e6,1e7]`` (prints Markdown;
bench/RESULTS.md holds a recorded run).
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from bench import finalize as finalize_bench
from bench import folders as folders_bench
from bench import frames as frames_bench
from bench import import_time, inspect_load, remote, runner_overhead, runner_throughput, trace_sets
from bench import merge as merge_bench
from bench import scale as scale_bench
from bench import workers as workers_bench
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb.records import Task
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse

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

    provider, simulated, recording = "bench", False, None

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


def makespan(durations: list[float], concurrency: int) -> float:
    """Zero-overhead makespan: jobs start in the given order, each on the first free slot."""
    slots = [0.0] * concurrency
    for seconds in durations:
        heapq.heapreplace(slots, slots[0] + seconds)
    return max(slots)


def scheduling() -> list[str]:
    """Wall time at concurrency 1, 8, 32, in dataset order and longest first, each against
    the zero-overhead makespan of the same order."""
    base = frames_bench.base_runs().tasks.select("model", "task_id", "turns", "duration_ms")
    providers, recorded_ms = [], 0.0
    jobs: list[tuple[str, float]] = []  # (task id, seconds) in the runner's FIFO order
    cases = [BashCase(Task(id=f"t{i:03d}", category="bench", prompt="p")) for i in range(100)]
    for (model,), group in base.group_by("model", maintain_order=True):
        rows = group.rows(named=True)
        plans = {}
        for i, case in enumerate(cases):
            row = rows[i % len(rows)]
            turns = max(1, row["turns"])
            seconds = row["duration_ms"] / 1000 / SCALE
            plans[case.task.id] = (turns, seconds / turns)
            jobs.append((case.task.id, seconds))
            recorded_ms += row["duration_ms"]
        providers.append(RecordedLatencyProvider(model, plans))
    # "a previous run": each task's mean duration over the three recordings
    per_task: dict[str, list[float]] = {}
    for task_id, seconds in jobs:
        per_task.setdefault(task_id, []).append(seconds * 1000)
    durations = {t: sum(v) / len(v) for t, v in per_task.items()}
    lpt_jobs = sorted(jobs, key=lambda job: -durations[job[0]])
    lines = [
        "| concurrency | order | wall (s) | zero-overhead makespan, same order (s) "
        "| wall / makespan |",
        "|---:|---|---:|---:|---:|",
    ]
    wall = {}
    for concurrency in (1, 8, 32):
        orders = [("dataset", None, jobs)]
        if concurrency > 1:
            orders.append(("longest first", durations, lpt_jobs))
        for label, known, order in orders:
            with tempfile.TemporaryDirectory() as out:
                started = time.perf_counter()
                asyncio.run(
                    run_cases(
                        cases,
                        providers,
                        out,
                        concurrency=concurrency,
                        progress=False,
                        durations=known,
                    )
                )
                wall[concurrency, label] = time.perf_counter() - started
            bound = makespan([seconds for _, seconds in order], concurrency)
            lines.append(
                f"| {concurrency} | {label} | {wall[concurrency, label]:.2f} | {bound:.2f} | "
                f"{wall[concurrency, label] / bound:.3f} |"
            )
    best = min(wall[32, "dataset"], wall[32, "longest first"])
    speedup = recorded_ms / 1000 / (best * SCALE)
    lines.append("")
    for concurrency in (8, 32):
        lpt, given = wall[concurrency, "longest first"], wall[concurrency, "dataset"]
        lines.append(
            f"- longest first at concurrency {concurrency}: {lpt:.2f} s against {given:.2f} s "
            f"in dataset order: dataset / longest first = **{given / lpt:.2f}** "
            f"({'faster' if given > lpt else 'not faster'}, as measured)"
        )
    lines.append(
        f"- the recordings ran these 300 tasks one after another in {recorded_ms / 60000:.1f} "
        f"min; at concurrency 32 the same latencies (scaled back up) take "
        f"{best * SCALE / 60:.1f} min: a {speedup:.0f}x speed-up"
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


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def _nbmake(folder: Path) -> tuple[float, str]:
    """Wall time of nbmake over the notebooks in ``folder``, and its last line."""
    started = time.perf_counter()
    done = subprocess.run(
        [*PYTEST, "-p", "nbmake", "--nbmake", str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    wall = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-200:]
    return wall, last


FLOOR_CELL = "import evalnb as en\nfrom evalnb import charts\ncharts.enable_offline()\n"


def notebooks() -> list[str]:
    """Wall time of the notebook suite under nbmake (demo runs created first if missing),
    against its floor: as many notebooks that only start a kernel and import evalnb."""
    import nbformat

    from evalnb._demo import ensure_demo_runs

    ensure_demo_runs(str(ROOT / "runs" / "demo" / "*"))
    suite = ROOT / "notebooks"
    count = len(list(suite.glob("*.ipynb")))
    wall, last = _nbmake(suite)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(count):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_CELL)])
            nbformat.write(nb, Path(tmp) / f"floor_{i}.ipynb")
        floor, _ = _nbmake(Path(tmp))
    return [
        f"{count} notebooks under nbmake: {wall:.1f} s ({last}); {count} notebooks that only "
        f"import evalnb: {floor:.1f} s; **{wall / floor:.2f}x the floor**."
    ]


def demo() -> list[str]:
    """``evalnb demo`` in a fresh folder (runs, reports, charts, notebooks): wall and CPU
    time (children included) against the 25 s target."""
    with tempfile.TemporaryDirectory() as tmp:
        before = os.times()
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "evalnb._cli", "demo"],
            cwd=tmp,
            capture_output=True,
            check=True,
        )
        wall = time.perf_counter() - started
        after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return [
        f"`evalnb demo` in an empty folder: {wall:.1f} s wall, {cpu:.1f} s CPU (all its "
        f"processes); **{wall / 25:.2f}x the 25 s target**; load average "
        f"{os.getloadavg()[0]:.1f} at the end."
    ]


def inspect() -> list[str]:
    """evalnb against Inspect AI's own dataframes on the same logs (bench/inspect_load.py)."""
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        return ["Inspect AI is not installed (`pip install -e '.[inspect]'`): not measured."]
    lines = [
        "| samples | tool calls | evalnb load + summary | samples_df + events_df | ratio |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in (1_000, 10_000):
        m = inspect_load.measure(n)
        lines.append(
            f"| {m['samples']:,.0f} | {m['tool_calls']:,.0f} | {m['evalnb_s']:.2f} s "
            f"| {m['inspect_s']:.2f} s | {m['ratio']:.2f}x |"
        )
    return lines


def runner() -> list[str]:
    """The runner's own cost per task against its 5 ms target, and a sleeping provider's
    wall time against the ideal (bench/runner_overhead.py)."""
    row = runner_overhead.overhead()
    lines = [
        f"Reference agent, {row['tasks']} tasks: {row['wall_ms_per_task']:.2f} ms per task, "
        f"of which {row['runner_overhead_ms_per_task']:.2f} ms outside sandbox calls: "
        f"**{row['runner_overhead_ms_per_task'] / 5:.2f}x the 5 ms target**.",
        "",
    ]
    for r in runner_overhead.scaling():
        lines.append(
            f"- sleeping provider at concurrency {r['concurrency']}: {r['wall_s']:.2f} s "
            f"(ideal {r['ideal_s']:.2f} s, ratio {r['ratio']:.3f})"
        )
    return lines


# Peak RSS is read from VmHWM: getrusage's ru_maxrss survives execve, so a child
# started from this (large) process would report the parent's peak.
PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
MEMORY_RUN = f"""
import asyncio, tempfile
from bench.runner_overhead import tasks
from evalnb._runtime.runner import run_cases
asyncio.run(run_cases(tasks(1000), ["reference"], tempfile.mkdtemp(), progress=False))
print({PEAK})
"""
MEMORY_LOAD = f"""
import sys, evalnb as en
runs = en.load(sys.argv[1])
print(runs.tool_calls.height, {PEAK})
"""
MEMORY_POLARS = f"""
import sys, glob, polars as pl
frames = [pl.read_parquet(f) for f in glob.glob(sys.argv[1] + "/**/*.parquet", recursive=True)]
print(sum(f.height for f in frames), {PEAK})
"""
MEMORY_IMPORT = f"""
import evalnb._runtime.runner, evalnb._runtime.bash_case
print({PEAK})
"""


def memory() -> list[str]:
    """Peak RSS of a 1,000-task run against the runner's import alone, and of loading ~1M
    tool-call rows against polars reading every parquet file of the same folders, each in a
    fresh process."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}

    def peak(code: str, *args: str) -> list[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=env
        ).stdout.split()

    run_kb = int(peak(MEMORY_RUN)[-1])
    import_kb = int(peak(MEMORY_IMPORT)[-1])
    with tempfile.TemporaryDirectory() as tmp:
        frames_bench.replicate(frames_bench.base_runs(), 1_000_000, Path(tmp))
        rows, load_kb = (int(x) for x in peak(MEMORY_LOAD, tmp))
        polars_kb = int(peak(MEMORY_POLARS, tmp)[-1])
    return [
        "| | peak RSS (MiB) | peer | peer (MiB) | ratio |",
        "|---|---:|---|---:|---:|",
        f"| reference agent, 1,000 tasks | {run_kb / 1024:.0f} | importing the runner "
        f"| {import_kb / 1024:.0f} | {run_kb / import_kb:.2f}x |",
        f"| en.load of {rows:,} tool-call rows | {load_kb / 1024:.0f} | pl.read_parquet of "
        f"every table | {polars_kb / 1024:.0f} | {load_kb / polars_kb:.2f}x |",
    ]


def scale() -> list[str]:
    """Analysis at 1M / 10M / 100M rows (``--scale-rows 1e6,1e7`` or
    ``BENCH_SCALE_ROWS=1e6,1e7`` picks sizes)."""
    sizes = os.environ.get("BENCH_SCALE_ROWS")
    chosen = tuple(int(float(x)) for x in sizes.split(",")) if sizes else scale_bench.SIZES
    return scale_bench.section(chosen)


def traces() -> list[str]:
    """80,000 trajectories as Inspect logs (``BENCH_TRACE_SAMPLES=N`` picks the number)."""
    return trace_sets.lines(int(os.environ.get("BENCH_TRACE_SAMPLES", trace_sets.SAMPLES)))


SECTIONS = {
    "scheduling": (
        "Runner scheduling (latencies from the recorded runs, scaled down 100x)",
        scheduling,
    ),
    "sandbox": ("Sandbox", sandbox),
    "analysis": ("Analysis", analysis),
    "scale": ("Analysis at scale: the lazy path (issue 18)", scale),
    "folders": ("Many run folders: one scan per table (issue 28)", folders_bench.lines),
    "remote": ("Remote runs in object storage (issue 28)", remote.lines),
    "finalize": ("Finalize and reading events (issue 18)", finalize_bench.main),
    "workers": ("Real-API throughput: worker processes (issue 18)", workers_bench.lines),
    "throughput": ("Runner throughput against Inspect AI (issue 28)", runner_throughput.lines),
    "merge": ("Merge at scale: 1,000,000 attempts in under 2 GiB (issue 28)", merge_bench.lines),
    "runner": ("Runner overhead (issue 2)", runner),
    "notebooks": ("Notebooks", notebooks),
    "memory": ("Memory", memory),
    "import_time": ("Import time", import_time.lines),
    "demo": ("Demo", demo),
    "inspect": ("Inspect AI logs", inspect),
    "traces": ("Trace sets the size of public ones (issue 28)", traces),
}


def main(argv: list[str] | None = None) -> None:
    """Print every section (or those named on the command line) as Markdown, from one run.

    ``--scale-rows 1e6,1e7`` sets the sizes of the scale section (as ``BENCH_SCALE_ROWS``).
    """
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("sections", nargs="*", metavar="SECTION", help=", ".join(SECTIONS))
    parser.add_argument("--scale-rows", metavar="N,N", help="sizes of the scale section")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r} (one of {', '.join(SECTIONS)})")
    if args.scale_rows:
        os.environ["BENCH_SCALE_ROWS"] = args.scale_rows
    command = " ".join(["python -m bench", *(sys.argv[1:] if argv is None else argv)])
    if os.environ.get("BENCH_SCALE_DATA"):  # the scale data kept from an earlier write
        command = f"BENCH_SCALE_DATA={os.environ['BENCH_SCALE_DATA']} {command}"
    print(f"# Benchmark results\n\nMachine: {machine()}.\n\nCommand: `{command}`.\n")
    for name in args.sections or list(SECTIONS):
        title, fn = SECTIONS[name]
        started, before, load = time.perf_counter(), os.times(), os.getloadavg()[0]
        body = fn()
        after = os.times()
        cpu = sum(after[:4]) - sum(before[:4])  # this process and its children, user + system
        print(f"## {title}\n")
        print("\n".join(body))
        print(
            f"\n(section took {time.perf_counter() - started:.0f} s wall, {cpu:.0f} s CPU with "
            f"its child processes; load average {load:.1f} at its start, "
            f"{os.getloadavg()[0]:.1f} at its end)\n",
            flush=True,
        )


if __name__ == "__main__":
    main()
