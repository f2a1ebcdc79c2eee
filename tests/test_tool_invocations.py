"""Spec 002 structured events: every run of the tool under test, with its own exit code.

Each case of issue 14 is reproduced here against the real ``notes`` tool, as a bashkit
builtin and as the real executable in the local sandbox. Expected values are worked out
by hand from the commands in each test.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import nullcontext
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.interaction import command_rows, interaction
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._formats.scenario import load_scenario
from evalnb._resources import data_path
from evalnb._runtime.runner import run_cases
from evalnb._runtime.sandbox import local
from evalnb._runtime.sandbox.local import LocalSandbox
from evalnb._runtime.scenario_case import load_scenario_cases
from evalnb._scoring.commands import target_commands
from evalnb._store.command_counts import COUNTS
from evalnb._store.tables import TABLES
from evalnb.errors import InputError
from evalnb.records.rust_regex import compile_pattern
from evalnb.records.scenario import default_command_pattern
from tests.confinement import CONFINED

NOTES = data_path("tools", "notes")
PATTERN = compile_pattern(default_command_pattern("notes"))

SCENARIO = """\
name: notes_events
category: events
target:
  binary: notes
  {mode}
task: Initialise a notes store.
gates:
  - {{type: command_succeeds, command: notes list}}
  - {{type: no_transcript_errors}}
