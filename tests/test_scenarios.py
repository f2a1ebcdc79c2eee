"""CLI-tool scenarios end to end: YAML validation, workspaces, setup, guidance, scoring,
the spec-002 outcome and composite, and the guidance-version comparison.

Every scenario here drives ``kv``, a tiny key-value tool written by :func:`make_tool`:
the same Python code is a bashkit builtin (``builtin`` mode) and a real executable
(``local`` mode).
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest
from pydantic import ValidationError

import evalnb as en
from evalnb._analysis.guidance import compare_guidance
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._analysis.thresholds import GuidanceThresholds
from evalnb._formats.scenario import load_scenario
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import WORKDIR, load_scenario_cases
from evalnb._store import RunStore
from evalnb._store.tables import tables_from_records
from evalnb.errors import InputError, SetupError
from evalnb.records import (
    AgentTrace,
    RunMeta,
    ScenarioResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)

KV = """
import json, os, sys

STORE = ".kv/store.json"
USAGE = "usage: kv set K V | get K | list --json | whoami | --version\\n"


def run(argv, load, save, env):
    if argv == ["--version"]:
        return "kv 1.0\\n", "", 0
    if argv == ["whoami"]:
        return env.get("KV_AUTHOR", "nobody") + "\\n", "", 0
    data = json.loads(load() or "{}")
    if len(argv) == 3 and argv[0] == "set":
        data[argv[1]] = argv[2]
        save(json.dumps(data))
        return "", "", 0
    if len(argv) == 2 and argv[0] == "get":
        if argv[1] not in data:
            return "", f"kv: no key {argv[1]}\\n", 1
        return data[argv[1]] + "\\n", "", 0
    if argv == ["list", "--json"]:
        return json.dumps(data) + "\\n", "", 0
    return "", USAGE, 2


def bashkit_builtin(ctx):
    import bashkit
    store = f"{ctx.cwd}/{STORE}"

    def load():
        return ctx.fs.read_file(store).decode() if ctx.fs.exists(store) else ""

    def save(text):
        ctx.fs.mkdir(f"{ctx.cwd}/.kv", recursive=True)
        ctx.fs.write_file(store, text.encode())

    out, err, code = run(list(ctx.argv), load, save, dict(ctx.env))
    return bashkit.BuiltinResult(stdout=out, stderr=err, exit_code=code)


def main():
    def load():
        return open(STORE).read() if os.path.exists(STORE) else ""

    def save(text):
        os.makedirs(".kv", exist_ok=True)
        open(STORE, "w").write(text)

    out, err, code = run(sys.argv[1:], load, save, os.environ)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main())
"""

SCENARIO = """\
name: kv_pair
description: Store two keys
category: storage
tags: [kv]
target:
  binary: kv
  command_pattern: "\\\\bkv\\\\s+(\\\\S+)"
  env: {KV_AUTHOR: eval}
  health_check: kv --version
  TARGET_MODE
task: Store a=1 and b=2 with kv, then write the value of a to out.txt.
files: {seed.txt: "seed\\n"}
setup: {commands: ["kv set seed planted"]}
gates:
  - {type: command_json_path, command: "kv list --json", path: "$", assertion: "len == 3"}
  - {type: command_output_contains, command: "kv get a", substring: "1"}
  - {type: file_contains, path: out.txt, substring: "1"}
  - {type: command_output_contains, command: "kv whoami", substring: "eval"}
  - {type: no_transcript_errors}
evaluation:
  composite: {gate_weight: 0.5, judge_weight: 0, interaction_weight: 0.5}
