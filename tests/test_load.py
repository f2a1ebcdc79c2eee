"""load(): every supported input format, globs, folders, backends and duplicate runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import evalnb as en
from evalnb._analysis.load import load
from evalnb._analysis.runs import PandasRuns, Runs
from evalnb._cli.imports import import_format
from evalnb._formats.detect import READERS
from evalnb._store import RunStore
from evalnb.errors import InputError
from evalnb.records import RunMeta, Task, TaskRecord, TaskScore


def _native_run(root: Path, run_id: str = "native") -> Path:
    store = RunStore.create(root, RunMeta(run_id=run_id, provider="reference", model="reference"))
    record = TaskRecord(task=Task(id="t1", category="c", prompt="p"), score=TaskScore(task_id="t1"))
    store.append(
        {
            "event": "task_finished",
            "task_id": "t1",
            "epoch": 1,
            "attempt": "a",
            "record": record.model_dump(mode="json"),
        }
    )
    store.finalize()
    return store.path


def test_a_glob_of_result_files_loads_every_run(bashkit_eval_files):
    runs = load(str(bashkit_eval_files[0].parent / "*.json"))
    assert isinstance(runs, Runs)
    assert runs.runs.get_column("run_id").to_list() == [p.stem for p in bashkit_eval_files]
    assert runs.tasks.group_by("run_id").len().get_column("len").to_list() == [25, 25, 25]


def test_a_folder_stands_for_the_loadable_things_inside_it(bashkit_eval_files):
    # the fixtures folder also holds a README.md, which is not an input
    runs = load(bashkit_eval_files[0].parent)
    assert runs.runs.height == 3


def test_result_files_and_run_folders_load_together(bashkit_eval_files, tmp_path):
    native = _native_run(tmp_path / "runs")
    runs = load(bashkit_eval_files[0], native)
    assert runs.runs.get_column("source").to_list() == ["bashkit-eval", "evalnb"]
    assert runs.tasks.filter(pl.col("run_id") == "native").height == 1


def test_a_folder_of_run_folders_is_read_without_the_foreign_format_readers(tmp_path):
    """A folder holding only folders is no foreign format, and a folder whose run.json is
    evalnb's is a run folder: loading them imports none of the other readers (in a fresh
    process, importing them was most of the time a load of a few run folders took)."""
    for run_id in ("a", "b"):
        _native_run(tmp_path, run_id)
    code = (
        "import sys, evalnb; runs = evalnb.load(sys.argv[1]); "
        "print(runs.runs.height); print(*sorted(sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "2"
    assert not set(out[1].split()) & set(READERS)


def test_pandas_frames_come_from_to_pandas_and_every_analysis_reads_the_runs(tmp_path):
    runs = load(_native_run(tmp_path))
    frames = runs.to_pandas()
    assert isinstance(frames, PandasRuns)
    assert isinstance(frames.tasks, pd.DataFrame)
    assert frames.tasks["task_id"].tolist() == ["t1"]
    # issue 29: load(..., backend="pandas") returned tables no analysis function could read
    assert en.summary(runs).height == 1 and en.pass_at_k(runs, k=[1]).height == 1


def test_the_same_file_reached_twice_is_read_once(bashkit_eval_files):
    first = bashkit_eval_files[0]
    runs = load(first, str(first.parent / "*haiku*.json"))
    assert runs.runs.height == 1


def test_one_run_from_two_inputs_is_refused(bashkit_eval_files, tmp_path):
    (folder,) = import_format("bashkit-eval", bashkit_eval_files[:1], tmp_path)
    with pytest.raises(InputError) as err:
        load(bashkit_eval_files[0], folder)
    assert err.value.field == "run_id"
    assert str(bashkit_eval_files[0].resolve()) in str(err.value)


def test_unknown_and_missing_inputs_are_input_errors(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(InputError, match=r"other\.json: unknown format"):
        load(other)
    with pytest.raises(InputError, match="no file or folder matches"):
        load(tmp_path / "nothing-*.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"no run folders, recognised trace files or \.json files"):
        load(empty)
    notes = tmp_path / "notes.dat"
    notes.write_text("not json")
    with pytest.raises(InputError, match=r"notes\.dat:1: invalid JSON"):
        load(notes)
    notes.rename(tmp_path / "notes.txt")  # a plain-text transcript, which needs its target
    with pytest.raises(InputError, match=r"notes\.txt: target: a plain-text transcript needs"):
        load(tmp_path / "notes.txt")


def test_a_mira_report_given_alone_points_to_its_folder(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"cases": [], "summary": {"scored": 0}}))
    with pytest.raises(InputError, match=r"a bashkit mira report\.json: load its run folder"):
        load(report)


def test_a_folder_holding_a_mira_folder_loads_it(tmp_path):
    folder = tmp_path / "20260101T000000Z-abcd"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "started_unix": 0}))
    case = {"eval": "e", "sample": "s", "target": "p/m", "passed": True, "skipped": False}
    case["scores"] = [{"scorer": "x", "value": 1.0, "pass": True, "reason": "ok"}]
    (folder / "report.json").write_text(json.dumps({"cases": [case], "summary": {}}))
    runs = load(tmp_path)
    assert runs.runs.select("run_id", "source", "model").row(0) == (
        f"{folder.name}-e-p_m",
        "bashkit-mira",
        "m",
    )


def test_load_has_no_backend_argument(tmp_path):
    with pytest.raises(TypeError, match="backend"):
        load(_native_run(tmp_path), backend="pandas")  # type: ignore[call-arg]
