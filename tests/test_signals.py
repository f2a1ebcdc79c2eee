"""SIGTERM and SIGHUP stop a run like Ctrl-C; workspaces of dead evalnb processes are reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from evalnb._runtime.sandbox.local import PREFIX, reap_stale_workspaces
from evalnb._store import RunStore
from tests.test_runner import dataset


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_a_hangup_or_terminate_marks_the_run_partial_and_names_it_for_resume(tmp_path, signum):
    data = dataset(tmp_path, n=16, sleep=0.3)
    out = tmp_path / "runs"
    cli = [sys.executable, "-m", "evalnb._cli", "run", str(data), "--model", "reference"]
    proc = subprocess.Popen(
        [*cli, "--concurrency", "1", "--out", str(out), "--quiet"],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    started = []
    while time.monotonic() < deadline and not started:
        started = [
            e.parent for e in out.glob("*/events.jsonl") if b"task_finished" in e.read_bytes()
        ]
        time.sleep(0.01)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert started, "the run never got going"
    [run] = started
    assert proc.returncode == 130, err
    assert f"interrupted (status partial): evalnb run --resume {run}" in err
    assert "Traceback" not in err
    assert RunStore.open(run).meta.status == "partial"

    resumed = subprocess.run(
        [sys.executable, "-m", "evalnb._cli", "run", "--resume", str(run), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert RunStore.open(run).meta.status == "complete"
    assert len(RunStore.open(run).finished_keys()) == 17


def test_workspaces_of_dead_processes_are_reaped_and_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    reap_stale_workspaces.cache_clear()  # it reaps once a process; this test calls it afresh
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = tmp_path / f"{PREFIX}{gone.pid}-abc"
    alive = tmp_path / f"{PREFIX}{os.getpid()}-def"
    other = tmp_path / "someone-elses-folder"
    for folder in (dead, alive, other):
        (folder / "work").mkdir(parents=True)
        (folder / "work" / "answer.txt").write_text("x")
    assert reap_stale_workspaces() == 1
    assert not dead.exists() and alive.exists() and other.exists()
