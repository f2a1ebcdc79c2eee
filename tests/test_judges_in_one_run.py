"""Several judges in one run (``--judge`` given twice): each rates every scenario attempt,
the first alone decides; their agreement comes from that one run.

Six scenarios run the real ``notes`` tool (a bashkit builtin) under a scripted agent whose
share of failing ``notes`` commands differs per scenario, two epochs each, judged offline
by the simulated judges ``sim/careful`` and ``sim/hasty`` (``sim_judge``: the share of
tool calls that exited 0, plus each persona's noise). Independent recounts: every rating
is read back from ``events.jsonl`` (not the tables) and alpha is the ``krippendorff``
package's on those ratings.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb as en
from evalnb._analysis.cost import Price, Prices
from evalnb._analysis.judge_agreement import judge_agreement, judge_scores
from evalnb._cli import main
from evalnb._display import number
from evalnb._formats.scenario import load_scenario
from evalnb._present.report_html import report_html
from evalnb._resources import data_path
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.providers.sim import SimProvider
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb._scoring.judge import JUDGE_ENV, run_judge
from evalnb.records import AgentTrace, Task, ToolCallResult
from evalnb.records.scenario import Rubric
from tests.fault_server import FaultServer
from tests.http_fixtures import (
    MockAPI,
    anthropic_message,
    anthropic_ok,
    openai_completion,
    openai_ok,
    openai_tool_call,
)
from tests.test_runner import crash_after

krippendorff = pytest.importorskip("krippendorff")

NOTES = data_path("tools", "notes")
SCENARIO = """\
name: {name}
category: judged
target:
  binary: notes
  builtin: {builtin}
task: Create a note titled Standup.
gates:
  - {{type: command_succeeds, command: notes show n1}}
evaluation:
  judge: {{rubric: ../rubric.yaml, pass_threshold: 0.7}}
"""
CREATE = "notes create --title Standup"
AGENTS = {  # tool calls that exit 0 / all: 1, 2/3, 1/2, 2/5, 0, 1
    "j0_clean": ["notes init", CREATE],
    "j1_typo": ["notes init", "notes crate --title Standup", CREATE],
    "j2_typos": ["notes init", "notes crate a", "notes crate b", CREATE],
    "j3_lost": ["notes init", "notes nope", "notes nada", "notes crate c", CREATE],
    "j4_broken": ["notes crate d"],
    "j5_idle": ["notes init"],
}
TWO = ["--judge", "sim/careful", "--judge", "sim/hasty"]


@pytest.fixture(autouse=True)
def no_judge_from_the_environment(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", JUDGE_ENV):
        monkeypatch.delenv(name, raising=False)


def write_suite(folder: Path) -> tuple[Path, Path]:
    """The six judged scenarios and the scripted agent: ``(scenario folder, agent file)``."""
    suite = folder / "suite"
    suite.mkdir(parents=True)
    (folder / "rubric.yaml").write_text(
        "criteria:\n"
        "  - {id: task_completion, weight: 0.6, description: Done}\n"
        "  - {id: efficiency, weight: 0.4, description: Direct}\n"
    )
    builtin = f"{NOTES / 'notes.py'}:bashkit_builtin"
    for name in AGENTS:
        (suite / f"{name}.yaml").write_text(SCENARIO.format(name=name, builtin=builtin))
    agent = folder / "agent.yaml"
    agent.write_text(
        json.dumps({"tasks": {n: [{"commands": c}] for n, c in AGENTS.items()}, "turns": []})
    )
    return suite, agent


def run(suite: Path, agent: Path, out: Path, *flags: str) -> Path:
    """``evalnb run`` of the suite with ``flags``; the one run folder written."""
    argv = ["run", str(suite), "--model", f"scripted:{agent}", "--epochs", "2"]
    assert main([*argv, "--out", str(out), "--quiet", *flags]) == 0
    [folder] = out.iterdir()
    return folder


def recorded_ratings(*folders: Path) -> dict[tuple[str, int], dict[str, float]]:
    """Every judge's score of every attempt, read from the events of ``folders`` (the
    replays' under their source run's attempts, as task and epoch)."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    for folder in folders:
        for line in (folder / "events.jsonl").read_text().splitlines():
            event = json.loads(line)
            if event["event"] == "task_finished":
                scenario = event["record"]["scenario"]
                key = (event["task_id"], event["epoch"])
                out.setdefault(key, {}).update(
                    {r["judge_model"]: r["judge_score"] for r in scenario["judges"]}
                )
    return out


