"""`evalnb validate`: the three rules that prove a dataset's checks are honest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalnb._cli import main
from evalnb._resources import dataset_path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
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


# --- scenarios ---------------------------------------------------------------------------

UPSTREAM = ROOT.parent / "shared" / "fixtures" / "llm-tool-test" / "scenarios"


def test_the_shipped_scenarios_validate_by_name_and_by_folder(capsys):
    """Every ``notes`` scenario loads, prepares its workspace, and fails a gate untouched;
    the name is the folder (validated once: each scenario runs about ten ``notes``
    processes)."""
    assert dataset_path("notes").samefile(DATA / "scenarios")
    assert main(["validate", "notes"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "notes: 7 scenarios"
    rows = [line.split() for line in out.splitlines()[2:9]]
    assert {tuple(r[1:]) for r in rows} == {("n/a", "fails", "n/a", "ok")}


def test_the_real_upstream_scenarios_are_each_named_with_what_stops_them(capsys):
    if not UPSTREAM.is_dir():
        pytest.skip("../shared/fixtures/llm-tool-test/scenarios is absent")
    assert main(["validate", str(UPSTREAM)]) == 1
    captured = capsys.readouterr()
    assert "2 scenarios" in captured.out
    assert "capture_basic.yaml:3: template_folder: folder qipu not found" in captured.err
    assert "example_basic.yaml:43: scripts: not supported" in captured.err
    assert main(["validate", str(UPSTREAM / "example_basic.yaml")]) == 1  # was "invalid JSON"
    assert "invalid JSON" not in capsys.readouterr().err


def test_an_upstream_scenario_with_its_template_and_rubric_validates(tmp_path, capsys):
    """capture_basic's gates need qipu, absent here: untouched, they fail, as they must.
    Its judge is not called by validate."""
    if not UPSTREAM.is_dir():
        pytest.skip("../shared/fixtures/llm-tool-test/scenarios is absent")
    (tmp_path / "capture_basic.yaml").write_text((UPSTREAM / "capture_basic.yaml").read_text())
    (tmp_path / "templates" / "qipu").mkdir(parents=True)
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "capture_v1.yaml").write_text(
        "criteria:\n  - {id: facts, weight: 1.0, description: Three facts}\n"
    )
    assert main(["validate", str(tmp_path / "capture_basic.yaml")]) == 0
    assert "capture_basic  n/a        fails  n/a    ok" in capsys.readouterr().out


def test_a_scenario_whose_gates_pass_untouched_is_broken(tmp_path, capsys):
    (tmp_path / "s.yaml").write_text(
        "name: vacuous\ntarget: {binary: wc, mode: local}\ntask: Count the words.\n"
        "gates:\n- {type: command_succeeds, command: 'true'}\n"
    )
    (tmp_path / "t.yaml").write_text(
        "name: vacuous\ntarget: {binary: wc, mode: local}\ntask: Count the words.\n"
        "gates:\n- {type: file_exists, path: out.txt}\n"
    )
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "vacuous: an agent that does nothing passes every gate" in err
    assert "scenario name also used by" in err
