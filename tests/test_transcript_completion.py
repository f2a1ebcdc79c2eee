"""Imported transcripts: one parser everywhere, and completion unknown (null), not False.

The transcript is made by running the real ``notes`` tool in a bashkit sandbox and
writing what it printed, as an agent log would (``$ command``, the output, then
``Exit code: N`` when it is not 0). Expected values are worked out by hand below.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.interaction import interaction, interaction_from_transcript
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._formats.claude_code import read_claude_code
from evalnb._formats.scenario import load_callable
from evalnb._formats.transcript import read_transcripts
from evalnb._resources import data_path
from evalnb._runtime.sandbox.bashkit import BashkitSandbox
from evalnb._store.tables import tables_from_records
from evalnb.records.scenario import default_command_pattern

PATTERN = default_command_pattern("notes")
COMMANDS = [
    "notes init",  # 0
    "notes crate --title A",  # 2: usage error
    "notes create --title A",  # 0: created n1
    "notes show n1; notes show n9",  # bash's status is the last one's: 1 (no n9)
]


def notes_transcript() -> str:
    builtin = load_callable(f"{data_path('tools', 'notes') / 'notes.py'}:bashkit_builtin")
    box = BashkitSandbox(builtins={"notes": builtin}, cwd="/home/eval/work")
    lines = ["I will set up the store and add a note."]
    try:
        asyncio.run(box.exec("mkdir -p /home/eval/work"))
        for command in COMMANDS:
            result = asyncio.run(box.exec(command))
            lines += [f"$ {command}", *(result.stdout + result.stderr).splitlines()]
            if result.exit_code:
                lines.append(f"Exit code: {result.exit_code}")
    finally:
        box.close()
    return "\n".join(lines) + "\n"


def test_a_transcript_is_parsed_once_the_same_way_for_import_and_metrics(tmp_path):
    text = notes_transcript()
    path = tmp_path / "attempt.txt"
    path.write_text(text)
    meta, records = read_transcripts([path], "notes")
    runs = Runs(**tables_from_records(meta, records))
    imported = interaction(runs, PATTERN).drop("run_id", "model", "task_id", "epoch")
    direct = interaction_from_transcript(text, PATTERN)
    assert imported.to_dicts() == direct.to_dicts()
    # by hand: 5 notes commands (the last line holds two, both given its exit code 1);
    # failed: crate (2), show n1 and show n9 (1, approximate) -> 3; all distinct;
    # succeeded first time: init, create -> 2 of 5
    row = direct.row(0, named=True)
    assert (row["total_commands"], row["error_count"], row["unique_commands"]) == (5, 3, 5)
    assert row["first_try_success_rate"] == 2 / 5
    assert row["completed"] is None
    calls = runs.tool_calls.select("commands", "exit_code").rows()
    assert calls == list(zip(COMMANDS, [0, 2, 0, 1], strict=True))


def test_an_imported_transcript_has_unknown_completion_which_rates_leave_out(tmp_path):
    path = tmp_path / "attempt.txt"
    path.write_text(notes_transcript())
    meta, records = read_transcripts([path], "notes")
    runs = Runs(**tables_from_records(meta, records))
    assert runs.tasks.get_column("natural_stop").to_list() == [None]
    assert summary(runs).item(0, "natural_stop_rate") is None  # nothing known
    per_run = interaction(runs, PATTERN, by="run").row(0, named=True)
    assert (per_run["tasks"], per_run["completed_tasks"], per_run["known_completion"]) == (1, 0, 0)
    assert per_run["completion_rate"] is None


def session(path: Path, result: dict | None) -> Path:
    lines = [
        {"type": "system", "subtype": "init", "model": "claude-x", "session_id": path.stem},
        *([{"type": "result", **result}] if result else []),
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return path


def test_rates_over_claude_code_sessions_count_only_known_endings(tmp_path):
    files = [
        session(tmp_path / "a.jsonl", {"subtype": "success", "is_error": False}),
        session(tmp_path / "b.jsonl", {"subtype": "error_max_turns", "is_error": True}),
        session(tmp_path / "c.jsonl", None),  # cut off: no result line, ending unknown
    ]
    [(meta, records)] = read_claude_code(files)
    runs = Runs(**tables_from_records(meta, records))
    stops = runs.tasks.sort("task_id").get_column("natural_stop").to_list()
    assert stops == [True, False, None]
    # known: a (stopped) and b (turn limit) -> 1 of 2, not 1 of 3
    assert summary(runs).item(0, "natural_stop_rate") == pytest.approx(1 / 2)
    completed = interaction(runs).sort("task_id").get_column("completed").to_list()
    assert completed == [True, False, None]
    per_run = interaction(runs, by="run").row(0, named=True)
    assert (per_run["completed_tasks"], per_run["known_completion"]) == (1, 2)
    assert per_run["completion_rate"] == pytest.approx(1 / 2)
    assert runs.tasks.filter(pl.col("task_id") == "c").item(0, "error").startswith("no result")
