"""Format detection and errors as values: unsupported inputs are named; bad ones do not stop."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._formats.detect import recognise
from evalnb.errors import InputError
from tests.conftest import shared_fixture


@pytest.mark.parametrize(
    ("parts", "name"),
    [
        (("mira", "20260626T043009Z-34f5"), "a bashkit mira run folder"),
        (("terminal-bench",), "a Terminal-Bench run folder"),
        (("onetool-bench", "result-20260119.csv"), "an onetool-mcp bench CSV"),
        (("llm-tool-test", "create_smoke"), "an llm-tool-test run artifacts folder"),
        (("llm-tool-test", "results-llm_test_runs.jsonl"), "an llm-tool-test results.jsonl"),
        (("bashkit-scripting-eval",), None),
    ],
)
def test_each_real_fixture_is_recognised_as_its_format(parts, name):
    assert getattr(recognise(shared_fixture(*parts)), "name", None) == name


def test_scripting_eval_and_bashkit_eval_files_are_told_apart():
    (scripting,) = sorted(shared_fixture("bashkit-scripting-eval").glob("*.json"))
    eval_file = sorted(shared_fixture("bashkit-eval").glob("*.json"))[0]
    assert recognise(scripting).name == "a bashkit scripting-eval result file"
    assert recognise(eval_file).name == "a bashkit-eval result file"


@pytest.mark.parametrize("pattern", ["*.eval", "*.json"])
def test_inspect_logs_are_recognised_and_read(pattern):
    (log,) = sorted(shared_fixture("inspect").glob(pattern))
    assert recognise(log).name == "an Inspect AI log"
    assert load(log).tasks.height > 0  # tests/test_inspect.py checks what is read


def test_other_files_say_what_they_are(tmp_path):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.txt", "x")
    table = tmp_path / "table.csv"
    table.write_text("a,b\n1,2\n")
    lines = tmp_path / "log.jsonl"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)))
    for path, name in [
        (archive, "a zip archive"),
        (table, "a CSV file"),
        (lines, "a JSON Lines file"),
        (blob, "binary data"),
    ]:
        with pytest.raises(InputError, match=name):
            load(path)


def test_strict_false_loads_what_it_can_and_returns_the_errors(tmp_path):
    csv_path = shared_fixture("onetool-bench", "result-20260119.csv")
    bad = tmp_path / "bad.json"
    bad.write_text('{"provider": "p", "model": "m", "results": [')
    with pytest.warns(UserWarning, match="2 input"):
        runs = load(csv_path, bad, tmp_path / "missing-*.json", strict=False)
    assert runs.runs.height == 1  # the CSV's one model
    assert [Path(e.path).name for e in runs.errors] == ["missing-*.json", "bad.json"]
    assert "invalid JSON" in runs.errors[1].message
    with pytest.raises(InputError, match="invalid JSON"):
        load(csv_path, bad)  # strict by default


def test_strict_false_keeps_errors_in_pandas_frames(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.warns(UserWarning):
        runs = load(bad, strict=False).to_pandas()
    assert len(runs.tasks) == 0
    assert "unknown format" in runs.errors[0].message
