"""llm-tool-test artifacts folders and results.jsonl: gates, outcome and the efficiency block."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._analysis.summary import summary
from evalnb._cli import main
from evalnb.errors import InputError

LTT = Path(__file__).parents[2] / "shared" / "fixtures" / "llm-tool-test"


@pytest.fixture
def ltt() -> Path:
    if not (LTT / "create_smoke" / "run.json").is_file():
        pytest.skip("../shared/fixtures/llm-tool-test is absent")
    return LTT


def _quiet_load(*paths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*paths)


def test_the_results_database_matches_a_recount(ltt):
    db = ltt / "results-llm_test_runs.jsonl"
    records = [json.loads(line) for line in db.read_text().splitlines() if line.strip()]
    runs = load(db)
    assert runs.tasks.height == len(records)
    assert runs.tasks.get_column("passed").sum() == sum(r["outcome"] == "Pass" for r in records)
    gates = [g for r in records for g in r["metrics"]["details"]]
    assert runs.checks.filter(layer="gate").height == len(gates)
    assert runs.checks.get_column("passed").sum() == sum(g["passed"] for g in gates)
    assert runs.tasks.get_column("gates_total").sum() == sum(
        r["metrics"]["gates_total"] for r in records
    )
    efficiency = [r["metrics"]["efficiency"] for r in records]
    assert runs.tasks.get_column("recorded_total_commands").sum() == sum(
        e["total_commands"] for e in efficiency
    )
    assert runs.tasks.get_column("total_input_tokens").null_count() == len(records)  # not recorded
    assert runs.tasks.get_column("judge_score").to_list() == [r["judge_score"] for r in records]


def test_a_record_appended_twice_is_one_attempt_read_once_with_a_warning(ltt, tmp_path):
    (line,) = [x for x in (ltt / "results-llm_test_runs.jsonl").read_text().splitlines() if x]
    twice = tmp_path / "results.jsonl"
    twice.write_text(f"{line}\n{line}\n")
    with pytest.warns(
        UserWarning, match=r"results\.jsonl:2: result .* repeats line 1 byte for byte"
    ):
        runs = load(twice)
    assert runs.tasks.select("task_id", "epoch").rows() == [(json.loads(line)["scenario_id"], 1)]
    other = json.loads(line) | {"duration_secs": 99.0}
    twice.write_text(f"{line}\n{json.dumps(other)}\n")
    with pytest.warns(UserWarning, match=r":2: result .* is also line 1, with other figures"):
        runs = load(twice)
    assert runs.tasks.get_column("epoch").sort().to_list() == [1, 2]


@pytest.mark.parametrize("name", ["create_smoke", "results-llm_test_runs.jsonl"])
def test_a_recorded_cost_of_zero_is_the_cost_not_an_unknown_price(ltt, name):
    source = ltt / name
    text = (source / "run.json").read_text() if source.is_dir() else source.read_text()
    recorded = re.findall(r'"(?:cost_estimate_usd|cost_usd)":\s*([0-9.]+)', text)
    assert recorded and {float(x) for x in recorded} == {0.0}  # the mock adapter's $0.00
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the efficiency block's disagreement
        warnings.filterwarnings("error", message="no price")
        runs = load(source)
        row = summary(runs).row(0, named=True)
    assert (row["cost_usd"], row["recorded_cost_usd"]) == (0.0, 0.0)


def test_an_artifacts_folder_reads_its_gates_from_report_md_and_recounts_commands(ltt):
    folder = ltt / "create_smoke"
    with pytest.warns(UserWarning, match="efficiency block disagrees"):
        runs = load(folder)
    report = (folder / "report.md").read_text()
    outcome = re.search(r"\*\*Outcome\*\*: (\w+)", report).group(1)
    passed, total = map(int, re.search(r"\*\*Gates Passed\*\*: (\d+)/(\d+)", report).groups())
    task = runs.tasks.row(0, named=True)
    assert task["passed"] == (outcome == "Pass")
    assert (task["gates_passed"], task["gates_total"]) == (passed, total)
    recorded = int(re.search(r"\*\*Total Commands\*\*: (\d+)", report).group(1))
    assert task["recorded_total_commands"] == recorded
    # evalnb's own recount: lines of the tool output that start with a command and subcommand
    output = json.loads((folder / "events.jsonl").read_text().splitlines()[0])["output"]
    commands = [
        line for line in output.splitlines() if re.match(r"^\s*[a-z][a-z0-9_.-]*\s+[a-z-]", line)
    ]
    assert runs.tool_calls.get_column("commands").to_list() == commands
    assert task["efficiency_agrees"] is (len(commands) == recorded)
    run = json.loads((folder / "run.json").read_text())
    assert runs.runs.select("provider", "model").row(0) == (run["tool"], run["model"])


def _artifacts(tmp_path: Path, metrics: dict | None, outcome: str | None, output: str) -> Path:
    folder = tmp_path / "attempt"
    folder.mkdir()
    run = {
        "scenario_id": "s1",
        "scenario_hash": "h",
        "tool": "opencode",
        "model": "gpt-x",
        "qipu_version": "1",
        "qipu_commit": "1",
        "timestamp": "2026-01-26T00:00:12.057163942+00:00",
        "duration_secs": 2.5,
        "cost_estimate_usd": 0.01,
        "token_usage": {"input": 100, "output": 20},
    }
    (folder / "run.json").write_text(json.dumps(run))
    event = {"type": "execution", "tool": "opencode", "output": output, "exit_code": 0}
    (folder / "events.jsonl").write_text(json.dumps(event) + "\n")
    if metrics is not None:
        (folder / "metrics.json").write_text(json.dumps(metrics))
    if outcome is not None:
        (folder / "evaluation.md").write_text(
            f"# Evaluation\n\n- **Outcome**: {outcome}\n\n**4** / 5\n"
        )
    return folder


METRICS = {
    "gates_passed": 1,
    "gates_total": 2,
    "details": [
        {"gate_type": "MinNotes", "passed": True, "message": "ok"},
        {"gate_type": "SearchHit", "passed": False, "message": "no hit"},
    ],
    "efficiency": {
        "total_commands": 2,
        "unique_commands": 2,
        "error_count": 1,
        "retry_count": 0,
        "help_invocations": 0,
        "first_try_success_rate": 0.5,
        "iteration_ratio": 1.0,
    },
    "composite_score": 0.5,
}


def test_a_failing_outcome_with_metrics_json_and_an_agreeing_efficiency_block(tmp_path):
    output = "notes add x\nerror: no store\nnotes init\nInitialized.\n"
    folder = _artifacts(tmp_path, METRICS, "Fail: 1/2 gates passed", output)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # agreement: no warning
        runs = load(folder)
    task = runs.tasks.row(0, named=True)
    assert (task["passed"], task["outcome"], task["outcome_reason"]) == (
        False,
        "fail",
        "Fail: 1/2 gates passed",
    )
    assert task["efficiency_agrees"] is True
    # evaluation.md shows upstream's round(score * 5) "**4** / 5": evalnb's 0-1 scale is 4 / 5
    assert (task["judge_score"], task["judge_score_source"]) == (4 / 5, "evaluation.md (N / 5)")
    assert (task["total_input_tokens"], task["duration_ms"]) == (100, 2500.0)
    assert runs.runs.select("started_at", "finished_at").row(0) == (
        "2026-01-26T00:00:09Z",
        "2026-01-26T00:00:12Z",
    )


def test_metrics_json_judge_score_is_kept_on_its_own_0_to_1_scale(tmp_path):
    # upstream metrics.json carries the judge's weighted_score (0-1); evaluation.md only its
    # rounded fifths: the exact figure wins
    output = "notes add x\nerror: no store\nnotes init\nInitialized.\n"
    folder = _artifacts(tmp_path, {**METRICS, "judge_score": 0.73}, "Fail: 1/2 gates", output)
    runs = _quiet_load(folder)
    task = runs.tasks.row(0, named=True)
    assert (task["judge_score"], task["judge_score_source"]) == (0.73, "metrics")


def test_a_judge_score_beyond_five_fifths_is_refused_naming_file_and_line(tmp_path):
    folder = _artifacts(tmp_path, METRICS, "Pass", "")
    text = (folder / "evaluation.md").read_text().replace("**4** / 5", "**7** / 5")
    (folder / "evaluation.md").write_text(text)
    with pytest.raises(InputError, match=r"evaluation\.md:5: Judge Score: 7\.0 is not in 0\.\.5"):
        _quiet_load(folder)


def test_results_jsonl_judge_scores_stay_0_to_1(tmp_path):
    db = tmp_path / "results.jsonl"
    base = {
        "scenario_id": "s",
        "tool": "t",
        "model": "m",
        "timestamp": "2026-01-26T00:00:00Z",
        "metrics": {"gates_passed": 1, "gates_total": 1},
        "outcome": "Pass",
    }
    scores = [0.9, None, 0.35]
    db.write_text(
        "".join(
            json.dumps({**base, "id": f"r{i}", "judge_score": s}) + "\n"
            for i, s in enumerate(scores)
        )
    )
    runs = _quiet_load(db)
    assert runs.tasks.sort("epoch").get_column("judge_score").to_list() == scores
    db.write_text(json.dumps({**base, "id": "r", "judge_score": 4}) + "\n")  # a 1-5 figure
    with pytest.raises(InputError, match=r"results\.jsonl:1: judge_score"):
        load(db)


@pytest.mark.parametrize("outcome", ["Pass", "Fail", "ERROR"])
def test_how_the_agent_ended_is_unknown_whatever_the_outcome(tmp_path, ltt, outcome):
    """Found by the differential tests (issue 25, "each import"): a record's attempt had
    ``natural_stop`` True, or False when errored, which no field of a result record or an
    artifacts folder says (the outcome is the gates' verdict, not how the agent stopped)."""
    db = tmp_path / "results.jsonl"
    base = {"id": "r", "scenario_id": "s", "tool": "t", "model": "m", "outcome": outcome}
    base |= {"timestamp": "2026-01-26T00:00:00Z", "metrics": {"gates_passed": 0, "gates_total": 1}}
    db.write_text(json.dumps(base) + "\n")
    for runs in (_quiet_load(db), _quiet_load(ltt / "create_smoke")):
        assert runs.tasks.get_column("natural_stop").to_list() == [None]
        assert summary(runs).get_column("natural_stop_rate").to_list() == [None]


def test_an_error_outcome_is_an_errored_task(tmp_path):
    with pytest.warns(UserWarning, match=r"total_commands 2 vs 0"):  # no output to recount
        runs = load(_artifacts(tmp_path, METRICS, "ERROR", ""))
    assert runs.tasks.select("passed", "error").row(0) == (False, "outcome 'ERROR'")


def test_a_folder_with_someone_elses_run_json_is_an_input_error_exit_2(tmp_path, capsys):
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"name": "x", "steps": 3}))
    with pytest.raises(InputError, match=r"theirs/run\.json: not an evalnb run\.json"):
        load(folder)
    assert main(["summary", str(folder)]) == 2
    assert "run.json" in capsys.readouterr().err


