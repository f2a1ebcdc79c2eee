"""Hostile input, table-driven: every case names the one outcome it must end in.

- ``Refused``: exit 2 and one ``error:`` line naming the file (or the flag), the line and
  the field where there is one; no traceback; nothing written.
- ``Accepted``: exit 0 and the run written, with what the case says it holds.
- The notebook API: a TypeError (wrong type) or ValueError (a choice not offered) that
  names the function and the argument, never pathlib's or polars' internals.

Cases that used to hang run in a child process with a time limit, so a hang fails the
test instead of stalling the suite. Damaged run folders are tested in
``tests/test_damaged_runs.py``; hostile commands in ``tests/test_hostile.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import evalnb as en
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._formats.yamlio import MAX_ALIAS_NODES, load_model
from evalnb.errors import InputError
from tests.fault_server import FaultServer
from tests.test_bad_input import SCENARIO, TASK, check_message, jsonl, run_cli, task

HANG_LIMIT_S = 60
"""A child process still running after this long has hung."""


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """YAML whose ``levels`` nested aliases expand to ``width ** levels`` strings."""
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@dataclass
class Refused:
    """Exit 2; the message names ``file`` (or the flag) at ``line`` and ``field``."""

    file: str
    line: int | None
    field: str | None
    text: str


@dataclass
class Accepted:
    """Exit 0; ``holds`` checks the one run folder written."""

    holds: Callable[[Runs], bool] = lambda runs: runs.tasks.height > 0


@dataclass
class Case:
    """One hostile input: the files written first, the command line (``{dir}`` is the
    test's folder), the environment, and the outcome."""

    name: str
    argv: list[str]
    outcome: Refused | Accepted
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    hung_before: bool = False


def run(dataset: str, *flags: str) -> list[str]:
    return ["run", dataset, *flags, "--out", "{dir}/runs", "--quiet"]


def scenario() -> str:
    """The bad-input suite's scenario, its tool in the test's folder."""
    return SCENARIO.format(tool="{dir}/tool.py")


def checks(*checks: str) -> dict[str, str]:
    return {"t.jsonl": jsonl(task(expectations=[{"check": c} for c in checks]))}


OK = {"t.jsonl": jsonl(TASK)}
MERGE_KEYS = """name: merged
description: anchors and merge keys, as people write them
target: &target
  binary: notes
  mode: builtin
  builtin: {dir}/tool.py:bashkit_builtin
task: do it
gates:
  - &exists {type: file_exists, path: a.txt}
  - {<<: *exists, path: b.txt}
  - *exists
"""

CLI_CASES = [
    # counts no attempt can meet are refused, not kept as checks that can never pass
    Case(
        "tool_calls_min_10^23",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.check", "0 to 1,000,000"),
        checks("tool_calls_min:100000000000000000000000"),
    ),
    Case(
        "tool_calls_min_written_10^23",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.check", "needs an integer, got '10^23'"),
        checks("tool_calls_min:10^23"),
    ),
    Case(
        "tool_calls_max_huge",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.check", "0 to 1,000,000"),
        checks("tool_calls_max:1000001"),
    ),
    Case(
        "exit_code_256",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.check", "-1 to 255"),
        checks("exit_code:256"),
    ),
    Case(
        "exit_code_minus_2",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.check", "-1 to 255"),
        checks("exit_code:-2"),
    ),
    Case(
        "weight_boolean",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.weight", "valid number"),
        {"t.jsonl": jsonl(task(expectations=[{"check": "exit_code:0", "weight": True}]))},
    ),
    Case(
        "weight_string",
        run("{dir}/t.jsonl", "--model", "reference"),
        Refused("t.jsonl", 1, "expectations.0.weight", "valid number"),
        {"t.jsonl": jsonl(task(expectations=[{"check": "exit_code:0", "weight": "1"}]))},
    ),
    Case(
        "exit_code_minus_1_means_no_call",
        run("{dir}/t.jsonl", "--model", "reference"),
        Accepted(lambda runs: runs.checks["passed"].to_list() == [False]),
        checks("exit_code:-1"),
    ),
    Case(
        "task_id_like_a_path",  # ids are data, never paths
        run("{dir}/t.jsonl", "--model", "reference"),
        Accepted(lambda runs: runs.tasks["task_id"].to_list() == ["../../x"]),
        {"t.jsonl": jsonl(task(id="../../x"))},
    ),
    # where requests go: refused at start, before any run folder or API call
    Case(
        "base_url_not_a_url",
        run("{dir}/t.jsonl", "--model", "openai/m", "--base-url", "not a url"),
        Refused("--base-url", None, None, "'not a url' is not an http:// or https:// URL"),
        OK,
    ),
    Case(
        "base_url_ftp",
        run("{dir}/t.jsonl", "--model", "openai/m", "--base-url", "ftp://example.com/v1"),
        Refused("--base-url", None, None, "is not an http:// or https:// URL with a host"),
        OK,
    ),
    Case(
        "base_url_no_host",
        run("{dir}/t.jsonl", "--model", "openai/m", "--base-url", "http:///v1"),
        Refused("--base-url", None, None, "is not an http:// or https:// URL with a host"),
        OK,
    ),
    Case(
        "base_url_with_fragment",
        run("{dir}/t.jsonl", "--model", "openai/m", "--base-url", "http://h/v1#x"),
        Refused("--base-url", None, None, "is not an http:// or https:// URL with a host"),
        OK,
    ),
    Case(
        "anthropic_base_url_without_scheme",
        run("{dir}/t.jsonl", "--model", "anthropic/m", "--anthropic-base-url", "localhost:8080"),
        Refused("--anthropic-base-url", None, None, "'localhost:8080' is not an http://"),
        OK,
    ),
    Case(
        "base_url_env_not_a_url",
        run("{dir}/t.jsonl", "--model", "openai/m"),
        Refused("$OPENAI_BASE_URL", None, None, "'not a url' is not an http:// or https:// URL"),
        OK,
        env={"OPENAI_BASE_URL": "not a url"},
    ),
    # the judge: bash tasks have none, so asking for one is said, not ignored
    Case(
        "judge_is_the_model_on_bash_tasks",
        run("{dir}/t.jsonl", "--model", "reference", "--judge", "reference"),
        Refused("t.jsonl", None, "--judge", "bash tasks have no judge layer"),
        OK,
    ),
    Case(
        "judge_on_bash_tasks",
        run("{dir}/t.jsonl", "--model", "reference", "--judge", "openai/judge"),
        Refused("t.jsonl", None, "--judge", "bash tasks have no judge layer"),
        OK,
    ),
    # sizes and places
    Case(
        "epochs_10^11",  # every attempt is planned up front: this exhausted memory
        run("{dir}/t.jsonl", "--model", "reference", "--epochs", "100000000000"),
        Refused("--epochs", None, None, "an integer from 1 to 1000"),
        OK,
    ),
    Case(
        "concurrency_0",
        run("{dir}/t.jsonl", "--model", "reference", "--concurrency", "0"),
        Refused("--concurrency", None, None, "an integer >= 1"),
        OK,
    ),
    Case(
        "task_timeout_nan",
        run("{dir}/t.jsonl", "--model", "reference", "--task-timeout", "nan"),
        Refused("--task-timeout", None, None, "a number > 0"),
        OK,
    ),
    Case(
        "shard_past_the_end",
        run("{dir}/t.jsonl", "--model", "reference", "--shard", "3/2"),
        Refused("--shard", None, None, "1 <= i <= N"),
        OK,
    ),
    Case(
        "run_out_is_a_file",
        ["run", "{dir}/t.jsonl", "--model", "reference", "--out", "{dir}/t.jsonl"],
        Refused("--out", None, None, "exists and is not a folder"),
        OK,
    ),
    Case(
        "report_out_is_a_file",  # was FileExistsError
        ["report", "{dir}/t.jsonl", "--out", "{dir}/t.jsonl"],
        Refused("--out", None, None, "exists and is not a folder"),
        OK,
    ),
    Case(
        "notebooks_into_a_file",  # was FileExistsError
        ["notebooks", "{dir}/t.jsonl"],
        Refused("dir", None, None, "exists and is not a folder"),
        OK,
    ),
    Case(
        "export_out_is_a_file",  # was FileExistsError
        ["export", "inspect", "{dir}", "--out", "{dir}/t.jsonl"],
        Refused("--out", None, None, "exists and is not a folder"),
        OK,
    ),
    Case(
        "resume_with_another_model",  # the recorded model runs: --model was ignored
        ["run", "--resume", "{dir}", "--model", "openai/other"],
        Refused("--model", None, None, "--resume runs it as recorded"),
        OK,
    ),
    # YAML: an alias bomb is refused at once, at the alias that crosses the bound
    Case(
        "scenario_alias_bomb",
        run("{dir}/s.yaml", "--model", "reference"),
        Refused("s.yaml", 15, None, f"aliases expand to over {MAX_ALIAS_NODES:,} nodes"),
        {"s.yaml": scenario() + "x-" + alias_bomb().replace("\na", "\nx-a")},
        hung_before=True,
    ),
    Case(
        "scripted_agent_alias_bomb",
        run("{dir}/t.jsonl", "--model", "scripted:{dir}/agent.yaml"),
        Refused("agent.yaml", 7, None, "aliases expand to over"),
        {**OK, "agent.yaml": "turns: []\n" + alias_bomb()},
        hung_before=True,
    ),
    Case(
        "merge_keys_and_anchors_still_load",
        run("{dir}/s.yaml", "--model", "sim/careful"),
        Accepted(
            lambda runs: (
                runs.checks["check"].to_list() == ["a.txt exists", "b.txt exists", "a.txt exists"]
            )
        ),
        {"s.yaml": MERGE_KEYS},
    ),
]


def write_case(case: Case, folder: Path, monkeypatch) -> list[str]:
    """Write the case's files (and a tool for its scenarios); return its command line."""
    (folder / "tool.py").write_text("def bashkit_builtin(ctx):\n    return 'ok\\n'\n")
    for name, content in case.files.items():
        (folder / name).write_text(content.replace("{dir}", str(folder)))
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    if case.name.startswith("resume"):  # a finished run folder to resume
        (folder / "run.json").write_text(
            json.dumps({"run_id": "r", "provider": "reference", "model": "reference"})
        )
    return [arg.replace("{dir}", str(folder)) for arg in case.argv]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_hostile_command_lines_end_in_their_one_outcome(tmp_path, capsys, monkeypatch, case):
    argv = write_case(case, tmp_path, monkeypatch)
    if case.hung_before:  # first in a child process with a time limit: a hang fails
        child = subprocess.run(
            [sys.executable, "-m", "evalnb._cli", *argv],
            capture_output=True,
            text=True,
            timeout=HANG_LIMIT_S,
            check=False,
        )
        assert child.returncode == (2 if isinstance(case.outcome, Refused) else 0), child.stderr
    started = time.perf_counter()
    code, err = run_cli(argv, capsys)
    elapsed = time.perf_counter() - started
    assert "Traceback" not in err, err
    outcome = case.outcome
    if isinstance(outcome, Refused):
        assert code == 2, err
        assert err.count("error:") == 1, err
        where = (outcome.line, outcome.field, outcome.text)
        if outcome.file.startswith(("-", "$")) or outcome.file == "dir":  # a flag or variable
            assert f"argument {outcome.file}" in err or f" {outcome.file}:" in err, err
            assert outcome.text in err, err
        else:
            check_message(err, tmp_path / outcome.file, where)
        assert not (tmp_path / "runs").exists()
    else:
        assert code == 0, err
        [folder] = (tmp_path / "runs").iterdir()
        assert outcome.holds(read_run_folder(folder))
    if case.hung_before:
        assert elapsed < 1.0, f"{case.name} took {elapsed:.2f}s"


def test_aliases_may_add_up_to_the_bound_and_not_one_node_more(tmp_path):
    anchor = "base: &b [" + ", ".join(["x"] * 99) + "]\n"  # 100 nodes: the list and 99 strings
    aliases = MAX_ALIAS_NODES // 100
    path = tmp_path / "a.yaml"
    path.write_text(anchor + f"refs: [{', '.join(['*b'] * aliases)}]\n")
    assert len(load_model(path, dict)["refs"]) == aliases
    path.write_text(anchor + f"refs: [{', '.join(['*b'] * aliases)}]\nmore: {{<<: {{k: *b}}}}\n")
    with pytest.raises(InputError) as refused:
        load_model(path, dict)
    assert str(refused.value).startswith("a.yaml:3: invalid YAML: aliases expand to over")


API_RUNS = Runs.empty()

# (case id, the call, the exception it must raise, the text of its message)
API_CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("load_an_int", lambda: en.load(123), TypeError, "load(): paths_or_globs[0] must be str"),
    ("load_a_list", lambda: en.load(["runs/*"]), TypeError, "paths_or_globs[0] must be str"),
    (
        "load_unknown_keyword",  # backend= is gone: pandas frames come from runs.to_pandas()
        lambda: en.load("runs/*", backend="pandas"),
        TypeError,
        "load(): got an unexpected keyword argument 'backend'",
    ),
    ("summary_of_a_str", lambda: en.summary("x"), TypeError, "summary(): runs must be Runs"),
    ("summary_of_a_path", lambda: en.summary(Path("runs")), TypeError, "runs must be Runs"),
    (
        "summary_prices_as_a_path",
        lambda: en.summary(API_RUNS, prices="prices.yaml"),
        TypeError,
        "summary(): prices must be Prices | None, got str",
    ),
    ("by_category_of_an_int", lambda: en.by_category(42), TypeError, "by_category(): runs"),
    (
        "context_growth_by_unknown",
        lambda: en.context_growth(API_RUNS, by="day"),
        ValueError,
        "context_growth(): by must be Literal['task', 'run', 'model'], got str 'day'",
    ),
    (
        "context_growth_by_an_int",
        lambda: en.context_growth(API_RUNS, by=3),
        TypeError,
        "context_growth(): by must be",
    ),
    (
        "compare_run_numbers",
        lambda: en.compare(API_RUNS, 1, 2),
        TypeError,
        "compare(): a must be str, got int 1",
    ),
    (
        "compare_all_ids_as_one_string",
        lambda: en.compare_all(API_RUNS, "ab"),
        TypeError,
        "compare_all(): run_ids must be list[str] | None",
    ),
    (
        "failing_commands_top_as_text",
        lambda: en.failing_commands(API_RUNS, top="5"),
        TypeError,
        "failing_commands(): top must be int",
    ),
    (
        "failing_commands_top_true",
        lambda: en.failing_commands(API_RUNS, top=True),
        TypeError,
        "top must be int, got bool True",
    ),
    (
        "interaction_pattern_as_an_int",
        lambda: en.interaction(API_RUNS, pattern=3),
        TypeError,
        "interaction(): pattern must be",
    ),
    (
        "friction_thresholds_as_a_dict",
        lambda: en.friction(API_RUNS, thresholds={}),
        TypeError,
        "friction(): thresholds must be Thresholds | None",
    ),
    (
        "diagnose_of_a_frame",
        lambda: en.diagnose(API_RUNS.tasks),
        TypeError,
        "diagnose(): runs must be Runs, got DataFrame",
    ),
    (
        "tasks_needed_rates_as_text",
        lambda: en.tasks_needed("0.5", 0.7),
        TypeError,
        "tasks_needed(): p_a must be float, got str '0.5'",
    ),
    ("summary_without_runs", lambda: en.summary(), TypeError, "missing a required argument"),
]


