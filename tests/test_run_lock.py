"""One writer per run folder: a second process is refused, a killed one frees the folder,
and worker processes die with their parent. Real processes and real SIGKILLs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import evalnb as en
from evalnb._present.report import report_markdown
from evalnb._store import RunStore
from tests.test_runner import CLI_RUN, crash_after, dataset, totals

CLI = [sys.executable, "-m", "evalnb._cli"]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a run folder, byte for byte."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def wait_for_finished(out: Path, count: int, proc: subprocess.Popen) -> Path:
    """The run folder under ``out`` once it has ``count`` finished attempts."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        for events in out.glob("*/events.jsonl"):
            if events.read_bytes().count(b'"task_finished"') >= count:
                return events.parent
        time.sleep(0.01)
    raise AssertionError("the run never got going")


def finished_keys(folder: Path) -> list[tuple[str, int]]:
    lines = (folder / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["task_id"], e["epoch"]) for e in events if e["event"] == "task_finished"]


def test_a_second_process_is_refused_while_a_run_holds_its_folder_and_a_killed_run_frees_it(
    tmp_path,
):
    data = dataset(tmp_path, n=16, sleep=2)  # 16 s: it outlives the second process
    out = tmp_path / "runs"
    proc = subprocess.Popen([*CLI_RUN, str(data), "--out", str(out)])
    try:
        run = wait_for_finished(out, 1, proc)
        second = subprocess.run(
            [*CLI, "run", "--resume", str(run), "--quiet"], capture_output=True, text=True
        )
        assert proc.poll() is None, "the run ended before the second process tried"
        assert second.returncode == 2, second.stderr
        assert f"{run}: already running (pid {proc.pid})" in second.stderr
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert RunStore.open(run).meta.status == "running"  # killed: nobody marked it

    # the killed process's lock died with it: the resume runs at once and finishes the run
    resumed = subprocess.run(
        [*CLI, "run", "--resume", str(run), "--quiet", "--concurrency", "16"],
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert RunStore.open(run).meta.status == "complete"
    keys = finished_keys(run)
    assert len(keys) == len(set(keys)) == 17


def test_a_refused_resume_leaves_the_folder_byte_for_byte_as_it_was(tmp_path):
    data = dataset(tmp_path, n=4)
    subprocess.run([*CLI_RUN, str(data), "--out", str(tmp_path / "runs")], check=True)
    [run] = (tmp_path / "runs").iterdir()
    crash_after(run, 5, torn=True)  # interrupted, with a torn last line a resume would cut
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(run)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        before = snapshot(run)
        refused = subprocess.run(
            [*CLI, "run", "--resume", str(run), "--quiet"], capture_output=True, text=True
        )
        assert refused.returncode == 2, refused.stderr
        assert f"already running (pid {holder.pid})" in refused.stderr
        assert snapshot(run) == before  # no repair, no status, no event written
    finally:
        holder.kill()
        holder.wait()


HOLD_THE_LOCK = """
import sys, time
from evalnb._store.lock import RunLock
with RunLock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""
"""A process that holds the run lock of the folder given (``sys.argv[1]``) for a minute."""


def test_two_resumes_started_together_run_each_pending_attempt_once(tmp_path):
    data = dataset(tmp_path, n=12, sleep=0.5)
    subprocess.run([*CLI_RUN, str(data), "--out", str(tmp_path / "runs")], check=True)
    [run] = (tmp_path / "runs").iterdir()
    whole = totals(run)
    crash_after(run, 3, torn=False)  # one attempt finished at most: nearly all pending
    # one attempt at a time: the resume lasts 6 s, longer than a loaded machine takes to
    # start the second process, so the two overlap
    argv = [*CLI, "run", "--resume", str(run), "--quiet", "--concurrency", "1"]
    both = [subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in both]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    [refusal] = [err for code, err in results if code == 2]
    assert "already running (pid " in refusal
    keys = finished_keys(run)
    assert len(keys) == len(set(keys)) == 13  # every pending attempt ran exactly once
    assert totals(run) == whole


def children_of(pid: int) -> list[int]:
    """The pids of a process's children (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_workers_die_with_their_parent_and_append_nothing_after_it_is_killed(tmp_path):
    data = dataset(tmp_path, n=24, sleep=1)  # 12 s per worker: an orphan goes on for long
    out = tmp_path / "runs"
    proc = subprocess.Popen([*CLI_RUN, str(data), "--workers", "2", "--out", str(out)])
    try:
        run = wait_for_finished(out, 2, proc)
        workers = [c for c in children_of(proc.pid) if alive(c)]
        assert workers, "no worker process"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 3  # an orphan would go on for seconds more
    while time.monotonic() < deadline and any(alive(c) for c in workers):
        time.sleep(0.05)
    assert not any(alive(c) for c in workers), "a worker outlived its parent"
    size = (run / "events.jsonl").stat().st_size
    time.sleep(1.5)
    assert (run / "events.jsonl").stat().st_size == size  # nobody appends any more
    resumed = subprocess.run(
        [*CLI, "run", "--resume", str(run), "--quiet", "--concurrency", "24"],
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    keys = finished_keys(run)
    assert len(keys) == len(set(keys)) == 25


def test_a_run_shows_as_running_while_it_runs_and_as_partial_with_its_missing_after_a_kill(
    tmp_path,
):
    data = dataset(tmp_path, n=16, sleep=2)  # 17 attempts, 16 s: it outlives the first summary
    out = tmp_path / "runs"
    proc = subprocess.Popen([*CLI_RUN, str(data), "--out", str(out)])
    try:
        run = wait_for_finished(out, 2, proc)
        live = subprocess.run([*CLI, "summary", str(run)], capture_output=True, text=True)
        assert proc.poll() is None, "the run ended before the summary"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert live.returncode == 0, live.stderr
    assert " not finished ==" in live.stdout.splitlines()[0]
    assert "· running: " in live.stdout.splitlines()[0]

    done = len(set(finished_keys(run)))
    row = en.summary(en.load(run)).row(0, named=True)
    assert (row["status"], row["missing_tasks"], row["total_tasks"]) == ("partial", 17 - done, done)
    shown = subprocess.run([*CLI, "summary", str(run)], capture_output=True, text=True).stdout
    assert f"· partial: {17 - done} missing ==" in shown.splitlines()[0]
    assert f"Tasks passed: {row['total_passed']}/{done} ({17 - done} missing)" in shown
    runs = en.load(run)
    text = report_markdown(runs, en.summary(runs), en.by_category(runs))
    assert f"**Partial run**: only the tasks present are counted. It lacks {17 - done}" in text
