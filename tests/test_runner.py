"""The runner: one run folder per model, errored tasks recorded, and resume after a crash."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.runs import read_run_folder
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import resume, run_cases
from evalnb._runtime.shard import in_shard
from evalnb._store import RunStore
from evalnb.records import RunMeta, Task


def dataset(tmp_path: Path, n: int = 12, sleep: float = 0.0) -> Path:
    lines = []
    for i in range(n):
        solution = f"mkdir -p /out && echo task{i} > /out/r.txt" + (
            f" && sleep {sleep}" if sleep else ""
        )
        if i % 4 == 3:
            solution += " && ls /missing"  # a failing last command: exit_code check fails
        lines.append(
            json.dumps(
                {
                    "id": f"t{i:02d}",
                    "category": f"cat{i % 3}",
                    "prompt": "p",
                    "solution": solution,
                    "expectations": [
                        {"check": "exit_code:0"},
                        {"check": f"file_contains:/out/r.txt:task{i}"},
                        {"check": "stdout_contains:never printed", "weight": 0.5},
                    ]
                    if i % 5 == 0
                    else [{"check": "exit_code:0"}, {"check": f"file_contains:/out/r.txt:task{i}"}],
                }
            )
        )
    lines.append(
        json.dumps(
            {
                "id": "no_solution",
                "category": "cat0",
                "prompt": "p",
                "expectations": [{"check": "exit_code:0"}],
            }
        )
    )
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def totals(run_dir: Path) -> dict:
    tasks = read_run_folder(run_dir).tasks
    return {
        "tasks": sorted(zip(tasks["task_id"], tasks["epoch"], strict=True)),
        "passed": int(tasks["passed"].sum()),
        "score": float(tasks["score"].sum()),
        "max_score": float(tasks["max_score"].sum()),
        "tool_calls": int(tasks["tool_call_count"].sum()),
        "errors": int(tasks["error"].is_not_null().sum()),
    }


def test_one_complete_run_folder_per_model_with_every_task_counted(tmp_path):
    cases = load_cases(dataset(tmp_path))
    paths = asyncio.run(
        run_cases(cases, ["reference", "reference"], tmp_path / "runs", epochs=2, progress=False)
    )
    assert len(paths) == 2 and paths[0] != paths[1]
    for path in paths:
        meta = RunStore.open(path).meta
        assert meta.status == "complete" and meta.epochs == 2 and meta.sandbox == "bashkit"
        got = totals(path)
        assert len(got["tasks"]) == 13 * 2
        # the task without a solution is recorded as errored, not dropped
        assert got["errors"] == 2
        # t03, t07, t11 end in a failing command; t00, t05, t10 have an impossible check
        failed_ids = set(read_run_folder(path).tasks.filter(~pl.col("passed"))["task_id"])
        assert failed_ids == {"t00", "t03", "t05", "t07", "t10", "t11", "no_solution"}


def test_tag_and_epoch_are_key_columns_everywhere(tmp_path):
    cases = load_cases(dataset(tmp_path, n=3))
    [path] = asyncio.run(
        run_cases(cases, ["reference"], tmp_path / "runs", epochs=3, progress=False)
    )
    runs = read_run_folder(path)
    for name in ("tasks", "llm_calls", "tool_calls", "checks", "messages"):
        frame = getattr(runs, name)
        assert frame.columns[:4] == ["run_id", "model", "task_id", "epoch"], name
        assert set(frame["epoch"]) == {1, 2, 3}, name


def crash_after(run_dir: Path, keep_lines: int, torn: bool) -> None:
    """Make a run folder look as if the process died after `keep_lines` events."""
    events = run_dir / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    tail = lines[keep_lines][: len(lines[keep_lines]) // 2] if torn else ""
    events.write_text("".join(lines[:keep_lines]) + tail)
    for table in run_dir.glob("*.parquet"):
        table.unlink()
    meta = RunMeta.model_validate_json((run_dir / "run.json").read_text())
    meta.status = "running"
    (run_dir / "run.json").write_text(meta.model_dump_json())


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_resume_after_a_crash_at_a_random_point_gives_identical_totals(tmp_path, seed):
    cases = load_cases(dataset(tmp_path))
    [reference] = asyncio.run(run_cases(cases, ["reference"], tmp_path / "a", progress=False))
    [crashed] = asyncio.run(run_cases(cases, ["reference"], tmp_path / "b", progress=False))
    n_events = len((crashed / "events.jsonl").read_text().splitlines())
    rng = random.Random(seed)
    torn = rng.random() < 0.5
    crash_after(crashed, rng.randrange(1, n_events - 1), torn=torn)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        partial = read_run_folder(crashed)
        assert partial.runs["status"][0] == "partial"  # crashed: nobody runs it
        assert partial.tasks.height < 13
        asyncio.run(resume(crashed, cases, progress=False))
    torn_warnings = [w for w in seen if "torn last line" in str(w.message)]
    assert len(torn_warnings) == (2 if torn else 0)  # once when read, once when repaired
    assert RunStore.open(crashed).meta.status == "complete"
    assert totals(crashed) == totals(reference)
    finished = [json.loads(x) for x in (crashed / "events.jsonl").read_text().splitlines()]
    keys = [(e["task_id"], e["epoch"]) for e in finished if e["event"] == "task_finished"]
    assert len(keys) == len(set(keys)) == 13  # no attempt finished twice


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[Path, dict]:
    """A dataset of slow tasks and the totals of a run of it that nobody interrupted."""
    root = tmp_path_factory.mktemp("sigkill")
    data = dataset(root, n=16, sleep=0.1)
    subprocess.run([*CLI_RUN, str(data), "--out", str(root / "full")], check=True)
    [full] = (root / "full").iterdir()
    return data, totals(full)


CLI_RUN = [
    sys.executable,
    "-m",
    "evalnb._cli",
    "run",
    "--model",
    "reference",
    "--concurrency",
    "2",
    "--quiet",
]


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_sigkill_at_a_random_point_then_resume_matches_an_uninterrupted_run(
    tmp_path, uninterrupted, seed
):
    data, expected = uninterrupted
    kill_after = random.Random(seed).randrange(1, 14)  # finished tasks before the kill
    proc = subprocess.Popen([*CLI_RUN, str(data), "--out", str(tmp_path / "killed")])
    deadline = time.monotonic() + 30
    killed_dir = None
    while time.monotonic() < deadline and killed_dir is None:
        for events in (tmp_path / "killed").glob("*/events.jsonl"):
            if events.read_bytes().count(b'"task_finished"') >= kill_after:
                killed_dir = events.parent
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed_dir is not None, "the run never got going"
    assert RunStore.open(killed_dir).meta.status == "running"
    assert read_run_folder(killed_dir).tasks.height < 17

    resumed = subprocess.run(
        [sys.executable, "-m", "evalnb._cli", "run", "--resume", str(killed_dir), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert totals(killed_dir) == expected
    lines = (killed_dir / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]  # no torn line survives
    finished = [(e["task_id"], e["epoch"]) for e in events if e["event"] == "task_finished"]
    assert len(finished) == len(set(finished)) == 17  # nothing finished twice, nothing lost


def test_a_crashing_sandbox_is_recorded_as_an_errored_task(tmp_path):
    class BrokenCase(BashCase):
        def sandbox(self):
            raise RuntimeError("sandbox exploded")

    good = BashCase(
        Task(
            id="ok",
            category="c",
            prompt="p",
            solution="echo hi",
            expectations=[{"check": "stdout_contains:hi"}],
        )
    )
    bad = BrokenCase(
        Task(
            id="bad",
            category="c",
            prompt="p",
            solution="echo hi",
            expectations=[{"check": "stdout_contains:hi"}],
        )
    )
    [path] = asyncio.run(run_cases([good, bad], ["reference"], tmp_path, progress=False))
    tasks = read_run_folder(path).tasks.sort("task_id")
    assert tasks["task_id"].to_list() == ["bad", "ok"]
    assert tasks["error"].to_list() == ["RuntimeError: sandbox exploded", None]
    assert tasks["passed"].to_list() == [False, True]


def test_resume_of_a_shard_runs_only_that_shards_missing_attempts(tmp_path):
    cases = load_cases(dataset(tmp_path, n=8))
    [run] = asyncio.run(
        run_cases(cases, ["reference"], tmp_path / "out", epochs=2, shard=(2, 3), progress=False)
    )
    whole = RunStore.open(run).finished_keys()
    shard = {(c.task.id, e) for c, e in in_shard([(c, e) for c in cases for e in (1, 2)], (2, 3))}
    assert whole == shard
    crash_after(run, 3, torn=False)  # one attempt's events at most
    assert len(RunStore.open(run).finished_keys()) < len(shard)
    asyncio.run(resume(run, cases, progress=False))
    assert RunStore.open(run).finished_keys() == shard  # nothing outside shard 2 of 3


def test_resume_with_workers_refuses_cases_that_cannot_go_to_a_worker(tmp_path):
    cases = load_cases(dataset(tmp_path, n=2))
    [run] = asyncio.run(run_cases(cases, ["reference"], tmp_path / "out", progress=False))
    crash_after(run, 2, torn=False)
    events = (run / "events.jsonl").read_text()
    cases[0].task_hook = lambda: None  # a lambda does not pickle
    with pytest.raises(ValueError, match="--workers: the cases cannot be sent"):
        asyncio.run(resume(run, cases, workers=2, progress=False))
    assert (run / "events.jsonl").read_text() == events  # nothing run, nothing written
    assert RunStore.open(run).meta.status == "running"