def table_ratings(runs: en.Runs) -> dict[tuple[str, int], dict[str, float]]:
    """The same, from :func:`judge_scores` of loaded runs."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    for _, task_id, epoch, judge, score in judge_scores(runs).iter_rows():
        out.setdefault((task_id, epoch), {})[judge] = score
    return out


def package_alpha(ratings: dict[tuple[str, int], dict[str, float]], judges: list[str]) -> float:
    units = [[r.get(j, np.nan) for j in judges] for _, r in sorted(ratings.items())]
    return krippendorff.alpha(
        reliability_data=np.array(units, dtype=float).T, level_of_measurement="interval"
    )


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The suite, run once with both judges and once with only the first."""
    root = tmp_path_factory.mktemp("judges")
    suite, agent = write_suite(root)
    both = run(suite, agent, root / "both", *TWO)
    first = run(suite, agent, root / "first", "--judge", "sim/careful")
    return suite, agent, both, first


def test_every_judge_rates_every_attempt_and_alpha_is_the_krippendorff_packages(judged):
    _, _, both, _ = judged
    ratings = recorded_ratings(both)
    assert len(ratings) == 12
    assert all(list(r) == ["sim/careful", "sim/hasty"] for r in ratings.values())
    careful = [r["sim/careful"] for r in ratings.values()]
    hasty = [r["sim/hasty"] for r in ratings.values()]
    assert careful != hasty and len(set(careful)) > 2  # they disagree, on varied attempts

    row = judge_agreement(en.load(both)).row(0, named=True)
    assert (row["raters"], row["attempts"]) == ("sim/careful, sim/hasty", 12)
    assert row["alpha"] == pytest.approx(package_alpha(ratings, ["sim/careful", "sim/hasty"]))
    assert row["alpha_lo"] <= row["alpha"] <= row["alpha_hi"]