@pytest.mark.parametrize(
    ("name", "call", "error", "text"), API_CASES, ids=[c[0] for c in API_CASES]
)
def test_the_notebook_api_names_the_argument_of_the_wrong_type(name, call, error, text):
    with pytest.raises(error) as raised:
        call()
    assert text in str(raised.value)
    assert type(raised.value) is error  # not a subclass from deep inside (pydantic, polars)


def test_the_notebook_api_still_takes_what_it_is_annotated_with():
    assert en.summary(API_RUNS).height == 0
    assert en.context_growth(API_RUNS, by="run").height == 0
    assert en.tasks_needed(0.5, 0.7) == en.tasks_needed(0.5, 0.7, alpha=0.05)  # int or float
    assert en.failing_commands(API_RUNS, top=3).height == 0


def test_a_base_url_keeps_its_query_after_the_api_path(tmp_path, capsys):
    server = FaultServer()
    try:
        (tmp_path / "t.jsonl").write_text(jsonl(TASK))
        base = server.url("ok", "/v1/?api-key=abc&v=2")
        argv = run(str(tmp_path / "t.jsonl"), "--model", "openai/m", "--base-url", base)
        code, err = run_cli([a.replace("{dir}", str(tmp_path)) for a in argv], capsys)
        assert code == 0, err
        paths = [r["path"] for r in server.requests]
        assert paths == ["/ok/v1/chat/completions?api-key=abc&v=2"] * 2
    finally:
        server.stop()
    [folder] = (tmp_path / "runs").iterdir()
    stored = json.loads((folder / "run.json").read_text())["settings"]["connection"]
    assert stored["base_url"].endswith("/v1/?api-key=[REDACTED]&v=[REDACTED]")
    assert "abc" not in (folder / "run.json").read_text()  # no secret on disk


def test_the_corpus_is_broad():
    assert len(CLI_CASES) + len(API_CASES) >= 45
