"""Damaged run folders: the right data rebuilt from events, or a clear error (never a traceback).

``events.jsonl`` is the source of truth: damaged or incomplete parquet tables are
rebuilt from it. Damage to the events or to ``run.json`` is an InputError naming the
file, line and field; the CLI prints it and exits 2, when reading and when resuming.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

from evalnb.analysis.runs import read_run_folder
from evalnb.cli import main
from evalnb.errors import InputError
from evalnb.version import __version__


@pytest.fixture(scope="module")
def complete_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    assert main(["run", "smoke", "--model", "reference", "--epochs", "2", "--out", str(out)]) == 0
    [run] = out.iterdir()
    return run


@pytest.fixture
def run(complete_run, tmp_path) -> Path:
    copy = tmp_path / complete_run.name
    shutil.copytree(complete_run, copy)
    return copy


def set_status(run: Path, status: str) -> None:
    meta = json.loads((run / "run.json").read_text())
    meta["status"] = status
    (run / "run.json").write_text(json.dumps(meta))


def finished_line(run: Path) -> int:
    """The 1-based number of the first ``task_finished`` line."""
    lines = (run / "events.jsonl").read_text().split("\n")
    return next(n for n, line in enumerate(lines, 1) if '"task_finished"' in line)


def edit_line(run: Path, number: int, edit) -> None:
    events = run / "events.jsonl"
    lines = events.read_text().split("\n")
    lines[number - 1] = edit(lines[number - 1])
    events.write_text("\n".join(lines))


def cli_error(argv: list[str], capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    return err


def test_a_garbage_line_in_the_events_is_named_by_file_and_line(run, capsys):
    set_status(run, "partial")
    n = finished_line(run)
    edit_line(run, n, lambda line: "}{ not json")
    with pytest.raises(InputError, match=rf"events\.jsonl:{n}: not JSON"):
        read_run_folder(run)
    for argv in (["summary", str(run)], ["run", "--resume", str(run), "--quiet"]):
        assert f"events.jsonl:{n}: not JSON" in cli_error(argv, capsys)


def test_a_wrongly_typed_record_is_named_by_line_and_field(run, capsys):
    set_status(run, "partial")
    n = finished_line(run)

    def retype(line: str) -> str:
        event = json.loads(line)
        event["record"]["trace"]["turns"] = "many"
        return json.dumps(event)

    edit_line(run, n, retype)
    with pytest.raises(InputError, match=rf"events\.jsonl:{n}: record\.trace\.turns: "):
        read_run_folder(run)
    err = cli_error(["run", "--resume", str(run), "--quiet"], capsys)
    assert f"events.jsonl:{n}: record.trace.turns:" in err


def test_a_finished_event_without_its_keys_is_named(run):
    set_status(run, "partial")
    n = finished_line(run)
    edit_line(run, n, lambda line: json.dumps({"event": "task_finished", "epoch": 1}))
    with pytest.raises(InputError, match=rf"events\.jsonl:{n}: task_id: missing"):
        read_run_folder(run)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda f: f.write_bytes(f.read_bytes()[: f.stat().st_size // 2]), id="cut"),
        pytest.param(lambda f: f.unlink(), id="missing"),
        pytest.param(lambda f: f.write_bytes(b"not parquet"), id="garbage"),
        pytest.param(
            lambda f: pl.read_parquet(f).drop("epoch").write_parquet(f), id="no-epoch-column"
        ),
    ],
)
def test_damaged_parquet_tables_are_rebuilt_from_the_events(run, complete_run, damage):
    damage(run / "tasks.parquet")
    with pytest.warns(UserWarning, match=r"tasks\.parquet: .*rebuilt from events\.jsonl"):
        rebuilt = read_run_folder(run)
    intact = read_run_folder(complete_run)
    keys = ["task_id", "epoch"]
    columns = ["task_id", "epoch", "passed", "score", "turns", "total_input_tokens"]
    assert rebuilt.tasks.select(columns).sort(keys).equals(intact.tasks.select(columns).sort(keys))
    assert rebuilt.llm_calls.height == intact.llm_calls.height > 0


def test_an_intact_run_reads_without_warnings(complete_run):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_run_folder(complete_run).tasks.height == 6


def test_run_json_that_is_not_json_is_named(run, capsys):
    (run / "run.json").write_text('{"run_id": "r", "provider": ')
    with pytest.raises(InputError, match=r"run\.json: .*Invalid JSON"):
        read_run_folder(run)
    for argv in (["summary", str(run)], ["run", "--resume", str(run), "--quiet"]):
        assert "run.json" in cli_error(argv, capsys)


def test_run_json_from_a_newer_evalnb_says_to_upgrade(run, capsys):
    meta = json.loads((run / "run.json").read_text())
    meta.update(evalnb_version="99.0.0", shard={"index": 1})
    (run / "run.json").write_text(json.dumps(meta))
    err = cli_error(["summary", str(run)], capsys)
    assert "run.json: not an evalnb run.json (shard: Extra inputs are not permitted)" in err
    assert f"written by evalnb 99.0.0, this is {__version__}: upgrade" in err


def test_run_json_with_a_wrong_type_names_the_field(run):
    meta = json.loads((run / "run.json").read_text())
    meta["epochs"] = "two"
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"run\.json: not an evalnb run\.json \(epochs: "):
        read_run_folder(run)


def test_resuming_a_run_that_names_no_model_is_refused(run, capsys):
    meta = json.loads((run / "run.json").read_text())
    meta["status"] = "partial"
    meta["settings"].pop("spec")
    (run / "run.json").write_text(json.dumps(meta))
    err = cli_error(["run", "--resume", str(run), "--quiet"], capsys)
    assert "settings.spec" in err


def test_a_folder_with_only_events_is_not_a_run_folder(run, capsys):
    (run / "run.json").unlink()
    for name in run.glob("*.parquet"):
        name.unlink()
    err = cli_error(["run", "--resume", str(run), "--quiet"], capsys)
    assert f"{run}: not an evalnb run folder (no run.json)" in err
