"""`evalnb merge` is atomic and streams: real SIGKILLs at random points leave no merged
folder or a complete one; the merged tables are what its events give; outdated shards,
busy shards and leftovers of killed merges are handled."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb as en
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb._store.command_counts import with_command_counts
from evalnb._store.folder import merging_folder
from evalnb._store.tables import TABLES, conform, tables_from_records
from tests.test_run_lock import HOLD_THE_LOCK
from tests.test_shard import run, totals

MERGE = [sys.executable, "-m", "evalnb._cli", "merge"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> tuple[list[Path], dict]:
    """Two shards of 150 attempts each, and the totals of the same run unsharded."""
    root = tmp_path_factory.mktemp("shards")
    epochs = ["--epochs", "100"]
    whole = run(root, "whole", *epochs)
    return [run(root, f"s{i}", *epochs, "--shard", f"{i}/2") for i in (1, 2)], totals(whole)


def test_the_merged_tables_are_the_tables_its_events_give(tmp_path, shards):
    dirs, expected = shards
    out = tmp_path / "merged"
    assert main(["merge", *map(str, dirs), "--out", str(out)]) == 0
    assert totals(out) == expected
    store = RunStore.open(out)
    assert store.meta.task_count == expected["total_tasks"] == 300
    rebuilt = tables_from_records(store.meta, store.records())
    rebuilt["tasks"] = conform(
        with_command_counts(rebuilt["tasks"], rebuilt["tool_calls"], rebuilt["tool_invocations"]),
        "tasks",
    )
    for name in TABLES[1:]:
        stored = pl.read_parquet(out / f"{name}.parquet")
        assert_frame_equal(stored, rebuilt[name], check_column_order=False, check_dtypes=False)
    assert stored["run_id"].unique().to_list() in ([], ["merged"])
    assert not merging_folder(out).exists()


def writing_time(dirs: list[Path], out: Path) -> float:
    """Seconds from a merge's merging folder appearing to its run folder appearing."""
    proc = subprocess.Popen([*MERGE, *map(str, dirs), "--out", str(out)])
    started = None
    while not out.exists() and proc.poll() is None:
        if started is None and merging_folder(out).exists():
            started = time.monotonic()
        time.sleep(0.0005)
    assert proc.wait() == 0 and started is not None
    return time.monotonic() - started


def test_a_merge_killed_at_any_point_leaves_no_folder_or_a_complete_one(tmp_path, shards):
    dirs, expected = shards
    root = tmp_path / "merged"
    rng = random.Random(26)
    outcomes = []
    # the first kill lands as soon as the merge starts writing, the others at random points
    # of the time an unkilled merge takes to write here (about 50 ms; it then takes
    # several times that to exit, so fixed delays would mostly land after it finished)
    writing = writing_time(dirs, tmp_path / "timed")
    delays = [0.0] + [rng.uniform(0, writing) for _ in range(7)]
    for k, delay in enumerate(delays):
        out = root / f"m{k}"
        proc = subprocess.Popen([*MERGE, *map(str, dirs), "--out", str(out)])
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if out.exists() or merging_folder(out).exists():  # the merge is writing
                time.sleep(delay)
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if out.exists():  # complete, or not there at all
            assert RunStore.open(out).meta.status == "complete"
            assert totals(out) == expected
            outcomes.append("complete")
        else:
            outcomes.append("none")
    assert "none" in outcomes, outcomes  # some kills did land mid-merge
    # leftovers of killed merges are no runs; merging again cleans them and completes
    assert en.load(root).runs.height == outcomes.count("complete")
    for k, outcome in enumerate(outcomes):
        out = root / f"m{k}"
        if outcome == "none":
            with warnings.catch_warnings():  # "removed what an interrupted merge left there"
                warnings.simplefilter("ignore", UserWarning)
                assert main(["merge", *map(str, dirs), "--out", str(out)]) == 0
            assert totals(out) == expected
    assert sorted(p.name for p in root.iterdir()) == [f"m{k}" for k in range(8)]


def test_a_leftover_merge_folder_is_no_run_and_the_next_merge_removes_it(tmp_path, shards):
    dirs, expected = shards
    out = tmp_path / "merged"
    left = merging_folder(out)
    left.mkdir()
    (left / "run.json").write_text((dirs[0] / "run.json").read_text())
    (left / "events.jsonl").write_text("half a li")
    with pytest.raises(en.InputError):  # not read as a run
        en.load(left)
    with pytest.raises(en.InputError, match="unfinished `evalnb merge`"):
        RunStore.open(left)  # what resuming or merging it says
    with pytest.warns(UserWarning, match="removed what an interrupted merge left there"):
        assert main(["merge", *map(str, dirs), "--out", str(out)]) == 0
    assert totals(out) == expected and not left.exists()


def test_a_shard_whose_tables_are_outdated_is_refused_naming_the_file(tmp_path, shards, capsys):
    dirs, _ = shards
    copies = []
    for d in dirs:
        copy = tmp_path / d.parent.name / d.name
        copy.parent.mkdir()
        subprocess.run(["cp", "-r", str(d), str(copy)], check=True)
        copies.append(copy)
    tasks = copies[1] / "tasks.parquet"
    pl.read_parquet(tasks).drop("attempt_key").write_parquet(tasks)
    out = tmp_path / "merged"
    assert main(["merge", *map(str, copies), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{tasks}: attempt_key: written by an older evalnb or damaged" in err
    assert f"evalnb run --resume {copies[1]}" in err
    assert not out.exists() and not merging_folder(out).exists()


def test_a_merge_waits_for_no_one_a_shard_or_target_in_use_is_refused(tmp_path, shards):
    dirs, _ = shards
    out = tmp_path / "merged"
    merging_folder(out).mkdir()
    for busy in (dirs[1], merging_folder(out)):
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_THE_LOCK, str(busy)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout.readline() == "held\n"
            refused = subprocess.run(
                [*MERGE, *map(str, dirs), "--out", str(out)], capture_output=True, text=True
            )
        finally:
            holder.kill()
            holder.wait()
        assert refused.returncode == 2
        assert f"{busy}: already running (pid {holder.pid})" in refused.stderr
        assert not out.exists()
