"""Malformed inputs: each refused naming file, line and field, with exit 2, writing nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalnb._cli import main

TASK = {
    "id": "a",
    "category": "c",
    "prompt": "p",
    "solution": "echo ok",
    "expectations": [{"check": "stdout_contains:ok"}],
}


def jsonl(*objs: object) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


def task(**changes: object) -> dict:
    return TASK | changes


# (case id, file name, content, where the error must point: (line or None, field or None, text))
DATASETS = [
    ("truncated_json", "t.jsonl", jsonl(TASK, '{"id": "b", "category"'), (2, None, "invalid JSON")),
    ("not_an_object", "t.jsonl", jsonl(TASK, "[1, 2]"), (2, None, "JSON object")),
    ("files_wrong_type", "t.jsonl", jsonl(task(files=["a"])), (1, "files", "dictionary")),
    (
        "weight_wrong_type",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "exit_code:0", "weight": "heavy"}])),
        (1, "expectations.0.weight", "number"),
    ),
    (
        "weight_negative",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "exit_code:0", "weight": -1}])),
        (1, "expectations.0.weight", "greater than or equal"),
    ),
    (
        "unknown_check",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "stdout_has:x"}])),
        (1, "expectations.0.check", "unknown check kind"),
    ),
    (
        "bad_regex",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "stdout_regex:a(b"}])),
        (1, "expectations.0.check", "invalid regex"),
    ),
    (
        "bad_line_regex",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "file_line_regex:/f:[z-a]"}])),
        (1, "expectations.0.check", "invalid regex"),
    ),
    (
        "regex_backreference",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "stdout_regex:(a)\\1"}])),
        (1, "expectations.0.check", "no backreferences"),
    ),
    (
        "regex_lookahead",
        "t.jsonl",
        jsonl(TASK, task(id="b", expectations=[{"check": "file_line_regex:/f:^x(?=y)"}])),
        (2, "expectations.0.check", "no lookaround"),
    ),
    (
        "regex_possessive",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "exit_code:0"}, {"check": "stdout_regex:a++"}])),
        (1, "expectations.1.check", "possessive"),
    ),
    (
        "file_contains_no_path",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "file_contains:hello"}])),
        (1, "expectations.0.check", "file_contains needs"),
    ),
    (
        "count_not_integer",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "tool_calls_min:many"}])),
        (1, "expectations.0.check", "integer"),
    ),
    (
        "relative_file_path",
        "t.jsonl",
        jsonl(task(files={"data.txt": "x"})),
        (1, "files", "absolute"),
    ),
    ("missing_prompt", "t.jsonl", jsonl({"id": "a", "category": "c"}), (1, "prompt", "required")),
    ("unknown_field", "t.jsonl", jsonl(task(timeout=5)), (1, "timeout", "Extra inputs")),
    ("duplicate_ids", "t.jsonl", jsonl(TASK, "", TASK), (3, "id", "duplicate id")),
    ("empty_file", "t.jsonl", "\n\n", (None, None, "empty")),
    ("only_comments", "t.jsonl", "# nothing\n// here\n", (None, None, "empty")),
    (
        "huge_line",
        "t.jsonl",
        jsonl(TASK) + '{"id": "' + "x" * 50_000_000 + "\n",
        (2, None, "invalid JSON"),
    ),
    (
        "weight_infinity",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "exit_code:0", "weight": float("inf")}])),
        (1, "expectations.0.weight", "finite"),
    ),
    (
        "tool_calls_min_negative",
        "t.jsonl",
        jsonl(task(expectations=[{"check": "tool_calls_min:-3"}])),
        (1, "expectations.0.check", "0 to 1,000,000"),
    ),
    (
        "duplicate_key",
        "t.jsonl",
        '{"id": "a", "category": "c", "prompt": "p", "id": "b"}\n',
        (1, "id", "duplicate key"),
    ),
    ("deep_nesting", "t.jsonl", "[" * 200_000 + "]" * 200_000 + "\n", (1, None, "too deeply")),
    ("result_deep_nesting", "r.json", "[" * 200_000 + "]" * 200_000, (None, None, "too deeply")),
    (
        "result_duplicate_key",
        "r.json",
        '{"provider": "x", "results": [], "results": []}',
        (None, "results", "duplicate key"),
    ),
    ("result_truncated", "r.json", '{"provider": "x", "results": [{"task": ', (1, None, "JSON")),
    (
        "result_no_results",
        "r.json",
        json.dumps({"provider": "x"}),
        (1, "results", "Field required"),
    ),
    (
        "result_bad_task",
        "r.json",
        json.dumps({"results": [{"task": {"id": "a"}}]}, indent=1),
        (None, "results.0.task.category", "required"),
    ),
]

SCRIPTS = [
    ("script_bad_yaml", "s.yaml", "turns:\n  - text: [unclosed\n", (3, None, "invalid YAML")),
    (
        "script_unknown_key",
        "s.yaml",
        "turns:\n  - text: hi\n    command: ls\n",
        (3, "turns.0.command", "Extra inputs"),
    ),
    (
        "script_commands_not_list",
        "s.yaml",
        "turns:\n  - commands: 5\n",
        (2, "turns.0.commands", "list"),
    ),
    (
        "script_negative_tokens",
        "s.yaml",
        "turns:\n  - input_tokens: -3\n",
        (2, "turns.0.input_tokens", "greater than or equal"),
    ),
    (
        "script_duplicate_key",
        "s.yaml",
        "turns:\n  - text: hi\n    text: ho\n",
        (3, "turns.0.text", "duplicate key"),
    ),
    (
        "script_json_duplicate_key",
        "s.json",
        '{"turns": [{"text": "hi"}], "turns": []}',
        (1, "turns", "duplicate key"),
    ),
    ("script_deep_nesting", "s.yaml", "[" * 200_000 + "]" * 200_000, (1, None, "too deeply")),
    (
        "script_deep_block_nesting",  # the first mapping below 200 levels, on line 201
        "s.yaml",
        "".join(f"{'  ' * i}k{i}:\n" for i in range(250)) + "  " * 250 + "x\n",
        (201, None, "too deeply"),
    ),
    (
        "script_unknown_task",
        "s.yaml",
        "tasks:\n  a:\n    - text: hi\n  nope:\n    - text: hi\n",
        (None, "tasks.nope", "no task 'nope' in the dataset"),
    ),
    ("script_empty", "s.yaml", "", (None, None, "empty")),
    ("script_nothing", "s.yaml", "tasks: {}\n", (1, None, "'turns' or 'tasks'")),
]

PRICES = [
    (
        "prices_negative",
        "p.yaml",
        "models:\n  m:\n    input: -1\n    output: 2\n    as_of: '2026-01'\n    source: me\n",
        (3, "models.m.input", "greater than or equal"),
    ),
    (
        "prices_unknown_key",
        "p.yaml",
        "models:\n  m:\n    input: 1\n    output: 2\n    source: me\n    colour: red\n",
        (6, "models.m.colour", "Extra inputs"),
    ),
    (
        "prices_wrong_type",
        "p.yaml",
        "models:\n  m:\n    input: cheap\n    source: me\n",
        (3, "models.m.input", "number"),
    ),
    (
        "prices_missing_source",
        "p.yaml",
        "models:\n  m:\n    input: 1\n    output: 2\n",
        (2, "models.m.source", "required"),
    ),
    (
        "prices_bad_date",
        "p.yaml",
        "models:\n  m:\n    input: 1\n    output: 2\n    source: me\n    as_of: last week\n",
        (6, "models.m.as_of", "pattern"),
    ),
    ("prices_bad_yaml", "p.yaml", "models: {m: [\n", (2, None, "invalid YAML")),
]


def check_message(err: str, path: Path, where: tuple) -> None:
    line, field, text = where
    assert path.name in err, err
    if line is not None:
        assert re.search(rf"{re.escape(path.name)}:{line}\b", err), err
    if field is not None:
        assert f" {field}:" in err, err
    assert text in err, err


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "file", "content", "where"), DATASETS, ids=[c[0] for c in DATASETS]
)
def test_bad_datasets(tmp_path, capsys, name, file, content, where):
    path = tmp_path / file
    path.write_text(content)
    out = tmp_path / "runs"
    code, err = run_cli(["run", str(path), "--model", "reference", "--out", str(out)], capsys)
    assert code == 2
    check_message(err, path, where)
    assert not out.exists()


@pytest.mark.parametrize(("name", "file", "content", "where"), SCRIPTS, ids=[c[0] for c in SCRIPTS])
def test_bad_scripted_agents(tmp_path, capsys, name, file, content, where):
    data = tmp_path / "tasks.jsonl"
    data.write_text(jsonl(TASK))
    path = tmp_path / file
    path.write_text(content)
    out = tmp_path / "runs"
    code, err = run_cli(
        ["run", str(data), "--model", f"scripted:{path}", "--out", str(out)], capsys
    )
    assert code == 2
    check_message(err, path, where)
    assert not out.exists()


@pytest.mark.parametrize(("name", "file", "content", "where"), PRICES, ids=[c[0] for c in PRICES])
def test_bad_price_tables(tmp_path, capsys, bashkit_eval_files, name, file, content, where):
    path = tmp_path / file
    path.write_text(content)
    out = tmp_path / "report"
    code, err = run_cli(
        ["report", str(bashkit_eval_files[0]), "--out", str(out), "--prices", str(path)], capsys
    )
    assert code == 2
    check_message(err, path, where)
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "file", "content", "where"),
    [c for c in DATASETS if c[1] == "r.json"],
    ids=[c[0] for c in DATASETS if c[1] == "r.json"],
)
def test_bad_foreign_result_files_are_refused_by_every_reader(
    tmp_path, capsys, name, file, content, where
):
    path = tmp_path / file
    path.write_text(content)
    out = tmp_path / "imported"
    for args in (
        ["summary", str(path)],
        ["import", "bashkit-eval", str(path), "--out", str(out)],
        ["report", str(path), "--out", str(out)],
    ):
        code, err = run_cli(args, capsys)
        assert code == 2, args
        assert path.name in err, (args, err)
    assert not out.exists()


def test_missing_inputs_name_the_missing_file(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    code, err = run_cli(["run", str(missing), "--model", "reference"], capsys)
    assert code == 2 and "nope.jsonl" in err and "not found" in err
    code, err = run_cli(["summary", str(tmp_path / "nothing*.json")], capsys)
    assert code == 2 and "nothing*.json" in err


SCENARIO = """name: s
description: d
target:
  binary: notes
  mode: builtin
  builtin: {tool}:bashkit_builtin
