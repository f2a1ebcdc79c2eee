"""Spec 002 scoring in layers: gates, judge and outcome reported apart, never blended.

Four scenarios run with the real ``notes`` tool (as a bashkit builtin and as the real
executable in the local sandbox), a scripted agent and a judge served by the real
Anthropic SDK over mocked HTTP. Each scenario has the same three gates:

- G1 ``notes show n1`` exits 0 (a note was created),
- G2 ``notes list`` prints ``Standup``,
- G3 ``no_transcript_errors`` (no ``notes`` command failed),

and a judge with two criteria of weight 0.5 and ``pass_threshold`` 0.7. By hand:

==========  ==========================================  =====  =====================  =======
scenario    agent runs                                  gates  judge (weighted)       outcome
==========  ==========================================  =====  =====================  =======
s1_good     init, create Standup                        3/3    1.0, 0.6 -> 0.8 pass   pass
s2_judged   init, create Standup, list                  3/3    0.6, 0.6 -> 0.6 fail   fail
s3_typo     init, crate (exit 2), create Standup        2/3    1.0, 1.0 -> 1.0 pass   fail
s4_idle     init                                        1/3    0.2, 0.6 -> 0.4 fail   fail
==========  ==========================================  =====  =====================  =======

(s4: G1 fails, no n1; G2 fails, nothing listed; G3 passes, ``notes init`` exited 0.)
s1's efficiency 0.6 is below the threshold, yet it fails nothing: spec 002 has no
per-criterion pass/fail.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.categories import by_category
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._analysis.summary import summary
from evalnb._formats.scenario import load_scenario
from evalnb._present.report import report_markdown, terminal_report
from evalnb._resources import data_path
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb._scoring.judge import JUDGE_ENV
from tests.http_fixtures import MockAPI, anthropic_message, anthropic_ok

NOTES = data_path("tools", "notes")
MODES = {
    "builtin": f"builtin: {NOTES / 'notes.py'}:bashkit_builtin",
    "local": f"mode: local\n  path: {NOTES / 'bin'}",
}
SCENARIO = """\
name: {name}
category: layers
target:
  binary: notes
  {mode}
task: Create a note titled Standup.
gates:
  - {{type: command_succeeds, command: notes show n1}}
  - {{type: command_output_contains, command: notes list, substring: Standup}}
  - {{type: no_transcript_errors}}
