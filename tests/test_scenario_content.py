"""The notes scenarios in data/scenarios: they load, cover spec 002's gates, and tell a
good scripted agent from a bad one.

Each scenario has two scripted agents in tests/scripts: ``<name>.good.yaml`` completes
the task and must pass every gate; ``<name>.bad.yaml`` makes a realistic mistake and
must fail exactly the gates listed in ``BAD_FAILS`` (worked out by hand from the bad
script and the gates). The judge-enabled scenario runs with a fixed-verdict judge
provider (no model is called).
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from evalnb._analysis.interaction import interaction
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._formats.scenario import load_rubric, load_scenario
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import ScenarioCase, load_scenario_cases
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse
from evalnb.records.scenario import ASSERTION

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SCENARIO_DIR = DATA / "scenarios"
TOOL_DIR = DATA / "tools" / "notes"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
SCENARIOS = sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))

GATE_TYPES = {
    "command_succeeds",
    "command_output_contains",
    "command_output_matches",
    "command_json_path",
    "file_exists",
    "file_contains",
    "file_matches",
    "no_transcript_errors",
    "script",
}

BAD_FAILS = {
    # creates the notes without the meeting tag after a failed `notes new`
    "notes_capture": {1, 5},
    # `notes link A -> B` links nothing: the link counts and n4's link line fail
    "notes_link": {0, 1, 3},
    # answer.txt holds the whole search output and the note is never tagged
    "notes_search": {1, 3, 4},
    # `#finance` is a comment (usage error) and the vendor note is missed
    "notes_tagging": {0, 3, 4, 5},
    # deletes the store: doctor passes on an empty store, everything else fails
    "notes_repair": {1, 2, 3, 4, 5},
    # no export.json, no total, no tag sections
    "notes_export_report": {0, 1, 2, 3, 5, 6, 7},
    # `notes delete n2 n4` is a usage error, so nothing is deleted
    "notes_cleanup": {0, 1, 2, 5},
}


class FixedJudge:
    """A judge provider that always submits the same scores (no model is called)."""

    provider, model, simulated, recording = "fixed", "judge", False, None

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Submit the fixed judgement through the judge's tool."""
        verdict = {
            "scores": self.scores,
            "confidence": 0.9,
            "issues": [],
            "highlights": ["fixed verdict"],
        }
        verdict["weighted_score"] = 0.0  # evalnb recomputes it from the rubric
        use = ToolUse(id="judge_1", name=request.tools[0].name, input=verdict)
        return ChatResponse("", [use], "tool_use", 0, 0)

    def settings(self) -> dict[str, str]:
        """Nothing to configure."""
        return {}


GENEROUS = {"command_correctness": 1.0, "task_completion": 1.0, "efficiency": 0.5}
"""Weighted 0.3 * 1 + 0.4 * 1 + 0.3 * 0.5 = 0.85 with data/tools/notes/rubric.yaml."""


def run_scenario(name: str, agent: str, out: Path, judge: FixedJudge | None = None) -> Runs:
    """Run one scenario with one scripted agent; return the run's tables."""
    path = SCENARIO_DIR / f"{name}.yaml"
    scenario = load_scenario(path)
    if scenario.evaluation.judge_enabled:
        cases = [ScenarioCase(scenario, judge=judge or FixedJudge(GENEROUS))]
    else:
        cases = load_scenario_cases(path)
    script = SCRIPTS / f"{name}.{agent}.yaml"
    [folder] = asyncio.run(run_cases(cases, [f"scripted:{script}"], out, progress=False))
    return read_run_folder(folder)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """``played(name, agent)``: the run of a scenario with its good or bad agent, run once."""
    out = tmp_path_factory.mktemp("played")
    return functools.cache(lambda name, agent: run_scenario(name, agent, out / name / agent))


def gate_results(runs: Runs) -> list[tuple[bool, str]]:
    """(passed, detail) of each gate, in declaration order."""
    gates = runs.checks.filter(layer="gate")
    return list(zip(gates["passed"], gates["detail"], strict=True))


