"""Spec 002 layer 1 interaction metrics, pinned on hand-built traces.

Every expected number below is counted by hand from the trace built in the test.
"""

from __future__ import annotations

import importlib

import polars as pl
import pytest

from evalnb._analysis.interaction import command_rows, interaction, interaction_from_transcript
from evalnb._analysis.runs import Runs
from evalnb._scoring.commands import pattern_matches, target_commands
from evalnb._store.tables import TABLES
from evalnb.records import AgentTrace, Task, TaskRecord, TaskScore, ToolCallResult
from evalnb.records.rust_regex import compile_pattern
from evalnb.records.scenario import default_command_pattern
from tests.factories import run_of

NOTES = r"notes\s+(\S+)"
# the module itself (the package re-exports the function `interaction` under the same name)
command_counts_module = importlib.import_module("evalnb._store.command_counts")


def record(
    task_id: str,
    calls: list[tuple[str, int]],
    *,
    epoch: int = 1,
    natural_stop: bool = True,
    error: str | None = None,
) -> TaskRecord:
    """A task attempt whose tool calls are ``(commands, exit_code)`` in order."""
    tool_calls = [
        ToolCallResult(commands=c, exit_code=code, call_index=i, call_number=i + 1)
        for i, (c, code) in enumerate(calls)
    ]
    return TaskRecord(
        task=Task(id=task_id, category="cat", prompt="p"),
        epoch=epoch,
        trace=AgentTrace(tool_calls=tool_calls, natural_stop=natural_stop),
        score=TaskScore(task_id=task_id),
        error=error,
    )


def make_runs(*runs: tuple[str, list[TaskRecord]]) -> Runs:
    """Runs from ``(run_id, records)`` pairs; the model is named after the run."""
    return Runs.concat([run_of(recs, rid, f"m-{rid}") for rid, recs in runs])


def only_task(frame: pl.DataFrame) -> dict:
    assert frame.height == 1
    return frame.row(0, named=True)


# --- command identification (bash mode) ---------------------------------------------


def test_each_simple_command_of_a_call_is_a_row_sharing_the_calls_exit_code():
    runs = make_runs(("r", [record("t", [("cat a.txt | grep -c foo && echo done", 1), ("ls", 0)])]))
    rows = command_rows(runs)
    assert rows.select("call_index", "command", "subcommand", "exit_code").rows() == [
        (0, "cat a.txt", "cat", 1),
        (0, "grep -c foo", "grep", 1),
        (0, "echo done", "echo", 1),
        (1, "ls", "ls", 0),
    ]
    # three target commands in call 0 share one exit code; call 1 has a single command
    assert rows.get_column("exit_code_approximate").to_list() == [True, True, True, False]
    assert rows.get_column("command_index").to_list() == [0, 1, 2, 0]


def test_command_text_is_rebuilt_from_parsed_words():
    script = 'x=1; grep  -c   "a  b" f.txt; echo "$HOME"; $(which jq) . f.json'
    rows = command_rows(make_runs(("r", [record("t", [(script, 0)])])))
    # the assignment and the command with a dynamic name are skipped; `which` inside
    # the substitution is a command of its own
    assert rows.get_column("command").to_list() == [
        "grep -c 'a  b' f.txt",
        "echo <expr>",
        "which jq",
    ]


def test_a_call_that_does_not_parse_is_one_command():
    rows = command_rows(make_runs(("r", [record("t", [('echo   "unterminated', 2)])])))
    assert rows.select("command", "subcommand", "exit_code_approximate").rows() == [
        ('echo "unterminated', "echo", False)
    ]


def test_help_invocations():
    # -h is help only for commands whose -h means help (SHORT_HELP): jq yes, tar/df/sort/ls no
    script = "jq --help; tar -h; git help commit; help cd; jq -r .a f; jq -h; df -h; sort -h f"
    runs = make_runs(("r", [record("t", [(script, 0)])]))
    rows = command_rows(runs)
    assert dict(rows.select("command", "is_help").iter_rows()) == {
        "jq --help": True,
        "tar -h": False,
        "git help commit": True,
        "help cd": True,
        "jq -r .a f": False,
        "jq -h": True,
        "df -h": False,
        "sort -h f": False,
    }
    assert only_task(interaction(runs))["help_invocations"] == 4


def test_rows_follow_call_order_not_table_order():
    runs = make_runs(("r", [record("t", [("false", 1), ("false", 0)])]))
    shuffled = Runs(
        **{name: runs.frame(name) for name in TABLES if name != "tool_calls"},
        tool_calls=runs.tool_calls.reverse(),
    )
    # executed: fail then ok -> the second execution is a retry, whatever the row order
    assert command_rows(shuffled).select("call_index", "is_retry").rows() == [
        (0, False),
        (1, True),
    ]