evaluation:
  judge: {{rubric: rubric.yaml, pass_threshold: 0.7}}
{run}"""
CREATE = "notes create --title Standup"
AGENTS = {
    "s1_good": ["notes init", CREATE],
    "s2_judged": ["notes init", CREATE, "notes list"],
    "s3_typo": ["notes init", "notes crate --title Standup", CREATE],
    "s4_idle": ["notes init"],
}
JUDGE = {  # (task_completion, efficiency)
    "s1_good": (1.0, 0.6),
    "s2_judged": (0.6, 0.6),
    "s3_typo": (1.0, 1.0),
    "s4_idle": (0.2, 0.6),
}


@pytest.fixture(autouse=True)
def no_credentials_in_env(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", JUDGE_ENV):
        monkeypatch.delenv(name, raising=False)


def judge_reply(task_completion: float, efficiency: float):
    block = {
        "type": "tool_use",
        "id": "toolu_01JudgeLayers0000000001",
        "name": "submit_judgement",
        "input": {
            "scores": {"task_completion": task_completion, "efficiency": efficiency},
            "weighted_score": 0.5 * task_completion + 0.5 * efficiency,
            "confidence": 0.9,
            "issues": [],
            "highlights": [],
        },
    }
    return anthropic_ok(anthropic_message(block, stop_reason="tool_use"))


def run_layers(tmp_path: Path, mode: str, limits: dict[str, str]):
    """Run the four scenarios one at a time (the judge answers in order); return the Runs."""
    (tmp_path / "rubric.yaml").write_text(
        "criteria:\n"
        "  - {id: task_completion, weight: 0.5, description: Done}\n"
        "  - {id: efficiency, weight: 0.5, description: Direct}\n"
    )
    api = MockAPI(*(judge_reply(*JUDGE[name]) for name in AGENTS))
    judge = AnthropicProvider(
        "claude-haiku-4-5", api_key="test-key", http_client=api.client(), max_retries=0
    )
    cases = []
    for name in AGENTS:
        path = tmp_path / f"{name}.yaml"
        path.write_text(SCENARIO.format(name=name, mode=MODES[mode], run=limits.get(name, "")))
        cases.append(ScenarioCase(load_scenario(path), judge=judge))
    agent = tmp_path / "agent.yaml"
    agent.write_text(
        json.dumps({"tasks": {n: [{"commands": c}] for n, c in AGENTS.items()}, "turns": []})
    )
    [folder] = asyncio.run(
        run_cases(cases, [f"scripted:{agent}"], tmp_path / "runs", concurrency=1, progress=False)
    )
    return read_run_folder(folder)


@pytest.mark.parametrize("mode", ["builtin", "local"])
def test_each_layer_has_its_own_columns_and_summary_figures(tmp_path, mode):
    runs = run_layers(tmp_path, mode, {n: "run: {max_turns: 4}\n" for n in AGENTS})
    tasks = runs.tasks.sort("task_id")
    assert tasks.select(
        "task_id", "gates_passed", "gates_total", "judge_score", "outcome", "passed"
    ).rows() == [
        ("s1_good", 3, 3, pytest.approx(0.8), "pass", True),
        ("s2_judged", 3, 3, pytest.approx(0.6), "fail", False),
        ("s3_typo", 2, 3, pytest.approx(1.0), "fail", False),
        ("s4_idle", 1, 3, pytest.approx(0.4), "fail", False),
    ]
    # score/max_score are the gates only: no judge criterion is added to them
    assert tasks.select("score", "max_score").rows() == [(3, 3), (3, 3), (2, 3), (1, 3)]
    assert tasks.get_column("composite_score").null_count() == 4  # none configured

    row = summary(runs).row(0, named=True)
    assert row["pass_rate"] == row["outcome_pass_rate"] == 1 / 4  # only s1
    assert row["gate_pass_rate"] == 2 / 4  # s1 and s2 passed every gate
    assert (row["gates_passed"], row["gates_total"]) == (3 + 3 + 2 + 1, 12)
    assert row["overall_rate"] == 9 / 12  # spec 000's rate = the share of gates passed
    assert row["judge_scored"] == 4
    assert row["judge_score_mean"] == pytest.approx((0.8 + 0.6 + 1.0 + 0.4) / 4)  # 0.7
    assert row["composite_score_mean"] is None

    # the scenarios' own turn limit, not the run's default
    assert runs.runs.get_column("max_turns").to_list() == [4]


def test_reports_label_each_layer_and_invent_no_composite(tmp_path):
    runs = run_layers(tmp_path, "builtin", {})
    text = terminal_report(runs)
    assert "  PASS  s1_good    gates 3/3 · judge 0.8" in text
    assert "  FAIL  s3_typo    gates 2/3 · judge 1" in text
    for line in (
        "    Outcome pass rate: 25.0%",
        "    Gate pass rate (every gate passed): 50.0%",
        "    Gates passed: 9/12",
        "    Mean judge score: 0.7 (4 scored)",
    ):
        assert line in text
    assert "composite" not in text.lower()
    md = report_markdown(runs, summary(runs), by_category(runs))
    assert "| Gates passed | 9/12 |" in md
    assert "#### FAIL s2_judged (epoch 1, layers): gates 3/3 · judge 0.6" in md
    # the judge's one row per attempt: the verdict, weight 0, with the criteria's scores
    judge_rows = runs.checks.filter(pl.col("layer") == "judge").sort("task_id")
    assert judge_rows.select("kind", "weight", "passed").rows() == [
        ("judge_verdict", 0.0, True),
        ("judge_verdict", 0.0, False),
        ("judge_verdict", 0.0, True),
        ("judge_verdict", 0.0, False),
    ]
    assert "scores: task_completion 1.00, efficiency 0.60" in judge_rows.item(0, "detail")


def test_the_run_limit_is_null_when_the_scenarios_limits_differ(tmp_path):
    limits = {"s1_good": "run: {max_turns: 4}\n", "s2_judged": "run: {max_turns: 6}\n"}
    runs = run_layers(tmp_path, "builtin", limits)
    assert runs.runs.get_column("max_turns").to_list() == [None]


def test_a_composite_is_summarised_only_where_a_scenario_configures_one():
    from evalnb._store.tables import tables_from_records
    from evalnb.records import RunMeta, ScenarioResult, Task, TaskRecord, TaskScore

    def record(task_id: str, composite: float | None) -> TaskRecord:
        return TaskRecord(
            task=Task(id=task_id, category="c", prompt="p"),
            score=TaskScore(task_id=task_id, score=1, max_score=1),
            scenario=ScenarioResult(
                outcome="pass", gates_passed=1, gates_total=1, composite_score=composite
            ),
        )

    def run(*composites: float | None):
        meta = RunMeta(run_id="r", provider="p", model="m")
        recs = [record(f"t{i}", c) for i, c in enumerate(composites)]
        runs = Runs(**tables_from_records(meta, recs))
        return summary(runs).item(0, "composite_score_mean"), terminal_report(runs)

    mean, text = run(0.9, None, 0.5)  # one scenario without a composite is left out
    assert mean == pytest.approx((0.9 + 0.5) / 2)
    assert "    Mean composite score (configured): 0.7" in text
    mean, text = run(None, None)
    assert mean is None and "composite" not in text.lower()
    assert "    Mean judge score: no judge score" in text
