"""A run folder that cannot be written (full disk, read-only) stops the run cleanly.

The CLI says which file could not be written and exits 2; no ``.run.json.tmp``, no
half-written parquet and no partial events line is left, and a resumed run finishes.
Real faults come from a tiny tmpfs and a read-only bind mount in a private mount
namespace (``unshare -m``); the in-process cases simulate ENOSPC.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.errors import StoreError
from evalnb.records import RunMeta

ROOT = Path(__file__).resolve().parents[1]


def full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


def test_a_full_disk_while_writing_run_json_leaves_the_old_one(tmp_path, monkeypatch):
    store = RunStore.create(tmp_path, RunMeta(run_id="r", provider="p", model="m"))
    before = (store.path / "run.json").read_text()
    store.meta.status = "complete"
    monkeypatch.setattr("evalnb._store.folder.os.replace", full)
    with pytest.raises(StoreError, match=r"cannot write .*/r/run.json: No space left on device"):
        store.write_meta()
    assert (store.path / "run.json").read_text() == before
    assert leftovers(tmp_path) == []


def test_a_full_disk_mid_line_cuts_the_partial_line_off(tmp_path):
    store = RunStore.create(tmp_path, RunMeta(run_id="r", provider="p", model="m"))
    store.append({"event": "task_started", "task_id": "t", "epoch": 1, "attempt": "a"})
    whole = (store.path / "events.jsonl").read_bytes()

    class HalfThenFull:
        """The real events file, taking half of a write before the disk fills."""

        def __init__(self, raw):
            self.raw = raw

        def write(self, data):
            if len(data) > 1:
                return self.raw.write(data[: len(data) // 2])
            full()

        def __getattr__(self, name):
            return getattr(self.raw, name)

    store._writer = HalfThenFull(store._writer)
    with pytest.raises(StoreError, match=r"events\.jsonl: No space left on device"):
        store.append({"event": "task_started", "task_id": "u", "epoch": 1, "attempt": "b"})
    store.close()
    assert (store.path / "events.jsonl").read_bytes() == whole


def test_the_cli_names_the_file_exits_2_and_leaves_no_temp_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("evalnb._store.folder.os.replace", full)
    code = main(["run", "smoke", "--model", "reference", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: cannot write {tmp_path}/") and "No space left on device" in err
    assert "Traceback" not in err
    assert leftovers(tmp_path) == []


def _private_mounts() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = ["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "t", "/mnt"]
    return subprocess.run(probe, capture_output=True).returncode == 0


needs_mounts = pytest.mark.skipif(
    not _private_mounts(), reason="needs a private mount namespace (unshare -m)"
)


def in_private_mounts(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) in a private mount namespace; ``$EVALNB`` runs the CLI."""
    env = {**os.environ, "EVALNB": f"{sys.executable} -m evalnb._cli", "T": str(tmp_path)}
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


@needs_mounts
def test_a_read_only_output_folder_is_named_and_nothing_is_written(tmp_path):
    (tmp_path / "out").mkdir()
    done = in_private_mounts(
        """
        mount --bind "$T/out" "$T/out" && mount -o remount,bind,ro "$T/out"
        $EVALNB run smoke --model reference --out "$T/out" --quiet
        echo "exit=$?"
        """,
        tmp_path,
    )
    assert "exit=2" in done.stdout, done.stderr
    assert done.stderr.startswith(f"error: cannot write {tmp_path}/out/")
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr
    assert list((tmp_path / "out").iterdir()) == []


@needs_mounts
def test_a_disk_that_fills_mid_run_stops_it_whole_and_resume_finishes_it(tmp_path):
    (tmp_path / "disk").mkdir()
    done = in_private_mounts(
        """
        mount -t tmpfs -o size=24k tmpfs "$T/disk"
        $EVALNB run smoke --model reference --epochs 3 --concurrency 1 --out "$T/disk" --quiet
        echo "first=$?"
        cp -a "$T/disk" "$T/stopped"
        mount -o remount,size=4m "$T/disk"
        $EVALNB run --resume "$T"/disk/* --quiet
        echo "resumed=$?"
        cp -a "$T/disk" "$T/resumed"
        """,
        tmp_path,
    )
    assert "first=2" in done.stdout and "resumed=0" in done.stdout, done.stderr
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
    [stopped] = (tmp_path / "stopped").iterdir()
    assert leftovers(stopped) == [] and not list(stopped.glob("*.parquet"))
    events = (stopped / "events.jsonl").read_bytes()
    assert events.endswith(b"\n") and all(json.loads(line) for line in events.splitlines())
    assert json.loads((stopped / "run.json").read_text())["status"] in ("partial", "running")
    [resumed] = (tmp_path / "resumed").iterdir()
    meta = json.loads((resumed / "run.json").read_text())
    assert meta["status"] == "complete"
    from evalnb._analysis.load import load

    tasks = load(resumed).tasks
    assert tasks.height == meta["task_count"] == 9
    assert tasks["error"].null_count() == 9
