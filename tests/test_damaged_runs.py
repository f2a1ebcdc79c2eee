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

import evalnb as en
from evalnb._analysis.runs import read_run_folder
from evalnb._cli import main
from evalnb._version import __version__
from evalnb.errors import InputError


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


def damage_behind_the_footer(file: Path) -> None:
    """Overwrite the bytes of the first column's pages: the footer (the schema, the row
    count) still reads, the rows do not."""
    data = bytearray(file.read_bytes())
    data[8:200] = b"\xff" * 192
    file.write_bytes(bytes(data))


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
        pytest.param(damage_behind_the_footer, id="data-behind-intact-footer"),
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


def test_run_json_says_its_run_folder_format_and_a_newer_one_is_refused(run, capsys):
    meta = json.loads((run / "run.json").read_text())
    assert meta["format"] == 1
    meta["format"] = 2
    (run / "run.json").write_text(json.dumps(meta))
    err = cli_error(["summary", str(run)], capsys)
    assert "run.json: format: " in err
    assert "run-folder format 2 is newer than this evalnb reads (1): upgrade evalnb" in err
    with pytest.raises(InputError, match=r"run\.json: format: run-folder format 2 is newer"):
        en.load(run)


def test_run_json_without_a_format_is_read_as_format_1(run):
    meta = json.loads((run / "run.json").read_text())
    del meta["format"]
    (run / "run.json").write_text(json.dumps(meta))
    assert read_run_folder(run).tasks.height == en.load(run).tasks.height > 0


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


# Damage that used to give wrong figures with exit 0 (issue 25 item 7): every table is
# checked against its schema and the tasks rows against run.json's task_count when the
# run is loaded; the events rebuild the run, or it is refused naming the file and reason.


def _true_passed(complete_run: Path) -> int:
    return int(en.summary(read_run_folder(complete_run)).item(0, "total_passed"))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        pytest.param(
            lambda f: pl.read_parquet(f).drop("passed").write_parquet(f),
            r"lacks columns \['passed'\]",
            id="no-passed-column",
        ),
        pytest.param(
            lambda f: (
                pl.read_parquet(f).with_columns(pl.col("passed").cast(pl.Utf8)).write_parquet(f)
            ),
            r"wrong column types: passed is String, not Boolean",
            id="passed-as-strings",
        ),
        pytest.param(
            lambda f: pl.read_parquet(f).head(0).write_parquet(f),
            r"holds 0 attempts where run\.json's task_count is 6",
            id="emptied",
        ),
        pytest.param(
            lambda f: pl.read_parquet(f).head(4).write_parquet(f),
            r"holds 4 attempts where run\.json's task_count is 6",
            id="cut-short",
        ),
    ],
)
def test_a_tasks_table_that_lost_a_column_its_types_or_rows_is_rebuilt_from_the_events(
    run, complete_run, damage, reason, capsys
):
    damage(run / "tasks.parquet")
    with pytest.warns(UserWarning, match=rf"tasks\.parquet: {reason}; tables rebuilt from"):
        rebuilt = en.load(run)
    assert en.summary(rebuilt).item(0, "total_passed") == _true_passed(complete_run) > 0
    assert main(["summary", str(run)]) == 0
    assert "Tasks passed: 6/6" in capsys.readouterr().out


def test_a_damaged_call_or_check_table_is_rebuilt_from_the_events(run, complete_run):
    checks = pl.read_parquet(run / "checks.parquet")
    checks.with_columns(pl.col("passed").cast(pl.Utf8)).write_parquet(run / "checks.parquet")
    with pytest.warns(UserWarning, match=r"checks\.parquet: wrong column types: passed is"):
        rebuilt = en.load(run)
    assert rebuilt.checks.get_column("passed").dtype == pl.Boolean
    assert rebuilt.checks.height == checks.height


def test_a_damaged_run_whose_events_do_not_hold_its_attempts_is_refused(run, capsys):
    """An emptied events.jsonl and a tasks table rewritten from it (the run said
    'complete, 0 tasks' against task_count 6): nothing holds the run any more."""
    pl.read_parquet(run / "tasks.parquet").head(0).write_parquet(run / "tasks.parquet")
    (run / "events.jsonl").write_text("")
    expected = (
        r"tasks\.parquet: holds 0 attempts where run\.json's task_count is 6; and "
        r"events\.jsonl holds 0 finished attempts where run\.json's task_count is 6, so the "
        r"run cannot be rebuilt"
    )
    with pytest.raises(InputError, match=expected):
        en.load(run)
    assert "cannot be rebuilt" in cli_error(["summary", str(run)], capsys)
    with warnings.catch_warnings(record=True):
        loaded = en.load(run, strict=False)
    assert loaded.runs.height == 0 and "cannot be rebuilt" in loaded.errors[0].message


