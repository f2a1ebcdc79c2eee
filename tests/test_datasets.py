"""Loading datasets: JSONL tasks, bashkit-eval result files, errors naming file:line:field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalnb._cli import main
from evalnb._formats.tasks import load_tasks
from evalnb.errors import InputError

GOOD = {"id": "a", "category": "c", "prompt": "p", "expectations": [{"check": "exit_code:0"}]}


def write(tmp_path: Path, *lines: str, name: str = "tasks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_comments_and_blank_lines_are_skipped_and_defaults_filled(tmp_path):
    path = write(tmp_path, "# header", "", "// note", json.dumps(GOOD))
    [task] = load_tasks(path)
    assert task.id == "a" and task.files == {} and task.expectations[0].weight == 1.0
    assert task.solution is None and task.tags == []


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (
            '{"id": "a", "category": "c", "prompt": "p", "expectations": [{"check": "exit:0"}]}',
            "expectations.0.check",
            "unknown check kind 'exit'",
        ),
        (
            '{"id": "a", "category": "c", "prompt": "p", '
            '"expectations": [{"check": "stdout_regex:(unclosed"}]}',
            "expectations.0.check",
            "invalid regex",
        ),
        (
            '{"id": "a", "category": "c", "prompt": "p", '
            '"expectations": [{"check": "file_contains:no-path"}]}',
            "expectations.0.check",
            "file_contains needs",
        ),
        (
            '{"id": "a", "category": "c", "prompt": "p", '
            '"expectations": [{"check": "exit_code:x"}]}',
            "expectations.0.check",
            "needs an integer",
        ),
        ('{"id": "a", "category": "c"}', "prompt", "Field required"),
        ('{"id": "a", "category": "c", "prompt": "p", "colour": 1}', "colour", "Extra inputs"),
        (
            '{"id": "a", "category": "c", "prompt": "p", "files": {"rel.txt": ""}}',
            "files",
            "must be absolute",
        ),
    ],
)
def test_invalid_tasks_name_the_file_line_and_field(tmp_path, line, field, message):
    path = write(tmp_path, json.dumps(GOOD | {"id": "first"}), line)
    with pytest.raises(InputError) as err:
        load_tasks(path)
    assert err.value.line == 2 and err.value.field == field
    assert message in err.value.message
    assert str(err.value).startswith(f"{path}:2: {field}: ")


def test_bad_json_names_the_line(tmp_path):
    path = write(tmp_path, json.dumps(GOOD), '{"id": "b", ')
    with pytest.raises(InputError, match=r"tasks.jsonl:2: invalid JSON"):
        load_tasks(path)


def test_duplicate_ids_name_both_lines(tmp_path):
    path = write(tmp_path, json.dumps(GOOD), "", json.dumps(GOOD))
    with pytest.raises(InputError, match=r":3: id: duplicate id 'a' \(first on line 1\)"):
        load_tasks(path)


def test_empty_and_missing_files_are_errors(tmp_path):
    with pytest.raises(InputError, match="empty dataset"):
        load_tasks(write(tmp_path, "# only a comment"))
    with pytest.raises(InputError, match="file not found"):
        load_tasks(tmp_path / "missing.jsonl")


def test_cli_exits_2_before_any_model_is_called(tmp_path, capsys):
    path = write(
        tmp_path,
        '{"id": "a", "category": "c", "prompt": "p", "expectations": [{"check": "nope:1"}]}',
    )
    out = tmp_path / "runs"
    assert main(["run", str(path), "--model", "reference", "--out", str(out)]) == 2
    assert "unknown check kind 'nope'" in capsys.readouterr().err
    assert not out.exists()


def test_a_bashkit_eval_result_file_is_a_dataset(bashkit_eval_files):
    tasks = load_tasks(bashkit_eval_files[0])
    assert len(tasks) == 25
    assert len({t.category for t in tasks}) == 10
    assert all(t.expectations for t in tasks)


def test_a_truncated_result_file_is_reported_with_its_line(tmp_path, bashkit_eval_files):
    text = bashkit_eval_files[0].read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match=r"cut.json:\d+: invalid JSON"):
        load_tasks(path)