run: {max_turns: 5, timeout: 10}
"""
BUILTIN = "builtin: kv.py:bashkit_builtin"
LOCAL = "mode: local\n  path: bin"

GOOD = {"turns": [{"commands": ["kv set a 1", "kv set b 2", "kv get a > out.txt", "pwd"]}]}
BAD = {"turns": [{"commands": ["kv get a", "kv set a 1", "kv set a 1"]}]}


def make_tool(folder: Path) -> None:
    """``kv.py`` (builtin) and ``bin/kv`` (executable) in ``folder``.

    The confined local sandbox runs commands as ``nobody`` (as root) with no capability:
    the tool's folder must be one others may enter.
    """
    folder.chmod(0o755)
    (folder / "kv.py").write_text(KV)
    (folder / "bin").mkdir(exist_ok=True)
    exe = folder / "bin" / "kv"
    exe.write_text(f'#!/usr/bin/env bash\nexec {sys.executable} {folder / "kv.py"} "$@"\n')
    exe.chmod(0o755)


def write_scenario(folder: Path, mode: str = BUILTIN, text: str = SCENARIO, name="s.yaml") -> Path:
    make_tool(folder)
    path = folder / name
    path.write_text(text.replace("TARGET_MODE", mode))
    return path


def write_script(folder: Path, name: str, script: dict) -> str:
    path = folder / "agents" / name / "agent.yaml"  # the model is named after the file stem
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(script))
    return f"scripted:{path}"


def run_one(cases, model: str, out: Path, **kwargs) -> list[TaskRecord]:
    [folder] = asyncio.run(run_cases(cases, [model], out, progress=False, **kwargs))
    return RunStore.open(folder).records()


# --- loading --------------------------------------------------------------------------


def test_a_scenario_becomes_a_case_with_its_task_turn_limit_and_pattern(tmp_path):
    [case] = load_scenario_cases(write_scenario(tmp_path))
    assert case.task.model_dump(include={"id", "category", "description", "tags", "prompt"}) == {
        "id": "kv_pair",
        "category": "storage",
        "description": "Store two keys",
        "tags": ["kv"],
        "prompt": "Store a=1 and b=2 with kv, then write the value of a to out.txt.",
    }
    assert (case.max_turns, case.sandbox_kind, case.guidance) == (5, "bashkit", None)
    assert case.command_pattern == r"\bkv\s+(\S+)"


def bad(tmp_path: Path, replace: str, by: str) -> str:
    """Load SCENARIO with one edit; return the InputError text, with the folder shortened."""
    path = write_scenario(
        tmp_path, text=SCENARIO.replace("TARGET_MODE", BUILTIN).replace(replace, by)
    )
    with pytest.raises(InputError) as exc:
        load_scenario(path)
    return str(exc.value).replace(str(tmp_path), "DIR")


def test_unknown_keys_are_errors_naming_the_key_and_its_line(tmp_path):
    assert bad(tmp_path, "tags: [kv]", "tags: [kv]\ncolour: red") == (
        "DIR/s.yaml:5: colour: Extra inputs are not permitted"
    )


def test_an_invalid_gate_regex_names_the_gate_and_its_line(tmp_path):
    gate = '  - {type: no_transcript_errors}\n  - {type: file_matches, path: a, pattern: "("}'
    assert bad(tmp_path, "  - {type: no_transcript_errors}", gate).startswith(
        "DIR/s.yaml:20: gates.5.file_matches.pattern: invalid regex '('"
    )


def test_a_command_pattern_with_lookaround_is_refused_naming_file_line_and_field(tmp_path):
    # llm-tool-test matches command_pattern with Rust's regex crate, which has no lookaround
    error = bad(tmp_path, '"\\\\bkv', '"(?<![\\\\w./-])kv')
    assert error == (
        "DIR/s.yaml:7: target.command_pattern: invalid regex '(?<![\\\\w./-])kv\\\\s+(\\\\S+)': "
        "lookbehind (?<!: the Rust regex dialect (bashkit-eval, llm-tool-test) has no lookaround"
    )


def test_a_missing_builtin_file_is_reported_at_its_line(tmp_path):
    assert bad(tmp_path, "kv.py:bashkit", "nope.py:bashkit") == (
        "DIR/s.yaml:10: target.builtin: file nope.py not found (looked in DIR/nope.py)"
    )


def test_a_builtin_that_is_not_in_the_file_is_reported(tmp_path):
    assert bad(tmp_path, "kv.py:bashkit_builtin", "kv.py:missing") == (
        "DIR/s.yaml:10: target.builtin: DIR/kv.py has no callable 'missing'"
    )


def test_builtin_mode_needs_a_builtin(tmp_path):
    # (without ``mode`` a target that names no builtin is a local program, as upstream)
    assert bad(tmp_path, "  builtin: kv.py:bashkit_builtin\n", "  mode: builtin\n") == (
        "DIR/s.yaml:5: target: mode 'builtin' needs 'builtin: file.py:callable'"
    )


def test_workspace_files_must_be_relative(tmp_path):
    assert bad(tmp_path, 'seed.txt: "seed\\n"', '/etc/seed: "x"') == (
        "DIR/s.yaml:12: files: file path '/etc/seed' must be relative to the workspace"
    )


def test_composite_weights_must_sum_to_one(tmp_path):
    text = bad(tmp_path, "interaction_weight: 0.5", "interaction_weight: 0.4")
    assert text == "DIR/s.yaml:21: evaluation.composite: composite weights sum to 0.9, not 1"


def test_a_judge_weight_needs_an_enabled_judge(tmp_path):
    text = bad(
        tmp_path,
        "composite: {gate_weight: 0.5, judge_weight: 0, interaction_weight: 0.5}",
        "composite: {gate_weight: 0.5, judge_weight: 0.2, interaction_weight: 0.3}",
    )
    assert text == "DIR/s.yaml:1: (document): composite.judge_weight > 0 needs an enabled judge"


def test_a_rubric_whose_weights_do_not_sum_to_one_is_reported_in_the_rubric_file(tmp_path):
    (tmp_path / "rubric.yaml").write_text(
        "criteria:\n  - {id: a, weight: 0.5, description: A}\n  - {id: b, weight: 0.4, "
        "description: B}\n"
    )
    judge = "evaluation:\n  judge: {rubric: rubric.yaml, pass_threshold: 0.7}\n"
    text = bad(tmp_path, "evaluation:\n", judge)
    assert text == "DIR/rubric.yaml:1: (document): criterion weights sum to 0.9, not 1"


def test_gates_may_also_sit_under_evaluation_as_in_spec_002(tmp_path):
    text = SCENARIO.replace("gates:", "other:").split("other:")[0] + textwrap.dedent(
        """\
        evaluation:
          gates:
            - {type: file_exists, path: out.txt}
        """
    )
    scenario = load_scenario(write_scenario(tmp_path, text=text))
    assert [g.type for g in scenario.gates] == ["file_exists"]


def test_a_folder_loads_every_scenario_and_refuses_duplicate_names(tmp_path):
    write_scenario(tmp_path, name="a.yaml")
    write_scenario(tmp_path, text=SCENARIO.replace("kv_pair", "kv_other"), name="b.yml")
    assert [c.task.id for c in load_scenario_cases(tmp_path)] == ["kv_pair", "kv_other"]
    write_scenario(tmp_path, name="c.yaml")
    with pytest.raises(InputError, match="duplicate scenario name 'kv_pair'"):
        load_scenario_cases(tmp_path)


# --- running: builtin and local mode --------------------------------------------------


@pytest.mark.parametrize("mode", [BUILTIN, LOCAL], ids=["builtin", "local"])
def test_a_good_agent_passes_every_gate(tmp_path, mode):
    cases = load_scenario_cases(write_scenario(tmp_path, mode))
    [record] = run_one(cases, write_script(tmp_path, "good", GOOD), tmp_path / "runs")
    assert record.error is None
    assert [(r.kind, r.passed) for r in record.score.results] == [
        ("command_json_path", True),
        ("command_output_contains", True),
        ("file_contains", True),
        ("command_output_contains", True),  # KV_AUTHOR reached the tool in the gate
        ("no_transcript_errors", True),
    ]
    assert record.passed
    result = record.scenario.model_dump(include={"outcome", "outcome_reason", "gates_passed"})
    assert result == {"outcome": "pass", "outcome_reason": None, "gates_passed": 5}
    # all 3 target commands succeeded at their first try: interaction score 1.0;
    # composite = 0.5 * 5/5 + 0.5 * 1.0
    assert record.scenario.interaction_score == 1.0
    assert record.scenario.composite_score == 1.0
    pwd = record.trace.tool_calls[3].stdout.strip()
    if mode == LOCAL:
        assert not Path(pwd).exists()  # the temporary workspace was removed
    else:
        assert pwd == WORKDIR


@pytest.mark.parametrize("mode", [BUILTIN, LOCAL], ids=["builtin", "local"])
def test_a_bad_agent_fails_with_a_reason_and_a_hand_computed_composite(tmp_path, mode):
    cases = load_scenario_cases(write_scenario(tmp_path, mode))
    [record] = run_one(cases, write_script(tmp_path, "bad", BAD), tmp_path / "runs")
    assert [r.passed for r in record.score.results] == [False, True, False, True, False]
    assert not record.passed
    assert record.scenario.outcome == "fail"
    assert record.scenario.outcome_reason == (
        "gate 1 (command_json_path) failed: len 2, expected == 3; "
        "gate 3 (file_contains) failed: out.txt is not a file; "
        "gate 5 (no_transcript_errors) failed: 1 of 3 target command(s) failed: "
        "`kv get a` (exit 1)"
    )
    # commands: `kv get a` failed, `kv set a 1` twice: 1 distinct first-try success of 3
    assert record.scenario.interaction_score == pytest.approx(1 / 3)
    # composite = 0.5 * 2/5 + 0.5 * 1/3
    assert record.scenario.composite_score == pytest.approx(0.2 + 1 / 6)
    assert (record.score.score, record.score.max_score) == (2.0, 5.0)


def test_scenario_fields_reach_the_tasks_table(tmp_path):
    cases = load_scenario_cases(write_scenario(tmp_path))
    [folder] = asyncio.run(
        run_cases(cases, [write_script(tmp_path, "good", GOOD)], tmp_path / "runs", progress=False)
    )
    tasks = pl.read_parquet(folder / "tasks.parquet")
    row = tasks.select("outcome", "gates_passed", "gates_total", "command_pattern").row(0)
    assert row == ("pass", 5, 5, r"\bkv\s+(\S+)")
    checks = pl.read_parquet(folder / "checks.parquet")
    assert checks.get_column("layer").unique().to_list() == ["gate"]


@pytest.mark.parametrize(
    ("replace", "by", "error"),
    [
        (
            'setup: {commands: ["kv set seed planted"]}',
            'setup: {commands: ["kv set seed planted", "kv nonsense"]}',
            "SetupError: scenario 'kv_pair': setup command `kv nonsense` exited 2: usage: kv set",
        ),
        (
            "health_check: kv --version",
            "health_check: kv --versoin",
            "SetupError: scenario 'kv_pair': health check `kv --versoin` exited 2: usage:",
        ),
    ],
)
def test_a_failed_setup_is_recorded_as_the_tasks_error(tmp_path, replace, by, error):
    cases = load_scenario_cases(write_scenario(tmp_path, text=SCENARIO.replace(replace, by)))
    with pytest.raises(SetupError):
        asyncio.run(cases[0].sandbox())
    [record] = run_one(cases, write_script(tmp_path, "good", GOOD), tmp_path / "runs")
    assert record.error is not None and record.error.startswith(error)
    assert not record.passed and record.trace.turns == 0


def test_fixture_files_then_files_are_written_into_the_workspace(tmp_path):
    fixture = tmp_path / "fixture"
    (fixture / "docs").mkdir(parents=True)
    (fixture / "docs" / "a.txt").write_text("from fixture\n")
    (fixture / "seed.txt").write_text("overridden by files\n")
    text = SCENARIO.replace("files:", "fixture: fixture\nfiles:")
    for mode in (BUILTIN, LOCAL):
        [case] = load_scenario_cases(write_scenario(tmp_path, mode, text=text))
        box = asyncio.run(case.sandbox())
        try:
            out = asyncio.run(box.exec(f"cd {box.workdir} && cat docs/a.txt seed.txt"))
            assert out.stdout == "from fixture\nseed\n"
        finally:
            box.close()


def test_builtin_mode_refuses_binary_fixture_files(tmp_path):
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "blob.bin").write_bytes(b"\xff\xfe\x00")
    path = write_scenario(tmp_path, text=SCENARIO.replace("files:", "fixture: fixture\nfiles:"))
    with pytest.raises(InputError, match=r"blob\.bin: not UTF-8 text: builtin mode"):
        load_scenario_cases(path)


# --- guidance -------------------------------------------------------------------------


def with_guidance(tmp_path: Path, placement: str, mode: str = BUILTIN) -> Path:
    (tmp_path / "AGENTS.md").write_text("Use `kv set KEY VALUE` to store a value.\n")
    text = SCENARIO.replace(
        "gates:", f"guidance: {{file: AGENTS.md, placement: {placement}}}\ngates:"
    )
    return write_scenario(tmp_path, mode, text=text)


@pytest.mark.parametrize(
    ("placement", "in_workspace", "in_prompt"),
    [("workspace", True, False), ("system_prompt", False, True), ("both", True, True)],
)
def test_guidance_placement(tmp_path, placement, in_workspace, in_prompt):
    [case] = load_scenario_cases(with_guidance(tmp_path, placement))
    box = asyncio.run(case.sandbox())
    try:
        assert (box.file_type(f"{WORKDIR}/AGENTS.md") == "file") is in_workspace
    finally:
        box.close()
    assert ("Use `kv set KEY VALUE` to store a value." in case.system) is in_prompt
    assert case.system.startswith("bashkit:")  # bashkit's own system prompt comes first
    assert case.guidance is None  # the scenario's own file: no version name
    assert case.guidance_file == tmp_path / "AGENTS.md"


def test_local_mode_has_its_own_system_prompt(tmp_path):
    [case] = load_scenario_cases(with_guidance(tmp_path, "both", LOCAL))
    assert case.system.startswith("bash: run commands with real bash")
    assert "`cd`, variables and functions do not carry over" in case.system


def test_guidance_versions_give_one_case_per_scenario_and_version(tmp_path):
    path = with_guidance(tmp_path, "workspace")
    (tmp_path / "v1.md").write_text("version one\n")
    (tmp_path / "v2.md").write_text("version two\n")
    cases = load_scenario_cases(path, {"v1": tmp_path / "v1.md", "v2": tmp_path / "v2.md"})
    assert [(c.task.id, c.guidance) for c in cases] == [("kv_pair", "v1"), ("kv_pair", "v2")]
    for case, text in zip(cases, ["version one\n", "version two\n"], strict=True):
        box = asyncio.run(case.sandbox())
        try:
            assert box.read_text(f"{WORKDIR}/AGENTS.md") == text
        finally:
            box.close()
    with pytest.raises(InputError, match="guidance 'v3': file not found"):
        load_scenario_cases(path, {"v3": tmp_path / "missing.md"})


def test_the_guidance_name_is_recorded(tmp_path):
    path = with_guidance(tmp_path, "workspace")
    (tmp_path / "v2.md").write_text("version two\n")
    [case] = load_scenario_cases(path, {"v2": tmp_path / "v2.md"})
    [folder] = asyncio.run(
        run_cases(
            [case],
            [write_script(tmp_path, "good", GOOD)],
            tmp_path / "runs",
            guidance=case.guidance,
            progress=False,
        )
    )
    [record] = RunStore.open(folder).records()
    assert RunStore.open(folder).meta.guidance == "v2"
    assert record.extra["guidance_file"] == str(tmp_path / "v2.md")


# --- comparing guidance versions ------------------------------------------------------

PATTERN = r"\bkv\s+(\S+)"


def attempt(
    task_id: str, calls: list[tuple[str, int]], outcome: str, pattern: str = PATTERN
) -> TaskRecord:
    trace = AgentTrace(
        tool_calls=[
            ToolCallResult(commands=c, exit_code=e, call_index=i) for i, (c, e) in enumerate(calls)
        ],
        natural_stop=True,
    )
    return TaskRecord(
        task=Task(id=task_id, category="kv", prompt="p"),
        trace=trace,
        score=TaskScore(task_id=task_id),
        scenario=ScenarioResult(outcome=outcome, gates_passed=0, gates_total=0),
        extra={"command_pattern": pattern},
    )


def guidance_runs(pattern: str = PATTERN) -> Runs:
    v1 = [
        attempt("t1", [("kv --help", 0), ("kv sett a 1", 2), ("kv set a 1", 0)], "pass", pattern),
        attempt("t2", [("kv get a", 1), ("kv get a", 1), ("kv get a", 0)], "fail", pattern),
    ]
    v2 = [
        attempt("t1", [("kv set a 1", 0)], "pass", pattern),
        attempt("t2", [("kv get a", 0)], "fail", pattern),  # no checks: `passed`; outcome wins
    ]
    parts = [
        Runs(
            **tables_from_records(
                RunMeta(run_id=f"r-{g}", provider="p", model="m", guidance=g), recs
            )
        )
        for g, recs in (("v1", v1), ("v2", v2))
    ]
    return Runs.concat(parts)


def test_compare_guidance_puts_versions_side_by_side():
    summary = compare_guidance(guidance_runs()).summary
    # v1: 6 commands, 4 distinct, 3 failed, 1 --help, 2 distinct first-try successes
    # v2: 2 commands, 2 distinct, none failed
    assert summary.rows(named=True) == [
        {
            "model": "m",
            "guidance": "v1",
            "attempts": 2,
            "tasks": 2,
            "pass_rate": 0.5,
            "completion_rate": 1.0,
            "error_rate": 3 / 6,
            "retry_rate": (6 - 4) / 6,
            "first_try_success_rate": 2 / 6,
            "iteration_ratio": 4 / 6,
            "help_per_attempt": 0.5,
            "commands_per_attempt": 3.0,
        },
        {
            "model": "m",
            "guidance": "v2",
            "attempts": 2,
            "tasks": 2,
            "pass_rate": 0.5,
            "completion_rate": 1.0,
            "error_rate": 0.0,
            "retry_rate": 0.0,
            "first_try_success_rate": 1.0,
            "iteration_ratio": 1.0,
            "help_per_attempt": 0.0,
            "commands_per_attempt": 1.0,
        },
    ]


def test_an_errored_attempt_never_passes_in_the_guidance_comparison():
    """Found by the differential tests: an attempt whose gates all passed after some
    tool calls, then errored, passed in compare_guidance while the run's summary (and
    its outcome pass rate) counted it as failed."""
    errored = attempt("t1", [("kv set a 1", 0)], "pass").model_copy(
        update={"error": "provider error on turn 2: HTTP 500"}
    )
    meta = RunMeta(run_id="r", provider="p", model="m", guidance="v1")
    runs = Runs(**tables_from_records(meta, [errored, attempt("t2", [("kv get a", 0)], "pass")]))
    assert compare_guidance(runs).summary.get_column("pass_rate").to_list() == [0.5]
    assert summary(runs).get_column("pass_rate").to_list() == [0.5]


def test_compare_guidance_pairs_versions_on_shared_tasks():
    paired = compare_guidance(guidance_runs()).paired
    row = paired.filter(pl.col("metric") == "error_rate").row(0, named=True)
    # per task v1: t1 1/3, t2 2/3; v2: 0 and 0 -> differences -1/3 and -2/3
    assert (row["version_a"], row["version_b"], row["n_shared"]) == ("v1", "v2", 2)
    assert row["mean_a"] == pytest.approx(0.5) and row["mean_b"] == 0.0
    assert row["diff"] == pytest.approx(-0.5)
    assert row["diff_lo"] is None and row["diff_hi"] is None  # no t interval below 10 tasks
    # Sign-flip, exact: both differences negative; 2 of the 4 sign patterns are as extreme.
    assert row["p_value"] == 0.5
    # Holm over the table's p-values: never below the raw p-value.
    assert (paired.get_column("p_holm") >= paired.get_column("p_value")).all()
    smallest = paired.sort("p_value").row(0, named=True)
    tested = paired.get_column("p_value").drop_nulls().len()
    assert smallest["p_holm"] == pytest.approx(min(1.0, tested * smallest["p_value"]))


def test_compare_guidance_flags_spec_002_diagnostic_patterns():
    diagnosis = compare_guidance(guidance_runs()).diagnosis
    flagged = diagnosis.filter("flagged").select("guidance", "pattern", "evidence").rows()
    assert flagged == [
        ("v1", "high_error_low_help", "error_rate 50.0%, help_per_attempt 0.5"),
        # `kv get a` three times in t2: (3 - 1) / 3
        ("v1", "retry_on_commands", "get retry_rate 66.7% (3 runs)"),
        # v2 finished each task in 1 command, v1 took 3
        (
            "v1",
            "long_path_completed",
            "t1 3 commands vs fewest 1, t2 3 commands vs fewest 1",
        ),
    ]
    assert diagnosis.height == 2 * 5  # every pattern for every version, flagged or not


def test_a_misspelt_diagnostic_threshold_is_an_error_not_ignored():
    with pytest.raises(ValidationError, match="eror_rate"):
        GuidanceThresholds(eror_rate=0.6)
    with pytest.raises(TypeError, match=r"thresholds must be GuidanceThresholds \| None"):
        en.compare_guidance(guidance_runs(), thresholds={"eror_rate": 0.6})
    with pytest.raises(ValidationError, match="frozen"):
        GuidanceThresholds().error_rate = 0.6


def test_diagnostic_thresholds_are_data():
    diagnosis = compare_guidance(
        guidance_runs(), thresholds=GuidanceThresholds(error_rate=0.6)
    ).diagnosis
    assert not diagnosis.filter(pl.col("pattern") == "high_error_low_help")["flagged"].any()