def test_each_distinct_script_is_parsed_once(monkeypatch):
    """Plain scripts are split all together, the others by bashkit's parser, one by one;
    either way a script seen again (in another run) is not parsed again."""
    seen: list[str] = []
    parse, split = (
        command_counts_module.target_commands,
        command_counts_module.plain_target_commands,
    )

    def parsing(script, regex=None):
        seen.append(script)
        return parse(script, regex)

    def splitting(scripts):
        seen.extend(scripts.to_list())
        return split(scripts)

    monkeypatch.setattr(command_counts_module, "target_commands", parsing)
    monkeypatch.setattr(command_counts_module, "plain_target_commands", splitting)
    same = [("ls /data", 0), ("ls $(pwd)", 0), ("ls /data", 0), ("ls $(pwd)", 0)]
    command_rows(make_runs(("a", [record("t", same)]), ("b", [record("t", same)])))
    assert seen == ["ls /data", "ls $(pwd)", "ls $(pwd)"]  # split, then parsed: not plain


# --- metrics per task attempt ----------------------------------------------------------


def test_retries_first_try_successes_and_rates():
    # A fails, A fails, A succeeds, A succeeds, B succeeds, B succeeds
    calls = [("cat a", 1), ("cat a", 1), ("cat a", 0), ("cat a", 0), ("ls", 0), ("ls", 0)]
    row = only_task(interaction(make_runs(("r", [record("t", calls)]))))
    assert row["total_commands"] == 6
    assert row["unique_commands"] == 2
    assert row["error_count"] == 2
    # executions 2 and 3 of A follow a failed execution; execution 4 follows a success
    assert row["retry_count"] == 2
    # A's first execution failed, B's succeeded
    assert row["first_try_successes"] == 1
    assert row["error_rate"] == pytest.approx(2 / 6)
    assert row["retry_rate"] == pytest.approx((6 - 2) / 6)
    assert row["first_try_success_rate"] == pytest.approx(1 / 6)
    assert row["iteration_ratio"] == pytest.approx(2 / 6)
    assert row["help_invocations"] == 0


def test_a_command_repeated_after_success_is_not_a_retry():
    row = only_task(interaction(make_runs(("r", [record("t", [("ls", 0), ("ls", 0)])]))))
    assert row["retry_count"] == 0
    # spec 002's retry rate counts every repetition: (2 - 1) / 2
    assert row["retry_rate"] == 0.5
    # one distinct command succeeded at once, over 2 commands (spec 002's denominator)
    assert row["first_try_successes"] == 1
    assert row["first_try_success_rate"] == 0.5


def test_retries_do_not_cross_task_attempts():
    runs = make_runs(
        ("r", [record("t", [("cat x", 1)]), record("t", [("cat x", 0)], epoch=2)]),
    )
    assert interaction(runs).select("epoch", "retry_count", "first_try_successes").rows() == [
        (1, 0, 0),
        (2, 0, 1),
    ]


def test_zero_commands_give_zero_counts_and_null_rates():
    runs = make_runs(("r", [record("none", []), record("assign", [("x=1; y=2", 0)])]))
    frame = interaction(runs)
    assert frame.get_column("task_id").to_list() == ["none", "assign"]
    assert frame.get_column("total_commands").to_list() == [0, 0]
    for rate in ("error_rate", "retry_rate", "first_try_success_rate", "iteration_ratio"):
        assert frame.get_column(rate).to_list() == [None, None]


def test_completed_means_natural_stop_without_error():
    runs = make_runs(
        (
            "r",
            [
                record("stopped", [("ls", 0)]),
                record("turn_limit", [("ls", 0)], natural_stop=False),
                record("crashed", [("ls", 0)], error="provider: 500"),
            ],
        )
    )
    assert dict(interaction(runs).select("task_id", "completed").iter_rows()) == {
        "stopped": True,
        "turn_limit": False,
        "crashed": False,
    }


# --- command pattern (spec 002 target.command_pattern) ---------------------------------


def test_pattern_with_capture_group_finds_every_match_in_a_call():
    calls = [("notes add 'a; b' && notes list | head -3", 0), ("notes add x; notes --help", 1)]
    rows = command_rows(make_runs(("r", [record("t", calls)])), NOTES)
    assert rows.select("command", "subcommand", "exit_code", "is_help").rows() == [
        ("notes add 'a; b'", "add", 0, False),
        ("notes list", "list", 0, False),
        ("notes add x", "add", 1, False),
        ("notes --help", "--help", 1, True),
    ]
    assert rows.get_column("exit_code_approximate").to_list() == [True] * 4


