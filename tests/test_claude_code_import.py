"""Importing agent sessions recorded outside evalnb: Claude Code stream-json files and
plain-text transcripts (spec 002's transcript fallback). The samples are hand-written in
the shapes those tools produce."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.interaction import interaction, interaction_from_transcript
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._cli import main
from evalnb._cli.imports import import_format
from evalnb._formats.claude_code import (
    NO_RESULT,
    PROMPT_MISSING,
    read_claude_code,
)
from evalnb._formats.transcript import read_transcripts
from evalnb._store.tables import tables_from_records
from evalnb.errors import InputError
from evalnb.records.scenario import default_command_pattern

SONNET = "claude-sonnet-4-5-20250929"
SESSION = "5b1d3e1a-8f0c-4c1e-9a51-3f2d7c0b9e41"


def init(model: str = SONNET, session: str = SESSION) -> dict:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": "/home/dev/notes-demo",
        "session_id": session,
        "tools": ["Bash", "Read", "Edit"],
        "mcp_servers": [],
        "model": model,
        "permissionMode": "bypassPermissions",
        "apiKeySource": "none",
        "claude_code_version": "2.0.14",
        "uuid": "0c6f0b1e-2d7a-4b8e-a1c3-6e9f0d2b4a71",
    }


def assistant(msg_id: str, block: dict, usage: dict, stop: str | None = None, parent=None):
    return {
        "type": "assistant",
        "message": {
            "model": SONNET,
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"service_tier": "standard", **usage},
        },
        "parent_tool_use_id": parent,
        "session_id": SESSION,
    }


def bash(tool_id: str, command: str) -> dict:
    return {
        "type": "tool_use",
        "id": tool_id,
        "name": "Bash",
        "input": {"command": command, "description": "run it"},
    }


def result_line(tool_id: str, content, is_error: bool, structured: dict | None = None) -> dict:
    line = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": content,
                    "is_error": is_error,
                }
            ],
        },
        "parent_tool_use_id": None,
        "session_id": SESSION,
    }
    if structured is not None:
        line["tool_use_result"] = structured
    return line


def usage(inp: int, out: int, read: int = 0, write: int = 0) -> dict:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }


def finished(subtype: str = "success", is_error: bool = False) -> dict:
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": 18234,
        "duration_api_ms": 15020,
        "num_turns": 9,
        "result": "Added the standup note.",
        "session_id": SESSION,
        "total_cost_usd": 0.04213,
        "usage": usage(15, 230, 40000, 4300),
    }


def session_lines() -> list[dict]:
    text = {"type": "text", "text": "I'll check the notes tool first."}
    return [
        init(),
        # one API response split over two lines (same message id, usage repeated)
        assistant("msg_01A", text, usage(3, 8, 12000, 4000)),
        assistant("msg_01A", bash("toolu_01", "notes --help"), usage(3, 95, 12000, 4000)),
        result_line(
            "toolu_01",
            "usage: notes add|list",
            False,
            {"stdout": "usage: notes add|list\n", "stderr": "", "interrupted": False},
        ),
        assistant("msg_01B", bash("toolu_02", "notes ad standup"), usage(5, 40, 16000, 300)),
        result_line("toolu_02", "Exit code 2\nnotes: unknown command 'ad'", True),
        assistant(
            "msg_01C",
            {"type": "tool_use", "id": "toolu_03", "name": "Read", "input": {"file_path": "x"}},
            usage(4, 30, 16300),
        ),
        result_line("toolu_03", "1\tREADME", False),
        # a sub-agent's line: skipped
        assistant("msg_01S", bash("toolu_09", "notes list"), usage(9, 9), parent="toolu_03"),
        assistant(
            "msg_01D", bash("toolu_04", "notes add standup && notes list"), usage(2, 35, 16400)
        ),
        result_line("toolu_04", [{"type": "text", "text": "1 note\n"}], False),
        assistant(
            "msg_01E",
            {"type": "text", "text": "Added the standup note."},
            usage(1, 20, 16500),
            stop="end_turn",
        ),
        finished(),
    ]


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_a_session_becomes_one_task_with_its_llm_and_bash_calls(tmp_path):
    path = write(tmp_path / "capture.jsonl", session_lines())
    [(meta, [record])] = read_claude_code([path], target="notes")
    assert (meta.provider, meta.model, meta.source) == ("anthropic", SONNET, "claude-code")
    assert meta.sandbox_version == "2.0.14"
    assert (record.task.id, record.task.prompt) == ("capture", PROMPT_MISSING)
    trace = record.trace
    # input_tokens is the whole prompt: uncached + cache read + cache write.
    assert [
        (
            c.call_number,
            c.input_tokens,
            c.output_tokens,
            c.cache_read_tokens,
            c.cache_write_tokens,
            c.tool_calls_made,
        )
        for c in trace.llm_calls
    ] == [
        (1, 3 + 12000 + 4000, 95, 12000, 4000, 1),
        (2, 5 + 16000 + 300, 40, 16000, 300, 1),
        (3, 4 + 16300, 30, 16300, 0, 1),
        (4, 2 + 16400, 35, 16400, 0, 1),
        (5, 1 + 16500, 20, 16500, 0, 0),
    ]
    inputs = [c.input_tokens for c in trace.llm_calls]
    assert [c.cumulative_input for c in trace.llm_calls] == [
        sum(inputs[: i + 1]) for i in range(len(inputs))
    ]
    assert trace.llm_calls[-1].stop_reason == "end_turn"
    calls = [(t.commands, t.exit_code, t.stdout, t.stderr, t.call_number) for t in trace.tool_calls]
    assert calls == [
        ("notes --help", 0, "usage: notes add|list\n", "", 1),
        ("notes ad standup", 2, "", "notes: unknown command 'ad'", 2),
        ("notes add standup && notes list", 0, "1 note\n", "", 4),
    ]
    assert (trace.turns, trace.natural_stop, trace.duration_ms) == (5, True, 18234.0)
    assert (trace.total_input_tokens, trace.total_output_tokens) == (sum(inputs), 220)
    assert record.error is None
    assert record.extra == {
        "session_id": SESSION,
        "recorded_cost_usd": 0.04213,
        "num_turns": 9,
        "claude_code_version": "2.0.14",
        "log_format": "stream-json",
        "session_input_tokens": 15 + 40000 + 4300,
        "session_output_tokens": 230,
        "command_pattern": default_command_pattern("notes"),
        "exit_codes_inferred": 0,
        "other_tool_calls": 1,
        "sidechain_lines_skipped": 1,
        "duplicate_lines_skipped": 0,
        "synthetic_messages": 0,
    }
    # `notes --help`, `notes ad standup`, `notes add standup`, `notes list`: one failed
    [gate] = record.score.results
    assert (gate.kind, gate.passed, gate.detail) == (
        "no_transcript_errors",
        False,
        "1 of 4 target command(s) failed: `notes ad standup` (exit 2) (exit codes "
        "approximate: a tool call's status charged to each of its commands)",
    )


def test_a_reply_without_usage_leaves_the_running_total_unknown_issue_25_item_5(tmp_path):
    lines = session_lines()
    del lines[4]["message"]["usage"]["input_tokens"]  # msg_01B reports no input count
    [(_, [record])] = read_claude_code([write(tmp_path / "gap.jsonl", lines)], target="notes")
    calls = record.trace.llm_calls
    assert [c.input_tokens is None for c in calls] == [False, True, False, False, False]
    assert [c.cumulative_input for c in calls] == [3 + 12000 + 4000, None, None, None, None]


def test_without_a_target_a_session_has_no_checks(tmp_path):
    path = write(tmp_path / "capture.jsonl", session_lines())
    [(_, [record])] = read_claude_code([path])
    assert record.score.results == [] and record.extra["command_pattern"] is None


def test_without_a_target_a_session_has_no_verdict(tmp_path):
    """Found by the differential tests (issue 25, "each import"): a session read without
    ``--target`` had ``passed`` True (every one of its no checks passed), a verdict nothing
    gave; it is null and counted unscored, as a sample no scorer scored is."""
    path = write(tmp_path / "capture.jsonl", session_lines())
    [folder] = import_format("claude-code", [path], tmp_path / "runs", {})
    assert read_run_folder(folder).tasks.get_column("passed").to_list() == [None]


@pytest.mark.parametrize(
    ("ending", "natural_stop", "error"),
    [
        ([finished("error_max_turns", True)], False, None),
        (
            [finished("error_during_execution", True)],
            False,
            "claude code ended with error_during_execution: Added the standup note.",
        ),
        # no result line: how the session ended is unknown (natural_stop None)
        ([], None, "no result line: the session did not finish (killed or crashed?)"),
    ],
)
def test_how_a_session_ended(tmp_path, ending, natural_stop, error):
    lines = [init(), assistant("msg_01A", bash("toolu_01", "notes list"), usage(3, 9)), *ending]
    path = write(tmp_path / "s.jsonl", lines)
    [(_, [record])] = read_claude_code([path], target="notes")
    assert (record.trace.natural_stop, record.error) == (natural_stop, error)
    [call] = record.trace.tool_calls  # its result never arrived
    assert (call.exit_code, call.stderr) == (NO_RESULT, "(no tool result in the file)")
    assert record.extra["exit_codes_inferred"] == 1


def test_an_error_result_without_an_exit_code_is_inferred_as_1(tmp_path):
    lines = [
        init(),
        assistant("msg_01A", bash("toolu_01", "notes sync"), usage(3, 9)),
        result_line("toolu_01", "Command timed out after 2m 0.0s", True),
        finished(),
    ]
    [(_, [record])] = read_claude_code([write(tmp_path / "s.jsonl", lines)])
    [call] = record.trace.tool_calls
    assert (call.exit_code, call.stderr) == (1, "Command timed out after 2m 0.0s")
    assert record.extra["exit_codes_inferred"] == 1


def test_sessions_are_grouped_into_one_run_per_model_and_written_as_run_folders(tmp_path):
    a = write(tmp_path / "a.jsonl", session_lines())
    b = write(tmp_path / "b.jsonl", [init(session="other"), finished()])
    c = write(tmp_path / "c.jsonl", [init(model="claude-haiku-4-5", session="third"), finished()])
    folders = import_format("claude-code", [a, b, c], tmp_path / "runs", {"target": "notes"})
    runs = Runs.concat([read_run_folder(f) for f in folders])
    assert runs.tasks.group_by("model").agg(pl.col("task_id").sort()).sort("model").rows() == [
        ("claude-haiku-4-5", ["c"]),
        (SONNET, ["a", "b"]),
    ]
    assert runs.tool_calls.height == 3
    assert runs.tasks.filter(pl.col("task_id") == "a")["recorded_cost_usd"].to_list() == [0.04213]
    with pytest.raises(InputError, match="run folder already exists"):
        import_format("claude-code", [c], tmp_path / "runs")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"type": "system"}\n{"type": "assistant", "message": ', "s.jsonl:2: invalid JSON"),
        ('{"type": "system"}\n[1, 2]\n', "s.jsonl:2: a line must be a JSON object"),
        ('{"type": "assistant"}\n', "s.jsonl:1: assistant: unexpected shape: KeyError('message')"),
    ],
)
def test_bad_lines_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "s.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        read_claude_code([path])
    assert str(exc.value).startswith(f"{tmp_path}/{message}")


def test_a_line_naming_a_key_twice_is_bad_input_naming_the_file_line_and_key(tmp_path, capsys):
    lines = [json.dumps(x) for x in session_lines()]
    lines[1] = lines[1].replace('{"type": "assistant"', '{"type": "user", "type": "assistant"', 1)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines))
    out = tmp_path / "runs"
    assert main(["import", "claude-code", str(path), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{path}:2: type: duplicate key in one object")
    assert not out.exists()
    array = tmp_path / "a.json"  # --output-format json: one array, so no line to name
    array.write_text('[{"type": "system", "subtype": "init", "subtype": "x"}]')
    with pytest.raises(InputError, match=f"^{array}: subtype: duplicate key in one object$"):
        read_claude_code([array])


# --- plain transcripts ----------------------------------------------------------------

TRANSCRIPT = """\
I'll start by checking the tool.
$ notes --help
usage: notes add|list
$ notes ad standup
error: unknown command 'ad'
$ notes add standup
Added note 1.
Exit code: 0
> notes list --format json
[{"title": "standup"}]
exit status 3
"""


def test_a_transcript_is_read_with_the_command_pattern_and_approximate_exit_codes(tmp_path):
    path = tmp_path / "session1.txt"
    path.write_text(TRANSCRIPT)
    meta, [record] = read_transcripts([path], "notes", model="gpt-x")
    assert (meta.model, meta.source, meta.settings.exit_codes.split(":")[0]) == (
        "gpt-x",
        "transcript",
        "approximate",
    )
    assert [(c.commands, c.exit_code) for c in record.trace.tool_calls] == [
        ("notes --help", 0),
        ("notes ad standup", 1),  # an `error:` line
        ("notes add standup", 0),  # `Exit code: 0`
        ("notes list --format json", 3),  # `exit status 3`
    ]
    assert record.trace.tool_calls[3].stdout == '[{"title": "standup"}]\nexit status 3\n'
    assert record.trace.messages[0].content[0].text == "I'll start by checking the tool."
    assert record.extra["exit_codes"] == "approximate"
    assert record.score.results[0].detail == (
        "2 of 4 target command(s) failed: `notes ad standup` (exit 1), "
        "`notes list --format json` (exit 3)"
    )


def test_prompt_lines_are_the_commands_so_output_naming_the_tool_is_not_one(tmp_path):
    path = tmp_path / "session1.txt"
    path.write_text("$ notes add x\nnotes: saved\n$ ls\nnotes.txt\n")
    _, [record] = read_transcripts([path], "notes")
    assert [c.commands for c in record.trace.tool_calls] == ["notes add x", "ls"]


PLAIN = """\
Running notes ad standup now.
error: unknown command 'ad'
Then notes add standup
Added.
And notes --help for the list syntax.
"""


def test_without_prompts_the_importer_agrees_with_the_interaction_fallback(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text(PLAIN)
    meta, records = read_transcripts([path], "notes")
    pattern = default_command_pattern("notes")
    from_records = interaction(Runs(**tables_from_records(meta, records)), pattern)
    from_text = interaction_from_transcript(PLAIN, pattern)
    columns = ["total_commands", "unique_commands", "error_count", "help_invocations"]
    assert from_records.select(columns).row(0) == from_text.select(columns).row(0) == (3, 3, 1, 1)


def test_transcripts_are_written_as_one_run_folder(tmp_path):
    (tmp_path / "a.txt").write_text(TRANSCRIPT)
    (tmp_path / "b.txt").write_text("$ notes list\n")
    [folder] = import_format(
        "transcript",
        [tmp_path / "a.txt", tmp_path / "b.txt"],
        tmp_path / "runs",
        {"target": "notes"},
    )
    runs = read_run_folder(folder)
    assert runs.tasks.select("task_id", "passed").sort("task_id").rows() == [
        ("a", False),
        ("b", True),
    ]
