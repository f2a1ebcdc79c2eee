"""One way in: every reader is one entry of the registry (``evalnb._formats.detect``), read
the same by ``en.load``, ``evalnb summary`` and ``evalnb import``, its options declared."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.load import load
from evalnb._cli import main
from evalnb._formats.detect import declared_options, formats, importable, recognise
from evalnb.errors import InputError
from tests.conftest import ROOT, shared_fixture

HARBOR_STREAM = (
    "atif/xdotli-tbench/fix_async_worker_queue/example_runs/partial_success_2025-11-19"
    "/fix-async-worker-queue__gPApBGF/agent/claude-code.txt"
)
TASKS = ["run_id", "model", "task_id", "epoch", "passed", "error", "turns", "tool_call_count"]
TASKS += ["total_input_tokens", "total_output_tokens", "natural_stop", "recorded_cost_usd"]
RUNS = ["run_id", "model", "source", "task_count", "status"]


def _claude_code_files() -> list[Path]:
    return sorted(shared_fixture("claude-code").glob("*.jsonl"))


def test_en_load_reads_claude_code_sessions_exactly_as_their_import(tmp_path):
    files = _claude_code_files()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no price for the fixtures' older models
        direct = load(*files)
        assert main(["import", "claude-code", *map(str, files), "--out", str(tmp_path)]) == 0
        imported = load(tmp_path)
    # one run per model: the stream-json session and the two session logs' models
    assert direct.runs.height == len(set(direct.tasks.get_column("model")))
    assert direct.tasks.height == len(files)
    assert direct.runs.select(RUNS).sort("run_id").equals(imported.runs.select(RUNS).sort("run_id"))
    keys = ["run_id", "task_id"]
    assert direct.tasks.select(TASKS).sort(keys).equals(imported.tasks.select(TASKS).sort(keys))


def test_evalnb_summary_reads_a_claude_code_stream(capsys):
    (stream,) = [p for p in _claude_code_files() if p.name.startswith("fn-10")]
    assert main(["summary", str(stream), "--json"]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record["run_id"].startswith("claude-code-claude-opus-4-5")
    assert record["total_tasks"] == 1
    assert record["cost_usd"] == pytest.approx(1.34365525)  # the result line's total_cost_usd


@pytest.mark.parametrize(
    "shape", ["stream-json", "session log", "json array", "lone result", "stream-json in .txt"]
)
def test_each_claude_code_shape_is_recognised(tmp_path, shape):
    files = _claude_code_files()
    stream = next(p for p in files if p.name.startswith("fn-10"))
    lines = [json.loads(x) for x in stream.read_text().splitlines() if x.strip()]
    if shape == "stream-json":
        path = stream
    elif shape == "session log":
        path = next(p for p in files if "session" in p.name)
    elif shape == "json array":
        path = tmp_path / "out.json"
        path.write_text(json.dumps(lines))
    elif shape == "lone result":
        path = tmp_path / "result.json"
        path.write_text(json.dumps(lines[-1]))
    else:  # Harbor saves `claude -p --output-format stream-json` as agent/claude-code.txt
        path = shared_fixture(HARBOR_STREAM)
    assert recognise(path).key == "claude-code"


TRANSCRIPT = "Let me add it.\n$ notes add x\nerror: no store\n$ notes init\n$ notes add x\n"


def test_transcripts_are_read_by_load_and_summary_with_their_declared_target(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.log"
    a.write_text(TRANSCRIPT)
    b.write_text("$ notes list\n")
    with pytest.raises(InputError, match=r"a\.txt: target: a plain-text transcript needs --target"):
        load(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no price for model "unknown"
        runs = load(a, b, options={"target": "notes"})
    assert runs.runs.height == 1  # the files of one load are one run, as one import makes
    assert runs.tasks.select("task_id", "tool_call_count", "passed").sort("task_id").rows() == [
        ("a", 3, False),
        ("b", 1, True),
    ]
    assert main(["summary", str(a), str(b), "--target", "notes", "--json"]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (record["total_tasks"], record["total_tool_calls"]) == (2, 4)
    assert main(["summary", str(a)]) == 2
    assert "needs --target" in capsys.readouterr().err


def test_every_reader_is_one_entry_with_its_key_recogniser_reader_and_options():
    keys = importable()
    assert {"claude-code", "transcript", "inspect", "bashkit-eval", "mira"} <= set(keys)
    for key, fmt in keys.items():
        assert callable(fmt.recognises) and callable(fmt.read), key
    assert set(declared_options()) == {"target"}
    takers = {f.key: [o.required for o in f.options] for f in formats() if f.options}
    assert takers == {"claude-code": [False], "transcript": [True]}


def test_an_option_a_reader_does_not_declare_is_refused(tmp_path, capsys):
    log = tmp_path / "t.txt"
    log.write_text("$ notes list\n")
    with pytest.raises(ValueError, match="no reader takes option 'taget'"):
        load(log, options={"taget": "notes"})
    folder = tmp_path / "tb"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"id": "x", "results": []}))
    args = ["import", "terminal-bench", str(folder), "--target", "notes", "--out", str(tmp_path)]
    assert main(args) == 2
    assert "terminal-bench takes no --target" in capsys.readouterr().err


def test_the_evalnb_parser_is_built_without_importing_a_reader(capsys):
    """``evalnb --help`` (and every command) builds its parser without the registry; a
    command that takes reader options or a format name reads it when it parses."""
    code = (
        "import sys\n"
        "from evalnb._cli import main\n"
        "from evalnb._formats.detect import READERS\n"
        "assert main(['--help']) == 0\n"
        "print(sorted(set(READERS) & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    for command in (["summary"], ["report"], ["import"]):
        assert main([*command, "--help"]) == 0
        assert "--target TARGET" in capsys.readouterr().out
    assert main(["import", "--help"]) == 0
    assert "{mira,scripting-eval," in capsys.readouterr().out


def test_only_the_import_command_writes_imported_run_folders():
    """No reader under evalnb/_formats writes a run folder or has an ``import_*`` writer."""
    modules = sorted((ROOT / "evalnb" / "_formats").glob("*.py"))
    assert len(modules) > 10  # the readers are there to look at
    for module in modules:
        tree = ast.parse(module.read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not [n for n in names if n.startswith("import_")], module.name
        calls = [
            n.func.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        ]
        assert "write_records" not in calls, module.name


def test_a_gathered_format_and_a_per_input_format_load_together(tmp_path):
    files = _claude_code_files()
    log = tmp_path / "t.txt"
    log.write_text(TRANSCRIPT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load(files[0], log, files[1], options={"target": "notes"})
    sources = runs.runs.group_by("source").agg(pl.col("task_count").sum()).sort("source")
    assert sources.rows() == [("claude-code", 2), ("transcript", 1)]