def test_the_judges_command_and_report_html_show_the_agreement_of_one_run(judged, capsys):
    _, _, both, _ = judged
    assert main(["judges", str(both), "--json"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    expected = judge_agreement(en.load(both)).row(0, named=True)
    assert json.loads(line) == pytest.approx(expected)
    page = report_html(en.load(both))
    agreement = page[page.index("<h2>Judge agreement</h2>") :]
    assert "sim/careful, sim/hasty" in agreement[:3000]


def test_report_labels_reach_the_judge_agreement_of_report_html(judged, tmp_path, capsys):
    _, _, _, first = judged  # one judge: without labels report.html has no agreement section
    careful = {key: r["sim/careful"] for key, r in recorded_ratings(first).items()}
    labels = tmp_path / "labels.csv"
    person = {key: "pass" if score >= 0.5 else "fail" for key, score in careful.items()}
    labels.write_text(
        "task_id,epoch,label\n" + "".join(f"{t},{e},{v}\n" for (t, e), v in person.items())
    )
    out = tmp_path / "report"
    assert main(["report", str(first), "--out", str(out), "--labels", str(labels)]) == 0
    page = (out / "report.html").read_text()
    section = page[page.index("<h2>Judge agreement</h2>") : page.index("<h2>Charts</h2>")]
    assert "human labels, sim/careful" in section
    # the alpha shown is the krippendorff package's over the labels and the judge's ratings
    ratings = {k: {"person": float(v == "pass"), "judge": careful[k]} for k, v in person.items()}
    alpha = package_alpha(ratings, ["person", "judge"])
    assert f"<td>{number(alpha)} [" in section  # a number with its interval, not a rate
    assert "Judge agreement" not in report_html(en.load(first))

    # bad labels: exit 2 naming the file, line and field, and no report written
    labels.write_text("task_id,epoch,label\nj0_clean,1,maybe\n")
    capsys.readouterr()
    fresh = tmp_path / "fresh"
    assert main(["report", str(first), "--out", str(fresh), "--labels", str(labels)]) == 2
    assert "labels.csv:2: label: 'maybe'" in capsys.readouterr().err
    assert not fresh.exists() or not any(fresh.iterdir())


def test_the_second_judge_never_changes_the_outcome_or_the_checks(judged):
    _, _, both, first = judged
    decided = [
        "task_id",
        "epoch",
        "passed",
        "outcome",
        "outcome_reason",
        "judge_model",
        "judge_score",
        "score",
        "max_score",
    ]
    two, one = en.load(both), en.load(first)
    assert (
        two.tasks.select(decided)
        .sort("task_id", "epoch")
        .equals(one.tasks.select(decided).sort("task_id", "epoch"))
    )
    checks = ["task_id", "epoch", "layer", "check", "passed", "detail", "weight"]
    assert (
        two.checks.select(checks)
        .sort(checks[:4])
        .equals(one.checks.select(checks).sort(checks[:4]))
    )
    # the judge's rating is the first of each attempt's ratings, and decides
    firsts = two.tasks.select("judge_model", "judge_score", first=pl.col("judges").list.first())
    assert firsts.select("judge_model", "judge_score").rows() == [
        (r["judge_model"], r["judge_score"]) for r in firsts.get_column("first")
    ]
    # where the second judge's own verdict is fail, the attempt still passes (j1_typo)
    overruled = two.tasks.filter(
        pl.col("passed") & ~pl.col("judges").list.last().struct.field("passed")
    )
    assert set(overruled.get_column("task_id")) == {"j1_typo"}


def test_resume_judges_the_attempts_left_with_the_recorded_judges(judged, tmp_path, capsys):
    suite, agent, both, _ = judged
    crashed = run(suite, agent, tmp_path / "crashed", *TWO)
    events = (crashed / "events.jsonl").read_text().splitlines()
    finished = [i for i, line in enumerate(events) if '"task_finished"' in line]
    crash_after(crashed, finished[4] + 1, torn=False)  # five attempts done
    partial = en.load(crashed)  # read from its events
    assert partial.runs.get_column("status").to_list() == ["partial"]
    assert judge_scores(partial).height == 10

    assert main(["run", "--resume", str(crashed), "--quiet", "--judge", "sim/flailing"]) == 2
    assert "--judge: run.json records it" in capsys.readouterr().err
    assert main(["run", "--resume", str(crashed), "--quiet"]) == 0
    assert recorded_ratings(crashed) == recorded_ratings(both)
    assert table_ratings(en.load(crashed)) == recorded_ratings(both)
    assert judge_agreement(en.load(crashed)).equals(judge_agreement(en.load(both)))


def test_shards_merged_keep_every_judges_ratings(judged, tmp_path):
    suite, agent, both, _ = judged
    shards = [run(suite, agent, tmp_path / f"s{i}", *TWO, "--shard", f"{i}/2") for i in (1, 2)]
    assert all(0 < len(recorded_ratings(s)) < 12 for s in shards)
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 0
    merged = en.load(tmp_path / "merged")
    assert table_ratings(merged) == recorded_ratings(both)
    assert judge_agreement(merged).equals(judge_agreement(en.load(both)))


def test_shards_judged_by_other_judges_are_not_merged(judged, tmp_path, capsys):
    suite, agent, _, _ = judged
    one = run(suite, agent, tmp_path / "s1", *TWO, "--shard", "1/2")
    two = run(suite, agent, tmp_path / "s2", "--judge", "sim/careful", "--shard", "2/2")
    assert main(["merge", str(one), str(two), "--out", str(tmp_path / "merged")]) == 2
    assert "settings.judges: differs from" in capsys.readouterr().err
    assert not (tmp_path / "merged").exists()


def test_a_replay_re_scored_by_a_third_judge_joins_the_agreement(judged, tmp_path):
    suite, _, both, _ = judged
    argv = ["run", str(suite), "--model", f"replay:{both}", "--quiet", "--out", str(tmp_path)]
    assert main([*argv, "--judge", "sim/flailing"]) == 0
    [replay] = tmp_path.iterdir()
    judges = ["sim/careful", "sim/flailing", "sim/hasty"]
    row = judge_agreement(en.load(both, replay)).row(0, named=True)
    assert (row["raters"], row["attempts"]) == (", ".join(judges), 12)
    ratings = recorded_ratings(both, replay)
    assert row["alpha"] == pytest.approx(package_alpha(ratings, judges))


def test_the_inspect_export_carries_every_judges_rating(judged, tmp_path):
    pytest.importorskip("inspect_ai")
    from evalnb._formats.inspect_write import write_inspect_log

    _, _, both, _ = judged
    log = write_inspect_log(both, tmp_path / "logs")
    back = en.load(log)
    assert table_ratings(back) == recorded_ratings(both)
    assert judge_agreement(back).equals(judge_agreement(en.load(both)))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--judge", "sim/hasty", "--judge", "sim/hasty"],
            "--judge: judge 'sim/hasty' given twice",
        ),
        (
            ["--judge", "sim/hasty", "--judge", "scripted:AGENT"],
            "the judge scripted:AGENT is a model under test",
        ),
    ],
)
def test_a_judge_given_twice_or_under_test_is_refused(judged, tmp_path, capsys, argv, message):
    suite, agent, _, _ = judged
    argv = [a.replace("AGENT", str(agent)) for a in argv]
    out = tmp_path / "out"
    code = main(["run", str(suite), "--model", f"scripted:{agent}", "--out", str(out), *argv])
    assert code == 2
    assert message.replace("AGENT", str(agent)) in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_bash_tasks_refuse_a_second_judge(capsys, tmp_path):
    argv = ["run", "smoke", "--model", "reference", "--out", str(tmp_path), *TWO]
    assert main(argv) == 2
    assert "--judge: several judges rate scenarios only" in capsys.readouterr().err