task: do it
gates:
  - {{type: file_exists, path: a.txt}}
"""

# (case id, what to change in the scenario text, where the error must point)
SCENARIOS = [
    ("scenario_unknown_key", lambda t: t + "colour: red\n", (10, "colour", "Extra inputs")),
    (
        "scenario_unknown_gate",
        lambda t: t.replace("file_exists, path: a.txt", "file_there, path: a.txt"),
        (9, "gates.0", "file_there"),
    ),
    (
        "scenario_bad_gate_regex",
        lambda t: t.replace(
            "{type: file_exists, path: a.txt}", "{type: file_matches, path: a, pattern: '(x'}"
        ),
        (9, "gates.0.file_matches.pattern", "invalid regex"),
    ),
    (
        "scenario_gate_lookbehind",
        lambda t: t.replace(
            "{type: file_exists, path: a.txt}",
            "{type: command_output_matches, command: ls, pattern: '(?<=a)b'}",
        ),
        (9, "gates.0.command_output_matches.pattern", "no lookaround"),
    ),
    (
        "scenario_bad_jsonpath",
        lambda t: t.replace(
            "{type: file_exists, path: a.txt}",
            "{type: command_json_path, command: ls, path: '$[', assertion: exists}",
        ),
        (9, "gates.0.command_json_path.path", "invalid JSONPath"),
    ),
    (
        "scenario_bad_assertion",
        lambda t: t.replace(
            "{type: file_exists, path: a.txt}",
            "{type: command_json_path, command: ls, path: '$', assertion: 'about 3'}",
        ),
        (9, "gates.0.command_json_path.assertion", "unknown assertion"),
    ),
    ("scenario_duplicate_key", lambda t: t + "task: again\n", (10, "task", "duplicate key")),
    ("scenario_missing_task", lambda t: t.replace("task: do it\n", ""), (1, "task", "required")),
    ("scenario_bad_yaml", lambda t: t + "gates: [\n", (None, None, "invalid YAML")),
    (
        "rubric_weights",
        lambda t: (
            t + "evaluation:\n  judge: {enabled: true, rubric: r.yaml, "
            "pass_threshold: 0.7, model: openai/x}\n"
        ),
        ("r.yaml", None, "sum to 1"),
    ),
    (
        "rubric_missing",
        lambda t: (
            t + "evaluation:\n  judge: {enabled: true, rubric: nope.yaml, "
            "pass_threshold: 0.7, model: openai/x}\n"
        ),
        (None, None, "nope.yaml"),
    ),
]


@pytest.mark.parametrize(("name", "change", "where"), SCENARIOS, ids=[c[0] for c in SCENARIOS])
def test_bad_scenarios_and_rubrics(tmp_path, capsys, name, change, where):
    tool = tmp_path / "tool.py"
    tool.write_text("def bashkit_builtin(ctx):\n    return 'ok\\n'\n")
    (tmp_path / "r.yaml").write_text(
        "criteria:\n  - {id: a, weight: 0.5, description: A}\n"
        "  - {id: b, weight: 0.6, description: B}\n"
    )
    path = tmp_path / "s.yaml"
    path.write_text(change(SCENARIO.format(tool=tool)))
    out = tmp_path / "runs"
    code, err = run_cli(["run", str(path), "--model", "reference", "--out", str(out)], capsys)
    assert code == 2, err
    line, field, text = where
    if line == "r.yaml":  # the error is in the rubric the scenario names
        check_message(err, tmp_path / "r.yaml", (None, field, text))
    else:
        check_message(
            err, path if text != "nope.yaml" else tmp_path / "nope.yaml", (line, field, text)
        )
    assert not out.exists()


def test_the_corpus_is_large_enough():
    assert len(DATASETS) + len(SCRIPTS) + len(PRICES) + len(SCENARIOS) >= 30


def test_line_and_paragraph_separators_inside_strings_do_not_split_records(tmp_path):
    from evalnb._formats.tasks import load_tasks

    prompt = "first\u2028second\u2029third\u0085fourth"
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(task(prompt=prompt), ensure_ascii=False) + "\n" + jsonl(task(id="b"))
    )
    assert [t.prompt for t in load_tasks(path)] == [prompt, "p"]