def test_pattern_without_capture_group_has_no_subcommand():
    runs = make_runs(("r", [record("t", [("notes add x", 1), ("notes add x", 0)])]))
    rows = command_rows(runs, r"notes\s+\S+")
    assert rows.get_column("subcommand").to_list() == [None, None]
    row = only_task(interaction(runs, r"notes\s+\S+"))
    assert (row["total_commands"], row["error_count"], row["retry_count"]) == (2, 1, 1)
    with pytest.raises(ValueError, match="no capture group"):
        interaction(runs, r"notes\s+\S+", by="subcommand")


def test_non_target_commands_are_ignored_with_a_pattern():
    runs = make_runs(("r", [record("t", [("cd /x && notes init", 0), ("ls -la", 0)])]))
    assert only_task(interaction(runs, NOTES))["total_commands"] == 1


def test_a_command_pattern_is_in_the_rust_dialect_so_lookaround_is_refused():
    runs = make_runs(("r", [record("t", [("notes add x", 0)])]))
    with pytest.raises(ValueError, match=r"^interaction\(\): pattern: invalid regex .*lookahead"):
        interaction(runs, r"notes(?=\s)")
    with pytest.raises(ValueError, match=r"^command_rows\(\): pattern: .*backreference"):
        command_rows(runs, r"(notes) \1")


DEFAULT = compile_pattern(default_command_pattern("notes"))


@pytest.mark.parametrize(
    ("script", "found"),
    [
        ("notes add x;notes list", [("notes add x", "add"), ("notes list", "list")]),
        ("./notes add x", [("notes add x", "add")]),
        ("/x/bin/notes add x", [("notes add x", "add")]),
        ("notes", [("notes", None)]),
        ("my-notes add x; notes.txt; notesx; cat notes.txt", []),
    ],
)
def test_the_default_pattern_in_a_parsed_script(script, found):
    assert [(c.command, c.subcommand) for c in target_commands(script, DEFAULT)] == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("then notes add x;notes list", [(5, "add"), (17, "list")]),
        ("notes;notes", [(0, None), (6, None)]),
        ("notes", [(0, None)]),
        ("é notes rm", [(2, "rm")]),
        ("my-notes add; cat ./notes; /x/bin/notes add; notes.txt; éénotes add", []),
    ],
)
def test_the_default_pattern_in_plain_text_matches_where_a_word_starts(text, found):
    # no lookbehind in the Rust dialect: the boundary before the name is checked in code
    assert list(pattern_matches(text, DEFAULT)) == found


def test_a_script_that_does_not_parse_is_scanned_with_the_same_boundaries():
    script = "my-notes add; notes add x;notes list 'unterminated"
    assert [(c.command, c.subcommand) for c in target_commands(script, DEFAULT)] == [
        ("notes add x", "add"),
        ("notes list 'unterminated", "list"),
    ]


# --- aggregation ------------------------------------------------------------------------


def test_by_run_sums_counts_and_recomputes_rates():
    runs = make_runs(
        (
            "r",
            [
                record("t1", [("cat missing", 1)]),
                record("t2", [("ls", 0), ("pwd", 0), ("date", 0)], natural_stop=False),
            ],
        )
    )
    row = only_task(interaction(runs, by="run"))
    assert (row["tasks"], row["completed_tasks"], row["completion_rate"]) == (2, 1, 0.5)
    assert (row["total_commands"], row["error_count"], row["unique_commands"]) == (4, 1, 4)
    # 1 failure in 4 commands (the mean of the per-task rates would be 0.5)
    assert row["error_rate"] == 0.25
    assert row["first_try_success_rate"] == 0.75


def test_by_subcommand_gives_per_run_per_subcommand_metrics():
    runs = make_runs(
        (
            "r",
            [
                record("t1", [("jq .a f", 5), ("jq .a f", 0)]),
                record("t2", [("jq .b f", 0), ("grep x f", 1)]),
            ],
        ),
        ("s", [record("t1", [("jq .a f", 0)])]),
    )
    frame = interaction(runs, by="subcommand")
    got = {
        (r["run_id"], r["subcommand"]): (
            r["tasks"],
            r["total_commands"],
            r["unique_commands"],
            r["error_count"],
            r["retry_count"],
            r["first_try_successes"],
        )
        for r in frame.iter_rows(named=True)
    }
    assert got == {
        ("r", "jq"): (2, 3, 2, 1, 1, 1),
        ("r", "grep"): (1, 1, 1, 1, 0, 0),
        ("s", "jq"): (1, 1, 1, 0, 0, 1),
    }
    jq = frame.filter(run_id="r", subcommand="jq").row(0, named=True)
    assert jq["error_rate"] == pytest.approx(1 / 3)
    assert jq["retry_rate"] == pytest.approx(1 / 3)


