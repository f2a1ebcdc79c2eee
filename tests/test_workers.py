"""Worker processes: a run's attempts dealt over several processes, one run folder.

The same totals as a one-process run (errored tasks counted), every event line whole,
no attempt finished twice; an interrupted worker run is partial and resumes to the
same totals; what cannot go to a worker process is refused before anything is written.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from evalnb._runtime import workers
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import run_cases
from evalnb._store import RunStore
from evalnb.records import RunMeta
from tests.test_runner import dataset, totals


def finished_keys_in_order(run_dir) -> list[tuple[str, int]]:
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [(e["task_id"], e["epoch"]) for e in events if e["event"] == "task_finished"]


def test_a_run_over_two_worker_processes_gives_the_totals_of_a_one_process_run(tmp_path):
    cases = load_cases(dataset(tmp_path, n=12))
    [alone] = asyncio.run(
        run_cases(cases, ["reference"], tmp_path / "one", epochs=2, concurrency=4, progress=False)
    )
    [shared] = asyncio.run(
        run_cases(
            cases,
            ["reference"],
            tmp_path / "two",
            epochs=2,
            concurrency=4,
            workers=2,
            progress=False,
        )
    )
    assert totals(shared) == totals(alone)
    assert totals(shared)["errors"] == 2  # the task without a solution, both epochs: counted
    keys = finished_keys_in_order(shared)  # every line parses: no interleaved writes
    assert len(keys) == len(set(keys)) == 26
    assert RunStore.open(shared).meta.status == "complete"


def test_sigterm_landing_inside_a_task_stops_a_worker_s_loop_without_a_traceback(caplog):
    """The signal lands while a task runs Python code, not while the loop waits (under
    load, often): the main task is cancelled from the loop, then KeyboardInterrupt is
    raised, and no task is left holding the interrupt (asyncio would print that task as
    "Task exception was never retrieved", with a traceback)."""

    async def busy() -> None:
        end = time.monotonic() + 0.5
        while time.monotonic() < end:  # the signal lands here, inside the task's step
            pass
        await asyncio.sleep(30)

    async def attempts() -> None:
        await asyncio.gather(busy(), asyncio.sleep(30))

    previous = signal.signal(signal.SIGTERM, workers._interrupt)  # as in a worker process
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                workers.run_stoppable(attempts())
            gc.collect()  # asyncio reports an unretrieved exception when its task goes
        assert signal.getsignal(signal.SIGTERM) is workers._interrupt
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)
    assert "never retrieved" not in caplog.text, caplog.text


def test_sigterm_before_a_worker_s_loop_runs_stops_it_before_its_work_starts(monkeypatch, recwarn):
    """The signal lands while the event loop is being made: nothing is raised inside the
    loop's construction (a half-built loop fails as it is collected, printing a
    traceback), the work never starts and its coroutine is closed, not left unawaited."""
    started = []

    async def attempts() -> None:
        started.append(True)

    run = asyncio.run

    def run_after_sigterm(main):
        os.kill(os.getpid(), signal.SIGTERM)  # handled here, before the loop exists
        return run(main)

    monkeypatch.setattr(asyncio, "run", run_after_sigterm)
    previous = signal.signal(signal.SIGTERM, workers._interrupt)  # as in a worker process
    try:
        with pytest.raises(KeyboardInterrupt):
            workers.run_stoppable(attempts())
        gc.collect()  # an unawaited coroutine warns when it goes
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not started
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_an_interrupted_worker_run_is_partial_and_resumes_to_the_same_totals(tmp_path):
    data = dataset(tmp_path, n=16, sleep=0.3)
    cli = [sys.executable, "-m", "evalnb._cli", "run", "--quiet", "--concurrency", "2"]
    subprocess.run(
        [*cli, str(data), "--model", "reference", "--out", str(tmp_path / "full")], check=True
    )
    [full] = (tmp_path / "full").iterdir()

    out = tmp_path / "workers"
    proc = subprocess.Popen(
        [*cli, str(data), "--model", "reference", "--workers", "2", "--out", str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline, run = time.monotonic() + 60, None
    while time.monotonic() < deadline and run is None:
        for events in out.glob("*/events.jsonl"):
            if events.read_bytes().count(b'"task_finished"') >= 2:
                run = events.parent
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)  # stops the run like Ctrl-C, workers included
    _, err = proc.communicate(timeout=60)
    assert run is not None, "the run never got going"
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert RunStore.open(run).meta.status == "partial"
    assert 2 <= len(finished_keys_in_order(run)) < 17

    resumed = subprocess.run(
        [*cli, "--resume", str(run), "--workers", "2"], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert RunStore.open(run).meta.status == "complete"
    assert totals(run) == totals(full)
    keys = finished_keys_in_order(run)
    assert len(keys) == len(set(keys)) == 17  # nothing finished twice, nothing lost


class LocalOnlyProvider:
    """A provider holding something no other process can receive (a lambda)."""

    provider, model, simulated, recording = "test", "local-only", False, None

    def __init__(self) -> None:
        self.reply = lambda: None

    def settings(self) -> dict:
        return {}


def test_a_model_that_cannot_go_to_a_worker_is_refused_before_anything_is_written(tmp_path):
    cases = load_cases(dataset(tmp_path, n=2))
    with pytest.raises(ValueError, match="--workers: the model 'local-only' cannot be sent"):
        asyncio.run(
            run_cases(cases, [LocalOnlyProvider()], tmp_path / "out", workers=2, progress=False)
        )
    assert not (tmp_path / "out").exists()


def _append_many(folder: str, writer: int) -> None:
    store = RunStore.open(folder)
    for n in range(40):  # lines far longer than a pipe's atomic write (4 KiB)
        store.append({"event": "tool_call", "writer": writer, "n": n, "stdout": "x" * 100_000})
    store.close()


def test_processes_appending_to_one_run_at_once_write_whole_lines(tmp_path):
    store = RunStore.create(tmp_path, RunMeta(run_id="r", provider="p", model="m"))
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_many, args=(str(store.path), w)) for w in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    assert [w.exitcode for w in writers] == [0, 0, 0, 0]
    events = list(RunStore.open(store.path).events())  # a torn or mixed line would not parse
    assert sorted((e["writer"], e["n"]) for e in events) == [
        (w, n) for w in range(4) for n in range(40)
    ]
    assert {len(e["stdout"]) for e in events} == {100_000}
    assert not list(store.path.glob(".*.lock"))  # the events file itself is locked