# --- the files ------------------------------------------------------------------------


def test_there_are_at_least_six_scenarios_each_with_two_agents():
    assert len(SCENARIOS) >= 6
    for name in SCENARIOS:
        assert (SCRIPTS / f"{name}.good.yaml").is_file()
        assert (SCRIPTS / f"{name}.bad.yaml").is_file()
    assert set(BAD_FAILS) == set(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_loads_and_targets_the_notes_tool(name):
    scenario = load_scenario(SCENARIO_DIR / f"{name}.yaml")
    assert scenario.name == name
    assert scenario.target.binary == "notes"
    assert scenario.target.health_check == "notes --version"
    assert re.search(scenario.target.pattern, "cd x && notes list --tag a").group(1) == "list"
    assert re.search(scenario.target.pattern, "cat .notes/store.json") is None
    assert scenario.guidance is not None and scenario.guidance.file.parent == TOOL_DIR
    assert scenario.gates


def test_scenarios_use_every_gate_type_and_assertion_form():
    scenarios = [load_scenario(SCENARIO_DIR / f"{n}.yaml") for n in SCENARIOS]
    gates = [g for s in scenarios for g in s.gates]
    assert {g.type for g in gates} == GATE_TYPES
    forms = set()
    for gate in gates:
        if gate.type == "command_json_path":
            match = ASSERTION.match(gate.assertion)
            forms.add(gate.assertion.split()[0] if not match["op"] else f"len {match['op']}")
    assert forms == {"exists", "equals", "contains", "len >=", "len ==", "len >"}


def test_scenarios_mix_modes_judge_and_composite():
    scenarios = [load_scenario(SCENARIO_DIR / f"{n}.yaml") for n in SCENARIOS]
    modes = [s.target.mode for s in scenarios]
    assert modes.count("local") >= 2
    assert modes.count("builtin") > modes.count("local")
    for s in scenarios:
        if s.target.mode == "local":
            assert (s.target.path / "notes").is_file()
    judged = [s for s in scenarios if s.evaluation.judge_enabled]
    assert [s.name for s in judged] == ["notes_export_report"]
    config = judged[0].evaluation.judge
    assert (config.rubric, config.pass_threshold) == (TOOL_DIR / "rubric.yaml", 0.7)
    assert [s.name for s in scenarios if s.evaluation.composite] == ["notes_export_report"]


def test_rubrics_have_the_spec_criteria():
    rubric = load_rubric(TOOL_DIR / "rubric.yaml")
    assert [(c.id, c.weight) for c in rubric.criteria] == [
        ("command_correctness", 0.3),
        ("task_completion", 0.4),
        ("efficiency", 0.3),
    ]
    guidance = load_rubric(TOOL_DIR / "rubric.guidance.yaml")
    assert [(c.id, c.weight) for c in guidance.criteria] == [
        ("documentation_sufficiency", 0.5),
        ("workflow_clarity", 0.5),
    ]


@functools.cache
def _tool():
    """The notes tool as a module (not registered in sys.modules: test_notes_tool owns it)."""
    spec = importlib.util.spec_from_file_location("notes_for_guidance", TOOL_DIR / "notes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _examples(markdown: str) -> list[str]:
    """`notes ...` commands in backticks or indented code, cut before pipes, redirects and
    ``# `` comments (``#word`` stays: the shell decides what it means)."""
    found = re.findall(r"`(notes [^`]+)`", markdown)
    found += re.findall(r"(?m)^    (notes .+)$", markdown)
    return [re.split(r"\s[|>]|\s# ", c)[0].strip() for c in found if "<" not in c]


def _exit_codes(markdown: str) -> dict[str, int]:
    """Each example's exit code against a store holding notes n1 to n4."""
    notes = _tool()
    codes = {}
    for example in _examples(markdown):
        store = notes.MemoryStorage()
        notes.run(["init"], store, {})
        for title in "ABCD":
            notes.run(["create", "--title", title], store, {})
        codes[example] = notes.run(shlex.split(example, comments=True)[1:], store, {}).exit_code
    return codes


def test_v2_guidance_examples_all_work():
    codes = _exit_codes((TOOL_DIR / "AGENTS.v2.md").read_text())
    assert len(codes) >= 15
    assert {c: code for c, code in codes.items() if code != 0} == {}


def test_v1_guidance_examples_mislead():
    codes = _exit_codes((TOOL_DIR / "AGENTS.v1.md").read_text())
    failing = {c for c, code in codes.items() if code != 0}
    assert failing == {'notes new "Standup"', "notes link n1 -> n2", "notes tag n1 #meeting"}
    assert {c for c in codes if c not in failing} == {"notes list", "notes doctor"}


# --- the scripted agents --------------------------------------------------------------------


@pytest.mark.parametrize("name", SCENARIOS)
def test_good_agent_passes_every_gate(name, played):
    runs = played(name, "good")
    task = runs.tasks.row(0, named=True)
    assert task["error"] is None
    failed = [detail for passed, detail in gate_results(runs) if not passed]
    assert failed == []
    assert task["outcome"] == "pass"


@pytest.mark.parametrize("name", SCENARIOS)
def test_bad_agent_fails_the_gates_it_should(name, played):
    runs = played(name, "bad")
    task = runs.tasks.row(0, named=True)
    assert task["error"] is None
    failed = {i for i, (passed, _) in enumerate(gate_results(runs)) if not passed}
    assert failed == BAD_FAILS[name]
    assert task["outcome"] == "fail"


@pytest.mark.parametrize(
    ("name", "total", "errors", "help_calls"),
    [
        # list, link n2 -> n1 (exit 1), link --help, link n2 n1, link n4 n1, show, doctor
        ("notes_link", 7, 1, 1),
        # search, tag --help, three tag commands, two list commands
        ("notes_tagging", 7, 0, 1),
        # doctor (exit 1: the store is broken), doctor, list; jq on .notes/ is not the tool
        ("notes_repair", 3, 1, 0),
        # --help, list, delete n2, delete n4, doctor, list
        ("notes_cleanup", 6, 0, 1),
    ],
)
def test_good_agents_help_seeking_and_recovered_errors(name, total, errors, help_calls, played):
    runs = played(name, "good")
    pattern = load_scenario(SCENARIO_DIR / f"{name}.yaml").target.pattern
    metrics = interaction(runs, pattern).row(0, named=True)
    assert (metrics["total_commands"], metrics["error_count"]) == (total, errors)
    assert metrics["help_invocations"] == help_calls


def test_script_gate_verdict_can_come_from_json(played):
    runs = played("notes_search", "good")
    script = runs.checks.filter(kind="script").row(0, named=True)
    assert (script["passed"], script["detail"]) == (True, "n4 mentions Kubernetes")


def test_judged_scenario_outcome_and_composite(played):
    good = played("notes_export_report", "good").tasks.row(0, named=True)
    # 9/9 gates, judge 0.85, first-try success 1/1 (the only notes command is the export)
    assert good["judge_score"] == pytest.approx(0.85)
    assert good["composite_score"] == pytest.approx(0.5 * 1 + 0.3 * 0.85 + 0.2 * 1)
    bad = played("notes_export_report", "bad").tasks.row(0, named=True)
    # 2/9 gates pass; its one notes command (`notes list >> report.md`) succeeded
    assert bad["composite_score"] == pytest.approx(0.5 * 2 / 9 + 0.3 * 0.85 + 0.2 * 1)


def test_judged_scenario_fails_below_the_threshold_even_when_gates_pass(tmp_path):
    stingy = FixedJudge(dict.fromkeys(GENEROUS, 0.6))  # weighted 0.6 < 0.7
    runs = run_scenario("notes_export_report", "good", tmp_path, judge=stingy)
    task = runs.tasks.row(0, named=True)
    assert all(passed for passed, _ in gate_results(runs))
    assert task["judge_score"] == pytest.approx(0.6)
    assert task["outcome"] == "fail"
