"""Nothing read is never silent: an input with nothing to read, or an ending or a figure
evalnb cannot tell, is an error or a warning naming the file. Each case is made from the
real fixture of its format (../shared/fixtures)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._cli import main
from evalnb.errors import InputError
from tests.conftest import shared_fixture


def _fails_naming(path: Path, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``evalnb summary`` exits 2 with an error naming ``path``; ``load`` raises it."""
    with pytest.raises(InputError, match=message) as caught:
        load(path)
    assert caught.value.file.endswith(path.name)
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert path.name in err and "error:" in err


def test_a_header_only_onetool_csv_is_an_error(tmp_path, capsys):
    real = shared_fixture("onetool-bench", "result-20260119.csv")
    header = tmp_path / "result-empty.csv"
    header.write_text(real.read_text().splitlines()[0] + "\n")
    _fails_naming(header, "no task rows: the CSV holds its header only", capsys)


def test_a_mira_folder_with_no_cases_is_an_error(tmp_path, capsys):
    real = shared_fixture("mira", "20260626T043009Z-34f5")
    folder = tmp_path / real.name
    shutil.copytree(real, folder)
    report = json.loads((folder / "report.json").read_text())
    report["cases"] = []
    (folder / "report.json").write_text(json.dumps(report))
    with pytest.raises(InputError, match=r"report\.json: cases: no cases") as caught:
        load(folder)
    assert caught.value.field == "cases"
    assert main(["summary", str(folder)]) == 2
    assert "report.json: cases: no cases" in capsys.readouterr().err


def _stream() -> list[dict]:
    path = shared_fixture("claude-code", "fn-10-vep.48.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_an_empty_claude_code_file_is_an_error_not_a_run_of_model_unknown(tmp_path, capsys):
    _stream()  # skips without the fixtures, like the other cases
    empty = tmp_path / "session.jsonl"
    empty.write_text("")
    out = tmp_path / "runs"
    assert main(["import", "claude-code", str(empty), "--out", str(out)]) == 2
    assert "session.jsonl: not a Claude Code session" in capsys.readouterr().err
    assert not out.exists()
    from evalnb._formats.claude_code import read_claude_code

    with pytest.raises(InputError, match=r"session\.jsonl: no Claude Code messages"):
        read_claude_code([empty])


def test_a_result_line_without_subtype_or_is_error_is_an_unknown_ending(tmp_path):
    lines = _stream()
    result = lines[-1]
    assert result["type"] == "result"
    del result["subtype"], result["is_error"]
    path = _write(tmp_path / "cut.jsonl", lines)
    with pytest.warns(UserWarning, match=r"cut\.jsonl: the result line has neither subtype"):
        runs = load(path)
    task = runs.tasks.row(0, named=True)
    assert (task["natural_stop"], task["error"]) == (None, None)  # was an error
    result["is_error"] = False  # is_error alone tells
    assert load(_write(path, lines)).tasks.row(0, named=True)["natural_stop"] is True


@pytest.mark.parametrize(
    ("where", "field"),
    [("assistant", "message.usage.input_tokens"), ("result", "usage.output_tokens")],
)
def test_a_wrong_type_token_count_names_file_line_and_field(tmp_path, where, field):
    lines = _stream()
    n, line = next((n, x) for n, x in enumerate(lines) if x["type"] == where)
    usage = line["message"]["usage"] if where == "assistant" else line["usage"]
    usage[field.rsplit(".", 1)[1]] = "many"
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError) as caught:
        load(path)
    assert (caught.value.line, caught.value.field) == (n + 1, field)
    assert "not a token count: 'many'" in caught.value.message