def test_malformed_results_lines_name_file_line_and_field(tmp_path, ltt):
    good = (ltt / "results-llm_test_runs.jsonl").read_text().splitlines()[0]
    bad = json.loads(good)
    bad["metrics"]["gates_total"] = "two"
    db = tmp_path / "results.jsonl"
    db.write_text(good + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"results\.jsonl:2: metrics\.gates_total"):
        load(db)
    db.write_text(good + "\n{not json\n")
    with pytest.raises(InputError, match=r"results\.jsonl:2: invalid JSON"):
        load(db)


def test_repeated_attempts_in_the_database_are_epochs(tmp_path, ltt):
    good = (ltt / "results-llm_test_runs.jsonl").read_text().splitlines()[0]
    again = json.dumps(json.loads(good) | {"id": "another-attempt"})  # its own result id
    db = tmp_path / "results.jsonl"
    db.write_text(good + "\n" + again + "\n")
    runs = load(db)
    assert runs.tasks.select("task_id", "epoch").rows() == [
        ("create_smoke", 1),
        ("create_smoke", 2),
    ]


def test_a_folder_of_attempt_folders_loads_each(tmp_path, ltt):
    shutil.copytree(ltt / "create_smoke", tmp_path / "a" / "create_smoke")
    runs = _quiet_load(tmp_path / "a")
    assert runs.runs.get_column("source").to_list() == ["llm-tool-test"]