def test_by_must_be_known():
    with pytest.raises(ValueError, match="by must be"):
        interaction(Runs.empty(), by="model")  # type: ignore[arg-type]


# --- transcript fallback ----------------------------------------------------------------


def test_transcript_exit_codes_are_read_from_the_following_lines():
    transcript = "\n".join(
        [
            "$ notes add first",
            "Exit code: 2",
            "$ notes add first",
            "created",
            "$ notes list; notes --help",
            "usage: add | list | show",
            "$ notes show 9",
            "error: no such note",
            "$ notes show 9",
            "exit status 0",
        ]
    )
    row = only_task(interaction_from_transcript(transcript, NOTES))
    # add(2) add(0) list(0) --help(0) show(1) show(0)
    assert row["total_commands"] == 6
    assert row["unique_commands"] == 4
    assert row["error_count"] == 2
    assert row["retry_count"] == 2
    assert row["help_invocations"] == 1
    # list and --help succeeded at once
    assert row["first_try_success_rate"] == pytest.approx(2 / 6)
    assert row["completed"] is None


def test_transcript_without_commands():
    row = only_task(interaction_from_transcript("nothing to see\n", NOTES))
    assert row["total_commands"] == 0
    assert row["error_rate"] is None


# --- real runs (../shared) --------------------------------------------------------------


def test_every_failing_call_of_a_real_run_is_charged_to_its_commands(bashkit_eval_files):
    from evalnb._analysis.load import load

    runs = load(*bashkit_eval_files)
    assert isinstance(runs, Runs)
    rows = command_rows(runs)
    failing_calls = runs.tool_calls.filter(pl.col("exit_code") != 0)
    charged = rows.filter("failed").select("run_id", "task_id", "epoch", "call_index").unique()
    # every failing call in these files holds at least one named simple command
    assert charged.height == failing_calls.height
    per_run = interaction(runs, by="run")
    errors_by_run = dict(per_run.select("run_id", "error_count").iter_rows())
    for run_id, n in rows.filter("failed").group_by("run_id").len().iter_rows():
        assert errors_by_run[run_id] == n


def test_row_order_of_the_tool_calls_table_does_not_change_the_metrics(bashkit_eval_files):
    from evalnb._analysis.load import load

    runs = load(*bashkit_eval_files)
    shuffled = Runs(
        **{name: runs.frame(name) for name in TABLES if name != "tool_calls"},
        tool_calls=runs.tool_calls.sample(fraction=1.0, shuffle=True, seed=3),
    )
    keys = ["run_id", "task_id", "epoch"]
    assert interaction(runs).sort(keys).equals(interaction(shuffled).sort(keys))
    cols = ["run_id", "task_id", "call_index", "command_index", "is_first", "is_retry"]
    assert (
        command_rows(runs)
        .select(cols)
        .sort(cols[:4])
        .equals(command_rows(shuffled).select(cols).sort(cols[:4]))
    )


def test_per_attempt_counts_agree_with_the_flags_of_every_command_row(bashkit_eval_files):
    # interaction() counts straight from the lined-up executions, command_rows() restores
    # the row order to attach the flags: both must tell the same story per attempt
    from evalnb._analysis.load import load

    runs = load(*bashkit_eval_files)
    assert isinstance(runs, Runs)
    keys = ["run_id", "model", "task_id", "epoch"]
    flags = (
        command_rows(runs)
        .group_by(keys)
        .agg(
            total_commands=pl.len(),
            unique_commands=pl.col("is_first").sum(),
            error_count=pl.col("failed").sum(),
            retry_count=pl.col("is_retry").sum(),
            help_invocations=pl.col("is_help").sum(),
            first_try_successes=(pl.col("is_first") & ~pl.col("failed")).sum(),
        )
    )
    counts = list(flags.columns[4:])
    per_task = interaction(runs).filter(pl.col("total_commands") > 0).select(*keys, *counts)
    expected = flags.with_columns(pl.col(counts).cast(pl.Int64))
    assert per_task.height == expected.height > 0
    assert per_task.sort(keys).equals(expected.select(per_task.columns).sort(keys))
    assert per_task.get_column("retry_count").sum() > 0
