"""`evalnb validate`: the three rules that prove a dataset's checks are honest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalnb.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "evalnb" / "data"
DATASETS = sorted((DATA / "tasks").glob("*.jsonl"))


@pytest.mark.parametrize("dataset", DATASETS, ids=[d.name for d in DATASETS])
def test_every_shipped_dataset_passes_validation(dataset, capsys):
    assert main(["validate", str(dataset)]) == 0
    out = capsys.readouterr().out
    assert "every task passes the three rules" in out
    assert out.splitlines()[1].split() == ["task", "reference", "empty", "files", "result"]


GOOD = {
    "id": "good",
    "category": "c",
    "prompt": "p",
    "solution": "mkdir -p /out && echo done > /out/r.txt && cat /out/r.txt",
    "expectations": [
        {"check": "file_contains:/out/r.txt:done"},
        {"check": "stdout_contains:done"},
        {"check": "exit_code:0"},
    ],
}


def write(tmp_path: Path, *tasks: dict) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        (GOOD | {"id": "bad_solution", "solution": "echo nope"}, "reference solution fails"),
        (
            GOOD
            | {
                "id": "lazy_checks",
                "expectations": [{"check": "stderr_empty"}, {"check": "tool_calls_max:5"}],
            },
            "an agent that does nothing passes every check",
        ),
        (
            # its only file check names a path the agent cannot remove: disk is not checked
            GOOD
            | {
                "id": "disk_unchecked",
                "expectations": [{"check": "stdout_contains:done"}, {"check": "dir_exists:/etc"}],
            },
            "deleting the output files fails no file check",
        ),
    ],
    ids=["reference fails", "empty passes", "files do not matter"],
)
def test_a_broken_task_is_named_and_the_exit_code_is_1(tmp_path, capsys, broken, reason):
    path = write(tmp_path, GOOD, broken)
    assert main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"BROKEN: {path}: {broken['id']}: {reason}" in captured.err
    assert f"1 broken task(s): {path}:{broken['id']}" in captured.err
    assert "good" not in captured.err.split("broken task(s)")[1]


def test_weak_checks_are_warnings_not_failures(tmp_path, capsys):
    weak = GOOD | {
        "id": "weak",
        "expectations": [*GOOD["expectations"], {"check": "stdout_contains:do"}],
    }
    assert main(["validate", str(write(tmp_path, weak))]) == 0
    assert "warning: " in capsys.readouterr().err
