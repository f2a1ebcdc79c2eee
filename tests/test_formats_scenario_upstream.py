"""llm-tool-test scenario YAML as written upstream: it runs unchanged, or the error names why."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._cli import main
from evalnb._formats.scenario import load_scenario
from evalnb.errors import InputError

SCENARIOS = Path(__file__).parents[2] / "shared" / "fixtures" / "llm-tool-test" / "scenarios"

# Written the way llm-tool-test's own scenarios are (qipu's setup_test.yaml, the
# upstream example_basic.yaml): template_folder, tier 0, a target that is only a binary,
# task.prompt, setup.commands, gates with descriptions, run.timeout_secs.
UPSTREAM = """\
name: kv_upstream
description: "Store a key with the kv tool"
template_folder: kvtool
tier: 0
tags: [smoke]
target:
  binary: kv
  command_pattern: "kv\\\\s+(\\\\S+)"
task:
  prompt: "Store a=1 with ./kv, then check it."
setup:
  commands:
    - chmod +x kv
evaluation:
  gates:
    - type: file_exists
      path: store.txt
      description: The store file exists
    - type: command_output_contains
      command: ./kv get a
      substring: "1"
      description: The key was stored
run:
  timeout_secs: 20
"""
KV = """\
import sys
from pathlib import Path
store = Path("store.txt")
data = dict(line.split("=", 1) for line in store.read_text().split()) if store.exists() else {}
cmd, *args = sys.argv[1:]
if cmd == "set":
    data[args[0]] = args[1]
    store.write_text("".join(f"{k}={v}\\n" for k, v in data.items()))
elif cmd == "get":
    print(data[args[0]])
"""


def _upstream(folder: Path) -> Path:
    template = folder / "templates" / "kvtool"
    template.mkdir(parents=True)
    (template / "kv.py").write_text(KV)
    (template / "kv").write_text(
        f'#!/usr/bin/env bash\nexec {sys.executable} "$(dirname "$0")/kv.py" "$@"\n'
    )
    path = folder / "kv_upstream.yaml"
    path.write_text(UPSTREAM)
    return path


def test_an_upstream_scenario_loads_as_written(tmp_path):
    scenario = load_scenario(_upstream(tmp_path))
    assert scenario.task == "Store a=1 with ./kv, then check it."
    assert (scenario.tier, scenario.target.mode) == (0, "local")
    assert scenario.fixture == (tmp_path / "templates" / "kvtool").resolve()
    assert scenario.run.timeout == 20  # the run's budget caps each command
    assert [g.description for g in scenario.gates] == [
        "The store file exists",
        "The key was stored",
    ]


def test_an_upstream_scenario_runs_unchanged(tmp_path, capsys):
    path = _upstream(tmp_path)
    agent = tmp_path / "agents" / "kvagent.yaml"
    agent.parent.mkdir()
    agent.write_text(json.dumps({"turns": [{"commands": ["./kv set a 1", "./kv get a"]}]}))
    code = main(
        [
            "run",
            str(path),
            "--model",
            f"scripted:{agent}",
            "--out",
            str(tmp_path / "runs"),
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    runs = load(tmp_path / "runs")
    assert runs.tasks.select("task_id", "outcome", "gates_passed", "gates_total").row(0) == (
        "kv_upstream",
        "pass",
        2,
        2,
    )
    assert runs.tool_calls.get_column("commands").to_list() == ["./kv set a 1", "./kv get a"]


def test_the_real_upstream_scenarios_name_what_is_missing_or_unsupported(tmp_path):
    if not SCENARIOS.is_dir():
        pytest.skip("../shared/fixtures/llm-tool-test/scenarios is absent")
    with pytest.raises(
        InputError, match=r"capture_basic\.yaml:\d+: template_folder: folder qipu not found"
    ):
        load_scenario(SCENARIOS / "capture_basic.yaml")
    with pytest.raises(
        InputError,
        match=r"example_basic\.yaml:\d+: scripts: not supported: evalnb does not run "
        r"llm-tool-test's scripts\.evaluators, scripts\.post",
    ):
        load_scenario(SCENARIOS / "example_basic.yaml")


def test_capture_basic_loads_once_its_template_and_rubric_exist(tmp_path):
    if not SCENARIOS.is_dir():
        pytest.skip("../shared/fixtures/llm-tool-test/scenarios is absent")
    shutil.copy(SCENARIOS / "capture_basic.yaml", tmp_path)
    (tmp_path / "templates" / "qipu").mkdir(parents=True)
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "capture_v1.yaml").write_text(
        "criteria:\n  - {id: facts, weight: 1.0, description: Three facts}\n"
    )
    scenario = load_scenario(tmp_path / "capture_basic.yaml")
    assert scenario.target.binary == "qipu"
    assert [g.type for g in scenario.gates] == ["command_output_contains", "script"]
    assert scenario.evaluation.judge_enabled


def test_a_task_mapping_with_other_keys_is_refused_by_name(tmp_path):
    path = _upstream(tmp_path)
    path.write_text(path.read_text().replace("task:\n", "task:\n  docs: x\n"))
    with pytest.raises(
        InputError, match=r"task: .*only 'prompt' is read from a task mapping, not \['docs'\]"
    ):
        load_scenario(path)


def test_scripts_are_refused_at_their_own_line_naming_only_the_keys_used(tmp_path, capsys):
    if not SCENARIOS.is_dir():
        pytest.skip("../shared/fixtures/llm-tool-test/scenarios is absent")
    source = (SCENARIOS / "example_basic.yaml").read_text()
    line = source.splitlines().index("scripts:") + 1  # recount: where the key is written
    with pytest.raises(InputError) as caught:
        load_scenario(SCENARIOS / "example_basic.yaml")
    assert str(caught.value).startswith(f"{SCENARIOS / 'example_basic.yaml'}:{line}: scripts: ")
    # only post hooks: only scripts.post is named; `evalnb run` exits 2 with it, nothing run
    only_post = tmp_path / "only_post.yaml"
    body = source[: source.index("scripts:")]
    only_post.write_text(body + "scripts:\n  post:\n    - command: ./hook.sh\n")
    (tmp_path / "fixtures").mkdir()
    with pytest.raises(InputError, match=r"does not run llm-tool-test's scripts\.post \("):
        load_scenario(only_post)
    agent = tmp_path / "agent.yaml"
    agent.write_text(json.dumps({"turns": [{"commands": ["true"]}]}))
    out = tmp_path / "runs"
    assert main(["run", str(only_post), "--model", f"scripted:{agent}", "--out", str(out)]) == 2
    assert f"only_post.yaml:{line}: scripts: not supported" in capsys.readouterr().err
    assert not out.exists()