def test_judges_are_resolved_only_for_the_scenarios_selected(tmp_path, capsys):
    """The bundled notes suite: paid judges without keys are never built for scenarios
    that are not judged, and a judged one is judged offline by simulated judges."""
    good = Path(__file__).parent / "scripts"
    paid = ["--judge", "openai/gpt-4o-mini", "--judge", "anthropic/claude-haiku-4-5"]
    argv = ["run", "notes", "--quiet", "--out", str(tmp_path / "a")]
    agent = f"scripted:{good / 'notes_capture.good.yaml'}"
    assert main([*argv, "--model", agent, "--task", "notes_capture", *paid]) == 0
    assert judge_scores(en.load(tmp_path / "a")).height == 0

    agent = f"scripted:{good / 'notes_export_report.good.yaml'}"
    argv = ["run", "notes", "--quiet", "--out", str(tmp_path / "b"), "--model", agent]
    assert main([*argv, "--task", "notes_export_report", *TWO]) == 0
    scores = judge_scores(en.load(tmp_path / "b"))
    assert scores.get_column("judge_model").to_list() == ["sim/careful", "sim/hasty"]


def test_paid_judges_through_the_sdks_each_reached_with_the_runs_connection(tmp_path):
    """Two OpenAI-compatible judges on a real local server given by --base-url: each
    judge's requests, its model name and its token counts are its own."""
    suite, agent = write_suite(tmp_path)
    server = FaultServer()
    try:
        argv = ["run", str(suite), "--model", f"scripted:{agent}", "--quiet"]
        argv += ["--judge", "openai/judge-a", "--judge", "openai/judge-b", "--task", "j0_clean"]
        argv += ["--base-url", server.url("judge"), "--out", str(tmp_path / "out")]
        assert main(argv) == 0
    finally:
        server.stop()
    [folder] = (tmp_path / "out").iterdir()
    assert [r["path"] for r in server.requests] == ["/judge/v1/chat/completions"] * 2
    [record] = [
        json.loads(line)["record"]
        for line in (folder / "events.jsonl").read_text().splitlines()
        if '"task_finished"' in line
    ]
    ratings = record["scenario"]["judges"]
    assert [(r["judge_model"], r["judge_score"]) for r in ratings] == [
        ("openai/judge-a", 1.0),
        ("openai/judge-b", 1.0),
    ]
    # the usage FaultServer's completions report (http_fixtures.openai_completion)
    assert {(r["input_tokens"], r["output_tokens"], r["cache_read_tokens"]) for r in ratings} == {
        (1200, 30, 0)
    }


def judge_api(kind: str, weighted: float):
    """A judge on the real Anthropic or OpenAI SDK whose HTTP answers ``submit_judgement``
    with ``task_completion = efficiency = weighted`` (usage: Anthropic 1500 in, of which
    1000 cache reads, 40 out; OpenAI 1200 in, 200 cached, 30 out)."""
    judgement = {
        "scores": {"task_completion": weighted, "efficiency": weighted},
        "weighted_score": weighted,
        "confidence": 0.9,
        "issues": [],
        "highlights": [],
    }
    if kind == "anthropic":
        block = {"type": "tool_use", "id": "toolu_01J", "name": "submit_judgement"}
        body = anthropic_message({**block, "input": judgement}, stop_reason="tool_use")
        body["usage"]["cache_read_input_tokens"] = 1000
        body["usage"]["input_tokens"] = 500  # uncached: 500 + 1000 read = 1500 in all
        api = MockAPI(anthropic_ok(body))
        return AnthropicProvider(
            "claude-haiku-4-5", api_key="k", http_client=api.client(), max_retries=0
        )
    call = openai_tool_call(arguments=json.dumps(judgement))
    call["function"]["name"] = "submit_judgement"
    body = openai_completion(tool_calls=[call], finish_reason="tool_calls", cached_tokens=200)
    api = MockAPI(openai_ok(body))
    return OpenAIProvider("gpt-4o-mini", api_key="k", http_client=api.client(), max_retries=0)


