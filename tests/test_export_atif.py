"""``evalnb export atif``: Harbor jobs of ATIF trajectories that read back to the same run."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import evalnb as en
from evalnb._cli import main
from evalnb._formats.agent_logs import parse_time
from evalnb._formats.atif_write import write_atif
from evalnb._store import RunStore
from evalnb.records import (
    AgentTrace,
    LLMCall,
    RunMeta,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
    ToolInvocation,
)
from tests.trace_figures import SHARED, SUMMARY_FIGURES, sim_run

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "atif.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim_run(tmp_path_factory.mktemp("runs"))


def test_every_exported_trajectory_is_valid_atif(run, tmp_path):
    job = write_atif(run, tmp_path)
    trajectories = sorted(job.glob("*/agent/trajectory.json"))
    assert len(trajectories) == en.load(run).tasks.height
    for path in trajectories:
        errors = [e.message for e in VALIDATOR.iter_errors(json.loads(path.read_text()))]
        assert not errors, (path, errors)


def test_the_schema_accepts_published_trajectories_and_refuses_broken_ones():
    published = sorted(SHARED.glob("atif/**/trajectory.json")) + sorted(
        SHARED.glob("atif/harbor-golden/*/*.json")
    )
    if not published:
        pytest.skip("../shared/fixtures/atif is absent")
    for path in published:
        doc = json.loads(path.read_text())
        if "cases" in doc:  # the conformance vectors: the RFC's worked example is valid
            doc = doc["cases"][0]["trajectory"]
        assert not list(VALIDATOR.iter_errors(doc)), path
    good = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": "", "llm_call_count": 0}],
    }
    assert VALIDATOR.is_valid(good)
    broken = [
        {**good, "schema_version": "ATIF-v2.0"},
        {**good, "agent": {"name": "a"}},
        {**good, "schema_version": "ATIF-v1.5"},  # session_id was required before v1.7
        {**good, "steps": [{**good["steps"][0], "metrics": {"prompt_tokens": 3}}]},
        {**good, "steps": [{"step_id": 1, "source": "user", "message": "x", "tool_calls": []}]},
    ]
    assert [VALIDATOR.is_valid(doc) for doc in broken] == [False] * len(broken)


def test_evalnb_to_atif_to_evalnb_gives_the_same_summary(run, tmp_path):
    job = write_atif(run, tmp_path)
    before, after = en.load(run), en.load(job)  # no warning: Harbor's stats agree
    figures = [en.summary(r).select(SUMMARY_FIGURES).row(0, named=True) for r in (after, before)]
    assert figures[0] == pytest.approx(figures[1])  # sums in another order

    def calls(runs: en.Runs, table: str, *cols: str) -> list[tuple]:
        return sorted(getattr(runs, table).select("task_id", "epoch", *cols).rows())

    tokens = (
        "call_number",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "stop_reason",
    )
    assert calls(after, "llm_calls", *tokens) == calls(before, "llm_calls", *tokens)
    tools = ("call_index", "call_number", "commands", "exit_code")
    assert calls(after, "tool_calls", *tools) == calls(before, "tool_calls", *tools)
    rewards = after.tasks.select("task_id", "epoch", "reward", "passed").rows()
    assert all(reward == float(passed) for _, _, reward, passed in rewards)


def test_trial_files_name_the_model_once_and_carry_the_attempt_s_times(run, tmp_path):
    """Found by an audit: ``sim/sim/flailing`` in the trial config, and no times in the
    trial result, so Harbor's tools saw no durations."""
    job = write_atif(run, tmp_path)
    meta = json.loads((run / "run.json").read_text())
    assert (meta["provider"], meta["model"]) == ("sim", "sim/flailing")
    configs = [json.loads(p.read_text()) for p in job.glob("*/config.json")]
    assert {c["agent"]["model_name"] for c in configs} == {"sim/flailing"}
    # the attempt's own events give its start and finish; the agent ran duration_ms
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    started = {(e["task_id"], e["epoch"]): e["ts"] for e in events if e["event"] == "task_started"}
    finished = {
        (e["task_id"], e["epoch"]): (e["ts"], e["record"]["trace"]["duration_ms"])
        for e in events
        if e["event"] == "task_finished"
    }
    results = [json.loads(p.read_text()) for p in job.glob("*/result.json") if p.parent != job]
    assert len(results) == len(finished)
    for result in results:
        epoch = int(result["trial_name"].rsplit("__", 1)[1])
        key = (result["task_name"], epoch)
        start, end = parse_time(result["started_at"])[0], parse_time(result["finished_at"])[0]
        assert (start, end) == (parse_time(started[key])[0], parse_time(finished[key][0])[0])
        execution = result["agent_execution"]
        ran = parse_time(execution["finished_at"])[0] - parse_time(execution["started_at"])[0]
        assert parse_time(execution["started_at"])[0] == start
        assert ran.total_seconds() * 1000 == pytest.approx(finished[key][1], abs=1)


def test_a_run_reads_back_with_its_guidance_and_its_tool_calls_as_they_were(tmp_path):
    """Found by the differential tests: the guidance version was lost (the guidance
    comparison then saw one version) and so were a scenario's recorded tool runs (its
    interaction was counted again from the command text, exit codes approximate)."""
    call = ToolCallResult(
        commands="notes show n1; ls",
        stdout="",
        stderr="no note n1\n",
        exit_code=0,
        invocations=[ToolInvocation(argv=["notes", "show", "n1"], exit_code=1)],
    )
    record = TaskRecord(
        task=Task(id="s", category="c", prompt="p"),
        trace=AgentTrace(tool_calls=[call], llm_calls=[LLMCall(call_number=1)], turns=1),
        score=TaskScore(task_id="s"),
    )
    meta = RunMeta(run_id="r", provider="p", model="m", guidance="v2", status="complete")
    job = write_atif(RunStore.write_records(tmp_path / "runs", meta, [record]), tmp_path)
    again = en.load(job)
    assert again.runs.get_column("guidance").to_list() == ["v2"]
    [read] = again.tool_calls.select("stdout", "stderr", "exit_code").rows()
    assert read == ("", "no note n1\n", 0)
    counts = en.interaction(again).select("total_commands", "error_count").row(0)
    assert counts == (1, 1)  # the one recorded run of notes, which failed


def test_export_refuses_an_existing_job_and_a_folder_that_is_not_a_run(run, tmp_path):
    out = tmp_path / "atif"
    assert main(["export", "atif", str(run), "--out", str(out)]) == 0
    assert main(["export", "atif", str(run), "--out", str(out)]) == 2
    assert main(["export", "atif", str(tmp_path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == [run.name]  # nothing half-written