run: {{max_turns: 3, timeout: 20}}
"""
BUILTIN = f"builtin: {NOTES / 'notes.py'}:bashkit_builtin"
LOCAL = f"mode: local\n  path: {NOTES / 'bin'}"
EXE = NOTES / "bin" / "notes"


def runs_of(box: LocalSandbox, commands: str):
    result = asyncio.run(box.exec(commands))
    return result, [(i.argv, i.exit_code) for i in result.invocations]


def run_scenario(tmp_path: Path, mode: str, commands: list[str], turns=None, epochs=1):
    """Run the scenario with a scripted agent issuing ``commands`` (one tool call each),
    or the scripted ``turns`` when given."""
    (tmp_path / "s.yaml").write_text(SCENARIO.format(mode=mode))
    script = tmp_path / "agents" / "agent.yaml"
    script.parent.mkdir()
    script.write_text(json.dumps({"turns": turns or [{"commands": commands}]}))
    cases = load_scenario_cases(tmp_path / "s.yaml")
    [folder] = asyncio.run(
        run_cases(cases, [f"scripted:{script}"], tmp_path / "runs", progress=False, epochs=epochs)
    )
    return read_run_folder(folder)


# --- command identification by the parser ------------------------------------------


def commands(script: str) -> list[tuple[str, str | None]]:
    return [(c.command, c.subcommand) for c in target_commands(script, PATTERN)]


def test_the_target_is_matched_by_its_basename():
    assert commands("./notes add; /x/bin/notes show n1; notes list") == [
        ("notes add", "add"),
        ("notes show n1", "show"),
        ("notes list", "list"),
    ]


def test_quotes_heredocs_and_comments_are_not_commands():
    script = "echo 'notes rm n1' # notes delete n2\ncat <<EOF\nnotes doctor\nEOF\nnotes list"
    assert commands(script) == [("notes list", "list")]


def test_looking_the_tool_up_is_not_running_it():
    assert commands("command -v notes; which notes; type notes") == []
    assert commands("command notes list; exec notes doctor") == [
        ("notes list", "list"),
        ("notes doctor", "doctor"),
    ]


def test_env_nohup_and_runner_options_run_the_command_they_name():
    script = (
        "env -i A=1 notes list; nohup notes show n1; command -p notes add x; exec -a x notes doctor"
    )
    assert commands(script) == [
        ("notes list", "list"),
        ("notes show n1", "show"),
        ("notes add x", "add"),
        ("notes doctor", "doctor"),
    ]
    # env alone prints the environment, so env itself is the command (bash tasks)
    assert [c.command for c in target_commands("env; env A=1 ls -l; env -S 'x y'")] == [
        "env",
        "ls -l",
        "env -S 'x y'",
    ]


def test_a_command_substitution_gives_the_inner_command():
    assert commands("x=$(notes list)") == [("notes list", "list")]


def test_the_users_pattern_picks_the_subcommand_from_the_argv():
    pattern = compile_pattern(r"notes\s+(?:--\S+\s+)*(\w+)")
    found = target_commands("/opt/notes --quiet show n1", pattern)
    assert [(c.command, c.subcommand) for c in found] == [("notes --quiet show n1", "show")]


def test_dash_h_is_help_only_for_commands_whose_dash_h_means_help():
    found = target_commands("df -h; sort -h f; ls -h; jq -h; notes -h; notes --help; notes help")
    assert [(c.command, c.is_help) for c in found] == [
        ("df -h", False),
        ("sort -h f", False),
        ("ls -h", False),
        ("jq -h", True),
        ("notes -h", False),
        ("notes --help", True),
        ("notes help", True),
    ]


# --- recorded invocations: builtin mode ----------------------------------------------


def test_builtin_mode_records_each_invocation_with_its_own_exit_code(tmp_path):
    runs = run_scenario(
        tmp_path,
        BUILTIN,
        ["notes init", "notes shw n1 ; echo recovered", "notes list; cat missing.txt"],
    )
    inv = runs.tool_invocations.sort("call_index", "invocation_index")
    # call 0: init ok; call 1: `shw` is an invalid choice (usage error, 2) though the call
    # exits 0; call 2: list ok (8 bytes: "0 notes\n") though `cat` makes the call exit 1
    assert inv.select("call_index", "argv", "exit_code").rows() == [
        (0, ["notes", "init"], 0),
        (1, ["notes", "shw", "n1"], 2),
        (2, ["notes", "list"], 0),
    ]
    assert inv.get_column("stdout_bytes").to_list()[2] == len("0 notes\n")
    assert runs.tool_calls.get_column("exit_code").to_list() == [0, 0, 1]
    rows = command_rows(runs, PATTERN)
    assert rows.select("command", "exit_code", "source", "exit_code_approximate").rows() == [
        ("notes init", 0, "events", False),
        ("notes shw n1", 2, "events", False),
        ("notes list", 0, "events", False),
    ]
    metrics = interaction(runs, PATTERN).row(0, named=True)
    assert (metrics["total_commands"], metrics["error_count"]) == (3, 1)
    gate = runs.checks.filter(kind="no_transcript_errors").row(0, named=True)
    assert (gate["passed"], gate["detail"]) == (
        False,
        "1 of 3 target command(s) failed: `notes shw n1` (exit 2)",
    )
    assert runs.tasks.get_column("outcome").to_list() == ["fail"]


# --- recorded invocations: local mode -----------------------------------------------


def test_local_mode_records_absolute_path_calls_of_the_real_executable(tmp_path):
    exe = NOTES / "bin" / "notes"
    runs = run_scenario(
        tmp_path,
        LOCAL,
        ["notes init", f"{exe} show n9; echo done", "command -v notes; x=$(notes list)"],
    )
    inv = runs.tool_invocations.sort("call_index", "invocation_index")
    # n9 does not exist: exit 1; `command -v` only looks notes up, so call 2 ran it once
    assert inv.select("call_index", "argv", "exit_code").rows() == [
        (0, ["notes", "init"], 0),
        (1, ["notes", "show", "n9"], 1),
        (2, ["notes", "list"], 0),
    ]
    assert runs.tool_calls.get_column("exit_code").to_list() == [0, 0, 0]
    gate = runs.checks.filter(kind="no_transcript_errors").row(0, named=True)
    assert (gate["passed"], gate["detail"]) == (
        False,
        "1 of 3 target command(s) failed: `notes show n9` (exit 1)",
    )
    assert runs.tasks.get_column("outcome").to_list() == ["fail"]


def test_the_wrapper_passes_output_stdin_and_exit_codes_through(tmp_path):
    box = LocalSandbox(path_dirs=[NOTES / "bin"], record="notes")
    try:
        first = asyncio.run(box.exec("notes init >/dev/null; notes show n1 2>&1; echo $?"))
        piped = asyncio.run(box.exec("notes list | wc -c; notes --version"))
    finally:
        box.close()
    assert first.stdout == "error: no note with id 'n1' (see `notes list`)\n1\n"
    assert [(i.argv, i.exit_code) for i in first.invocations] == [
        (["notes", "init"], 0),
        (["notes", "show", "n1"], 1),
    ]
    assert first.invocations[1].stderr_bytes == len(first.stdout) - len("1\n")
    assert piped.stdout == "8\nnotes 1.0.0\n"
    assert [i.invocation_index for i in piped.invocations] == [0, 1]
    assert all(i.duration_ms is not None and i.duration_ms > 0 for i in piped.invocations)


def test_a_killed_invocation_has_no_exit_code_and_counts_as_failed(tmp_path):
    slow = tmp_path / "bin" / "slow"
    slow.parent.mkdir()
    slow.write_text("#!/usr/bin/env bash\nsleep 30\n")
    slow.chmod(0o755)
    tmp_path.chmod(0o755)  # confined commands run as an unprivileged user: tools must be readable
    box = LocalSandbox(path_dirs=[slow.parent], record="slow", timeout_s=2)
    try:
        result = asyncio.run(box.exec("slow"))
    finally:
        box.close()
    assert result.timed_out
    assert [(i.argv, i.exit_code) for i in result.invocations] == [(["slow"], None)]


def test_bash_tasks_and_imports_record_no_invocations():
    from evalnb._runtime.sandbox.bashkit import BashkitSandbox

    result = asyncio.run(BashkitSandbox().exec("echo hi"))
    assert result.invocations is None


@pytest.mark.parametrize("mode", ["builtin", "local"])
def test_invocations_survive_the_run_folder(tmp_path, mode):
    runs = run_scenario(tmp_path, BUILTIN if mode == "builtin" else LOCAL, ["notes --version"])
    assert runs.tool_invocations.select("argv", "exit_code").rows() == [(["notes", "--version"], 0)]
    assert runs.tool_calls.get_column("invocations_recorded").to_list() == [True]


# --- local mode: every path to the executable reaches the recording wrapper -------------


def test_confined_local_mode_records_relative_paths_command_env_and_exec(confined):
    box = LocalSandbox(path_dirs=[EXE.parent], record="notes")
    assert box.confinement == confined
    rel = os.path.relpath(EXE, box.workdir)  # ../../<...>/notes/bin/notes, from the workspace
    try:
        assert runs_of(box, "notes init")[1] == [(["notes", "init"], 0)]
        # `shw` is not a subcommand: argparse's usage error, exit 2; n9 does not exist: 1
        result, runs = runs_of(box, f"{rel} shw; cd {EXE.parent} && ./notes --version")
        assert result.stdout == "notes 1.0.0\n"
        assert runs == [(["notes", "shw"], 2), (["notes", "--version"], 0)]
        result, runs = runs_of(box, f"command {EXE} list; env {EXE} show n9; exec {EXE} list")
        assert result.stdout == "0 notes\n0 notes\n"  # the store is empty
        assert runs == [
            (["notes", "list"], 0),
            (["notes", "show", "n9"], 1),
            (["notes", "list"], 0),
        ]
        # a symlink, xargs, find -exec and a script all end at the same file
        script = f"ln -s {EXE} mine && ./mine list >/dev/null; echo list | xargs notes; "
        script += f"find . -maxdepth 0 -exec {EXE} show n1 \\; ; printf 'notes list\\n' | sh"
        assert runs_of(box, script)[1] == [
            (["notes", "list"], 0),
            (["notes", "list"], 0),
            (["notes", "show", "n1"], 1),
            (["notes", "list"], 0),
        ]
    finally:
        box.close()


def test_confined_which_notes_shows_the_real_path_and_runs_nothing(confined):
    box = LocalSandbox(path_dirs=[EXE.parent], record="notes")
    try:
        result, runs = runs_of(box, "which notes; command -v notes; type -P notes")
    finally:
        box.close()
    assert result.stdout == f"{EXE}\n" * 3
    assert runs == []


def test_a_copy_of_the_tool_among_the_workspace_files_is_recorded_once_executable(confined):
    files = {"tool/bin/notes": EXE.read_text(), "tool/notes.py": (NOTES / "notes.py").read_text()}
    box = LocalSandbox(files, record="notes")  # not on PATH: only the workspace copy
    try:
        assert runs_of(box, "tool/bin/notes --version")[1] == []  # written 0644: not run
        assert runs_of(box, "chmod +x tool/bin/notes")[1] == []
        result, runs = runs_of(box, "tool/bin/notes init >/dev/null; cd tool/bin && ./notes list")
        # `init` made the store in the workspace; tool/bin has none: exit 1
        assert runs == [(["notes", "init"], 0), (["notes", "list"], 1)]
        assert "no notes store here" in result.stderr
        result, _ = runs_of(box, "rm tool/bin/notes")
        assert result.exit_code == 1 and "busy" in result.stderr  # a wrapped copy stays
    finally:
        box.close()


def test_unconfined_local_mode_records_names_and_absolute_paths_from_bash_only():
    with pytest.warns(UserWarning) if local.confinement() == "none" else nullcontext():
        box = LocalSandbox(path_dirs=[EXE.parent], record="notes", confine=False)
    try:
        assert box.confinement == "none"
        runs_of(box, "notes init")
        script = f"env notes list; {EXE} show n9; (cd {EXE.parent} && ./notes list); "
        script += f"command {EXE} list; env {EXE} list"
        result, runs = runs_of(box, script)
    finally:
        box.close()
    # the relative path and `command`/`env` with a path bypass the wrapper (documented);
    # ./notes ran in bin/, which has no store (exit 1), unrecorded
    assert runs == [(["notes", "list"], 0), (["notes", "show", "n9"], 1)]
    assert result.stdout == "0 notes\n0 notes\n0 notes\n"


def test_a_failing_relative_path_call_fails_the_outcome_in_local_mode(tmp_path, confined):
    runs = run_scenario(tmp_path, LOCAL, ["notes init", f"cd {EXE.parent} && ./notes show n1"])
    inv = runs.tool_invocations.sort("call_index", "invocation_index")
    # in bin/ there is no store: `show` exits 1, and so does the call
    assert inv.select("call_index", "argv", "exit_code").rows() == [
        (0, ["notes", "init"], 0),
        (1, ["notes", "show", "n1"], 1),
    ]
    gate = runs.checks.filter(kind="no_transcript_errors").row(0, named=True)
    assert (gate["passed"], gate["detail"]) == (
        False,
        "1 of 2 target command(s) failed: `notes show n1` (exit 1)",
    )
    assert runs.tasks.get_column("outcome").to_list() == ["fail"]


# --- substitutions, heredocs, comments and lookups in both modes ------------------------


@pytest.mark.parametrize("mode", ["builtin", *(f"local-{m}" for m in [*CONFINED, "none"])])
def test_only_real_runs_count_substitutions_heredocs_comments_lookups(tmp_path, mode, monkeypatch):
    if mode.startswith("local-"):
        monkeypatch.setattr(local, "confinement", lambda: mode.removeprefix("local-"))
    commands = [
        "notes init",
        'x=$(notes list); echo "$x" # notes rm n1',
        "cat <<EOF\nnotes doctor\nEOF\nwhich notes; command -v notes; echo 'notes shw'",
        "notes shw n1",
    ]
    runs = run_scenario(tmp_path, BUILTIN if mode == "builtin" else LOCAL, commands)
    inv = runs.tool_invocations.sort("call_index", "invocation_index")
    # call 2 only prints and looks notes up; `shw` is an invalid choice (exit 2)
    assert inv.select("call_index", "argv", "exit_code").rows() == [
        (0, ["notes", "init"], 0),
        (1, ["notes", "list"], 0),
        (3, ["notes", "shw", "n1"], 2),
    ]
    assert runs.tool_calls.get_column("stdout").to_list()[1] == "0 notes\n"
    rows = command_rows(runs, PATTERN)
    assert rows.select("call_index", "command", "subcommand").rows() == [
        (0, "notes init", "init"),
        (1, "notes list", "list"),
        (3, "notes shw n1", "shw"),
    ]
    metrics = interaction(runs, PATTERN).row(0, named=True)
    assert (metrics["total_commands"], metrics["error_count"], metrics["help_invocations"]) == (
        3,
        1,
        0,
    )


# --- help-seeking: the scenario says whether its tool's -h means help -------------------


@pytest.mark.parametrize("short_help", [True, False])
def test_the_scenario_says_whether_its_tools_dash_h_is_help_seeking(tmp_path, short_help):
    mode = f"short_help: {str(short_help).lower()}\n  {BUILTIN}"
    runs = run_scenario(
        tmp_path, mode, ["notes -h | head -1", "notes --help >/dev/null", "notes init"]
    )
    assert runs.tool_calls.get_column("stdout").to_list()[0].startswith("usage: notes")
    assert runs.tasks.get_column("short_help_tool").to_list() == ["notes" if short_help else None]
    helps = command_rows(runs, PATTERN).select("command", "is_help").rows()
    # --help always; -h only when the scenario says notes treats it as help
    assert helps == [("notes -h", short_help), ("notes --help", True), ("notes init", False)]
    metrics = interaction(runs, PATTERN).row(0, named=True)
    assert metrics["help_invocations"] == (2 if short_help else 1)
    per_sub = interaction(runs, PATTERN, by="subcommand").select("subcommand", "help_invocations")
    assert dict(per_sub.rows())["-h"] == (1 if short_help else 0)


@pytest.mark.parametrize("short_help", [True, False])
def test_the_run_folder_stores_the_counts_that_interaction_counts(tmp_path, short_help):
    mode = f"short_help: {str(short_help).lower()}\n  {BUILTIN}"
    script = ["notes -h | head -1", "notes show n9; ls -h", "notes show n9", "notes init && cat x"]
    runs = run_scenario(tmp_path, mode, script)
    stored = runs.tasks.select(COUNTS)
    assert stored.null_count().sum_horizontal().item() == 0
    unstored = Runs(
        runs.runs,
        runs.tasks.with_columns(pl.lit(None, dtype=pl.Int64).alias(c) for c in COUNTS),
        *(runs.source(name) for name in TABLES[2:]),
    )
    counted = interaction(unstored).select(COUNTS)  # from the tool calls and invocations
    assert stored.equals(counted)
    assert interaction(runs).select(COUNTS).equals(counted)  # read from the tasks table
    row = counted.row(0, named=True)
    assert (row["error_count"], row["retry_count"]) == (2, 1)  # notes show n9, twice
    assert row["help_invocations"] == (1 if short_help else 0)


def test_attempts_of_one_run_do_not_interleave_issue_25_item_1(tmp_path):
    """A command repeated in a later call of the same attempt is a repeat, in every
    attempt of a run with several (issue 25 item 1: the attempts' rows were ordered by
    call only, so each attempt's later calls counted as new commands)."""
    turns = [{"commands": ["notes show n9"]}, {"commands": ["notes show n9"]}, {"text": "Done."}]
    runs = run_scenario(tmp_path, BUILTIN, [], turns=turns, epochs=2)
    counted = interaction(runs, PATTERN).sort("epoch")  # from the invocations
    stored = interaction(runs).sort("epoch")  # the counts the run folder stored
    for metrics in (counted, stored):
        counts = metrics.select("epoch", "total_commands", "unique_commands", "retry_count")
        assert counts.rows() == [(1, 2, 1, 1), (2, 2, 1, 1)]
        assert metrics.get_column("retry_rate").to_list() == [0.5, 0.5]
        assert metrics.get_column("iteration_ratio").to_list() == [0.5, 0.5]


def test_short_help_must_be_a_boolean(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ntarget: {binary: notes, short_help: sometimes}\ntask: t\n")
    with pytest.raises(InputError) as err:
        load_scenario(path)
    assert (err.value.line, err.value.field) == (2, "target.short_help")


def test_a_tool_that_is_evalnbs_own_python_is_still_run_and_recorded(confined):
    # the wrappers run on this Python: mounting one over it would leave nothing to run them
    python = Path(os.path.realpath(sys.executable))
    box = LocalSandbox(path_dirs=[python.parent], record=python.name)
    try:
        result, runs = runs_of(box, f"{python.name} -c 'print(6 * 7)'")
    finally:
        box.close()
    assert (result.stdout, result.exit_code) == ("42\n", 0)
    assert runs == [([python.name, "-c", "print(6 * 7)"], 0)]