@pytest.mark.parametrize("anthropic_first", [True, False])
def test_only_the_first_paid_judge_decides_and_each_judges_tokens_are_priced(
    tmp_path, anthropic_first
):
    """j0_clean passes its gate. Anthropic scores it 0.9 (pass), OpenAI 0.3 (fail): the
    outcome is whichever judge comes first's. Each judge's cost is recounted by hand."""
    suite, agent = write_suite(tmp_path)
    claude, gpt = judge_api("anthropic", 0.9), judge_api("openai", 0.3)
    judge, extra = (claude, gpt) if anthropic_first else (gpt, claude)
    case = ScenarioCase(load_scenario(suite / "j0_clean.yaml"), judge=judge, extra_judges=[extra])
    [folder] = asyncio.run(
        run_cases([case], [f"scripted:{agent}"], tmp_path / "runs", progress=False)
    )
    runs = en.load(folder)
    task = runs.tasks.row(0, named=True)
    assert (task["outcome"], task["passed"]) == (
        ("pass", True) if anthropic_first else ("fail", False)
    )
    assert task["judge_model"] == (
        "anthropic/claude-haiku-4-5" if anthropic_first else "openai/gpt-4o-mini"
    )
    ratings = {r["judge_model"]: r for r in task["judges"]}
    assert (
        ratings["anthropic/claude-haiku-4-5"]["passed"],
        ratings["openai/gpt-4o-mini"]["passed"],
    ) == (True, False)
    prices = Prices(
        models={
            "claude-haiku-4-5": Price(
                input=1.0, output=5.0, cached_input=0.1, as_of="2026-02", source="test"
            ),
            "gpt-4o-mini": Price(
                input=0.15, output=0.6, cached_input=0.075, as_of="2026-02", source="test"
            ),
            "scripted/*": Price(free=True, source="test"),
        }
    )
    # Anthropic: 500 uncached x $1 + 1000 read x $0.1 + 40 out x $5; OpenAI: 1000
    # uncached x $0.15 + 200 cached x $0.075 + 30 out x $0.6 (per million)
    expected = (500 * 1.0 + 1000 * 0.1 + 40 * 5.0 + 1000 * 0.15 + 200 * 0.075 + 30 * 0.6) / 1e6
    row = en.summary(runs, prices=prices).row(0, named=True)
    assert row["judge_cost_usd"] == pytest.approx(expected, rel=1e-12)
    assert row["cost_usd"] == 0.0  # the model under test's cost leaves the judges out


def test_a_judge_without_a_price_makes_the_judges_cost_unknown(judged):
    _, _, both, _ = judged
    runs = en.load(both)
    assert en.summary(runs).item(0, "judge_cost_usd") == 0.0  # sim/* is free
    free = Price(free=True, source="t")
    prices = Prices(models={"sim/careful": free, "scripted/*": free})
    with pytest.warns(UserWarning, match="no price for judge"):
        assert en.summary(runs, prices=prices).item(0, "judge_cost_usd") is None


def test_a_simulated_judge_scores_the_share_of_calls_that_exited_0_with_its_noise():
    rubric = Rubric(
        criteria=[
            {"id": "a", "weight": 0.5, "description": "A"},
            {"id": "b", "weight": 0.5, "description": "B"},
        ]
    )
    task = Task(id="t", category="c", prompt="p")
    calls = [ToolCallResult(commands=f"c{i}", exit_code=0 if i < 3 else 1) for i in range(4)]

    def score(persona: str) -> float:
        verdict = asyncio.run(
            run_judge(SimProvider(persona), rubric, task, AgentTrace(tool_calls=calls), 0.5)
        )
        assert verdict.error is None and not verdict.flags
        return verdict.score

    assert score("careful") == score("careful")  # the same transcript, the same scores
    assert abs(score("careful") - 0.75) < 0.15  # 3 of 4 calls exited 0; noise 0.05
    empty = asyncio.run(run_judge(SimProvider("careful"), rubric, task, AgentTrace(), 0.5))
    assert empty.score < 0.2  # no tool call: quality 0