def runs_of_their_own(run: Path, root: Path) -> list[Path]:
    """Three copies of ``run``, ``copy-0`` to ``copy-2``, each its own run: its folder's
    name as its ``run_id``, in ``run.json`` and in every table's rows."""
    copies = [shutil.copytree(run, root / "more" / f"copy-{i}") for i in range(3)]
    for folder in copies:
        meta = json.loads((folder / "run.json").read_text())
        meta["run_id"] = folder.name
        (folder / "run.json").write_text(json.dumps(meta))
        for table in folder.glob("*.parquet"):
            pl.read_parquet(table).with_columns(run_id=pl.lit(folder.name)).write_parquet(table)
    return copies


def test_one_damaged_folder_among_many_is_rebuilt_and_the_others_are_read(run, tmp_path):
    others = runs_of_their_own(run, tmp_path)
    tasks = others[1] / "tasks.parquet"
    pl.read_parquet(tasks).drop("passed").write_parquet(tasks)
    with pytest.warns(UserWarning, match=r"copy-1/tasks\.parquet: lacks columns \['passed'\]"):
        runs = en.load(*others)
    assert runs.runs.get_column("run_id").to_list() == ["copy-0", "copy-1", "copy-2"]
    assert en.summary(runs).get_column("total_passed").to_list() == [6, 6, 6]


def test_a_folder_whose_tasks_rows_cannot_be_read_is_named_and_rebuilt_among_many(run, tmp_path):
    others = runs_of_their_own(run, tmp_path)
    damage_behind_the_footer(others[1] / "tasks.parquet")
    with pytest.warns(UserWarning, match=r"copy-1/tasks\.parquet: its rows cannot be read \("):
        runs = en.load(*others)
    assert en.summary(runs).get_column("total_passed").to_list() == [6, 6, 6]


def test_a_copied_folder_whose_rows_name_another_run_is_not_counted_twice(run, tmp_path):
    """A copy with only its run.json renamed: its rows still name the original run."""
    copy = shutil.copytree(run, tmp_path / "copies" / "renamed")
    meta = json.loads((copy / "run.json").read_text())
    meta["run_id"] = "renamed"
    (copy / "run.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="holds 12 attempts where run.json's task_count is 6"):
        runs = en.load(run, copy)
    assert en.summary(runs).get_column("total_tasks").to_list() == [6, 6]
    assert runs.tasks.group_by("run_id").len().get_column("len").to_list() == [6, 6]


def test_a_copy_with_a_damaged_call_table_leaves_the_original_it_copies_intact(run, tmp_path):
    """The tasks are read while the other tables are checked: a folder found damaged by
    those checks (here a copy whose rows still name the original run) is not read with
    the others, so the original's attempts are counted once and it stays intact."""
    copy = shutil.copytree(run, tmp_path / "copies" / "renamed")
    meta = json.loads((copy / "run.json").read_text())
    meta["run_id"] = "renamed"
    (copy / "run.json").write_text(json.dumps(meta))
    checks = pl.read_parquet(copy / "checks.parquet")
    checks.with_columns(pl.col("passed").cast(pl.Utf8)).write_parquet(copy / "checks.parquet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = en.load(run, copy)
    assert [str(w.message) for w in caught] == [
        f"{copy / 'checks.parquet'}: wrong column types: passed is String, not Boolean; "
        "tables rebuilt from events.jsonl"
    ]
    assert en.summary(runs).get_column("total_tasks").to_list() == [6, 6]


def test_a_folder_whose_tasks_rows_and_call_table_are_damaged_is_rebuilt(run, complete_run):
    """A tasks table whose footer is intact but whose rows cannot be read, in a folder
    whose checks table is damaged too: the checks find the folder damaged, so the tasks
    read that polars was doing meanwhile is not used, and the run is rebuilt."""
    tasks = run / "tasks.parquet"
    data = tasks.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little") + 8
    tasks.write_bytes(b"PAR1" + b"\xff" * (len(data) - footer - 4) + data[-footer:])
    (run / "checks.parquet").write_bytes(b"not parquet")
    with pytest.warns(UserWarning, match=r"checks\.parquet: unreadable .*rebuilt from events"):
        rebuilt = en.load(run)
    assert en.summary(rebuilt).item(0, "total_passed") == _true_passed(complete_run) > 0
